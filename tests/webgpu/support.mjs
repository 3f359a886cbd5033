// Input makers for the Wgpu cases (tests/webgpu/cases_*.mjs): deterministic pseudo-random
// data, so a failing case reproduces.

/** `n` values in [lo, hi) from a small LCG seeded with `seed`. */
export function uniform(n, seed = 1, lo = -1, hi = 1) {
  let s = seed >>> 0 || 1;
  const out = [];
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out.push(Math.fround(lo + ((s >>> 8) / 16777216) * (hi - lo)));
  }
  return out;
}

/** `n` integers in [lo, hi). */
export function ints(n, seed = 1, lo = -10, hi = 10) {
  return uniform(n, seed, 0, 1).map((u) => lo + Math.floor(u * (hi - lo)));
}

/** A tensor input: {shape, dtype, data} with uniform (f32) or ints (i32, bool) data. */
export function tensor(shape, dtype = 'f32', seed = 1, lo, hi) {
  const n = shape.reduce((a, b) => a * b, 1);
  if (dtype === 'f32') return { shape, dtype, data: uniform(n, seed, lo ?? -1, hi ?? 1) };
  if (dtype === 'bool') return { shape, dtype, data: ints(n, seed, 0, 2) };
  return { shape, dtype, data: ints(n, seed, lo ?? -10, hi ?? 10) };
}

/** Special f32 values every element-wise op should be tried on. */
export const SPECIAL = [0, -0, 1, -1, 0.5, -2.5, 3.4e38, -3.4e38, 1e-38, Infinity, -Infinity, NaN];
