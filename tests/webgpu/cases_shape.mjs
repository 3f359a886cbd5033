// Cases of the matmul and shape ops (engine/src/wgpu/matmul_ops.cpp, shape_ops.cpp; ops
// registered in tests/webgpu/ops_shape.cpp). See cases_creation.mjs for the case format.
//
// Matmul tolerances: both backends accumulate each output in f32, in different orders (the
// Cpu's packed GEMM blocks k and may fuse multiply-adds; the kernel sums k in order), so they
// differ by rounding. For the uniform [-1, 1) inputs of tensor(), each of the k roundings is
// at most eps/2·|partial sum| with partial sums up to ~sqrt(k), adding up like a random walk:
// |gpu - cpu| ~ eps·k/10 or less, whatever the result's size (it may cancel to ~0), so the
// bound is absolute. Measured on SwiftShader: bit-exact for k <= 203, max |diff| 4.8e-6 =
// 0.1·eps·k for k = 320 (and 0.05·eps·k for k = 300). gemmTol(k): abs 1e-6 + eps·k/2 (5× the
// worst seen), rel 1e-5 (the default).
// SwiftShader flushes subnormal products to zero (WGSL allows it): 1e-38·1 gives 0 where the
// Cpu gives 1e-38, within the default abs 1e-6.
// Shape ops copy 32-bit words: exact (the default tolerance only matters for -0 vs 0).
import { SPECIAL, tensor } from './support.mjs';

const EPS = 2 ** -23;
const gemmTol = (k) => ({ abs: 1e-6 + EPS * k / 2, rel: 1e-5 });

/** matmul case: lhs/rhs shapes, optional flags (tl, tr) for matmul_transposed. */
function mm(name, ls, rs, { tl, tr, seed = 1, k } = {}) {
  const op = tl || tr ? 'matmul_transposed' : 'matmul';
  const kk = k ?? (tl ? ls[ls.length - 2] : ls[ls.length - 1]);
  return {
    name: `${op} ${name}`, op,
    inputs: [tensor(ls, 'f32', seed), tensor(rs, 'f32', seed + 100)],
    attrs: op === 'matmul' ? {} : { tl: !!tl, tr: !!tr },
    tol: gemmTol(kk),
  };
}

const DTYPES = ['f32', 'i32', 'bool'];

