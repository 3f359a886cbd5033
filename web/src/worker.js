// The playground's Web Worker: owns the engine (kiln-dl through engine.js), the data and
// the training loop, so the page stays responsive. The loop trains in slices of ~30 ms and
// yields between them, so a prediction request, a pause or a new set-up is handled at once.
//
// Messages in:  setup {run, state, spec, mnistBase, weights?, idbWeights?, csv?}, train {run},
//               pause {run}, step {run}, predict {id, x}, save {run},
//               resolution {size} (the decision-boundary canvas's width in device pixels),
//               inside {on} (the "Look inside" views are shown), inspect {id, x} (inside.js),
//               regenerate {run, state} (new toy points from state.dataSeed, same model)
//               (live-worker.js: retune, undo {run, from, keep}, forever; setup's and
//               undo's `keep` keep the run they replace for undo)
//               export {run, id} (export.js),
//               raceStart / raceStop (race-worker.js: two set-ups side by side; out: race {...}),
//               backend {want: 'cpu' | 'webgpu'} (the backend switch: later set-ups use it)
// Messages out: hello {info} | fatal {error}, status {run, status, message?},
//               ready {run, numParams, summary, view}, progress {run, ...}, eval {run, ...},
//               prediction {id, probs | error}, saved {run, weights, config}, error {run, error},
//               weights {run, name, status, kind, text} (idbWeights: loaded or why not),
//               mnistLoad {run, total, rawTotal, fetched, cached, done, cacheNote, chunks, seconds,
//               failed?, error?}
//               (MNIST's gzip chunks: compressed bytes to load, downloaded, read from the Cache API)
//               inside {run, step, toy | weights | error} after each evaluation while shown,
//               inspected {id, run, outputs, saliency | error},
//               regenerated {run, view} (the new points after regenerate),
//               exported {run, id, weights, check, step, epoch | error} (export/snapshot.js)
//               resolution {size} (the decision-boundary canvas's width in device pixels)
//               backend {backend, info, error?, lost?} (the backend in use after a switch, or
//               the cpu one with why the GPU failed: init, or a lost device), gpuBlocked {run,
//               message} (what this set-up cannot do on the GPU; the page offers the CPU)
// On the GPU backend (issue 21) every read is asynchronous (Session.predictAsync) and training
// is the Learner's fit() over the epochs left (trainLoopGpu); "Look inside" reads the layers
// and weights with await data() (postInsideGpu) but the drawn digit's inspection (saliency),
// Race, Export and live changes of training settings stay on the CPU backend (the page says so).
// An eval of toy data holds `boundary` (class probabilities over a size x size grid of
// the plane) and `boundarySize`: the canvas's device-pixel size when the model's cost
// allows (boundaryBudget), else the largest grid that does (the page smooths it up).
import { loadEngine, loadGpuEngine, errorInfo, Engine } from './engine.js';
import { generateToy, splitTrainTest, boundaryGrid, GRID } from './datasets.js';
import { dataSeedOf, taskOf } from './state.js';
import { featureNames, applyFeatures } from './features.js';
import { MNIST_FILES, normaliseInto } from './mnist.js';
import { MnistLoader } from './mnist-fetch.js';
import mnistManifest from 'virtual:kiln-mnist';
import { Trainer, floatSource, scorePredictions, scoreRegression, materialise } from './trainer.js';
import { loadInitialWeights } from './weights.js';
import { toyProbe, weightProbe, inspectProbe, inputNames, INSIDE_GRID } from './inside-probe.js';
import { keepForUndo, takeKept, retune, restingStatus } from './live-worker.js';
import { exportSnapshot } from './export/snapshot.js';
import { RaceRunner } from './race-worker.js';

const MNIST_SAMPLE = 60; // test digits shown in the grid
const SLICE_MS = 30;

const post = (msg) => self.postMessage(msg);

let engine = null;
let enginePromise = null;
let cur = null; // the current run: {run, state, session, trainer, running, ...}
let mnist = null; // the MnistLoader (keeps the loaded chunks between set-ups)
let insideOn = true; // the page shows the "Look inside" views

/** The model's input for points (x1, x2) of the plane (toy sets): the chosen features. */
const featuresOf = (state, points) => applyFeatures(points, state.features);
let boundaryPixels = GRID.size; // the page's canvas width in device pixels (resolution)
const gridCache = new Map(); // 'size|features' -> the model's inputs over a size x size grid
const BOUNDARY_CHUNK = 16384; // points per predict call and batch (bounds the engine's activations)

function getEngine() {
  enginePromise ??= loadEngine().then((e) => (engine = e));
  return enginePromise;
}

/** The backend new set-ups use: 'cpu' (the default) or 'webgpu' (the page's switch). */
let backend = 'cpu';
let gpuPromise = null; // the webgpu engine (one per page: loaded once, kept)

