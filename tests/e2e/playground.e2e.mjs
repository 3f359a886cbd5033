// End-to-end tests of the playground (issue 7) in headless Chromium (playwright-core,
// /usr/bin/chromium): builds web/ with `vite build`, serves it with `vite preview` on a free
// port, trains through the page as a person would, and writes a screenshot of each state
// to test-output/playground/. Run by scripts/test.sh (`npm test`), or alone:
//   node tests/e2e/playground.e2e.mjs [--no-build] [--only name,name]
// Exit status 1 if any test failed.
import { join } from 'node:path';
import { REPO } from './support.mjs';
import { OUT, downloadModel, test, run, env, check, shot, open, watchConsole, status, waitStatus, metric, trainToEnd, drawStroke } from './playground_support.mjs';

let mnistPage; // shared by the MNIST tests (trained once)

test('xor', async () => {
  const page = await open(`#data=xor`, 'xor');
  const r = await trainToEnd(page, 120_000);
  await shot(page, 'xor-trained');
  // 100 test points; the default set-up reaches 99-100 %: which of the few points next to an axis
  // land on the right side depends on the trajectory, and the FMA (relaxed SIMD) builds the site
  // loads in Chromium round differently from SIMD128 (99 % there, 100 % with SIMD128).
  check(r.testAcc >= 0.98, `XOR test accuracy ${r.testAcc}, expected >= 0.98`);
  check(/data=xor/.test(page.url()) && /layers=d8-tanh,d8-tanh/.test(page.url()), `the URL holds the set-up: ${page.url()}`);
  await page.close();
  return `test accuracy ${(r.testAcc * 100).toFixed(1)} %, test loss ${r.testLoss.toFixed(4)}`;
});

test('spiral-step', async () => {
  // Step one batch, pause/resume, and the heat map is drawn (canvas not blank).
  const page = await open(`#data=spiral&noise=0.1&layers=d16-relu,d16-relu,d8-relu&epochs=10000&lr=0.02`, 'spiral');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#step-btn');
  await page.waitForFunction(() => document.getElementById('m-step').dataset.value === '1');
  await waitStatus(page, ['paused'], 10_000);
  await page.click('#train-btn');
  await waitStatus(page, ['training'], 10_000);
  await page.waitForFunction(() => Number(document.getElementById('m-step').dataset.value) > 200, null, { timeout: 60_000 });
  await page.click('#train-btn'); // pause
  await waitStatus(page, ['paused'], 10_000);
  const step = await metric(page, 'm-step');
  await page.waitForTimeout(300);
  check((await metric(page, 'm-step')) === step, 'steps went on after Pause');
  const colours = await page.$eval('#boundary', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < d.length; i += 4 * 97) seen.add(`${d[i] >> 4},${d[i + 1] >> 4},${d[i + 2] >> 4}`);
    return seen.size;
  });
  check(colours > 10, `the decision-boundary canvas looks blank (${colours} colours)`);
  await shot(page, 'spiral-paused');
  await page.close();
  return `paused at step ${step}`;
});

test('bad-link', async () => {
  const page = await open(`#data=moons&lr=abc&layers=d0-relu,d4-tanh`, 'bad-link');
  await page.waitForSelector('#messages .msg');
  const msgs = await page.$eval('#messages', (el) => el.textContent);
  check(/Unknown data set "moons"/.test(msgs), `no warning for the data set: ${msgs}`);
  check(/Bad learning rate "abc"/.test(msgs), `no warning for the learning rate: ${msgs}`);
  const errs = await page.$eval('#model-errors', (el) => el.textContent);
  check(/Layer 1 \(dense\): units must be an integer from 1 to 1024, got 0/.test(errs), `no model error: ${errs}`);
  check(await page.$eval('#train-btn', (b) => b.disabled), 'Train is enabled for an invalid model');
  await shot(page, 'bad-link');
  // Fixing the layer in the page makes the model valid again.
  await page.fill('#layers li:first-child input[type=number]', '6');
  await page.press('#layers li:first-child input[type=number]', 'Enter');
  await page.$eval('#layers li:first-child input[type=number]', (el) => el.dispatchEvent(new Event('change')));
  await waitStatus(page, ['idle'], 30_000);
  check(/layers=d6-relu,d4-tanh/.test(page.url()), `URL not updated: ${page.url()}`);
  await page.close();
  return 'warnings shown, Train disabled, fixed in the page';
});

