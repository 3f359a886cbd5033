// Shape and indexing ops of the JS Tensor: reshape, flatten, squeeze/unsqueeze, swapDims,
// transpose, permute, expand, repeat, flip, narrow, chunk/split, slice/sliceAssign,
// cat/stack, select/selectAssign, gather/scatter, oneHot. Expected values by hand.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});
const run = (fn) => kiln.tidy(() => void fn());
/** [0, 1, ..., n-1] as float32 of `shape`. */
const range = (shape) => T.arange(shape.reduce((a, b) => a * b, 1), { dtype: 'float32' }).reshape(shape);

describe('reshaping', () => {
  it('reshape with -1, flatten, squeeze, unsqueeze', () => {
    run(() => {
      const x = range([2, 3, 4]);
      expect(x.reshape([-1, 6]).shape).toEqual([4, 6]);
      expect(x.reshape([4, -1]).shape).toEqual([4, 6]);
      expect(Array.from(x.reshape([24]).dataSync())).toEqual([...Array(24).keys()]);
      expect(T.fromData([5]).reshape([]).shape).toEqual([]);
      expect(T.fromData(5).reshape([1, 1]).toArray()).toEqual([[5]]);
      expect(x.flatten().shape).toEqual([24]);
      expect(x.flatten(1).shape).toEqual([2, 12]);
      expect(x.flatten(0, 1).shape).toEqual([6, 4]);
      expect(x.flatten(-2, -1).shape).toEqual([2, 12]);
      expect(T.fromData(3).flatten().shape).toEqual([1]);
      const y = T.zeros([1, 3, 1, 2]);
      expect(y.squeeze().shape).toEqual([3, 2]);
      expect(y.squeeze(0).shape).toEqual([3, 1, 2]);
      expect(y.squeezeDim(-2).shape).toEqual([1, 3, 2]);
      expect(T.zeros([1]).squeeze().shape).toEqual([]);
      expect(x.unsqueezeDim(0).shape).toEqual([1, 2, 3, 4]);
      expect(x.unsqueezeDim(-1).shape).toEqual([2, 3, 4, 1]);
      expect(x.unsqueeze(1).shape).toEqual([2, 1, 3, 4]);
      expect(T.fromData(3).unsqueeze(0).shape).toEqual([1]);
      expectKilnError(kiln, () => x.reshape([5, -1]), 'Shape', /reshape/);
      expectKilnError(kiln, () => x.reshape([2, 'a']), 'Type', 'reshape: shape[1] must be an integer, got the string "a"');
      expectKilnError(kiln, () => y.squeezeDim(1), 'Shape', 'squeezeDim: dim 1 has size 3, expected 1 (shape [1, 3, 1, 2])');
      expectKilnError(kiln, () => x.flatten(2, 1), 'Index', 'flatten: start dim 2 is after end dim 1');
      expectKilnError(kiln, () => x.unsqueezeDim(4), 'Index',
        'unsqueezeDim: dim 4 is out of range for a tensor of rank 4 (expected -4 <= dim < 4)');
    });
  });

  it('swapDims, transpose, permute', () => {
    run(() => {
      const m = range([2, 3]);
      expect(m.transpose().toArray()).toEqual([[0, 3], [1, 4], [2, 5]]);
      expect(m.swapDims(0, 1).toArray()).toEqual([[0, 3], [1, 4], [2, 5]]);
      const x = range([2, 3, 4]);
      const p = x.permute([2, 0, 1]);
      expect(p.shape).toEqual([4, 2, 3]);
      // p[k][i][j] = x[i][j][k] = i*12 + j*4 + k
      const pa = p.toArray();
      for (let k = 0; k < 4; k++) for (let i = 0; i < 2; i++) for (let j = 0; j < 3; j++) expect(pa[k][i][j]).toBe(i * 12 + j * 4 + k);
      expect(x.permute([-1, 0, 1]).toArray()).toEqual(pa);
      expect(x.transpose().shape).toEqual([2, 4, 3]);
      expectKilnError(kiln, () => T.zeros([3]).transpose(), 'Rank', 'transpose: needs rank >= 2, got shape [3]');
      expectKilnError(kiln, () => x.permute([0, 0, 1]), 'Index', 'permute: dim 0 appears twice in the axes');
      expectKilnError(kiln, () => x.permute([0, 1]), 'Rank', 'permute: expected 3 axes for shape [2, 3, 4], got 2');
    });
  });

  it('expand, repeat, repeatDim, flip', () => {
    run(() => {
      const c = T.fromData([[1], [2]]);
      expect(c.expand([2, 3]).toArray()).toEqual([[1, 1, 1], [2, 2, 2]]);
      expect(c.expand([2, 2, -1]).shape).toEqual([2, 2, 1]);
      expect(T.fromData(7).expand([2]).toArray()).toEqual([7, 7]);
      expect(c.repeatDim(1, 2).toArray()).toEqual([[1, 1], [2, 2]]);
      expect(c.repeatDim(0, 2).toArray()).toEqual([[1], [2], [1], [2]]);
      expect(c.repeat([2, 2]).toArray()).toEqual([[1, 1], [2, 2], [1, 1], [2, 2]]);
      expect(c.repeat([1, 1]).toArray()).toEqual([[1], [2]]);
      const m = range([2, 3]);
      expect(m.flip([1]).toArray()).toEqual([[2, 1, 0], [5, 4, 3]]);
      expect(m.flip([0, -1]).toArray()).toEqual([[5, 4, 3], [2, 1, 0]]);
      expectKilnError(kiln, () => c.expand([3, 3]), 'Shape', /expand/);
      expectKilnError(kiln, () => c.repeat([2]), 'Rank', 'repeat: expected 2 repeat counts, got 1');
    });
  });
});