/**
 * The engine of the current backend. 'cpu-async' (a test hook: the page's `?backendTest=cpu-async`)
 * is the cpu engine through the GPU backend's code path (asynchronous reads, Learner.fit over
 * the epochs left), so that path is tested where the webgpu engine cannot train yet.
 */
function currentEngine() {
  if (backend === 'webgpu') return gpuPromise;
  if (backend === 'cpu-async') return getEngine().then((e) => Object.assign(new Engine(e.kiln), { gpu: true }));
  return getEngine();
}

/**
 * The backend switch: loads the webgpu engine (once) or goes back to the cpu one; posts
 * `backend` with the engine's info, or the cpu one's with the error when the GPU failed (the
 * page then runs on the CPU and says why). The page sends a new set-up after it.
 */
async function switchBackend(want) {
  stopCurrent();
  if (want === 'webgpu') {
    try {
      gpuPromise ??= loadGpuEngine();
      const gpu = await gpuPromise;
      backend = 'webgpu';
      post({ type: 'backend', backend, info: gpu.info() });
      return;
    } catch (e) {
      gpuPromise = null;
      backend = 'cpu';
      post({ type: 'backend', backend, info: (await getEngine()).info(), error: errorInfo(e) });
      return;
    }
  }
  backend = want === 'cpu-async' ? want : 'cpu';
  post({ type: 'backend', backend, info: (await getEngine()).info() });
}

/**
 * A GPU error that ends the GPU backend (KilnError `Device`: a lost device): the worker goes
 * back to the cpu engine and the page sets up again there, saying why. Returns whether it was one.
 */
function gpuLost(ctx, e) {
  if (!ctx?.gpu || e?.code !== 'Device') return false;
  gpuPromise = null;
  backend = 'cpu';
  if (cur === ctx) stopCurrent();
  getEngine().then((cpu) => post({ type: 'backend', backend: 'cpu', info: cpu.info(), error: errorInfo(e), lost: true }));
  return true;
}

const yieldNow = () =>
  new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });

/** The MNIST loader (gzip chunks, Cache API: mnist-fetch.js), made on the first MNIST set-up. */
function mnistLoader(base) {
  if (!mnist || mnist.base !== base) mnist = new MnistLoader(mnistManifest, base);
  return mnist;
}

/** A Source over a loaded MNIST pair ({dims, data} each: count items), normalised per batch. */
function mnistSource(images, labels, what) {
  if (images.dims[1] !== 28 || images.dims[2] !== 28 || labels.dims[0] !== images.dims[0]) {
    throw new Error(`MNIST: the ${what} images have dims [${images.dims}], the labels [${labels.dims}]`);
  }
  const count = images.dims[0];
  const pixels = images.data;
  const y = Int32Array.from(labels.data);
  return {
    n: count,
    itemSize: 784,
    y,
    pixels,
    fill(out, order, start, c) {
      normaliseInto(out, pixels, start, c, order);
    },
  };
}

/**
 * Loads the chunks of the MNIST subset of the run's set-up (train and mtest images),
 * posting `mnistLoad` messages (bytes downloaded / read from the Cache API; at most every
 * 100 ms, and when done).
 */
async function loadMnist(ctx, base) {
  const { state } = ctx;
  const t0 = performance.now();
  let last = 0;
  let latest = { total: 0, rawTotal: 0, fetched: 0, cached: 0, chunks: 0, cacheNote: '' };
  const send = (p) => {
    latest = p;
    const now = performance.now();
    if (!p.done && now - last < 100) return;
    last = now;
    post({ type: 'mnistLoad', run: ctx.run, ...p, seconds: (now - t0) / 1000 });
  };
  let loaded;
  try {
    loaded = await mnistLoader(base).load(
      [MNIST_FILES.trainImages, MNIST_FILES.trainLabels, MNIST_FILES.testImages, MNIST_FILES.testLabels],
      [state.train, state.train, state.mtest, state.mtest],
      send,
    );
  } catch (e) {
    post({ type: 'mnistLoad', run: ctx.run, ...latest, done: false, failed: true, error: e.message, seconds: (performance.now() - t0) / 1000 });
    throw e;
  }
  const [trainImages, trainLabels, testImages, testLabels] = loaded;
  return { train: mnistSource(trainImages, trainLabels, 'training'), test: mnistSource(testImages, testLabels, 'test') };
}

async function buildData(ctx, mnistBase, csv) {
  const { state } = ctx;
  if (state.data === 'mnist') {
    const { train, test } = await loadMnist(ctx, mnistBase);
    const k = Math.min(MNIST_SAMPLE, test.n);
    const view = {
      kind: 'mnist',
      trainCount: train.n,
      testCount: test.n,
      sampleImages: test.pixels.slice(0, k * 784),
      sampleLabels: test.y.slice(0, k),
    };
    return { data: { train, test, classes: 10 }, view };
  }
  return buildToy(state, csv);
}

