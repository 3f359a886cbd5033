// End-to-end tests of the playground's Export menu (issue 18): train in the page, export
// the model as PyTorch, Kiln JS and Kiln C++ programs with its SafeTensors weights, and run
// what was downloaded: the PyTorch script under /usr/bin/python3 (Debian's PyTorch 1.13)
// loads the weights with load_state_dict(strict=True) and reproduces the page's outputs on
// the test points to 1e-5 and the page's test loss and accuracy; the Kiln JS module runs
// under node against dist/ and, trained from scratch, ends where the page ended (same seed,
// same batches); the Kiln C++ program compiles against engine/include and, linked with the
// native library when a native build exists, does the same (else the link is skipped, said
// in the note). Screenshots: test-output/playground/export-*.png.
//   node tests/e2e/playground-export.e2e.mjs [--no-build] [--only name,name]
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test, run, check, shot, open, waitStatus, metric, trainToEnd, OUT } from './playground_support.mjs';
import {
  MNIST_DIR,
  havePytorch,
  runProgram,
  compileCpp,
  readPredictions,
  embeddedPageOutputs,
  maxDiff,
  testMetrics,
} from './export_runners.mjs';

// The exported files live inside the repository so that `import 'kiln-dl'` resolves to it.
const DIR = join(OUT, 'export');
rmSync(DIR, { recursive: true, force: true });
mkdirSync(DIR, { recursive: true });

let toy = null; // {page, testLoss, testAcc}: the trained XOR page shared by the toy tests

/** Opens the Export menu and chooses `label`; waits for the dialog (or a download for weights). */
async function exportAs(page, target) {
  await page.click('#export-btn');
  await page.waitForSelector('#export-menu:not([hidden])');
  await page.click(`#export-menu [data-target="${target}"]`);
  await page.waitForFunction((t) => document.getElementById('export-dialog')?.open && document.getElementById('export-dialog').dataset.target === t, target, { timeout: 20_000 });
}

/** Clicks a dialog button that downloads a file; saves it under DIR; returns its path. */
async function saveDownload(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const path = join(DIR, download.suggestedFilename());
  await download.saveAs(path);
  return path;
}

/** Exports `target` from the page and downloads the program and the weights. */
async function exportFiles(page, target) {
  await exportAs(page, target);
  const program = await saveDownload(page, '#export-dl-code');
  const weights = await saveDownload(page, '#export-dl-weights');
  return { program, weights, text: readFileSync(program, 'utf8') };
}

async function closeDialog(page) {
  await page.click('#export-close');
  await page.waitForFunction(() => !document.getElementById('export-dialog').open);
}

/** The page's test metrics must be the program's: same loss to 1e-5, same accuracy. */
function sameMetrics(stdout, who) {
  const m = testMetrics(stdout);
  check(Math.abs(m.loss - toy.testLoss) < 1e-5, `${who}: test loss ${m.loss}, the page shows ${toy.testLoss}`);
  check(Math.abs(m.accuracy - toy.testAcc) < 5e-5, `${who}: test accuracy ${m.accuracy}, the page shows ${toy.testAcc}`);
  return m;
}

async function trainedToy() {
  if (toy) return toy;
  const page = await open('#data=xor&points=300&noise=10&layers=d8-tanh,d4-relu&opt=adam&lr=0.03&batch=16&epochs=25&seed=7', 'export-xor');
  const r = await trainToEnd(page, 60_000);
  toy = { page, testLoss: r.testLoss, testAcc: r.testAcc };
  return toy;
}

