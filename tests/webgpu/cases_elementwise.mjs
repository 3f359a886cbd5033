// Cases of the element-wise ops (engine/src/wgpu/elementwise_ops.cpp; harness ops in
// ops_elementwise.cpp): every row of the op table (kiln/backend/ops.def) in every dtype the
// Cpu backend accepts, broadcasting up to rank 8, scalars on either side, special values,
// empty tensors and the argument errors.
//
// Tolerances. The WGSL kernels reproduce the Cpu kernels operation for operation (xsimd's
// algorithms for exp/log/sin/..., the same f32 roundings), so most f32 cases are exact
// (`EXACT`) but for one thing: SwiftShader flushes subnormals (DAZ/FTZ). The kernels read
// subnormal operands at their value where it changes more than a subnormal's worth (mul, div,
// sqrt, log, ceil/floor, comparisons, fmod, pow), but a result below 2^-126 still comes out
// as ±0 where the Cpu keeps it, and + - read subnormal operands as 0: an absolute error below
// 2^-125 (`EXACT.abs`). Looser tolerances are stated where they are used.
import { SPECIAL, tensor, uniform } from './support.mjs';

const FLT_MIN = 1.1754943508222875e-38;
/** Exact but for subnormal results flushed to zero (see above). */
const EXACT = { abs: 2 * FLT_MIN, rel: 0 };
/** One ulp (relative 2^-23): sin/cos of arguments the Cpu reduces with another formula
 * (xsimd picks the argument reduction per SIMD batch of 4 from the largest lane: a small
 * argument next to a huge one is reduced exactly there, by Cody-Waite here). */
const ULP1 = { abs: 2 * FLT_MIN, rel: 1.2e-7 };
/** Two ulps: powf, within about 1 ulp of the correctly rounded value on each side (ours
 * computes log2 and y·log2(x) in double-f32; the Cpu's musl powf in double). Measured on
 * 12,000 random pairs: never more than 1 ulp apart. */
const POW = { abs: 2 * FLT_MIN, rel: 2.4e-7 };

const f32 = (data, shape = [data.length]) => ({ shape, dtype: 'f32', data });
const i32 = (data, shape = [data.length]) => ({ shape, dtype: 'i32', data });
const bool = (data, shape = [data.length]) => ({ shape, dtype: 'bool', data });

/** `n` values whose magnitudes are log-uniform in [lo, hi), alternating in sign. */
function logUniform(n, seed, lo, hi) {
  return uniform(n, seed, Math.log(lo), Math.log(hi)).map((v, i) => Math.fround((i % 2 ? -1 : 1) * Math.exp(v)));
}

/** Every pair of `values` as two flat tensors (same shape: the fast path). */
function pairs(values) {
  const a = [], b = [];
  for (const x of values) for (const y of values) { a.push(x); b.push(y); }
  return [f32(a), f32(b)];
}

const INT_MIN = -2147483648, INT_MAX = 2147483647;
const INT_SPECIAL = [0, 1, -1, 2, -2, 3, -3, 7, -7, 100, -100, 46341, INT_MAX, INT_MIN, INT_MAX - 1, INT_MIN + 1];
const INT_DIVISORS = INT_SPECIAL.filter((v) => v !== 0);

const BINARY = ['add', 'sub', 'mul', 'div', 'div_trunc', 'remainder', 'fmod', 'pow', 'max_pair', 'min_pair'];
const UNARY_FLOAT = ['exp', 'log', 'log1p', 'sqrt', 'sin', 'cos', 'tanh', 'ceil', 'floor', 'round', 'recip', 'erf',
  'sigmoid', 'relu', 'gelu', 'gelu_tanh', 'silu', 'expm1', 'selu', 'mish', 'hard_sigmoid', 'hard_swish'];
const UNARY_NUMERIC = ['neg', 'abs', 'sign'];
const COMPARE = ['equal', 'not_equal', 'greater', 'greater_equal', 'lower', 'lower_equal'];

const tolBinary = (op) => (op === 'pow' ? POW : EXACT);
const tolUnary = (op) => (op === 'sin' || op === 'cos' ? ULP1 : EXACT);