/**
 * A toy set as the model sees it: the points (generated from the data seed, or the uploaded
 * CSV's), split, and turned into the chosen input features; the view keeps the raw points.
 */
function buildToy(state, csv) {
  let all;
  if (state.data === 'csv') {
    if (!csv) throw new Error('No CSV points: upload a CSV file of x1, x2, label rows');
    all = { x: csv.x, y: csv.y, n: csv.y.length, numClasses: csv.numClasses, itemShape: [2], task: 'classification' };
  } else {
    all = generateToy({ kind: state.data, n: state.points, noise: state.noise, seed: dataSeedOf(state), classes: state.classes });
  }
  const { train, test } = splitTrainTest(all, state.test, dataSeedOf(state));
  const features = featureNames(state);
  const k = features.length;
  const task = taskOf(state.data);
  const view = {
    kind: 'toy',
    task,
    classes: all.numClasses,
    features,
    classNames: csv && state.data === 'csv' ? csv.classNames : null,
    trainX: train.x,
    trainY: train.y,
    testX: test.x,
    testY: test.y,
    trainCount: train.n,
    testCount: test.n,
  };
  return {
    data: {
      train: floatSource(applyFeatures(train.x, features), train.y, k),
      test: floatSource(applyFeatures(test.x, features), test.y, k),
      classes: all.numClasses,
      task,
    },
    view,
    grid: applyFeatures(boundaryGrid(GRID.size, GRID.lo, GRID.hi), features),
  };
}

/** Stops the current run; frees it, or keeps it for undo (live-worker.js) if `keep`. */
function stopCurrent(keep = false) {
  if (cur) {
    cur.running = false;
    cur.abort?.abort();
    if (cur.gpu) {
      keep = false; // Undo keeps runs of the cpu backend only
      // A fit still running (aborted: it ends at its next call boundary) holds the learner.
      const { session, gpuDataset, fitting } = cur;
      if (fitting) {
        fitting.catch(() => {}).finally(() => {
          session?.dispose();
          gpuDataset?.dispose?.();
        });
        cur = null;
        return;
      }
    }
    cur.gpuDataset?.dispose?.();
    if (keep && cur.trainer) keepForUndo(cur);
    else cur.session?.dispose();
    cur = null;
  }
}

async function setup(msg) {
  stopCurrent(msg.keep === true);
  const ctx = { run: msg.run, state: msg.state, running: false };
  cur = ctx;
  post({ type: 'status', run: ctx.run, status: 'loading', message: msg.state.data === 'mnist' ? 'Loading MNIST…' : 'Building…' });
  try {
    const eng = await currentEngine();
    ctx.gpu = eng.gpu;
    const built = await buildData(ctx, msg.mnistBase, msg.csv);
    if (cur !== ctx) return; // superseded while loading
    try {
      ctx.session = eng.createSession(msg.spec, msg.state, taskOf(msg.state.data));
    } catch (e) {
      // a model the webgpu backend cannot build (KilnError `State`): offer the CPU.
      if (ctx.gpu && e?.code === 'State') {
        post({ type: 'gpuBlocked', run: ctx.run, message: `This model cannot run on the GPU backend: ${String(e.message).split(' (it has')[0]}. Switch to CPU to build and train it.` });
        post({ type: 'status', run: ctx.run, status: 'error', message: 'This model needs the CPU backend (see above).' });
        return;
      }
      throw e;
    }
    if (msg.weights) ctx.session.load(msg.weights);
    else if (msg.idbWeights) {
      // The link's weights=idb:<name>: on any failure the model keeps its random weights.
      const notice = await loadInitialWeights(eng, ctx.session, msg.idbWeights);
      if (cur !== ctx) {
        ctx.session.dispose(); // superseded while reading IndexedDB
        return;
      }
      post({ type: 'weights', run: ctx.run, name: msg.idbWeights, ...notice });
    }
    ctx.grid = built.grid;
    ctx.view = built.view;
    if (built.grid) ctx.insideGrid = featuresOf(msg.state, boundaryGrid(INSIDE_GRID, GRID.lo, GRID.hi));
    ctx.trainer = new Trainer(ctx.session, built.data, msg.state);
    post({
      type: 'ready',
      run: ctx.run,
      numParams: ctx.session.numParams,
      summary: ctx.session.summary(),
      view: built.view,
    });
    if (ctx.session.trainBlocked) post({ type: 'gpuBlocked', run: ctx.run, message: `Training cannot run on the GPU backend here: ${ctx.session.trainBlocked}. The GPU computes this model's predictions; train on the CPU.` });
    await evaluateAny(ctx);
    if (cur !== ctx) return;
    post({ type: 'status', run: ctx.run, status: 'idle', message: ctx.session.trainBlocked ? 'GPU ready: predictions only; train on the CPU.' : undefined });
  } catch (e) {
    if (gpuLost(ctx, e)) return;
    if (cur === ctx) {
      post({ type: 'error', run: ctx.run, error: errorInfo(e) });
      post({ type: 'status', run: ctx.run, status: 'error' });
    }
  }
}

