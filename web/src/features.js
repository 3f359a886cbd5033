// The toy sets' input features, as TensorFlow Playground's: the model's input vector holds
// the chosen features of each point (x1, x2) in FEATURES order (not the order they were
// clicked). Pure JS (no DOM): used by the worker, the page, the exporters and the tests.
//
//   x1 = x1, x2 = x2, x1sq = x1², x2sq = x2², x1x2 = x1·x2, sinx1 = sin(x1), sinx2 = sin(x2)
//
// The points live in [-1, 1]² (TF Playground's [-6, 6]² scaled by 1/6) and the features are
// computed on these coordinates, as written above.

/** Every feature, in the order the model's input vector holds the chosen ones. */
export const FEATURES = ['x1', 'x2', 'x1sq', 'x2sq', 'x1x2', 'sinx1', 'sinx2'];

/** The default features: the two coordinates. */
export const DEFAULT_FEATURES = ['x1', 'x2'];

/** Names for the page (TF Playground's). */
export const FEATURE_LABELS = {
  x1: 'X₁',
  x2: 'X₂',
  x1sq: 'X₁²',
  x2sq: 'X₂²',
  x1x2: 'X₁X₂',
  sinx1: 'sin(X₁)',
  sinx2: 'sin(X₂)',
};

/** Plain-text formulas (for screen readers, exported code comments). */
export const FEATURE_FORMULAS = {
  x1: 'x1',
  x2: 'x2',
  x1sq: 'x1^2',
  x2sq: 'x2^2',
  x1x2: 'x1*x2',
  sinx1: 'sin(x1)',
  sinx2: 'sin(x2)',
};

/** Each feature of one point. */
const FN = {
  x1: (a) => a,
  x2: (a, b) => b,
  x1sq: (a) => a * a,
  x2sq: (a, b) => b * b,
  x1x2: (a, b) => a * b,
  sinx1: (a) => Math.sin(a),
  sinx2: (a, b) => Math.sin(b),
};

/**
 * Puts a feature list in FEATURES order without duplicates.
 * @param {string[]} features
 * @returns {string[]}
 * @throws {RangeError} naming an unknown feature, or if the list is empty.
 */
export function orderFeatures(features) {
  const set = new Set(features);
  for (const f of set) {
    if (!FEATURES.includes(f)) throw new RangeError(`unknown feature "${f}" (expected some of ${FEATURES.join(', ')})`);
  }
  if (set.size === 0) throw new RangeError('choose at least one input feature');
  return FEATURES.filter((f) => set.has(f));
}

/**
 * The features the model of a set-up reads, in input order: the chosen ones for the toy
 * sets (and uploaded CSV points), none for MNIST (its input is the image).
 * @param {{data: string, features?: string[]}} state
 * @returns {string[]} feature keys, e.g. ['x1', 'x2', 'x1sq']
 */
export function featureNames(state) {
  if (state.data === 'mnist') return [];
  return orderFeatures(state.features ?? DEFAULT_FEATURES);
}

/**
 * The model's input vectors for points.
 * @param {Float32Array | number[]} points [n * 2] row-major (x1, x2) pairs
 * @param {string[]} features feature keys (put in FEATURES order here)
 * @returns {Float32Array} [n * k] row-major, k = features.length, columns in FEATURES order
 */
export function applyFeatures(points, features) {
  const keys = orderFeatures(features);
  const fns = keys.map((k) => FN[k]);
  const k = keys.length;
  const n = Math.floor(points.length / 2);
  const out = new Float32Array(n * k);
  for (let i = 0; i < n; i++) {
    const a = points[2 * i];
    const b = points[2 * i + 1];
    for (let j = 0; j < k; j++) out[i * k + j] = fns[j](a, b);
  }
  return out;
}