// Which kernel a case runs (engine/src/wgpu/matmul_ops.cpp): tiled unless its outputs fill
// less than an eighth of their 64×64 tiles, then one thread per output.
const matmulCases = [
  // per output
  mm('2x3 . 3x4 (per output)', [2, 3], [3, 4]),
  mm('1x1 . 1x1 (per output)', [1, 1], [1, 1]),
  mm('row vector 1x300 . 300x129 (per output)', [1, 300], [300, 129]),
  mm('column 129x7 . 7x1 (per output)', [129, 7], [7, 1]),
  mm('k = 0 gives zeros (per output)', [3, 0], [0, 4]),
  mm('batch 300 of 3x5 . 5x2 (per output)', [300, 3, 5], [300, 5, 2]),
  mm('batch 70,000 of 1x1 . 1x1 (per output, 274 workgroups)', [70000, 1, 1], [70000, 1, 1]),
  mm('rank 4, both sides broadcast (per output)', [2, 1, 3, 5], [1, 4, 5, 6]),
  mm('rank 8 batch broadcast (per output)', [2, 1, 2, 1, 2, 1, 3, 4], [1, 2, 1, 2, 1, 2, 4, 3]),
  mm('transposed lhs, rhs batch 1 (per output)', [3, 9, 5], [1, 9, 4], { tl: true }),
  mm('transposed rhs, lhs batch 1 (per output)', [1, 5, 9], [3, 4, 9], { tr: true }),
  mm('both transposed (per output)', [9, 5], [4, 9], { tl: true, tr: true }),
  // tiled
  mm('one full 64x64 tile, k = 64 (tiled)', [64, 64], [64, 64]),
  mm('edges: 65x17 . 17x63 (tiled)', [65, 17], [17, 63]),
  mm('several tiles, k not a multiple of 16: 130x203 . 203x70 (tiled)', [130, 203], [203, 70]),
  mm('k = 1 outer product 33x70 (tiled)', [33, 1], [1, 70]),
  mm('k = 0 gives zeros (tiled)', [64, 0], [0, 64]),
  mm('batch 3 . 3 (tiled)', [3, 40, 9], [3, 9, 60]),
  mm('lhs batch 1 broadcasts (tiled)', [1, 50, 7], [4, 7, 66]),
  mm('rhs batch 1 broadcasts (tiled)', [4, 50, 7], [1, 7, 66]),
  mm('rank 4, both sides broadcast (tiled)', [2, 1, 40, 24], [1, 3, 24, 50]),
  mm('rank 8 batch broadcast (tiled)', [2, 1, 1, 1, 1, 2, 33, 20], [1, 2, 1, 1, 1, 1, 20, 40]),
  mm('bigger: 200x320 . 320x150 (tiled)', [200, 320], [320, 150]),
  mm('transposed lhs: [k, m] = 17x65 (tiled)', [17, 65], [17, 63], { tl: true }),
  mm('transposed rhs: [n, k] = 63x17 (tiled)', [65, 17], [63, 17], { tr: true }),
  mm('both transposed, edges (tiled)', [40, 70], [66, 40], { tl: true, tr: true }),
  mm('neither flag of matmul_transposed (tiled)', [50, 6], [6, 70], { tl: false, tr: false, seed: 3 }),
  mm('transposed lhs, rhs batch 1 (tiled)', [3, 20, 40], [1, 20, 50], { tl: true }),
  mm('transposed rhs, lhs batch 1 (tiled)', [1, 40, 20], [3, 50, 20], { tr: true }),
  mm('both transposed, rank 4 broadcast (tiled)', [2, 1, 33, 18], [1, 3, 70, 33], { tl: true, tr: true }),
  // empty
  mm('m = 0', [0, 5], [5, 3]),
  mm('n = 0', [4, 5], [5, 0]),
  mm('empty batch', [0, 2, 3], [0, 3, 4]),
  mm('empty broadcast batch', [0, 2, 3], [1, 3, 4]),
  mm('transposed, k = 0', [0, 3], [4, 0], { tl: true, tr: true }),
  {
    name: 'matmul of a tensor by itself (one buffer bound twice, read-only; tiled)', op: 'matmul',
    inputs: [tensor([70, 70], 'f32', 5)], attrs: { self: true }, tol: gemmTol(70),
  },
  {
    name: 'matmul_transposed x^T x of one buffer (tiled)', op: 'matmul_transposed',
    inputs: [tensor([20, 30], 'f32', 6)], attrs: { self: true, tl: true }, tol: gemmTol(20),
  },
  {
    // nan and inf poison their row/column (nan·0 and inf·0 are nan, inf + -inf is nan);
    // finite values stay finite (|a·b| <= 1e3·4 here: no overflow in any order).
    name: 'matmul nan and inf propagate', op: 'matmul',
    inputs: [
      { shape: [3, 4], dtype: 'f32', data: [1, NaN, 2, 3, 4, 5, 6, 7, Infinity, 0, 1, 2] },
      { shape: [4, 5], dtype: 'f32', data: [1, 2, 3, 4, 5, 0, 1e3, -1e3, 2, 1, 3, 1, 0, -Infinity, 2, 1, 1, 1, 1, 1] },
    ],
    tol: gemmTol(4),
  },
  {
    name: 'matmul special values (each column meets every one)', op: 'matmul',
    inputs: [{ shape: [SPECIAL.length, 1], dtype: 'f32', data: SPECIAL }, { shape: [1, 4], dtype: 'f32', data: [0, 1, -1, 0.5] }],
  },
  // Errors: the Cpu's checks (cpu/ops/shape_checks.hpp), the same messages.
  { name: 'matmul rank 1', op: 'matmul', inputs: [tensor([3]), tensor([3, 2])], error: 'Rank' },
  { name: 'matmul rank 2 vs rank 4', op: 'matmul', inputs: [tensor([2, 3]), tensor([1, 1, 3, 2])], error: 'Rank' },
  { name: 'matmul i32', op: 'matmul', inputs: [tensor([2, 3], 'i32'), tensor([3, 2], 'i32')], error: 'DType' },
  { name: 'matmul bool rhs', op: 'matmul', inputs: [tensor([2, 3]), tensor([3, 2], 'bool')], error: 'DType' },
  { name: 'matmul inner dims differ', op: 'matmul', inputs: [tensor([2, 3]), tensor([4, 2])], error: 'Shape' },
  { name: 'matmul_transposed inner dims differ', op: 'matmul_transposed', inputs: [tensor([2, 3]), tensor([2, 3])], attrs: { tl: true, tr: true }, error: 'Shape' },
  { name: 'matmul batch dims do not broadcast', op: 'matmul', inputs: [tensor([2, 2, 3]), tensor([3, 3, 2])], error: 'Shape' },
  {
    // permute, slice (negative step) and flip on the device, then a matmul of that
    // device-only result: exercises every op on inputs without a host copy.
    name: 'chain permute -> slice -> flip -> matmul', op: 'chain',
    inputs: [tensor([6, 5, 4], 'f32', 9), tensor([2, 5, 3], 'f32', 10)],
    attrs: { axes: [2, 0, 1], ranges: [[0, null, 2], [1, 6, -2]], dims: [0, 2] }, tol: gemmTol(5),
  },
];

