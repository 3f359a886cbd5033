// The benchmark worker: one epoch of MNIST training with Kiln (kiln-dl) or TF.js's WASM
// backend, in the same set-up for both: the training images fetched from /mnist/, a seeded
// shuffle, each batch normalised from the bytes in JS (as the playground does) and handed
// to the engine, the loss read back after every batch. Timed: the epoch's loop, after a
// warm-up of a few batches on the same model (V8 tiers wasm code up on later calls).
// Afterwards the test accuracy on the 10,000 test images is measured as a sanity check.
import { createRng } from '../../web/src/rng.js';
import { normaliseInto, MNIST_MEAN, MNIST_STD } from '../../web/src/mnist.js';
import { SPECS, tfjsModel, loadMnist, countCorrect } from './shared.js';

const log = (text) => self.postMessage({ type: 'log', text });
/** Tells the runner (through the page's console) to read the CPU clocks now. */
const mark = (what) => self.postMessage({ type: 'mark', what });

// ---- Kiln ------------------------------------------------------------------------------
async function kilnEngine(p) {
  const { init } = await import('kiln-dl');
  // The thread count is explicit (issue 17): 1 = a single-threaded build, N > 1 = the
  // threaded build (kiln-mt-relaxed.wasm / kiln-mt.wasm) with N threads (the page is cross-origin isolated).
  // relaxed: '1' / '0' pins the relaxed-SIMD / SIMD128 build, single-threaded or threaded (main.js).
  // The full engine: CNN layers and the threaded build are the full engine's.
  const single = p.relaxed === undefined ? { threads: false } : { threads: false, relaxedSimd: p.relaxed === '1' };
  // mt: '1' runs the threaded build with p.threads threads, even 1: the like-for-like baseline
  // of its 2-thread rows (the same .wasm, only the thread count differs).
  const threaded = p.threads > 1 || p.mt === '1';
  // The threaded build is kiln-mt-relaxed.wasm where relaxed SIMD validates (init()'s default),
  // kiln-mt.wasm with relaxed: '0'.
  const pinned = p.relaxed === undefined ? {} : { relaxedSimd: p.relaxed === '1' };
  const kiln = await init({ engine: 'full', ...(threaded ? { threads: true, numThreads: Number(p.threads), ...pinned } : single) });
  const model = kiln.nn.sequential(SPECS[p.model], { seed: 0 });
  const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 1e-3 }), loss: 'crossEntropy', seed: 0 });
  return {
    info: { ...(kiln.backendInfo?.() ?? {}), threads: kiln.backendInfo?.().threads ?? p.threads, numParams: model.numParams },
    step: (x, y, n) => learner.trainBatch(x, y, n).loss,
    predict: (x) => {
      model.eval?.();
      const probs = learner.predict(x, { batchSize: 500 });
      model.train?.();
      return probs;
    },
    /** The package's own epoch loop: kiln.data.mnist + learner.fit (no per-batch JS). */
    fit: async (imgBytes, lblBytes, items, batch) => {
      let ds = kiln.data.mnist(imgBytes, lblBytes);
      if (items < ds.length) ds = ds.take(items);
      mark('epoch-start');
      const t0 = performance.now();
      const h = await learner.fit(ds, { epochs: 1, batchSize: batch, shuffle: true });
      const seconds = (performance.now() - t0) / 1000;
      mark('epoch-end');
      return { seconds, history: h };
    },
  };
}