/** Milliseconds a decision-boundary evaluation may take: while training, and otherwise. */
const boundaryBudget = (ctx) => (ctx.running ? 25 : 1000);

/** Predicts a grid of `k` inputs per point in chunks, into one Float32Array [points, outputs]. */
function predictGrid(session, grid, k) {
  const n = grid.length / k;
  let out = null;
  for (let start = 0; start < n; start += BOUNDARY_CHUNK) {
    const count = Math.min(BOUNDARY_CHUNK, n - start);
    const p = session.predict(grid.subarray(k * start, k * (start + count)), BOUNDARY_CHUNK);
    out ??= new Float32Array(n * (p.length / count));
    out.set(p, start * (p.length / count)); // copied: p may be a view the engine reuses
  }
  return out;
}

/**
 * The decision boundary at the canvas's device-pixel resolution, or (if that would take
 * more than boundaryBudget by the measured cost per point) the largest grid that fits,
 * at least GRID.size. The cost per point is measured on every evaluation; one measured on
 * a small grid overstates it (the per-call overhead), so up to two larger grids follow at
 * once while the time spent stays within the budget. Returns {probs, size}.
 */
function boundary(ctx) {
  const features = ctx.view.features; // the model's inputs: the chosen features of each point
  const gridOf = (size) => {
    const key = `${size}|${features.join(',')}`;
    if (!gridCache.has(key)) {
      if (gridCache.size > 4) gridCache.clear();
      gridCache.set(key, applyFeatures(boundaryGrid(size, GRID.lo, GRID.hi), features));
    }
    return gridCache.get(key);
  };
  const t0 = performance.now();
  const measure = (size) => {
    const t = performance.now();
    const probs = predictGrid(ctx.session, gridOf(size), features.length);
    ctx.pointCost = Math.max(1e-6, (performance.now() - t) / (size * size));
    return { probs, size };
  };
  const budget = boundaryBudget(ctx);
  // ms <= 0 (the budget spent): the smallest grid, never NaN (a NaN size would stick in pointCost).
  const fits = (ms) => Math.max(GRID.size, Math.min(boundaryPixels, Math.floor(Math.sqrt(Math.max(0, ms) / ctx.pointCost)) || 0));
  let best = measure(ctx.pointCost === undefined ? GRID.size : fits(budget));
  for (let round = 0; round < 2 && best.size < boundaryPixels; round++) {
    const left = budget - (performance.now() - t0);
    if (left <= 0) break;
    const next = fits(left); // what the time left allows
    if (!(next >= best.size * 1.25)) break;
    best = measure(next);
  }
  return best;
}

/** Evaluates the test part (and the heat map or the digits), posts `eval`; returns the scores. */
function evaluate(ctx) {
  const t0 = performance.now();
  const { trainer } = ctx;
  const r = trainer.evaluate();
  const msg = {
    type: 'eval',
    run: ctx.run,
    step: trainer.step,
    epoch: trainer.progress,
    loss: r.loss,
    accuracy: r.accuracy,
    confusion: r.confusion,
  };
  if (ctx.grid) {
    const b = boundary(ctx);
    msg.boundary = b.probs;
    msg.boundarySize = b.size;
    ctx.boundarySize = b.size;
  } else {
    msg.samplePredicted = r.predicted.slice(0, ctx.view.sampleLabels.length);
  }
  post(msg); // copied (structured clone): the arrays may be views the engine reuses
  postInside(ctx);
  ctx.evalCost = performance.now() - t0;
  ctx.lastEval = performance.now();
  return r;
}

/**
 * evaluate() on either backend: on the cpu engine evaluate() itself (synchronous, as
 * before); on the webgpu engine evaluateGpu (asynchronous reads). Resolves with the scores.
 */
function evaluateAny(ctx) {
  return ctx.gpu ? evaluateGpu(ctx) : evaluate(ctx);
}

/**
 * evaluate() on the GPU backend: the test part's predictions and the decision boundary (or
 * the digits) through Session.predictAsync (`await tensor.data()`); the boundary at the
 * canvas's device-pixel size when not training, at GRID.size while training. Posts `eval`
 * unless the run was replaced meanwhile; then the "Look inside" views (postInsideGpu).
 */