// Inputs of each unary op: special values, a range where the function varies, a wide
// log-uniform range, and for sin/cos arguments up to 3e38 (exact reduction past 64π).
const UNARY_INPUTS = {
  small: f32(uniform(3000, 11, -4, 4)),
  wide: f32(logUniform(3000, 12, 1e-6, 100)),
  huge: f32(logUniform(2000, 13, 1, 3e38)),
  special: f32(SPECIAL),
};

export const cases = [];
const add = (c) => cases.push(c);

// ---- binary ----
for (const op of BINARY) {
  const tol = tolBinary(op);
  add({ name: `binary ${op} f32 same shape`, op: 'binary', attrs: { op }, tol,
    inputs: [tensor([40, 50], 'f32', 21, -8, 8), tensor([40, 50], 'f32', 22, -8, 8)] });
  add({ name: `binary ${op} f32 wide magnitudes`, op: 'binary', attrs: { op }, tol,
    inputs: [f32(logUniform(2000, 23, 1e-20, 1e20)), f32(logUniform(2000, 24, 1e-20, 1e20))] });
  add({ name: `binary ${op} f32 special x special`, op: 'binary', attrs: { op }, tol, inputs: pairs(SPECIAL) });
  add({ name: `binary ${op} f32 special broadcast [12,1] x [1,12]`, op: 'binary', attrs: { op }, tol,
    inputs: [f32(SPECIAL, [SPECIAL.length, 1]), f32(SPECIAL, [1, SPECIAL.length])] });
  add({ name: `binary ${op} f32 broadcast [2,1,3] x [4,1]`, op: 'binary', attrs: { op }, tol,
    inputs: [tensor([2, 1, 3], 'f32', 25, 0.5, 3), tensor([4, 1], 'f32', 26, 0.5, 3)] });
  add({ name: `binary ${op} i32 same shape`, op: 'binary', attrs: { op },
    inputs: [tensor([30, 20], 'i32', 27, -50, 50), { ...tensor([30, 20], 'i32', 28, 1, 9) }] });
  add({ name: `binary ${op} i32 extremes x non-zero`, op: 'binary', attrs: { op },
    inputs: [i32(INT_SPECIAL, [INT_SPECIAL.length, 1]), i32(INT_DIVISORS.filter((v) => op !== 'pow' || v >= 0), [1, INT_DIVISORS.filter((v) => op !== 'pow' || v >= 0).length])] });
  add({ name: `binary ${op} i32 negative divisors`, op: 'binary', attrs: { op },
    inputs: [tensor([50], 'i32', 29, -60, 60), ...[op === 'pow' ? tensor([50], 'i32', 30, 0, 12) : tensor([50], 'i32', 30, -9, -1)]] });
  add({ name: `binary ${op} i32 rhs computed on the device`, op: 'binary_device_rhs', attrs: { op },
    inputs: [tensor([64], 'i32', 31, -40, 40), tensor([64], 'i32', 32, 1, 6)] });
  add({ name: `binary ${op} same tensor on both sides`, op: 'binary_self', attrs: { op }, tol,
    inputs: [tensor([7, 9], 'f32', 33, 0.5, 2)] });
  add({ name: `binary ${op} empty`, op: 'binary', attrs: { op }, inputs: [f32([], [0, 3]), f32([1, 2, 3], [1, 3])] });
}
add({ name: 'binary pow f32 integer exponents', op: 'binary', attrs: { op: 'pow' }, tol: POW,
  inputs: [f32([-3, -2, -1.5, -0.5, 0.5, 1.5, 2, 3, 10], [9, 1]), f32([-3, -2, -1, 0, 1, 2, 3, 7, 24, 25], [1, 10])] });
add({ name: 'binary pow f32 large exponents near 1', op: 'binary', attrs: { op: 'pow' }, tol: POW,
  inputs: [f32(uniform(500, 34, 0.999, 1.001)), f32(uniform(500, 35, -60000, 60000))] });
