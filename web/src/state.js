// The playground's whole set-up as one plain object, and its round trip through the URL
// fragment (`#data=xor&layers=d8-tanh,d8-tanh&opt=adam&lr=0.01...`), so that a link
// reproduces the set-up. Pure JS (no DOM), unit-tested in tests/js/playground.
//
// `weights=idb:<name>` (optional, last) starts the model from the SafeTensors weights stored
// in this browser's IndexedDB under <name> (kiln.io.saveToIndexedDB; the tutorial's Step 13
// links here with it) instead of random ones.
//
// TF Playground's settings (issue 18):
//   features=x1,x2,x1sq   the toy model's inputs (features.js; in FEATURES order)
//   reg=l1|l2|none&regRate=0.003   L1 / L2 penalty on the weights (not biases) with its rate
//   discretize=1, showTest=1       view options (written only when on)
//   dataSeed=<int>                 the points' own seed (the Regenerate button); absent: seed
//   noise=0..50                    integer percent, TF Playground's scale (datasets.js); a
//                                  fraction 0 < v <= 0.5 (the old scale) is read as v·100 %
//   data=plane|mgauss              regression (MSE, 1 output); data=csv: uploaded points,
//                                  which a link cannot carry (the page asks for the file)
//
// Layers are written one token each, comma-separated:
//   dense: d<units>-<activation>[-<dropout>]              e.g. d128-relu, d64-tanh-0.2
//   conv:  c<filters>-<kernel>-<activation>-<pool>[-same] e.g. c8-3-relu-max, c16-5-gelu-none-same
import { TOY_KINDS, TOY_LIMITS, REGRESS_KINDS } from './datasets.js';
import { DEFAULT_FEATURES, orderFeatures } from './features.js';
import { ACTIVATIONS, POOLS, DEFAULT_TOY_LAYERS, DEFAULT_MNIST_LAYERS, cloneLayers } from './modelspec.js';
import { readParams } from './urlparams.js';

export const DATA_KINDS = [...TOY_KINDS, 'csv', 'mnist'];
export const OPTIMIZERS = ['sgd', 'adam', 'adamw'];
export const OPTIMIZER_NAMES = { sgd: 'SGD (momentum)', adam: 'Adam', adamw: 'AdamW' };

export const isToy = (data) => data !== 'mnist';

/**
 * The task of a data kind: 'regression' for TF Playground's Plane and Multi Gaussian
 * (1 output, MSE loss, targets in about [-1, 1]), else 'classification' (cross-entropy).
 * @param {string} data
 * @returns {'classification' | 'regression'}
 */
export const taskOf = (data) => (REGRESS_KINDS.includes(data) ? 'regression' : 'classification');

/** Regularisation kinds: none, L1 (penalty |w|) or L2 (penalty ½w²), on weights only. */
export const REGS = ['none', 'l1', 'l2'];
export const REG_NAMES = { none: 'None', l1: 'L1', l2: 'L2' };

/** TF Playground's regularisation rates (the page's choices; a link may give any 0 .. 10). */
export const REG_RATES = [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10];

/** The seed of a set-up's points: `dataSeed` once regenerated, else `seed`. */
export const dataSeedOf = (state) => state.dataSeed ?? state.seed;

/** The largest data seed a link may give (as `seed`). */
const MAX_SEED = 2 ** 31 - 1;

/**
 * What the model of a set-up reads and predicts: input size (the chosen features for the
 * toy sets, 784 for MNIST), output size and task.
 * @param {object} state
 * @param {{csvClasses?: number}} [extra] the number of classes of the uploaded CSV
 * @returns {{features: number, classes: number, task: 'classification' | 'regression', image?: number[]}}
 */
export function modelInput(state, extra = {}) {
  if (!isToy(state.data)) return { features: 784, classes: 10, task: 'classification', image: [1, 28, 28] };
  const features = orderFeatures(state.features ?? DEFAULT_FEATURES).length;
  const task = taskOf(state.data);
  if (task === 'regression') return { features, classes: 1, task };
  const classes = state.data === 'gauss' ? state.classes : state.data === 'csv' ? (extra.csvClasses ?? 2) : 2;
  return { features, classes, task };
}

/** The training defaults that differ between the toy sets and MNIST. */
const TRAIN_DEFAULTS = {
  toy: { lr: 0.01, batch: 16, epochs: 200 },
  mnist: { lr: 0.001, batch: 64, epochs: 1 },
};

/**
 * The default set-up for a data set: the default MLP and training settings of its kind
 * (toy or MNIST).
 */
