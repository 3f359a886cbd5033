// Prints one SHA-256 over the exact bits of what the rank-erased engine code computes
// (optimizer steps, norms, losses, dropout, functional linear: values and gradients, at
// every rank they take), so that two builds can be compared bit for bit:
//
//   node scripts/erase_same_numbers.mjs                 # the package in dist/
//   node scripts/erase_same_numbers.mjs /tmp/old/dist   # a copy of dist/ with another kiln.wasm
//
// Equal hashes: the builds compute the same bits here. Deterministic: every random draw is
// seeded; one thread, the full engine (init({engine: 'full', threads: false})).
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = resolve(process.argv[2] ?? new URL('../dist', import.meta.url).pathname);
const { init } = await import(pathToFileURL(`${dist}/node.js`).href);
const kiln = await init({ engine: 'full', threads: false });
const T = kiln.Tensor;
const hash = createHash('sha256');
const lines = [];

/** Adds a tensor's float32 bits (and its shape) to the hash under `name`. */
function add(name, t) {
  const data = Float32Array.from(t.dataSync());
  hash.update(`${name} ${JSON.stringify(t.shape)}\n`);
  hash.update(Buffer.from(data.buffer));
  lines.push(`${name} ${JSON.stringify(t.shape)} ${data.slice(0, 3).join(' ')}`);
}

function randomTensor(shape, seed, range = [-2, 2]) {
  kiln.seed(seed);
  return T.random(shape, { uniform: range });
}