add({ name: 'binary pow f32 results near overflow and underflow', op: 'binary', attrs: { op: 'pow' }, tol: POW,
  inputs: [f32(uniform(500, 36, 1.5, 2.5)), f32(uniform(500, 37, -160, 140))] });
add({ name: 'binary fmod / remainder of huge by tiny', op: 'binary', attrs: { op: 'remainder' },
  inputs: [f32([3.4e38, -3.4e38, 1e30, 1e-30, 7.5]), f32([1e-38, 3e-39, -0.1, 1e-44, -2])], tol: EXACT });
add({ name: 'binary i32 div by zero (host rhs) throws', op: 'binary', attrs: { op: 'div' }, inputs: [i32([1, 2, 3]), i32([1, 0, 3])], error: 'Value' });
add({ name: 'binary i32 remainder by zero broadcast throws', op: 'binary', attrs: { op: 'remainder' }, inputs: [i32([1, 2, 3, 4], [2, 2]), i32([0, 5], [1, 2])], error: 'Value' });
add({ name: 'binary i32 pow negative exponent throws', op: 'binary', attrs: { op: 'pow' }, inputs: [i32([2, 2]), i32([3, -1])], error: 'Value' });
add({ name: 'binary i32 fmod by zero into an empty result: no error', op: 'binary', attrs: { op: 'fmod' }, inputs: [i32([], [0, 2]), i32([0, 0], [1, 2])] });
add({ name: 'binary shapes do not broadcast', op: 'binary', attrs: { op: 'add' }, inputs: [tensor([2, 3]), tensor([4])], error: 'Shape' });
add({ name: 'binary dtypes differ', op: 'binary', attrs: { op: 'mul' }, inputs: [tensor([3]), tensor([3], 'i32')], error: 'DType' });
add({ name: 'binary bool operands', op: 'binary', attrs: { op: 'add' }, inputs: [tensor([3], 'bool'), tensor([3], 'bool')], error: 'DType' });
add({ name: 'binary pow i32 message powi', op: 'binary', attrs: { op: 'pow' }, inputs: [tensor([3], 'i32'), tensor([2], 'i32')], error: 'Shape' });

// Broadcasting at rank 8 (the maximum), a rank-0 operand, and 70,000 elements (274
// workgroups of 256).
add({ name: 'binary add rank 8 broadcast', op: 'binary', attrs: { op: 'add' },
  inputs: [tensor([2, 1, 2, 1, 2, 1, 2, 3], 'f32', 41), tensor([1, 3, 1, 2, 1, 2, 1, 3], 'f32', 42)], tol: EXACT });
add({ name: 'binary sub rank 8 x rank 1', op: 'binary', attrs: { op: 'sub' },
  inputs: [tensor([2, 2, 2, 2, 2, 2, 2, 2], 'i32', 43), tensor([2], 'i32', 44)] });
add({ name: 'binary mul rank 0 x [3, 4]', op: 'binary', attrs: { op: 'mul' }, inputs: [f32([2.5], []), tensor([3, 4], 'f32', 45)], tol: EXACT });
add({ name: 'binary max [70000] x [1]', op: 'binary', attrs: { op: 'max_pair' }, inputs: [tensor([70000], 'f32', 46), f32([0.25])], tol: EXACT });
add({ name: 'binary div [350, 200] x [200] (274 workgroups, broadcast)', op: 'binary', attrs: { op: 'div' },
  inputs: [tensor([350, 200], 'f32', 47), tensor([200], 'f32', 48, 0.5, 2)], tol: EXACT });

