// Cases of the indexing and pooling ops (engine/src/wgpu/index_ops.cpp, pool_ops.cpp; harness
// ops in ops_index.cpp). The case format is cases_creation.mjs's. Index inputs keep their
// host copy (from_data), so the Cpu's value checks run on both backends, except in the
// `device_only` cases and the *_unchecked ones (out-of-range indices the kernels skip: the
// device check makes the next read reject with `Index` naming the op, readError; a second
// read then shows the zeros the op used).
import { SPECIAL, ints, tensor } from './support.mjs';

const f32 = (shape, data) => ({ shape, dtype: 'f32', data });
const i32 = (shape, data) => ({ shape, dtype: 'i32', data });
const bool = (shape, data) => ({ shape, dtype: 'bool', data });
const numel = (shape) => shape.reduce((a, b) => a * b, 1);

/** Integer-valued f32 data (many ties in max pools, exact sums). */
const small = (shape, seed) => f32(shape, ints(numel(shape), seed, -4, 5));

/** x [.., size, ..] with a slice of zeros appended along dim (the reads the Wgpu kernels skip). */
function padAlong(x, dim) {
  const outer = numel(x.shape.slice(0, dim));
  const size = x.shape[dim];
  const inner = numel(x.shape.slice(dim + 1));
  const data = [];
  for (let o = 0; o < outer; o++) {
    data.push(...x.data.slice(o * size * inner, (o + 1) * size * inner));
    for (let k = 0; k < inner; k++) data.push(0);
  }
  const shape = [...x.shape];
  shape[dim] = size + 1;
  return { shape, dtype: x.dtype, data };
}

/** The values with the slices along dim at positions `bad` zeroed (additions that add nothing). */
function zeroAlong(v, dim, bad) {
  const size = v.shape[dim];
  const inner = numel(v.shape.slice(dim + 1));
  return { ...v, data: v.data.map((x, i) => (bad(Math.floor(i / inner) % size, i) ? 0 : x)) };
}

// ---------------------------------------------------------------- select
const select = [
  { name: 'select f32 dim 0, repeated and negative indices', op: 'select', inputs: [tensor([5, 4], 'f32', 1), i32([6], [4, 0, -1, 2, 2, -5])], attrs: { dim: 0 } },
  { name: 'select f32 dim -2 of rank 3', op: 'select', inputs: [tensor([3, 6, 4], 'f32', 2), i32([3], [5, -6, 1])], attrs: { dim: -2 } },
  { name: 'select i32 last dim', op: 'select', inputs: [tensor([4, 5], 'i32', 3, -1000, 1000), i32([7], [0, 4, 4, -2, 1, 3, 0])], attrs: { dim: 1 } },
  { name: 'select bool dim 0', op: 'select', inputs: [tensor([3, 4], 'bool', 4), i32([4], [2, 2, 0, -3])], attrs: { dim: 0 } },
  { name: 'select rank 8', op: 'select', inputs: [tensor([2, 1, 2, 1, 2, 1, 3, 2], 'f32', 5), i32([4], [2, 0, -1, 1])], attrs: { dim: 6 } },
  { name: 'select special values (bits kept)', op: 'select', inputs: [f32([SPECIAL.length], SPECIAL), i32([12], [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0])], attrs: { dim: 0 } },
  { name: 'select no indices', op: 'select', inputs: [tensor([3, 4], 'f32', 6), i32([0], [])], attrs: { dim: 1 } },
  { name: 'select empty tensor', op: 'select', inputs: [f32([0, 3], []), i32([2], [2, -3])], attrs: { dim: 1 } },
  { name: 'select device-only indices', op: 'select', inputs: [tensor([5, 6], 'f32', 7), i32([5], [-1, 3, 0, -6, 5])], attrs: { dim: 1, device_only: true } },
  { name: 'select 75,000 elements (2-D grid)', op: 'select', inputs: [tensor([300, 250], 'f32', 8), i32([300], ints(300, 9, -300, 300))], attrs: { dim: 0 } },
  { name: 'select the tensor by itself (one buffer twice)', op: 'select_self', inputs: [i32([5], [4, -1, 0, 2, 2])] },
  { name: 'select index too large', op: 'select', inputs: [tensor([3, 4], 'f32', 1), i32([3], [0, 4, 1])], attrs: { dim: 1 }, error: 'Index' },
  { name: 'select index below -size', op: 'select', inputs: [tensor([3, 4], 'f32', 1), i32([2], [-3, -4])], attrs: { dim: 0 }, error: 'Index' },
  { name: 'select f32 indices', op: 'select', inputs: [tensor([3, 4], 'f32', 1), f32([1], [0])], attrs: { dim: 0 }, error: 'DType' },
  { name: 'select rank-2 indices', op: 'select', inputs: [tensor([3, 4], 'f32', 1), i32([1, 1], [0])], attrs: { dim: 0 }, error: 'Rank' },
  { name: 'select dim out of range', op: 'select', inputs: [tensor([3, 4], 'f32', 1), i32([1], [0])], attrs: { dim: 2 }, error: 'Index' },
];

