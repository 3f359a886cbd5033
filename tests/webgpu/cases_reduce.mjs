// Cases of the reductions, sort and softmax (engine/src/wgpu/reduce_ops.cpp, softmax_ops.cpp;
// harness ops in tests/webgpu/ops_reduce.cpp). See cases_creation.mjs for the case format.
import { SPECIAL, tensor, uniform } from './support.mjs';

const U = 2 ** -24;  // f32 unit roundoff

// Float sums: the device adds in f32 trees (<= 16 + 8 roundings per term and pass, so the
// first-order error is <= 24·u·Σ|x| per pass), the Cpu blocks f32 -> f64 (<= 2.9e-6·Σ|x|,
// cpu/kernels/reduce.hpp). The tolerance is the sum of both bounds over the largest Σ|x|
// of any result (bounded here by Σ|x| of the whole input); `div` divides it for means.
function sumTol(data, passes = 1, div = 1) {
  const l1 = data.reduce((s, v) => s + Math.abs(v), 0);
  return { abs: ((passes * 24 * U + 2.9e-6) * l1) / div + 1e-6, rel: 1e-5 };
}

const REDUCE_OPS = ['sum', 'mean', 'prod', 'max', 'min', 'any', 'all'];
const cases = [];
const add = (c) => cases.push(c);

// ---- reduce / reduce_dim: every op x dtype on small shapes (serial kernels) ----
for (const op of REDUCE_OPS) {
  for (const dtype of ['f32', 'i32', 'bool']) {
    const numeric = dtype !== 'bool' || op === 'any' || op === 'all';
    // prod of 15 values in [0.5, 1.5) (f32) or [-3, 3) (i32: |product| < 2^31)
    const x = op === 'prod' ? tensor([3, 5], dtype, 11, dtype === 'f32' ? 0.5 : -3, dtype === 'f32' ? 1.5 : 3) : tensor([3, 5], dtype, 11);
    const err = numeric ? {} : { error: 'DType' };
    const fsum = dtype === 'f32' && (op === 'sum' || op === 'mean');
    add({ name: `${op} ${dtype} [3, 5] whole`, op: 'reduce', inputs: [x], attrs: { op }, ...err, ...(fsum ? { tol: sumTol(x.data) } : {}) });
    for (const dim of [0, 1, -1, -2]) {
      add({ name: `${op}_dim ${dtype} [3, 5] dim ${dim}`, op: 'reduce_dim', inputs: [x], attrs: { op, dim }, ...err, ...(fsum ? { tol: sumTol(x.data) } : {}) });
    }
    if (!numeric) continue;
    const y = op === 'prod' ? tensor([4, 3, 2, 5], dtype, 12, dtype === 'f32' ? 0.5 : -2, dtype === 'f32' ? 1.5 : 3) : tensor([4, 3, 2, 5], dtype, 12);
    for (const dim of [0, 1, 2, 3]) {
      add({ name: `${op}_dim ${dtype} [4, 3, 2, 5] dim ${dim} (strided)`, op: 'reduce_dim', inputs: [y], attrs: { op, dim }, ...(fsum ? { tol: sumTol(y.data) } : {}) });
    }
  }
}