test('menu', async () => {
  const { page } = await trainedToy();
  // The menu names the three targets and the weights; keyboard: ArrowDown opens, Escape closes.
  await page.focus('#export-btn');
  await page.keyboard.press('ArrowDown');
  await page.waitForSelector('#export-menu:not([hidden])');
  const labels = await page.$$eval('#export-menu [role="menuitem"]', (els) => els.map((e) => e.textContent));
  check(/^PyTorch/.test(labels[0]) && /^Kiln JS/.test(labels[1]) && /^Kiln C\+\+/.test(labels[2]) && /^Weights only/.test(labels[3]), `menu entries: ${labels.join(' | ')}`);
  check((await page.evaluate(() => document.activeElement?.dataset.target)) === 'pytorch', 'the first entry has the focus');
  check((await page.$eval('#export-btn', (b) => b.getAttribute('aria-expanded'))) === 'true', 'aria-expanded is not true');
  await shot(page, 'export-menu', false);
  await page.keyboard.press('Escape');
  await page.waitForSelector('#export-menu[hidden]', { state: 'attached' });
  check((await page.evaluate(() => document.activeElement?.id)) === 'export-btn', 'Escape does not return the focus to the button');
  // Weights only: End, Enter downloads the SafeTensors with PyTorch nn.Sequential's keys.
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('End');
  const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  const path = join(DIR, download.suggestedFilename());
  await download.saveAs(path);
  const bytes = readFileSync(path);
  const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString('utf8'));
  const keys = Object.keys(header).filter((k) => k !== '__metadata__').sort();
  check(download.suggestedFilename() === 'kiln_xor.safetensors', `weights file ${download.suggestedFilename()}`);
  check(keys.join() === '0.bias,0.weight,2.bias,2.weight,4.bias,4.weight', `keys ${keys}`);
  check(header['2.weight'].shape.join() === '4,8' && header['4.weight'].shape.join() === '2,4', `shapes ${JSON.stringify(header)}`);
  return `entries: ${labels.join(' | ')}`;
});

test('pytorch', async () => {
  if (!havePytorch()) throw new Error('/usr/bin/python3 has no torch (Debian: apt-get install python3-torch)');
  const { page } = await trainedToy();
  const { program, weights, text } = await exportFiles(page, 'pytorch');
  await shot(page, 'export-pytorch-dialog', false);
  await closeDialog(page);
  check(/class Net\(nn\.Sequential\)/.test(text) && /load_state_dict\(state, strict=True\)/.test(text), 'the script has no nn.Module / strict load');
  const out = runProgram('pytorch', program, ['--weights', weights, '--predictions', join(DIR, 'pytorch-predictions.json')], DIR);
  check(/loaded 6 tensors from .* \(strict\)/.test(out), `no strict load reported:\n${out}`);
  const mine = readPredictions(join(DIR, 'pytorch-predictions.json'));
  const page_ = embeddedPageOutputs(text);
  const diff = maxDiff(mine.outputs, page_);
  check(mine.shape[1] === 2 && mine.shape[0] >= 70 && mine.outputs.length === page_.length, `PyTorch predicted shape [${mine.shape}], the page ${page_.length / 2} test points of 2 classes`);
  check(diff <= 1e-5, `PyTorch's probabilities differ from the page's by ${diff}`);
  const m = sameMetrics(out, 'PyTorch');
  // Training from scratch runs (2 epochs, the page's batches).
  const trained = runProgram('pytorch', program, ['--epochs', '2'], DIR);
  check(/^epoch 2\/2 {2}train loss \S+ {2}test loss \S+ {2}test accuracy/m.test(trained), `training output:\n${trained}`);
  return `max |PyTorch - page| ${diff.toExponential(2)} over ${mine.shape[0]} test points; test loss ${m.loss} (page ${toy.testLoss})`;
});