async function evaluateGpu(ctx) {
  const t0 = performance.now();
  const { trainer, session } = ctx;
  const test = trainer.data.test;
  trainer.testX ??= materialise(test);
  const probs = await session.predictAsync(trainer.testX, test.n);
  const r = trainer.data.task === 'regression' ? scoreRegression(probs, test.y) : scorePredictions(probs, test.y, trainer.data.classes);
  const msg = { type: 'eval', run: ctx.run, step: trainer.step, epoch: trainer.progress, loss: r.loss, accuracy: r.accuracy, confusion: r.confusion };
  if (ctx.grid) {
    const size = ctx.running ? GRID.size : boundaryPixels;
    const features = ctx.view.features;
    const key = `${size}|${features.join(',')}`;
    if (!gridCache.has(key)) {
      if (gridCache.size > 4) gridCache.clear();
      gridCache.set(key, applyFeatures(boundaryGrid(size, GRID.lo, GRID.hi), features));
    }
    msg.boundary = await session.predictAsync(gridCache.get(key), size * size, BOUNDARY_CHUNK);
    msg.boundarySize = size;
    ctx.boundarySize = size;
  } else {
    msg.samplePredicted = r.predicted.slice(0, ctx.view.sampleLabels.length);
  }
  if (cur !== ctx) return r;
  post(msg);
  await postInsideGpu(ctx);
  ctx.evalCost = performance.now() - t0;
  ctx.lastEval = performance.now();
  return r;
}

/**
 * postInside on the GPU backend: the layers' outputs over the inside grid and the parameters
 * read with `await tensor.data()` first, then the same probes (inside-probe.js) on those copies.
 */
async function postInsideGpu(ctx) {
  if (!insideOn) return;
  const { session, trainer } = ctx;
  const msg = { type: 'inside', run: ctx.run, step: trainer.step, epoch: trainer.progress };
  try {
    const layers = session.config().layers;
    const params = await session.parametersAsync();
    const pick = (want) => Object.fromEntries(Object.entries(params).filter(([k]) => want(k)));
    if (ctx.insideGrid) {
      const n = INSIDE_GRID * INSIDE_GRID;
      const outs = await session.layerOutputsAsync(ctx.insideGrid, n);
      const read = { layerOutputs: () => outs, parameters: pick };
      msg.toy = toyProbe(read, layers, ctx.insideGrid, INSIDE_GRID, inputNames(ctx.state, ctx.insideGrid.length / n));
    } else {
      msg.weights = weightProbe({ parameters: pick }, layers);
    }
  } catch (e) {
    msg.error = errorInfo(e);
  }
  if (cur === ctx) post(msg);
}

/**
 * The training loop on the GPU backend: the Learner's built-in loss path, `await
 * learner.fit(dataset, {epochs, ...})` over the epochs left (Session.fit), with the page's
 * progress from onBatchEnd (train metrics every 100 ms; an evaluation every 250 ms on toy
 * data, every second or more on MNIST) and a full evaluation at each epoch's end. Pause aborts
 * fit (its signal) at the next call boundary; the model keeps what it learned, and the next
 * Train starts a new epoch.
 */