// ---- long rows: workgroup trees, one or several chunks ----
for (const op of ['sum', 'mean', 'max', 'min', 'any', 'all']) {
  for (const dtype of ['f32', 'i32']) {
    const x = tensor([5000], dtype, 21);
    const tol = dtype === 'f32' && (op === 'sum' || op === 'mean') ? { tol: sumTol(x.data, 1, op === 'mean' ? 5000 : 1) } : {};
    add({ name: `${op} ${dtype} [5000] whole (one tree)`, op: 'reduce', inputs: [x], attrs: { op }, ...tol });
    const y = tensor([3, 9000], dtype, 22);
    const toly = dtype === 'f32' && (op === 'sum' || op === 'mean') ? { tol: sumTol(y.data, 2, op === 'mean' ? 9000 : 1) } : {};
    add({ name: `${op}_dim ${dtype} [3, 9000] dim 1 (3 chunks, then a serial pass)`, op: 'reduce_dim', inputs: [y], attrs: { op, dim: 1 }, ...toly });
    const z = tensor([700, 6], dtype, 23);
    const tolz = dtype === 'f32' && (op === 'sum' || op === 'mean') ? { tol: sumTol(z.data, 1, op === 'mean' ? 700 : 1) } : {};
    add({ name: `${op}_dim ${dtype} [700, 6] dim 0 (strided trees)`, op: 'reduce_dim', inputs: [z], attrs: { op, dim: 0 }, ...tolz });
  }
}
{
  const x = tensor([70000], 'f32', 24);
  add({ name: 'sum f32 [70000] whole (18 chunks)', op: 'reduce', inputs: [x], attrs: { op: 'sum' }, tol: sumTol(x.data, 2) });
  // prod of 5000 values in [0.999, 1.001): relative error <= (n - 1)·u on the device
  const p = tensor([5000], 'f32', 25, 0.999, 1.001);
  add({ name: 'prod f32 [5000] whole', op: 'reduce', inputs: [p], attrs: { op: 'prod' }, tol: { abs: 0, rel: 5000 * U + 1e-6 } });
  const b = tensor([5000], 'bool', 26);
  add({ name: 'any bool [5000]', op: 'reduce', inputs: [b], attrs: { op: 'any' } });
  add({ name: 'all bool [5000]', op: 'reduce', inputs: [b], attrs: { op: 'all' } });
  const ones = { shape: [2, 3000], dtype: 'bool', data: new Array(6000).fill(1) };
  add({ name: 'all bool [2, 3000] of ones dim 1', op: 'reduce_dim', inputs: [ones], attrs: { op: 'all', dim: 1 } });
  const zeros = { shape: [3000, 2], dtype: 'f32', data: new Array(6000).fill(0).map((v, i) => (i % 2 ? -0 : 0)) };
  add({ name: 'any f32 [3000, 2] of ±0 dim 0', op: 'reduce_dim', inputs: [zeros], attrs: { op: 'any', dim: 0 } });
}
// Through arange (uploaded from the host): two tree passes (1.1M elements, 269 chunks)
add({ name: 'argmax i32 arange 1.1M (tree of trees)', op: 'reduce_arange', inputs: [], attrs: { n: 1100000, dtype: 'i32', argmax: true } });
// The exact Int sum 604,999,450,000 does not fit in i32; the mean (floor 549,999) does: int64 on the device
add({ name: 'mean i32 arange 1.1M (int64 sum)', op: 'reduce_arange', inputs: [], attrs: { n: 1100000, dtype: 'i32', op: 'mean' } });
add({ name: 'sum i32 arange 1.1M overflows i32', op: 'reduce_arange', inputs: [], attrs: { n: 1100000, dtype: 'i32', op: 'sum' }, error: 'Limit' });
// mean of 0..n-1 is (n-1)/2; the f32 device sum of 1.1M terms of up to 1.1e6: bound 48·u·Σx
add({ name: 'mean f32 arange 1.1M', op: 'reduce_arange', inputs: [], attrs: { n: 1100000, dtype: 'f32', op: 'mean' }, tol: { abs: (48 * U + 2.9e-6) * 549999.5, rel: 0 } });

