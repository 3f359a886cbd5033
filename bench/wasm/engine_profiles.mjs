// The core engine (dist/kiln-core.wasm) against the full one (dist/kiln.wasm) and, when
// given, a saved copy of an earlier kiln.mjs + kiln.wasm ("before"), in one run, one thread
// (the single-threaded builds; no pool), in Node: sizes (raw and gzip -9), the per-op
// overhead of a tiny op and of a tiny backward pass, an element-wise op, a 2×2 max pool, a GEMM, and an MLP and a CNN epoch
// with the Learner (the pool and the CNN on the full engines only).
// Every engine runs under the same JS layer (dist/module.js), so only the .wasm differs.
// Times are CPU time of this process (process.cpuUsage, user + system), the best of
// `--repeat` rounds, the engines interleaved round by round, each round starting with the
// next engine (the machine may be shared).
//
//   node bench/wasm/engine_profiles.mjs [--before DIR]... [--repeat 5]
//   (each DIR holds kiln.mjs + kiln.wasm, or kiln-core.mjs + kiln-core.wasm, of a build to
//   compare with, unsplit, e.g. /tmp/core/before)
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { finishModule } from '../../dist/module.js';
import { deferredLoader } from '../../dist/deferred.js';
import { fileSource } from '../../dist/deferred_node.js';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const repeat = Number(opt('--repeat', '5'));
// --before DIR, repeatable: each DIR holds kiln.mjs + kiln.wasm of another build.
const beforeDirs = args.flatMap((a, i) => (a === '--before' ? [args[i + 1]] : []));

// The shipped engines are split (scripts/split_wasm.mjs): dist/<name>.wasm loads at init and
// <name>.deferred.wasm on first use (both counted in the sizes); 'core unsplit' is the same core
// engine before the split (build/split/kiln-core.wasm, kept by split_wasm.mjs), to show what the
// split costs per op.
const root = fileURLToPath(new URL('../../', import.meta.url));
const engines = [
  { name: 'core', js: join(dist, 'kiln-core.mjs'), wasm: join(dist, 'kiln-core.wasm'), deferred: join(dist, 'kiln-core.deferred.wasm'), engine: 'core' },
  { name: 'core unsplit', js: join(dist, 'kiln-core.mjs'), wasm: join(root, 'build/split/kiln-core.wasm'), engine: 'core' },
  { name: 'full', js: join(dist, 'kiln.mjs'), wasm: join(dist, 'kiln.wasm'), deferred: join(dist, 'kiln.deferred.wasm'), engine: 'full' },
];
beforeDirs.forEach((dir, i) => {
  const name = beforeDirs.length > 1 ? `before${i + 1}` : 'before';
  // A DIR holding kiln-core.mjs + kiln-core.wasm is a core engine (no pool or CNN rows).
  const core = existsSync(join(dir, 'kiln-core.wasm'));
  const base = core ? 'kiln-core' : 'kiln';
  engines.push({ name, js: join(dir, `${base}.mjs`), wasm: join(dir, `${base}.wasm`), engine: core ? 'core' : 'full' });
});