const reshapeCases = [
  ...DTYPES.map((dt, i) => ({ name: `reshape ${dt} [2, 3, 4] -> [4, -1]`, op: 'reshape', inputs: [tensor([2, 3, 4], dt, 20 + i)], attrs: { dims: [4, -1] } })),
  { name: 'reshape to rank 0', op: 'reshape', inputs: [tensor([1, 1])], attrs: { dims: [] } },
  { name: 'reshape to rank 8', op: 'reshape', inputs: [tensor([6, 4])], attrs: { dims: [1, 2, 1, 3, 1, 2, 2, 1] } },
  { name: 'reshape empty [0, 3] -> [3, 0, 5]', op: 'reshape', inputs: [tensor([0, 3])], attrs: { dims: [3, 0, 5] } },
  { name: 'reshape two -1', op: 'reshape', inputs: [tensor([2, 3])], attrs: { dims: [-1, -1] }, error: 'Shape' },
  { name: 'reshape -1 not dividing', op: 'reshape', inputs: [tensor([2, 3])], attrs: { dims: [4, -1] }, error: 'Shape' },
  { name: 'reshape -1 ambiguous with a 0', op: 'reshape', inputs: [tensor([0, 3])], attrs: { dims: [0, -1] }, error: 'Shape' },
  { name: 'reshape dim below -1', op: 'reshape', inputs: [tensor([2, 3])], attrs: { dims: [-2, 3] }, error: 'Value' },
  { name: 'reshape element count differs', op: 'reshape', inputs: [tensor([2, 3])], attrs: { dims: [4, 2] }, error: 'Shape' },
  { name: 'reshape rank 9', op: 'reshape', inputs: [tensor([2])], attrs: { dims: [1, 1, 1, 1, 1, 1, 1, 1, 2] }, error: 'Limit' },
];

const permuteCases = [
  ...DTYPES.map((dt, i) => ({ name: `permute ${dt} [2, 3, 4] by [2, 0, 1]`, op: 'permute', inputs: [tensor([2, 3, 4], dt, 30 + i)], attrs: { axes: [2, 0, 1] } })),
  { name: 'permute 2-D transpose 300x257 (77,100 elements, 302 workgroups)', op: 'permute', inputs: [tensor([300, 257], 'f32', 33)], attrs: { axes: [1, 0] } },
  { name: 'permute rank 8 reversed', op: 'permute', inputs: [tensor([2, 3, 1, 2, 2, 1, 3, 2], 'i32', 34)], attrs: { axes: [7, 6, 5, 4, 3, 2, 1, 0] } },
  { name: 'permute moving only size-1 dims (no copy)', op: 'permute', inputs: [tensor([1, 3, 1, 4], 'f32', 35)], attrs: { axes: [2, 1, 0, 3] } },
  { name: 'permute identity', op: 'permute', inputs: [tensor([3, 4], 'bool', 36)], attrs: { axes: [0, 1] } },
  { name: 'permute rank 0', op: 'permute', inputs: [{ shape: [], dtype: 'f32', data: [2.5] }], attrs: { axes: [] } },
  { name: 'permute empty', op: 'permute', inputs: [tensor([2, 0, 3])], attrs: { axes: [2, 1, 0] } },
  { name: 'permute special values', op: 'permute', inputs: [{ shape: [3, 4], dtype: 'f32', data: SPECIAL }], attrs: { axes: [1, 0] } },
  { name: 'permute wrong axis count', op: 'permute', inputs: [tensor([2, 3])], attrs: { axes: [0] }, error: 'Rank' },
  { name: 'permute not a permutation', op: 'permute', inputs: [tensor([2, 3])], attrs: { axes: [1, 1] }, error: 'Index' },
  { name: 'permute axis out of range', op: 'permute', inputs: [tensor([2, 3])], attrs: { axes: [0, 2] }, error: 'Index' },
];