async function trainLoopGpu(ctx) {
  if (ctx.running || !ctx.trainer || ctx.trainer.done) return;
  const { trainer, session } = ctx;
  if (session.trainBlocked) {
    post({ type: 'gpuBlocked', run: ctx.run, message: `Training cannot run on the GPU backend here: ${session.trainBlocked}. Switch to CPU to train.` });
    return;
  }
  ctx.running = true;
  post({ type: 'status', run: ctx.run, status: 'training' });
  // A paused fit ends at its next call boundary: the learner is busy until then.
  await ctx.fitting?.catch(() => {});
  if (!ctx.running || cur !== ctx) return;
  const abort = new AbortController();
  ctx.abort = abort;
  const train = trainer.data.train;
  let lastReport = performance.now();
  ctx.lastEval = performance.now();
  const evalEvery = () => (ctx.grid ? 250 : Math.max(1000, 4 * (ctx.evalCost ?? 0)));
  let finished = false; // the epochs are trained: fit is stopped by its signal
  try {
    ctx.gpuDataset ??= session.dataset(materialise(train), train.y, train.itemSize, trainer.data.classes);
    // One fit() over the epochs left (its own shuffle each epoch); again after a pause, or
    // when "Train forever" is ticked after it started.
    while (ctx.running && cur === ctx && !trainer.done) {
      let before = 0; // batches of the current epoch already counted
      const batches = Math.ceil(train.n / trainer.batch);
      trainer.pos = 0;
      ctx.fitting = session.fit(ctx.gpuDataset, {
        epochs: trainer.forever ? 1_000_000 : trainer.epochs - trainer.epoch,
        batchSize: trainer.batch,
        signal: abort.signal,
        onBatchEnd: async (log) => {
          const items = Math.min(train.n, log.batch * trainer.batch) - Math.min(train.n, before * trainer.batch);
          trainer.step += log.batch - before;
          before = log.batch;
          trainer.pos = Math.min(train.n, log.batch * trainer.batch); // at the epoch's end: progress = epoch + 1
          trainer.window.loss += log.loss * items;
          trainer.window.correct += log.accuracy * items;
          trainer.window.items += items;
          const now = performance.now();
          if (now - lastReport >= 100 || log.batch === batches) {
            const w = trainer.takeWindow();
            if (w) post({ type: 'progress', run: ctx.run, step: trainer.step, epoch: trainer.progress, lr: session.learningRate, ...w, itemsPerSecond: log.itemsPerSecond });
            lastReport = now;
          }
          if (log.batch < batches && now - ctx.lastEval >= evalEvery()) await evaluateGpu(ctx);
        },
        onEpochEnd: async () => {
          trainer.epoch++;
          trainer.pos = 0;
          before = 0;
          await evaluateGpu(ctx);
          if (trainer.done) {
            finished = true;
            abort.abort();
          }
        },
      });
      await ctx.fitting;
    }
    finished ||= trainer.done;
  } catch (e) {
    if (!(abort.signal.aborted && finished)) {
      if (abort.signal.aborted) return; // paused (the pause message posted the status)
      if (gpuLost(ctx, e)) return;
      if (cur === ctx) {
        ctx.running = false;
        // Something of the training path the webgpu engine lacks (e.g. kiln.data datasets):
        // said as such, with the CPU offered, rather than as an error of the run.
        if (e?.code === 'State') post({ type: 'gpuBlocked', run: ctx.run, message: `Training stopped on the GPU backend: ${String(e.message).split(' (it has')[0]}. Switch to CPU to train.` });
        else post({ type: 'error', run: ctx.run, error: errorInfo(e) });
        post({ type: 'status', run: ctx.run, status: trainer.step > 0 ? 'paused' : 'idle' });
      }
      return;
    }
  } finally {
    if (ctx.abort === abort) ctx.abort = null;
  }
  if (cur === ctx && finished) {
    ctx.running = false;
    if (ctx.grid && ctx.boundarySize < boundaryPixels) await evaluateGpu(ctx); // the final picture at full resolution
    post({ type: 'status', run: ctx.run, status: 'done' });
  }
}

/** The "Look inside" numbers after an evaluation (inside-probe.js), while the page shows them. */
function postInside(ctx) {
  if (!insideOn) return;
  const msg = { type: 'inside', run: ctx.run, step: ctx.trainer.step, epoch: ctx.trainer.progress };
  try {
    if (ctx.insideGrid) {
      const k = ctx.insideGrid.length / (INSIDE_GRID * INSIDE_GRID);
      msg.toy = toyProbe(ctx.session, ctx.session.config().layers, ctx.insideGrid, INSIDE_GRID, inputNames(ctx.state, k));
    } else {
      msg.weights = weightProbe(ctx.session, ctx.session.config().layers);
    }
  } catch (e) {
    msg.error = errorInfo(e);
  }
  post(msg);
}

function report(ctx) {
  const w = ctx.trainer.takeWindow();
  if (!w) return;
  post({ type: 'progress', run: ctx.run, step: ctx.trainer.step, epoch: ctx.trainer.progress, lr: ctx.session.learningRate, ...w });
}

/** The test loss and accuracy at an epoch's end (the charts' point; no heat map). */
function epochEval(ctx) {
  const r = ctx.trainer.evaluate();
  post({ type: 'epochEval', run: ctx.run, step: ctx.trainer.step, epoch: ctx.trainer.progress, loss: r.loss, accuracy: r.accuracy });
}

/**
 * Whether an epoch's end gets test metrics: always on toy data (at most 2,000 points, a
 * forward pass each), on MNIST unless they would take more than a quarter of the time (a
 * big test part and short epochs: then the train curve's point at the epoch's end and the
 * test point every evalEvery()).
 */
function testAtEpochEnd(ctx, now) {
  return ctx.grid ? true : now - ctx.lastEval >= 3 * (ctx.evalCost ?? 0);
}

function finishIfDone(ctx) {
  if (ctx.trainer.done) {
    ctx.running = false;
    if (ctx.grid && ctx.boundarySize < boundaryPixels) evaluate(ctx); // the final picture at full resolution
    post({ type: 'status', run: ctx.run, status: 'done' });
    return true;
  }
  return false;
}

