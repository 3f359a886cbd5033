// The workload that decides which engine functions ship in the primary module (scripts/split_wasm.mjs).
// Run by split_wasm.mjs in a child process on an engine instrumented by `wasm-split --instrument`:
//
//   node scripts/split_profile.mjs --engine core|full --workload train|inference --wasm X.instrumented.wasm --out X.profile
//
// It loads the engine through the package's own Node entry (dist/node.js, with the instrumented
// module as wasmBinary), runs what a page that trains and uses a model does, then asks the module
// for its profile (`__write_profile`: which functions ran, in first-call order) and writes it.
// Functions this workload never calls go to <name>.deferred.wasm, which the package loads on the
// first call of any of them (bindings/js/deferred.ts): a page fetches it only when it goes beyond
// this workload, and then once.
//
// What it does, and so what stays in the primary module (keep it to what most pages that train
// do: every function it runs costs every page's download; anything else still works, one
// fetch of the deferred module later):
//   - tensors: fromData / zeros / ones, add / sub / mul / div, matmul, transpose, reshape, sum,
//     mean, argmax, softmax, reading values (toArray, dataSync, item); a shape mismatch caught
//     as a KilnError (the formatting of messages);
//   - models: kiln.nn.sequential of linear, relu, dropout, tanh, sigmoid and gelu layers;
//     forward in eval mode;
//   - training: the Learner with crossEntropy and mse over kiln.data.fromArrays, the adam,
//     adamW and sgd (momentum) optimizers, fit with validationData, predict;
//   - the full engine also trains MNIST's anchor CNN (reshape, conv2d, relu, maxPool2d twice,
//     flatten, linear) on 40 images, with validation and predict.
// Not in it (each loads the deferred module on first use): SafeTensors save/load (about 40 KB
// gzip of record and JSON code), evaluate, manual backward/step loops, the other tensor ops.
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  if (i < 0 || i + 1 >= args.length) throw new Error(`split_profile: missing ${name}`);
  return args[i + 1];
};
const engine = opt('--engine');
const workload = opt('--workload');
if (!['train', 'inference'].includes(workload)) throw new Error(`split_profile: unknown workload ${workload}`);
const wasmPath = opt('--wasm');
// --loads FILE --lo N --hi N: the module is instrumented by binaryen's --instrument-memory instead
// (scripts/split_wasm.mjs's check of the data move): every distinct load and store of the workload
// that touches [lo, hi) is written to FILE as { loads: [[address, bytes]], stores: [...] }, and no
// profile.
const loadsPath = args.includes('--loads') ? opt('--loads') : null;
const outPath = loadsPath ? null : opt('--out');
const wasmBytes = await readFile(wasmPath);
let touched = null;
const instrumented = {};
if (loadsPath) {
  const lo = Number(opt('--lo'));
  const hi = Number(opt('--hi'));
  touched = { loads: new Set(), stores: new Set() };
  const access = (set) => (id, bytes, offset, ptr) => {
    const a = (ptr >>> 0) + (offset >>> 0);
    if (a < hi && a + bytes > lo) set.add(a * 32 + bytes);
    return ptr;
  };
  const value = (id, v) => v;
  instrumented.instantiateWasm = (imports, receive) => {
    const module = new WebAssembly.Module(wasmBytes);
    imports.env = { ...imports.env, load_ptr: access(touched.loads), store_ptr: access(touched.stores) };
    for (const t of ['i32', 'i64', 'f32', 'f64']) imports.env[`load_val_${t}`] = imports.env[`store_val_${t}`] = value;
    const instance = new WebAssembly.Instance(module, imports);
    receive(instance, module);
    return instance.exports;
  };
}
const dist = new URL('../dist/', import.meta.url);

