// Element-wise ops, comparisons, casts, masks, reductions and matmul of the JS Tensor,
// each checked against values computed by hand here (Math.* in double precision).
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectClose, expectKilnError } from './helpers.mjs';

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

const xs = [-2, -0.5, 0, 0.25, 1, 3];

describe('element-wise arithmetic', () => {
  it('add/sub/mul/div with tensors and numbers, broadcasting', () => {
    run(() => {
      const a = T.fromData([[1, 2, 3], [4, 5, 6]]);
      const b = T.fromData([10, 20, 30]);
      expect(a.add(b).toArray()).toEqual([[11, 22, 33], [14, 25, 36]]);
      expect(a.sub(b).toArray()).toEqual([[-9, -18, -27], [-6, -15, -24]]);
      expect(a.mul(b).toArray()).toEqual([[10, 40, 90], [40, 100, 180]]);
      expectClose(a.div(b).dataSync(), [0.1, 0.1, 0.1, 0.4, 0.25, 0.2]);
      expect(a.add(1).toArray()).toEqual([[2, 3, 4], [5, 6, 7]]);
      expect(a.sub(1).toArray()).toEqual([[0, 1, 2], [3, 4, 5]]);
      expect(a.mul(-2).toArray()).toEqual([[-2, -4, -6], [-8, -10, -12]]);
      expect(a.div(2).toArray()).toEqual([[0.5, 1, 1.5], [2, 2.5, 3]]);
      expect(a.rsub(10).toArray()).toEqual([[9, 8, 7], [6, 5, 4]]);
      expect(a.rdiv(12).toArray()).toEqual([[12, 6, 4], [3, 12 / 5, 2]].map((r) => r.map(Math.fround)));
      // [2, 1, 3] + [4, 1] -> [2, 4, 3]
      const x = T.arange(6, { dtype: 'float32' }).reshape([2, 1, 3]);
      const y = T.arange(4, { dtype: 'float32' }).reshape([4, 1]);
      const s = x.add(y);
      expect(s.shape).toEqual([2, 4, 3]);
      const expected = [];
      for (let i = 0; i < 2; i++) for (let j = 0; j < 4; j++) for (let k = 0; k < 3; k++) expected.push(i * 3 + k + j);
      expect(Array.from(s.dataSync())).toEqual(expected);
      // a rank-0 operand broadcasts
      expect(T.fromData(2).mul(a).toArray()).toEqual([[2, 4, 6], [8, 10, 12]]);
    });
  });

  it('int32 arithmetic: floor division, remainder, fmod, divTrunc, pow', () => {
    run(() => {
      const a = T.fromData([-7, 7, 5, -5], { dtype: 'int32' });
      const b = T.fromData([2, 2, -3, -3], { dtype: 'int32' });
      expect(a.div(b).toArray()).toEqual([-4, 3, -2, 1]); // Python //
      expect(a.divTrunc(b).toArray()).toEqual([-3, 3, -1, 1]);
      expect(a.remainder(b).toArray()).toEqual([1, 1, -1, -2]); // Python %
      expect(a.fmod(b).toArray()).toEqual([-1, 1, 2, -2]);
      expect(a.pow(2).toArray()).toEqual([49, 49, 25, 25]);
      expect(a.powi(3).dtype).toBe('int32');
      expect(a.add(1).dtype).toBe('int32');
      expect(a.neg().toArray()).toEqual([7, -7, -5, 5]);
      expect(a.abs().toArray()).toEqual([7, 7, 5, 5]);
      expect(a.sign().toArray()).toEqual([-1, 1, 1, -1]);
      expect(a.clamp(-5, 5).toArray()).toEqual([-5, 5, 5, -5]);
      expectKilnError(kiln, () => a.div(0), 'Value', /integer division by zero/);
      expectKilnError(kiln, () => a.add(2.5), 'Value',
        'add: an Int tensor needs an integer scalar in the i32 range, got 2.5');
      expectKilnError(kiln, () => a.pow(-1), 'Value', /negative integer powers/);
    });
  });

  it('unary float ops match Math', () => {
    run(() => {
      const x = T.fromData(xs);
      const check = (t, f) => expectClose(t.dataSync(), xs.map(f), { abs: 1e-6, rel: 1e-5 });
      check(x.neg(), (v) => -v);
      check(x.abs(), Math.abs);
      check(x.sign(), Math.sign);
      check(x.exp(), Math.exp);
      check(x.sin(), Math.sin);
      check(x.cos(), Math.cos);
      check(x.tanh(), Math.tanh);
      check(x.ceil(), Math.ceil);
      check(x.floor(), Math.floor);
      check(x.sigmoid(), (v) => 1 / (1 + Math.exp(-v)));
      check(x.relu(), (v) => Math.max(0, v));
      check(x.silu(), (v) => v / (1 + Math.exp(-v)));
      check(x.leakyRelu(0.1), (v) => (v >= 0 ? v : 0.1 * v));
      check(x.leakyRelu(), (v) => (v >= 0 ? v : 0.01 * v));
      check(x.softplus(), (v) => Math.log1p(Math.exp(v)));
      check(x.softplus(2, 20), (v) => Math.log1p(Math.exp(2 * v)) / 2);
      check(x.pow(2), (v) => v * v);
      check(x.powf(3), (v) => v ** 3);
      check(x.mul(x).add(1).sqrt(), (v) => Math.sqrt(v * v + 1));
      check(x.abs().add(1).log(), (v) => Math.log(Math.abs(v) + 1));
      check(x.abs().log1p(), (v) => Math.log1p(Math.abs(v)));
      check(x.add(10).recip(), (v) => 1 / (v + 10));
      check(x.maxPair(T.zerosLike(x)), (v) => Math.max(v, 0));
      check(x.minPair(T.zerosLike(x)), (v) => Math.min(v, 0));
      // erf(1) = 0.8427007929497149, erf(-0.5) = -0.5204998778130465
      expectClose(T.fromData([1, -0.5]).erf().dataSync(), [0.8427007929497149, -0.5204998778130465]);
      // round half to even: 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -0.5 -> -0
      expect(Array.from(T.fromData([0.5, 1.5, 2.5, -0.5, 2.6]).round().dataSync())).toEqual([0, 2, 2, -0, 3]);
      // gelu, exact: x·Φ(x); Φ(1) = 0.8413447460685429
      expectClose(T.fromData([1]).gelu().dataSync(), [0.8413447460685429]);
      expectClose(T.fromData([1]).gelu({ approximate: 'tanh' }).dataSync(),
        [0.5 * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (1 + 0.044715)))]);
      check(x.clamp(-1, 1), (v) => Math.min(1, Math.max(-1, v)));
      check(x.clamp(null, 0.5), (v) => Math.min(0.5, v));
      check(x.clampMin(0), (v) => Math.max(0, v));
      check(x.clampMax(0), (v) => Math.min(0, v));
      check(x.fmod(1), (v) => v % 1);
      check(x.remainder(1), (v) => ((v % 1) + 1) % 1);
    });
  });

  it('rejects ops the kind does not support, and mixed dtypes', () => {
    run(() => {
      const i = T.fromData([1, 2], { dtype: 'int32' });
      const f = T.fromData([1, 2]);
      const b = T.fromData([true, false]);
      expectKilnError(kiln, () => i.exp(), 'DType', 'exp: expected a f32 tensor, got i32');
      expectKilnError(kiln, () => i.add(f), 'DType', 'add: dtypes differ: lhs i32 vs rhs f32');
      expectKilnError(kiln, () => b.add(b), 'DType', 'add: expected f32 or i32 tensors, got bool');
      expectKilnError(kiln, () => i.softmax(0), 'DType', /softmax: expected a float32 tensor, got int32/);
      expectKilnError(kiln, () => f.clamp(2, 1), 'Value', 'clamp: min 2 is greater than max 1');
      expectKilnError(kiln, () => f.add(T.ones([3])), 'Shape', /add/);
      expectKilnError(kiln, () => f.gelu({ approximate: 'fast' }), 'Value', /approximate must be "none" or "tanh"/);
    });
  });
});

