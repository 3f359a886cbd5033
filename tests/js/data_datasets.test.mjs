// kiln.data's datasets of JS values (Burn's Dataset trait and transforms): the protocol,
// InMemDataset, ColumnDataset, MapperDataset, PartialDataset, ComposedDataset,
// FunctionDataset, and the seeded ShuffledDataset / SamplerDataset, whose orders come from
// the engine. Their expected indices were computed by a Python transcription of SplitMix64,
// mix_seed and Fisher–Yates (arbitrary-precision integers masked to 64 bits) from the
// algorithms documented in engine/include/kiln/data/rng.hpp; tests/native/data/
// js_orders_test.cpp checks the same numbers against the C++ classes.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let D;
beforeAll(async () => {
  kiln = await init();
  D = kiln.data;
});

const range = (n) => Array.from({ length: n }, (_, i) => i);
const all = (ds) => range(ds.length).map((i) => ds.get(i));

describe('the existing WASM-side datasets stay', () => {
  it('fromArrays and mnist are still there, with Dataset', () => {
    expect(typeof D.fromArrays).toBe('function');
    expect(typeof D.mnist).toBe('function');
    const ds = D.fromArrays(new Float32Array([1, 2, 3, 4]), new Int32Array([0, 1]), { itemShape: [2] });
    expect(ds).toBeInstanceOf(D.Dataset);
    expect(ds.length).toBe(2);
    ds.dispose();
    expect(Object.isFrozen(D)).toBe(true);
  });
});

describe('InMemDataset', () => {
  it('holds a copy of the array and iterates', () => {
    const items = [{ a: 1 }, { a: 2 }, { a: 3 }];
    const ds = new D.InMemDataset(items);
    items.push({ a: 4 });
    expect(ds.length).toBe(3);
    expect(ds.get(1)).toEqual({ a: 2 });
    expect([...ds]).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect(ds).toBeInstanceOf(D.BaseDataset);
    expect(new D.InMemDataset(new Float32Array([0.5, 1.5])).get(1)).toBe(1.5);
  });

  it('rejects bad items and indices', () => {
    expectKilnError(kiln, () => new D.InMemDataset({ length: 2 }), 'Type', 'InMemDataset: items must be an array, got an object');
    const ds = new D.InMemDataset([1, 2]);
    expectKilnError(kiln, () => ds.get(2), 'Index', 'InMemDataset.get: index 2 is out of range for a dataset of length 2');
    expectKilnError(kiln, () => ds.get(-1), 'Index', 'InMemDataset.get: index -1 is out of range for a dataset of length 2');
    expectKilnError(kiln, () => ds.get(0.5), 'Type', 'InMemDataset.get: index must be an integer, got the number 0.5');
    expectKilnError(kiln, () => ds.get('1'), 'Type', 'InMemDataset.get: index must be an integer, got the string "1"');
  });
});

describe('ColumnDataset', () => {
  it('items are views of the columns', () => {
    const x = new Float32Array([0, 1, 2, 3, 4, 5]);
    const y = new Int32Array([7, 8, 9]);
    const ds = new D.ColumnDataset({ x, y }, { itemSizes: { x: 2 } });
    expect(ds.length).toBe(3);
    const item = ds.get(2);
    expect(Array.from(item.x)).toEqual([4, 5]);
    expect(item.x.buffer).toBe(x.buffer); // a view, not a copy
    expect(item.y).toBe(9);
    expect(new D.ColumnDataset({ name: ['a', 'b'] }).get(1)).toEqual({ name: 'b' });
  });

  it('rejects columns that do not fit', () => {
    expectKilnError(kiln, () => new D.ColumnDataset({ x: new Float32Array(6), y: new Int32Array(2) }, { itemSizes: { x: 2 } }),
      'Shape', 'ColumnDataset: column "y" has 2 items but column "x" has 3');
    expectKilnError(kiln, () => new D.ColumnDataset({ x: new Float32Array(5) }, { itemSizes: { x: 2 } }),
      'Shape', 'ColumnDataset: column "x" has 5 values, not a multiple of its item size 2');
    expectKilnError(kiln, () => new D.ColumnDataset({ x: 3 }), 'Type', 'ColumnDataset: column "x" must be an array or a typed array, got the number 3');
    expectKilnError(kiln, () => new D.ColumnDataset({ x: [1, 2] }, { itemSizes: { z: 2 } }),
      'Config', 'ColumnDataset: itemSizes names "z", which is not a column (columns: x)');
    expectKilnError(kiln, () => new D.ColumnDataset({ x: [1, 2] }, { itemSizes: { x: 0 } }),
      'Value', 'ColumnDataset: itemSizes.x must be an integer >= 1, got the number 0');
  });
});

