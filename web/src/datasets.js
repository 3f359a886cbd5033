// The playground's 2-D toy data sets (pure functions, no DOM: used by the worker and by
// the unit tests). Points live in the square [-1, 1]²: TensorFlow Playground's sets
// (src/dataset.ts, domain [-6, 6]) scaled by 1/6, with its meaning of noise, a percentage
// 0 .. 50 (f = noise / 100):
//   xor, circle, plane, mgauss: the point stays where it was drawn and its label is the
//     rule's answer at the point moved by uniform jitter (±5·f for xor and circle, ±6·f for
//     the regression sets, in TF Playground's units), so labels near a boundary flip;
//   spiral: the point moves by uniform jitter ±1·f and keeps its arm's label;
//   gauss: the clusters' variance grows linearly from 0.5 (f = 0) to 4 (f = 0.5).
// Classification sets: labels 0 .. numClasses-1 (Int32Array). Regression sets ('plane',
// 'mgauss'): targets in about [-1, 1] (Float32Array; the plane's corners reach ±1.2, as in
// TF Playground), numClasses 1.
import { createRng } from './rng.js';

/** The classification sets, in the order the UI lists them. */
export const CLASSIFY_KINDS = ['xor', 'circle', 'spiral', 'gauss'];

/** The regression sets (TF Playground's "Plane" and "Multi Gaussian"). */
export const REGRESS_KINDS = ['plane', 'mgauss'];

/** Every generated set, in the order the UI lists them. */
export const TOY_KINDS = [...CLASSIFY_KINDS, ...REGRESS_KINDS];

/** Human-readable names. */
export const TOY_NAMES = {
  xor: 'XOR',
  circle: 'Circle',
  spiral: 'Two spirals',
  gauss: 'Gaussian clusters',
  plane: 'Plane (regression)',
  mgauss: 'Multi-Gaussian (regression)',
  csv: 'Your CSV',
};

/** Limits checked by generateToy (and by the URL parser). Noise is a percentage. */
export const TOY_LIMITS = { minPoints: 20, maxPoints: 5000, maxNoise: 50, minClasses: 2, maxClasses: 5 };

/** TF Playground's units: one unit of theirs is 1/6 of ours. */
const U = 1 / 6;

/** TF Playground's Multi Gaussian: centres (its units) and the sign of each bump. */
const MGAUSS = [
  [-4, 2.5, 1],
  [0, 2.5, -1],
  [4, 2.5, 1],
  [-4, -2.5, -1],
  [0, -2.5, 1],
  [4, -2.5, -1],
];

/** The Multi Gaussian's target at (x, y) in our units: the bump of largest |value|. */
export function mgaussTarget(x, y) {
  let label = 0;
  for (const [cx, cy, sign] of MGAUSS) {
    const d = Math.hypot(x / U - cx, y / U - cy);
    const v = sign * Math.min(1, Math.max(0, 1 - d / 2));
    if (Math.abs(v) > Math.abs(label)) label = v;
  }
  return label;
}

/** The Plane's target at (x, y) in our units: (x + y) over TF Playground's [-10, 10] -> [-1, 1]. */
export const planeTarget = (x, y) => (x + y) / U / 10;

/**
 * Generates a toy set. Classification sets have exactly `n / numClasses` points drawn per
 * class (`n` rounded down to a multiple of the class count; with noise a label can flip,
 * as in TF Playground); regression sets have n points. The points are in a seeded random
 * order; the noise comes from its own random stream, so the same seed gives the same
 * points at any noise level (the noise slider changes labels or jitter, not the draw).
 * @param {{kind: string, n: number, noise?: number, seed?: number, classes?: number}} opts
 *   kind: one of TOY_KINDS; noise: percent 0 .. 50; classes: 'gauss' only (2 .. 5).
 * @returns {{x: Float32Array, y: Int32Array | Float32Array, n: number, numClasses: number, itemShape: number[], task: 'classification' | 'regression'}}
 *   x row-major [n, 2], y [n].
 * @throws {RangeError} for an unknown kind or out-of-range n, noise or classes.
 */
