// The playground's 2-D toy data sets (pure functions, no DOM: used by the worker and by
// the unit tests). Points live in the square [-1, 1]²; labels are 0 .. numClasses-1.
// Modelled on TensorFlow Playground's sets (their domain [-6, 6] scaled by 1/6), with one
// meaning of noise for all four: each point is moved by Gaussian jitter of standard
// deviation `noise * 0.5` (noise 0.5 -> sd 0.25) and keeps the label of the place it was
// generated at, so noise makes the classes overlap.
import { createRng } from './rng.js';

/** The toy set names, in the order the UI lists them. */
export const TOY_KINDS = ['xor', 'circle', 'spiral', 'gauss'];

/** Human-readable names. */
export const TOY_NAMES = { xor: 'XOR', circle: 'Circle', spiral: 'Two spirals', gauss: 'Gaussian clusters' };

/** Limits checked by generateToy (and by the URL parser). */
export const TOY_LIMITS = { minPoints: 20, maxPoints: 5000, maxNoise: 0.5, minClasses: 2, maxClasses: 5 };

/**
 * Generates a toy set with exactly `n / numClasses` points per class (`n` is rounded down
 * to a multiple of the class count), in a seeded random order.
 * @param {{kind: string, n: number, noise?: number, seed?: number, classes?: number}} opts
 *   kind: 'xor' | 'circle' | 'spiral' | 'gauss'; classes is used by 'gauss' only (2 .. 5;
 *   the other sets have 2 classes).
 * @returns {{x: Float32Array, y: Int32Array, n: number, numClasses: number, itemShape: number[]}}
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
    throw new RangeError(`toy data: noise must be in [0, ${TOY_LIMITS.maxNoise}], got ${noise}`);
  }
  const numClasses = kind === 'gauss' ? classes : 2;
  if (!Number.isInteger(numClasses) || numClasses < TOY_LIMITS.minClasses || numClasses > TOY_LIMITS.maxClasses) {
    throw new RangeError(`toy data: classes must be an integer in [${TOY_LIMITS.minClasses}, ${TOY_LIMITS.maxClasses}], got ${classes}`);
  }
  const perClass = Math.floor(n / numClasses);
  const total = perClass * numClasses;
  const rng = createRng(seed);
  // Jitter from its own stream: the same seed gives the same points and order at any
  // noise level, so moving the noise slider moves the points without reshuffling them.
  const jitter = createRng((seed ^ 0x9e3779b9) >>> 0);
  const u = (a, b) => a + (b - a) * rng.next();
  const pts = [];
  for (let c = 0; c < numClasses; c++) {
    for (let i = 0; i < perClass; i++) {
      let px;
      let py;
      if (kind === 'xor') {
        // Class 1: same signs (quadrants I and III); class 0: opposite signs. A gap of
        // 0.05 either side of the axes (TF Playground's padding 0.3 / 6).
        const sx = rng.next() < 0.5 ? -1 : 1;
        const sy = c === 1 ? sx : -sx;
        px = sx * u(0.05, 0.9);
        py = sy * u(0.05, 0.9);
      } else if (kind === 'circle') {
        // Class 0 inside radius 0.4, class 1 in the ring 0.55 .. 0.85.
        const r = c === 0 ? u(0, 0.4) : u(0.55, 0.85);
        const t = u(0, 2 * Math.PI);
        px = r * Math.cos(t);
        py = r * Math.sin(t);
      } else if (kind === 'spiral') {
        // Two interleaved arms, as TF Playground: r grows with i, angle 1.75 turns.
        const f = i / perClass;
        const r = 0.85 * f;
        const t = 1.75 * f * 2 * Math.PI + c * Math.PI;
        px = r * Math.sin(t);
        py = r * Math.cos(t);
      } else {
        // Clusters with sd 0.12 around centres on a circle of radius 0.5 (diagonal for 2).
        const a = Math.PI / 4 + (2 * Math.PI * c) / numClasses;
        px = 0.5 * Math.cos(a) + 0.12 * rng.normal();
        py = 0.5 * Math.sin(a) + 0.12 * rng.normal();
      }
      if (noise > 0) {
        px += noise * 0.5 * jitter.normal();
        py += noise * 0.5 * jitter.normal();
      }
      pts.push([px, py, c]);
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
  return { x, y, n: total, numClasses, itemShape: [2] };
}

/**
 * Splits a data set into train and test parts, stratified: each class contributes
 * round(count · testFraction) items to the test part (so both parts keep the balance),
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
  const byClass = Array.from({ length: data.numClasses }, () => []);
  for (let i = 0; i < data.n; i++) byClass[data.y[i]].push(i);
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
    const y = new Int32Array(ids.length);
    ids.forEach((src, i) => {
      x.set(data.x.subarray(src * d, src * d + d), i * d);
      y[i] = data.y[src];
    });
    return { x, y, n: ids.length, numClasses: data.numClasses, itemShape: data.itemShape };
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
