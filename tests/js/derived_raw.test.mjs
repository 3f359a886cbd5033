// The derived shape ops' Embind functions (bindings/tensor_shape.cpp: tNarrow, tChunk,
// tSplit, tSplitWithSizes, tTopk, tTopkWithIndices, tFlatten, tSqueeze, tSqueezeDim,
// tUnsqueezeDim, tSwapDims, tTranspose, tRepeat, tStack), called on the raw module
// (kiln._internals.raw) before the JS Tensor methods switch to them. Their plans are the
// engine's (kiln/tensor/derived.hpp, shared with the typed C++ Tensor). Expected values by
// hand (torch.narrow, chunk, split, topk, ... on the same inputs).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let T;
let raw;
let wrap;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
  ({ raw, wrap } = kiln._internals);
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});
const run = (fn) => kiln.tidy(() => void fn());
/** [0, 1, ..., n-1] as float32 of `shape`. */
const range = (shape) => T.arange(shape.reduce((a, b) => a * b, 1), { dtype: 'float32' }).reshape(shape);
/** A JS array of RawTensors -> their values (each wrapped, so tidy() frees it). */
const values = (handles) => handles.map((h) => wrap(h).toArray());

describe('derived ops on the raw module', () => {
  it('tNarrow, tChunk, tSplit, tSplitWithSizes', () => {
    run(() => {
      const m = range([2, 4]);
      expect(wrap(raw.tNarrow(m._h, 1, 1, 2, 'narrow')).toArray()).toEqual([[1, 2], [5, 6]]);
      expect(wrap(raw.tNarrow(m._h, -2, 1, 1, 'narrow')).toArray()).toEqual([[4, 5, 6, 7]]);
      const v = range([7]);
      const chunks = raw.tChunk(v._h, 3, 0, 'chunk');
      expect(Array.isArray(chunks)).toBe(true);
      expect(values(chunks)).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
      expect(values(raw.tChunk(range([4])._h, 6, -1, 'chunk'))).toEqual([[0], [1], [2], [3]]);
      expect(values(raw.tSplit(v._h, 4, 0, 'split'))).toEqual([[0, 1, 2, 3], [4, 5, 6]]);
      const pieces = raw.tSplitWithSizes(m._h, [1, 0, 3], 1, 'splitWithSizes').map(wrap);
      expect(pieces.map((t) => t.shape)).toEqual([[2, 1], [2, 0], [2, 3]]);
      expect(pieces[2].toArray()).toEqual([[1, 2, 3], [5, 6, 7]]);
    });
  });

  it('tTopk and tTopkWithIndices, float and int', () => {
    run(() => {
      const x = T.fromData([[5, 1, 4], [0, 9, 3]]);
      expect(wrap(raw.tTopk(x._h, 2, 1, 'topk')).toArray()).toEqual([[5, 4], [9, 3]]);
      const [v, i] = raw.tTopkWithIndices(x._h, 1, 0, 'topkWithIndices').map(wrap);
      expect(v.toArray()).toEqual([[5, 9, 4]]);
      expect(i.toArray()).toEqual([[0, 1, 0]]);
      expect(i.dtype).toBe('int32');
      const xi = T.fromData([3, 7, 7, 1], { dtype: 'int32' });
      const [vi, ii] = raw.tTopkWithIndices(xi._h, 3, -1, 'topk').map(wrap);
      expect(vi.toArray()).toEqual([7, 7, 3]);
      expect(vi.dtype).toBe('int32');
      expect(ii.toArray()).toEqual([1, 2, 0]); // stable: the first 7 first
    });
  });

  it('tFlatten, tSqueeze, tSqueezeDim, tUnsqueezeDim', () => {
    run(() => {
      const x = range([2, 3, 4]);
      expect(wrap(raw.tFlatten(x._h, 1, -1, 'flatten')).shape).toEqual([2, 12]);
      expect(wrap(raw.tFlatten(x._h, 0, 1, 'flatten')).shape).toEqual([6, 4]);
      expect(wrap(raw.tFlatten(T.fromData(3)._h, 0, -1, 'flatten')).toArray()).toEqual([3]);
      const y = T.zeros([1, 3, 1, 2]);
      expect(wrap(raw.tSqueeze(y._h)).shape).toEqual([3, 2]);
      expect(wrap(raw.tSqueezeDim(y._h, -2, 'squeezeDim')).shape).toEqual([1, 3, 2]);
      expect(wrap(raw.tUnsqueezeDim(x._h, -1, 'unsqueezeDim')).shape).toEqual([2, 3, 4, 1]);
      expect(wrap(raw.tUnsqueezeDim(T.fromData(3)._h, 0, 'unsqueeze')).shape).toEqual([1]);
    });
  });

  it('tSwapDims, tTranspose, tRepeat, tStack (bool and int too)', () => {
    run(() => {
      const m = range([2, 3]);
      expect(wrap(raw.tTranspose(m._h, 'transpose')).toArray()).toEqual([[0, 3], [1, 4], [2, 5]]);
      expect(wrap(raw.tSwapDims(m._h, -1, 0, 'swapDims')).toArray()).toEqual([[0, 3], [1, 4], [2, 5]]);
      const c = T.fromData([[1], [2]], { dtype: 'int32' });
      expect(wrap(raw.tRepeat(c._h, [2, 2], 'repeat')).toArray()).toEqual([[1, 1], [2, 2], [1, 1], [2, 2]]);
      expect(wrap(raw.tRepeat(c._h, [1, 1], 'repeat')).toArray()).toEqual([[1], [2]]);
      const a = T.fromData([true, false]);
      const b = T.fromData([false, false]);
      const s = wrap(raw.tStack([a._h, b._h], 1, 'stack'));
      expect(s.dtype).toBe('bool');
      expect(s.toArray()).toEqual([[true, false], [false, false]]);
      expect(wrap(raw.tStack([a._h, b._h], 0, 'stack')).shape).toEqual([2, 2]);
    });
  });

  it('gradients flow through the pieces (the plans are applied with primitives)', () => {
    run(() => {
      const x = T.fromData([0, 1, 2, 3]).requireGrad();
      const [, second] = raw.tChunk(x._h, 2, 0, 'chunk').map(wrap);
      // d/dx sum(piece²) = 2·x on the piece [2, 3], 0 elsewhere.
      const grads = second.mul(second).sum().backward();
      expect(x.grad(grads).toArray()).toEqual([0, 0, 4, 6]);
      const y = T.fromData([[1, 2], [3, 4]]).requireGrad();
      const t = wrap(raw.tTranspose(y._h, 'transpose'));
      const g = t.mul(T.fromData([[1, 10], [100, 1000]])).sum().backward();
      // d/dy[i][j] of Σ t[j][i]·w[j][i] is w[j][i]
      expect(y.grad(g).toArray()).toEqual([[1, 100], [10, 1000]]);
    });
  });

  it('the returned arrays own their tensors: nothing leaks, nothing is freed early', () => {
    const before = raw.memoryStats().buffers;
    const v = T.fromData([0, 1, 2, 3, 4, 5]);
    const pieces = raw.tChunk(v._h, 3, 0, 'chunk');
    const [tv, ti] = raw.tTopkWithIndices(v._h, 2, 0, 'topk');
    // allocate and free more tensors, then read the pieces
    kiln.tidy(() => void range([64]).add(1));
    expect(pieces.map((h) => Array.from(raw.tDataSync(h)))).toEqual([[0, 1], [2, 3], [4, 5]]);
    expect(Array.from(raw.tDataSync(tv))).toEqual([5, 4]);
    expect(Array.from(raw.tDataSync(ti))).toEqual([5, 4]);
    for (const h of [...pieces, tv, ti]) h.delete();
    v.dispose();
    expect(raw.memoryStats().buffers).toBe(before);
  });

  it('errors: the engine check, the op name the caller passes, the JS error code', () => {
    run(() => {
      const v = range([7]);
      const y = T.zeros([1, 3, 1, 2]);
      expectKilnError(kiln, () => raw.tNarrow(v._h, 0, 5, 3, 'narrow'), 'Index',
        'narrow: start 5 and length 3 are out of bounds for dim 0 of size 7');
      expectKilnError(kiln, () => raw.tNarrow(v._h, 0, 0, 1.5, 'narrow'), 'Type',
        'narrow: length must be an integer, got 1.5');
      expectKilnError(kiln, () => raw.tChunk(v._h, 0, 0, 'chunk'), 'Value', 'chunk: chunks must be >= 1, got 0');
      expectKilnError(kiln, () => raw.tSplitWithSizes(v._h, [3, 3], 0, 'splitWithSizes'), 'Shape',
        'splitWithSizes: sizes sum to 6, dim 0 has size 7');
      expectKilnError(kiln, () => raw.tTopk(T.fromData([1, 2])._h, 3, -1, 'topk'), 'Index',
        'topk: k = 3 is out of range for dim -1 of size 2 (shape [2])');
      expectKilnError(kiln, () => raw.tSqueezeDim(y._h, 1, 'squeezeDim'), 'Shape',
        'squeezeDim: dim 1 has size 3, expected 1 (shape [1, 3, 1, 2])');
      expectKilnError(kiln, () => raw.tSqueezeDim(y._h, 1, 'squeeze'), 'Shape',
        'squeeze: dim 1 has size 3, expected 1 (shape [1, 3, 1, 2])');
      expectKilnError(kiln, () => raw.tUnsqueezeDim(y._h, 5, 'unsqueezeDim'), 'Index',
        'unsqueezeDim: dim 5 is out of range for a tensor of rank 5 (expected -5 <= dim < 5)');
      expectKilnError(kiln, () => raw.tFlatten(y._h, 2, 1, 'flatten'), 'Index', 'flatten: start dim 2 is after end dim 1');
      expectKilnError(kiln, () => raw.tTranspose(v._h, 'transpose'), 'Rank', 'transpose: needs rank >= 2, got shape [7]');
      expectKilnError(kiln, () => raw.tRepeat(y._h, [2], 'repeat'), 'Rank', 'repeat: expected 4 repeat counts, got 1');
      expectKilnError(kiln, () => raw.tStack([], 0, 'stack'), 'Value', 'stack: expected at least one tensor, got none');
      expectKilnError(kiln, () => raw.tStack([v._h, y._h], 0, 'stack'), 'Shape',
        'stack: all tensors must have the same shape: tensor 0 is [7], tensor 1 is [1, 3, 1, 2]');
      const vi = T.zeros([7], { dtype: 'int32' });
      expectKilnError(kiln, () => raw.tStack([v._h, vi._h], 0, 'stack'), 'DType', 'stack: tensor 1 is int32, tensor 0 is float32');
      // Names of arguments stay the engine's (snake_case); the JS layer's camelErrors maps
      // them as it does for every engine message.
      expectKilnError(kiln, () => raw.tSplit(v._h, 0, 0, 'split'), 'Value', 'split: split_size must be >= 1, got 0');
    });
  });

  it('topk of a bool tensor is refused naming topk (torch.topk has no bool kernel), not the sort it uses', () => {
    run(() => {
      const b = T.fromData([true, false, true], { dtype: 'bool' });
      expectKilnError(kiln, () => b.topk(1), 'DType', 'topk: expected a float32 or int32 tensor, got bool');
      expectKilnError(kiln, () => b.topkWithIndices(1), 'DType',
        'topkWithIndices: expected a float32 or int32 tensor, got bool');
    });
  });

  it('repeatDim beyond int32 names the bound and prints the count in full', () => {
    run(() => {
      const t = T.fromData([1, 2]);
      expectKilnError(kiln, () => t.repeatDim(0, 2 ** 40), 'Value',
        'repeatDim: times must be an integer in [0, 2147483647], got 1099511627776');
    });
  });
});
