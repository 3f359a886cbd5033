// Cases of the creation ops and cast (engine/src/wgpu/tensor.cpp). A case:
//   { name, op (a KILN_HARNESS_OP of tests/webgpu/ops_*.cpp), inputs: [{shape, dtype, data}],
//     attrs (the op's arguments), tol: {abs, rel} (f32), error: 'Code' (both backends throw it,
//     with the same message) }
import { SPECIAL, tensor } from './support.mjs';

export const cases = [
  { name: 'from_data f32 round trip', op: 'identity', inputs: [tensor([3, 5], 'f32', 1)] },
  { name: 'from_data special f32 values', op: 'identity', inputs: [{ shape: [SPECIAL.length], dtype: 'f32', data: SPECIAL }] },
  { name: 'from_data i32 round trip', op: 'identity', inputs: [tensor([7], 'i32', 2)] },
  { name: 'from_data bool round trip', op: 'identity', inputs: [tensor([2, 3], 'bool', 3)] },
  { name: 'from_data empty', op: 'identity', inputs: [{ shape: [0, 4], dtype: 'f32', data: [] }] },
  { name: 'full f32', op: 'full', inputs: [], attrs: { shape: [3, 70000], value: -1.5, dtype: 'f32' } },
  { name: 'full i32', op: 'full', inputs: [], attrs: { shape: [5], value: 7, dtype: 'i32' } },
  { name: 'full bool', op: 'full', inputs: [], attrs: { shape: [2, 2], value: 2, dtype: 'bool' } },
  { name: 'full i32 out of range', op: 'full', inputs: [], attrs: { shape: [1], value: 3e9, dtype: 'i32' }, error: 'Value' },
  { name: 'arange f32', op: 'arange', inputs: [], attrs: { start: -1, end: 2, step: 0.25, dtype: 'f32' } },
  { name: 'arange step 0', op: 'arange', inputs: [], attrs: { start: 0, end: 2, step: 0, dtype: 'f32' }, error: 'Value' },
  { name: 'eye 3x4', op: 'eye', inputs: [], attrs: { n: 3, m: 4, dtype: 'f32' } },
  { name: 'cast f32 -> i32 truncates', op: 'cast', inputs: [{ shape: [6], dtype: 'f32', data: [1.9, -1.9, 0.5, -0.5, 1e6, -7] }], attrs: { to: 'i32' } },
  { name: 'cast f32 -> bool (nan true, -0 false)', op: 'cast', inputs: [{ shape: [5], dtype: 'f32', data: [0, -0, NaN, 2, -Infinity] }], attrs: { to: 'bool' } },
  { name: 'cast i32 -> f32', op: 'cast', inputs: [tensor([4, 4], 'i32', 4, -1000, 1000)], attrs: { to: 'f32' } },
  { name: 'cast bool -> f32', op: 'cast', inputs: [tensor([9], 'bool', 5)], attrs: { to: 'f32' } },
  { name: 'cast bool -> i32', op: 'cast', inputs: [tensor([9], 'bool', 6)], attrs: { to: 'i32' } },
  { name: 'cast i32 -> bool', op: 'cast', inputs: [{ shape: [4], dtype: 'i32', data: [0, 1, -1, 5] }], attrs: { to: 'bool' } },
  { name: 'cast f32 -> i32 on 70,000 elements (2-D grid)', op: 'cast', inputs: [tensor([70000], 'f32', 7, -100, 100)], attrs: { to: 'i32' } },
];