export function generateToy({ kind, n, noise = 0, seed = 0, classes = 2 }) {
  if (!TOY_KINDS.includes(kind)) {
    throw new RangeError(`toy data: unknown set "${kind}" (expected one of ${TOY_KINDS.join(', ')})`);
  }
  if (!Number.isInteger(n) || n < TOY_LIMITS.minPoints || n > TOY_LIMITS.maxPoints) {
    throw new RangeError(`toy data: number of points must be an integer in [${TOY_LIMITS.minPoints}, ${TOY_LIMITS.maxPoints}], got ${n}`);
  }
  if (!(noise >= 0 && noise <= TOY_LIMITS.maxNoise)) {
    throw new RangeError(`toy data: noise must be in [0, ${TOY_LIMITS.maxNoise}] (percent), got ${noise}`);
  }
  const f = noise / 100;
  const rng = createRng(seed);
  const jitter = createRng((seed ^ 0x9e3779b9) >>> 0);
  const u = (a, b) => a + (b - a) * rng.next();
  const ju = (a, b) => a + (b - a) * jitter.next();
  if (REGRESS_KINDS.includes(kind)) {
    const target = kind === 'plane' ? planeTarget : mgaussTarget;
    const x = new Float32Array(n * 2);
    const y = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      const px = u(-1, 1);
      const py = u(-1, 1);
      const nx = ju(-1, 1) * f;
      const ny = ju(-1, 1) * f;
      x[2 * i] = px;
      x[2 * i + 1] = py;
      y[i] = target(px + nx, py + ny);
    }
    return { x, y, n, numClasses: 1, itemShape: [2], task: 'regression' };
  }
  const numClasses = kind === 'gauss' ? classes : 2;
  if (!Number.isInteger(numClasses) || numClasses < TOY_LIMITS.minClasses || numClasses > TOY_LIMITS.maxClasses) {
    throw new RangeError(`toy data: classes must be an integer in [${TOY_LIMITS.minClasses}, ${TOY_LIMITS.maxClasses}], got ${classes}`);
  }
  const perClass = Math.floor(n / numClasses);
  const total = perClass * numClasses;
  const pts = [];
  for (let c = 0; c < numClasses; c++) {
    for (let i = 0; i < perClass; i++) {
      let px;
      let py;
      let label = c;
      if (kind === 'xor') {
        // Class 1: same signs (quadrants I and III); class 0: opposite signs. |x| in
        // 0.05 .. 0.9 (TF Playground's padding 0.3/6 from the axes; it reaches 5.3/6 =
        // 0.883, this set 0.9 as before issue 18); the label is the sign rule at the point
        // moved by ±5·f (of 6).
        const sx = rng.next() < 0.5 ? -1 : 1;
        const sy = c === 1 ? sx : -sx;
        px = sx * u(0.05, 0.9);
        py = sy * u(0.05, 0.9);
        const nx = ju(-5, 5) * f * U;
        const ny = ju(-5, 5) * f * U;
        label = (px + nx) * (py + ny) >= 0 ? 1 : 0;
      } else if (kind === 'circle') {
        // Class 0 inside radius 2.5, class 1 in the ring 3.5 .. 5 (TF Playground's); the
        // label is "inside 2.5" at the point moved by ±5·f.
        const r = c === 0 ? u(0, 2.5) : u(3.5, 5);
        const t = u(0, 2 * Math.PI);
        px = r * Math.sin(t) * U;
        py = r * Math.cos(t) * U;
        const nx = ju(-5, 5) * f * U;
        const ny = ju(-5, 5) * f * U;
        label = Math.hypot(px + nx, py + ny) < 2.5 * U ? 0 : 1;
      } else if (kind === 'spiral') {
        // Two interleaved arms, as TF Playground: r grows to 5 with i, 1.75 turns, each
        // point moved by ±1·f.
        const fr = i / perClass;
        const r = 5 * fr * U;
        const t = 1.75 * fr * 2 * Math.PI + c * Math.PI;
        px = r * Math.sin(t) + ju(-1, 1) * f * U;
        py = r * Math.cos(t) + ju(-1, 1) * f * U;
      } else {
        // Clusters around centres on a circle of radius 0.5 (diagonal for 2), variance
        // 0.5 .. 4 in TF Playground's units as noise goes 0 .. 50 %.
        const sd = Math.sqrt(0.5 + 7 * f) * U;
        const a = Math.PI / 4 + (2 * Math.PI * c) / numClasses;
        px = 0.5 * Math.cos(a) + sd * rng.normal();
        py = 0.5 * Math.sin(a) + sd * rng.normal();
      }
      pts.push([px, py, label]);
    }
  }
  rng.shuffle(pts);
  const x = new Float32Array(total * 2);
  const y = new Int32Array(total);
  pts.forEach(([px, py, c], i) => {
    x[2 * i] = px;
    x[2 * i + 1] = py;
    y[i] = c;
  });
  return { x, y, n: total, numClasses, itemShape: [2], task: 'classification' };
}

