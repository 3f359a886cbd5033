// End-to-end tests of what the playground has from TensorFlow Playground (issue 18): input
// features in the URL, L1/L2 regularisation, the regression sets (Plane, Multi Gaussian)
// with a continuous heat map, "Discretize output", "Show test data", noise on TF
// Playground's 0..50 % scale, Regenerate (new points, same model) and "Your CSV".
//   node tests/e2e/playground-tfp.e2e.mjs [--no-build] [--only name,name]
// Expected values are computed here independently: the trained weights of a linear model
// against the closed-form optimum of its regularised loss, accuracies a model without the
// right features cannot reach, pixel counts of the heat map.
import { readFileSync } from 'node:fs';
import { downloadModel, test, run, check, shot, open, waitStatus, metric, trainToEnd } from './playground_support.mjs';
import { generateToy, splitTrainTest } from '../../web/src/datasets.js';

/** The tensors of a SafeTensors file: {name: Float32Array}. */
function readSafetensors(path) {
  const buf = readFileSync(path);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const out = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__') continue;
    const [s, e] = v.data_offsets;
    const bytes = buf.subarray(8 + n + s, 8 + n + e);
    out[k] = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  }
  return out;
}

/** Clicks "Download model" and returns the weights the page saved. */
async function savedWeights(page) {
  const downloads = await downloadModel(page);
  const st = downloads.find((d) => d.suggestedFilename().endsWith('.safetensors'));
  return readSafetensors(await st.path());
}

/** Distinct colours (4 bits per channel) and dark pixels of the heat-map canvas. */
const canvasStats = (page) =>
  page.$eval('#boundary', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    let dark = 0;
    for (let i = 0; i < d.length; i += 4) {
      seen.add(`${d[i] >> 4},${d[i + 1] >> 4},${d[i + 2] >> 4}`);
      if (d[i] < 70 && d[i + 1] < 70 && d[i + 2] < 70) dark++;
    }
    return { colours: seen.size, dark };
  });

/** The RGB of the heat map at plane coordinates (x1, x2) (the grid spans ±1.25). */
const pixelAt = (page, x1, x2) =>
  page.$eval(
    '#boundary',
    (c, [a, b]) => {
      const px = Math.round(((a + 1.25) / 2.5) * c.width);
      const py = Math.round(((1.25 - b) / 2.5) * c.height);
      return Array.from(c.getContext('2d').getImageData(px, py, 1, 1).data.slice(0, 3));
    },
    [x1, x2],
  );

test('features', async () => {
  // Circle: class 0 inside radius 2.5/6, class 1 in the ring 3.5/6 .. 5/6. A model without
  // hidden layers is linear in its inputs: with x1², x2² the classes are split by a line
  // (x1² + x2² = r²); with x1, x2 they are not (a line leaves at least ~ a third wrong).
  const base = '#data=circle&layers=&opt=adam&lr=0.05&batch=20&epochs=60';
  const sq = await open(`${base}&features=x1sq,x2sq`, 'features-sq');
  const r = await trainToEnd(sq, 60_000);
  check(r.testAcc >= 0.97, `with X1², X2² a linear model reaches ${r.testAcc} on the circle, expected >= 0.97`);
  check((await metric(sq, 'num-params')) === 2 * 2 + 2, 'a linear model of 2 features and 2 classes has 6 parameters');
  check(await sq.$eval('#feature-x1sq', (el) => el.checked), 'X1² is not shown as chosen');
  // Choosing X1X2 in the page: 3 inputs, the link says so (in FEATURES order).
  await sq.check('#feature-x1x2');
  await sq.waitForFunction(() => /features=x1sq,x2sq,x1x2(&|$)/.test(location.hash), null, { timeout: 5000 });
  check((await metric(sq, 'num-params')) === 3 * 2 + 2, 'three features: 8 parameters');
  // The last feature cannot be unchecked: a message beside the boxes says why.
  await sq.uncheck('#feature-x1x2');
  await sq.uncheck('#feature-x1sq');
  await sq.click('#feature-x2sq');
  const msg = await sq.$eval('#features-msg', (el) => el.textContent);
  check(/at least one input feature/.test(msg) && (await sq.$eval('#feature-x2sq', (el) => el.checked)), `no message for unchecking the last feature: "${msg}"`);
  await shot(sq, 'tfp-features');
  await sq.close();
  const lin = await open(`${base}&features=x1,x2`, 'features-lin');
  const l = await trainToEnd(lin, 60_000);
  check(l.testAcc < 0.8, `with X1, X2 only a linear model reached ${l.testAcc} on the circle (a line cannot do that)`);
  await lin.close();
  return `linear model on the circle: ${(r.testAcc * 100).toFixed(1)} % with X1², X2², ${(l.testAcc * 100).toFixed(1)} % with X1, X2`;
});