const expandCases = [
  ...DTYPES.map((dt, i) => ({ name: `expand ${dt} [3, 1] -> [2, 3, 4]`, op: 'expand', inputs: [tensor([3, 1], dt, 40 + i)], attrs: { dims: [2, 3, 4] } })),
  { name: 'expand -1 keeps a dim', op: 'expand', inputs: [tensor([1, 5], 'f32', 43)], attrs: { dims: [4, -1] } },
  { name: 'expand middle and leading dims', op: 'expand', inputs: [tensor([2, 1, 3], 'i32', 44)], attrs: { dims: [2, 2, 5, 3] } },
  { name: 'expand same element count (no copy)', op: 'expand', inputs: [tensor([3, 4], 'f32', 45)], attrs: { dims: [1, 3, 4] } },
  { name: 'expand scalar to 70,000', op: 'expand', inputs: [{ shape: [1], dtype: 'f32', data: [NaN] }], attrs: { dims: [70000] } },
  { name: 'expand to rank 8', op: 'expand', inputs: [tensor([2, 1], 'f32', 46)], attrs: { dims: [2, 1, 2, 1, 2, 1, 2, 3] } },
  { name: 'expand to empty', op: 'expand', inputs: [tensor([1, 3])], attrs: { dims: [0, 3] } },
  { name: 'expand target rank too small', op: 'expand', inputs: [tensor([2, 3])], attrs: { dims: [3] }, error: 'Rank' },
  { name: 'expand negative new dim', op: 'expand', inputs: [tensor([2, 3])], attrs: { dims: [-1, 2, 3] }, error: 'Value' },
  { name: 'expand dim below -1', op: 'expand', inputs: [tensor([1, 3])], attrs: { dims: [-2, 3] }, error: 'Value' },
  { name: 'expand a dim of size 3', op: 'expand', inputs: [tensor([3, 1])], attrs: { dims: [4, 1] }, error: 'Shape' },
  { name: 'expand past the element limit', op: 'expand', inputs: [tensor([1, 1])], attrs: { dims: [65536, 65536] }, error: 'Limit' },
];

const repeatCases = [
  ...DTYPES.map((dt, i) => ({ name: `repeat_dim ${dt} dim 0 x3`, op: 'repeat_dim', inputs: [tensor([2, 3], dt, 50 + i)], attrs: { dim: 0, times: 3 } })),
  { name: 'repeat_dim middle dim', op: 'repeat_dim', inputs: [tensor([2, 3, 4], 'f32', 53)], attrs: { dim: 1, times: 2 } },
  { name: 'repeat_dim last dim (negative)', op: 'repeat_dim', inputs: [tensor([2, 3], 'i32', 54)], attrs: { dim: -1, times: 4 } },
  { name: 'repeat_dim times 0', op: 'repeat_dim', inputs: [tensor([2, 3])], attrs: { dim: 1, times: 0 } },
  { name: 'repeat_dim times 1', op: 'repeat_dim', inputs: [tensor([2, 3], 'bool', 55)], attrs: { dim: 0, times: 1 } },
  { name: 'repeat_dim empty', op: 'repeat_dim', inputs: [tensor([0, 3])], attrs: { dim: 1, times: 5 } },
  { name: 'repeat_dim dim out of range', op: 'repeat_dim', inputs: [tensor([2, 3])], attrs: { dim: 2, times: 2 }, error: 'Index' },
  { name: 'repeat_dim negative times', op: 'repeat_dim', inputs: [tensor([2, 3])], attrs: { dim: 0, times: -1 }, error: 'Value' },
  { name: 'repeat_dim past the element limit', op: 'repeat_dim', inputs: [tensor([2, 3])], attrs: { dim: 0, times: 2 ** 30 }, error: 'Limit' },
];

