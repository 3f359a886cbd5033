// The relaxed-SIMD build against the SIMD128 build, in one process: the same products,
// an MLP training step and convolutions (forward and both gradients) on each, with the
// float32 error bounds they must meet. Plain ES module without Node imports: run in Node by
// tests/js/relaxed.test.mjs (a child process with --experimental-wasm-relaxed-simd,
// support/relaxed_child.mjs) and in Chromium by tests/e2e/relaxed.e2e.mjs.
//
// Bounds (Higham, "Accuracy and Stability of Numerical Algorithms", §3.1, as in
// engine/src/cpu/gemm/gemm.hpp): a float32 sum of k products, fused or not, is within
// γ(k)·Σ|a·b| of the exact sum, γ(k) = k·u / (1 - k·u), u = 2^-24. So each build is checked
// against a double-precision reference with γ(k + 3) (the +3 covers alpha/beta and the
// conversions), and the two builds differ by at most twice that where no reference is
// computed here (the convolutions: Σ|w·x| is the same convolution of |x| and |w|).

const U = 2 ** -24;
export const gamma = (k) => (k * U) / (1 - k * U);

/**
 * Pseudo-random float32 values in [-1, 1) with full 24-bit significands (an LCG), so that
 * products are not exact in float32 and a fused multiply-add rounds differently from a
 * mul + add (with short significands, e.g. multiples of 1/512, the two agree bit for bit).
 */
export function operand(n, seed) {
  const v = new Float32Array(n);
  let s = (seed * 2654435761) >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    v[i] = s / 2 ** 31 - 1;
  }
  return v;
}

/** GEMM shapes [m, k, n]: a scalar, edge tiles (m % 6, n % 8 != 0), the MNIST layer, k past one KC slab. */
export const GEMM_SHAPES = [[1, 1, 1], [5, 7, 3], [6, 8, 16], [13, 29, 17], [64, 784, 128], [100, 300, 10], [128, 128, 128], [37, 1100, 45]];

/**
 * (module (func (export "m") (param f32 f32 f32) (result f32)
 *   (f32x4.extract_lane 0 (f32x4.relaxed_madd (f32x4.splat a) (f32x4.splat b) (f32x4.splat c)))))
 */
export const MADD_MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
  0x01, 0x08, 0x01, 0x60, 0x03, 0x7d, 0x7d, 0x7d, 0x01, 0x7d,
  0x03, 0x02, 0x01, 0x00,
  0x07, 0x05, 0x01, 0x01, 0x6d, 0x00, 0x00,
  0x0a, 0x16, 0x01, 0x14, 0x00,
  0x20, 0x00, 0xfd, 0x13, 0x20, 0x01, 0xfd, 0x13, 0x20, 0x02, 0xfd, 0x13,
  0xfd, 0x85, 0x02, 0xfd, 0x1f, 0x00, 0x0b,
]);

/**
 * What f32x4.relaxed_madd computes here, from a module of its own: its value for
 * (2, 3, 5) (a·b + c = 11; the prototype's a + b·c would be 17), and whether it is fused:
 * (1 + 2^-12)(1 - 2^-12) - 1 = -2^-24 with one rounding, 0 with two. null where the engine
 * rejects relaxed SIMD.
 */
export function maddSemantics() {
  if (!WebAssembly.validate(MADD_MODULE)) return null;
  const { m } = new WebAssembly.Instance(new WebAssembly.Module(MADD_MODULE)).exports;
  return { value: m(2, 3, 5), fused: m(1 + 2 ** -12, 1 - 2 ** -12, -1) !== 0 };
}

function product(kiln, a, b, m, k, n) {
  return kiln.tidy(() => kiln.Tensor.fromData(a, { shape: [m, k] })
    .matmul(kiln.Tensor.fromData(b, { shape: [k, n] })).dataSync());
}

/** Largest |got - ref| / bound over the entries (0 when all exact); bound 0 needs equality. */
function worstRatio(got, ref, bound) {
  let worst = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i] - ref[i]);
    if (d === 0) continue;
    worst = Math.max(worst, bound[i] === 0 ? Infinity : d / bound[i]);
  }
  return worst;
}

function differing(x, y) {
  let n = 0;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) n++;
  return n;
}

function gemmChecks(relaxed, simd) {
  const rows = [];
  for (const [m, k, n] of GEMM_SHAPES) {
    const a = operand(m * k, m + 2 * k), b = operand(k * n, n + 3 * k);
    const r = product(relaxed, a, b, m, k, n), s = product(simd, a, b, m, k, n);
    const ref = new Float64Array(m * n), bound = new Float64Array(m * n);
    const g = gamma(k + 3);
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let sum = 0, abs = 0;
        for (let p = 0; p < k; p++) {
          const t = a[i * k + p] * b[p * n + j];
          sum += t;
          abs += Math.abs(t);
        }
        ref[i * n + j] = sum;
        bound[i * n + j] = g * abs;
      }
    }
    rows.push({ shape: [m, k, n], relaxed: worstRatio(r, ref, bound), simd: worstRatio(s, ref, bound), differ: differing(r, s), size: m * n });
  }
  return rows;
}