for (const e of engines) {
  const { default: create } = await import(pathToFileURL(e.js).href);
  const deferred = deferredLoader(e.deferred ? fileSource(pathToFileURL(e.deferred)) : null);
  const raw = await create({ wasmBinary: readFileSync(e.wasm), ...deferred.options });
  e.kiln = finishModule(raw, {}, { maxThreads: 1, engine: e.engine, deferred: deferred.control });
  e.sizes = [e.wasm, e.js].map((f) => {
    const bytes = readFileSync(f);
    return { raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
  });
  if (e.deferred) {
    const bytes = readFileSync(e.deferred);
    e.sizes[0].raw += bytes.length;
    e.sizes[0].gzip += gzipSync(bytes, { level: 9 }).length;
  }
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log('threads: 1 (single-threaded builds), Node', process.version);
console.log('\nsizes (gzip -9)            .wasm raw   .wasm gz    .mjs gz   wasm+mjs gz   (a split engine: both halves)');
for (const e of engines) {
  const [w, j] = e.sizes;
  console.log(`${e.name.padEnd(24)} ${kb(w.raw).padStart(11)} ${kb(w.gzip).padStart(10)} ${kb(j.gzip).padStart(10)} ${kb(w.gzip + j.gzip).padStart(12)}`);
}

/** CPU seconds of fn(). */
function cpu(fn) {
  const t = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1e6;
}
async function cpuAsync(fn) {
  const t = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(t);
  return (d.user + d.system) / 1e6;
}

/** CPU seconds of one Learner epoch (batch 64, Adam) of `layers` on `items` MNIST-shaped items. */
async function epoch(k, items, layers) {
  const x = new Float32Array(items * 784);
  const y = new Int32Array(items);
  for (let i = 0; i < x.length; i++) x[i] = ((i * 2654435761) % 1000) / 1000;
  for (let i = 0; i < y.length; i++) y[i] = i % 10;
  const model = k.nn.sequential(layers, { seed: 1 });
  const learner = new k.Learner(model, { optimizer: k.optim.adam({ lr: 1e-3 }), seed: 1 });
  const data = k.data.fromArrays(x, y, { itemShape: [784] });
  const s = await cpuAsync(() => learner.fit(data, { epochs: 1, batchSize: 64 }));
  learner.dispose();
  data.dispose();
  model.dispose();
  return s;
}

const cases = [
  {
    name: 'tiny op: a.add(b), [4] (µs/op)',
    run: (k) => {
      const a = k.Tensor.ones([4]);
      const b = k.Tensor.ones([4]);
      const n = 20000;
      const s = cpu(() => {
        for (let i = 0; i < n; i++) a.add(b).dispose();
      });
      a.dispose();
      b.dispose();
      return (s / n) * 1e6;
    },
  },
  {
    // The autodiff path around a tiny op: two recorded ops and the backward pass over them
    // (Engine::backward, the rules' steps, the gradients map).
    name: 'tiny backward: x.mul(x).sum().backward(), [4] (µs/step)',
    run: (k) => {
      const x = k.Tensor.ones([4]).requireGrad();
      const n = 5000;
      const s = cpu(() => {
        for (let i = 0; i < n; i++) {
          const y = x.mul(x);
          const loss = y.sum();
          loss.backward().dispose();
          loss.dispose();
          y.dispose();
        }
      });
      x.dispose();
      return (s / n) * 1e6;
    },
  },
  {
    name: 'element-wise: a.mul(b), 1M floats (ms)',
    run: (k) => {
      const a = k.Tensor.ones([1024, 1024]);
      const b = k.Tensor.ones([1024, 1024]);
      const n = 50;
      const s = cpu(() => {
        for (let i = 0; i < n; i++) a.mul(b).dispose();
      });
      a.dispose();
      b.dispose();
      return (s / n) * 1e3;
    },
  },
  {
    // the MNIST CNN's first pool (issue 17: the 2×2 fast path in SIMD128), with indices
    name: 'max pool 2x2, [64, 8, 26, 26], tracked (ms)',
    run: (k) => {
      if (k.backendInfo().engine === 'core') return NaN; // nn.functional's pools: full engine only
      k.seed(1);
      const x = k.Tensor.random([64, 8, 26, 26]).requireGrad();
      const n = 50;
      const s = cpu(() => {
        for (let i = 0; i < n; i++) k.nn.functional.maxPool2d(x, { kernelSize: 2, stride: 2 }).dispose();
      });
      x.dispose();
      return (s / n) * 1e3;
    },
  },
  {
    name: 'GEMM 512 x 512 x 512 (GFLOP/s)',
    higher: true,
    run: (k) => {
      k.seed(1);
      const a = k.Tensor.random([512, 512]);
      const n = 10;
      const s = cpu(() => {
        for (let i = 0; i < n; i++) k.noGrad(() => a.matmul(a)).dispose();
      });
      a.dispose();
      return (2 * 512 ** 3 * n) / s / 1e9;
    },
  },
  {
    name: 'MLP epoch 784-128-10, 4096 items, batch 64, Adam (s)',
    run: (k) => epoch(k, 4096, [{ type: 'linear', dInput: 784, dOutput: 128 }, { type: 'relu' },
      { type: 'linear', dInput: 128, dOutput: 10 }]),
  },
  {
    // the anchor CNN of bench/browser (worker.js) on 2,048 items: 32 steps
    name: 'CNN epoch (MNIST anchor), 2048 items, batch 64, Adam (s)',
    run: (k) => (k.backendInfo().engine === 'core' ? NaN // conv2d layers: full engine only
      : epoch(k, 2048, [{ type: 'reshape', shape: [1, 28, 28] },
        { type: 'conv2d', channels: [1, 8], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' }, { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2] },
        { type: 'conv2d', channels: [8, 16], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' }, { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2] }, { type: 'flatten' },
        { type: 'linear', dInput: 400, dOutput: 10, bias: true }])),
  },
];

console.log(`\nCPU time, best of ${repeat} (engines interleaved)`);
console.log(`${'case'.padEnd(52)} ${engines.map((e) => e.name.padStart(9)).join(' ')}`);
for (const c of cases) {
  const best = engines.map(() => (c.higher ? 0 : Infinity));
  for (let r = 0; r < repeat; r++) {
    // Each round starts with the next engine (no engine always runs first).
    for (let j = 0; j < engines.length; j++) {
      const i = (r + j) % engines.length;
      const v = await c.run(engines[i].kiln);
      best[i] = c.higher ? Math.max(best[i], v) : Math.min(best[i], v);
    }
  }
  console.log(`${c.name.padEnd(52)} ${best.map((v) => v.toFixed(3).padStart(9)).join(' ')}`);
}