const flipCases = [
  ...DTYPES.map((dt, i) => ({ name: `flip ${dt} dims [0, 2]`, op: 'flip', inputs: [tensor([2, 3, 4], dt, 60 + i)], attrs: { dims: [0, 2] } })),
  { name: 'flip negative dim', op: 'flip', inputs: [tensor([3, 5], 'f32', 63)], attrs: { dims: [-1] } },
  { name: 'flip every dim of rank 8', op: 'flip', inputs: [tensor([2, 2, 1, 3, 2, 1, 2, 2], 'i32', 64)], attrs: { dims: [0, 1, 2, 3, 4, 5, 6, 7] } },
  { name: 'flip a size-1 dim only (no copy)', op: 'flip', inputs: [tensor([1, 4], 'f32', 65)], attrs: { dims: [0] } },
  { name: 'flip no dims', op: 'flip', inputs: [tensor([3, 4], 'f32', 66)], attrs: { dims: [] } },
  { name: 'flip empty', op: 'flip', inputs: [tensor([0, 4])], attrs: { dims: [1] } },
  { name: 'flip special values', op: 'flip', inputs: [{ shape: [SPECIAL.length], dtype: 'f32', data: SPECIAL }], attrs: { dims: [0] } },
  { name: 'flip dim twice', op: 'flip', inputs: [tensor([2, 3])], attrs: { dims: [1, -1] }, error: 'Index' },
  { name: 'flip dim out of range', op: 'flip', inputs: [tensor([2, 3])], attrs: { dims: [2] }, error: 'Index' },
];

const sliceCases = [
  ...DTYPES.map((dt, i) => ({ name: `slice ${dt} ranges with steps`, op: 'slice', inputs: [tensor([5, 6, 7], dt, 70 + i)], attrs: { ranges: [[1, 4], [0, null, 2], [-5, -1, 3]] } })),
  { name: 'slice negative step (Burn: from the end of the range)', op: 'slice', inputs: [tensor([7, 8], 'f32', 73)], attrs: { ranges: [[1, 6, -2], [0, null, -1]] } },
  { name: 'slice negative step larger than the range', op: 'slice', inputs: [tensor([7, 3], 'i32', 74)], attrs: { ranges: [[2, 5, -10]] } },
  { name: 'slice fewer ranges than dims', op: 'slice', inputs: [tensor([4, 3, 2], 'f32', 75)], attrs: { ranges: [[2, 3]] } },
  { name: 'slice whole (no copy)', op: 'slice', inputs: [tensor([4, 3], 'bool', 76)], attrs: { ranges: [[], [0, 3]] } },
  { name: 'slice empty range', op: 'slice', inputs: [tensor([4, 3], 'f32', 77)], attrs: { ranges: [[2, 2]] } },
  { name: 'slice single index -1', op: 'slice', inputs: [tensor([4, 3], 'f32', 78)], attrs: { ranges: [[], [-1, null]] } },
  { name: 'slice 70,000 of 140,000 (step 2)', op: 'slice', inputs: [tensor([140000], 'f32', 79)], attrs: { ranges: [[1, null, 2]] } },
  { name: 'slice too many ranges', op: 'slice', inputs: [tensor([4, 3])], attrs: { ranges: [[], [], []] }, error: 'Rank' },
  { name: 'slice step 0', op: 'slice', inputs: [tensor([4, 3])], attrs: { ranges: [[0, 2, 0]] }, error: 'Value' },
  { name: 'slice out of bounds', op: 'slice', inputs: [tensor([4, 3])], attrs: { ranges: [[0, 5]] }, error: 'Index' },
  { name: 'slice start after end', op: 'slice', inputs: [tensor([4, 3])], attrs: { ranges: [[3, 1]] }, error: 'Index' },
];