export function defaultState(data = 'xor') {
  const toy = isToy(data);
  return {
    data,
    points: 400,
    noise: 0,
    test: 0.25,
    classes: 2,
    train: 10000,
    mtest: 10000,
    layers: cloneLayers(toy ? DEFAULT_TOY_LAYERS : DEFAULT_MNIST_LAYERS),
    opt: 'adam',
    momentum: 0.9,
    wd: 0,
    seed: 1,
    dataSeed: null, // the points' seed when regenerated; null: `seed`
    features: [...DEFAULT_FEATURES],
    reg: 'none',
    regRate: 0,
    discretize: false,
    showTest: false,
    ...TRAIN_DEFAULTS[toy ? 'toy' : 'mnist'],
    weights: null, // or 'idb:<name>': initial weights from IndexedDB
  };
}

/** The longest IndexedDB entry name a link may name. */
export const MAX_WEIGHTS_NAME = 200;

/**
 * Reads the `weights` setting of a link: `idb:<name>` (the SafeTensors bytes stored in
 * IndexedDB under <name>, database "kiln-dl", store "safetensors").
 * @returns {{source: 'idb', name: string}}
 * @throws {Error} naming what was given and what is expected.
 */
export function parseWeightsRef(text) {
  const m = /^idb:(.+)$/s.exec(String(text ?? ''));
  if (!m) throw new Error(`weights "${text}": expected idb:<name> (weights stored in this browser's IndexedDB)`);
  const name = m[1];
  if (name.length > MAX_WEIGHTS_NAME) throw new Error(`weights: the name is ${name.length} characters long, at most ${MAX_WEIGHTS_NAME}`);
  if (name.trim() !== name || /[\u0000-\u001f]/.test(name)) throw new Error(`weights "${text}": the name may not start or end with spaces or hold control characters`);
  return { source: 'idb', name };
}

/** The part of a set-up that decides the model's parameters: the data kind and the layers. */
export function modelKey(state) {
  const data = state.data === 'gauss' ? `gauss${state.classes}` : state.data;
  const feats = isToy(state.data) ? `|${(state.features ?? DEFAULT_FEATURES).join(',')}` : '';
  return `${data}${feats}|${state.layers.map(encodeLayer).join(',')}`;
}

/**
 * The number fields: URL key, state key, range, integer or not, and which data kind uses it.
 * `step` (the sliders' fields): the page's slider has exactly this min, max and step, and a
 * link's value off the step is moved to the nearest step (with a warning), so every value a
 * link may set is one the slider can show.
 * @type {{key: string, min: number, max: number, int: boolean, step?: number, only?: 'toy' | 'mnist', label: string}[]}
 */
export const NUMBER_FIELDS = [
  { key: 'points', label: 'number of points', min: TOY_LIMITS.minPoints, max: TOY_LIMITS.maxPoints, int: true, step: 10, only: 'toy' },
  { key: 'noise', label: 'noise (percent)', min: 0, max: TOY_LIMITS.maxNoise, int: true, step: 1, only: 'toy' },
  { key: 'test', label: 'test fraction', min: 0.05, max: 0.95, int: false, step: 0.01, only: 'toy' },
  { key: 'classes', label: 'classes', min: TOY_LIMITS.minClasses, max: TOY_LIMITS.maxClasses, int: true, only: 'toy' },
  { key: 'train', label: 'training images', min: 100, max: 60000, int: true, only: 'mnist' },
  { key: 'mtest', label: 'test images', min: 100, max: 10000, int: true, only: 'mnist' },
  { key: 'lr', label: 'learning rate', min: 1e-6, max: 10, int: false },
  { key: 'momentum', label: 'momentum', min: 0, max: 0.999, int: false },
  { key: 'batch', label: 'batch size', min: 1, max: 4096, int: true },
  { key: 'epochs', label: 'epochs', min: 1, max: 10000, int: true },
  { key: 'wd', label: 'weight decay', min: 0, max: 1, int: false },
  { key: 'regRate', label: 'regularization rate', min: 0, max: 10, int: false },
  { key: 'seed', label: 'seed', min: 0, max: 2 ** 31 - 1, int: true },
];

/** Writes one layer as its URL token. */
export function encodeLayer(l) {
  if (l.kind === 'dense') {
    return `d${l.units}-${l.act}${l.dropout > 0 ? `-${l.dropout}` : ''}`;
  }
  return `c${l.filters}-${l.kernel}-${l.act}-${l.pool}${l.padding === 'same' ? '-same' : ''}`;
}

/**
 * Reads one layer token. Throws an Error naming the token and what was expected; does not
 * check ranges (describeModel does, with the layer's position).
 */