{
  const x = tensor([4, 3], 'f32', 11);
  const xi = tensor([3, 4, 2], 'i32', 12);
  select.push(
    { name: 'select device-only indices out of range are skipped (gap: zeros)', op: 'select_unchecked', readError: 'Index', readMessage: /^select: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [x, i32([4], [1, 7, -9, 2]), padAlong(x, 0), i32([4], [1, 4, 4, 2])], attrs: { dim: 0 } },
    { name: 'select i32 device-only out of range dim 1 (gap)', op: 'select_unchecked', readError: 'Index', readMessage: /^select: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [xi, i32([3], [-5, 3, 4]), padAlong(xi, 1), i32([3], [4, 3, 4])], attrs: { dim: 1 } },
  );
}

// ---------------------------------------------------------------- select_assign
const selectAssign = [
  { name: 'select_assign f32 dim 0, repeated indices accumulate in order', op: 'select_assign', inputs: [tensor([4, 3], 'f32', 1), i32([6], [1, -1, 1, 0, 1, 3]), tensor([6, 3], 'f32', 2, -1e4, 1e4)], attrs: { dim: 0 } },
  { name: 'select_assign f32 dim 1 of rank 3', op: 'select_assign', inputs: [tensor([2, 5, 3], 'f32', 3), i32([4], [4, 0, 4, -5]), tensor([2, 4, 3], 'f32', 4)], attrs: { dim: 1 } },
  { name: 'select_assign i32 wraps around', op: 'select_assign', inputs: [i32([3], [2147483647, -2147483648, 5]), i32([4], [0, 1, 1, 2]), i32([4], [1, -1, -7, 3])], attrs: { dim: 0 } },
  { name: 'select_assign bool ors', op: 'select_assign', inputs: [bool([2, 3], [0, 1, 0, 0, 0, 0]), i32([3], [1, 1, 0]), bool([2, 3], [0, 1, 0, 1, 1, 0])], attrs: { dim: -1 } },
  { name: 'select_assign special values', op: 'select_assign', inputs: [f32([SPECIAL.length], SPECIAL), i32([12], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]), f32([SPECIAL.length], [...SPECIAL].reverse())], attrs: { dim: 0 } },
  { name: 'select_assign no indices returns the tensor', op: 'select_assign', inputs: [tensor([3, 2], 'f32', 5), i32([0], []), f32([0, 2], [])], attrs: { dim: 0 } },
  { name: 'select_assign empty tensor', op: 'select_assign', inputs: [f32([2, 0], []), i32([3], [0, 1, 1]), f32([3, 0], [])], attrs: { dim: 0 } },
  { name: 'select_assign device-only indices (inverse index built on the device)', op: 'select_assign', inputs: [tensor([5, 4], 'f32', 6), i32([7], [4, -1, 0, 2, 2, -5, 3]), tensor([7, 4], 'f32', 7)], attrs: { dim: 0, device_only: true } },
  { name: 'select_assign device-only, dim 1, 300 indices over 257 rows', op: 'select_assign', inputs: [tensor([3, 257, 2], 'f32', 8), i32([300], ints(300, 9, -257, 257)), tensor([3, 300, 2], 'f32', 10)], attrs: { dim: 1, device_only: true } },
  { name: 'select_assign embedding-sized, 70,000 elements', op: 'select_assign', inputs: [f32([1000, 70], new Array(70000).fill(0)), i32([300], ints(300, 11, 0, 1000)), tensor([300, 70], 'f32', 12)], attrs: { dim: 0 } },
  { name: 'select_assign index out of range', op: 'select_assign', inputs: [tensor([3, 2], 'f32', 1), i32([2], [0, 3]), tensor([2, 2], 'f32', 2)], attrs: { dim: 0 }, error: 'Index' },
  { name: 'select_assign values dtype differs', op: 'select_assign', inputs: [tensor([3, 2], 'f32', 1), i32([2], [0, 1]), tensor([2, 2], 'i32', 2)], attrs: { dim: 0 }, error: 'DType' },
  { name: 'select_assign values shape differs', op: 'select_assign', inputs: [tensor([3, 2], 'f32', 1), i32([2], [0, 1]), tensor([2, 3], 'f32', 2)], attrs: { dim: 0 }, error: 'Shape' },
  { name: 'select_assign bool indices', op: 'select_assign', inputs: [tensor([3, 2], 'f32', 1), bool([2], [0, 1]), tensor([2, 2], 'f32', 2)], attrs: { dim: 0 }, error: 'DType' },
];

{
  const x = tensor([4, 3], 'f32', 13, 0.5, 2);  // no -0: x + 0 is x
  const v = tensor([5, 3], 'f32', 14);
  const idx = [0, 9, 2, -7, 2];
  const bad = (i) => idx[i] < -4 || idx[i] >= 4;
  selectAssign.push({ name: 'select_assign device-only indices out of range add nothing (gap)', op: 'select_assign_unchecked', readError: 'Index', readMessage: /^selectAssign: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [x, i32([5], idx), v, i32([5], idx.map((j, i) => (bad(i) ? 0 : j))), zeroAlong(v, 0, bad)], attrs: { dim: 0 } });
}