const sliceAssignCases = [
  ...DTYPES.map((dt, i) => ({ name: `slice_assign ${dt} with steps`, op: 'slice_assign', inputs: [tensor([5, 6], dt, 80 + i), tensor([2, 3], dt, 90 + i)], attrs: { ranges: [[1, 4, 2], [0, null, 2]] } })),
  { name: 'slice_assign negative steps', op: 'slice_assign', inputs: [tensor([6, 4, 3], 'f32', 83), tensor([3, 4, 2], 'f32', 93)], attrs: { ranges: [[0, null, -2], [], [1, 3, -1]] } },
  { name: 'slice_assign the whole tensor', op: 'slice_assign', inputs: [tensor([3, 4], 'i32', 84), tensor([3, 4], 'i32', 94)], attrs: { ranges: [] } },
  { name: 'slice_assign empty values', op: 'slice_assign', inputs: [tensor([3, 4], 'f32', 85), tensor([0, 4])], attrs: { ranges: [[1, 1]] } },
  { name: 'slice_assign of a tensor into itself (one buffer)', op: 'slice_assign', inputs: [tensor([3, 2], 'f32', 86)], attrs: { ranges: [[0, null, -1]], self: true } },
  { name: 'slice_assign dtype differs', op: 'slice_assign', inputs: [tensor([3, 4]), tensor([1, 4], 'i32')], attrs: { ranges: [[0, 1]] }, error: 'DType' },
  { name: 'slice_assign shape differs', op: 'slice_assign', inputs: [tensor([3, 4]), tensor([2, 4])], attrs: { ranges: [[0, 1]] }, error: 'Shape' },
  { name: 'slice_assign range out of bounds', op: 'slice_assign', inputs: [tensor([3, 4]), tensor([1, 4])], attrs: { ranges: [[3, 4]] }, error: 'Index' },
];

const catCases = [
  ...DTYPES.map((dt, i) => ({ name: `cat ${dt} dim 0, three tensors`, op: 'cat', inputs: [tensor([2, 3], dt, 100 + i), tensor([1, 3], dt, 110 + i), tensor([4, 3], dt, 120 + i)], attrs: { dim: 0 } })),
  ...DTYPES.map((dt, i) => ({ name: `cat ${dt} dim 1`, op: 'cat', inputs: [tensor([2, 3, 2], dt, 130 + i), tensor([2, 1, 2], dt, 140 + i)], attrs: { dim: 1 } })),
  { name: 'cat last dim (negative), one input empty', op: 'cat', inputs: [tensor([3, 2], 'f32', 150), tensor([3, 0]), tensor([3, 5], 'f32', 151)], attrs: { dim: -1 } },
  { name: 'cat five tensors, dim 2 of rank 4', op: 'cat', inputs: [1, 2, 3, 1, 2].map((n, i) => tensor([2, 2, n, 3], 'i32', 160 + i)), attrs: { dim: 2 } },
  { name: 'cat a tensor with itself (one buffer)', op: 'cat', inputs: [tensor([2, 3], 'bool', 173)], attrs: { dim: 1, twice: true } },
  { name: 'cat one tensor', op: 'cat', inputs: [tensor([2, 3], 'f32', 170)], attrs: { dim: 0 } },
  { name: 'cat into empty output', op: 'cat', inputs: [tensor([0, 3]), tensor([0, 2])], attrs: { dim: 1 } },
  { name: 'cat 2 x 70,000', op: 'cat', inputs: [tensor([70000], 'f32', 171), tensor([70000], 'f32', 172)], attrs: { dim: 0 } },
  { name: 'cat no tensors', op: 'cat', inputs: [], attrs: { dim: 0 }, error: 'Value' },
  { name: 'cat dtype differs', op: 'cat', inputs: [tensor([2, 3]), tensor([2, 3], 'i32')], attrs: { dim: 0 }, error: 'DType' },
  { name: 'cat shape differs', op: 'cat', inputs: [tensor([2, 3]), tensor([2, 4])], attrs: { dim: 0 }, error: 'Shape' },
  { name: 'cat rank differs', op: 'cat', inputs: [tensor([2, 3]), tensor([2, 3, 1])], attrs: { dim: 0 }, error: 'Shape' },
  { name: 'cat dim out of range', op: 'cat', inputs: [tensor([2, 3]), tensor([2, 3])], attrs: { dim: 2 }, error: 'Index' },
];

export const cases = [
  ...matmulCases, ...reshapeCases, ...permuteCases, ...expandCases, ...repeatCases,
  ...flipCases, ...sliceCases, ...sliceAssignCases, ...catCases,
];
