// kiln.data.DataLoader on the calling thread (numWorkers 0) and kiln.data.defaultBatcher:
// batches of known datasets written out by hand, the shuffled epochs of seed 42 (the
// engine's order for (seed, epoch); the values come from a Python transcription of
// kiln/data/rng.hpp's algorithms and tests/native/data/js_orders_test.cpp checks C++'s
// DataLoader gives them too), dropLast, length, state()/loadState() resuming exactly, and
// every bad input: options, batchers returning the wrong type, a get that throws.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { caught, expectKilnError } from './helpers.mjs';

let kiln;
let D;
beforeAll(async () => {
  kiln = await init();
  D = kiln.data;
});

const range = (n) => Array.from({ length: n }, (_, i) => i);

/** Every batch of one epoch as plain arrays (tensors disposed). */
function epoch(loader) {
  const out = [];
  for (const b of loader) {
    out.push(b.toArray());
    b.dispose();
  }
  return out;
}

async function epochAsync(loader) {
  const out = [];
  for await (const b of loader) {
    out.push(toPlain(b));
    kiln.dispose(b);
  }
  return out;
}

function toPlain(b) {
  if (b instanceof kiln.Tensor) return { shape: b.shape, dtype: b.dtype, data: b.toArray() };
  if (Array.isArray(b)) return b.map(toPlain);
  return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, toPlain(v)]));
}

// permutation(10, mix_seed(42, e)) for epochs 0, 1, 2 (Python transcription).
const EPOCHS_42 = [
  [6, 7, 9, 8, 2, 0, 1, 3, 5, 4],
  [7, 6, 0, 1, 8, 3, 9, 2, 5, 4],
  [2, 6, 5, 8, 1, 3, 7, 4, 0, 9],
];
const batchesOf = (order, size) => range(Math.ceil(order.length / size)).map((j) => order.slice(j * size, (j + 1) * size));

describe('batches in order', () => {
  it('numbers become float32 [n] batches; the last batch is shorter', () => {
    const loader = new D.DataLoader([1, 2, 3, 4, 5], { batchSize: 2 });
    expect(loader.length).toBe(3);
    expect(epoch(loader)).toEqual([[1, 2], [3, 4], [5]]);
    const again = [...loader];
    expect(again[0].dtype).toBe('float32');
    expect(again[0].shape).toEqual([2]);
    kiln.dispose(again);
  });

  it('dropLast drops the short batch; length follows', () => {
    const loader = new D.DataLoader(range(5), { batchSize: 2, dropLast: true });
    expect(loader.length).toBe(2);
    expect(epoch(loader)).toEqual([[0, 1], [2, 3]]);
    expect(new D.DataLoader(range(3), { batchSize: 4, dropLast: true }).length).toBe(0);
    expect(epoch(new D.DataLoader(range(3), { batchSize: 4, dropLast: true }))).toEqual([]);
    expect(epoch(new D.DataLoader([], { batchSize: 4 }))).toEqual([]);
  });

  it('object items keep their keys; typed arrays stack into rows; dtype and shape options', () => {
    const items = [
      { x: new Float32Array([1, 2, 3, 4]), y: 1, ok: true },
      { x: new Float32Array([5, 6, 7, 8]), y: 0, ok: false },
    ];
    const batcher = D.defaultBatcher({ dtype: { y: 'int32' }, shape: { x: [2, 2] } });
    const [b] = [...new D.DataLoader(items, { batchSize: 2, batcher })];
    expect(toPlain(b)).toEqual({
      x: { shape: [2, 2, 2], dtype: 'float32', data: [[[1, 2], [3, 4]], [[5, 6], [7, 8]]] },
      y: { shape: [2], dtype: 'int32', data: [1, 0] },
      ok: { shape: [2], dtype: 'bool', data: [true, false] },
    });
    kiln.dispose(b);
  });

  it('tuple items become arrays of tensors; Int32Array items stay int32; tensors are stacked', () => {
    const items = [[new Int32Array([1, 2]), 0.5], [new Int32Array([3, 4]), 1.5]];
    const [b] = [...new D.DataLoader(items, { batchSize: 2 })];
    expect(toPlain(b)).toEqual([
      { shape: [2, 2], dtype: 'int32', data: [[1, 2], [3, 4]] },
      { shape: [2], dtype: 'float32', data: [0.5, 1.5] },
    ]);
    kiln.dispose(b);
    const ts = [kiln.Tensor.fromData([[1, 2]]), kiln.Tensor.fromData([[3, 4]])];
    const [s] = [...new D.DataLoader(ts, { batchSize: 2 })];
    expect(toPlain(s)).toEqual({ shape: [2, 1, 2], dtype: 'float32', data: [[[1, 2]], [[3, 4]]] });
    kiln.dispose([s, ts]);
  });

  it('a WASM-side Dataset (fromArrays) is read once into {x, y} items', () => {
    const wasm = D.fromArrays(new Float32Array([1, 2, 3, 4, 5, 6]), new Int32Array([2, 0, 1]), { itemShape: [2] });
    const loader = new D.DataLoader(wasm, { batchSize: 2, batcher: D.defaultBatcher({ dtype: { y: 'int32' } }) });
    wasm.dispose();
    const got = [];
    for (const b of loader) {
      got.push(toPlain(b));
      kiln.dispose(b);
    }
    expect(got).toEqual([
      { x: { shape: [2, 2], dtype: 'float32', data: [[1, 2], [3, 4]] }, y: { shape: [2], dtype: 'int32', data: [2, 0] } },
      { x: { shape: [1, 2], dtype: 'float32', data: [[5, 6]] }, y: { shape: [1], dtype: 'int32', data: [1] } },
    ]);
  });

  it('a user batcher (function or {batch}) gets the items in order', () => {
    const seen = [];
    const batcher = (items) => {
      seen.push(items);
      return kiln.Tensor.fromData(items.map((s) => s.length));
    };
    expect(epoch(new D.DataLoader(['a', 'bb', 'ccc'], { batchSize: 2, batcher }))).toEqual([[1, 2], [3]]);
    expect(seen).toEqual([['a', 'bb'], ['ccc']]);
    const obj = { batch: (items) => ({ x: kiln.Tensor.fromData(items), ids: items }) };
    const [b] = [...new D.DataLoader([4, 5], { batchSize: 2, batcher: obj })];
    expect(b.ids).toEqual([4, 5]);
    expect(b.x.toArray()).toEqual([4, 5]);
    kiln.dispose(b);
  });
});