test('kilnjs', async () => {
  const { page } = await trainedToy();
  const { program, weights, text } = await exportFiles(page, 'kilnjs');
  await shot(page, 'export-kilnjs-dialog', false);
  await closeDialog(page);
  const out = runProgram('kilnjs', program, ['--weights', weights, '--predictions', join(DIR, 'kilnjs-predictions.json')], DIR);
  const diff = maxDiff(readPredictions(join(DIR, 'kilnjs-predictions.json')).outputs, embeddedPageOutputs(text));
  check(diff <= 1e-5, `Kiln JS's probabilities differ from the page's by ${diff}`);
  sameMetrics(out, 'Kiln JS (page weights)');
  // From scratch: the same initial weights (seed), batches and steps as the page.
  const scratch = runProgram('kilnjs', program, [], DIR);
  const m = sameMetrics(scratch, 'Kiln JS (trained from scratch)');
  return `page weights: max diff ${diff.toExponential(2)}; from scratch: test loss ${m.loss} = page ${toy.testLoss}`;
});

test('kilncpp', async () => {
  const { page } = await trainedToy();
  const { program, weights, text } = await exportFiles(page, 'kilncpp');
  await shot(page, 'export-kilncpp-dialog', false);
  await closeDialog(page);
  const exe = join(DIR, 'kiln_xor_cpp');
  const { linked } = compileCpp(program, exe);
  if (!linked) return 'compiled against engine/include; no native build (build/native/libkiln.a), so not linked or run';
  const out = runProgram('kilncpp', exe, ['--weights', weights, '--predictions', join(DIR, 'kilncpp-predictions.json')], DIR);
  const diff = maxDiff(readPredictions(join(DIR, 'kilncpp-predictions.json')).outputs, embeddedPageOutputs(text));
  check(diff <= 1e-5, `Kiln C++'s probabilities differ from the page's by ${diff}`);
  sameMetrics(out, 'Kiln C++ (page weights)');
  const scratch = runProgram('kilncpp', exe, [], DIR);
  const m = sameMetrics(scratch, 'Kiln C++ (trained from scratch)');
  return `linked and run: max diff ${diff.toExponential(2)}; from scratch test loss ${m.loss} (page ${toy.testLoss})`;
});

test('mnist-cnn', async () => {
  if (!havePytorch()) throw new Error('/usr/bin/python3 has no torch');
  await toy?.page.close();
  const page = await open('#data=mnist&train=1000&mtest=200&layers=c4-3-relu-max-same,c8-3-relu-avg,d16-relu-0.25&opt=adam&lr=0.005&batch=50&epochs=1&seed=3', 'export-mnist');
  await trainToEnd(page, 120_000);
  const testLoss = await metric(page, 'm-test-loss');
  const { program, weights, text } = await exportFiles(page, 'pytorch');
  await shot(page, 'export-mnist-pytorch-dialog', false);
  await closeDialog(page);
  check(/nn\.Conv2d\(1, 4, kernel_size=\(3, 3\), padding='same'\)/.test(text) && /nn\.AvgPool2d\(2\)/.test(text) && /nn\.Dropout\(0\.25\)/.test(text), 'the CNN layers are not in the script');
  const out = runProgram('pytorch', program, ['--weights', weights, '--mnist-dir', MNIST_DIR, '--predictions', join(DIR, 'mnist-pytorch.json')], DIR);
  const page_ = embeddedPageOutputs(text);
  const mine = readPredictions(join(DIR, 'mnist-pytorch.json'));
  check(mine.shape.join() === '100,10', `PyTorch predicted [${mine.shape}] (the first 100 test digits, 10 classes)`);
  const diff = maxDiff(mine.outputs, page_);
  check(diff <= 1e-5, `PyTorch's MNIST probabilities differ from the page's by ${diff}`);
  const m = testMetrics(out);
  check(Math.abs(m.loss - testLoss) < 1e-4, `PyTorch's test loss on the 200 test digits ${m.loss}, the page shows ${testLoss}`);
  // Kiln JS on the same files.
  const js = await exportFiles(page, 'kilnjs');
  await closeDialog(page);
  runProgram('kilnjs', js.program, ['--weights', js.weights, '--mnist-dir', MNIST_DIR, '--predictions', join(DIR, 'mnist-kilnjs.json')], DIR);
  const jsDiff = maxDiff(readPredictions(join(DIR, 'mnist-kilnjs.json')).outputs, embeddedPageOutputs(js.text));
  check(jsDiff <= 1e-5, `Kiln JS's MNIST probabilities differ from the page's by ${jsDiff}`);
  // Kiln C++ reads the same IDX files (when a native build is there to link with).
  const cpp = await exportFiles(page, 'kilncpp');
  await closeDialog(page);
  await page.close();
  let cppNote = 'Kiln C++ compiled only (no native build)';
  const exe = join(DIR, 'kiln_mnist_cpp');
  if (compileCpp(cpp.program, exe).linked) {
    runProgram('kilncpp', exe, ['--weights', cpp.weights, '--mnist-dir', MNIST_DIR, '--predictions', join(DIR, 'mnist-kilncpp.json')], DIR);
    const cppDiff = maxDiff(readPredictions(join(DIR, 'mnist-kilncpp.json')).outputs, embeddedPageOutputs(cpp.text));
    check(cppDiff <= 1e-5, `Kiln C++'s MNIST probabilities differ from the page's by ${cppDiff}`);
    cppNote = `Kiln C++: ${cppDiff.toExponential(2)}`;
  }
  return `PyTorch: max diff ${diff.toExponential(2)} over 100 digits, test loss ${m.loss.toFixed(5)} (page ${testLoss.toFixed(5)}); Kiln JS: ${jsDiff.toExponential(2)}; ${cppNote}`;
});