// ---- Int semantics ----
add({ name: 'mean i32 floors (Python //)', op: 'reduce_dim', inputs: [{ shape: [4, 2], dtype: 'i32', data: [-7, 2, 7, -2, -1, -1, 5, 0] }], attrs: { op: 'mean', dim: 1 } });
add({ name: 'mean i32 of large values (sum past i32)', op: 'reduce', inputs: [{ shape: [3], dtype: 'i32', data: [2000000000, 2000000000, -1] }], attrs: { op: 'mean' } });
add({ name: 'mean i32 of very negative values', op: 'reduce', inputs: [{ shape: [3], dtype: 'i32', data: [-2147483648, -2147483648, -2147483647] }], attrs: { op: 'mean' } });
add({ name: 'sum i32 overflow throws Limit', op: 'reduce', inputs: [{ shape: [2], dtype: 'i32', data: [2147483647, 1] }], attrs: { op: 'sum' }, error: 'Limit' });
add({ name: 'sum_dim i32 overflow throws Limit', op: 'reduce_dim', inputs: [{ shape: [2, 2], dtype: 'i32', data: [2147483647, 0, 1, 0] }], attrs: { op: 'sum', dim: 0 }, error: 'Limit' });
add({ name: 'sum i32 back in range after a large partial', op: 'reduce', inputs: [{ shape: [3], dtype: 'i32', data: [2147483647, 1, -5] }], attrs: { op: 'sum' } });
add({ name: 'prod i32 overflow throws Limit', op: 'reduce', inputs: [{ shape: [3], dtype: 'i32', data: [65536, 65536, 1] }], attrs: { op: 'prod' }, error: 'Limit' });
add({ name: 'prod i32 overflow past int64 throws Limit', op: 'reduce', inputs: [{ shape: [5], dtype: 'i32', data: [2147483647, 2147483647, 2147483647, -5, 3] }], attrs: { op: 'prod' }, error: 'Limit' });
add({ name: 'prod i32 with a zero after an overflow is 0', op: 'reduce', inputs: [{ shape: [4], dtype: 'i32', data: [65536, 65536, 65536, 0] }], attrs: { op: 'prod' } });
add({ name: 'prod i32 = -2^31 through 2^31', op: 'reduce', inputs: [{ shape: [3], dtype: 'i32', data: [-2147483648, -1, -1] }], attrs: { op: 'prod' } });
add({ name: 'max/min i32 extremes', op: 'reduce_dim', inputs: [{ shape: [2, 3], dtype: 'i32', data: [-2147483648, 2147483647, 0, -2147483648, -2147483648, -2147483648] }], attrs: { op: 'max', dim: 1 } });
add({ name: 'min i32 extremes', op: 'reduce_dim', inputs: [{ shape: [2, 3], dtype: 'i32', data: [2147483647, 2147483647, 2147483647, -2147483648, 0, 5] }], attrs: { op: 'min', dim: 1 } });

// ---- special values ----
const special = { shape: [SPECIAL.length], dtype: 'f32', data: SPECIAL };
for (const op of ['sum', 'mean', 'prod', 'max', 'min', 'any', 'all']) {
  add({ name: `${op} of SPECIAL (nan)`, op: 'reduce', inputs: [special], attrs: { op } });
}
// Rows with +inf, -inf, nan, ±0, and a product overflowing f32 (no subnormals: SwiftShader
// flushes them to 0, which WGSL allows)
const sp = { shape: [6, 3], dtype: 'f32', data: [Infinity, 1, 2, -Infinity, 1, 2, NaN, 1, 2, 0, -0, 0, -0, -0, -0, 1e-30, -3e30, 3.4e38] };
for (const op of ['sum', 'mean', 'prod', 'max', 'min', 'any', 'all']) {
  add({ name: `${op}_dim of ±inf, nan, ±0 rows`, op: 'reduce_dim', inputs: [sp], attrs: { op, dim: 1 } });
}
add({ name: 'max of all -inf', op: 'reduce', inputs: [{ shape: [3], dtype: 'f32', data: [-Infinity, -Infinity, -Infinity] }], attrs: { op: 'max' } });
add({ name: 'max with nan at the end of a long row', op: 'reduce', inputs: [{ shape: [3000], dtype: 'f32', data: [...uniform(2999, 31), NaN] }], attrs: { op: 'max' } });
add({ name: 'min with nan at the start of a long row', op: 'reduce', inputs: [{ shape: [3000], dtype: 'f32', data: [NaN, ...uniform(2999, 32)] }], attrs: { op: 'min' } });
add({ name: 'any f32 with only nan', op: 'reduce', inputs: [{ shape: [3], dtype: 'f32', data: [0, NaN, -0] }], attrs: { op: 'any' } });
add({ name: 'all f32 with -0', op: 'reduce', inputs: [{ shape: [3], dtype: 'f32', data: [1, -0, NaN] }], attrs: { op: 'all' } });