const F = kiln.nn.functional;
// Norms and linear, ranks 2..5 (linear 1..4), values and gradients.
for (const shape of [[6, 3], [4, 3, 5], [2, 3, 4, 5], [2, 3, 2, 3, 4]]) {
  const tag = `r${shape.length}`;
  const x = randomTensor(shape, 11).requireGrad();
  const c = shape[1];
  const w = randomTensor([c], 12);
  const b = randomTensor([c], 13);
  const rm = randomTensor([c], 14);
  const rv = randomTensor([c], 15, [0.5, 2]);
  const train = F.batchNorm(x, rm, rv, { weight: w, bias: b, training: true, momentum: 0.3 });
  add(`batchNorm.train.${tag}`, train.output);
  add(`batchNorm.rm.${tag}`, train.runningMean);
  add(`batchNorm.rv.${tag}`, train.runningVar);
  add(`batchNorm.grad.${tag}`, x.grad(train.output.mul(train.output).sum().backward()));
  const evalOut = F.batchNorm(x, rm, rv, { weight: w, bias: b });
  add(`batchNorm.eval.${tag}`, evalOut);
  const ln = F.layerNorm(x, shape.slice(-1));
  add(`layerNorm.${tag}`, ln);
  add(`layerNorm.grad.${tag}`, x.grad(ln.mul(ln).sum().backward()));
  const ln2 = F.layerNorm(x, shape.slice(-2));
  add(`layerNorm2.${tag}`, ln2);
  add(`layerNorm2.grad.${tag}`, x.grad(ln2.mul(ln2).sum().backward()));
  const gn = F.groupNorm(x, c, { weight: w, bias: b });
  add(`groupNorm.${tag}`, gn);
  add(`groupNorm.grad.${tag}`, x.grad(gn.mul(gn).sum().backward()));
  const lw = randomTensor([7, shape[shape.length - 1]], 16);
  const lb = randomTensor([7], 17);
  const lin = F.linear(x, lw, lb);
  add(`linear.${tag}`, lin);
  add(`linear.grad.${tag}`, x.grad(lin.mul(lin).sum().backward()));
}
// Losses, ranks 1..3, values and gradients.
for (const shape of [[8], [4, 3], [2, 3, 4]]) {
  const tag = `r${shape.length}`;
  const p = randomTensor(shape, 21, [0.01, 0.99]).requireGrad();
  const z = randomTensor(shape, 22, [-4, 4]).requireGrad();
  kiln.seed(23);
  const t = T.random(shape, { uniform: [0, 1] }).greater(0.5).float();
  const n = shape[shape.length - 1];
  const lossFns = {
    bce: () => kiln.loss.binaryCrossEntropy({ labelSmoothing: 0.1 }).forward(p, t),
    bceWeights: () => kiln.loss.binaryCrossEntropy({ weights: shape.length === 1 ? [0.3, 2] : Array.from({ length: n }, (_, i) => i + 0.5) }).forward(p, t),
    bceLogits: () => kiln.loss.binaryCrossEntropy({ logits: true }).forward(z, t),
    bcePosWeight: () => kiln.loss.binaryCrossEntropy({ logits: true, posWeight: Array.from({ length: n }, (_, i) => i + 1.5) }).forward(z, t),
    huber: () => kiln.loss.huber({ delta: 0.7 }).forward(z, p),
    smoothL1: () => kiln.loss.smoothL1({ beta: 0.4 }).forward(z, p),
  };
  for (const [name, f] of Object.entries(lossFns)) {
    const loss = f();
    add(`${name}.${tag}`, loss);
    const grads = loss.backward();
    add(`${name}.gradP.${tag}`, p.grad(grads) ?? T.zeros([1]));
    add(`${name}.gradZ.${tag}`, z.grad(grads) ?? T.zeros([1]));
  }
}
// Optimizers: a few training steps of a model with parameters of ranks 1, 2 and 4 (conv) and
// batchNorm, layerNorm and dropout layers; the parameters' bits after each run.
const optimizers = {
  sgd: () => kiln.optim.sgd({ lr: 0.05 }),
  sgdMomentum: () => kiln.optim.sgd({ lr: 0.05, momentum: 0.8, dampening: 0.1, weightDecay: 0.01 }),
  sgdNesterov: () => kiln.optim.sgd({ lr: 0.05, momentum: 0.8, nesterov: true }),
  adam: () => kiln.optim.adam({ lr: 0.01 }),
  adamAmsgrad: () => kiln.optim.adam({ lr: 0.01, amsgrad: true, weightDecay: 0.02 }),
  adamW: () => kiln.optim.adamW({ lr: 0.01, weightDecay: 0.1 }),
  rmsProp: () => kiln.optim.rmsProp({ lr: 0.01 }),
  rmsPropCentered: () => kiln.optim.rmsProp({ lr: 0.01, centered: true, momentum: 0, weightDecay: 0.01 }),
};
kiln.seed(31);
const xs = T.random([8, 36], { uniform: [-1, 1] });
const ys = T.random([8, 4], { uniform: [-1, 1] });
for (const [name, make] of Object.entries(optimizers)) {
  const model = kiln.nn.sequential({
    layers: [
      { type: 'reshape', shape: [1, 6, 6] },
      { type: 'conv2d', channels: [1, 3], kernelSize: 3, padding: 'same' },
      { type: 'batchNorm', numFeatures: 3 },
      { type: 'relu' },
      { type: 'flatten' },
      { type: 'dropout', prob: 0.25 },
      { type: 'linear', dInput: 108, dOutput: 16 },
      { type: 'layerNorm', dModel: 16 },
      { type: 'tanh' },
      { type: 'linear', dInput: 16, dOutput: 4 },
    ],
  }, { seed: 5 });
  const optimizer = make();
  const learner = new kiln.Learner(model, { optimizer, loss: kiln.loss.mse(), metrics: [] });
  kiln.seed(41);
  for (let step = 0; step < 4; step++) learner.trainOnBatch({ x: xs, y: ys });
  for (const [param, t] of Object.entries(model.namedParameters())) add(`${name}.${param}`, t);
}

if (process.env.VERBOSE) console.log(lines.join('\n'));
console.log(`${hash.digest('hex')}  ${lines.length} tensors  (${dist})`);
process.exit(0);