test('phone', async () => {
  const page = await env.context.newPage();
  watchConsole(page, 'phone');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${env.base}#data=circle`);
  await waitStatus(page, ['idle'], 60_000);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, `horizontal overflow of ${overflow} px at 390 px width`);
  // Every control has an accessible name and can take keyboard focus.
  const unnamed = await page.evaluate(() => {
    const bad = [];
    for (const el of document.querySelectorAll('input, select, button')) {
      const name = el.getAttribute('aria-label') || el.labels?.[0]?.textContent?.trim() || (el.tagName === 'BUTTON' && el.textContent.trim());
      if (!name) bad.push(el.outerHTML.slice(0, 80));
      if (el.tabIndex < 0) bad.push(`not focusable: ${el.outerHTML.slice(0, 80)}`);
    }
    return bad;
  });
  check(unnamed.length === 0, `controls without a label: ${unnamed.join(' | ')}`);
  // Keyboard: Tab from the data-set select reaches the Train button and Enter starts training.
  await page.focus('#data');
  let reached = false;
  for (let i = 0; i < 60 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement?.id === 'train-btn');
  }
  check(reached, 'Tab never reached the Train button');
  await page.keyboard.press('Enter');
  await waitStatus(page, ['training', 'done'], 10_000);
  await waitStatus(page, ['done'], 120_000);
  const acc = await metric(page, 'm-test-acc');
  await shot(page, 'phone-circle');
  await page.close();
  return `no overflow at 390 px, all controls labelled, Tab reaches Train; circle test accuracy ${(acc * 100).toFixed(1)} %`;
});

test('load-pt', async () => {
  // A PyTorch checkpoint of the equivalent nn.Sequential (tests/e2e/fixtures/
  // make_playground_pt.py, PyTorch 1.13) loads into the default toy model; the weights the
  // page then downloads are PyTorch's. A checkpoint of other shapes is refused beside
  // the model, which keeps its weights.
  const fixtures = join(REPO, 'tests/e2e/fixtures');
  const page = await open(`#data=xor`, 'load-pt');
  await waitStatus(page, ['idle'], 60_000);
  const fresh = await metric(page, 'm-test-loss');
  await page.setInputFiles('#load-input', [join(fixtures, 'wrong_shape.pt')]);
  await page.waitForFunction(() => document.body.dataset.weights === 'mismatch', null, { timeout: 20_000 });
  const refused = await page.$eval('#messages', (el) => el.textContent);
  check(/wrong_shape\.pt/.test(refused) && /shape/.test(refused) && /unchanged/.test(refused), `refusal message: ${refused}`);
  check((await metric(page, 'm-test-loss')) === fresh, 'a refused checkpoint changed the model');
  await page.setInputFiles('#load-input', [join(fixtures, 'xor_mlp.pt')]);
  await page.waitForFunction(() => document.body.dataset.weights === 'loaded', null, { timeout: 20_000 });
  await page.waitForFunction((l) => Number(document.getElementById('m-test-loss').dataset.value) !== l, fresh, { timeout: 20_000 });
  const loadedMsg = await page.$eval('#messages', (el) => el.textContent);
  check(/Loaded xor_mlp\.pt \(6 tensors\)/.test(loadedMsg), `message: ${loadedMsg}`);
  await shot(page, 'load-pt');
  const downloads = await downloadModel(page);
  const st = downloads.find((d) => d.suggestedFilename().endsWith('.safetensors'));
  const path = join(OUT, 'load-pt.safetensors');
  await st.saveAs(path);
  // Compare the downloaded SafeTensors with PyTorch's values (F32 exactly).
  const { readFileSync } = await import('node:fs');
  const bytes = readFileSync(path);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const want = JSON.parse(readFileSync(join(fixtures, 'xor_mlp.json'), 'utf8'));
  const keys = Object.keys(header).filter((k) => k !== '__metadata__').sort();
  check(keys.join() === Object.keys(want).sort().join(), `downloaded keys ${keys}`);
  let compared = 0;
  for (const k of keys) {
    const { dtype, data_offsets: [b, e] } = header[k];
    check(dtype === 'F32', `${k}: ${dtype}`);
    const got = new Float32Array(bytes.buffer.slice(bytes.byteOffset + 8 + n + b, bytes.byteOffset + 8 + n + e));
    const flat = want[k].flat();
    check(got.length === flat.length, `${k}: ${got.length} values, PyTorch has ${flat.length}`);
    for (let i = 0; i < flat.length; i++) check(got[i] === Math.fround(flat[i]), `${k}[${i}] = ${got[i]}, PyTorch ${flat[i]}`);
    compared += flat.length;
  }
  await page.close();
  return `wrong shapes refused (model kept), xor_mlp.pt loaded: ${compared} values equal PyTorch's`;
});

test('mnist-mlp', async () => {
  mnistPage = await open(`#data=mnist&train=10000&mtest=10000`, 'mnist');
  const r = await trainToEnd(mnistPage, 240_000);
  await shot(mnistPage, 'mnist-mlp-trained');
  check(r.testAcc >= 0.9, `MNIST MLP test accuracy ${r.testAcc}, expected >= 0.90`);
  const grid = await mnistPage.$$eval('#digit-grid .digit', (els) => els.map((e) => e.dataset.predicted));
  check(grid.length === 60 && grid.every((p) => /^\d$/.test(p)), `digit grid predictions: ${grid.join(',')}`);
  const cm = await mnistPage.$$eval('#confusion tbody td', (tds) => tds.map((td) => Number(td.textContent)));
  check(cm.length === 100 && cm.reduce((a, b) => a + b, 0) === 10000, `confusion matrix cells ${cm.length}, sum ${cm.reduce((a, b) => a + b, 0)}`);
  return `10,000 images, 1 epoch: test accuracy ${(r.testAcc * 100).toFixed(2)} % (10,000 test images)`;
});