// ---- empty tensors ----
const empty0 = { shape: [0], dtype: 'f32', data: [] };
const emptyI = { shape: [0], dtype: 'i32', data: [] };
const empty20 = { shape: [2, 0], dtype: 'f32', data: [] };
const empty03 = { shape: [0, 3], dtype: 'i32', data: [] };
for (const op of REDUCE_OPS) {
  const throwsF = op === 'max' || op === 'min' ? { error: 'Shape' } : {};
  const throwsI = op === 'max' || op === 'min' || op === 'mean' ? { error: 'Shape' } : {};
  add({ name: `${op} f32 of [0]`, op: 'reduce', inputs: [empty0], attrs: { op }, ...throwsF });
  add({ name: `${op} i32 of [0]`, op: 'reduce', inputs: [emptyI], attrs: { op }, ...throwsI });
  add({ name: `${op}_dim f32 [2, 0] dim 1 (n = 0)`, op: 'reduce_dim', inputs: [empty20], attrs: { op, dim: 1 }, ...throwsF });
  add({ name: `${op}_dim i32 [0, 3] dim 1 (no results)`, op: 'reduce_dim', inputs: [empty03], attrs: { op, dim: 1 } });
  add({ name: `${op}_dim i32 [0, 3] dim 0 (n = 0)`, op: 'reduce_dim', inputs: [empty03], attrs: { op, dim: 0 }, ...throwsI });
}

// ---- rank 8, errors ----
const r8 = tensor([2, 1, 2, 3, 1, 2, 2, 3], 'f32', 41);
for (const dim of [0, 3, 7, -2]) {
  add({ name: `sum_dim rank 8 dim ${dim}`, op: 'reduce_dim', inputs: [r8], attrs: { op: 'sum', dim }, tol: sumTol(r8.data) });
  add({ name: `argmax rank 8 dim ${dim}`, op: 'argmax', inputs: [r8], attrs: { dim } });
  add({ name: `softmax rank 8 dim ${dim}`, op: 'softmax', inputs: [r8], attrs: { dim } });
  add({ name: `sort rank 8 dim ${dim}`, op: 'sort_with_indices', inputs: [r8], attrs: { dim, output: 1 } });
}
const m23 = tensor([2, 3], 'f32', 42);
add({ name: 'sum_dim dim 2 out of range', op: 'reduce_dim', inputs: [m23], attrs: { op: 'sum', dim: 2 }, error: 'Index' });
add({ name: 'any_dim dim -3 out of range', op: 'reduce_dim', inputs: [m23], attrs: { op: 'any', dim: -3 }, error: 'Index' });