describe('comparisons, logic, casts, masks', () => {
  it('compare with tensors and numbers -> bool', () => {
    run(() => {
      const a = T.fromData([1, 2, 3, NaN]);
      const b = T.fromData([3, 2, 1, NaN]);
      const arr = (t) => t.toArray();
      expect(a.equal(b).dtype).toBe('bool');
      expect(arr(a.equal(b))).toEqual([false, true, false, false]);
      expect(arr(a.notEqual(b))).toEqual([true, false, true, true]);
      expect(arr(a.greater(b))).toEqual([false, false, true, false]);
      expect(arr(a.greaterEqual(b))).toEqual([false, true, true, false]);
      expect(arr(a.lower(b))).toEqual([true, false, false, false]);
      expect(arr(a.lowerEqual(b))).toEqual([true, true, false, false]);
      expect(arr(a.greaterElem(2))).toEqual([false, false, true, false]);
      expect(arr(a.greaterEqualElem(2))).toEqual([false, true, true, false]);
      expect(arr(a.lowerElem(2))).toEqual([true, false, false, false]);
      expect(arr(a.lowerEqualElem(2))).toEqual([true, true, false, false]);
      expect(arr(a.equalElem(2))).toEqual([false, true, false, false]);
      expect(arr(a.notEqualElem(2))).toEqual([true, false, true, true]);
      expect(arr(a.greater(1.5))).toEqual([false, true, true, false]);
      expect(arr(a.isNan())).toEqual([false, false, false, true]);
      expect(arr(T.fromData([Infinity, -Infinity, 0]).isInf())).toEqual([true, true, false]);
      // Whole-tensor results are rank-0 `[]` (PyTorch's scalars; issue 15's one rule): toArray() is the value.
      expect(arr(a.containsNan())).toEqual(true);
      expect(arr(b.slice([[0, 3]]).containsNan())).toEqual(false);
      // broadcast [2, 1] vs [3]
      expect(arr(T.fromData([[1], [2]]).equal(T.fromData([1, 2, 3])))).toEqual([[true, false, false], [false, true, false]]);
      expectKilnError(kiln, () => a.greaterElem('2'), 'Type', 'greaterElem: the value must be a number, got the string "2"');
    });
  });

  it('bool logic', () => {
    run(() => {
      const p = T.fromData([true, true, false, false]);
      const q = T.fromData([true, false, true, false]);
      expect(p.boolAnd(q).toArray()).toEqual([true, false, false, false]);
      expect(p.boolOr(q).toArray()).toEqual([true, true, true, false]);
      expect(p.boolXor(q).toArray()).toEqual([false, true, true, false]);
      expect(p.boolNot().toArray()).toEqual([false, false, true, true]);
      expect(p.any().toArray()).toEqual(true);
      expect(p.all().toArray()).toEqual(false);
      expect(T.fromData([[true, false], [true, true]]).allDim(1).toArray()).toEqual([[false], [true]]);
      expect(T.fromData([[true, false], [false, false]]).anyDim(0).toArray()).toEqual([[true, false]]);
      expect(T.fromData([0, 0.5]).any().toArray()).toEqual(true);
      expectKilnError(kiln, () => T.fromData([1]).boolNot(), 'DType', 'boolNot: expected a bool tensor, got float32 (shape [1])');
    });
  });

  it('casts', () => {
    run(() => {
      const f = T.fromData([-1.7, -0.2, 0, 2.9]);
      expect(f.int().dtype).toBe('int32');
      expect(f.int().toArray()).toEqual([-1, 0, 0, 2]);
      expect(f.bool().toArray()).toEqual([true, true, false, true]);
      expect(T.fromData([true, false]).float().toArray()).toEqual([1, 0]);
      expect(T.fromData([true, false]).int().toArray()).toEqual([1, 0]);
      expect(T.fromData([3, 0], { dtype: 'int32' }).float().dtype).toBe('float32');
      expect(f.cast('int32').toArray()).toEqual([-1, 0, 0, 2]);
      const same = f.float();
      expect(same).not.toBe(f);
      expect(same.toArray()).toEqual(f.toArray());
      expectKilnError(kiln, () => f.cast('f16'), 'Type', /cast: dtype must be/);
    });
  });

  it('maskWhere and maskFill', () => {
    run(() => {
      const x = T.fromData([[1, 2], [3, 4]]);
      const m = T.fromData([[true, false], [false, true]]);
      expect(x.maskFill(m, -1).toArray()).toEqual([[-1, 2], [3, -1]]);
      expect(x.maskWhere(m, T.fromData([10, 20])).toArray()).toEqual([[10, 2], [3, 20]]);
      const i = T.fromData([1, 2], { dtype: 'int32' });
      expect(i.maskFill(T.fromData([false, true]), 7).toArray()).toEqual([1, 7]);
      expectKilnError(kiln, () => x.maskFill(x, 0), 'DType', 'maskFill: expected a bool tensor, got float32 (shape [2, 2])');
      expectKilnError(kiln, () => x.maskWhere(m, i), 'DType', /maskWhere: the value tensor must have the dtype of the tensor, float32, got int32/);
    });
  });
});