describe('slicing and splitting', () => {
  it('slice: ranges, negative and open ends, indices, steps', () => {
    run(() => {
      const m = range([3, 4]); // [[0..3], [4..7], [8..11]]
      expect(m.slice([[0, 2], [1, 3]]).toArray()).toEqual([[1, 2], [5, 6]]);
      expect(m.slice([[1]]).toArray()).toEqual([[4, 5, 6, 7], [8, 9, 10, 11]]); // open end
      expect(m.slice([[1, null]]).toArray()).toEqual([[4, 5, 6, 7], [8, 9, 10, 11]]);
      expect(m.slice([null, [-2]]).toArray()).toEqual([[2, 3], [6, 7], [10, 11]]);
      expect(m.slice([[-1], [0, -1]]).toArray()).toEqual([[8, 9, 10]]);
      expect(m.slice([1]).toArray()).toEqual([[4, 5, 6, 7]]); // an index keeps the dim
      expect(m.slice([-1, 2]).toArray()).toEqual([[10]]);
      expect(m.slice([[0, 3, 2], [0, 4, 3]]).toArray()).toEqual([[0, 3], [8, 11]]);
      expect(T.arange(8).slice([[1, 6, -2]]).toArray()).toEqual([5, 3, 1]);
      expect(m.slice([]).shape).toEqual([3, 4]);
      expectKilnError(kiln, () => m.slice([[0, 5]]), 'Index', /slice: range \[0, 5\) is out of bounds for dim 0 of size 3/);
      expectKilnError(kiln, () => m.slice([[0, 1], [0, 1], [0, 1]]), 'Rank', /slice/);
      expectKilnError(kiln, () => m.slice([[0, 1, 0]]), 'Value', /slice/);
      expectKilnError(kiln, () => m.slice('0:2'), 'Type', /slice: ranges must be an array/);
      expectKilnError(kiln, () => m.slice([['a', 2]]), 'Type', 'slice: ranges[0][0] (start) must be an integer, got the string "a"');
      expectKilnError(kiln, () => m.slice([[0, 1, 1, 1]]), 'Type', /ranges\[0\] must be \[start, end\]/);
    });
  });

  it('sliceAssign', () => {
    run(() => {
      const m = T.zeros([2, 3]);
      const r = m.sliceAssign([null, [1, 3]], T.ones([2, 2]));
      expect(r.toArray()).toEqual([[0, 1, 1], [0, 1, 1]]);
      expect(m.toArray()).toEqual([[0, 0, 0], [0, 0, 0]]); // the input is unchanged
      expectKilnError(kiln, () => m.sliceAssign([[0, 1]], T.ones([2, 3])), 'Shape', /slice_assign|sliceAssign/);
      expectKilnError(kiln, () => m.sliceAssign([[0, 1]], T.ones([1, 3], { dtype: 'int32' })), 'DType', /sliceAssign: values must have the dtype/);
    });
  });

  it('narrow, chunk, split, splitWithSizes', () => {
    run(() => {
      const v = T.arange(7);
      expect(v.narrow(0, 2, 3).toArray()).toEqual([2, 3, 4]);
      expect(range([2, 3]).narrow(1, 1, 2).toArray()).toEqual([[1, 2], [4, 5]]);
      expect(v.chunk(3).map((t) => t.toArray())).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
      expect(v.split(4).map((t) => t.toArray())).toEqual([[0, 1, 2, 3], [4, 5, 6]]);
      expect(v.splitWithSizes([2, 0, 5]).map((t) => t.shape)).toEqual([[2], [0], [5]]);
      expect(T.arange(4).chunk(6).length).toBe(4); // torch.chunk may return fewer
      expectKilnError(kiln, () => v.narrow(0, 5, 3), 'Index', 'narrow: start 5 and length 3 are out of bounds for dim 0 of size 7');
      expectKilnError(kiln, () => v.splitWithSizes([3, 3]), 'Shape', 'splitWithSizes: sizes sum to 6, dim 0 has size 7');
      expectKilnError(kiln, () => v.chunk(0), 'Value', 'chunk: chunks must be >= 1, got 0');
    });
  });
});

