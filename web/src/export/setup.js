// What the exporters need to know about a playground run, gathered in one plain object (no
// DOM, no engine): the model's kiln.nn.sequential spec, the features, the loss, the
// regularisation, the optimizer and its settings, batch size, epochs, seed, the toy data
// exactly as the page trained on it (or which MNIST subsets), and the page's own
// predictions on the first test items, which each exported program compares its own with.

import { taskOf } from '../state.js';
import { orderFeatures, DEFAULT_FEATURES, FEATURE_FORMULAS } from '../features.js';

/** Readable names of the data sets for comments and titles. */
const DATA_NAMES = {
  xor: 'XOR',
  circle: 'Circle',
  spiral: 'Two spirals',
  gauss: 'Gaussian clusters',
  plane: 'Plane (regression)',
  mgauss: 'Multi Gaussian (regression)',
  csv: 'uploaded CSV points',
  mnist: 'MNIST',
};

/** How many test items' predictions of the page go into an exported program (its self-check). */
export const CHECK_LIMIT = { toy: 5000, mnist: 100 };

/** The file stem of a set-up's exports: "kiln_xor", "kiln_mnist". */
export const exportName = (data) => `kiln_${String(data).replace(/[^a-z0-9]+/gi, '_').toLowerCase()}`;

/**
 * The features a set-up's model reads, in FEATURES order ([] for MNIST).
 * @throws {Error} naming an unknown feature, or for an empty list
 */
export function setupFeatures(state) {
  if (state.data === 'mnist') return [];
  try {
    return orderFeatures(state.features ?? DEFAULT_FEATURES);
  } catch (e) {
    throw new Error(`export: ${e.message}`);
  }
}

/**
 * Gathers a run for the exporters.
 * @param {object} p
 * @param {object} p.state the page's set-up (state.js; the tfp fields features, reg, regRate
 *   are read with their defaults when absent)
 * @param {{layers: object[]}} p.spec the kiln.nn.sequential spec the worker built (modelspec.js)
 * @param {object | null} p.view the worker's view of the data: toy points
 *   {trainX, trainY, testX, testY} (x1, x2 pairs; labels Int32Array, regression targets
 *   Float32Array), or MNIST {trainCount, testCount}
 * @param {{count: number, values: Float32Array} | null} [p.check] the page's outputs on the
 *   first `count` test items (probabilities, or raw outputs for regression), row-major
 * @param {string} [p.link] the set-up's URL fragment (written into the programs' headers)
 * @returns {object} the export set-up (see the fields below)
 * @throws {Error} naming what does not fit (no model, no data, a spec the exporters cannot write)
 */
export function exportSetup({ state, spec, view, check = null, link = '' }) {
  if (!spec || !Array.isArray(spec.layers) || spec.layers.length === 0) throw new Error('export: the model is not valid yet (fix it under Model)');
  if (!view) throw new Error('export: the data are not ready yet');
  const mnist = state.data === 'mnist';
  const task = taskOf(state.data);
  const features = setupFeatures(state);
  const linears = spec.layers.filter((l) => l.type === 'linear');
  const last = spec.layers[spec.layers.length - 1];
  if (last.type !== 'linear') throw new Error('export: the model must end with its linear output layer');
  const inputSize = mnist ? 784 : features.length;
  const first = spec.layers[0];
  if (first.type === 'linear' && first.dInput !== inputSize) {
    throw new Error(`export: the model reads ${first.dInput} inputs but the set-up gives ${inputSize} (${mnist ? 'pixels' : features.join(', ')})`);
  }
  const outputs = last.dOutput;
  if (task === 'regression' && outputs !== 1) throw new Error(`export: a regression model has 1 output, this one ${outputs}`);
  const reg = state.reg ?? 'none';
  if (!['none', 'l1', 'l2'].includes(reg)) throw new Error(`export: unknown regularisation "${reg}" (expected none, l1 or l2)`);
  const setup = {
    name: exportName(state.data),
    title: `${DATA_NAMES[state.data] ?? state.data}, ${modelWords(spec.layers)}`,
    link,
    data: state.data,
    task,
    features,
    inputSize,
    outputs,
    layers: structuredClone(spec.layers),
    opt: { kind: state.opt, lr: state.lr, momentum: state.momentum ?? 0, wd: state.wd ?? 0 },
    batch: state.batch,
    epochs: state.epochs,
    seed: state.seed,
    reg,
    regRate: reg === 'none' ? 0 : state.regRate ?? 0,
    toy: null,
    mnist: null,
    check: null,
  };
  if (!['sgd', 'adam', 'adamw'].includes(setup.opt.kind)) throw new Error(`export: unknown optimizer "${setup.opt.kind}"`);
  if (mnist) {
    setup.mnist = { train: view.trainCount ?? state.train, test: view.testCount ?? state.mtest };
  } else {
    const { trainX, trainY, testX, testY } = view;
    if (!trainX || !trainY || !testX || !testY) throw new Error('export: the worker has not sent the points yet');
    if (trainX.length !== 2 * trainY.length || testX.length !== 2 * testY.length) throw new Error('export: the points and labels differ in number');
    setup.toy = { trainX, trainY, testX, testY };
  }
  if (check) {
    const testCount = mnist ? setup.mnist.test : setup.toy.testY.length;
    if (!(check.count >= 1 && check.count <= testCount) || check.values.length !== check.count * outputs) {
      throw new Error(`export: the page's check holds ${check.values.length} values for ${check.count} items of ${outputs} outputs`);
    }
    setup.check = { count: check.count, values: check.values };
  }
  return setup;
}

