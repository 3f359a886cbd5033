// Finite-difference gradient checks for the JS tests (tests/js/nn_*.test.mjs): the gradient
// backward() gives for d sum(f(x...) · r) / d x_k against central differences
// (f(x + h·e_j) - f(x - h·e_j)) / 2h, element by element, in float32 (hence h = 1e-2 and a
// tolerance of a few 1e-3 relative to the gradient's scale). Inputs are deterministic
// pseudo-random values in [-1, 1), distinct, so that max and abs have no ties or kinks.
import { expect } from 'vitest';

/** n deterministic pseudo-random numbers in [-1, 1) (an LCG seeded by `seed`). */
export function pseudoRandom(n, seed = 1) {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}

/**
 * Checks backward's gradients of sum(f(...inputs) · r) for every float input (not in
 * options.skip). inputs: shapes (random values) or {shape, data}.
 */
export function fdCheck(kiln, f, inputs, { skip = [], h = 1e-2, tol = 5e-3, seed = 7 } = {}) {
  const data = inputs.map((v, k) => (Array.isArray(v)
    ? { shape: v, data: pseudoRandom(v.reduce((a, b) => a * b, 1), seed + 17 * k) }
    : { shape: v.shape, data: Float32Array.from(v.data), dtype: v.dtype }));
  const make = (d) => kiln.Tensor.fromData(d.dtype === 'int32' ? Int32Array.from(d.data) : d.data, { shape: d.shape, dtype: d.dtype ?? 'float32' });
  let r;
  let analytic;
  kiln.tidy(() => {
    const ts = data.map((d, k) => (d.dtype === 'int32' || skip.includes(k) ? make(d) : make(d).requireGrad()));
    const out = f(...ts);
    r = pseudoRandom(out.shape.reduce((a, b) => a * b, 1), seed + 5);
    const R = kiln.Tensor.fromData(r, { shape: out.shape });
    const grads = out.mul(R).sum().backward();
    analytic = ts.map((t, k) => (data[k].dtype === 'int32' || skip.includes(k) ? null : t.grad(grads)?.dataSync() ?? new Float32Array(data[k].data.length)));
  });
  const objective = () => kiln.noGrad(() => kiln.tidy(() => {
    const out = f(...data.map(make));
    const R = kiln.Tensor.fromData(r, { shape: out.shape });
    return out.mul(R).sum().dataSync()[0];
  }));
  data.forEach((d, k) => {
    if (analytic[k] === null) return;
    const scale = Math.max(1, ...Array.from(analytic[k], Math.abs));
    for (let j = 0; j < d.data.length; j++) {
      const v = d.data[j];
      d.data[j] = v + h;
      const plus = objective();
      d.data[j] = v - h;
      const minus = objective();
      d.data[j] = v;
      const numeric = (plus - minus) / (2 * h);
      expect(Math.abs(numeric - analytic[k][j]), `input ${k} element ${j}: numeric ${numeric} vs backward ${analytic[k][j]}`)
        .toBeLessThanOrEqual(tol * scale);
    }
  });
}
