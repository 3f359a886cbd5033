// A TypeScript consumer of kiln.data's pipeline and kiln.io: must type-check with
// `tsc --noEmit --strict` (tests/js/data_types.test.mjs). The @ts-expect-error lines must
// stay errors: if the declarations became too loose, tsc would report them as unused.
import { init } from 'kiln-dl';
import type { DataLoaderState, DatasetLike, Kiln, Tensor } from 'kiln-dl';

interface Item {
  x: Float32Array;
  y: number;
}

export async function main(): Promise<number> {
  const kiln: Kiln = await init();
  const D = kiln.data;
  const items: Item[] = [{ x: new Float32Array([1, 2]), y: 0 }];
  const mem = new D.InMemDataset(items);
  const first: Item = mem.get(0);
  const mapped = new D.MapperDataset(mem, (item: Item, i: number) => item.y + i);
  const n: number = mapped.get(0);
  const parts = D.PartialDataset.split(mem, 2);
  const shuffled = new D.ShuffledDataset(mem, 42);
  const sampled = D.SamplerDataset.withoutReplacement(shuffled, 3, 7);
  const composed = new D.ComposedDataset([mem, ...parts, sampled]);
  const columns = new D.ColumnDataset({ x: new Float32Array(4), y: new Int32Array(2) }, { itemSizes: { x: 2 } });
  const fn = new D.FunctionDataset(3, (i) => i * 2);
  const mod = await D.fromModule<Item>('file:///data.mjs', { args: [10] });
  const own: DatasetLike<number> = { length: 2, get: (i) => i };
  const perm: number[] = D.permutation(10, 42, 0);

  const loader = new D.DataLoader(composed, {
    batchSize: 2, shuffle: true, seed: 1, dropLast: false, numWorkers: 0,
    batcher: D.defaultBatcher({ dtype: { y: 'int32' }, shape: { x: [1, 2] } }),
  });
  for (const batch of loader) kiln.dispose(batch);
  const custom = new D.DataLoader(mem, { batchSize: 2, batcher: (b: Item[]) => kiln.Tensor.fromData(b.map((i) => i.y)) });
  for await (const t of custom) {
    const s: number[] = t.shape;
    t.dispose();
    void s;
  }
  const wasm = D.fromArrays(new Float32Array(4), new Int32Array(2), { itemShape: [2] });
  for (const b of new D.DataLoader(wasm, { batchSize: 2 })) kiln.dispose(b);
  const state: DataLoaderState = loader.state();
  loader.loadState(state);
  const batches: number = loader.length + D.DataLoader.liveWorkers();

  const bytes: Uint8Array = new Uint8Array(0);
  const tensors: Record<string, Tensor> = kiln.io.readSafetensors(bytes);
  const arrays = kiln.io.readSafetensorsArrays(bytes);
  const meta: Record<string, string> = arrays.metadata;
  const model = kiln.nn.sequential([{ type: 'linear', dInput: 2, dOutput: 1 }]);
  await kiln.io.save('/tmp/m.safetensors', model);
  const loaded = await kiln.io.load('/tmp/m.safetensors', model);
  const raw: Uint8Array = await kiln.io.load('/tmp/m.safetensors');
  await kiln.io.saveToIndexedDB('m', model);
  await kiln.io.loadFromIndexedDB('m', model);
  const names: string[] = await kiln.io.listIndexedDB();
  kiln.io.download('m.safetensors', bytes);

  const csv = await D.CsvDataset.fromText('a,y\n1,0\n', { label: 'y', fillMissing: 0, limits: { maxRows: 10 } });
  const row: { features: Float32Array; label?: number } = csv.get(0);
  const classes: readonly string[] = csv.classes;
  const db = await D.SqliteDataset.fromQuery(bytes, 'SELECT * FROM t', { features: ['a'], labelType: 'string' });
  const fromDb: number = db.numFeatures + db.classId('cat');
  async function* chunks(): AsyncGenerator<string> { yield 'a\n1\n'; }
  const streamed: number = (await D.CsvDataset.fromStream(chunks())).length;
  // @ts-expect-error labelType is 'int' or 'string'
  await D.CsvDataset.fromText('a\n1\n', { labelType: 'float' });

  // @ts-expect-error batchSize is a number
  new D.DataLoader(mem, { batchSize: '2' });
  // @ts-expect-error state needs epoch, batch and seed
  loader.loadState({ epoch: 0 });
  // @ts-expect-error a dataset needs get
  new D.DataLoader({ length: 3 });
  // @ts-expect-error save takes a model or bytes
  await kiln.io.save('/tmp/x', 42);
  // @ts-expect-error the dtype must be one of the package's
  D.defaultBatcher({ dtype: 'float64' });

  void [first, n, columns, fn, mod, own, perm, batches, tensors, meta, loaded, raw, names, row, classes, fromDb, streamed];
  return 0;
}