// The train workload runs through the main entry; the inference one through kiln-dl/inference.
const { init } = await import(new URL(workload === 'train' ? 'node.js' : 'inference_node.js', dist).href);
let raw = null;
const kiln = await init({
  ...(workload === 'train' ? { engine } : {}),
  relaxedSimd: false,
  wasmBinary: wasmBytes,
  ...instrumented,
  onRuntimeInitialized() {
    raw = this;
  },
});
if (!raw) throw new Error('split_profile: the module did not call onRuntimeInitialized');
const writeProfile = raw.asm?.__write_profile;
if (!loadsPath && typeof writeProfile !== 'function') {
  throw new Error(`split_profile: ${wasmPath} is not instrumented (no __write_profile export)`);
}

const { Tensor } = kiln;

// ---- what every page calls ----
kiln.backendInfo();
kiln.memory();
// The boundary's catch path (bindings/js/boundary.ts: a JS exception inside an engine call, such
// as a deferred module that cannot be fetched) restores the stack pointer; kept in the initial
// module, that path neither fetches the deferred module nor, when the fetch fails, leaks the
// stack (helper-77's review, 2026-12-04).
raw.stackRestore(raw.stackSave());

// ---- the inference workload: a trained model's SafeTensors loaded into a Sequential, forward ----
if (workload === 'inference') {
  kiln.tidy(() => {
    const a = Tensor.fromData([[1, 2, 3], [4, 5, 6]]);
    a.add(Tensor.ones([2, 3])).mul(a).div(2).matmul(a.transpose()).sum().item();
    a.softmax(1).argmax(1).toArray();
    a.reshape([3, 2]).dataSync();
  });
  try {
    kiln.tidy(() => Tensor.ones([2, 3]).matmul(Tensor.ones([2, 3])));
  } catch (e) {
    if (!(e instanceof kiln.KilnError)) throw e;
  }
  // Three models of different sizes (so that data-dependent paths, e.g. a buffer growing past
  // its capacity, run too): a deep one with every dense layer type, a small one, MNIST's MLP.
  const deep = [
    { type: 'linear', dInput: 4, dOutput: 8 }, { type: 'relu' }, { type: 'dropout', prob: 0.1 },
    { type: 'linear', dInput: 8, dOutput: 8 }, { type: 'tanh' }, { type: 'linear', dInput: 8, dOutput: 8 },
    { type: 'sigmoid' }, { type: 'linear', dInput: 8, dOutput: 8 }, { type: 'gelu' }, { type: 'linear', dInput: 8, dOutput: 3 },
  ];
  const small = [{ type: 'linear', dInput: 6, dOutput: 12 }, { type: 'relu' }, { type: 'linear', dInput: 12, dOutput: 2 }];
  const mnist = [{ type: 'linear', dInput: 784, dOutput: 128 }, { type: 'relu' }, { type: 'linear', dInput: 128, dOutput: 64 },
    { type: 'relu' }, { type: 'linear', dInput: 64, dOutput: 10 }];
  for (const layers of [deep, small, mnist]) {
    // SafeTensors bytes written here (u64 LE header length, JSON header padded to 8 bytes, f32 LE data).
    const tensors = [];
    layers.forEach((l, i) => {
      if (l.type === 'linear') tensors.push([`${i}.weight`, [l.dOutput, l.dInput]], [`${i}.bias`, [l.dOutput]]);
    });
    const header = {};
    const values = [];
    for (const [name, shape] of tensors) {
      const count = shape.reduce((p, d) => p * d, 1);
      header[name] = { dtype: 'F32', shape, data_offsets: [values.length * 4, (values.length + count) * 4] };
      for (let k = 0; k < count; k++) values.push(name.endsWith('bias') ? 0.1 : ((k % 7) - 3) / 8);
    }
    let text = JSON.stringify(header);
    text += ' '.repeat((8 - (text.length % 8)) % 8);
    const json = new TextEncoder().encode(text);
    const bytes = new Uint8Array(8 + json.length + values.length * 4);
    new DataView(bytes.buffer).setBigUint64(0, BigInt(json.length), true);
    bytes.set(json, 8);
    new Float32Array(bytes.buffer, 8 + json.length, values.length).set(values);
    // The README's round trip: the spec of a trained model (model.config: every field written
    // out, initializers included) rebuilds it; a page may also seed and wrap the forward in
    // noGrad (each of these loaded the deferred module before they were here: +7 KB gzip on the
    // initial module). The inference engine has no autodiff: a forward in train mode runs the
    // same code as in eval mode (dropout is the identity on a backend without autodiff).
    kiln.seed(1);
    const built = kiln.nn.sequential({ layers });
    const model = kiln.nn.sequential(built.config);
    built.dispose();
    model.loadSafetensors(bytes);
    const d = layers[0].dInput;
    const input = () => Tensor.fromData([Array.from({ length: d }, (_, i) => Math.sin(i)), Array.from({ length: d }, (_, i) => Math.cos(i))]);
    model.eval();
    kiln.tidy(() => {
      const out = model.forward(input());
      out.toArray();
      out.softmax(1).argmax(1).dataSync();
      void out.shape;
    });
    kiln.noGrad(() => kiln.tidy(() => model.forward(input()).toArray()));
    model.dispose();
  }
}