/** "2 hidden layers", "2 conv + 1 dense hidden layers", "2 conv hidden layers", "a linear model". */
export function modelWords(layers) {
  const conv = layers.filter((l) => l.type === 'conv2d').length;
  const dense = layers.filter((l) => l.type === 'linear').length - 1;
  if (conv + dense === 0) return 'a linear model';
  const plural = conv + dense > 1 ? 's' : '';
  if (conv === 0) return `${dense} hidden layer${plural}`;
  return `${[`${conv} conv`, dense > 0 ? `${dense} dense` : ''].filter(Boolean).join(' + ')} hidden layer${plural}`;
}

/** The optimizer in words, for the programs' headers. */
export function optimizerText(opt) {
  if (opt.kind === 'sgd') return `SGD (lr ${opt.lr}, momentum ${opt.momentum}, weight decay ${opt.wd})`;
  return `${opt.kind === 'adam' ? 'Adam' : 'AdamW'} (lr ${opt.lr}, betas 0.9/0.999, eps 1e-8, weight decay ${opt.wd}${opt.kind === 'adamw' ? ', decoupled' : ''})`;
}

/** The loss in words (with the regularisation term). */
export function lossText(setup) {
  const data = setup.task === 'regression' ? 'mean squared error' : 'cross-entropy (mean over the batch)';
  if (setup.reg === 'none' || setup.regRate === 0) return data;
  const pen = setup.reg === 'l1' ? '|w|' : '½·w²';
  return `${data} + ${setup.regRate} · Σ ${pen} over the weights (not biases) of the linear and conv layers`;
}

/** The weights file of a set-up ("kiln_xor.safetensors"). */
export const weightsFile = (setup) => `${setup.name}.safetensors`;

/**
 * The "how to run it" lines every exported program shows: `run` is the command that starts
 * it (`python3 net.py`, `node net.mjs`, `./net`), `save` the --save example with its note,
 * `mnistNote` what the MNIST files may be (plain or .gz).
 */
export function usageLines(setup, run, { save, mnistNote = 'plain or .gz' }) {
  const weights = weightsFile(setup);
  return [
    `  ${run}                      # train from scratch with the page's set-up`,
    `  ${run} --weights ${weights}   # the page's trained weights: evaluate, compare`,
    `  ${run} --weights ${weights} --epochs 10   # ... and train on`,
    `  ${run} --save ${save}`,
    ...(setup.mnist ? [`  ${run} --mnist-dir DIR      # where the MNIST IDX files are (${mnistNote})`] : []),
  ];
}

/** The common header lines of every exported program (without comment markers). */
export function headerLines(setup, tool) {
  const lines = [
    `${setup.title}: exported from the Kiln playground as ${tool}.`,
    '',
    `Model:      ${describeLayers(setup.layers)}`,
    `Inputs:     ${setup.data === 'mnist' ? '784 pixels of a 28×28 digit, normalised with mean 0.1307 and std 0.3081' : setup.features.map((f) => FEATURE_FORMULAS[f]).join(', ')}`,
    `Loss:       ${lossText(setup)}`,
    `Optimizer:  ${optimizerText(setup.opt)}`,
    `Training:   ${setup.epochs} epoch${setup.epochs === 1 ? '' : 's'}, batches of ${setup.batch}, seed ${setup.seed}; each epoch visits the items in the page's order`,
  ];
  if (setup.toy) lines.push(`Data:       the page's ${setup.toy.trainY.length} training and ${setup.toy.testY.length} test points, exactly`);
  else lines.push(`Data:       the first ${setup.mnist.train} training and ${setup.mnist.test} test images of the MNIST IDX files`);
  if (setup.link) lines.push(`Set-up:     #${setup.link}`);
  return lines;
}

/** "linear 2→8, tanh, linear 8→8, tanh, linear 8→2" */
export function describeLayers(layers) {
  return layers
    .map((l) => {
      if (l.type === 'linear') return `linear ${l.dInput}→${l.dOutput}`;
      if (l.type === 'conv2d') return `conv2d ${l.channels[0]}→${l.channels[1]} ${l.kernelSize[0]}×${l.kernelSize[1]} ${l.padding ?? 'valid'}`;
      if (l.type === 'dropout') return `dropout ${l.prob}`;
      if (l.type === 'reshape') return `reshape [${l.shape.join(', ')}]`;
      if (l.type === 'maxPool2d' || l.type === 'avgPool2d') return `${l.type} 2×2`;
      return l.type;
    })
    .join(', ');
}
