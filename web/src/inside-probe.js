// "Look inside", the worker's half: what the views of inside.js show, computed by the engine
// (engine.js: Session.layerOutputs = kiln-dl's Sequential.forwardAll, Session.parameters,
// Session.saliency). This file only picks and reshapes the engine's numbers (which layer is
// a neuron's output, which units are shown, histograms of the weights): no forward pass.
//
//   toy:   toyProbe   -> every hidden neuron's value over a grid of the plane, and the weights
//   MNIST: weightProbe -> conv filters and weight histograms per layer (after evaluations)
//          inspectProbe -> every layer's activations and the saliency of one drawn digit
import { featureNames, FEATURE_LABELS } from './features.js';

/** Units shown per layer of the network graph (TensorFlow Playground shows at most 8). */
export const MAX_SHOWN = 12;

/** Grid of each neuron's heat map: INSIDE_GRID² points over the plane of the boundary. */
export const INSIDE_GRID = 24;

/** Units of a dense layer on the image whose weights are shown as 28 x 28 images. */
export const MAX_TEMPLATES = 16;

/** Bins of a weight histogram. */
export const HIST_BINS = 24;


const PARAM_TYPES = new Set(['linear', 'conv2d']);
const PASS_TYPES = new Set(['dropout', 'flatten', 'reshape']);

/**
 * The blocks of a kiln.nn.sequential spec: each linear or conv2d layer with the layers after
 * it up to the next one (activation, pooling, dropout, ...).
 * @param {{type: string}[]} layers the spec's layers
 * @returns {{param: number, type: string, act: string, out: number, last: number}[]}
 *   param: index of the linear/conv2d layer (its parameters are "<param>.weight/bias");
 *   act: the activation after it ('linear' if none); out: the layer whose output is the
 *   block's neurons (the activation's, else the layer's own); last: the block's last layer.
 */
export function blocksOf(layers) {
  const blocks = [];
  layers.forEach((l, i) => {
    if (PARAM_TYPES.has(l.type)) {
      blocks.push({ param: i, type: l.type, act: 'linear', out: i, last: i });
      return;
    }
    const b = blocks[blocks.length - 1];
    if (!b) return;
    b.last = i;
    if (b.out === b.param && !PASS_TYPES.has(l.type) && !/pool/i.test(l.type)) {
      b.act = l.type;
      b.out = i;
    }
  });
  return blocks;
}

/** The input names of a toy set-up with k inputs (its features, in the model's order). */
export function inputNames(state, k) {
  let chosen;
  try {
    chosen = featureNames({ data: state?.data ?? 'xor', features: state?.features });
  } catch {
    chosen = [];
  }
  if (chosen.length === k) return chosen.map((f) => FEATURE_LABELS[f]);
  return Array.from({ length: k }, (_, j) => `input ${j + 1}`);
}

/** Column j of a row-major [n, k] matrix, as a new Float32Array [n]. */
function column(data, n, k, j) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = data[i * k + j];
  return out;
}

/**
 * The network graph's numbers for a toy model: each neuron's value over the grid (the
 * output of its block's activation, from forwardAll in evaluation mode), the weights and
 * biases between the units shown (at most MAX_SHOWN per layer).
 * @param {import('./engine.js').Session} session
 * @param {{type: string}[]} layers the spec's layers
 * @param {Float32Array} gridInput the model's input for the grid points [size², k]
 * @param {number} size the grid's side
 * @param {string[]} names the k input names
 * @returns {{size: number, inputs: {name: string, values: Float32Array}[], layers: object[]}}
 *   layers[b]: {param, act, units, shown, values [shown * size²] (unit-major), weight
 *   [shown, shownBefore] row-major, bias [shown], dInput}
 */