// ---- tensors: what a page does around its training ----
if (workload === 'train') await trainWorkload();

async function trainWorkload() {
kiln.tidy(() => {
  const a = Tensor.fromData([[1, 2, 3], [4, 5, 6]]);
  const b = Tensor.ones([2, 3]);
  const c = a.add(b).sub(Tensor.zeros([2, 3])).mul(a).div(2);
  c.matmul(a.transpose()).sum().item();
  c.mean().item();
  a.argmax(1).toArray();
  a.softmax(1).dataSync();
  a.reshape([3, 2]).toArray();
});
// A mistake caught as a KilnError (the formatting of messages).
try {
  kiln.tidy(() => Tensor.ones([2, 3]).matmul(Tensor.ones([2, 3])));
} catch (e) {
  if (!(e instanceof kiln.KilnError)) throw e;
}

// ---- MLPs trained with the Learner: the dense layer types, three optimizers, two losses ----
const n = 256;
const features = 8;
const x = new Float32Array(n * features);
const labels = new Int32Array(n);
const targets = new Float32Array(n);
for (let i = 0; i < n; i++) {
  for (let j = 0; j < features; j++) x[i * features + j] = Math.sin(i * 0.37 + j * 1.3);
  labels[i] = i % 3;
  targets[i] = Math.cos(i * 0.1);
}
const layers = [
  { type: 'linear', dInput: features, dOutput: 16 },
  { type: 'relu' },
  { type: 'dropout', prob: 0.1 },
  { type: 'linear', dInput: 16, dOutput: 16 },
  { type: 'tanh' },
  { type: 'linear', dInput: 16, dOutput: 16 },
  { type: 'sigmoid' },
  { type: 'linear', dInput: 16, dOutput: 16 },
  { type: 'gelu' },
  { type: 'linear', dInput: 16, dOutput: 3 },
];
const train = kiln.data.fromArrays(x, labels, { itemShape: [features] });
const regression = kiln.data.fromArrays(x, targets, { itemShape: [features], targetShape: [1] });
const optimizers = [kiln.optim.adam({ lr: 0.01 }), kiln.optim.adamW({ lr: 0.01 }), kiln.optim.sgd({ lr: 0.05, momentum: 0.9 })];
for (const [k, optimizer] of optimizers.entries()) {
  const model = kiln.nn.sequential({ layers }, { seed: 1 });
  void model.numParams;
  JSON.stringify(model.config); // a page that shows or stores the architecture
  model.summary(); // the playground's model panel
  const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy' });
  await learner.fit(train, { epochs: 2, batchSize: 32, validationData: train });
  learner.predict(x);
  // The playground's loop: one batch at a time from flat arrays, then an evaluation (each
  // loaded the deferred module before it was here).
  learner.trainBatch(x.subarray(0, 32 * features), labels.subarray(0, 32));
  void optimizer.learningRate; // the playground's progress line
  learner.evaluate(train, { batchSize: 64 });
  learner.dispose();
  model.eval();
  kiln.tidy(() => model.forward(Tensor.fromData([Array.from(x.subarray(0, features))])).toArray());
  // A page's own evaluation: seeded, without the graph.
  kiln.seed(k + 1);
  kiln.noGrad(() => kiln.tidy(() => model.forward(Tensor.fromData([Array.from(x.subarray(0, features))])).argmax(1).toArray()));
  model.dispose();
  if (k === 0) {
    // Other sizes (so that data-dependent paths run too): MNIST-sized inputs, a last batch
    // smaller than the others, ten classes.
    const m = 100;
    const xm = new Float32Array(m * 784).map((_, i) => ((i * 2654435761) % 1000) / 1000);
    const ym = Int32Array.from({ length: m }, (_, i) => i % 10);
    const wide = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 784, dOutput: 32 }, { type: 'relu' },
      { type: 'linear', dInput: 32, dOutput: 10 }] }, { seed: 5 });
    const wideLearner = new kiln.Learner(wide, { optimizer: kiln.optim.adam({ lr: 1e-3 }), loss: 'crossEntropy' });
    await wideLearner.fit(kiln.data.fromArrays(xm, ym, { itemShape: [784] }), { epochs: 1, batchSize: 64 });
    wideLearner.predict(xm.subarray(0, 784 * 3));
    for (const o of [wideLearner, wide]) o.dispose();
    const small = kiln.nn.sequential({ layers: [layers[0], layers[1], { type: 'linear', dInput: 16, dOutput: 1 }] }, { seed: 2 });
    const mse = new kiln.Learner(small, { optimizer: kiln.optim.adam({ lr: 0.01 }), loss: 'mse' });
    await mse.fit(regression, { epochs: 1, batchSize: 32 });
    for (const o of [mse, small]) o.dispose();
  }
}