// ---- binary_scalar ----
for (const op of BINARY) {
  for (const left of [false, true]) {
    const side = left ? 'scalar op x' : 'x op scalar';
    for (const scalar of [2.5, -0.75, 0, 3]) {
      add({ name: `binary_scalar ${op} f32 ${side} ${scalar}`, op: 'binary_scalar', attrs: { op, scalar, left },
        tol: tolBinary(op), inputs: [f32([...SPECIAL, ...uniform(40, 51, -5, 5)])] });
    }
    const scalar = op === 'pow' ? 3 : -3;
    add({ name: `binary_scalar ${op} i32 ${side} ${scalar}`, op: 'binary_scalar', attrs: { op, scalar, left },
      inputs: [i32(left && op !== 'pow' ? INT_DIVISORS : left ? [0, 1, 2, 3, 5, 31] : INT_SPECIAL)] });
  }
}
add({ name: 'binary_scalar pow x 1 (the input itself)', op: 'binary_scalar', attrs: { op: 'pow', scalar: 1 }, inputs: [f32(SPECIAL)] });
add({ name: 'binary_scalar pow x 2 (x·x)', op: 'binary_scalar', attrs: { op: 'pow', scalar: 2 }, inputs: [f32(SPECIAL)], tol: EXACT });
add({ name: 'binary_scalar pow x 0.5', op: 'binary_scalar', attrs: { op: 'pow', scalar: 0.5 }, inputs: [f32(SPECIAL)], tol: POW });
add({ name: 'binary_scalar add nan', op: 'binary_scalar', attrs: { op: 'add', scalar: 'nan' }, inputs: [f32([1, 2])] });
add({ name: 'binary_scalar mul inf', op: 'binary_scalar', attrs: { op: 'mul', scalar: 'inf' }, inputs: [f32(SPECIAL)] });
add({ name: 'binary_scalar 1e-38 / x (subnormal scalar)', op: 'binary_scalar', attrs: { op: 'div', scalar: 1e-38, left: true }, inputs: [f32(SPECIAL)], tol: EXACT });
add({ name: 'binary_scalar empty', op: 'binary_scalar', attrs: { op: 'div', scalar: 0 }, inputs: [i32([], [0])] });
add({ name: 'binary_scalar i32 div by scalar 0 throws', op: 'binary_scalar', attrs: { op: 'div', scalar: 0 }, inputs: [i32([1, 2])], error: 'Value' });
add({ name: 'binary_scalar i32 scalar / x with a zero throws', op: 'binary_scalar', attrs: { op: 'div_trunc', scalar: 7, left: true }, inputs: [i32([1, 0])], error: 'Value' });
add({ name: 'binary_scalar i32 pow by -1 throws', op: 'binary_scalar', attrs: { op: 'pow', scalar: -1 }, inputs: [i32([1, 2])], error: 'Value' });
add({ name: 'binary_scalar i32 2 ** x with x < 0 throws', op: 'binary_scalar', attrs: { op: 'pow', scalar: 2, left: true }, inputs: [i32([1, -2])], error: 'Value' });
add({ name: 'binary_scalar i32 non-integer scalar throws', op: 'binary_scalar', attrs: { op: 'add', scalar: 2.5 }, inputs: [i32([1, 2])], error: 'Value' });
add({ name: 'binary_scalar i32 scalar out of range throws', op: 'binary_scalar', attrs: { op: 'mul', scalar: 3e9 }, inputs: [i32([1, 2])], error: 'Value' });
add({ name: 'binary_scalar bool throws', op: 'binary_scalar', attrs: { op: 'add', scalar: 1 }, inputs: [bool([1, 0])], error: 'DType' });