async function trainLoop(ctx) {
  if (ctx.running || !ctx.trainer || ctx.trainer.done) return;
  ctx.running = true;
  post({ type: 'status', run: ctx.run, status: 'training' });
  const evalEvery = () => (ctx.grid ? 250 : Math.max(1000, 4 * (ctx.evalCost ?? 0)));
  let lastReport = performance.now();
  ctx.lastEval = performance.now();
  try {
    while (ctx.running && cur === ctx) {
      const end = performance.now() + SLICE_MS;
      let epochEnded = false;
      while (performance.now() < end && !ctx.trainer.done) {
        if (ctx.trainer.trainStep().epochEnded) {
          epochEnded = true;
          break;
        }
      }
      // The charts get a point at every epoch's end and at least every 250 ms, whichever
      // comes first (a toy epoch can take a millisecond: short runs still draw a curve):
      // train metrics every 100 ms and at each epoch's end; a full evaluation (test
      // metrics, heat map or digits) every evalEvery() and when training ends, and test
      // metrics at the other epochs' ends (toy: alone, epochEval; MNIST: a full one)
      // unless that would take more than a quarter of the time (testAtEpochEnd).
      const now = performance.now();
      const done = ctx.trainer.done;
      if (done || epochEnded || now - lastReport >= 100) {
        report(ctx);
        lastReport = now;
      }
      if (done || now - ctx.lastEval >= evalEvery()) evaluate(ctx);
      else if (epochEnded && testAtEpochEnd(ctx, now)) {
        if (ctx.grid) epochEval(ctx);
        else evaluate(ctx);
      }
      if (finishIfDone(ctx)) break;
      await yieldNow();
    }
  } catch (e) {
    if (cur === ctx) {
      ctx.running = false;
      post({ type: 'error', run: ctx.run, error: errorInfo(e) });
      post({ type: 'status', run: ctx.run, status: 'paused' });
    }
  }
}

