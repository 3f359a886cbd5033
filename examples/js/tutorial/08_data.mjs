// Step 8 of the tutorial: datasets, batchers and data loaders.
//
//   node examples/js/tutorial/08_data.mjs
//
// Burn's Dataset is a random-access collection (`get(index)`, `len()`); a Batcher turns a
// Vec of items into a batch of tensors; a DataLoader (DataLoaderBuilder) batches, shuffles
// with a seed and can load in worker threads. Kiln's C++ API has the same names in
// kiln::data (InMemDataset, MapperDataset, ..., DataLoaderBuilder(batcher).batch_size(32)
// .shuffle(42).num_workers(4).build(dataset)). In kiln-dl any object with `length` and
// `get(i)` is a dataset (arrays too), a batcher is a function `items => batch`, and
// `new kiln.data.DataLoader(dataset, {...})` iterates batches with for...of / for await.
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const { InMemDataset, MapperDataset, PartialDataset, ShuffledDataset, DataLoader } = kiln.data;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

// ---- A dataset of samples held in memory (Burn's InMemDataset) ----
const samples = [
  { features: [1, 2, 3, 4], label: 0 },
  { features: [5, 6, 7, 8], label: 1 },
  { features: [9, 10, 11, 12], label: 2 },
];
const dataset = new InMemDataset(samples);
show('dataset.length', dataset.length);
show('dataset.get1', dataset.get(1));

// ---- Transforms: MapperDataset, PartialDataset, ShuffledDataset ----
const doubled = new MapperDataset(dataset, (s) => ({ ...s, features: s.features.map((v) => 2 * v) }));
show('mapper.get0', doubled.get(0).features);
const firstTwo = new PartialDataset(dataset, 0, 2);        // items [0, 2)
show('partial.length', firstTwo.length);
const shuffled = new ShuffledDataset(dataset, 42);         // a fixed order for seed 42
const order = Array.from({ length: shuffled.length }, (_, i) => shuffled.get(i).label);
show('shuffled.isPermutation', [...order].sort().join(',') === '0,1,2');

// ---- A batcher: items -> tensors (Burn's Batcher::batch) ----
// Here written out: stack the features into [batch, 4] float32, the labels into [batch] int32.
function batcher(items) {
  return {
    inputs: Tensor.fromData(items.map((s) => s.features)),
    targets: Tensor.fromData(items.map((s) => s.label), { dtype: 'int32' }),
  };
}
const b = batcher([samples[0], samples[2]]);
show('batcher.inputs.shape', b.inputs.shape);
show('batcher.targets', b.targets.toArray());
kiln.dispose([b.inputs, b.targets]);

// ---- Exercise 8 ----
// 200 XOR samples [x1, x2] with x1, x2 random in {0, 1} and label x1 XOR x2; an
// InMemDataset; a DataLoader with batch size 16; one epoch, printing each batch's shapes.
let state = 12345;                                           // a tiny LCG: the data is the same every run
const bit = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) >> 16) & 1;
const xorSamples = Array.from({ length: 200 }, () => {
  const x1 = bit();
  const x2 = bit();
  return { x: [x1, x2], y: x1 ^ x2 };
});
const xorData = new InMemDataset(xorSamples);
const loader = new DataLoader(xorData, {
  batchSize: 16,
  shuffle: true,
  seed: 42,
  batcher: (items) => ({
    x: Tensor.fromData(items.map((s) => s.x)),
    y: Tensor.fromData(items.map((s) => s.y), { dtype: 'int32' }),
  }),
});
show('exercise8.batchesPerEpoch', loader.length);            // ceil(200 / 16) = 13
const shapes = [];
let labelsOk = true;
let seen = 0;
for (const { x, y } of loader) {
  shapes.push([x.shape, y.shape]);
  const xs = x.toArray();
  const ys = y.toArray();
  labelsOk &&= xs.every(([a, c], i) => (a ^ c) === ys[i]);
  seen += ys.length;
  kiln.dispose([x, y]);
}
for (const [i, [xs, ys]] of shapes.entries()) console.log(`batch ${i}: inputs [${xs}] targets [${ys}]`);
show('exercise8.shapes', shapes);
show('exercise8.itemsSeen', seen);
show('exercise8.labelsAreXor', labelsOk);
show('exercise8.ones', xorSamples.filter((s) => s.y === 1).length);

// ---- Loading in worker threads: the same batches, in the same order ----
// The default batcher stacks numbers and typed arrays field by field into tensors (PyTorch's
// default_collate; a plain array stays a list), int32 for y here; a dataset a worker can
// rebuild (plain data) is sent to numWorkers threads.
const batcher2 = kiln.data.defaultBatcher({ dtype: { y: 'int32' } });
const plain = new InMemDataset(xorSamples.map((s) => ({ x: Float32Array.from(s.x), y: s.y })));
const firstBatchOf = async (numWorkers) => {
  const l = new DataLoader(plain, { batchSize: 16, shuffle: true, seed: 42, numWorkers, batcher: batcher2 });
  for await (const batch of l) {
    const out = { x: batch.x.toArray(), y: batch.y.toArray() };
    kiln.dispose([batch.x, batch.y]);
    return out;   // breaking out of the loop ends the workers
  }
  return null;
};
const inline = await firstBatchOf(0);
const workers = await firstBatchOf(2);
show('workers.sameFirstBatch', JSON.stringify(inline) === JSON.stringify(workers));
show('liveTensors', kiln.memory().tensors);