test('regularization', async () => {
  // Plane (targets 0.6·(x1 + x2), no noise), a linear model trained full-batch with SGD to
  // its optimum; the optimum of mean((w·x + b - y)²) + rate·penalty(w) is computed here:
  //   L2 (½w²): (2C + λI) w = 2c;   L1 (|w|), w > 0: 2Cw = 2c - λ·1
  // with C, c the covariances of the training points (which are regenerated here from the
  // same seed as the page's worker).
  const all = generateToy({ kind: 'plane', n: 400, noise: 0, seed: 1 });
  const { train } = splitTrainTest(all, 0.25, 1);
  const n = train.n;
  const mx = [0, 0];
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx[0] += train.x[2 * i] / n;
    mx[1] += train.x[2 * i + 1] / n;
    my += train.y[i] / n;
  }
  const C = [0, 0, 0, 0];
  const c = [0, 0];
  for (let i = 0; i < n; i++) {
    const a = train.x[2 * i] - mx[0];
    const b = train.x[2 * i + 1] - mx[1];
    const t = train.y[i] - my;
    C[0] += (a * a) / n;
    C[1] += (a * b) / n;
    C[3] += (b * b) / n;
    c[0] += (a * t) / n;
    c[1] += (b * t) / n;
  }
  C[2] = C[1];
  const solve = (A, v) => {
    const det = A[0] * A[3] - A[1] * A[2];
    return [(A[3] * v[0] - A[1] * v[1]) / det, (A[0] * v[1] - A[2] * v[0]) / det];
  };
  const cases = [
    ['none', 0, solve([2 * C[0], 2 * C[1], 2 * C[2], 2 * C[3]], [2 * c[0], 2 * c[1]])],
    ['l2', 1, solve([2 * C[0] + 1, 2 * C[1], 2 * C[2], 2 * C[3] + 1], [2 * c[0], 2 * c[1]])],
    ['l1', 0.3, solve([2 * C[0], 2 * C[1], 2 * C[2], 2 * C[3]], [2 * c[0] - 0.3, 2 * c[1] - 0.3])],
  ];
  const notes = [];
  for (const [reg, rate, want] of cases) {
    const link = `#data=plane&noise=0&layers=&opt=sgd&momentum=0&lr=0.1&batch=300&epochs=400&features=x1,x2${reg === 'none' ? '' : `&reg=${reg}&regRate=${rate}`}`;
    const page = await open(link, `reg-${reg}`);
    await trainToEnd(page, 60_000);
    if (reg !== 'none') {
      check((await page.$eval('#reg', (el) => el.value)) === reg, `the Regularization control does not show ${reg}`);
      check((await page.$eval('#reg-rate', (el) => el.value)) === String(rate), `the rate control does not show ${rate}`);
    }
    const w = (await savedWeights(page))['0.weight'];
    const err = Math.max(Math.abs(w[0] - want[0]), Math.abs(w[1] - want[1]));
    check(err < 2e-3, `${reg} rate ${rate}: trained weights [${w[0].toFixed(4)}, ${w[1].toFixed(4)}], optimum [${want[0].toFixed(4)}, ${want[1].toFixed(4)}]`);
    notes.push(`${reg}: w = [${w[0].toFixed(3)}, ${w[1].toFixed(3)}] (optimum [${want[0].toFixed(3)}, ${want[1].toFixed(3)}])`);
    if (reg === 'l2') await shot(page, 'tfp-regularization');
    await page.close();
  }
  check(cases[1][2][0] < 0.5 * cases[0][2][0] && cases[2][2][0] < 0.5 * cases[0][2][0], 'the penalties should shrink the weights');
  return notes.join('; ');
});

