// The WebGPU benchmark's worker (bench/webgpu/): one engine per worker, so that each run
// starts from a fresh engine and GPU device and the page stays responsive.
//   engines: 'kiln-webgpu' (init({ backend: 'webgpu' })), 'kiln-cpu' (init({ backend: 'cpu',
//   engine: 'full', threads: false }): Kiln's single-threaded WebAssembly build) and
//   'tfjs-webgpu' (TF.js 4.22 core + @tensorflow/tfjs-backend-webgpu).
//   tasks: 'sgemm' (C = A·B at each size, GFLOP/s) and 'epoch' (one MNIST epoch of the MLP or
//   the CNN of bench/browser, Adam lr 1e-3).
// Every timing ends with a read of a result (await data()), which waits for the GPU.
import { createRng } from '../../web/src/rng.js';
import { normaliseInto } from '../../web/src/mnist.js';
import { SPECS, tfjsModel, loadMnist, countCorrect } from '../browser/shared.js';

const log = (text) => self.postMessage({ type: 'log', text });
const now = () => performance.now();
const errorText = (e) => `${e?.name ?? 'Error'}${e?.code ? ` (${e.code})` : ''}: ${e?.message ?? e}`;

// ---- engines ---------------------------------------------------------------------------
async function kilnInstance(engine) {
  const { init } = await import('kiln-dl');
  const kiln = engine === 'kiln-webgpu' ? await init({ backend: 'webgpu' }) : await init({ backend: 'cpu', engine: 'full', threads: false });
  const bi = kiln.backendInfo();
  return { kiln, info: { backend: bi.backend, engine: bi.engine, build: bi.build, threads: bi.threads, adapter: bi.adapter ?? null } };
}

/** TF.js with its webgpu backend, or an Error saying why it did not start. */
async function tfjsWebgpu() {
  const gpu = globalThis.navigator?.gpu;
  if (!gpu) throw new Error('this worker has no navigator.gpu (WebGPU off, or not a secure context)');
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('navigator.gpu.requestAdapter() found no adapter');
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-core/dist/register_all_gradients');
  await import('@tensorflow/tfjs-backend-webgpu');
  // setBackend resolves to false (and warns) when the backend fails to start: keep the warning.
  const warnings = [];
  const warn = console.warn;
  console.warn = (...a) => { warnings.push(a.map(String).join(' ')); warn.apply(console, a); };
  let ok;
  try {
    ok = await tf.setBackend('webgpu');
    await tf.ready();
  } finally {
    console.warn = warn;
  }
  if (!ok || tf.getBackend() !== 'webgpu') throw new Error(`tf.setBackend('webgpu') failed${warnings.length ? `: ${warnings.join('; ')}` : ''}`);
  const ai = adapter.info ?? {};
  return { tf, info: { backend: 'webgpu', tfjs: tf.version_core, adapter: [ai.vendor, ai.architecture, ai.description || ai.device].filter((x) => x).join(' ') || null } };
}

// ---- SGEMM -----------------------------------------------------------------------------
function randomArray(n, seed) {
  const out = new Float32Array(n);
  let s = seed >>> 0;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = s / 2 ** 32 - 0.5;
  }
  return out;
}

/** Max |C - A·B| / max |A·B| at 64 sampled entries, the reference in float64 in JS. */
function checkProduct(c, a, b, n) {
  const rng = createRng(n);
  let err = 0;
  let scale = 0;
  for (let s = 0; s < 64; s++) {
    const i = Math.floor(rng.next() * n);
    const j = Math.floor(rng.next() * n);
    let ref = 0;
    for (let k = 0; k < n; k++) ref += a[i * n + k] * b[k * n + j];
    err = Math.max(err, Math.abs(c[i * n + j] - ref));
    scale = Math.max(scale, Math.abs(ref));
  }
  return err / scale;
}

/** An engine's matmul as { upload, mm, read, dispose } (read: a Promise of the values). */
async function matmulEngine(engine) {
  if (engine === 'tfjs-webgpu') {
    const { tf, info } = await tfjsWebgpu();
    return { info, upload: (x, n) => tf.tensor2d(x, [n, n]), mm: (a, b) => tf.matMul(a, b), read: (t) => t.data(), dispose: (t) => t.dispose() };
  }
  const { kiln, info } = await kilnInstance(engine);
  return {
    info,
    upload: (x, n) => kiln.Tensor.fromData(x, { shape: [n, n] }),
    mm: (a, b) => a.matmul(b),
    read: (t) => t.data(),
    dispose: (t) => t.dispose(),
  };
}

/**
 * k products, then one read of the last (the queue runs in order, so its result is there only
 * after all k): wall ms per product. The k results stay alive until the read, then go.
 */
