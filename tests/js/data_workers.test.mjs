// kiln.data.DataLoader with numWorkers > 0 in Node (worker_threads): the batches equal
// those of numWorkers 0, in order, for the default batcher (collated in the workers) and a
// user batcher (items sent back); the items are really loaded in other threads; datasets
// built by modules (fromModule, MapperDataset with a module) and the transforms over them;
// a dataset a worker cannot rebuild is a clear KilnError before any worker starts (no
// silent fallback to one thread); a worker's exception arrives as a KilnError naming the
// item index; workers end when the iteration ends, breaks or fails.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
let D;
beforeAll(async () => {
  kiln = await init();
  D = kiln.data;
});

const FIXTURE = new URL('./data_fixtures/datasets.mjs', import.meta.url).href;
const range = (n) => Array.from({ length: n }, (_, i) => i);

function plain(b) {
  if (b instanceof kiln.Tensor) return { shape: b.shape, dtype: b.dtype, data: b.toArray() };
  if (Array.isArray(b)) return b.map(plain);
  if (b !== null && typeof b === 'object') return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, plain(v)]));
  return b;
}

async function epochAsync(loader, stopAfter = Infinity) {
  const out = [];
  for await (const b of loader) {
    out.push(plain(b));
    kiln.dispose(b);
    if (out.length >= stopAfter) break;
  }
  return out;
}