describe('reductions', () => {
  it('whole-tensor reductions give rank-0 [] (PyTorch); dim forms keep the dim', () => {
    run(() => {
      const x = T.fromData([[1, -2, 3], [4, 5, -6]]);
      expect(x.sum().shape).toEqual([]);
      expect(x.sum().item()).toBe(5);
      expect(x.mean().item()).toBeCloseTo(5 / 6, 6);
      expect(x.prod().item()).toBe(720);
      expect(x.max().item()).toBe(5);
      expect(x.min().item()).toBe(-6);
      expect(x.sumDim(1).toArray()).toEqual([[2], [3]]);
      expect(x.sum(1).toArray()).toEqual([[2], [3]]);
      expect(x.sumDim(0).toArray()).toEqual([[5, 3, -3]]);
      expect(x.sumDim(-1).toArray()).toEqual([[2], [3]]);
      expectClose(x.meanDim(0).dataSync(), [2.5, 1.5, -1.5]);
      expect(x.mean(0).toArray()).toEqual([[2.5, 1.5, -1.5]]);
      expect(x.prodDim(1).toArray()).toEqual([[-6], [-120]]);
      expect(x.prod(1).toArray()).toEqual([[-6], [-120]]);
      expect(x.maxDim(1).toArray()).toEqual([[3], [5]]);
      expect(x.max(0).toArray()).toEqual([[4, 5, 3]]);
      expect(x.minDim(1).toArray()).toEqual([[-2], [-6]]);
      expect(x.min(1).toArray()).toEqual([[-2], [-6]]);
      const [v, i] = x.maxDimWithIndices(1);
      expect(v.toArray()).toEqual([[3], [5]]);
      expect(i.toArray()).toEqual([[2], [1]]);
      expect(i.dtype).toBe('int32');
      const [vm, im] = x.minDimWithIndices(0);
      expect(vm.toArray()).toEqual([[1, -2, -6]]);
      expect(im.toArray()).toEqual([[0, 0, 1]]);
      expect(x.argmax(1).toArray()).toEqual([[2], [1]]);
      expect(x.argmin(0).toArray()).toEqual([[0, 0, 1]]);
      const ints = T.fromData([[1, 2], [3, 4]], { dtype: 'int32' });
      expect(ints.sum().toArray()).toEqual(10);
      expect(ints.sum().dtype).toBe('int32');
      expect(ints.mean().toArray()).toEqual(2); // floor of 2.5
      expect(ints.max(1).toArray()).toEqual([[2], [4]]);
      expectKilnError(kiln, () => x.sumDim(2), 'Index', /dim 2 is out of range for a tensor of rank 2/);
      expectKilnError(kiln, () => x.sumDim(0.5), 'Type', 'sumDim: dim must be an integer, got the number 0.5');
      expectKilnError(kiln, () => T.zeros([0]).max(), 'Shape', /max/);
      expectKilnError(kiln, () => T.full([2], 2e9, { dtype: 'int32' }).sum(), 'Limit', /sum/);
    });
  });

  it('var, varMean, sort, argsort, topk', () => {
    run(() => {
      const x = T.fromData([[1, 2, 3, 4], [2, 2, 2, 10]]);
      // row 0: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5
      expectClose(x.var(1).dataSync(), [5 / 3, 48 / 3]);
      expectClose(x.varBias(1).dataSync(), [5 / 4, 48 / 4]);
      const [v, m] = x.varMean(1, false);
      expectClose(v.dataSync(), [1.25, 12]);
      expectClose(m.dataSync(), [2.5, 4]);
      expect(m.shape).toEqual([2, 1]);
      const s = T.fromData([3, 1, NaN, 2]);
      expect(Array.from(s.sort().dataSync())).toEqual([1, 2, 3, NaN]);
      expect(s.argsort().toArray()).toEqual([1, 3, 0, 2]);
      expect(Array.from(T.fromData([3, 1, 2]).sortDescending().dataSync())).toEqual([3, 2, 1]);
      expect(T.fromData([[5, 1, 4], [0, 9, 3]]).topk(2, 1).toArray()).toEqual([[5, 4], [9, 3]]);
      const [tv, ti] = T.fromData([5, 1, 4]).topkWithIndices(2);
      expect(tv.toArray()).toEqual([5, 4]);
      expect(ti.toArray()).toEqual([0, 2]);
      expectKilnError(kiln, () => T.fromData([1, 2]).topk(3), 'Index', 'topk: k = 3 is out of range for dim -1 of size 2 (shape [2])');
      const [sv, si] = T.fromData([2, 1, 2, 0], { dtype: 'int32' }).sortWithIndices(0, true);
      expect(sv.toArray()).toEqual([2, 2, 1, 0]);
      expect(si.toArray()).toEqual([0, 2, 1, 3]); // stable
    });
  });
});

