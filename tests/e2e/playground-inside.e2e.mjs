// End-to-end tests of "Look inside" (issue 18, first bullet) in headless Chromium:
//   toy-graph      the network graph of XOR's 2-8-8-2 tanh MLP: its nodes and edges; every
//                  neuron's map at the grid's corners recomputed here from the weights and
//                  biases the page shows (tanh(W·x + b), layer after layer); the maps and
//                  weights change as training runs; hover and keyboard focus show values
//   toy-text       the text alternative: the weights table and the summary
//   mnist-inside   a small CNN on MNIST: conv filters as images, one weight histogram per
//                  layer (counts add up to the weights); drawing a digit updates every
//                  layer's activations WHILE the pointer is down; the logits row's softmax
//                  equals the engine's predicted probabilities; the saliency map is
//                  non-trivial and names the predicted digit
//   node tests/e2e/playground-inside.e2e.mjs [--no-build] [--only toy-graph,mnist-inside]
import { test, run, check, shot, open, waitStatus, metric } from './playground_support.mjs';

const S = 24; // INSIDE_GRID (web/src/inside-probe.js)
const LO = -1.25; // GRID of web/src/datasets.js
const HI = 1.25;

/** The corners of the neuron grid as the worker builds it (boundaryGrid: cell centres). */
function corners() {
  const c = (i) => LO + ((i + 0.5) * (HI - LO)) / S;
  const r = (i) => HI - ((i + 0.5) * (HI - LO)) / S;
  return [[c(0), r(0)], [c(S - 1), r(0)], [c(0), r(S - 1)], [c(S - 1), r(S - 1)]];
}

/** Every node's numbers: {layer, unit, corners[4], bias, weights[]}. */
const nodes = (page) =>
  page.$$eval('#inside .ig-node', (els) =>
    els.map((e) => ({
      layer: Number(e.dataset.layer),
      unit: Number(e.dataset.unit),
      corners: e.dataset.corners.split(',').map(Number),
      bias: e.dataset.bias === undefined ? null : Number(e.dataset.bias),
      weights: e.dataset.weights === undefined ? null : e.dataset.weights.split(',').map(Number),
      min: Number(e.dataset.min),
      max: Number(e.dataset.max),
    })),
  );

/**
 * Recomputes each neuron at the four corners from the shown weights and biases (tanh
 * hidden layers, linear outputs) and returns the largest difference from the page's maps.
 */
function maxForwardError(ns, hiddenLayers) {
  let worst = 0;
  const pts = corners();
  let prev = pts.map((p) => p); // per corner: the previous layer's values
  for (let layer = 1; layer <= hiddenLayers + 1; layer++) {
    const units = ns.filter((n) => n.layer === layer).sort((a, b) => a.unit - b.unit);
    const next = pts.map(() => []);
    for (const n of units) {
      pts.forEach((_, k) => {
        let z = n.bias;
        n.weights.forEach((w, j) => (z += w * prev[k][j]));
        const v = layer <= hiddenLayers ? Math.tanh(z) : z;
        next[k].push(v);
        worst = Math.max(worst, Math.abs(v - n.corners[k]) / Math.max(1, Math.abs(v)));
      });
    }
    prev = next;
  }
  return worst;
}

/** A canvas's pixels as a string (to compare two moments). */
const pixels = (page, selector) => page.$eval(selector, (c) => c.toDataURL());