// ---------------------------------------------------------------- gather
const gather = [
  { name: 'gather f32 dim 0', op: 'gather', inputs: [tensor([3, 4], 'f32', 1), i32([2, 4], [2, 0, 1, 2, 0, 0, 2, 1])], attrs: { dim: 0 } },
  { name: 'gather f32 dim 1, indices smaller than x', op: 'gather', inputs: [tensor([3, 5], 'f32', 2), i32([2, 7], ints(14, 3, 0, 5))], attrs: { dim: 1 } },
  { name: 'gather i32 dim -1 of rank 4', op: 'gather', inputs: [tensor([2, 3, 2, 4], 'i32', 4, -100, 100), i32([2, 2, 2, 3], ints(24, 5, 0, 4))], attrs: { dim: -1 } },
  { name: 'gather bool dim 1 of rank 3', op: 'gather', inputs: [tensor([2, 3, 4], 'bool', 6), i32([2, 5, 3], ints(30, 7, 0, 3))], attrs: { dim: 1 } },
  { name: 'gather rank 8, dim 6', op: 'gather', inputs: [tensor([2, 1, 2, 1, 2, 1, 3, 2], 'f32', 16), i32([2, 1, 2, 1, 2, 1, 2, 2], ints(32, 17, 0, 3))], attrs: { dim: 6 } },
  { name: 'gather special values', op: 'gather', inputs: [f32([2, 6], SPECIAL), i32([2, 6], [5, 4, 3, 2, 1, 0, 0, 1, 2, 3, 4, 5])], attrs: { dim: 1 } },
  { name: 'gather empty indices', op: 'gather', inputs: [tensor([3, 4], 'f32', 8), i32([0, 4], [])], attrs: { dim: 0 } },
  { name: 'gather device-only indices', op: 'gather', inputs: [tensor([4, 5], 'f32', 9), i32([4, 5], ints(20, 10, 0, 4))], attrs: { dim: 0, device_only: true } },
  { name: 'gather 72,000 elements (2-D grid)', op: 'gather', inputs: [tensor([240, 300], 'f32', 11), i32([240, 300], ints(72000, 12, 0, 300))], attrs: { dim: 1 } },
  { name: 'gather the tensor by itself (one buffer twice)', op: 'gather_self', inputs: [i32([5], [4, 0, 0, 2, 1])] },
  { name: 'gather index out of range', op: 'gather', inputs: [tensor([3, 4], 'f32', 1), i32([1, 2], [0, 3])], attrs: { dim: 0 }, error: 'Index' },
  { name: 'gather negative index', op: 'gather', inputs: [tensor([3, 4], 'f32', 1), i32([1, 2], [0, -1])], attrs: { dim: 1 }, error: 'Index' },
  { name: 'gather rank differs', op: 'gather', inputs: [tensor([3, 4], 'f32', 1), i32([2], [0, 1])], attrs: { dim: 0 }, error: 'Rank' },
  { name: 'gather indices larger outside dim', op: 'gather', inputs: [tensor([3, 4], 'f32', 1), i32([1, 5], [0, 0, 0, 0, 0])], attrs: { dim: 0 }, error: 'Shape' },
  { name: 'gather f32 indices', op: 'gather', inputs: [tensor([3, 4], 'f32', 1), f32([1, 1], [0])], attrs: { dim: 0 }, error: 'DType' },
];

{
  const x = tensor([3, 4], 'f32', 15);
  gather.push({ name: 'gather device-only indices out of range read zeros (gap)', op: 'gather_unchecked', readError: 'Index', readMessage: /^gather: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [x, i32([2, 4], [0, 5, -1, 2, 3, 2, 100, 1]), padAlong(x, 1), i32([2, 4], [0, 4, 4, 2, 3, 2, 4, 1])], attrs: { dim: 1 } });
}