export function toyProbe(session, layers, gridInput, size, names) {
  const n = size * size;
  const k = gridInput.length / n;
  const outs = session.layerOutputs(gridInput, n);
  const blocks = blocksOf(layers).filter((b) => b.type === 'linear');
  const params = session.parameters((key) => blocks.some((b) => key === `${b.param}.weight` || key === `${b.param}.bias`));
  const inputs = [];
  for (let j = 0; j < Math.min(k, MAX_SHOWN); j++) inputs.push({ name: names[j], values: column(gridInput, n, k, j) });
  let before = inputs.length;
  const out = [];
  for (const b of blocks) {
    const o = outs[b.out];
    const units = o.shape[1];
    const shown = Math.min(units, MAX_SHOWN);
    const values = new Float32Array(shown * n);
    for (let u = 0; u < shown; u++) for (let p = 0; p < n; p++) values[u * n + p] = o.data[p * units + u];
    const w = params[`${b.param}.weight`];
    const dIn = w.shape[1];
    const weight = new Float32Array(shown * before);
    for (let u = 0; u < shown; u++) for (let j = 0; j < before; j++) weight[u * before + j] = w.data[u * dIn + j];
    const bias = params[`${b.param}.bias`]?.data.slice(0, shown) ?? new Float32Array(shown);
    out.push({ param: b.param, act: b.act, units, shown, values, weight, bias, dInput: dIn });
    before = shown;
  }
  return { size, inputs, layers: out };
}

/**
 * A histogram of values over [min, max] in `bins` equal bins (the last one closed).
 * @param {Float32Array} data
 * @returns {{min: number, max: number, counts: Int32Array, mean: number, std: number}}
 */
export function histogram(data, bins = HIST_BINS) {
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (const v of data) {
    if (v < min) min = v;
    if (v > max) max = v;
    sum += v;
  }
  const counts = new Int32Array(bins);
  const n = data.length;
  if (n === 0) return { min: 0, max: 0, counts, mean: 0, std: 0 };
  const mean = sum / n;
  let sq = 0;
  for (const v of data) sq += (v - mean) ** 2;
  const width = max - min;
  for (const v of data) {
    const b = width > 0 ? Math.min(bins - 1, Math.floor(((v - min) / width) * bins)) : Math.floor(bins / 2);
    counts[b]++;
  }
  return { min, max, counts, mean, std: Math.sqrt(sq / n) };
}

/**
 * The weights of an MNIST model as the views show them: per linear/conv2d layer its
 * weight histogram, each convolution's filters ([out, in, k, k]) and, for a dense layer on
 * the 784 pixels, its first MAX_TEMPLATES units' weights ([units, 784]).
 * @returns {{layers: {param: number, type: string, shape: number[], hist: object, biasHist: object | null, filters?: Float32Array, templates?: Float32Array}[]}}
 */
export function weightProbe(session, layers) {
  const blocks = blocksOf(layers);
  const params = session.parameters(() => true);
  return {
    layers: blocks.map((b) => {
      const w = params[`${b.param}.weight`];
      const bias = params[`${b.param}.bias`];
      const entry = { param: b.param, type: b.type, shape: w.shape, hist: histogram(w.data), biasHist: bias ? histogram(bias.data) : null };
      if (b.type === 'conv2d') entry.filters = w.data;
      // A dense layer reading the 28 x 28 image: its first units' weights are images too.
      if (b.type === 'linear' && w.shape[1] === 784) entry.templates = w.data.slice(0, Math.min(w.shape[0], MAX_TEMPLATES) * 784);
      return entry;
    }),
  };
}

/**
 * Every layer's activations for one item and the saliency of its predicted class.
 * @param {Float32Array} x [itemSize] the normalised item
 * @returns {{outputs: {index: number, type: string, shape: number[], data: Float32Array}[], saliency: {predicted: number, map: Float32Array}}}
 */
export function inspectProbe(session, layers, x) {
  const outs = session.layerOutputs(x, 1);
  const sal = session.saliency(x);
  return {
    outputs: outs.map((o, i) => ({ index: i, type: layers[i].type, shape: o.shape, data: o.data })),
    saliency: { predicted: sal.predicted, map: sal.map },
  };
}