// ---- max/min_dim_with_indices, argmax, argmin ----
const arg = [
  ['f32 [4, 7]', tensor([4, 7], 'f32', 51)],
  ['i32 ties [6, 9]', tensor([6, 9], 'i32', 52, 0, 3)],
  ['f32 [3, 5, 4]', tensor([3, 5, 4], 'f32', 53)],
];
for (const [label, x] of arg) {
  for (const dim of [0, 1, -1]) {
    for (const output of [0, 1]) {
      add({ name: `max_dim_with_indices ${label} dim ${dim} output ${output}`, op: 'max_dim_with_indices', inputs: [x], attrs: { dim, output } });
      add({ name: `min_dim_with_indices ${label} dim ${dim} output ${output}`, op: 'min_dim_with_indices', inputs: [x], attrs: { dim, output } });
    }
    add({ name: `argmax ${label} dim ${dim}`, op: 'argmax', inputs: [x], attrs: { dim } });
    add({ name: `argmin ${label} dim ${dim}`, op: 'argmin', inputs: [x], attrs: { dim } });
  }
}
{
  // nan counts as the max (and the min) and the first nan wins; ±0 tie: the first index
  const x = { shape: [5, 4], dtype: 'f32', data: [1, NaN, 3, NaN, -0, 0, -1, -2, NaN, NaN, NaN, NaN, -Infinity, -Infinity, -Infinity, -Infinity, 2, Infinity, Infinity, 2] };
  for (const op of ['argmax', 'argmin']) add({ name: `${op} with nan, ±0, ±inf`, op, inputs: [x], attrs: { dim: 1 } });
  for (const output of [0, 1]) {
    add({ name: `max_dim_with_indices with nan, ±0, ±inf output ${output}`, op: 'max_dim_with_indices', inputs: [x], attrs: { dim: 1, output } });
    add({ name: `min_dim_with_indices with nan, ±0, ±inf output ${output}`, op: 'min_dim_with_indices', inputs: [x], attrs: { dim: 1, output } });
  }
  // long rows with ties across chunks: the first index must win across the tree and passes
  const t = tensor([2, 9000], 'i32', 54, 0, 5);
  add({ name: 'argmax i32 [2, 9000] ties across chunks', op: 'argmax', inputs: [t], attrs: { dim: 1 } });
  add({ name: 'argmin i32 [2, 9000] ties across chunks', op: 'argmin', inputs: [t], attrs: { dim: 1 } });
  add({ name: 'argmax i32 [9000, 2] dim 0 (strided)', op: 'argmax', inputs: [tensor([9000, 2], 'i32', 55, -4, 4)], attrs: { dim: 0 } });
  const f = tensor([4000], 'f32', 56, -3, 3);
  f.data[1234] = NaN;
  f.data[3000] = NaN;
  add({ name: 'argmax f32 [4000] with two nans', op: 'argmax', inputs: [f], attrs: { dim: 0 } });
  add({ name: 'argmin f32 [4000] with two nans', op: 'argmin', inputs: [f], attrs: { dim: 0 } });
  add({ name: 'max_dim_with_indices f32 [4000] values', op: 'max_dim_with_indices', inputs: [tensor([4000], 'f32', 57)], attrs: { dim: 0 } });
  add({ name: 'argmax bool throws DType', op: 'argmax', inputs: [tensor([3], 'bool', 58)], attrs: { dim: 0 }, error: 'DType' });
  add({ name: 'argmin dim of size 0 throws Shape', op: 'argmin', inputs: [{ shape: [3, 0], dtype: 'f32', data: [] }], attrs: { dim: 1 }, error: 'Shape' });
  add({ name: 'max_dim_with_indices [0, 3] dim 1 (no results)', op: 'max_dim_with_indices', inputs: [{ shape: [0, 3], dtype: 'f32', data: [] }], attrs: { dim: 1, output: 1 } });
  add({ name: 'argmax dim out of range', op: 'argmax', inputs: [m23], attrs: { dim: 2 }, error: 'Index' });
}