test('toy-graph', async () => {
  const page = await open('#data=xor&epochs=2000', 'inside-toy');
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForSelector('#inside .ig-node[data-corners]');
  const before = await nodes(page);
  check(before.length === 2 + 8 + 8 + 2, `nodes: ${before.length}, expected 20 (2 inputs, 8, 8, 2 outputs)`);
  const edges = await page.$$eval('#inside .ig-edge', (els) => els.map((e) => ({ w: Number(e.dataset.weight), width: Number(e.getAttribute('stroke-width')), stroke: e.getAttribute('stroke') })));
  check(edges.length === 2 * 8 + 8 * 8 + 8 * 2, `edges: ${edges.length}, expected 96`);
  // Edges are sized by |w| and coloured by sign: the widest has the largest |w|; orange (< 0) vs blue (> 0).
  const widest = edges.reduce((a, e) => (e.width > a.width ? e : a));
  check(Math.abs(widest.w) === Math.max(...edges.map((e) => Math.abs(e.w))), 'the widest edge is not the largest |w|');
  const neg = edges.filter((e) => e.w < -0.5);
  const pos = edges.filter((e) => e.w > 0.5);
  check(neg.length > 0 && pos.length > 0 && neg.every((e) => /^rgb\((2[0-9]{2}),/.test(e.stroke)) && pos.every((e) => /^rgb\(([0-9]|[0-9]{2}|1[0-9]{2}),/.test(e.stroke)), 'edge colours do not follow the sign');
  // Input maps are the inputs themselves.
  const pts = corners();
  const inputs = before.filter((n) => n.layer === 0);
  check(inputs.every((n) => n.corners.every((v, k) => Math.abs(v - pts[k][n.unit]) < 1e-6)), `input maps are not x1, x2: ${JSON.stringify(inputs.map((n) => n.corners))}`);
  const err0 = maxForwardError(before, 2);
  check(err0 < 1e-5, `the maps differ from tanh(W·x + b) recomputed from the shown weights by ${err0}`);
  const hidden0 = await pixels(page, '#inside .ig-node[data-layer="1"][data-unit="0"] canvas');

  // Train: the graph follows while the run goes on (three updates seen during training, each
  // at a later step), then Pause; its last update is at the paused step.
  const graphStep = () => page.$eval('#inside .inside-toy', (e) => Number(e.dataset.step));
  const steps = [];
  await page.click('#train-btn');
  for (let i = 0; i < 3; i++) {
    await page.waitForFunction(
      (prev) => document.body.dataset.status === 'training' && Number(document.querySelector('#inside .inside-toy').dataset.step) > prev,
      steps.at(-1) ?? 0,
      { timeout: 30_000, polling: 20 },
    );
    steps.push(await graphStep());
  }
  await page.click('#train-btn'); // pause
  await waitStatus(page, ['paused'], 10_000);
  await page.waitForFunction(() => Number(document.querySelector('#inside .inside-toy').dataset.step) === Number(document.getElementById('m-step').dataset.value), null, { timeout: 10_000 });
  const after = await nodes(page);
  const moved = after.filter((n, i) => n.layer > 0 && n.corners.some((v, k) => Math.abs(v - before[i].corners[k]) > 1e-3));
  check(moved.length >= 14, `only ${moved.length} of 18 neuron maps changed with training`);
  const err1 = maxForwardError(after, 2);
  check(err1 < 1e-5, `after training the maps differ from the recomputed ones by ${err1}`);
  check((await pixels(page, '#inside .ig-node[data-layer="1"][data-unit="0"] canvas')) !== hidden0, 'the first hidden neuron looks the same after training');
  const acc = await metric(page, 'm-test-acc');

  // Hover a neuron, then an edge; keyboard focus on a neuron.
  const node = page.locator('#inside .ig-node[data-layer="2"][data-unit="3"]');
  await node.scrollIntoViewIfNeeded();
  await node.hover();
  const tipNode = await page.$eval('#ig-tip', (t) => (t.hidden ? '' : t.textContent));
  check(/neuron 4 of hidden layer 2 \(tanh\): output from .* bias .* incoming weights/.test(tipNode), `hover tooltip: ${tipNode}`);
  const detail = await page.$eval('.ig-detail-cap', (e) => e.textContent);
  check(/^Neuron 4 of hidden layer 2/.test(detail), `the large map does not show the hovered neuron: ${detail}`);
  await shot(page, 'inside-toy-hover');
  const edgeBox = await page.locator('#inside .ig-hit').nth(20).boundingBox();
  const edgeD = await page.locator('#inside .ig-hit').nth(20).getAttribute('d');
  // a point on the curve: its middle (the bezier's midpoint is the middle of its ends)
  const [, x1, y1, x2, y2] = /^M([\d.]+),([\d.]+) C.* ([\d.]+),([\d.]+)$/.exec(edgeD).map(Number);
  const svgBox = await page.locator('#inside .ig-edges').boundingBox();
  await page.mouse.move(svgBox.x + (x1 + x2) / 2, svgBox.y + (y1 + y2) / 2);
  const tipEdge = await page.$eval('#ig-tip', (t) => (t.hidden ? '' : t.textContent));
  check(/^Weight [−\d.e+-]+ from .* to /.test(tipEdge), `edge tooltip: ${tipEdge} (edge box ${JSON.stringify(edgeBox)})`);
  await page.mouse.move(0, 0);
  // One tab stop for the graph (the first input); arrow keys move between neurons.
  const stops = await page.$$eval('#inside .ig-node', (els) => els.filter((e) => e.tabIndex === 0).length);
  check(stops === 1, `the graph has ${stops} tab stops, expected 1`);
  await page.focus('#inside .ig-node[tabindex="0"]');
  for (const key of ['ArrowRight', 'ArrowRight', 'ArrowRight', 'ArrowDown']) await page.keyboard.press(key);
  const focused = await page.evaluate(() => `${document.activeElement.dataset.layer}.${document.activeElement.dataset.unit}`);
  check(focused === '3.1', `arrow keys reached neuron ${focused}, expected output 2 (3.1)`);
  const tipKey = await page.$eval('#ig-tip', (t) => (t.hidden ? '' : t.textContent));
  check(/^output 2 \(logit\): output from .* bias/.test(tipKey), `focus tooltip: ${tipKey}`);
  const label = await page.$eval('#inside .ig-node[data-layer="3"][data-unit="1"]', (e) => e.getAttribute('aria-label'));
  check(label === tipKey, 'a focused neuron has no aria-label with its values');
  await page.locator('#inside').scrollIntoViewIfNeeded();
  await shot(page, 'inside-toy-graph', false);
  await page.close();
  return `20 neurons, 96 edges; maps = tanh(W·x + b) to ${Math.max(err0, err1).toExponential(1)}; ${moved.length}/18 maps changed; updates seen while training at steps ${steps.join(', ')}; test accuracy ${(acc * 100).toFixed(1)} %`;
});

test('toy-text', async () => {
  const page = await open('#data=circle&layers=d4-relu,d3-relu', 'inside-text');
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForSelector('#inside .ig-node[data-corners]');
  await page.click('#inside .ig-table > summary');
  await page.waitForSelector('#inside .ig-weights'); // drawn on the details' toggle event
  const tables = await page.$$eval('#inside .ig-weights', (ts) => ts.map((t) => ({ caption: t.caption.textContent, rows: t.rows.length - 1, cols: t.rows[0].cells.length })));
  check(
    JSON.stringify(tables) === JSON.stringify([
      { caption: 'Hidden layer 1 (ReLU)', rows: 4, cols: 2 + 2 },
      { caption: 'Hidden layer 2 (ReLU)', rows: 3, cols: 2 + 4 },
      { caption: 'Output layer (logits)', rows: 2, cols: 2 + 3 },
    ]),
    `weights tables: ${JSON.stringify(tables)}`,
  );
  // The table's bias of h1.1 is the node's bias.
  const cell = await page.$eval('#inside .ig-weights tbody tr:first-child td', (td) => td.textContent);
  const bias = await page.$eval('#inside .ig-node[data-layer="1"][data-unit="0"]', (e) => Number(e.dataset.bias));
  check(Number(cell.replace('−', '-')) === Number(bias.toPrecision(3)), `table bias ${cell} vs node bias ${bias}`);
  const summary = await page.$eval('#ig-summary', (e) => e.textContent);
  check(/^2 inputs \(X₁, X₂\) → 4 ReLU → 3 ReLU → 2 outputs\. Step 0/.test(summary), `summary: ${summary}`);
  await page.locator('#inside').scrollIntoViewIfNeeded();
  await shot(page, 'inside-toy-text', false);
  await page.close();
  return summary;
});

test('toy-features-regression', async () => {
  // TF Playground's inputs and a regression set: the graph's inputs are the chosen features
  // (their maps are x1, x2², sin x2 over the plane) and its one output is the prediction.
  const page = await open('#data=mgauss&features=x1,x2sq,sinx2&layers=d5-tanh', 'inside-features');
  await waitStatus(page, ['idle'], 60_000);
  await page.waitForSelector('#inside .ig-node[data-corners]');
  const ns = await nodes(page);
  check(ns.length === 3 + 5 + 1, `nodes: ${ns.length}, expected 9 (3 inputs, 5, 1 output)`);
  const titles = await page.$$eval('#inside .ig-col', (els) => els.map((e) => e.textContent));
  check(JSON.stringify(titles) === JSON.stringify(['Input', 'Hidden 1tanh', 'Output']), `column titles: ${titles}`);
  const pts = corners();
  const feats = pts.map(([a, b]) => [a, b * b, Math.sin(b)]);
  const inputs = ns.filter((n) => n.layer === 0).sort((a, b) => a.unit - b.unit);
  const inErr = Math.max(...inputs.flatMap((n) => n.corners.map((v, k) => Math.abs(v - feats[k][n.unit]))));
  check(inErr < 1e-6, `input maps differ from x1, x2², sin x2 by ${inErr}`);
  // hidden tanh, then the linear output, recomputed from the shown weights on the features
  let worst = 0;
  const hidden = ns.filter((n) => n.layer === 1).sort((a, b) => a.unit - b.unit);
  const h = feats.map((f) => hidden.map((n) => Math.tanh(n.weights.reduce((z, w, j) => z + w * f[j], n.bias))));
  hidden.forEach((n, u) => n.corners.forEach((v, k) => (worst = Math.max(worst, Math.abs(v - h[k][u])))));
  const out = ns.find((n) => n.layer === 2);
  out.corners.forEach((v, k) => (worst = Math.max(worst, Math.abs(v - out.weights.reduce((z, w, j) => z + w * h[k][j], out.bias)))));
  check(worst < 1e-5, `maps differ from the recomputed network by ${worst}`);
  const names = await page.$eval('#ig-summary', (e) => e.textContent);
  check(/^3 inputs \(X₁, X₂², sin\(X₂\)\) → 5 tanh → 1 output\./.test(names), `summary: ${names}`);
  await page.locator('#inside').scrollIntoViewIfNeeded();
  await shot(page, 'inside-toy-features', false);
  await page.close();
  return `inputs X₁, X₂², sin(X₂) over the plane; network recomputed to ${worst.toExponential(1)}`;
});

test('mnist-inside', async () => {
  const page = await open('#data=mnist&train=2000&mtest=1000&layers=c8-3-relu-max,c16-3-relu-max&epochs=1&opt=adam&lr=0.003', 'inside-mnist');
  await waitStatus(page, ['idle'], 90_000);
  await page.click('#train-btn');
  await waitStatus(page, ['done'], 120_000);
  const acc = await metric(page, 'm-test-acc');
  // Filters and histograms (after the last evaluation).
  await page.waitForSelector('#inside .im-hist');
  const filters = await page.$$eval('#inside .im-filter-grid', (gs) => gs.map((g) => g.querySelectorAll('canvas').length));
  check(JSON.stringify(filters) === '[8,16]', `filter images per conv layer: ${filters}`);
  const hists = await page.$$eval('#inside .im-hist', (rs) => rs.map((r) => r.dataset.counts.split(',').map(Number).reduce((a, b) => a + b, 0)));
  check(JSON.stringify(hists) === JSON.stringify([8 * 9, 16 * 8 * 9, 400 * 10]), `histogram totals ${hists} (expected the weights per layer)`);

  // Draw slowly: the activation views update while the pointer is down.
  const pad = await page.locator('#draw').boundingBox();
  const at = (x, y) => [pad.x + x * pad.width, pad.y + y * pad.height];
  const count = () => page.$eval('#inside .inside-mnist', (e) => Number(e.dataset.inspections ?? 0));
  const sums = () => page.$$eval('#inside .im-acts .im-row[data-layer]', (rs) => rs.map((r) => r.dataset.sum).join(','));
  await page.locator('#draw').scrollIntoViewIfNeeded();
  await page.mouse.move(...at(0.3, 0.2));
  await page.mouse.down();
  await page.mouse.move(...at(0.7, 0.2), { steps: 6 });
  await page.waitForFunction(() => Number(document.querySelector('#inside .inside-mnist').dataset.inspections ?? 0) > 0, null, { timeout: 10_000 });
  const n1 = await count();
  const s1 = await sums();
  await page.mouse.move(...at(0.45, 0.85), { steps: 10 });
  await page.waitForFunction((n) => Number(document.querySelector('#inside .inside-mnist').dataset.inspections) > n, n1, { timeout: 10_000 });
  const n2 = await count();
  const s2 = await sums();
  await page.mouse.up();
  check(n2 > n1 && s2 !== s1, `the activations did not change while drawing (${n1} -> ${n2} inspections)`);
  // After the stroke: the views show the last drawing (no request in flight).
  await page.waitForFunction(() => document.getElementById('inside').dataset.inspecting === 'idle', null, { timeout: 10_000 });
  const rows = await page.$$eval('#inside .im-acts .im-row[data-layer]', (rs) => rs.map((r) => `${r.dataset.type}:${r.querySelectorAll('canvas').length}`));
  check(JSON.stringify(rows) === JSON.stringify(['conv2d:8', 'relu:8', 'maxPool2d:8', 'conv2d:16', 'relu:16', 'maxPool2d:16', 'linear:1']), `activation rows: ${rows}`);
  const convMap = await page.$eval('#inside .im-acts .im-row[data-layer="1"] canvas', (c) => [c.width, c.height]);
  check(convMap[0] === 52 && convMap[1] === 52, `the first conv map is ${convMap} (26 × 26 at 2×)`);
  // The logits row, through softmax, is the engine's prediction of the drawing (another path: Learner.predict).
  // (the prediction answers its own requests: wait until it is the last drawing's, i.e. the
  // page's prediction no longer changes between two checks)
  await page.waitForFunction(() => {
    const p = document.getElementById('draw-pred').dataset.probs;
    const same = p && p === window.__lastProbs;
    window.__lastProbs = p;
    return same;
  }, null, { timeout: 10_000, polling: 250 });
  const { logits, probs, pred, sal } = await page.evaluate(() => {
    const canvases = document.querySelectorAll('#inside .im-acts .im-row[data-type="linear"]');
    const last = canvases[canvases.length - 1];
    const salC = document.querySelector('#inside .im-saliency');
    return {
      logits: last.dataset.values.split(',').map(Number),
      probs: document.getElementById('draw-pred').dataset.probs.split(',').map(Number),
      pred: document.getElementById('draw-pred').dataset.value,
      sal: { predicted: salC.dataset.predicted, map: salC.dataset.map.split(',').map(Number) },
    };
  });
  check(sal.predicted === pred, `saliency is for ${sal.predicted}, the page predicts ${pred}`);
  const m = Math.max(...logits);
  const e = logits.map((z) => Math.exp(z - m));
  const soft = e.map((v) => v / e.reduce((a, b) => a + b, 0));
  const softErr = Math.max(...soft.map((p, c) => Math.abs(p - probs[c])));
  check(logits.length === 10 && softErr < 1e-4, `softmax(logits row) differs from the engine's probabilities by ${softErr}`);
  // Saliency: finite, non-negative, not constant, concentrated (the largest well above the median).
  const sorted = [...sal.map].sort((a, b) => a - b);
  const median = sorted[392];
  const top = sorted[783];
  const distinct = new Set(sal.map).size;
  check(sal.map.length === 784 && sal.map.every((v) => Number.isFinite(v) && v >= 0), 'saliency map: 784 finite |gradients|');
  check(top > 0 && distinct > 100 && top > 4 * median, `saliency looks trivial: max ${top}, median ${median}, ${distinct} distinct values`);
  check(Math.abs(probs.reduce((a, b) => a + b, 0) - 1) < 1e-3, `probabilities ${probs}`);
  await page.locator('#inside').scrollIntoViewIfNeeded();
  await shot(page, 'inside-mnist', true);
  await page.close();
  return `CNN 8-16, 2,000 images: test accuracy ${(acc * 100).toFixed(1)} %; ${n2} inspections (${n1} before the stroke's end); drawn digit read as ${pred}; softmax(logits) = probabilities to ${softErr.toExponential(1)}; saliency max ${top.toExponential(2)} vs median ${median.toExponential(2)}`;
});

test('mnist-mlp-inside', async () => {
  // The default MLP (784-128-64-10), untrained: its first layer's weights as images, three
  // histograms, and a drawn digit's five activation rows.
  const page = await open('#data=mnist&train=1000&mtest=1000', 'inside-mlp');
  await waitStatus(page, ['idle'], 90_000);
  await page.waitForSelector('#inside .im-hist');
  const templates = await page.$$eval('#inside .im-templates canvas', (cs) => cs.map((c) => `${c.width}x${c.height}`));
  check(templates.length === 16 && templates.every((t) => t === '56x56'), `first-layer weight images: ${templates}`);
  const hists = await page.$$eval('#inside .im-hist', (rs) => rs.map((r) => r.dataset.counts.split(',').map(Number).reduce((a, b) => a + b, 0)));
  check(JSON.stringify(hists) === JSON.stringify([784 * 128, 128 * 64, 64 * 10]), `histogram totals ${hists}`);
  await page.locator('#draw').scrollIntoViewIfNeeded();
  await page.click('#sample-draw');
  await page.waitForSelector('#inside .im-acts .im-row[data-layer]');
  const rows = await page.$$eval('#inside .im-acts .im-row[data-layer]', (rs) => rs.map((r) => `${r.dataset.type}:${r.dataset.shape}`));
  check(JSON.stringify(rows) === JSON.stringify(['linear:128', 'relu:128', 'linear:64', 'relu:64', 'linear:10']), `activation rows: ${rows}`);
  await page.click('#clear-draw');
  const cleared = await page.$$eval('#inside .im-acts .im-row[data-layer]', (rs) => rs.length);
  check(cleared === 0, 'Clear left the activations of the old drawing');
  await page.click('#sample-draw');
  await page.waitForSelector('#inside .im-acts .im-row[data-layer]');
  await page.locator('#inside').scrollIntoViewIfNeeded();
  await shot(page, 'inside-mnist-mlp', false);
  await page.close();
  return 'templates 16, histograms 100,352 / 8,192 / 640 weights, 5 activation rows';
});

run('inside');
