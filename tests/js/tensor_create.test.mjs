// Tensor creation and data out: fromData (nested arrays, typed arrays, shape/dtype options,
// ragged and non-numeric input), zeros/ones/full/random/arange/eye/*Like, shape, dtype,
// rank, numel, toArray, dataSync, item, toString, clone.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});

// Every test runs in a tidy scope by hand: tensors created by it are disposed after it.
let scopeResult;
function run(fn) {
  scopeResult = kiln.tidy(() => {
    fn();
  });
}
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

describe('Tensor.fromData', () => {
  it('builds a float32 tensor from nested arrays', () => {
    run(() => {
      const t = T.fromData([[1, 2, 3], [4, 5, 6]]);
      expect(t.shape).toEqual([2, 3]);
      expect(t.dtype).toBe('float32');
      expect(t.rank).toBe(2);
      expect(t.numel).toBe(6);
      expect(t.size).toBe(6);
      expect(t.toArray()).toEqual([[1, 2, 3], [4, 5, 6]]);
      const d = t.dataSync();
      expect(d).toBeInstanceOf(Float32Array);
      expect(Array.from(d)).toEqual([1, 2, 3, 4, 5, 6]);
      d[0] = 100; // a copy
      expect(t.dataSync()[0]).toBe(1);
      const s = t.shape;
      s[0] = 7; // a fresh array
      expect(t.shape).toEqual([2, 3]);
    });
  });

  it('makes a rank-0 tensor from a number and a boolean', () => {
    run(() => {
      const s = T.fromData(3.5);
      expect(s.shape).toEqual([]);
      expect(s.rank).toBe(0);
      expect(s.numel).toBe(1);
      expect(s.item()).toBe(3.5);
      expect(s.toArray()).toBe(3.5);
      const b = T.fromData(true);
      expect(b.dtype).toBe('bool');
      expect(b.item()).toBe(true);
    });
  });

  it('keeps every rank from 0 to 6', () => {
    run(() => {
      for (let rank = 0; rank <= 6; rank++) {
        const shape = Array.from({ length: rank }, (_, i) => (i % 3) + 1); // [1, 2, 3, 1, 2, 3]
        const n = shape.reduce((a, b) => a * b, 1);
        const values = Float32Array.from({ length: n }, (_, i) => i - 2.5);
        const t = T.fromData(values, { shape });
        expect(t.shape).toEqual(shape);
        expect(t.rank).toBe(rank);
        expect(Array.from(t.dataSync())).toEqual(Array.from(values));
        // toArray nests to the rank; reading it back gives the same tensor
        const back = T.fromData(t.toArray());
        expect(back.shape).toEqual(shape);
        expect(Array.from(back.dataSync())).toEqual(Array.from(values));
        // ops work at every rank
        expect(Array.from(t.mul(2).dataSync())).toEqual(Array.from(values, (v) => v * 2));
      }
    });
  });

  it('infers bool from booleans and converts with a dtype option', () => {
    run(() => {
      const b = T.fromData([[true, false], [false, true]]);
      expect(b.dtype).toBe('bool');
      expect(b.toArray()).toEqual([[true, false], [false, true]]);
      expect(b.dataSync()).toBeInstanceOf(Uint8Array);
      expect(Array.from(b.dataSync())).toEqual([1, 0, 0, 1]);
      const i = T.fromData([1.7, -1.7, 2, -0.2], { dtype: 'int32' });
      expect(i.dtype).toBe('int32');
      expect(Array.from(i.dataSync())).toEqual([1, -1, 2, 0]); // toward zero, as PyTorch
      expect(i.dataSync()).toBeInstanceOf(Int32Array);
      const f = T.fromData([true, false, true], { dtype: 'float32' });
      expect(Array.from(f.dataSync())).toEqual([1, 0, 1]);
      const bb = T.fromData([0, 2, -1, NaN], { dtype: 'bool' });
      expect(bb.toArray()).toEqual([false, true, true, true]);
      // mixed booleans and numbers are numbers
      expect(T.fromData([true, 2]).toArray()).toEqual([1, 2]);
    });
  });

  it('reads typed arrays with their default dtype, and a shape', () => {
    run(() => {
      const f = T.fromData(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3] });
      expect(f.shape).toEqual([2, 3]);
      expect(f.toArray()).toEqual([[1, 2, 3], [4, 5, 6]]);
      expect(T.fromData(new Float64Array([0.5, 1.5])).dtype).toBe('float32');
      const i = T.fromData(new Int32Array([1, -2, 3]));
      expect(i.dtype).toBe('int32');
      expect(i.shape).toEqual([3]);
      expect(T.fromData(new Uint8Array([255, 0])).toArray()).toEqual([255, 0]);
      expect(T.fromData(new Uint8Array([1, 0]), { dtype: 'bool' }).toArray()).toEqual([true, false]);
      // flat array + shape
      expect(T.fromData([1, 2, 3, 4], { shape: [2, 2] }).toArray()).toEqual([[1, 2], [3, 4]]);
      // rows that are typed arrays
      const rows = T.fromData([new Float32Array([1, 2]), new Float32Array([3, 4])]);
      expect(rows.toArray()).toEqual([[1, 2], [3, 4]]);
    });
  });

  it('accepts empty arrays and empty dims', () => {
    run(() => {
      const e = T.fromData([]);
      expect(e.shape).toEqual([0]);
      expect(e.toArray()).toEqual([]);
      const z = T.fromData([[], []]);
      expect(z.shape).toEqual([2, 0]);
      expect(z.toArray()).toEqual([[], []]);
      expect(T.zeros([0, 3]).shape).toEqual([0, 3]);
    });
  });

  it('rejects ragged arrays with Shape, naming the position', () => {
    expectKilnError(kiln, () => T.fromData([[1, 2], [3]]), 'Shape',
      'fromData: ragged nested array: data[1] has 1 elements, expected 2 (as data[0])');
    expectKilnError(kiln, () => T.fromData([[1, 2], 3]), 'Shape',
      'fromData: ragged nested array: data[1] is a number, expected an array of length 2 (as data[0])');
    expectKilnError(kiln, () => T.fromData([[1, 2], [3, [4]]]), 'Shape',
      /^fromData: ragged nested array: data\[1\]\[1\] is an array, expected a number/);
    expectKilnError(kiln, () => T.fromData([[[1], [2]], [[3], [4, 5]]]), 'Shape',
      'fromData: ragged nested array: data[1][1] has 2 elements, expected 1 (as data[0][0])');
  });

  it('rejects non-numeric data with Type, naming the position', () => {
    expectKilnError(kiln, () => T.fromData([1, 'a']), 'Type',
      'fromData: data[1] must be a number or a boolean, got the string "a"');
    expectKilnError(kiln, () => T.fromData([[1, null]]), 'Type',
      'fromData: data[0][1] must be a number or a boolean, got null');
    expectKilnError(kiln, () => T.fromData([[1], [{}]]), 'Type',
      'fromData: data[1][0] must be a number or a boolean, got an object');
    expectKilnError(kiln, () => T.fromData('abc'), 'Type',
      'fromData: data must be a number, a boolean, a (nested) array or a typed array, got the string "abc"');
    expectKilnError(kiln, () => T.fromData(undefined), 'Type', /got undefined$/);
    expectKilnError(kiln, () => T.fromData(new BigInt64Array(2)), 'Type', /BigInt64Array is not supported/);
  });

  it('rejects bad options and sizes', () => {
    expectKilnError(kiln, () => T.fromData([1, 2, 3], { shape: [2, 2] }), 'Shape',
      'fromData: data has 3 values, shape [2, 2] needs 4');
    expectKilnError(kiln, () => T.fromData([1], { dtype: 'float64' }), 'Type',
      'fromData: dtype must be "float32", "int32" or "bool", got the string "float64"');
    expectKilnError(kiln, () => T.fromData([1], { shape: [1.5] }), 'Type',
      'fromData: shape[0] must be an integer >= 0, got the number 1.5');
    expectKilnError(kiln, () => T.fromData([1], 'float32'), 'Type',
      'fromData: options must be an object, got the string "float32"');
    expectKilnError(kiln, () => T.fromData([3e9], { dtype: 'int32' }), 'Value',
      'fromData: value 3000000000 at flat index 0 does not fit in int32');
    expectKilnError(kiln, () => T.fromData([NaN], { dtype: 'int32' }), 'Value', /value NaN/);
  });

  it('cannot be constructed with new', () => {
    expectKilnError(kiln, () => new T([1], [1]), 'Type', /use kiln.Tensor.fromData/);
  });
});