// ---------------------------------------------------------------- scatter
const scatter = [
  { name: 'scatter f32 dim 0, duplicates accumulate in order', op: 'scatter', inputs: [tensor([3, 4], 'f32', 1), i32([4, 4], ints(16, 2, 0, 3)), tensor([4, 4], 'f32', 3, -1e4, 1e4)], attrs: { dim: 0 } },
  { name: 'scatter f32 dim 1, indices smaller than values', op: 'scatter', inputs: [tensor([3, 5], 'f32', 4), i32([2, 6], ints(12, 5, 0, 5)), tensor([3, 7], 'f32', 6)], attrs: { dim: 1 } },
  { name: 'scatter i32 wraps around, dim -1 of rank 3', op: 'scatter', inputs: [i32([1, 2, 2], [2147483647, 0, -2147483648, 7]), i32([1, 2, 3], [0, 0, 1, 0, 1, 1]), i32([1, 2, 3], [1, 2, 3, -1, -2, -3])], attrs: { dim: -1 } },
  { name: 'scatter bool ors', op: 'scatter', inputs: [bool([2, 3], [0, 0, 1, 0, 0, 0]), i32([2, 3], [1, 0, 1, 1, 1, 0]), bool([2, 3], [1, 0, 0, 0, 1, 0])], attrs: { dim: 0 } },
  { name: 'scatter special values', op: 'scatter', inputs: [f32([2, 6], SPECIAL), i32([2, 6], [0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0]), f32([2, 6], [...SPECIAL].reverse())], attrs: { dim: 0 } },
  { name: 'scatter rank 5', op: 'scatter', inputs: [tensor([2, 3, 1, 2, 3], 'f32', 7), i32([2, 2, 1, 2, 4], ints(32, 8, 0, 3)), tensor([2, 3, 1, 2, 4], 'f32', 9)], attrs: { dim: 4 } },
  { name: 'scatter rank 8, dim 7', op: 'scatter', inputs: [tensor([2, 1, 2, 1, 2, 1, 3, 2], 'f32', 20), i32([1, 1, 2, 1, 2, 1, 2, 3], ints(24, 21, 0, 2)), tensor([2, 1, 2, 1, 2, 1, 3, 3], 'f32', 22)], attrs: { dim: 7 } },
  { name: 'scatter no indices returns the tensor', op: 'scatter', inputs: [tensor([3, 2], 'f32', 10), i32([0, 2], []), tensor([1, 2], 'f32', 11)], attrs: { dim: 0 } },
  { name: 'scatter device-only indices', op: 'scatter', inputs: [tensor([4, 5], 'f32', 12), i32([6, 5], ints(30, 13, 0, 4)), tensor([6, 5], 'f32', 14)], attrs: { dim: 0, device_only: true } },
  { name: 'scatter 70,000 elements (2-D grid)', op: 'scatter', inputs: [tensor([280, 250], 'f32', 15), i32([280, 8], ints(2240, 16, 0, 250)), tensor([280, 8], 'f32', 17)], attrs: { dim: 1 } },
  { name: 'scatter the tensor by itself (one buffer three times)', op: 'scatter_self', inputs: [i32([4], [3, 0, 1, 1])] },
  { name: 'scatter index out of range', op: 'scatter', inputs: [tensor([3, 2], 'f32', 1), i32([1, 2], [0, 3]), tensor([1, 2], 'f32', 2)], attrs: { dim: 0 }, error: 'Index' },
  { name: 'scatter values dtype differs', op: 'scatter', inputs: [tensor([3, 2], 'f32', 1), i32([1, 2], [0, 1]), tensor([1, 2], 'i32', 2)], attrs: { dim: 0 }, error: 'DType' },
  { name: 'scatter rank differs', op: 'scatter', inputs: [tensor([3, 2], 'f32', 1), i32([2], [0, 1]), tensor([2], 'f32', 2)], attrs: { dim: 0 }, error: 'Rank' },
  { name: 'scatter indices larger than values', op: 'scatter', inputs: [tensor([3, 2], 'f32', 1), i32([2, 2], [0, 1, 1, 0]), tensor([1, 2], 'f32', 2)], attrs: { dim: 0 }, error: 'Shape' },
  { name: 'scatter indices larger than the tensor outside dim', op: 'scatter', inputs: [tensor([3, 2], 'f32', 1), i32([1, 3], [0, 1, 1]), tensor([1, 3], 'f32', 2)], attrs: { dim: 0 }, error: 'Shape' },
];

{
  const x = tensor([3, 4], 'f32', 18, 0.5, 2);  // no -0: x + 0 is x
  const v = tensor([2, 4], 'f32', 19);
  const idx = [0, 3, -1, 2, 2, 1, 0, 7];
  const bad = (_, i) => idx[i] < 0 || idx[i] >= 3;
  scatter.push({ name: 'scatter device-only indices out of range add nothing (gap)', op: 'scatter_unchecked', readError: 'Index', readMessage: /^scatter: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [x, i32([2, 4], idx), v, i32([2, 4], idx.map((j, i) => (bad(0, i) ? 0 : j))), zeroAlong(v, 0, bad)], attrs: { dim: 0 } });
}

