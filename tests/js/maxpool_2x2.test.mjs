// max_pool2d's 2×2 / stride 2 fast path (engine/src/cpu/ops/pool_ops.cpp max_pool_plane_2x2:
// four windows at a time in WebAssembly SIMD128, then a scalar tail) against the definition
// computed here in plain JS: each window's maximum in the order (0,0), (0,1), (1,0), (1,1), the
// first maximum wins a tie, a NaN becomes the maximum and a later NaN replaces it (PyTorch's
// max_pool2d); the gradient of sum(out · dy) goes to that element. Widths cover the vector
// body, the tail and both together; values are drawn from a small set so that ties are common.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

/** A deterministic generator (xorshift32) of values from a small set, NaN and ±Infinity included. */
function values(count, seed) {
  const pool = [0, 1, -1, 2, 2, 0.5, -0, NaN, Infinity, -Infinity, 3, 3];
  let s = seed >>> 0 || 1;
  return Array.from({ length: count }, () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return pool[s % pool.length];
  });
}

/** The pooled values and the flat input index of each window's maximum, for [n, c, h, w]. */
function reference(x, [n, c, h, w]) {
  const oh = Math.floor(h / 2), ow = Math.floor(w / 2);
  const out = [], at = [];
  for (let p = 0; p < n * c; p++) {
    for (let i = 0; i < oh; i++) {
      for (let j = 0; j < ow; j++) {
        const idx = [[0, 0], [0, 1], [1, 0], [1, 1]].map(([a, b]) => p * h * w + (2 * i + a) * w + 2 * j + b);
        let best = idx[0];
        for (const k of idx.slice(1)) if (x[k] > x[best] || Number.isNaN(x[k])) best = k;
        out.push(x[best]);
        at.push(best);
      }
    }
  }
  return { out, at, shape: [n, c, oh, ow] };
}

describe('maxPool2d 2×2, stride 2 (the fast path)', () => {
  for (const [shape, seed] of [[[1, 1, 2, 8], 1], [[2, 3, 6, 14], 2], [[1, 2, 5, 11], 3], [[3, 1, 4, 2], 4], [[2, 2, 26, 26], 5]]) {
    it(`${JSON.stringify(shape)}: values, ties, NaN and the gradient's route as the definition`, () => {
      const data = values(shape.reduce((a, b) => a * b, 1), seed);
      const want = reference(data, shape);
      kiln.tidy(() => {
        const x = kiln.Tensor.fromData(Float32Array.from(data), { shape }).requireGrad();
        const y = kiln.nn.functional.maxPool2d(x, { kernelSize: 2, stride: 2 });
        expect(y.shape).toEqual(want.shape);
        const got = Array.from(y.dataSync());
        got.forEach((v, k) => expect(Object.is(v, want.out[k]) || (Number.isNaN(v) && Number.isNaN(want.out[k])), `out[${k}] = ${v}, want ${want.out[k]}`).toBe(true));
        // dy = 1, 2, 3, ...: each window's dy lands on its maximum's input element.
        const dy = Float32Array.from(want.out, (_, k) => k + 1);
        const g = y.mul(kiln.Tensor.fromData(dy, { shape: want.shape })).sum().backward();
        const grad = Array.from(x.grad(g).dataSync());
        const wantGrad = new Array(data.length).fill(0);
        want.at.forEach((i, k) => { wantGrad[i] += k + 1; });
        expect(grad).toEqual(wantGrad);
      });
      expect(kiln.memory().tensors).toBe(0);
    });
  }
});