// ---- the full engine: MNIST CNNs, one epoch of 40 images each: the anchor CNN (valid
// convolutions: the direct kernels) and one with 'same' padding (im2col + GEMM) ----
if (engine === 'full') {
  const images = new Float32Array(40 * 784).map((_, i) => ((i * 2654435761) % 1000) / 1000);
  const data = kiln.data.fromArrays(images, Int32Array.from({ length: 40 }, (_, i) => i % 10), { itemShape: [784] });
  for (const [padding, flat] of [['valid', 16 * 5 * 5], ['same', 16 * 7 * 7]]) {
    const model = kiln.nn.sequential({
      layers: [
        { type: 'reshape', shape: [1, 28, 28] },
        { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], padding },
        { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2] },
        { type: 'conv2d', channels: [8, 16], kernelSize: [3, 3], padding },
        { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2] },
        { type: 'flatten' },
        { type: 'linear', dInput: flat, dOutput: 10 },
      ],
    }, { seed: 4 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 1e-3 }), loss: 'crossEntropy' });
    await learner.fit(data, { epochs: 1, batchSize: 16, validationData: data });
    learner.predict(images.subarray(0, 784 * 2));
    for (const o of [learner, model]) o.dispose();
  }
}

}

if (loadsPath) {
  const list = (set) => [...set].sort((x, y) => x - y).map((k) => [Math.floor(k / 32), k % 32]);
  writeFileSync(loadsPath, JSON.stringify({ loads: list(touched.loads), stores: list(touched.stores) }));
  console.log(`split_profile: ${engine} engine, ${workload} workload: ${touched.loads.size} loads and ${touched.stores.size} stores of data`);
  process.exit(0);
}
const size = writeProfile(0, 0);
const ptr = raw._malloc(size);
const written = writeProfile(ptr, size);
if (written !== size) throw new Error(`split_profile: __write_profile wrote ${written} of ${size} bytes`);
writeFileSync(outPath, raw.HEAPU8.slice(ptr, ptr + size));
raw._free(ptr);
console.log(`split_profile: ${engine} engine, ${workload} workload: ${size} bytes of profile`);