// ---------------------------------------------------------------- one_hot
const oneHot = [
  { name: 'one_hot i32', op: 'one_hot', inputs: [i32([6], [0, 4, 2, 2, 1, 3])], attrs: { num_classes: 5 } },
  { name: 'one_hot f32 whole numbers (-0 is class 0)', op: 'one_hot', inputs: [f32([2, 3], [0, -0, 2, 3, 1, 3])], attrs: { num_classes: 4 } },
  { name: 'one_hot bool', op: 'one_hot', inputs: [bool([2, 2], [1, 0, 0, 1])], attrs: { num_classes: 3 } },
  { name: 'one_hot rank 0', op: 'one_hot', inputs: [i32([], [2])], attrs: { num_classes: 3 } },
  { name: 'one_hot empty', op: 'one_hot', inputs: [i32([0, 2], [])], attrs: { num_classes: 3 } },
  { name: 'one_hot device-only f32', op: 'one_hot', inputs: [f32([5], [4, 0, 1, 3, 3])], attrs: { num_classes: 5, device_only: true } },
  { name: 'one_hot 70,000 elements (2-D grid)', op: 'one_hot', inputs: [i32([7000], ints(7000, 1, 0, 10))], attrs: { num_classes: 10 } },
  { name: 'one_hot value out of range', op: 'one_hot', inputs: [i32([3], [0, 5, 1])], attrs: { num_classes: 5 }, error: 'Index' },
  { name: 'one_hot negative value', op: 'one_hot', inputs: [i32([3], [0, -1, 1])], attrs: { num_classes: 5 }, error: 'Index' },
  { name: 'one_hot f32 not whole', op: 'one_hot', inputs: [f32([3], [0, 1.5, 1])], attrs: { num_classes: 5 }, error: 'Value' },
  { name: 'one_hot f32 nan', op: 'one_hot', inputs: [f32([2], [NaN, 1])], attrs: { num_classes: 5 }, error: 'Value' },
  { name: 'one_hot f32 out of range', op: 'one_hot', inputs: [f32([2], [1, 7])], attrs: { num_classes: 5 }, error: 'Index' },
  { name: 'one_hot bool true with one class', op: 'one_hot', inputs: [bool([2], [0, 1])], attrs: { num_classes: 1 }, error: 'Index' },
  { name: 'one_hot num_classes 0', op: 'one_hot', inputs: [i32([1], [0])], attrs: { num_classes: 0 }, error: 'Value' },
  { name: 'one_hot rank 8 input', op: 'one_hot', inputs: [i32([1, 1, 1, 1, 1, 1, 1, 1], [0])], attrs: { num_classes: 2 }, error: 'Limit' },
  { name: 'one_hot i32 device-only out of range rows are zeros (gap)', op: 'one_hot_unchecked', readError: 'Index', readMessage: /^oneHot: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [i32([5], [0, 7, -1, 2, 3]), i32([5], [0, 4, 4, 2, 3]), i32([4], [0, 1, 2, 3])], attrs: { num_classes: 4 } },
  { name: 'one_hot f32 device-only invalid values rows are zeros (gap)', op: 'one_hot_unchecked', readError: 'Index', readMessage: /^oneHot: an index computed on the GPU is out of range: got (-?[0-9.e+]+|-?Infinity|NaN), expected /, inputs: [f32([8], [1, 2.5, NaN, -1, 3, 1e10, Infinity, -0]), f32([8], [1, 4, 4, 4, 3, 4, 4, 0]), i32([4], [0, 1, 2, 3])], attrs: { num_classes: 4 } },
];

// ---------------------------------------------------------------- pools
/** Output size of one pooled dim (pool::output_size for in-range options). */
function outSize(n, k, s, p, d, ceil) {
  const span = n + 2 * p - d * (k - 1) - 1;
  let o = Math.floor((ceil ? span + s - 1 : span) / s) + 1;
  if (ceil && (o - 1) * s >= n + p) o--;
  return o;
}

function pooledShape(shape, a) {
  const k = a.kernel_size, s = a.stride ?? k, p = a.padding ?? [0, 0], d = a.dilation ?? [1, 1];
  return [shape[0], shape[1], outSize(shape[2], k[0], s[0], p[0], d[0], a.ceil_mode), outSize(shape[3], k[1], s[1], p[1], d[1], a.ceil_mode)];
}

const MAX_CONFIGS = [
  ['2x2 stride 2', [2, 3, 6, 6], { kernel_size: [2, 2] }],
  ['3x3 stride 2 padding 1', [2, 2, 7, 6], { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1] }],
  ['3x3 dilation 2 stride 1', [1, 2, 8, 9], { kernel_size: [3, 3], stride: [1, 1], dilation: [2, 2] }],
  ['2x2 ceil mode', [1, 2, 7, 7], { kernel_size: [2, 2], ceil_mode: true }],
  ['2x3 stride 1x2 padding 1, ceil mode', [2, 1, 5, 8], { kernel_size: [2, 3], stride: [1, 2], padding: [1, 1], ceil_mode: true }],
  ['3x3 stride 1 padding 1 (overlapping windows)', [1, 3, 6, 5], { kernel_size: [3, 3], stride: [1, 1], padding: [1, 1] }],
];

const pools = [];
MAX_CONFIGS.forEach(([label, shape, attrs], n) => {
  const x = tensor(shape, 'f32', 100 + n);
  const ties = small(shape, 200 + n);
  const out = pooledShape(shape, attrs);
  pools.push(
    { name: `max_pool2d ${label}`, op: 'max_pool2d', inputs: [x], attrs },
    { name: `max_pool2d_with_indices ${label}: values`, op: 'max_pool2d_with_indices', inputs: [ties], attrs: { ...attrs, output: 0 } },
    { name: `max_pool2d_with_indices ${label}: indices (ties: the first)`, op: 'max_pool2d_with_indices', inputs: [ties], attrs: { ...attrs, output: 1 } },
    { name: `max_pool2d_backward ${label} (device indices)`, op: 'max_pool2d_round_trip', inputs: [ties, tensor(out, 'f32', 300 + n)], attrs },
  );
});