test('regression-heatmap', async () => {
  // Multi Gaussian: a continuous heat map (many colours), blue (+1) near the bump at
  // (-4, 2.5)/6 and orange (-1) near (0, 2.5)/6; no accuracy shown; Discretize leaves the
  // two end colours; Show test data adds the test points (dark outline); neither resets.
  const page = await open('#data=mgauss&layers=d16-tanh,d16-tanh&opt=adam&lr=0.02&batch=10&epochs=80', 'mgauss');
  const r = await trainToEnd(page, 80_000);
  await shot(page, 'tfp-mgauss');
  check(r.testAcc === null, `regression shows an accuracy (${r.testAcc})`);
  check(r.testLoss < 0.05, `Multi Gaussian test MSE ${r.testLoss}, expected < 0.05 after training`);
  check(!(await page.isVisible('#m-test-acc')), 'the accuracy tile is visible for regression');
  check(!(await page.isVisible('#acc-chart')) && !(await page.isVisible('#acc-summary')), 'the accuracy chart or its text is visible for regression');
  const gridSize = await page.$eval('#boundary', (c) => Number(c.dataset.gridSize));
  check(Number.isInteger(gridSize) && gridSize >= 50, `the heat map's grid size is ${gridSize}`);
  const s0 = await canvasStats(page);
  check(s0.colours > 40, `the regression heat map looks discrete (${s0.colours} colours)`);
  const blue = await pixelAt(page, -4 / 6, 2.5 / 6);
  const orange = await pixelAt(page, 0, 2.5 / 6);
  check(blue[2] > blue[0] + 50, `near the +1 bump the heat map is not blue: rgb(${blue}) (test MSE ${r.testLoss})`);
  check(orange[0] > orange[2] + 50, `near the -1 bump the heat map is not orange: rgb(${orange})`);
  check(s0.dark === 0, `test points are drawn before "Show test data" (${s0.dark} dark pixels)`);
  const step = await metric(page, 'm-step');
  await page.check('#discretize');
  await page.check('#show-test');
  await page.waitForFunction(() => /discretize=1&showTest=1/.test(location.hash));
  const s1 = await canvasStats(page);
  check(s1.dark > 100, `no test points after "Show test data" (${s1.dark} dark pixels)`);
  // Discretized: the cells take two colours; what else remains is the points' (their targets
  // are on the continuous scale) and the axes.
  const cells = await page.$eval('#boundary', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const counts = new Map();
    for (let i = 0; i < d.length; i += 4) {
      const k = `${d[i]},${d[i + 1]},${d[i + 2]}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    const top = [...counts.values()].sort((a, b) => b - a);
    return (top[0] + top[1]) / (d.length / 4);
  });
  check(cells > 0.75, `discretized: the two decision colours cover only ${(cells * 100).toFixed(0)} % of the canvas`);
  check((await metric(page, 'm-step')) === step && (await page.evaluate(() => document.body.dataset.status)) === 'done', 'a view option reset the run');
  await shot(page, 'tfp-mgauss-discretized');
  await page.close();
  return `test MSE ${r.testLoss.toFixed(4)}, ${s0.colours} colours, discretized two colours cover ${(cells * 100).toFixed(0)} %`;
});

test('regenerate', async () => {
  // XOR trained; Regenerate draws new points (a new data seed in the link) and keeps the
  // model: the step count stays and the trained model is right on the new points at once.
  const page = await open('#data=xor&noise=50&epochs=40&showTest=1', 'regenerate');
  check((await page.$eval('#noise', (el) => el.value)) === '50' && /50 %/.test(await page.$eval('#noise-out', (el) => el.textContent)), 'noise 50 (%) from the link is not shown');
  await page.uncheck('#show-test');
  await page.fill('#noise', '0');
  await page.$eval('#noise', (el) => el.dispatchEvent(new Event('input')));
  await page.waitForFunction(() => /noise=0&/.test(location.hash));
  const r = await trainToEnd(page, 60_000);
  check(r.testAcc >= 0.97, `XOR accuracy ${r.testAcc}`);
  const step = await metric(page, 'm-step');
  const before = await page.$eval('#boundary', (c) => c.toDataURL());
  await page.click('#regen-btn');
  await page.waitForFunction(() => /dataSeed=\d+/.test(location.hash));
  await page.waitForFunction((b) => document.getElementById('boundary').toDataURL() !== b, before, { timeout: 10_000 });
  await page.waitForTimeout(300);
  check((await metric(page, 'm-step')) === step, `Regenerate reset the model (step ${await metric(page, 'm-step')}, was ${step})`);
  const acc = await metric(page, 'm-test-acc');
  check(acc >= 0.9, `the kept model scores ${acc} on the new points (a new model would be near 0.5)`);
  await shot(page, 'tfp-regenerated');
  const seed = /dataSeed=(\d+)/.exec(page.url())[1];
  await page.close();
  return `step ${step} kept, ${(acc * 100).toFixed(1)} % on the new points (dataSeed ${seed})`;
});

test('csv', async () => {
  // Two rings of points with word labels, uploaded; the page trains on them. Then a bad file:
  // errors with line numbers beside the upload button, the good points stay.
  const lines = ['x1,x2,label'];
  for (let i = 0; i < 300; i++) {
    const a = (i * 2.399) % (2 * Math.PI);
    const r = i % 2 ? 3 + (i % 7) / 10 : 1 + (i % 5) / 10;
    lines.push(`${(10 + r * Math.cos(a)).toFixed(4)},${(-5 + r * Math.sin(a)).toFixed(4)},${i % 2 ? 'outer' : 'inner'}`);
  }
  const page = await open('#data=xor&layers=d8-tanh,d8-tanh&epochs=60&lr=0.03', 'csv');
  await waitStatus(page, ['idle'], 60_000);
  await page.selectOption('#data', 'csv');
  await waitStatus(page, ['invalid'], 10_000);
  check(/Upload a CSV/.test(await page.$eval('#status', (el) => el.textContent)), 'no prompt to upload');
  await page.setInputFiles('#csv-input', { name: 'rings.csv', mimeType: 'text/csv', buffer: Buffer.from(lines.join('\n')) });
  await waitStatus(page, ['idle'], 30_000);
  const info = await page.$eval('#csv-status', (el) => el.textContent);
  check(/rings\.csv: 300 points, 2 classes \(inner: 150, outer: 150\)/.test(info), `CSV summary: ${info}`);
  check(/data=csv/.test(page.url()), 'the link does not say data=csv');
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 60_000);
  const acc = await metric(page, 'm-test-acc');
  check(acc >= 0.95, `the rings are learned to only ${acc}`);
  await shot(page, 'tfp-csv');
  const bad = 'x1,x2,label\n1,2,a\n3,four,b\n5,6\n';
  await page.setInputFiles('#csv-input', { name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from(bad) });
  await page.waitForSelector('#csv-status.error');
  const err = await page.$eval('#csv-status', (el) => el.textContent);
  check(/bad\.csv/.test(err) && /line 3: x2 "four" is not a number/.test(err) && /line 4: 2 fields/.test(err) && /rings\.csv stay/.test(err), `CSV errors: ${err}`);
  check((await metric(page, 'm-test-acc')) === acc && (await page.evaluate(() => document.body.dataset.status)) === 'done', 'a bad file changed the run');
  await shot(page, 'tfp-csv-bad');
  // A reload of the tab trains on the same file again (kept in sessionStorage).
  await page.reload();
  await waitStatus(page, ['idle'], 30_000);
  check(/rings\.csv: 300 points/.test(await page.$eval('#csv-status', (el) => el.textContent)), 'the reloaded tab lost the CSV');
  // Another file while data=csv: a new model on its points (the set-up reads the same, so
  // this once kept training the previous file's points). 40 points, 3 classes: 30 for
  // training, 2 batches of 16 an epoch, 120 steps in 60 epochs (the rings: 840).
  const tri = ['x1,x2,label'];
  for (let i = 0; i < 40; i++) tri.push(`${(i % 3) * 5 + (i % 4) / 10},${(i % 5) / 10},${['a', 'b', 'c'][i % 3]}`);
  await page.setInputFiles('#csv-input', { name: 'tri.csv', mimeType: 'text/csv', buffer: Buffer.from(tri.join('\n')) });
  await page.waitForFunction(() => /tri\.csv: 40 points, 3 classes/.test(document.getElementById('csv-status').textContent));
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 60_000);
  const triSteps = await metric(page, 'm-step');
  check(triSteps === 120, `a second CSV file trained ${triSteps} steps (120 on its 30 training points; 840 on the previous file's)`);
  // A data=csv link without the file: the page says why beside the upload, keeps the settings.
  const link = page.url().split('#')[1];
  await page.close();
  const fresh = await open(`#${link}`, 'csv-link');
  await waitStatus(fresh, ['invalid'], 30_000);
  const why = await fresh.$eval('#csv-status', (el) => el.textContent);
  check(/a link cannot carry/.test(why), `no explanation for a CSV link: ${why}`);
  check(/epochs=60/.test(fresh.url()) && /data=csv/.test(fresh.url()), `the link's settings were not kept: ${fresh.url()}`);
  await fresh.close();
  return `rings: ${(acc * 100).toFixed(1)} %; bad file named lines 3 and 4`;
});

await run('tfp');