describe('MapperDataset, PartialDataset, ComposedDataset, FunctionDataset', () => {
  it('MapperDataset maps each item with its index', () => {
    const ds = new D.MapperDataset([10, 20, 30], (v, i) => v + i);
    expect(all(ds)).toEqual([10, 21, 32]);
    expectKilnError(kiln, () => new D.MapperDataset([1], 3), 'Type', 'MapperDataset: mapper must be a function, got the number 3');
    expectKilnError(kiln, () => new D.MapperDataset([1], (x) => x, { module: './relative.mjs' }),
      'Value', /^MapperDataset: module must be an absolute URL/);
  });

  it('a source whose get throws: the error names the index and keeps the cause', () => {
    const cause = new RangeError('no such row');
    const source = { length: 3, get(i) { if (i === 1) throw cause; return i; } };
    const ds = new D.MapperDataset(source, (x) => x * 2);
    expect(ds.get(2)).toBe(4);
    const e = expectKilnError(kiln, () => ds.get(1), 'Value', "MapperDataset.get: the dataset's get(1) threw RangeError: no such row");
    expect(e.cause).toBe(cause);
  });

  it('PartialDataset takes a range; split makes near-equal parts (Burn)', () => {
    const ds = new D.PartialDataset(range(10), 3, 7);
    expect(all(ds)).toEqual([3, 4, 5, 6]);
    expect(all(new D.PartialDataset(range(5), 2))).toEqual([2, 3, 4]);
    const parts = D.PartialDataset.split(range(10), 3);
    expect(parts.map(all)).toEqual([[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]);
    expectKilnError(kiln, () => new D.PartialDataset(range(5), 4, 2), 'Index', "PartialDataset: range 4..2 is not within the source's 0..5");
    expectKilnError(kiln, () => new D.PartialDataset(range(5), 0, 6), 'Index', "PartialDataset: range 0..6 is not within the source's 0..5");
    expectKilnError(kiln, () => D.PartialDataset.split(range(5), 0), 'Value', 'PartialDataset.split: n must be an integer >= 1, got the number 0');
  });

  it('ComposedDataset chains its sources', () => {
    const ds = new D.ComposedDataset([[1, 2], new D.InMemDataset([3]), new Int32Array([4, 5])]);
    expect(ds.length).toBe(5);
    expect(all(ds)).toEqual([1, 2, 3, 4, 5]);
    expectKilnError(kiln, () => ds.get(5), 'Index', 'ComposedDataset.get: index 5 is out of range for a dataset of length 5');
    expectKilnError(kiln, () => new D.ComposedDataset([[1], 7]), 'Type', /^ComposedDataset: sources\[1\] must be a dataset .*got the number 7$/);
  });

  it('FunctionDataset calls get with checked indices', () => {
    const ds = new D.FunctionDataset(4, (i) => i * i);
    expect(all(ds)).toEqual([0, 1, 4, 9]);
    expectKilnError(kiln, () => ds.get(4), 'Index', 'FunctionDataset.get: index 4 is out of range for a dataset of length 4');
    expectKilnError(kiln, () => new D.FunctionDataset(-1, (i) => i), 'Type', 'FunctionDataset: length must be a non-negative integer, got the number -1');
  });

  it('a protocol object whose length is not a non-negative integer is rejected', () => {
    for (const [length, given] of [[-1, 'the number -1'], [1.5, 'the number 1.5'], ['3', 'the string "3"'], [undefined, 'undefined'], [NaN, 'the number NaN']]) {
      expectKilnError(kiln, () => new D.PartialDataset({ length, get: () => 0 }, 0, 0),
        'Type', `PartialDataset: the source's length must be a non-negative integer, got ${given}`);
    }
    expectKilnError(kiln, () => new D.MapperDataset({ get: () => 0 }, (x) => x), 'Type', /^MapperDataset: source must be a dataset/);
  });
});

describe('ShuffledDataset (the engine order of C++ ShuffledDataset)', () => {
  it('gives permutation(length, seed)', () => {
    const ds = new D.ShuffledDataset(range(10).map((i) => `item${i}`), 42);
    expect(ds.indices).toEqual([0, 9, 5, 8, 6, 4, 7, 2, 1, 3]);
    expect(ds.get(1)).toBe('item9');
    expect(new D.ShuffledDataset(range(6), 5).indices).toEqual([0, 1, 5, 3, 4, 2]);
    expect(D.ShuffledDataset.withSeed(range(5), 2 ** 53 - 1).indices).toEqual([1, 4, 3, 0, 2]);
    expect(new D.ShuffledDataset([], 1).length).toBe(0);
    expect(D.permutation(10, 42)).toEqual([0, 9, 5, 8, 6, 4, 7, 2, 1, 3]);
    expect(D.permutation(10, 42, 0)).toEqual([6, 7, 9, 8, 2, 0, 1, 3, 5, 4]);
  });

  it('rejects bad seeds', () => {
    expectKilnError(kiln, () => new D.ShuffledDataset([1], -1), 'Type', 'ShuffledDataset: seed must be an integer in [0, 2^53 - 1], got the number -1');
    expectKilnError(kiln, () => new D.ShuffledDataset([1], 2 ** 53), 'Type', 'ShuffledDataset: seed must be an integer in [0, 2^53 - 1], got the number 9007199254740992');
    expectKilnError(kiln, () => new D.ShuffledDataset([1], '1'), 'Type', 'ShuffledDataset: seed must be an integer in [0, 2^53 - 1], got the string "1"');
  });
});

describe('SamplerDataset (the engine samples of C++ SamplerDataset)', () => {
  it('with replacement (Burn default)', () => {
    expect(new D.SamplerDataset(range(10), 5, { seed: 7 }).indices).toEqual([0, 2, 2, 0, 2]);
    expect(D.SamplerDataset.withReplacement(range(4), 8, 3).indices).toEqual([1, 1, 3, 2, 2, 1, 0, 0]);
    expect(new D.SamplerDataset(range(10), 5, { seed: 7 }).replacement).toBe(true);
  });

  it('without replacement: every item floor(size/len) times plus distinct extras', () => {
    const ds = D.SamplerDataset.withoutReplacement(range(10).map((i) => i * 10), 15, 7);
    expect(ds.indices).toEqual([1, 9, 5, 6, 8, 3, 4, 3, 1, 4, 5, 2, 6, 0, 7]);
    expect(ds.get(0)).toBe(10);
    expect(new D.SamplerDataset(range(4), 6, { replacement: false, seed: 3 }).indices).toEqual([3, 2, 0, 1, 0, 3]);
  });

  it('bad inputs', () => {
    expectKilnError(kiln, () => new D.SamplerDataset([], 3), 'Value', 'SamplerDataset: cannot sample 3 items from an empty dataset');
    expect(new D.SamplerDataset([], 0).length).toBe(0);
    expectKilnError(kiln, () => new D.SamplerDataset([1], -2), 'Type', 'SamplerDataset: size must be a non-negative integer, got the number -2');
    expectKilnError(kiln, () => new D.SamplerDataset([1], 2, { replace: true }), 'Config', 'SamplerDataset: unknown option "replace" (options: replacement, seed)');
    expectKilnError(kiln, () => new D.SamplerDataset([1], 2, { replacement: 1 }), 'Type', 'SamplerDataset: replacement must be a boolean, got the number 1');
  });
});