// ---- TF.js (tfjs-core + the WASM backend; the model written with core ops) ---------------
async function tfjsEngine(p) {
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-core/dist/register_all_gradients'); // (the tfjs umbrella package does this)
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  const urls = await Promise.all([
    import('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url'),
    import('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url'),
    import('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url'),
  ]);
  const abs = (u) => new URL(u.default, self.location.href).href;
  wasm.setWasmPaths({
    'tfjs-backend-wasm.wasm': abs(urls[0]),
    'tfjs-backend-wasm-simd.wasm': abs(urls[1]),
    'tfjs-backend-wasm-threaded-simd.wasm': abs(urls[2]),
  });
  tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
  tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', p.threads > 1);
  if (p.threads > 1) wasm.setThreadsCount(p.threads);
  await tf.setBackend('wasm');
  await tf.ready();
  if (tf.getBackend() !== 'wasm') throw new Error(`TF.js backend is ${tf.getBackend()}`);
  const threads = typeof wasm.getThreadsCount === 'function' ? wasm.getThreadsCount() : 1;

  const { forward, numParams } = tfjsModel(tf, p.model);
  const optimizer = tf.train.adam(1e-3);
  return {
    info: { tfjs: tf.version_core, backend: 'wasm', simd: true, threads, numParams },
    step: (x, y, n) => {
      const loss = tf.tidy(() => {
        const xs = tf.tensor2d(x, [n, 784]);
        const ys = tf.oneHot(tf.tensor1d(y, 'int32'), 10);
        return optimizer.minimize(() => tf.losses.softmaxCrossEntropy(ys, forward(xs)), true);
      });
      const v = loss.dataSync()[0];
      loss.dispose();
      return v;
    },
    predict: (x) => {
      const n = x.length / 784;
      const out = new Float32Array(n * 10);
      for (let s = 0; s < n; s += 500) {
        const m = Math.min(500, n - s);
        const probs = tf.tidy(() => tf.softmax(forward(tf.tensor2d(x.subarray(s * 784, (s + m) * 784), [m, 784]))));
        out.set(probs.dataSync(), s * 10);
        probs.dispose();
      }
      return out;
    },
  };
}

async function run(p) {
  const { trImg, trLbl, pixels, labels, testPixels: te, testLabels: tl } = await loadMnist(p.mnistBase);
  const n = Math.min(p.items, labels.length);
  const tLoad = performance.now();
  const engine = p.engine === 'tfjs' ? await tfjsEngine(p) : await kilnEngine(p);
  const loadSeconds = (performance.now() - tLoad) / 1000;
  log(`engine ready in ${loadSeconds.toFixed(2)} s: ${JSON.stringify(engine.info)}`);

  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  createRng(0).shuffle(order);
  const B = p.batch;
  const x = new Float32Array(B * 784);
  const y = new Int32Array(B);
  const batchAt = (pos) => {
    const count = Math.min(B, n - pos);
    normaliseInto(x, pixels, pos, count, order);
    for (let i = 0; i < count; i++) y[i] = labels[order[pos + i]];
    return count;
  };

  // warm-up on the same model
  for (let b = 0; b < p.warmup; b++) {
    const c = batchAt(b * B);
    engine.step(c === B ? x : x.subarray(0, c * 784), c === B ? y : y.subarray(0, c), c);
  }

  let seconds;
  let lastLoss = NaN;
  let steps = 0;
  if (p.mode === 'fit') {
    if (!engine.fit) throw new Error('mode=fit is Kiln only');
    const r = await engine.fit(trImg, trLbl, n, B);
    seconds = r.seconds;
    steps = Math.ceil(n / B);
  } else {
    mark('epoch-start');
    const t0 = performance.now();
    for (let pos = 0; pos < n; pos += B) {
      const c = batchAt(pos);
      lastLoss = engine.step(c === B ? x : x.subarray(0, c * 784), c === B ? y : y.subarray(0, c), c);
      steps++;
    }
    seconds = (performance.now() - t0) / 1000;
    mark('epoch-end');
  }

  // sanity: test accuracy
  const tx = normaliseInto(new Float32Array(te.length), te, 0, tl.length);
  const probs = engine.predict(tx);
  const correct = countCorrect(probs, tl);
  return {
    ok: true,
    params: p,
    info: engine.info,
    items: n,
    steps,
    seconds,
    itemsPerSecond: n / seconds,
    lastLoss,
    testAccuracy: correct / tl.length,
    loadSeconds,
    crossOriginIsolated: self.crossOriginIsolated,
    normalisation: [MNIST_MEAN, MNIST_STD],
  };
}

self.onmessage = async (ev) => {
  try {
    self.postMessage(await run(ev.data));
  } catch (e) {
    self.postMessage({ ok: false, params: ev.data, error: `${e?.name ?? 'Error'}: ${e?.message ?? e}` });
  }
};