export function decodeLayer(token) {
  const bad = (why) => new Error(`layer "${token}": ${why}`);
  const parts = token.split('-');
  const head = parts[0];
  const num = (s, what) => {
    if (!/^\d+(\.\d+)?$/.test(s ?? '')) throw bad(`${what} must be a number, got ${JSON.stringify(s ?? '')}`);
    return Number(s);
  };
  if (head[0] === 'd') {
    if (parts.length < 2 || parts.length > 3) throw bad('expected d<units>-<activation>[-<dropout>], e.g. d64-relu');
    const units = num(head.slice(1), 'units');
    const act = parts[1];
    if (!ACTIVATIONS.includes(act)) throw bad(`unknown activation "${act}" (expected one of ${ACTIVATIONS.join(', ')})`);
    const dropout = parts.length === 3 ? num(parts[2], 'dropout') : 0;
    return { kind: 'dense', units, act, dropout };
  }
  if (head[0] === 'c') {
    if (parts.length < 4 || parts.length > 5) throw bad('expected c<filters>-<kernel>-<activation>-<pool>[-same], e.g. c8-3-relu-max');
    const filters = num(head.slice(1), 'filters');
    const kernel = num(parts[1], 'kernel size');
    const act = parts[2];
    if (!ACTIVATIONS.includes(act)) throw bad(`unknown activation "${act}" (expected one of ${ACTIVATIONS.join(', ')})`);
    const pool = parts[3];
    if (!POOLS.includes(pool)) throw bad(`unknown pooling "${pool}" (expected one of ${POOLS.join(', ')})`);
    if (parts.length === 5 && parts[4] !== 'same') throw bad(`the optional last part must be "same", got "${parts[4]}"`);
    return { kind: 'conv', filters, kernel, act, pool, padding: parts.length === 5 ? 'same' : 'valid' };
  }
  throw bad('expected a dense layer (d...) or a conv layer (c...)');
}

/** Formats a number for the URL without float noise (0.1 stays "0.1", 1e-3 -> "0.001"). */
function fmtNum(v) {
  return String(Number(v.toPrecision(6)));
}

/**
 * The URL fragment (without '#') for a set-up: every setting that applies to its data
 * kind, so the link does not depend on the defaults of a later version.
 */
export function encodeState(state) {
  const toy = isToy(state.data);
  const parts = [`data=${state.data}`];
  const num = (f) => parts.push(`${f.key}=${fmtNum(state[f.key])}`);
  for (const f of NUMBER_FIELDS) {
    if (!f.only || (f.only === 'toy') !== toy) continue;
    if (f.key === 'classes' && state.data !== 'gauss') continue;
    if ((f.key === 'points' || f.key === 'noise') && state.data === 'csv') continue;
    num(f);
  }
  if (toy) {
    parts.push(`features=${orderFeatures(state.features ?? DEFAULT_FEATURES).join(',')}`);
    if (state.dataSeed !== null && state.dataSeed !== undefined && state.data !== 'csv') parts.push(`dataSeed=${state.dataSeed}`);
  }
  parts.push(`layers=${state.layers.map(encodeLayer).join(',')}`, `opt=${state.opt}`);
  for (const f of NUMBER_FIELDS) {
    if (f.only) continue;
    if (f.key === 'momentum' && state.opt !== 'sgd') continue;
    if (f.key === 'regRate') continue;
    num(f);
  }
  // No regularisation (the only meaning of links before it existed) is written as nothing.
  const reg = state.reg ?? 'none';
  if (reg !== 'none') parts.push(`reg=${reg}`, `regRate=${fmtNum(state.regRate ?? 0)}`);
  if (toy && state.discretize) parts.push('discretize=1');
  if (toy && state.showTest) parts.push('showTest=1');
  if (state.weights) parts.push(`weights=idb:${encodeURIComponent(parseWeightsRef(state.weights).name)}`);
  return parts.join('&');
}

/**
 * Reads a set-up from a URL fragment (with or without '#'; also accepts '?query' form).
 * Never throws: a missing setting takes the default of the data kind, a bad one is
 * replaced by the default and reported in `warnings` (messages for the page), an unknown
 * key is reported and ignored; a part that is not valid percent-encoding is reported with
 * its raw text (urlparams.js). `fields` holds the warnings about number fields by key, for
 * the page to show beside the field as well.
 * @returns {{state: object, warnings: string[], fields: Object<string, string>}}
 */