test('tfp', async () => {
  // TF Playground's settings through the page: a regression set (MSE, one output), extra
  // input features and an L1 penalty; exported and run in PyTorch and Kiln JS.
  if (!havePytorch()) throw new Error('/usr/bin/python3 has no torch');
  const page = await open('#data=mgauss&points=200&noise=5&features=x1,x2,x1sq,x2sq,sinx1&layers=d6-tanh,d4-tanh&opt=sgd&lr=0.03&momentum=0.9&reg=l1&regRate=0.001&batch=10&epochs=15&seed=11', 'export-tfp');
  await trainToEnd(page, 60_000);
  const testLoss = await metric(page, 'm-test-loss');
  const py = await exportFiles(page, 'pytorch');
  await shot(page, 'export-tfp-pytorch-dialog', false);
  await closeDialog(page);
  check(/LOSS = nn\.MSELoss\(\)/.test(py.text) && /REGULARIZATION = 'l1'/.test(py.text) && /nn\.Linear\(5, 6\)/.test(py.text), 'the script is not MSE / L1 / 5 inputs');
  check(/torch\.stack\(\[x1, x2, x1 \* x1, x2 \* x2, torch\.sin\(6 \* x1\)\], dim=1\)/.test(py.text), 'the features are not in the script');
  const out = runProgram('pytorch', py.program, ['--weights', py.weights, '--predictions', join(DIR, 'tfp-pytorch.json')], DIR);
  const mine = readPredictions(join(DIR, 'tfp-pytorch.json'));
  const diff = maxDiff(mine.outputs, embeddedPageOutputs(py.text));
  check(mine.shape[1] === 1 && diff <= 1e-5, `PyTorch's regression outputs [${mine.shape}] differ from the page's by ${diff}`);
  const m = testMetrics(out);
  check(m.accuracy === null && Math.abs(m.loss - testLoss) < 1e-5, `PyTorch's test MSE ${m.loss}, the page shows ${testLoss}`);
  const js = await exportFiles(page, 'kilnjs');
  await closeDialog(page);
  await page.close();
  runProgram('kilnjs', js.program, ['--weights', js.weights, '--predictions', join(DIR, 'tfp-kilnjs.json')], DIR);
  const jsDiff = maxDiff(readPredictions(join(DIR, 'tfp-kilnjs.json')).outputs, embeddedPageOutputs(js.text));
  check(jsDiff <= 1e-5, `Kiln JS's regression outputs differ from the page's by ${jsDiff}`);
  // From scratch with the penalty: the page's training, re-done by the program.
  const scratch = testMetrics(runProgram('kilnjs', js.program, [], DIR));
  check(Math.abs(scratch.loss - testLoss) < 1e-5, `Kiln JS trained from scratch: test MSE ${scratch.loss}, the page ${testLoss}`);
  return `PyTorch: max diff ${diff.toExponential(2)}, test MSE ${m.loss} (page ${testLoss.toFixed(6)}); Kiln JS: ${jsDiff.toExponential(2)}, from scratch ${scratch.loss}`;
});