// ---- var_mean ----
for (const [label, x, dims] of [
  ['[4, 7]', tensor([4, 7], 'f32', 61), [0, 1, -1]],
  ['[3, 5, 4]', tensor([3, 5, 4], 'f32', 62, 10, 12), [0, 1, 2]],  // mean far from 0: the centring matters
  ['[2, 3000]', tensor([2, 3000], 'f32', 63), [1]],
  ['[5000, 2]', tensor([5000, 2], 'f32', 64), [0]],
]) {
  for (const dim of dims) {
    for (const unbiased of [true, false]) {
      // var of n values: f32 sums on the device; relative error a few · passes · 24·u per sum
      add({ name: `var_mean ${label} dim ${dim} unbiased ${unbiased} (var)`, op: 'var_mean', inputs: [x], attrs: { dim, unbiased, output: 0 }, tol: { abs: 1e-6, rel: 1e-4 } });
    }
    add({ name: `var_mean ${label} dim ${dim} (mean)`, op: 'var_mean', inputs: [x], attrs: { dim, output: 1 }, tol: sumTol(x.data, 2, x.shape[dim < 0 ? x.shape.length + dim : dim]) });
  }
}
add({ name: 'var_mean n = 1 unbiased is nan', op: 'var_mean', inputs: [tensor([3, 1], 'f32', 65)], attrs: { dim: 1, unbiased: true } });
add({ name: 'var_mean n = 1 biased is 0', op: 'var_mean', inputs: [tensor([3, 1], 'f32', 65)], attrs: { dim: 1, unbiased: false } });
add({ name: 'var_mean n = 0 (var)', op: 'var_mean', inputs: [empty20], attrs: { dim: 1 } });
add({ name: 'var_mean n = 0 (mean)', op: 'var_mean', inputs: [empty20], attrs: { dim: 1, output: 1 } });
add({ name: 'var_mean no results', op: 'var_mean', inputs: [{ shape: [0, 4], dtype: 'f32', data: [] }], attrs: { dim: 1 } });
add({ name: 'var_mean of ±inf, nan rows (var)', op: 'var_mean', inputs: [sp], attrs: { dim: 1, output: 0 } });
add({ name: 'var_mean of ±inf, nan rows (mean)', op: 'var_mean', inputs: [sp], attrs: { dim: 1, output: 1 } });
add({ name: 'var_mean of a constant row is 0', op: 'var_mean', inputs: [{ shape: [1, 5], dtype: 'f32', data: [0.1, 0.1, 0.1, 0.1, 0.1] }], attrs: { dim: 1 } });
add({ name: 'var_mean i32 throws DType', op: 'var_mean', inputs: [tensor([2, 3], 'i32', 66)], attrs: { dim: 1 }, error: 'DType' });
add({ name: 'var_mean dim out of range', op: 'var_mean', inputs: [m23], attrs: { dim: -3 }, error: 'Index' });

// ---- sort_with_indices ----
const sortInputs = [
  ['f32 [5, 7]', tensor([5, 7], 'f32', 71), [0, 1, -1]],
  ['i32 ties [4, 50]', tensor([4, 50], 'i32', 72, -3, 3), [0, 1]],
  ['f32 [3, 4, 6]', tensor([3, 4, 6], 'f32', 73), [0, 1, 2]],
  ['f32 special', { shape: [2, 12], dtype: 'f32', data: [...SPECIAL, NaN, 0, -0, 1, -1, NaN, Infinity, -Infinity, 0, -0, 1, -3.4e38] }, [1]],
  ['i32 extremes', { shape: [8], dtype: 'i32', data: [0, -2147483648, 2147483647, -1, 1, -2147483648, 2147483647, 0] }, [0]],
  ['f32 [700, 5] (many lines per block)', tensor([700, 5], 'f32', 74), [1]],
  ['i32 [2, 3000] ties (global steps)', tensor([2, 3000], 'i32', 75, 0, 100), [1]],
  ['f32 [5000] (8192 slots)', tensor([5000], 'f32', 76), [0]],
  ['f32 [3000, 3] dim 0 (strided)', tensor([3000, 3], 'f32', 77), [0]],
  ['f32 [3, 1] (n = 1)', tensor([3, 1], 'f32', 78), [1]],
];
for (const [label, x, dims] of sortInputs) {
  for (const dim of dims) {
    for (const descending of [false, true]) {
      for (const output of [0, 1]) {
        add({ name: `sort ${label} dim ${dim}${descending ? ' descending' : ''} ${output ? 'indices' : 'values'}`, op: 'sort_with_indices', inputs: [x], attrs: { dim, descending, output } });
      }
    }
  }
}
{
  const nanRow = { shape: [2048], dtype: 'f32', data: uniform(2048, 79).map((v, i) => (i % 7 === 3 ? NaN : i % 5 === 0 ? -0 : v)) };
  add({ name: 'sort f32 [2048] nans and -0 (one block) indices', op: 'sort_with_indices', inputs: [nanRow], attrs: { dim: 0, output: 1 } });
  add({ name: 'sort f32 [2048] nans and -0 descending indices', op: 'sort_with_indices', inputs: [nanRow], attrs: { dim: 0, descending: true, output: 1 } });
  // 40000 elements: 65536 slots, 28 global steps
  const long = tensor([40000], 'i32', 81, -1000, 1000);
  add({ name: 'sort i32 [40000] ties indices', op: 'sort_with_indices', inputs: [long], attrs: { dim: 0, output: 1 } });
  add({ name: 'sort i32 [40000] ties descending values', op: 'sort_with_indices', inputs: [long], attrs: { dim: 0, descending: true } });
  add({ name: 'sort empty [0, 4]', op: 'sort_with_indices', inputs: [{ shape: [0, 4], dtype: 'f32', data: [] }], attrs: { dim: 1, output: 1 } });
  add({ name: 'sort [4, 0] dim 1', op: 'sort_with_indices', inputs: [{ shape: [4, 0], dtype: 'i32', data: [] }], attrs: { dim: 1 } });
  add({ name: 'sort bool throws DType', op: 'sort_with_indices', inputs: [tensor([3], 'bool', 80)], attrs: { dim: 0 }, error: 'DType' });
  add({ name: 'sort dim out of range', op: 'sort_with_indices', inputs: [m23], attrs: { dim: 5 }, error: 'Index' });
}