// ---- unary ----
for (const op of UNARY_FLOAT) {
  for (const [set, input] of Object.entries(UNARY_INPUTS)) {
    if (set === 'huge' && !['sin', 'cos', 'exp', 'log', 'sqrt', 'recip', 'tanh', 'erf', 'gelu', 'mish'].includes(op)) continue;
    add({ name: `unary ${op} f32 ${set}`, op: 'unary', attrs: { op }, tol: tolUnary(op), inputs: [input] });
  }
  // The sign of zero results: 1/op(x) is ±inf.
  add({ name: `unary ${op} f32 signed zeros`, op: 'unary_signed_zero', attrs: { op }, tol: tolUnary(op),
    inputs: [f32([0, -0, 0.25, -0.25, 0.5, -0.5, 1e-30, -1e-30])] });
  add({ name: `unary ${op} i32 throws`, op: 'unary', attrs: { op }, inputs: [i32([1, 2])], error: 'DType' });
  add({ name: `unary ${op} empty`, op: 'unary', attrs: { op }, inputs: [f32([], [2, 0])] });
}
for (const op of UNARY_NUMERIC) {
  add({ name: `unary ${op} f32`, op: 'unary', attrs: { op }, tol: EXACT, inputs: [f32([...SPECIAL, -1e-38, ...uniform(40, 61, -3, 3)])] });
  add({ name: `unary ${op} f32 signed zeros`, op: 'unary_signed_zero', attrs: { op }, inputs: [f32([0, -0, 2, -2])] });
  add({ name: `unary ${op} i32`, op: 'unary', attrs: { op }, inputs: [i32(INT_SPECIAL)] });
  add({ name: `unary ${op} bool throws`, op: 'unary', attrs: { op }, inputs: [bool([1, 0])], error: 'DType' });
}
add({ name: 'unary exp [70000] (274 workgroups)', op: 'unary', attrs: { op: 'exp' }, inputs: [tensor([70000], 'f32', 62, -80, 80)], tol: EXACT });
add({ name: 'unary sin near multiples of pi/2', op: 'unary', attrs: { op: 'sin' }, tol: ULP1,
  inputs: [f32([Math.PI / 2, Math.PI, 3 * Math.PI / 2, 2 * Math.PI, 100 * Math.PI, 1e4 * Math.PI, 1e6, 1e10, 1e20, 3.4e38, 201.06, 201.07, 62.8, 62.9].map(Math.fround))] });
add({ name: 'unary cos near multiples of pi/2', op: 'unary', attrs: { op: 'cos' }, tol: ULP1,
  inputs: [f32([Math.PI / 2, Math.PI, 3 * Math.PI / 2, 2 * Math.PI, 100 * Math.PI, 1e4 * Math.PI, 1e6, 1e10, 1e20, 3.4e38, 201.06, 201.07, 62.8, 62.9].map(Math.fround))] });

// ---- clamp, leaky_relu, softplus ----
const CLAMP_INPUT = f32([...SPECIAL, -1e-38, ...uniform(30, 71, -5, 5)]);
add({ name: 'clamp f32 min and max', op: 'clamp', attrs: { min: -1.5, max: 2 }, inputs: [CLAMP_INPUT], tol: EXACT });
add({ name: 'clamp f32 min only', op: 'clamp', attrs: { min: 0 }, inputs: [CLAMP_INPUT], tol: EXACT });
add({ name: 'clamp f32 max only', op: 'clamp', attrs: { max: -0.5 }, inputs: [CLAMP_INPUT], tol: EXACT });
add({ name: 'clamp f32 no bounds', op: 'clamp', attrs: {}, inputs: [CLAMP_INPUT], tol: EXACT });
add({ name: 'clamp f32 subnormal bound', op: 'clamp', attrs: { min: 1e-38 }, inputs: [CLAMP_INPUT], tol: EXACT });
add({ name: 'clamp i32 fractional bounds', op: 'clamp', attrs: { min: -2.5, max: 2.5 }, inputs: [i32(INT_SPECIAL)] });
add({ name: 'clamp i32 bounds past the i32 range', op: 'clamp', attrs: { min: -1e10, max: 1e10 }, inputs: [i32(INT_SPECIAL)] });
add({ name: 'clamp i32 min only', op: 'clamp', attrs: { min: 3 }, inputs: [i32(INT_SPECIAL)] });
add({ name: 'clamp empty', op: 'clamp', attrs: { min: 0 }, inputs: [f32([], [0])] });
add({ name: 'clamp min > max throws', op: 'clamp', attrs: { min: 2, max: 1 }, inputs: [f32([1])], error: 'Value' });
add({ name: 'clamp nan bound throws', op: 'clamp_nan_min', attrs: { max: 1 }, inputs: [f32([1])], error: 'Value' });
add({ name: 'clamp bool throws', op: 'clamp', attrs: { min: 0 }, inputs: [bool([1])], error: 'DType' });
for (const slope of [0.01, -2, 0]) {
  add({ name: `leaky_relu slope ${slope}`, op: 'leaky_relu', attrs: { slope }, inputs: [CLAMP_INPUT], tol: EXACT });
}
add({ name: 'leaky_relu signed zeros', op: 'leaky_relu', attrs: { slope: 0.1 }, inputs: [f32([0, -0])], tol: EXACT });
add({ name: 'leaky_relu inf slope throws', op: 'leaky_relu', attrs: { slope: 'inf' }, inputs: [f32([1])], error: 'Value' });
add({ name: 'leaky_relu i32 throws', op: 'leaky_relu', attrs: { slope: 0.1 }, inputs: [i32([1])], error: 'DType' });
for (const [beta, threshold] of [[1, 20], [2, 1], [0.5, 'inf'], [3, -1]]) {
  add({ name: `softplus beta ${beta} threshold ${threshold}`, op: 'softplus', attrs: { beta, threshold }, tol: EXACT,
    inputs: [f32([...SPECIAL, ...uniform(200, 72, -30, 30)])] });
}
add({ name: 'softplus beta 0 throws', op: 'softplus', attrs: { beta: 0, threshold: 20 }, inputs: [f32([1])], error: 'Value' });
add({ name: 'softplus nan threshold throws', op: 'softplus', attrs: { beta: 1, threshold: 'nan' }, inputs: [f32([1])], error: 'Value' });
add({ name: 'softplus i32 throws', op: 'softplus', attrs: { beta: 1, threshold: 20 }, inputs: [i32([1])], error: 'DType' });