describe('matmul', () => {
  it('2-D, batched with broadcasting, and rank-1 operands as torch.matmul', () => {
    run(() => {
      const a = T.fromData([[1, 2], [3, 4]]);
      const b = T.fromData([[5, 6], [7, 8]]);
      expect(a.matmul(b).toArray()).toEqual([[19, 22], [43, 50]]);
      // [2, 2, 3] x [3, 1]: each batch times the column of ones = row sums
      const batch = T.arange(12, { dtype: 'float32' }).reshape([2, 2, 3]);
      const c = batch.matmul(T.ones([3, 1]));
      expect(c.shape).toEqual([2, 2, 1]);
      expect(c.toArray()).toEqual([[[3], [12]], [[21], [30]]]);
      // [2, 1, 2, 3] x [4, 3, 2] -> [2, 4, 2, 2]
      expect(T.ones([2, 1, 2, 3]).matmul(T.ones([4, 3, 2])).shape).toEqual([2, 4, 2, 2]);
      const v = T.fromData([1, 2]);
      expect(v.matmul(v).shape).toEqual([]);
      expect(v.matmul(v).item()).toBe(5);
      expect(a.matmul(v).toArray()).toEqual([5, 11]);
      expect(v.matmul(a).toArray()).toEqual([7, 10]);
      expect(T.ones([3, 2, 2]).matmul(v).shape).toEqual([3, 2]);
      expectKilnError(kiln, () => T.ones([2, 3]).matmul(T.ones([4, 5])), 'Shape',
        /^matmul: inner dimensions differ: lhs \[2, 3\] vs rhs \[4, 5\]/);
      expectKilnError(kiln, () => T.ones([2]).matmul(T.ones([3, 3])), 'Shape',
        'matmul: inner dimensions differ: lhs [2] vs rhs [3, 3] (2 != 3)');
      expectKilnError(kiln, () => T.ones([2, 3]).matmul(T.ones([2])), 'Shape',
        'matmul: inner dimensions differ: lhs [2, 3] vs rhs [2] (3 != 2)');
      expectKilnError(kiln, () => T.fromData(1).matmul(a), 'Rank', 'matmul: both operands need rank >= 1: lhs [] vs rhs [2, 2]');
      expectKilnError(kiln, () => T.ones([2, 2], { dtype: 'int32' }).matmul(a), 'DType', /matmul: expected a float32 tensor, got int32/);
    });
  });
});