// ---- softmax, log_softmax ----
// exp and log are the device's (WGSL allows a few ulp); sums are f32 trees vs the Cpu's f32 lanes.
for (const op of ['softmax', 'log_softmax']) {
  for (const [label, x, dims] of [
    ['[4, 7]', tensor([4, 7], 'f32', 81, -5, 5), [0, 1, -1, -2]],
    ['[3, 4, 5]', tensor([3, 4, 5], 'f32', 82, -5, 5), [0, 1, 2]],
    ['[2, 3000] (workgroup lines)', tensor([2, 3000], 'f32', 83, -5, 5), [1]],
    ['[600, 3] dim 0 (strided workgroup lines)', tensor([600, 3], 'f32', 84, -5, 5), [0]],
    ['[300, 1]', tensor([300, 1], 'f32', 85), [0, 1]],
  ]) {
    for (const dim of dims) add({ name: `${op} ${label} dim ${dim}`, op, inputs: [x], attrs: { dim } });
  }
  const special = { shape: [7, 4], dtype: 'f32', data: [
    -Infinity, -Infinity, -Infinity, -Infinity,  // all -inf: nan
    1, NaN, 2, 3,                                // nan: nan
    1, Infinity, 2, 3,                           // +inf: nan
    -Infinity, 1, -Infinity, 2,                  // -inf entries: 0 (log: -inf)
    100, 0, -50, 100,                            // two max entries, tiny terms
    -3.4e38, 3.4e38, 0, 1,                       // x - max overflows to -inf
    20, 0, 0, 0,                                 // one dominant entry (log1p precision)
  ] };
  add({ name: `${op} special rows`, op, inputs: [special], attrs: { dim: 1 } });
  add({ name: `${op} special rows long (workgroup)`, op, inputs: [{ shape: [2, 1000], dtype: 'f32', data: [...new Array(1000).fill(-Infinity), ...new Array(999).fill(-Infinity), 5] }], attrs: { dim: 1 } });
  add({ name: `${op} nan in a long row`, op, inputs: [{ shape: [1, 600], dtype: 'f32', data: [...uniform(599, 86), NaN] }], attrs: { dim: -1 } });
  add({ name: `${op} empty [0, 5]`, op, inputs: [{ shape: [0, 5], dtype: 'f32', data: [] }], attrs: { dim: 1 } });
  add({ name: `${op} empty [5, 0]`, op, inputs: [{ shape: [5, 0], dtype: 'f32', data: [] }], attrs: { dim: 1 } });
  add({ name: `${op} i32 throws DType`, op, inputs: [tensor([2, 3], 'i32', 87)], attrs: { dim: 1 }, error: 'DType' });
  add({ name: `${op} dim out of range`, op, inputs: [m23], attrs: { dim: 2 }, error: 'Index' });
}

export { cases };