// ---- compare, compare_scalar ----
const BOOL_ALL = [bool([0, 0, 1, 1]), bool([0, 1, 0, 1])];
for (const op of COMPARE) {
  add({ name: `compare ${op} f32 special x special`, op: 'compare', attrs: { op }, inputs: pairs([...SPECIAL, -1e-38, 2e-38]) });
  add({ name: `compare ${op} f32 broadcast`, op: 'compare', attrs: { op }, inputs: [tensor([3, 1, 4], 'f32', 81), tensor([2, 1], 'f32', 82)] });
  add({ name: `compare ${op} i32`, op: 'compare', attrs: { op }, inputs: [i32(INT_SPECIAL, [16, 1]), i32(INT_SPECIAL, [1, 16])] });
  add({ name: `compare ${op} bool`, op: 'compare', attrs: { op }, inputs: BOOL_ALL });
  add({ name: `compare ${op} empty`, op: 'compare', attrs: { op }, inputs: [f32([], [0]), f32([1])] });
  for (const scalar of [0, -0, 0.5, 1e-38, 'inf', '-inf', 'nan', 3.4e38]) {
    add({ name: `compare_scalar ${op} f32 ${scalar}`, op: 'compare_scalar', attrs: { op, scalar }, inputs: [f32([...SPECIAL, -1e-38])] });
  }
  for (const scalar of [3, -3, 2.5, -2.5, 1e10, -1e10, 'nan', INT_MAX, INT_MIN, 2147483647.5, -2147483648.5, 'inf']) {
    add({ name: `compare_scalar ${op} i32 ${scalar}`, op: 'compare_scalar', attrs: { op, scalar }, inputs: [i32(INT_SPECIAL)] });
  }
  for (const scalar of [0, 1, 0.5, -1, 2, 'nan']) {
    add({ name: `compare_scalar ${op} bool ${scalar}`, op: 'compare_scalar', attrs: { op, scalar }, inputs: [bool([0, 1, 1, 0])] });
  }
}
add({ name: 'compare dtypes differ', op: 'compare', attrs: { op: 'equal' }, inputs: [tensor([2]), tensor([2], 'i32')], error: 'DType' });
add({ name: 'compare shapes do not broadcast', op: 'compare', attrs: { op: 'lower' }, inputs: [tensor([2, 3]), tensor([2])], error: 'Shape' });
add({ name: 'compare_scalar empty', op: 'compare_scalar', attrs: { op: 'greater', scalar: 2.5 }, inputs: [i32([], [0, 2])] });