test('while-training', async () => {
  // Export while training: the weights and the page's outputs come from one moment (the
  // worker takes both between two slices), and training goes on.
  const page = await open('#data=spiral&noise=5&layers=d16-relu,d16-relu&lr=0.02&epochs=10000&seed=5', 'export-training');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#train-btn');
  await page.waitForFunction(() => Number(document.getElementById('m-step').dataset.value) > 100, null, { timeout: 60_000 });
  const { program, weights, text } = await exportFiles(page, 'kilnjs');
  const step = Number(await page.$eval('#export-dialog', (d) => d.dataset.step));
  await closeDialog(page);
  await page.waitForFunction((s) => Number(document.getElementById('m-step').dataset.value) > s + 50, step, { timeout: 30_000 });
  check((await page.evaluate(() => document.body.dataset.status)) === 'training', 'training stopped after the export');
  await page.click('#train-btn');
  await waitStatus(page, ['paused'], 10_000);
  runProgram('kilnjs', program, ['--weights', weights, '--predictions', join(DIR, 'training-kilnjs.json')], DIR);
  const diff = maxDiff(readPredictions(join(DIR, 'training-kilnjs.json')).outputs, embeddedPageOutputs(text));
  check(step > 100 && diff <= 1e-5, `exported at step ${step}: the weights and the page's outputs differ by ${diff}`);
  await page.close();
  return `exported at step ${step} while training; outputs agree to ${diff.toExponential(2)}; training went on`;
});

test('phone', async () => {
  // The dialog fits a 390 px wide phone: no horizontal overflow of the page, buttons wrap.
  const page = await open('#data=circle&epochs=2', 'export-phone');
  await page.setViewportSize({ width: 390, height: 844 });
  await waitStatus(page, ['idle'], 60_000);
  await exportAs(page, 'kilnjs');
  const { overflow, dialogWidth } = await page.evaluate(() => ({
    overflow: document.documentElement.scrollWidth - window.innerWidth,
    dialogWidth: document.getElementById('export-dialog').getBoundingClientRect().width,
  }));
  check(overflow <= 0 && dialogWidth <= 390, `overflow ${overflow} px, dialog ${dialogWidth} px wide at 390 px`);
  await shot(page, 'export-phone-dialog', false);
  await page.keyboard.press('Escape');
  await page.waitForFunction(() => !document.getElementById('export-dialog').open);
  // The dialog's `close` event (which returns the focus) is dispatched in a task after `open`
  // turns false: wait for the focus, up to 2 s, instead of reading it at once.
  const focused = await page.waitForFunction(() => document.activeElement?.id === 'export-btn', null, { timeout: 2000 })
    .then(() => true, () => false);
  check(focused, 'closing the dialog does not return the focus to Export');
  await page.close();
  return `dialog ${Math.round(dialogWidth)} px wide; Escape closes it`;
});

test('not-ready', async () => {
  // An invalid model: the Export button is disabled and says why.
  const page = await open('#data=xor&layers=d0-relu', 'export-invalid');
  await waitStatus(page, ['invalid'], 30_000);
  const { disabled, title } = await page.$eval('#export-btn', (b) => ({ disabled: b.disabled, title: b.title }));
  check(disabled, 'Export is enabled for an invalid model');
  check(/Export needs a model/.test(title), `no reason given: "${title}"`);
  await page.close();
  return `disabled: "${title}"`;
});

await run('export');