describe('joining and indexing', () => {
  it('cat and stack', () => {
    run(() => {
      const a = T.fromData([[1, 2]]);
      const b = T.fromData([[3, 4], [5, 6]]);
      expect(T.cat([a, b]).toArray()).toEqual([[1, 2], [3, 4], [5, 6]]);
      expect(T.cat([b, b], 1).toArray()).toEqual([[3, 4, 3, 4], [5, 6, 5, 6]]);
      expect(T.cat([b, T.zeros([2, 0])], -1).shape).toEqual([2, 2]);
      const s = T.stack([T.fromData([1, 2]), T.fromData([3, 4])]);
      expect(s.toArray()).toEqual([[1, 2], [3, 4]]);
      expect(T.stack([T.fromData([1, 2]), T.fromData([3, 4])], 1).toArray()).toEqual([[1, 3], [2, 4]]);
      expect(T.stack([T.fromData(1), T.fromData(2)]).toArray()).toEqual([1, 2]);
      const ints = T.cat([T.arange(2), T.arange(3)]);
      expect(ints.dtype).toBe('int32');
      expect(ints.toArray()).toEqual([0, 1, 0, 1, 2]);
      expectKilnError(kiln, () => T.cat([a, T.ones([1, 3])]), 'Shape', /cat/);
      expectKilnError(kiln, () => T.cat([]), 'Value', 'cat: expected at least one tensor, got none');
      expectKilnError(kiln, () => T.cat([a, T.arange(2).reshape([1, 2])]), 'DType', 'cat: tensor 1 is int32, tensor 0 is float32');
      expectKilnError(kiln, () => T.cat([a, T.ones([2])]), 'Rank', /cat: tensor 1 has shape \[2\], tensor 0 has shape \[1, 2\]/);
      expectKilnError(kiln, () => T.cat([a, 'b']), 'Type', 'cat: tensors[1] must be a kiln Tensor, got the string "b"');
      expectKilnError(kiln, () => T.stack([a, b]), 'Shape', 'stack: all tensors must have the same shape: tensor 0 is [1, 2], tensor 1 is [2, 2]');
      expectKilnError(kiln, () => T.stack([]), 'Value', 'stack: expected at least one tensor, got none');
    });
  });

  it('select and selectAssign (index_select, index_add)', () => {
    run(() => {
      const m = range([3, 2]); // [[0, 1], [2, 3], [4, 5]]
      expect(m.select(0, [2, 0, 2]).toArray()).toEqual([[4, 5], [0, 1], [4, 5]]);
      expect(m.select(0, T.fromData([-1], { dtype: 'int32' })).toArray()).toEqual([[4, 5]]);
      expect(m.select(1, new Int32Array([1])).toArray()).toEqual([[1], [3], [5]]);
      const r = T.zeros([3, 2]).selectAssign(0, [0, 0, 2], T.ones([3, 2]));
      expect(r.toArray()).toEqual([[2, 2], [0, 0], [1, 1]]);
      expectKilnError(kiln, () => m.select(0, [3]), 'Index', /select/);
      expectKilnError(kiln, () => m.select(0, T.fromData([0])), 'DType', 'select: expected an int32 tensor, got float32 (shape [1])');
      expectKilnError(kiln, () => m.select(0, [0.5]), 'Type', 'select: indices[0] must be an integer, got the number 0.5');
      expectKilnError(kiln, () => m.select(0, 'x'), 'Type', /select: indices must be an int32 Tensor or an array of integers/);
    });
  });

  it('gather and scatter (torch.gather, torch.scatter_add)', () => {
    run(() => {
      const x = T.fromData([[1, 2], [3, 4]]);
      const idx = T.fromData([[0, 0], [1, 0]], { dtype: 'int32' });
      // out[i][j] = x[i][idx[i][j]] for dim 1
      expect(x.gather(1, idx).toArray()).toEqual([[1, 1], [4, 3]]);
      // out[i][j] = x[idx[i][j]][j] for dim 0
      expect(x.gather(0, idx).toArray()).toEqual([[1, 2], [3, 2]]);
      // zeros[idx[i][j]][j] += ones for dim 0
      expect(T.zeros([2, 2]).scatter(0, idx, T.ones([2, 2])).toArray()).toEqual([[1, 2], [1, 0]]);
      expectKilnError(kiln, () => x.gather(1, T.fromData([[2]], { dtype: 'int32' })), 'Index', /gather/);
      expectKilnError(kiln, () => x.gather(1, T.fromData([0], { dtype: 'int32' })), 'Rank', 'gather: indices must have the rank of the tensor, 2, got shape [1]');
      expectKilnError(kiln, () => x.gather(1, [0, 1]), 'Type', 'gather: indices must be a kiln Tensor, got an array');
    });
  });

  it('oneHot', () => {
    run(() => {
      const y = T.fromData([0, 2, 1], { dtype: 'int32' });
      const o = y.oneHot(3);
      expect(o.dtype).toBe('int32');
      expect(o.toArray()).toEqual([[1, 0, 0], [0, 0, 1], [0, 1, 0]]);
      expect(T.fromData([1, 0]).oneHot(2).toArray()).toEqual([[0, 1], [1, 0]]);
      expectKilnError(kiln, () => y.oneHot(2), 'Index', /one_hot|oneHot/);
    });
  });
});