describe('kiln.activation', () => {
  it('matches the tensor methods and hand values', () => {
    run(() => {
      const x = T.fromData([[1, 2, 3], [-1, 0, 4]]);
      const A = kiln.activation;
      const softmaxRow = (r) => {
        const m = Math.max(...r);
        const e = r.map((v) => Math.exp(v - m));
        const s = e.reduce((p, q) => p + q, 0);
        return e.map((v) => v / s);
      };
      const rows = [[1, 2, 3], [-1, 0, 4]];
      expectClose(A.softmax(x, 1).dataSync(), rows.flatMap(softmaxRow));
      expectClose(A.softmax(x, -1).dataSync(), rows.flatMap(softmaxRow));
      expectClose(A.logSoftmax(x, 1).dataSync(), rows.flatMap((r) => softmaxRow(r).map(Math.log)));
      expectClose(A.softmin(x, 1).dataSync(), rows.flatMap((r) => softmaxRow(r.map((v) => -v))));
      const col = (r) => r; // softmax along dim 0 of the 2 x 3
      const dim0 = [0, 1, 2].map((j) => softmaxRow([rows[0][j], rows[1][j]]));
      expectClose(A.softmax(x, 0).dataSync(), [dim0.map((p) => p[0]), dim0.map((p) => p[1])].flat().map(col));
      const f = rows.flat();
      expectClose(A.relu(x).dataSync(), f.map((v) => Math.max(v, 0)));
      expectClose(A.sigmoid(x).dataSync(), f.map((v) => 1 / (1 + Math.exp(-v))));
      expectClose(A.logSigmoid(x).dataSync(), f.map((v) => -Math.log1p(Math.exp(-v))));
      expectClose(A.tanh(x).dataSync(), f.map(Math.tanh));
      expectClose(A.silu(x).dataSync(), f.map((v) => v / (1 + Math.exp(-v))));
      expectClose(A.leakyRelu(x, 0.2).dataSync(), f.map((v) => (v < 0 ? 0.2 * v : v)));
      expectClose(A.softplus(x).dataSync(), f.map((v) => Math.log1p(Math.exp(v))));
      expectClose(A.gelu(x).dataSync(), x.gelu().dataSync(), { abs: 0, rel: 0 });
      expectKilnError(kiln, () => A.softmax(x, 2), 'Index', /softmax/);
      expectKilnError(kiln, () => A.relu([1, 2]), 'Type', 'activation.relu: x must be a kiln Tensor, got an array');
    });
  });
});