describe('shuffling per epoch (the engine order for (seed, epoch))', () => {
  it('epochs 0, 1, 2 of seed 42 are the permutations the C++ DataLoader gives', () => {
    const loader = new D.DataLoader(range(10), { batchSize: 4, shuffle: true, seed: 42 });
    for (const order of EPOCHS_42) expect(epoch(loader)).toEqual(batchesOf(order, 4));
  });

  it('the same seed gives the same epochs in a new loader; async iteration gives the same batches', async () => {
    const a = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    const b = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    expect(epoch(a)).toEqual(batchesOf(EPOCHS_42[0], 3));
    expect((await epochAsync(b)).map((x) => x.data)).toEqual(batchesOf(EPOCHS_42[0], 3));
    expect(epoch(a)).toEqual(epoch(b));
  });
});

describe('state() and loadState()', () => {
  it('state counts the batches handed out; a finished or stopped epoch moves to the next', () => {
    const loader = new D.DataLoader(range(10), { batchSize: 4, shuffle: true, seed: 42 });
    expect(loader.state()).toEqual({ epoch: 0, batch: 0, seed: 42 });
    const states = [];
    for (const b of loader) {
      states.push(loader.state());
      b.dispose();
    }
    expect(states).toEqual([1, 2, 3].map((batch) => ({ epoch: 0, batch, seed: 42 })));
    expect(loader.state()).toEqual({ epoch: 1, batch: 0, seed: 42 });
    for (const b of loader) {
      b.dispose();
      break;
    }
    expect(loader.state()).toEqual({ epoch: 2, batch: 0, seed: 42 });
    expect(JSON.parse(JSON.stringify(loader.state()))).toEqual(loader.state());
  });

  it('a loader resumed from a mid-epoch state yields exactly the remaining batches, then the next epochs', async () => {
    const run = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    let saved = null;
    const first = [];
    for (const b of run) {
      first.push(b.toArray());
      b.dispose();
      if (first.length === 2) {
        saved = run.state();
        break; // interrupted
      }
    }
    expect(saved).toEqual({ epoch: 0, batch: 2, seed: 42 });
    const resumed = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    resumed.loadState(saved);
    expect(resumed.state()).toEqual(saved);
    const rest = epoch(resumed);
    expect([...first, ...rest]).toEqual(batchesOf(EPOCHS_42[0], 3));
    expect(rest).toEqual(batchesOf(EPOCHS_42[0], 3).slice(2));
    expect(epoch(resumed)).toEqual(batchesOf(EPOCHS_42[1], 3));
    // Async iteration resumes the same way.
    const asyncResumed = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    asyncResumed.loadState({ epoch: 2, batch: 3, seed: 42 });
    expect((await epochAsync(asyncResumed)).map((x) => x.data)).toEqual([EPOCHS_42[2].slice(9)]);
    // A state at the end of an epoch resumes to an empty rest of it.
    const atEnd = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    atEnd.loadState({ epoch: 0, batch: 4, seed: 42 });
    expect(epoch(atEnd)).toEqual([]);
    expect(atEnd.state()).toEqual({ epoch: 1, batch: 0, seed: 42 });
  });

  it('loadState rejects states of other loaders and malformed ones, changing nothing', () => {
    const loader = new D.DataLoader(range(10), { batchSize: 3, shuffle: true, seed: 42 });
    expectKilnError(kiln, () => loader.loadState({ epoch: 0, batch: 1, seed: 7 }), 'Value',
      "DataLoader.loadState: the state is of a loader with seed 7, this loader's seed is 42");
    expectKilnError(kiln, () => loader.loadState({ epoch: 0, batch: 5, seed: 42 }), 'Value',
      'DataLoader.loadState: state.batch is 5 but an epoch has 4 batches');
    expectKilnError(kiln, () => loader.loadState({ epoch: -1, batch: 0, seed: 42 }), 'Type',
      'DataLoader.loadState: state.epoch must be a non-negative integer, got the number -1');
    expectKilnError(kiln, () => loader.loadState({ epoch: 0, seed: 42 }), 'Type',
      'DataLoader.loadState: state.batch must be a non-negative integer, got undefined');
    expectKilnError(kiln, () => loader.loadState(null), 'Type', 'DataLoader.loadState: state must be {epoch, batch, seed}, got null');
    expect(loader.state()).toEqual({ epoch: 0, batch: 0, seed: 42 });
  });
});