test('draw', async () => {
  check(mnistPage, 'needs the mnist-mlp test');
  const page = mnistPage;
  await page.locator('#draw').scrollIntoViewIfNeeded();
  // A "1": one vertical stroke.
  await drawStroke(page, [[0.5, 0.15], [0.5, 0.5], [0.49, 0.85]]);
  await page.waitForFunction(() => document.getElementById('draw-pred').dataset.value !== '' && document.getElementById('draw-pred').dataset.value !== undefined, null, { timeout: 10_000 });
  const pred = await page.$eval('#draw-pred', (el) => el.dataset.value);
  const probs = (await page.$eval('#draw-pred', (el) => el.dataset.probs)).split(',').map(Number);
  await shot(page, 'mnist-draw');
  check(probs.length === 10 && Math.abs(probs.reduce((a, b) => a + b) - 1) < 1e-3, `probabilities ${probs}`);
  check(pred === '1', `a vertical stroke was predicted as ${pred} (probabilities ${probs.map((p) => p.toFixed(3))})`);
  return `vertical stroke -> ${pred} (p = ${probs[1].toFixed(3)})`;
});

test('save-load', async () => {
  check(mnistPage, 'needs the mnist-mlp test');
  const page = mnistPage;
  const before = {
    loss: await metric(page, 'm-test-loss'),
    probs: await page.$eval('#draw-pred', (el) => el.dataset.probs),
    grid: await page.$$eval('#digit-grid .digit', (els) => els.map((e) => e.dataset.predicted).join('')),
  };
  const downloads = await downloadModel(page);
  const files = [];
  for (const d of downloads) {
    const path = join(OUT, d.suggestedFilename());
    await d.saveAs(path);
    files.push(path);
  }
  check(files.some((f) => f.endsWith('.safetensors')) && files.some((f) => f.endsWith('.json')), `downloads: ${files}`);
  await page.click('#reset-btn');
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForFunction((l) => document.getElementById('m-test-loss').dataset.value !== '' && Number(document.getElementById('m-test-loss').dataset.value) !== l, before.loss, { timeout: 30_000 });
  const fresh = await metric(page, 'm-test-loss');
  await page.setInputFiles('#load-input', files);
  await page.waitForFunction((l) => Number(document.getElementById('m-test-loss').dataset.value) === l, before.loss, { timeout: 60_000 }).catch(async () => {
    throw new Error(`after loading, test loss ${await metric(page, 'm-test-loss')} != saved model's ${before.loss} (fresh model: ${fresh})`);
  });
  await page.waitForFunction((p) => document.getElementById('draw-pred').dataset.probs === p, before.probs, { timeout: 10_000 }).catch(async () => {
    throw new Error(`drawing probabilities after load ${await page.$eval('#draw-pred', (el) => el.dataset.probs)} != before ${before.probs}`);
  });
  const grid = await page.$$eval('#digit-grid .digit', (els) => els.map((e) => e.dataset.predicted).join(''));
  check(grid === before.grid, `digit grid after load ${grid} != before ${before.grid}`);
  await shot(page, 'mnist-loaded');
  return `test loss ${before.loss.toFixed(6)} -> reset ${fresh.toFixed(4)} -> loaded ${before.loss.toFixed(6)}; drawing and 60 grid predictions identical`;
});

test('cnn', async () => {
  const page = await open(`#data=mnist&train=10000&mtest=10000`, 'cnn');
  await waitStatus(page, ['idle'], 60_000);
  await page.click('#preset-cnn');
  await page.waitForFunction(() => /layers=c8-3-relu-max,c16-3-relu-max&/.test(location.hash));
  const params = await page.$eval('#num-params', (el) => Number(el.dataset.value));
  check(params === 5258, `CNN preset parameters ${params}, expected 5,258`);
  await waitStatus(page, ['idle'], 60_000);
  const summary = await page.$eval('#engine-summary', (el) => el.textContent);
  check(/conv2d/.test(summary) && /5,258 parameters/.test(summary), `the engine's summary of the CNN: ${summary}`);
  await page.click('#train-btn');
  await waitStatus(page, ['training'], 10_000);
  // The page answers a prediction while the worker trains.
  await page.click('#sample-draw');
  await page.waitForFunction(() => document.getElementById('draw-pred').dataset.value, null, { timeout: 20_000 });
  const answeredWhile = await page.$eval('#draw-pred', (el) => el.dataset.status);
  await waitStatus(page, ['done'], 300_000);
  const acc = await metric(page, 'm-test-acc');
  await shot(page, 'cnn-trained');
  check(answeredWhile === 'training', `the drawing's prediction came while the status was "${answeredWhile}", expected "training"`);
  check(acc >= 0.9, `CNN test accuracy ${acc}, expected >= 0.90`);
  await page.close();
  return `10,000 images, 1 epoch: test accuracy ${(acc * 100).toFixed(2)} %; a prediction was answered during training`;
});

run('main');
