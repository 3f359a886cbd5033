// kiln.io.indexedDBStore(prefix): the Learner's checkpoint store in IndexedDB (the browser's
// counterpart of checkpointer {directory}), run in Node on fake-indexeddb (the same
// IndexedDB API the browser has; tests/js/io_browser.test.mjs covers the real one).
import 'fake-indexeddb/auto';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

describe('kiln.io.indexedDBStore', () => {
  it('round-trips bytes and strings under its prefix, lists and clears only its own entries', async () => {
    const store = kiln.io.indexedDBStore('run-a/');
    const other = kiln.io.indexedDBStore('run-b/');
    expect(store.prefix).toBe('run-a/');
    await store.save('epoch-1/model.safetensors', Uint8Array.of(1, 2, 3));
    await store.save('latest.json', '{"epoch":1}');
    await other.save('latest.json', '{"epoch":7}');
    const bytes = await store.load('epoch-1/model.safetensors');
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Array.from(bytes)).toEqual([1, 2, 3]);
    expect(await store.load('latest.json')).toBe('{"epoch":1}');
    expect(await store.load('missing.json')).toBeUndefined();
    expect(await store.list()).toEqual(['epoch-1/model.safetensors', 'latest.json']);
    // the entries are kiln.io's: visible to listIndexedDB under their full keys
    expect(await kiln.io.listIndexedDB()).toEqual(expect.arrayContaining(['run-a/latest.json', 'run-b/latest.json']));
    // a save replaces; the stored copy does not follow later changes of the caller's array
    const data = Uint8Array.of(9);
    await store.save('epoch-1/model.safetensors', data);
    data[0] = 0;
    expect(Array.from(await store.load('epoch-1/model.safetensors'))).toEqual([9]);
    await store.clear();
    expect(await store.list()).toEqual([]);
    expect(await other.load('latest.json')).toBe('{"epoch":7}');
    await other.clear();
  });

  it('rejects bad arguments with KilnError Type', async () => {
    expect(() => kiln.io.indexedDBStore(3)).toThrow(expect.objectContaining({ code: 'Type', message: expect.stringContaining('io.indexedDBStore: prefix must be a string') }));
    const store = kiln.io.indexedDBStore('x/');
    await expect(store.save('', 'a')).rejects.toMatchObject({ code: 'Type' });
    await expect(store.save('a.json', { epoch: 1 })).rejects.toMatchObject({ code: 'Type', message: expect.stringContaining('data must be a Uint8Array or a string') });
    await expect(store.load(5)).rejects.toMatchObject({ code: 'Type' });
  });

  it('a Learner checkpointed into it resumes to the weights of an uninterrupted run', async () => {
    const spec = { layers: [{ type: 'linear', dInput: 2, dOutput: 8 }, { type: 'tanh' }, { type: 'linear', dInput: 8, dOutput: 2 }] };
    // XOR corners with a fixed, hand-made jitter: 32 items, batches of 8
    const items = Array.from({ length: 32 }, (_, i) => {
      const a = i & 1;
      const b = (i >> 1) & 1;
      return { x: Float32Array.of(a + ((i * 7) % 5) / 50 - 0.04, b + ((i * 3) % 5) / 50 - 0.04), y: a ^ b };
    });
    const batcher = kiln.data.defaultBatcher({ dtype: { y: 'int32' } });
    const ce = kiln.loss.crossEntropy();
    const trainStep = (m, { x, y }) => {
      const output = m.forward(x);
      return { loss: ce.forward(output, y), output, targets: y };
    };
    const make = (store, seed) => {
      const model = kiln.nn.sequential(spec, { seed });
      const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 0.05 }), trainStep, checkpointer: { store }, seed: 3 });
      const loader = new kiln.data.DataLoader(items, { batchSize: 8, shuffle: true, seed: 5, batcher });
      return { model, learner, loader };
    };
    const straightStore = kiln.io.indexedDBStore('straight/');
    const straight = make(straightStore, 1);
    await straight.learner.fit(straight.loader, { epochs: 3, progress: false });
    const want = straight.model.saveSafetensors();

    const store = kiln.io.indexedDBStore('resumed/');
    const first = make(store, 1);
    await first.learner.fit(first.loader, { epochs: 2, progress: false });
    expect(Buffer.from(first.model.saveSafetensors()).equals(Buffer.from(want))).toBe(false);
    expect((await store.list()).length).toBeGreaterThan(0);
    const again = make(store, 999); // other initial weights: only the checkpoint can make them equal
    const h = await again.learner.fit(again.loader, { epochs: 3, resume: true, progress: false });
    expect(h.epochs.map((e) => e.epoch)).toEqual([1, 2, 3]);
    expect(Buffer.from(again.model.saveSafetensors()).equals(Buffer.from(want))).toBe(true);
    for (const x of [straight, first, again]) x.model.dispose();
    await store.clear();
    await straightStore.clear();
  });
});