describe('factories', () => {
  it('zeros, ones and full', () => {
    run(() => {
      const z = T.zeros([2, 3]);
      expect(z.toArray()).toEqual([[0, 0, 0], [0, 0, 0]]);
      expect(z.dtype).toBe('float32');
      expect(T.ones([2], { dtype: 'int32' }).toArray()).toEqual([1, 1]);
      expect(T.ones([2], { dtype: 'int32' }).dtype).toBe('int32');
      expect(T.full([2, 1], 3.25).toArray()).toEqual([[3.25], [3.25]]);
      expect(T.full([2], true).dtype).toBe('bool');
      expect(T.full([2], true).toArray()).toEqual([true, true]);
      expect(T.full([], 7).shape).toEqual([]);
      expect(T.full([], 7).item()).toBe(7);
      expect(T.zeros([]).item()).toBe(0);
    });
  });

  it('zerosLike, onesLike and fullLike keep shape and dtype', () => {
    run(() => {
      const i = T.fromData([[1, 2, 3]], { dtype: 'int32' });
      const z = T.zerosLike(i);
      expect(z.shape).toEqual([1, 3]);
      expect(z.dtype).toBe('int32');
      expect(z.toArray()).toEqual([[0, 0, 0]]);
      expect(T.onesLike(i).toArray()).toEqual([[1, 1, 1]]);
      expect(T.fullLike(i, 4).toArray()).toEqual([[4, 4, 4]]);
      expect(T.onesLike(i, { dtype: 'float32' }).dtype).toBe('float32');
    });
  });

  it('random: uniform, normal, bernoulli, reproducible with a seed', () => {
    run(() => {
      const n = 20000;
      const u = T.random([n], { uniform: [-2, 3] }, { seed: 7 }).dataSync();
      let min = Infinity;
      let max = -Infinity;
      let sum = 0;
      for (const v of u) {
        min = Math.min(min, v);
        max = Math.max(max, v);
        sum += v;
      }
      expect(min).toBeGreaterThanOrEqual(-2);
      expect(max).toBeLessThan(3);
      expect(sum / n).toBeCloseTo(0.5, 1); // mean of U(-2, 3); sd of the mean ~0.01
      // the same seed gives the same values
      const again = T.random([n], { uniform: [-2, 3] }, { seed: 7 }).dataSync();
      expect(Array.from(again)).toEqual(Array.from(u));

      kiln.seed(11);
      const g = T.random([n], { normal: [1, 2] }).dataSync();
      const mean = g.reduce((a, b) => a + b, 0) / n;
      const sd = Math.sqrt(g.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
      expect(Math.abs(mean - 1)).toBeLessThan(0.1); // sd of the mean ~0.014
      expect(Math.abs(sd - 2)).toBeLessThan(0.1);

      const b = T.random([n], { bernoulli: 0.3 }, { seed: 3 }).dataSync();
      expect(b.every((v) => v === 0 || v === 1)).toBe(true);
      expect(Math.abs(b.reduce((a, c) => a + c, 0) / n - 0.3)).toBeLessThan(0.03);

      const d = T.random([1000]).dataSync(); // default uniform [0, 1)
      expect(d.every((v) => v >= 0 && v < 1)).toBe(true);

      const ints = T.random([1000], { uniform: [0, 10] }, { dtype: 'int32', seed: 1 });
      expect(ints.dtype).toBe('int32');
      const iv = ints.dataSync();
      expect(iv.every((v) => Number.isInteger(v) && v >= 0 && v < 10)).toBe(true);
      expect(new Set(iv).size).toBe(10);
    });
  });

  it('random rejects bad distributions', () => {
    expectKilnError(kiln, () => T.random([2], { uniform: [3, 1] }), 'Value', /uniform/);
    expectKilnError(kiln, () => T.random([2], { bernoulli: 1.5 }), 'Value', /bernoulli/);
    expectKilnError(kiln, () => T.random([2], { normal: [0, -1] }), 'Value', /normal/);
    expectKilnError(kiln, () => T.random([2], { gamma: 1 }), 'Type', /got keys gamma/);
    expectKilnError(kiln, () => T.random([2], { uniform: [0, 'x'] }), 'Type', /uniform\[1\] must be a number/);
  });

  it('arange: int32 for integers, float32 otherwise, negative steps', () => {
    run(() => {
      const a = T.arange(0, 5);
      expect(a.dtype).toBe('int32');
      expect(a.toArray()).toEqual([0, 1, 2, 3, 4]);
      expect(T.arange(4).toArray()).toEqual([0, 1, 2, 3]);
      expect(T.arange(5, 0, -2).toArray()).toEqual([5, 3, 1]);
      const f = T.arange(0, 1, 0.25);
      expect(f.dtype).toBe('float32');
      expect(f.toArray()).toEqual([0, 0.25, 0.5, 0.75]);
      expect(T.arange(0, 3, { dtype: 'float32' }).dtype).toBe('float32');
      expect(T.arange(2, 2).shape).toEqual([0]);
    });
    expectKilnError(kiln, () => T.arange(0, 5, 0), 'Value', 'arange: step must not be 0');
    expectKilnError(kiln, () => T.arange('0', 5), 'Type', 'arange: start must be a number, got the string "0"');
  });

  it('eye', () => {
    run(() => {
      expect(T.eye(3).toArray()).toEqual([[1, 0, 0], [0, 1, 0], [0, 0, 1]]);
      expect(T.eye(2, 3).toArray()).toEqual([[1, 0, 0], [0, 1, 0]]);
      const i = T.eye(2, { dtype: 'int32' });
      expect(i.dtype).toBe('int32');
      expect(i.toArray()).toEqual([[1, 0], [0, 1]]);
    });
    expectKilnError(kiln, () => T.eye(-1), 'Value', /eye: sizes must be integers >= 0/);
  });

  it('rejects bad shapes', () => {
    expectKilnError(kiln, () => T.zeros([2, -1]), 'Type', 'zeros: shape[1] must be an integer >= 0, got the number -1');
    expectKilnError(kiln, () => T.zeros('2'), 'Type', 'zeros: shape must be an array of integers, got the string "2"');
    expectKilnError(kiln, () => T.ones([1, 1, 1, 1, 1, 1, 1, 1, 1]), 'Limit', /at most 8 dims/);
    expectKilnError(kiln, () => T.full([2], 'x'), 'Type', 'full: value must be a number or a boolean, got the string "x"');
  });
});

describe('data out', () => {
  it('item needs exactly one element', () => {
    run(() => {
      expect(T.fromData([[2.5]]).item()).toBe(2.5);
      expect(T.fromData([7], { dtype: 'int32' }).item()).toBe(7);
      expectKilnError(kiln, () => T.fromData([1, 2]).item(), 'Shape',
        'item: expected a tensor with one element, got shape [2] (2 elements)');
    });
  });

  it('toString prints as Burn (and the C++ operator<<), with a precision', () => {
    run(() => {
      const t = T.fromData([[1, 2], [3, 4.5]]);
      expect(t.toString()).toBe(
        'Tensor {\n  data:\n[[1.0, 2.0],\n [3.0, 4.5]],\n  shape:  [2, 2],\n  device:  Cpu,\n' +
          '  backend:  "autodiff<cpu>",\n  kind:  "Float",\n  dtype:  "f32",\n}',
      );
      expect(T.fromData([1 / 3, 2]).toString({ precision: 2 })).toContain('[0.33, 2.00]');
      expect(String(T.fromData([1, 2], { dtype: 'int32' }))).toContain('kind:  "Int"');
      expect(T.fromData([true]).toString()).toContain('[true]');
      expectKilnError(kiln, () => t.toString({ precision: 50 }), 'Value', 'toString: precision must be in [0, 20], got 50');
      expectKilnError(kiln, () => t.toString({ precision: 1.5 }), 'Type', /precision must be an integer/);
    });
  });

  it('clone shares values; each handle is disposed on its own', () => {
    const a = T.fromData([1, 2]);
    const b = a.clone();
    a.dispose();
    expect(b.toArray()).toEqual([1, 2]);
    b.dispose();
    expect(b.isDisposed).toBe(true);
  });
});