/**
 * Splits a data set into train and test parts, stratified: each class contributes
 * round(count · testFraction) items to the test part (so both parts keep the balance;
 * a regression set, `task: 'regression'`, gives round(n · testFraction) of all items),
 * and both parts are in a seeded random order.
 * @param {{x: Float32Array, y: Int32Array, n: number, numClasses: number, itemShape: number[]}} data
 * @param {number} testFraction in (0, 1)
 * @param {number} seed
 * @throws {RangeError} if testFraction is outside (0, 1) or a part would be empty.
 */
export function splitTrainTest(data, testFraction, seed = 0) {
  if (!(testFraction > 0 && testFraction < 1)) {
    throw new RangeError(`split: test fraction must be in (0, 1), got ${testFraction}`);
  }
  const d = data.itemShape.reduce((a, b) => a * b, 1);
  const regression = data.task === 'regression';
  // Regression: one group of all items (no classes to balance).
  const byClass = Array.from({ length: regression ? 1 : data.numClasses }, () => []);
  for (let i = 0; i < data.n; i++) byClass[regression ? 0 : data.y[i]].push(i);
  const train = [];
  const test = [];
  for (const idx of byClass) {
    const k = Math.round(idx.length * testFraction);
    test.push(...idx.slice(0, k));
    train.push(...idx.slice(k));
  }
  if (train.length === 0 || test.length === 0) {
    throw new RangeError(`split: test fraction ${testFraction} of ${data.n} items leaves an empty part`);
  }
  const rng = createRng(seed ^ 0x5eed);
  rng.shuffle(train);
  rng.shuffle(test);
  const take = (ids) => {
    const x = new Float32Array(ids.length * d);
    const y = new data.y.constructor(ids.length);
    ids.forEach((src, i) => {
      x.set(data.x.subarray(src * d, src * d + d), i * d);
      y[i] = data.y[src];
    });
    return { x, y, n: ids.length, numClasses: data.numClasses, itemShape: data.itemShape, task: data.task ?? 'classification' };
  };
  return { train: take(train), test: take(test) };
}

/**
 * A grid of points covering [lo, hi]² for the decision-boundary heat map, row-major from
 * the top-left corner (y = hi) so row r is canvas row r.
 * @returns {Float32Array} [size * size, 2]
 */
export function boundaryGrid(size, lo = -1, hi = 1) {
  const g = new Float32Array(size * size * 2);
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      const i = r * size + c;
      g[2 * i] = lo + ((c + 0.5) * (hi - lo)) / size;
      g[2 * i + 1] = hi - ((r + 0.5) * (hi - lo)) / size;
    }
  }
  return g;
}

/** The heat map's grid: GRID.size² points over [GRID.lo, GRID.hi]² (noisy points reach past ±1). */
export const GRID = { size: 50, lo: -1.25, hi: 1.25 };