{
  // nan wins its window (a later nan replaces it), infinities compare, -inf windows keep
  // the first element's index; the padding is -inf.
  const x = f32([1, 2, 4, 6], [
    1, NaN, 2, -Infinity, -Infinity, 3,
    NaN, 0, -0, -Infinity, -Infinity, Infinity,
    -1, -2, 3.4e38, -3.4e38, 5, 5,
    -Infinity, -Infinity, 1e-30, -1e-30, Infinity, NaN,
    0, -0, -0, 0, 0.5, -2.5,
    -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity,
    1, 1, 1, 1, 1, 1,
    NaN, NaN, -Infinity, 7, 2, Infinity,
  ]);
  for (const output of [0, 1]) {
    pools.push(
      { name: `max_pool2d_with_indices special values 2x2 (${output ? 'indices' : 'values'})`, op: 'max_pool2d_with_indices', inputs: [x], attrs: { kernel_size: [2, 2], output } },
      { name: `max_pool2d_with_indices special values 3x3 padding 1 (${output ? 'indices' : 'values'})`, op: 'max_pool2d_with_indices', inputs: [x], attrs: { kernel_size: [3, 3], stride: [1, 1], padding: [1, 1], output } },
    );
  }
}

pools.push(
  { name: 'max_pool2d empty batch', op: 'max_pool2d', inputs: [f32([0, 3, 4, 4], [])], attrs: { kernel_size: [2, 2] } },
  { name: 'max_pool2d 80,000 elements', op: 'max_pool2d', inputs: [tensor([4, 8, 50, 50], 'f32', 20)], attrs: { kernel_size: [2, 2] } },
  { name: 'max_pool2d_backward 80,000 elements (device indices)', op: 'max_pool2d_round_trip', inputs: [small([4, 8, 50, 50], 21), tensor([4, 8, 25, 25], 'f32', 22)], attrs: { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1] } },
  { name: 'max_pool2d rank 3', op: 'max_pool2d', inputs: [tensor([2, 4, 4], 'f32', 1)], attrs: { kernel_size: [2, 2] }, error: 'Rank' },
  { name: 'max_pool2d kernel 0', op: 'max_pool2d', inputs: [tensor([1, 1, 4, 4], 'f32', 1)], attrs: { kernel_size: [0, 2] }, error: 'Config' },
  { name: 'max_pool2d padding above half the kernel', op: 'max_pool2d', inputs: [tensor([1, 1, 4, 4], 'f32', 1)], attrs: { kernel_size: [2, 2], padding: [2, 0] }, error: 'Config' },
  { name: 'max_pool2d window larger than the input', op: 'max_pool2d', inputs: [tensor([1, 1, 2, 4], 'f32', 1)], attrs: { kernel_size: [3, 3] }, error: 'Shape' },
  { name: 'max_pool2d i32 input', op: 'max_pool2d', inputs: [tensor([1, 1, 4, 4], 'i32', 1)], attrs: { kernel_size: [2, 2] }, error: 'DType' },
  { name: 'max_pool2d_with_indices bool input', op: 'max_pool2d_with_indices', inputs: [tensor([1, 1, 4, 4], 'bool', 1)], attrs: { kernel_size: [2, 2] }, error: 'DType' },
);

// max_pool2d_backward with given indices: repeated ones accumulate in output order, -1 and
// indices outside the plane are skipped (the Cpu skips them too, so no gap).
{
  const grad = tensor([2, 2, 2, 3], 'f32', 30, -1e3, 1e3);
  const idx = i32([2, 2, 2, 3], [0, 0, 5, 11, -1, 0, 19, 19, 19, 19, 20, 0, 3, 3, 3, 3, 3, 3, 7, 2, 9, 12, 4, 18]);
  pools.push(
    { name: 'max_pool2d_backward given indices (repeats, -1, out of the plane)', op: 'max_pool2d_backward', inputs: [grad, idx], attrs: { x_shape: [2, 2, 4, 5] } },
    { name: 'max_pool2d_backward given device-only indices', op: 'max_pool2d_backward', inputs: [grad, idx], attrs: { x_shape: [2, 2, 4, 5], device_only: true } },
    { name: 'max_pool2d_backward empty gradient plane', op: 'max_pool2d_backward', inputs: [f32([2, 2, 0, 3], []), i32([2, 2, 0, 3], [])], attrs: { x_shape: [2, 2, 4, 5] } },
    { name: 'max_pool2d_backward gradient of another batch', op: 'max_pool2d_backward', inputs: [grad, idx], attrs: { x_shape: [3, 2, 4, 5] }, error: 'Shape' },
    { name: 'max_pool2d_backward f32 indices', op: 'max_pool2d_backward', inputs: [grad, tensor([2, 2, 2, 3], 'f32', 1)], attrs: { x_shape: [2, 2, 4, 5] }, error: 'Shape' },
    { name: 'max_pool2d_backward i32 gradient', op: 'max_pool2d_backward', inputs: [tensor([2, 2, 2, 3], 'i32', 1), idx], attrs: { x_shape: [2, 2, 4, 5] }, error: 'DType' },
    { name: 'max_pool2d_backward x_shape of rank 3', op: 'max_pool2d_backward', inputs: [grad, idx], attrs: { x_shape: [2, 4, 5] }, error: 'Rank' },
  );
}