/** Waits (event-loop turns, no fixed delay) until every worker has exited. */
async function workersGone() {
  for (let i = 0; i < 2000 && D.DataLoader.liveWorkers() > 0; i++) await new Promise((r) => setTimeout(r, 5));
  return D.DataLoader.liveWorkers();
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('workers give the batches of numWorkers 0', () => {
  it('ColumnDataset, shuffled, default batcher, 3 epochs, 1 to 3 workers', async () => {
    const n = 103;
    const x = Float32Array.from(range(n * 3), (v) => v * 0.5);
    const y = Int32Array.from(range(n), (i) => (i * 7) % 10);
    const ds = new D.ColumnDataset({ x, y }, { itemSizes: { x: 3 } });
    const options = { batchSize: 8, shuffle: true, seed: 42, batcher: D.defaultBatcher({ dtype: { y: 'int32' } }) };
    const reference = new D.DataLoader(ds, options);
    const expected = [];
    for (let e = 0; e < 3; e++) expected.push(await epochAsync(reference));
    // By hand, batch 0 of epoch 0: the items at permutation(103, mixSeed(42, 0))[0..8].
    const order = D.permutation(n, 42, 0);
    expect(expected[0][0].y.data).toEqual(order.slice(0, 8).map((i) => (i * 7) % 10));
    expect(expected[0][0].x.data[0]).toEqual([order[0] * 1.5, order[0] * 1.5 + 0.5, order[0] * 1.5 + 1]);
    expect(expected[0]).toHaveLength(13);
    expect(expected[0][12].x.shape).toEqual([7, 3]);
    for (const numWorkers of [1, 2, 3]) {
      const loader = new D.DataLoader(ds, { ...options, numWorkers });
      for (let e = 0; e < 3; e++) expect(await epochAsync(loader)).toEqual(expected[e]);
    }
    expect(await workersGone()).toBe(0);
  });

  it('a user batcher gets the items the workers loaded, in order, from other threads', async () => {
    const ds = await D.fromModule(FIXTURE, { export: 'threads', args: [12] });
    expect(ds).toBeInstanceOf(D.ModuleDataset);
    const batcher = (items) => ({ i: kiln.Tensor.fromData(items.map((t) => t.i)), threads: items.map((t) => t.thread) });
    const local = await epochAsync(new D.DataLoader(ds, { batchSize: 3, shuffle: true, seed: 9, batcher }));
    expect(local.flatMap((b) => b.threads).every((t) => t === 0)).toBe(true);
    const got = await epochAsync(new D.DataLoader(ds, { batchSize: 3, shuffle: true, seed: 9, batcher, numWorkers: 2 }));
    expect(got.map((b) => b.i)).toEqual(local.map((b) => b.i));
    const threads = new Set(got.flatMap((b) => b.threads));
    expect(threads.has(0)).toBe(false);
    expect(threads.size).toBe(2);
    // batch j comes from worker j mod 2: the same thread every other batch.
    expect(got[0].threads[0]).toBe(got[2].threads[0]);
    expect(got[0].threads[0]).not.toBe(got[1].threads[0]);
  });

  it('order is kept when workers finish out of order', async () => {
    const ds = await D.fromModule(FIXTURE, { export: 'unevenCost', args: [12] });
    const got = await epochAsync(new D.DataLoader(ds, { batchSize: 1, numWorkers: 2, prefetchFactor: 3 }));
    expect(got.map((b) => b.data)).toEqual(range(12).map((i) => [i]));
  });

  it('fromModule datasets under the transforms, and a MapperDataset whose mapper is a module export', async () => {
    const squares = await D.fromModule(FIXTURE, { args: [10, 1] });
    expect(squares.length).toBe(10);
    expect(Array.from(squares.get(2).x)).toEqual([3, 9]);
    const composed = new D.ComposedDataset([
      new D.PartialDataset(squares, 2, 6),
      new D.ShuffledDataset(new D.InMemDataset(range(5).map((i) => ({ x: new Float32Array([-i, i]), y: 0 }))), 3),
      new D.SamplerDataset(squares, 4, { seed: 5 }),
    ]);
    const options = { batchSize: 5, shuffle: true, seed: 1 };
    const expected = await epochAsync(new D.DataLoader(composed, options));
    expect(await epochAsync(new D.DataLoader(composed, { ...options, numWorkers: 2 }))).toEqual(expected);

    const mapped = new D.MapperDataset([1, 2, 3, 4], (v, i) => v * 10 + i, { module: FIXTURE, export: 'scaled' });
    expect(await epochAsync(new D.DataLoader(mapped, { batchSize: 4, numWorkers: 1 }))).toEqual([
      { shape: [4], dtype: 'float32', data: [10, 21, 32, 43] },
    ]);
  });

  it('a loader with workers resumes from a state exactly', async () => {
    const ds = new D.InMemDataset(range(20));
    const options = { batchSize: 3, shuffle: true, seed: 42, numWorkers: 2 };
    const first = new D.DataLoader(ds, options);
    const all = await epochAsync(new D.DataLoader(ds, { ...options, numWorkers: 0 }));
    const head = [];
    let saved;
    for await (const b of first) {
      head.push(plain(b));
      b.dispose();
      if (head.length === 4) {
        saved = first.state();
        break;
      }
    }
    expect(saved).toEqual({ epoch: 0, batch: 4, seed: 42 });
    const resumed = new D.DataLoader(ds, options);
    resumed.loadState(saved);
    expect([...head, ...(await epochAsync(resumed))]).toEqual(all);
    expect(await workersGone()).toBe(0);
  });
});

describe('datasets a worker cannot rebuild: a KilnError before any worker starts', () => {
  it('names the part and says what to do', async () => {
    const cases = [
      [{ length: 3, get: (i) => i }, /^DataLoader: numWorkers > 0 needs a dataset a worker can rebuild, but the dataset is an object \(its get\(\) is a function/],
      [new D.FunctionDataset(3, (i) => i), /but the dataset is a FunctionDataset .*kiln\.data\.fromModule\(url\)$/],
      [new D.MapperDataset([1, 2], (v) => v), /but the dataset is a MapperDataset whose mapper is a function only/],
      [new D.PartialDataset(new D.MapperDataset([1, 2], (v) => v), 0, 1), /but the dataset\.source is a MapperDataset/],
      [new D.InMemDataset([{ x: 1 }, { x: () => 2 }]), /but the dataset \(an InMemDataset\) item\[1\]\.x is a function$/],
      [new D.ComposedDataset([[1], new D.InMemDataset([new Map()])]), /but the dataset\.sources\[1\] \(an InMemDataset\) item\[0\] is a Map$/],
    ];
    for (const [dataset, message] of cases) {
      const loader = new D.DataLoader(dataset, { numWorkers: 2 });
      const e = await rejection(epochAsync(loader));
      expect(e).toBeInstanceOf(kiln.KilnError);
      expect(e.code).toBe('Type');
      expect(e.message).toMatch(message);
      expect(D.DataLoader.liveWorkers()).toBe(0);
    }
    const t = kiln.Tensor.fromData([1, 2]);
    const e = await rejection(epochAsync(new D.DataLoader([t], { numWorkers: 1 })));
    expect(e.message).toMatch(/but the dataset\[0\] is a Tensor$/);
    t.dispose();
  });

  it('fromModule rejects what it cannot use', async () => {
    const missing = new URL('./data_fixtures/missing.mjs', import.meta.url).href;
    expect((await rejection(D.fromModule(missing))).message).toMatch(/^fromModule: cannot import .*missing\.mjs/);
    expect((await rejection(D.fromModule(FIXTURE, { export: 'notAFunction' }))).message)
      .toBe(`fromModule: ${FIXTURE} has no function export "notAFunction" (got the number 3)`);
    expect((await rejection(D.fromModule(FIXTURE, { export: 'notADataset' }))).message)
      .toBe(`fromModule: ${FIXTURE}'s notADataset(...) must return a dataset ({length, get}), got an object`);
    expect((await rejection(D.fromModule('./x.mjs'))).code).toBe('Value');
    expect((await rejection(D.fromModule(FIXTURE, { args: 3 }))).message).toBe('fromModule: args must be an array, got the number 3');
  });
});

describe('errors in workers', () => {
  it("a get that throws in a worker: a KilnError naming the index, the worker's error as cause; workers end", async () => {
    const ds = await D.fromModule(FIXTURE, { export: 'failing', args: [12, 7] });
    const got = [];
    const e = await rejection((async () => {
      for await (const b of new D.DataLoader(ds, { batchSize: 2, numWorkers: 2 })) {
        got.push(b.toArray());
        b.dispose();
      }
    })());
    expect(got).toEqual([[0, 1], [2, 3], [4, 5]]);
    expect(e).toBeInstanceOf(kiln.KilnError);
    expect(e.code).toBe('Value');
    expect(e.message).toBe("DataLoader: the dataset's get(7) threw RangeError: row 7 is corrupt (in worker 1, batch 3)");
    expect(e.cause).toBeInstanceOf(Error);
    expect(e.cause.name).toBe('RangeError');
    expect(e.cause.message).toBe('row 7 is corrupt');
    expect(await workersGone()).toBe(0);
  });

  it('items a worker cannot send back are a KilnError naming the batch', async () => {
    const ds = await D.fromModule(FIXTURE, { export: 'unsendable', args: [4] });
    const e = await rejection(epochAsync(new D.DataLoader(ds, { batchSize: 2, numWorkers: 1, batcher: () => kiln.Tensor.zeros([1]) })));
    expect(e).toBeInstanceOf(kiln.KilnError);
    expect(e.message).toMatch(/^DataLoader: .*could not be cloned.* \(in worker 0, batch 0\)$/);
  });

  it('a default-batcher error in a worker names the item and field', async () => {
    const ds = new D.InMemDataset([{ x: 1 }, { x: 'two' }]);
    const e = await rejection(epochAsync(new D.DataLoader(ds, { batchSize: 2, numWorkers: 1 })));
    expect(e.code).toBe('Type');
    expect(e.message).toBe('DataLoader: defaultBatcher: items[1].x is the string "two" but items[0].x is the number 1 (in worker 0, batch 0)');
  });

  it('breaking out of a loop terminates the workers', async () => {
    const ds = new D.InMemDataset(range(100));
    const loader = new D.DataLoader(ds, { batchSize: 2, numWorkers: 3 });
    expect(await epochAsync(loader, 2)).toEqual([
      { shape: [2], dtype: 'float32', data: [0, 1] },
      { shape: [2], dtype: 'float32', data: [2, 3] },
    ]);
    expect(await workersGone()).toBe(0);
    expect(loader.state()).toEqual({ epoch: 1, batch: 0, seed: 0 });
  });
});

describe('plain arrays and typed arrays as datasets in workers', () => {
  it('give the batches of numWorkers 0', async () => {
    const typed = Float64Array.from(range(7), (i) => i / 4);
    const expected = [[0, 0.25, 0.5], [0.75, 1, 1.25], [1.5]].map((data) => ({ shape: [data.length], dtype: 'float32', data }));
    expect(await epochAsync(new D.DataLoader(typed, { batchSize: 3 }))).toEqual(expected);
    expect(await epochAsync(new D.DataLoader(typed, { batchSize: 3, numWorkers: 2 }))).toEqual(expected);
    const items = range(5).map((i) => [i, { v: new Int32Array([i, 2 * i]) }]);
    const a = await epochAsync(new D.DataLoader(items, { batchSize: 2, shuffle: true, seed: 3 }));
    const b = await epochAsync(new D.DataLoader(items, { batchSize: 2, shuffle: true, seed: 3, numWorkers: 2 }));
    expect(b).toEqual(a);
    expect(a[0][1].v.dtype).toBe('int32');
  });

  it("a ShuffledDataset's item error in a worker names it", async () => {
    const src = await D.fromModule(FIXTURE, { export: 'failing', args: [4, 2] });
    const e = await rejection(epochAsync(new D.DataLoader(new D.ShuffledDataset(src, 42), { batchSize: 4, numWorkers: 1 })));
    // ShuffledDataset's get(i) wraps the source's error (index 2 of the source) and the
    // loader names the shuffled index it asked for: permutation(4, 42) holds 2 at position
    // D.permutation(4, 42).indexOf(2).
    const position = D.permutation(4, 42).indexOf(2);
    expect(e.message).toBe(`DataLoader: the dataset's get(${position}) threw KilnError: ShuffledDataset.get: the dataset's get(2) threw RangeError: row 2 is corrupt (in worker 0, batch 0)`);
  });
});

describe('what workers receive', () => {
  it('typed columns go in one shared copy (Node has SharedArrayBuffer); the dataset keeps its own arrays', () => {
    const x = new Float32Array([1, 2, 3, 4]);
    const ds = new D.ColumnDataset({ x, label: ['a', 'b'] }, { itemSizes: { x: 2 } });
    const desc = ds[Symbol.for('kiln.data.describe')]('the dataset');
    expect(desc.kind).toBe('columns');
    expect(desc.columns.x.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Array.from(desc.columns.x)).toEqual([1, 2, 3, 4]);
    expect(desc.columns.label).toEqual(['a', 'b']);
    expect(ds.get(1).x.buffer).toBe(x.buffer);
  });
});