async function timeProducts(e, a, b, k) {
  const out = [];
  const t0 = now();
  for (let i = 0; i < k; i++) out.push(e.mm(a, b));
  await e.read(out[k - 1]);
  const ms = (now() - t0) / k;
  for (const t of out) e.dispose(t);
  return ms;
}

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function sgemm(p) {
  const e = await matmulEngine(p.engine);
  log(`${p.engine}: ${JSON.stringify(e.info)}`);
  const rows = [];
  for (const n of p.sizes) {
    try {
      const a = randomArray(n * n, 1 + n);
      const b = randomArray(n * n, 2 + n);
      const A = e.upload(a, n);
      const B = e.upload(b, n);
      // Warm-up (shader compilation, wasm tier-up) and the correctness check.
      let t0 = now();
      const c = e.mm(A, B);
      const check = checkProduct(await e.read(c), a, b, n);
      e.dispose(c);
      const firstMs = now() - t0;
      // Calibration: products per timed block, so that a block lasts about minMs (and at most
      // 512 MiB of results are alive at once).
      const oneMs = await timeProducts(e, A, B, 1);
      const k = Math.max(1, Math.min(Math.ceil(p.minMs / Math.max(oneMs, 0.01)), 64, Math.floor(2 ** 29 / (4 * n * n))));
      const blocks = [];
      t0 = now();
      for (let r = 0; r < p.reps; r++) blocks.push(await timeProducts(e, A, B, k));
      e.dispose(A);
      e.dispose(B);
      const ms = median(blocks);
      const flops = 2 * n ** 3;
      rows.push({ n, ok: true, gflops: flops / ms / 1e6, msPerProduct: ms, blocksMs: blocks, k, reps: p.reps, firstMs, check });
      log(`${p.engine} n=${n}: ${(flops / ms / 1e6).toFixed(2)} GFLOP/s (${ms.toFixed(2)} ms per product, ${p.reps} blocks of ${k}; first product ${firstMs.toFixed(0)} ms; max rel. error ${check.toExponential(1)})`);
    } catch (err) {
      rows.push({ n, ok: false, error: errorText(err) });
      log(`${p.engine} n=${n}: ${errorText(err)}`);
    }
  }
  return { info: e.info, rows };
}

// ---- one MNIST epoch -------------------------------------------------------------------
/** Normalised test images (the first `count`) in chunks of 500 through `forward`: accuracy. */
async function testAccuracy(m, count, forwardScores) {
  const x = new Float32Array(500 * 784);
  let correct = 0;
  for (let s = 0; s < count; s += 500) {
    const c = Math.min(500, count - s);
    normaliseInto(x, m.testPixels, s, c);
    correct += countCorrect(await forwardScores(x.subarray(0, c * 784), c), m.testLabels, s);
  }
  return correct / count;
}

async function kilnEpoch(p, m) {
  const { kiln, info } = await kilnInstance(p.engine);
  const model = kiln.nn.sequential(SPECS[p.model], { seed: 0 });
  info.numParams = model.numParams;
  const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 1e-3 }), loss: 'crossEntropy', seed: 0 });
  const full = kiln.data.mnist(m.trImg, m.trLbl);
  const ds = p.items < full.length ? full.take(p.items) : full;
  const opts = { epochs: 1, batchSize: p.batch, batchesPerCall: p.batchesPerCall, shuffle: true };
  const forwardScores = async (x, c) => {
    const input = kiln.Tensor.fromData(x, { shape: [c, 784] });
    const out = model.forward(input);
    const v = await out.data();
    input.dispose();
    out.dispose();
    return v;
  };
  const one = new Float32Array(784);
  if (p.warmup > 0) await learner.fit(full.take(p.warmup * p.batch), opts);
  const t0 = now();
  const h = await learner.fit(ds, opts);
  await forwardScores(one, 1); // the last step's parameters are there
  const seconds = (now() - t0) / 1000;
  return { info, seconds, loss: h.loss?.at(-1), accuracy: await testAccuracy(m, p.testItems, forwardScores) };
}

async function tfjsEpoch(p, m) {
  const { tf, info } = await tfjsWebgpu();
  const { forward, numParams } = tfjsModel(tf, p.model);
  info.numParams = numParams;
  const optimizer = tf.train.adam(1e-3);
  const n = Math.min(p.items, m.labels.length);
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  createRng(0).shuffle(order);
  const B = p.batch;
  const x = new Float32Array(B * 784);
  const y = new Int32Array(B);
  /** Batches from `from` to `to` (items), the loss read every batchesPerCall batches. */
  const train = async (from, to) => {
    let pending = [];
    let loss = NaN;
    for (let pos = from; pos < to; pos += B) {
      const c = Math.min(B, to - pos);
      normaliseInto(x, m.pixels, pos, c, order);
      for (let i = 0; i < c; i++) y[i] = m.labels[order[pos + i]];
      pending.push(tf.tidy(() => {
        const xs = tf.tensor2d(x.subarray(0, c * 784), [c, 784]);
        const ys = tf.oneHot(tf.tensor1d(y.subarray(0, c), 'int32'), 10);
        return optimizer.minimize(() => tf.losses.softmaxCrossEntropy(ys, forward(xs)), true);
      }));
      if (pending.length >= p.batchesPerCall || pos + B >= to) {
        loss = (await pending.at(-1).data())[0];
        for (const t of pending) t.dispose();
        pending = [];
      }
    }
    return loss;
  };
  const forwardScores = async (xs, c) => {
    const out = tf.tidy(() => forward(tf.tensor2d(xs, [c, 784])));
    const v = await out.data();
    out.dispose();
    return v;
  };
  if (p.warmup > 0) await train(0, Math.min(n, p.warmup * B));
  const t0 = now();
  const loss = await train(0, n);
  await forwardScores(new Float32Array(784), 1);
  const seconds = (now() - t0) / 1000;
  return { info, seconds, loss, accuracy: await testAccuracy(m, p.testItems, forwardScores) };
}

async function epoch(p) {
  const m = await loadMnist(p.mnistBase);
  const r = p.engine === 'tfjs-webgpu' ? await tfjsEpoch(p, m) : await kilnEpoch(p, m);
  const items = Math.min(p.items, m.labels.length);
  log(`${p.engine} ${p.model}: ${r.seconds.toFixed(2)} s for ${items} images, test accuracy ${(r.accuracy * 100).toFixed(1)} %`);
  return { ...r, items, imagesPerSecond: items / r.seconds };
}

self.onmessage = async (ev) => {
  const p = ev.data;
  try {
    const result = p.task === 'sgemm' ? await sgemm(p) : await epoch(p);
    self.postMessage({ type: 'result', ok: true, ...result });
  } catch (e) {
    self.postMessage({ type: 'result', ok: false, error: errorText(e) });
  }
};