const AVG_CONFIGS = [
  ['2x2 stride 2', [2, 3, 6, 6], { kernel_size: [2, 2] }],
  ['3x3 stride 2 padding 1', [2, 2, 7, 6], { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1] }],
  ['3x3 stride 2 padding 1, count_include_pad false', [2, 2, 7, 6], { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1], count_include_pad: false }],
  ['3x2 stride 2x1 padding 1, ceil mode', [1, 2, 6, 5], { kernel_size: [3, 2], stride: [2, 1], padding: [1, 1], ceil_mode: true }],
  ['3x3 stride 2 padding 1, ceil mode, count_include_pad false', [1, 2, 6, 6], { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1], ceil_mode: true, count_include_pad: false }],
  ['4x4 stride 3 padding 2 ceil mode (clipped windows)', [1, 1, 9, 8], { kernel_size: [4, 4], stride: [3, 3], padding: [2, 2], ceil_mode: true }],
];

AVG_CONFIGS.forEach(([label, shape, attrs], n) => {
  const out = pooledShape(shape, attrs);
  pools.push(
    { name: `avg_pool2d ${label}`, op: 'avg_pool2d', inputs: [tensor(shape, 'f32', 400 + n)], attrs },
    { name: `avg_pool2d_backward ${label}`, op: 'avg_pool2d_backward', inputs: [tensor(out, 'f32', 500 + n)], attrs: { ...attrs, x_shape: shape } },
  );
});

pools.push(
  { name: 'avg_pool2d special values', op: 'avg_pool2d', inputs: [f32([1, 1, 4, 6], [...SPECIAL, ...SPECIAL.slice(6), ...SPECIAL.slice(0, 6)])], attrs: { kernel_size: [2, 2], stride: [1, 2] } },
  { name: 'avg_pool2d_backward special values', op: 'avg_pool2d_backward', inputs: [f32([1, 1, 3, 4], SPECIAL)], attrs: { kernel_size: [3, 3], stride: [1, 1], padding: [1, 1], x_shape: [1, 1, 3, 4] } },
  { name: 'avg_pool2d empty batch', op: 'avg_pool2d', inputs: [f32([0, 2, 4, 4], [])], attrs: { kernel_size: [2, 2] } },
  { name: 'avg_pool2d_backward empty batch', op: 'avg_pool2d_backward', inputs: [f32([2, 0, 2, 2], [])], attrs: { kernel_size: [2, 2], x_shape: [2, 0, 4, 4] } },
  { name: 'avg_pool2d 80,000 elements', op: 'avg_pool2d', inputs: [tensor([4, 8, 50, 50], 'f32', 40)], attrs: { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1] } },
  { name: 'avg_pool2d_backward 80,000 elements', op: 'avg_pool2d_backward', inputs: [tensor([4, 8, 25, 25], 'f32', 41)], attrs: { kernel_size: [3, 3], stride: [2, 2], padding: [1, 1], x_shape: [4, 8, 50, 50] } },
  { name: 'avg_pool2d i32 input', op: 'avg_pool2d', inputs: [tensor([1, 1, 4, 4], 'i32', 1)], attrs: { kernel_size: [2, 2] }, error: 'DType' },
  { name: 'avg_pool2d stride 0', op: 'avg_pool2d', inputs: [tensor([1, 1, 4, 4], 'f32', 1)], attrs: { kernel_size: [2, 2], stride: [0, 1] }, error: 'Config' },
  { name: 'avg_pool2d window larger than the input', op: 'avg_pool2d', inputs: [tensor([1, 1, 4, 1], 'f32', 1)], attrs: { kernel_size: [2, 2] }, error: 'Shape' },
  { name: 'avg_pool2d rank 5', op: 'avg_pool2d', inputs: [tensor([1, 1, 1, 4, 4], 'f32', 1)], attrs: { kernel_size: [2, 2] }, error: 'Rank' },
  { name: 'avg_pool2d_backward gradient shape differs', op: 'avg_pool2d_backward', inputs: [tensor([1, 1, 2, 3], 'f32', 1)], attrs: { kernel_size: [2, 2], x_shape: [1, 1, 4, 4] }, error: 'Shape' },
  { name: 'avg_pool2d_backward i32 gradient', op: 'avg_pool2d_backward', inputs: [tensor([1, 1, 2, 2], 'i32', 1)], attrs: { kernel_size: [2, 2], x_shape: [1, 1, 4, 4] }, error: 'DType' },
  { name: 'avg_pool2d_backward padding above half the kernel', op: 'avg_pool2d_backward', inputs: [tensor([1, 1, 2, 2], 'f32', 1)], attrs: { kernel_size: [2, 2], padding: [0, 2], x_shape: [1, 1, 4, 4] }, error: 'Config' },
);