// ---- is_nan, is_inf ----
for (const op of ['is_nan', 'is_inf']) {
  add({ name: `${op} f32`, op, inputs: [f32([...SPECIAL, -1e-38])] });
  add({ name: `${op} i32`, op, inputs: [i32(INT_SPECIAL)] });
  add({ name: `${op} bool`, op, inputs: [bool([1, 0])] });
  add({ name: `${op} empty`, op, inputs: [f32([], [0])] });
}

// ---- bool logic ----
add({ name: 'bool_not', op: 'bool_not', inputs: [bool([0, 1, 1, 0, 1])] });
add({ name: 'bool_not i32 throws', op: 'bool_not', inputs: [i32([1])], error: 'DType' });
for (const op of ['bool_and', 'bool_or', 'bool_xor']) {
  add({ name: `${op} all pairs`, op, inputs: BOOL_ALL });
  add({ name: `${op} broadcast [3,1] x [1,4]`, op, inputs: [tensor([3, 1], 'bool', 91), tensor([1, 4], 'bool', 92)] });
  add({ name: `${op} empty`, op, inputs: [bool([], [0, 2]), bool([1, 0], [2])] });
  add({ name: `${op} f32 throws`, op, inputs: [f32([1]), bool([1])], error: 'DType' });
  add({ name: `${op} shapes do not broadcast`, op, inputs: [bool([1, 0, 1]), bool([1, 0])], error: 'Shape' });
}

// ---- mask_where, mask_fill ----
for (const dtype of ['f32', 'i32', 'bool']) {
  add({ name: `mask_where ${dtype} same shape`, op: 'mask_where',
    inputs: [tensor([4, 5], dtype, 101), tensor([4, 5], 'bool', 102), tensor([4, 5], dtype, 103)] });
  add({ name: `mask_where ${dtype} three-way broadcast`, op: 'mask_where',
    inputs: [tensor([3, 1, 2], dtype, 104), tensor([4, 1], 'bool', 105), tensor([2], dtype, 106)] });
  add({ name: `mask_fill ${dtype}`, op: 'mask_fill', attrs: { value: dtype === 'f32' ? -2.5 : 7 },
    inputs: [tensor([3, 4], dtype, 107), tensor([1, 4], 'bool', 108)] });
}
add({ name: 'mask_where x as the value too (one buffer, two operands)', op: 'mask_where_self', inputs: [tensor([3, 4], 'f32', 109), tensor([4], 'bool', 110)] });
add({ name: 'mask_where keeps special f32 bits', op: 'mask_where', inputs: [f32(SPECIAL), bool(SPECIAL.map((_, i) => i % 2)), f32([...SPECIAL].reverse())] });
add({ name: 'mask_fill f32 nan', op: 'mask_fill', attrs: { value: 'nan' }, inputs: [f32([1, 2, 3]), bool([1, 0, 1])] });
add({ name: 'mask_fill f32 subnormal', op: 'mask_fill', attrs: { value: 1e-38 }, inputs: [f32([1, 2, 3]), bool([1, 0, 1])], tol: { abs: 0, rel: 0 } });
add({ name: 'mask_fill bool 0.5 is true', op: 'mask_fill', attrs: { value: 0.5 }, inputs: [bool([0, 0, 1]), bool([1, 0, 1])] });
add({ name: 'mask_where empty', op: 'mask_where', inputs: [f32([], [0, 2]), bool([1, 0]), f32([1, 2])] });
add({ name: 'mask_where mask not bool throws', op: 'mask_where', inputs: [f32([1]), f32([1]), f32([1])], error: 'DType' });
add({ name: 'mask_where value dtype differs throws', op: 'mask_where', inputs: [f32([1]), bool([1]), i32([1])], error: 'DType' });
add({ name: 'mask_where shapes do not broadcast', op: 'mask_where', inputs: [f32([1, 2]), bool([1, 0, 1]), f32([1])], error: 'Shape' });
add({ name: 'mask_fill i32 non-integer value throws', op: 'mask_fill', attrs: { value: 0.5 }, inputs: [i32([1]), bool([1])], error: 'Value' });
add({ name: 'mask_fill mask not bool throws', op: 'mask_fill', attrs: { value: 1 }, inputs: [i32([1]), i32([1])], error: 'DType' });