function stepOnce(ctx) {
  if (ctx.running || !ctx.trainer || ctx.trainer.done) return;
  try {
    ctx.trainer.trainStep();
    report(ctx);
    evaluate(ctx);
    if (!finishIfDone(ctx)) post({ type: 'status', run: ctx.run, status: 'paused' });
  } catch (e) {
    post({ type: 'error', run: ctx.run, error: errorInfo(e) });
  }
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  const ctx = cur && msg.run === cur.run ? cur : null;
  switch (msg.type) {
    case 'setup':
      await setup(msg);
      break;
    case 'backend':
      await switchBackend(msg.want);
      break;
    case 'train':
      if (ctx?.gpu) trainLoopGpu(ctx);
      else if (ctx) trainLoop(ctx);
      break;
    case 'pause':
      if (ctx?.running && ctx.gpu) {
        ctx.running = false;
        ctx.abort?.abort();
        post({ type: 'status', run: ctx.run, status: 'paused' });
        break;
      }
      if (ctx?.running) {
        ctx.running = false;
        report(ctx);
        evaluate(ctx);
        post({ type: 'status', run: ctx.run, status: 'paused' });
      }
      break;
    case 'step':
      if (ctx?.gpu) post({ type: 'gpuBlocked', run: ctx.run, message: 'Step (one batch) runs on the CPU backend; on the GPU, Train runs whole epochs with the Learner\'s fit().' });
      else if (ctx) stepOnce(ctx);
      break;
    case 'predict':
      try {
        if (!cur?.session) throw new Error('no model yet');
        const probs = cur.gpu ? await cur.session.predictAsync(msg.x, msg.x.length / (cur.trainer?.data.train.itemSize ?? 784)) : cur.session.predict(msg.x);
        post({ type: 'prediction', id: msg.id, probs });
      } catch (e) {
        post({ type: 'prediction', id: msg.id, error: errorInfo(e) });
      }
      break;
    case 'loadWeights':
      // A weights-only file for the current layers (Load model… or a drop on the page).
      if (!ctx?.session) break;
      try {
        if (ctx.running) {
          ctx.running = false;
          post({ type: 'status', run: ctx.run, status: 'paused' });
        }
        const n = ctx.session.loadWeights(msg.bytes, msg.format);
        await evaluateAny(ctx);
        post({ type: 'weights', run: ctx.run, name: msg.name, status: 'loaded', kind: 'info', text: `Loaded ${msg.name} (${n} tensors) into the current layers.` });
      } catch (e) {
        const info = errorInfo(e);
        post({
          type: 'weights',
          run: ctx.run,
          name: msg.name,
          status: info.code === 'Format' ? 'error' : 'mismatch',
          kind: 'error',
          text: `Could not load ${msg.name}: ${info.code !== 'Internal' ? `[${info.code}] ` : ''}${info.message.replace(/\.?\s*$/, '.')} The model is unchanged.`,
        });
      }
      break;
    case 'save':
      try {
        if (!ctx?.session) throw new Error('no model to save yet');
        const weights = ctx.session.save();
        post({ type: 'saved', run: ctx.run, weights, config: ctx.session.config() });
      } catch (e) {
        post({ type: 'error', run: msg.run, error: errorInfo(e) });
      }
      break;
    case 'inside':
      insideOn = Boolean(msg.on);
      if (insideOn && cur?.trainer && !cur.running) {
        if (cur.gpu) await postInsideGpu(cur);
        else postInside(cur);
      }
      break;
    case 'inspect':
      // Every layer's activations and the saliency of one item (the drawn digit).
      try {
        if (!cur?.session) throw new Error('no model yet');
        if (cur.gpu) throw Object.assign(new Error('the drawn digit\'s activations and saliency are computed on the CPU backend (switch the backend to CPU to see them)'), { code: 'State' });
        post({ type: 'inspected', id: msg.id, run: cur.run, ...inspectProbe(cur.session, cur.session.config().layers, msg.x) });
      } catch (e) {
        post({ type: 'inspected', id: msg.id, error: errorInfo(e) });
      }
      break;
    case 'regenerate':
      // New points from a new data seed (the Regenerate button): same model, optimizer
      // state and step count; the next steps train on the new points.
      if (!ctx?.trainer || !ctx.grid) break;
      try {
        const built = buildToy(msg.state, null);
        if (ctx.gpu && ctx.running) {
          // fit() trains on the dataset it was given: paused, the next Train takes the new points.
          ctx.running = false;
          ctx.abort?.abort();
          await ctx.fitting?.catch(() => {});
          post({ type: 'status', run: ctx.run, status: 'paused' });
        }
        ctx.trainer.setData(built.data);
        ctx.state = msg.state;
        ctx.view = built.view;
        ctx.grid = built.grid;
        ctx.gpuDataset?.dispose?.();
        ctx.gpuDataset = null;
        post({ type: 'regenerated', run: ctx.run, view: built.view });
        await evaluateAny(ctx);
      } catch (e) {
        post({ type: 'error', run: ctx.run, error: errorInfo(e) });
      }
      break;
    case 'retune':
      // On the GPU backend a change of training settings starts a new model (the page's answer to an error).
      if (ctx?.gpu) post({ type: 'retuned', run: ctx.run, error: { message: 'on the GPU backend new training settings need a new model', code: 'State' } });
      else if (ctx) retune(ctx, msg, post);
      break;
    case 'forever':
      if (ctx?.trainer) {
        ctx.trainer.forever = msg.on === true;
        if (!ctx.running) post({ type: 'status', run: ctx.run, status: restingStatus(ctx) });
      }
      break;
    case 'undo': {
      // Brings back the run kept when the data or the layers changed, under the new id.
      // (The page may not have replaced it yet: an invalid model was never sent.)
      const kept = cur?.run === msg.from && cur.trainer ? cur : takeKept(msg.from);
      if (!kept) {
        post({ type: 'restored', run: msg.run, error: { message: 'the previous model is no longer kept', code: 'State' } });
        break;
      }
      if (kept !== cur) stopCurrent(msg.keep === true); // the model left, kept for a second Undo
      kept.run = msg.run;
      cur = kept;
      post({ type: 'ready', run: kept.run, numParams: kept.session.numParams, summary: kept.session.summary(), view: kept.view });
      const test = evaluate(kept);
      post({ type: 'restored', run: kept.run, step: kept.trainer.step, epoch: kept.trainer.progress, lr: kept.session.learningRate, testLoss: test.loss, testAccuracy: test.accuracy });
      post({ type: 'status', run: kept.run, status: restingStatus(kept) });
      break;
    }
    case 'export':
      // The Export menu (export.js): weights and the page's outputs on the first test items.
      try {
        if (!ctx?.session || !ctx.trainer) throw new Error('no model to export yet');
        if (ctx.gpu) throw Object.assign(new Error('Export runs on the CPU backend: switch the backend to CPU, train, then export'), { code: 'State' });
        const snap = exportSnapshot(ctx.session, ctx.trainer, ctx.state.data === 'mnist');
        post({ type: 'exported', run: ctx.run, id: msg.id, ...snap });
      } catch (e) {
        post({ type: 'exported', run: msg.run, id: msg.id, error: errorInfo(e) });
      }
      break;
    case 'resolution':
      // The page's canvas changed size: a new picture now unless training sends one soon.
      boundaryPixels = Math.max(GRID.size, Math.min(1200, Math.round(msg.size) || GRID.size));
      if (cur?.trainer && cur.grid && !cur.running) {
        if (cur.gpu) await evaluateGpu(cur).catch(() => {}); // a run replaced meanwhile
        else evaluate(cur);
      }
      break;
    case 'raceStart':
      if (backend === 'webgpu') post({ type: 'race', race: msg.race, kind: 'error', message: 'Race runs on the CPU backend: switch the backend to CPU to race' });
      else race.start(msg);
      break;
    case 'raceStop':
      race.stop(msg.race);
      break;
    default:
      break;
  }
};

const race = new RaceRunner({ getEngine, buildData, post });

getEngine().then(
  (e) => post({ type: 'hello', info: e.info() }),
  (e) => post({ type: 'fatal', error: errorInfo(e) }),
);