const ADAPTIVE_CONFIGS = [
  ['7x5 -> 3x2', [2, 3, 7, 5], [3, 2]],
  ['6x6 -> 1x1 (global)', [2, 2, 6, 6], [1, 1]],
  ['2x3 -> 5x4 (upsampling: overlapping windows)', [1, 2, 2, 3], [5, 4]],
  ['10x9 -> 4x7', [1, 1, 10, 9], [4, 7]],
];
ADAPTIVE_CONFIGS.forEach(([label, shape, size], n) => {
  pools.push(
    { name: `adaptive_avg_pool2d ${label}`, op: 'adaptive_avg_pool2d', inputs: [tensor(shape, 'f32', 600 + n)], attrs: { output_size: size } },
    { name: `adaptive_avg_pool2d_backward ${label}`, op: 'adaptive_avg_pool2d_backward', inputs: [tensor([shape[0], shape[1], ...size], 'f32', 700 + n)], attrs: { x_shape: shape } },
  );
});

pools.push(
  { name: 'adaptive_avg_pool2d special values', op: 'adaptive_avg_pool2d', inputs: [f32([1, 1, 3, 4], SPECIAL)], attrs: { output_size: [2, 3] } },
  { name: 'adaptive_avg_pool2d empty batch', op: 'adaptive_avg_pool2d', inputs: [f32([0, 3, 4, 4], [])], attrs: { output_size: [2, 2] } },
  { name: 'adaptive_avg_pool2d 80,000 elements', op: 'adaptive_avg_pool2d', inputs: [tensor([4, 8, 50, 50], 'f32', 50)], attrs: { output_size: [7, 7] } },
  { name: 'adaptive_avg_pool2d_backward 80,000 elements', op: 'adaptive_avg_pool2d_backward', inputs: [tensor([4, 8, 7, 7], 'f32', 51)], attrs: { x_shape: [4, 8, 50, 50] } },
  { name: 'adaptive_avg_pool2d output size 0', op: 'adaptive_avg_pool2d', inputs: [tensor([1, 1, 4, 4], 'f32', 1)], attrs: { output_size: [0, 2] }, error: 'Config' },
  { name: 'adaptive_avg_pool2d empty height', op: 'adaptive_avg_pool2d', inputs: [f32([1, 1, 0, 4], [])], attrs: { output_size: [2, 2] }, error: 'Shape' },
  { name: 'adaptive_avg_pool2d rank 3', op: 'adaptive_avg_pool2d', inputs: [tensor([1, 4, 4], 'f32', 1)], attrs: { output_size: [2, 2] }, error: 'Rank' },
  { name: 'adaptive_avg_pool2d bool input', op: 'adaptive_avg_pool2d', inputs: [tensor([1, 1, 4, 4], 'bool', 1)], attrs: { output_size: [2, 2] }, error: 'DType' },
  { name: 'adaptive_avg_pool2d_backward gradient of rank 3', op: 'adaptive_avg_pool2d_backward', inputs: [tensor([1, 2, 2], 'f32', 1)], attrs: { x_shape: [1, 1, 4, 4] }, error: 'Rank' },
  { name: 'adaptive_avg_pool2d_backward gradient of another batch', op: 'adaptive_avg_pool2d_backward', inputs: [tensor([2, 1, 2, 2], 'f32', 1)], attrs: { x_shape: [1, 1, 4, 4] }, error: 'Shape' },
  { name: 'adaptive_avg_pool2d_backward i32 gradient', op: 'adaptive_avg_pool2d_backward', inputs: [tensor([1, 1, 2, 2], 'i32', 1)], attrs: { x_shape: [1, 1, 4, 4] }, error: 'DType' },
);

// Every dtype through the dtype-generic indexing ops once more, on one shape (pools are f32 only).
for (const dtype of ['f32', 'i32', 'bool']) {
  const x = tensor([3, 4, 2], dtype, 60);
  select.push({ name: `select ${dtype} dim 2`, op: 'select', inputs: [x, i32([3], [1, -1, 0])], attrs: { dim: 2 } });
  gather.push({ name: `gather ${dtype} dim 0`, op: 'gather', inputs: [x, i32([2, 4, 2], ints(16, 61, 0, 3))], attrs: { dim: 0 } });
  scatter.push({ name: `scatter ${dtype} dim 1`, op: 'scatter', inputs: [x, i32([3, 5, 2], ints(30, 62, 0, 4)), tensor([3, 5, 2], dtype, 63)], attrs: { dim: 1 } });
  selectAssign.push({ name: `select_assign ${dtype} dim 2`, op: 'select_assign', inputs: [x, i32([5], [1, 0, 1, -1, -2]), tensor([3, 4, 5], dtype, 64)], attrs: { dim: 2 } });
}

export const cases = [...select, ...selectAssign, ...gather, ...scatter, ...oneHot, ...pools];