export function decodeState(fragment) {
  const warnings = [];
  const fields = {}; // key -> the warning about that field (shown beside it)
  const text = String(fragment ?? '').replace(/^[#?]/, '');
  const params = readParams(text);
  warnings.push(...params.problems);
  let data = params.get('data') ?? 'xor';
  if (!DATA_KINDS.includes(data)) {
    warnings.push(`Unknown data set "${data}" in the link (expected one of ${DATA_KINDS.join(', ')}); using XOR`);
    data = 'xor';
  }
  const state = defaultState(data);
  const known = new Set(['data', 'layers', 'opt', 'weights', 'features', 'reg', 'discretize', 'showTest', 'dataSeed', ...NUMBER_FIELDS.map((f) => f.key)]);
  for (const key of params.keys()) {
    if (!known.has(key)) warnings.push(`Unknown setting "${key}" in the link was ignored`);
  }
  for (const f of NUMBER_FIELDS) {
    const raw = params.get(f.key);
    if (raw === null) continue;
    let v = raw.trim() === '' ? NaN : Number(raw);
    if (f.key === 'noise' && v > 0 && v <= 0.5 && !Number.isInteger(v)) {
      // Links from before issue 18 gave noise as a fraction 0 .. 0.5 (now percent 0 .. 50).
      const pctNoise = Math.round(v * 100);
      warnings.push(`Noise "${raw}" in the link is on the old 0 to 0.5 scale: read as ${pctNoise} % (noise is now a percentage, 0 to 50, as in TensorFlow Playground)`);
      v = pctNoise;
    }
    if (!Number.isFinite(v) || (f.int && !Number.isInteger(v)) || v < f.min || v > f.max) {
      fields[f.key] = `Bad ${f.label} "${raw}" in the link (expected ${f.int ? 'an integer' : 'a number'} from ${f.min} to ${f.max}); using ${state[f.key]}`;
      warnings.push(fields[f.key]);
      continue;
    }
    const snapped = snapToStep(v, f);
    if (snapped !== v) {
      fields[f.key] = `The ${f.label} ${raw} in the link is not on the slider's steps of ${f.step} from ${f.min}; using ${snapped}`;
      warnings.push(fields[f.key]);
    }
    state[f.key] = snapped;
  }
  const opt = params.get('opt');
  if (opt !== null) {
    if (OPTIMIZERS.includes(opt)) state.opt = opt;
    else warnings.push(`Unknown optimizer "${opt}" in the link (expected one of ${OPTIMIZERS.join(', ')}); using ${state.opt}`);
  }
  const layers = params.get('layers');
  if (layers !== null) {
    try {
      state.layers = layers === '' ? [] : layers.split(',').map(decodeLayer);
    } catch (e) {
      warnings.push(`Bad model in the link: ${e.message}; using the default model`);
    }
  }
  const features = params.get('features');
  if (features !== null) {
    try {
      state.features = orderFeatures(features === '' ? [] : features.split(','));
    } catch (e) {
      warnings.push(`Bad features "${features}" in the link: ${e.message}; using ${state.features.join(',')}`);
    }
  }
  const reg = params.get('reg');
  if (reg !== null) {
    if (REGS.includes(reg)) state.reg = reg;
    else warnings.push(`Unknown regularization "${reg}" in the link (expected one of ${REGS.join(', ')}); using ${state.reg}`);
  }
  for (const key of ['discretize', 'showTest']) {
    const raw = params.get(key);
    if (raw === null) continue;
    if (['1', 'true'].includes(raw)) state[key] = true;
    else if (['0', 'false'].includes(raw)) state[key] = false;
    else warnings.push(`Bad ${key} "${raw}" in the link (expected 1 or 0); using ${state[key] ? 1 : 0}`);
  }
  const dataSeed = params.get('dataSeed');
  if (dataSeed !== null) {
    const v = dataSeed.trim() === '' ? NaN : Number(dataSeed);
    if (Number.isInteger(v) && v >= 0 && v <= MAX_SEED) state.dataSeed = v;
    else warnings.push(`Bad data seed "${dataSeed}" in the link (expected an integer from 0 to ${MAX_SEED}); the points use the seed`);
  }
  const weights = params.get('weights');
  if (weights !== null) {
    try {
      state.weights = `idb:${parseWeightsRef(weights).name}`;
    } catch (e) {
      warnings.push(`Bad weights in the link: ${e.message}; the model starts from random weights`);
    }
  }
  return { state, warnings, fields };
}

/** A value moved to the nearest step of its field (`min + k·step`; unchanged without a step). */
export function snapToStep(v, f) {
  if (!f.step) return v;
  const k = Math.round((v - f.min) / f.step);
  const snapped = Math.min(f.max, Number((f.min + k * f.step).toPrecision(12)));
  return Math.abs(snapped - v) < 1e-9 ? v : snapped;
}

/** Deep equality of two set-ups (for "has anything changed"). */
export function sameState(a, b) {
  return encodeState(a) === encodeState(b);
}
