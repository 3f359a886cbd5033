// Regression tests of the fresh-eyes report (/tmp/breaker_report.md), kiln.data's part:
// 12 (DataLoader.loadState during an iteration was silently ignored: KilnError State) and
// 11 (DataLoader.liveWorkers() was still k right after `for await` ended: the iteration now
// resolves once its workers have exited).
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

describe('12: loadState while iterating', () => {
  it('is KilnError State (sync and async) and changes nothing: the iteration goes on where it was', async () => {
    const loader = new D.DataLoader(range(6), { batchSize: 2 });
    const seen = [];
    for (const b of loader) {
      seen.push(Array.from(b.dataSync()));
      b.dispose();
      if (seen.length === 1) {
        expectKilnError(kiln, () => loader.loadState({ epoch: 5, batch: 0, seed: 0 }), 'State',
          'DataLoader.loadState: an iteration of this loader is running (epoch 0, 1 batches handed out): call loadState before the loop or after it has ended (break or return() ends it)');
        expect(loader.state()).toEqual({ epoch: 0, batch: 1, seed: 0 });
      }
    }
    expect(seen).toEqual([[0, 1], [2, 3], [4, 5]]);
    expect(loader.state()).toEqual({ epoch: 1, batch: 0, seed: 0 });
    // After the loop it works, and the next iteration starts there.
    loader.loadState({ epoch: 3, batch: 2, seed: 0 });
    const rest = [];
    for await (const b of loader) {
      rest.push(Array.from(b.dataSync()));
      b.dispose();
      expectKilnError(kiln, () => loader.loadState({ epoch: 0, batch: 0, seed: 0 }), 'State', /^DataLoader\.loadState: an iteration of this loader is running \(epoch 3, 3 batches handed out\)/);
    }
    expect(rest).toEqual([[4, 5]]);
    expect(loader.state()).toEqual({ epoch: 4, batch: 0, seed: 0 });
    // A loop left with break ends the iteration: loadState works again.
    for (const b of loader) {
      b.dispose();
      break;
    }
    loader.loadState({ epoch: 0, batch: 1, seed: 0 });
    expect(loader.state()).toEqual({ epoch: 0, batch: 1, seed: 0 });
  });
});

describe('11: liveWorkers() is 0 as soon as an iteration with workers has ended', () => {
  it('after a complete for await, after break, after a failing item', async () => {
    const loader = new D.DataLoader(range(12), { batchSize: 2, numWorkers: 2 });
    let n = 0;
    for await (const b of loader) {
      expect(D.DataLoader.liveWorkers()).toBe(2);
      n++;
      b.dispose();
    }
    expect(n).toBe(6);
    expect(D.DataLoader.liveWorkers()).toBe(0);
    for await (const b of loader) {
      b.dispose();
      break;
    }
    expect(D.DataLoader.liveWorkers()).toBe(0);
    // An item error in a worker: the rejection comes once the workers are gone.
    const bad = new D.DataLoader(new D.InMemDataset([1, 2, 3, 'x']), { batchSize: 1, numWorkers: 2 });
    let err;
    try {
      for await (const b of bad) kiln.dispose(b);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(kiln.KilnError);
    expect(D.DataLoader.liveWorkers()).toBe(0);
  }, 30_000);
});

describe('8: a batcher that throws is a KilnError naming the batch, its error the cause', () => {
  it('plain loop, for await with an async batcher, and with workers', async () => {
    const catchAsync = async (loader) => {
      try {
        for await (const b of loader) kiln.dispose(b);
      } catch (e) {
        return e;
      }
      return null;
    };
    const before = kiln.memory().tensors;
    const sync = new D.DataLoader(range(4), { batchSize: 2, batcher: (items) => { if (items[0] === 2) throw new RangeError('boom'); return kiln.Tensor.fromData(items); } });
    expectKilnError(kiln, () => { for (const b of sync) b.dispose(); }, 'Value', 'DataLoader: the batcher threw RangeError: boom (batch 1 of epoch 0)');
    const rejecting = new D.DataLoader(range(4), { batchSize: 2, batcher: async () => { throw new Error('later'); } });
    const e1 = await catchAsync(rejecting);
    expect(e1).toBeInstanceOf(kiln.KilnError);
    expect(e1.message).toMatch(/^DataLoader: the batcher threw Error: later \(batch 0 of epoch 0\)$/);
    expect(e1.cause.message).toBe('later');
    const workers = new D.DataLoader(range(8), { batchSize: 2, numWorkers: 2, batcher: (items) => { throw new TypeError(`no ${items.length}`); } });
    const e2 = await catchAsync(workers);
    expect(e2).toBeInstanceOf(kiln.KilnError);
    expect(e2.code).toBe('Value');
    expect(e2.message).toMatch(/the batcher threw TypeError: no 2 \(batch 0 of epoch 0\)/);
    expect(D.DataLoader.liveWorkers()).toBe(0);
    expect(kiln.memory().tensors).toBe(before);
  }, 30_000);
});