// The derived ops are the engine's (kiln/tensor/derived.hpp via bindings/tensor_shape.cpp):
// JS checks argument types first, engine messages read in camelCase, and every tensor the
// engine returns in an array is wrapped once, none left behind when wrapping fails.
describe('derived ops over the engine', () => {
  it('checks argument types in JS, before the engine', () => {
    run(() => {
      const v = T.arange(6);
      expectKilnError(kiln, () => v.narrow(0.5, 0, 1), 'Type', 'narrow: dim must be an integer, got the number 0.5');
      expectKilnError(kiln, () => v.chunk(2, '0'), 'Type', 'chunk: dim must be an integer, got the string "0"');
      expectKilnError(kiln, () => v.split(null), 'Type', 'split: splitSize must be an integer, got null');
      expectKilnError(kiln, () => v.splitWithSizes([1, 2.5]), 'Type', 'splitWithSizes: sizes[1] must be an integer, got the number 2.5');
      expectKilnError(kiln, () => v.topk(true), 'Type', 'topk: k must be an integer, got the boolean true');
      expectKilnError(kiln, () => v.flatten(0, '1'), 'Type', 'flatten: end must be an integer, got the string "1"');
      expectKilnError(kiln, () => v.squeeze('0'), 'Type', 'squeeze: dim must be an integer, got the string "0"');
      expectKilnError(kiln, () => v.unsqueeze(undefined), 'Type', 'unsqueeze: dim must be an integer, got undefined');
      expectKilnError(kiln, () => v.repeat(2), 'Type', 'repeat: times must be an array of integers, got the number 2');
      expectKilnError(kiln, () => T.stack([v], 1.5), 'Type', 'stack: dim must be an integer, got the number 1.5');
      expectKilnError(kiln, () => T.stack('ab'), 'Type', 'stack: tensors must be an array of Tensors, got the string "ab"');
    });
  });

  it('engine messages name the JS method, in camelCase', () => {
    run(() => {
      const v = T.arange(6);
      // The engine says split_size; JS says splitSize.
      expectKilnError(kiln, () => v.split(0), 'Value', 'split: splitSize must be >= 1, got 0');
      expectKilnError(kiln, () => v.squeeze(0), 'Shape', /^squeeze: dim 0 has size 6, expected 1/);
      expectKilnError(kiln, () => v.topkWithIndices(7), 'Index', /^topkWithIndices: k = 7 is out of range/);
      expectKilnError(kiln, () => v.narrow(1, 0, 1), 'Index', /^narrow: dim 1 is out of range/);
      expectKilnError(kiln, () => v.swapDims(0, 1), 'Index', /^swapDims: dim 1 is out of range/);
    });
  });

  it('negative dims, int and bool tensors', () => {
    run(() => {
      const m = T.arange(8).reshape([2, 4]); // [[0, 1, 2, 3], [4, 5, 6, 7]] int32
      const pieces = m.split(3, -1);
      expect(pieces.map((t) => t.toArray())).toEqual([[[0, 1, 2], [4, 5, 6]], [[3], [7]]]);
      expect(pieces[0].dtype).toBe('int32');
      expect(m.chunk(2, -2).map((t) => t.toArray())).toEqual([[[0, 1, 2, 3]], [[4, 5, 6, 7]]]);
      expect(m.splitWithSizes([1, 3], -1).map((t) => t.shape)).toEqual([[2, 1], [2, 3]]);
      expect(m.narrow(-1, 2, 2).toArray()).toEqual([[2, 3], [6, 7]]);
      expect(m.swapDims(-1, 0).toArray()).toEqual([[0, 4], [1, 5], [2, 6], [3, 7]]);
      expect(m.unsqueeze(-1).shape).toEqual([2, 4, 1]);
      expect(m.unsqueeze(-1).squeeze(-1).toArray()).toEqual([[0, 1, 2, 3], [4, 5, 6, 7]]);
      expect(m.flatten().toArray()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      const [values, indices] = T.fromData([[1, 9, 4], [8, 2, 8]], { dtype: 'int32' }).topkWithIndices(2, -1);
      expect(values.toArray()).toEqual([[9, 4], [8, 8]]);
      expect(indices.toArray()).toEqual([[1, 2], [0, 2]]); // stable: the first 8 first
      const b = T.fromData([true, false]);
      expect(b.repeat([2]).toArray()).toEqual([true, false, true, false]);
      expect(T.stack([b, b], -1).toArray()).toEqual([[true, true], [false, false]]);
      expect(b.unsqueeze(0).transpose().toArray()).toEqual([[true], [false]]);
    });
  });

  it('each returned piece is wrapped once and owned by the caller', () => {
    const v = T.arange(7);
    const pieces = v.chunk(3);
    expect(kiln.memory().tensors).toBe(4);
    pieces.forEach((p) => p.dispose());
    const [values, indices] = v.topkWithIndices(2);
    expect(kiln.memory().tensors).toBe(3);
    values.dispose();
    indices.dispose();
    v.dispose();
  });

  it('leaves nothing behind when wrapping a piece fails', () => {
    const { engine } = kiln._internals;
    const v = T.arange(7);
    // tensors counts JS Tensors; bytes and buffers count the engine's (a leaked handle).
    const { tensors, bytes, buffers } = kiln.memory();
    const base = { tensors, bytes, buffers };
    const now = () => {
      const m = kiln.memory();
      return { tensors: m.tensors, bytes: m.bytes, buffers: m.buffers };
    };
    let calls = 0;
    engine.wrap = function wrapFailingSecond(handle) {
      if (++calls === 2) throw new Error('wrap failed');
      return Object.getPrototypeOf(this).wrap.call(this, handle);
    };
    try {
      expect(() => v.split(2)).toThrow('wrap failed'); // 4 pieces: 1 wrapped, 3 not
      expect(calls).toBe(2);
      expect(now()).toEqual(base);
      calls = 0;
      expect(() => v.topkWithIndices(3)).toThrow('wrap failed');
      expect(now()).toEqual(base);
    } finally {
      delete engine.wrap;
    }
    v.dispose();
  });
});