describe('bad inputs', () => {
  it('options', () => {
    const op = 'DataLoader';
    expectKilnError(kiln, () => new D.DataLoader(range(3), { batchSize: 0 }), 'Value', `${op}: batchSize must be >= 1, got 0`);
    expectKilnError(kiln, () => new D.DataLoader(range(3), { batchSize: 1.5 }), 'Type', `${op}: batchSize must be an integer, got the number 1.5`);
    expectKilnError(kiln, () => new D.DataLoader(range(3), { shuffle: 'yes' }), 'Type', `${op}: shuffle must be a boolean, got the string "yes"`);
    expectKilnError(kiln, () => new D.DataLoader(range(3), { seed: -1 }), 'Value', `${op}: seed must be >= 0, got -1`);
    expectKilnError(kiln, () => new D.DataLoader(range(3), { numWorkers: -1 }), 'Value', `${op}: numWorkers must be >= 0, got -1`);
    expectKilnError(kiln, () => new D.DataLoader(range(3), { batch_size: 2 }), 'Config', /^DataLoader: unknown option "batch_size" \(options: batchSize, /);
    expectKilnError(kiln, () => new D.DataLoader(range(3), { batcher: 3 }), 'Type',
      `${op}: batcher must be a function items => batch or an object with batch(items), got the number 3`);
    expectKilnError(kiln, () => new D.DataLoader(range(3), 5), 'Type', `${op}: options must be an object, got the number 5`);
    expectKilnError(kiln, () => new D.DataLoader(5), 'Type', /^DataLoader: dataset must be a dataset \(an array, a typed array or an object with length and get\(i\)\), got the number 5$/);
    expectKilnError(kiln, () => new D.DataLoader({ length: -3, get: () => 0 }), 'Type',
      "DataLoader: the dataset's length must be a non-negative integer, got the number -3");
    expectKilnError(kiln, () => D.defaultBatcher({ dtype: 'float64' }), 'Value', "defaultBatcher: dtype must be 'float32', 'int32' or 'bool', got the string \"float64\"");
    expectKilnError(kiln, () => D.defaultBatcher({ dtypes: {} }), 'Config', 'defaultBatcher: unknown option "dtypes" (options: dtype, shape)');
  });

  it('a batcher returning the wrong type', async () => {
    const cases = [
      [() => undefined, 'undefined'],
      [(items) => items, 'an array with no Tensor in it'],
      [() => 42, 'the number 42'],
      [() => ({ x: [1, 2] }), 'an object with no Tensor in it'],
      [async () => kiln.Tensor.fromData([1]), 'a Promise (an async batcher works only with `for await`)'],
    ];
    for (const [batcher, what] of cases) {
      const loader = new D.DataLoader(range(4), { batchSize: 2, batcher });
      expectKilnError(kiln, () => [...loader], 'Type',
        `DataLoader: the batcher returned ${what} for batch 0 of epoch 0: expected a batch (a Tensor, or an array or object holding Tensors)`);
    }
    // for await awaits an async batcher.
    const asyncLoader = new D.DataLoader(range(4), { batchSize: 2, batcher: async (items) => kiln.Tensor.fromData(items) });
    expect((await epochAsync(asyncLoader)).map((b) => b.data)).toEqual([[0, 1], [2, 3]]);
    // A batcher that throws: a KilnError naming the batch, the batcher's error as its cause
    // (as a throwing get(); this test asserted the raw error until a fresh-eyes review).
    const boom = new D.DataLoader(range(2), { batcher: () => { throw new TypeError('bad batch'); } });
    const err = caught(() => [...boom]);
    expect(err).toBeInstanceOf(kiln.KilnError);
    expect(err.code).toBe('Value');
    expect(err.message).toBe('DataLoader: the batcher threw TypeError: bad batch (batch 0 of epoch 0)');
    expect(err.cause.message).toBe('bad batch');
  });

  it('the default batcher names the item and field that does not fit', () => {
    const run = (items, batcher) => () => [...new D.DataLoader(items, { batchSize: items.length, batcher })];
    expectKilnError(kiln, run([{ x: 1 }, { x: 'a' }]), 'Type', 'defaultBatcher: items[1].x is the string "a" but items[0].x is the number 1');
    expectKilnError(kiln, run([new Float32Array(2), new Float32Array(3)]), 'Shape', 'defaultBatcher: items[1] has 3 values but items[0] has 2');
    expectKilnError(kiln, run([{ x: 1 }, { y: 1 }]), 'Shape', 'defaultBatcher: items[1] has keys [y] but items[0] has [x]');
    expectKilnError(kiln, run(['a', 'b']), 'Type', /^defaultBatcher: items\[0\] is the string "a": the default batcher stacks numbers/);
    expectKilnError(kiln, run([1.5, 2], D.defaultBatcher({ dtype: 'int32' })), 'Value', 'defaultBatcher: items[0] = 1.5 is not an int32 (an integer in [-2^31, 2^31 - 1])');
    expectKilnError(kiln, run([new Float32Array(4)], D.defaultBatcher({ shape: [3] })), 'Shape', 'defaultBatcher: items[0] has 4 values, shape [3] needs 3');
  });

  it("a dataset whose get throws: a KilnError naming the index, the error as cause; the iteration ends", async () => {
    const cause = new Error('disk on fire');
    const ds = { length: 6, get(i) { if (i === 3) throw cause; return i; } };
    const loader = new D.DataLoader(ds, { batchSize: 2 });
    const got = [];
    const e = caught(() => {
      for (const b of loader) {
        got.push(b.toArray());
        b.dispose();
      }
    });
    expect(got).toEqual([[0, 1]]);
    expect(e).toBeInstanceOf(kiln.KilnError);
    expect(e.code).toBe('Value');
    expect(e.message).toBe("DataLoader: the dataset's get(3) threw Error: disk on fire");
    expect(e.cause).toBe(cause);
    let asyncError;
    try {
      await epochAsync(loader);
    } catch (err) {
      asyncError = err;
    }
    expect(asyncError.message).toBe("DataLoader: the dataset's get(3) threw Error: disk on fire");
    // A KilnError from get keeps its code.
    const indexed = new D.DataLoader(new D.PartialDataset([1, 2], 0, 2), { batchSize: 1 });
    expect(epoch(indexed)).toEqual([[1], [2]]);
    const bad = new D.DataLoader({ length: 3, get: (i) => new D.InMemDataset([0]).get(i) }, { batchSize: 3 });
    expectKilnError(kiln, () => [...bad], 'Index',
      "DataLoader: the dataset's get(1) threw KilnError: InMemDataset.get: index 1 is out of range for a dataset of length 1");
  });

  it('sync iteration of a loader with workers says to use for await', () => {
    const loader = new D.DataLoader(range(4), { numWorkers: 2 });
    expectKilnError(kiln, () => [...loader], 'State', 'DataLoader: a loader with numWorkers 2 loads asynchronously: iterate it with for await');
  });

  it('an epoch leaks no tensors beyond the batches handed out', () => {
    const before = kiln.memory().tensors;
    const loader = new D.DataLoader(range(10).map((i) => ({ x: new Float32Array([i, i]), y: i })), { batchSize: 3, shuffle: true });
    for (const b of loader) kiln.dispose(b);
    const bad = new D.DataLoader([{ x: 1, y: 2 }, { x: 1, y: 'no' }], { batchSize: 2 });
    caught(() => [...bad]);
    expect(kiln.memory().tensors).toBe(before);
  });
});