/** One SGD step of a 20 -> 32 (relu) -> 10 MLP on 16 items: losses before and after, and the outputs after. */
function mlpStep(kiln) {
  const model = kiln.nn.sequential({ layers: [
    { type: 'linear', dInput: 20, dOutput: 32 }, { type: 'relu' }, { type: 'linear', dInput: 32, dOutput: 10 },
  ] }, { seed: 5 });
  const optimizer = kiln.optim.sgd({ lr: 0.1 });
  const ce = kiln.loss.crossEntropy();
  const xs = operand(16 * 20, 11);
  const labels = Int32Array.from({ length: 16 }, (_, i) => (i * 7) % 10);
  const result = kiln.tidy(() => {
    const x = kiln.Tensor.fromData(xs, { shape: [16, 20] });
    const y = kiln.Tensor.fromData(labels, { shape: [16], dtype: 'int32' });
    const loss = ce.forward(model.forward(x), y);
    const before = loss.item();
    optimizer.step(model, loss.backward());
    const out = model.forward(x);
    return { before, after: ce.forward(out, y).item(), outputs: Array.from(out.dataSync()) };
  });
  optimizer.dispose();
  model.dispose();
  ce.dispose?.();
  return result;
}

/**
 * conv2d forward and the gradients of sum(g ⊙ y) with respect to x and w, and the same on
 * |x|, |w|, |g| (their entries bound the rounding of each result).
 */
function convPass(kiln, geo, abs) {
  const { n, cin, cout, h, w, k, padding } = geo;
  const ho = h + 2 * padding - k + 1, wo = w + 2 * padding - k + 1;
  const f = (v) => (abs ? v.map(Math.abs) : v);
  const xs = f(operand(n * cin * h * w, 1)), ws = f(operand(cout * cin * k * k, 2)), gs = f(operand(n * cout * ho * wo, 3));
  return kiln.tidy(() => {
    const x = kiln.Tensor.fromData(xs, { shape: [n, cin, h, w] }).requireGrad();
    const wt = kiln.Tensor.fromData(ws, { shape: [cout, cin, k, k] }).requireGrad();
    const g = kiln.Tensor.fromData(gs, { shape: [n, cout, ho, wo] });
    const y = kiln.nn.functional.conv2d(x, wt, null, { padding });
    const grads = y.mul(g).sum().backward();
    const out = { y: y.dataSync(), dx: x.grad(grads).dataSync(), dw: wt.grad(grads).dataSync() };
    grads.dispose?.();
    return out;
  });
}

/** Geometries: few channels, no padding (the direct kernels) and padded (im2col + GEMM). */
export const CONV_GEOMETRIES = [
  { name: 'direct 1->4 3x3', n: 2, cin: 1, cout: 4, h: 12, w: 12, k: 3, padding: 0 },
  { name: 'gemm 8->16 3x3 pad 1', n: 2, cin: 8, cout: 16, h: 10, w: 10, k: 3, padding: 1 },
];

function convChecks(relaxed, simd) {
  const rows = [];
  for (const geo of CONV_GEOMETRIES) {
    const r = convPass(relaxed, geo, false), s = convPass(simd, geo, false), a = convPass(simd, geo, true);
    const ho = geo.h + 2 * geo.padding - geo.k + 1, wo = geo.w + 2 * geo.padding - geo.k + 1;
    const longest = Math.max(geo.cin * geo.k * geo.k, geo.cout * geo.k * geo.k, geo.n * ho * wo);
    const g = 2 * gamma(longest + 3);
    const row = { name: geo.name, worst: 0, differ: 0, size: 0 };
    for (const key of ['y', 'dx', 'dw']) {
      const bound = Float64Array.from(a[key], (v) => g * v * (1 + 4 * U));
      row.worst = Math.max(row.worst, worstRatio(r[key], s[key], bound));
      row.differ += differing(r[key], s[key]);
      row.size += r[key].length;
    }
    rows.push(row);
  }
  return rows;
}

/**
 * Loads the relaxed build (relaxedSimd: true) and the SIMD128 build (relaxedSimd: false)
 * with `init`, runs every check on both and returns a plain-data summary.
 */
export async function compareBuilds(init) {
  // The full engine: the checks include convolutions (the core engine has none).
  const relaxed = await init({ engine: 'full', threads: false, relaxedSimd: true });
  const simd = await init({ engine: 'full', threads: false, relaxedSimd: false });
  const mlp = [mlpStep(relaxed), mlpStep(simd)];
  return {
    madd: maddSemantics(),
    infos: [relaxed.backendInfo(), simd.backendInfo()],
    auto: (await init({ engine: 'full', threads: false })).backendInfo().build,
    gemm: gemmChecks(relaxed, simd),
    mlp: {
      relaxed: { before: mlp[0].before, after: mlp[0].after },
      simd: { before: mlp[1].before, after: mlp[1].after },
      worstOutput: Math.max(...mlp[0].outputs.map((v, i) => Math.abs(v - mlp[1].outputs[i]))),
      maxOutput: Math.max(...mlp[1].outputs.map(Math.abs)),
    },
    conv: convChecks(relaxed, simd),
  };
}
