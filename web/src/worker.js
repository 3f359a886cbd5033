// The playground's Web Worker: owns the engine (kiln-dl through engine.js), the data and
// the training loop, so the page stays responsive. The loop trains in slices of ~30 ms and
// yields between them, so a prediction request, a pause or a new set-up is handled at once.
//
// Messages in:  setup {run, state, spec, mnistBase, weights?, idbWeights?}, train {run},
//               pause {run}, step {run}, predict {id, x}, save {run}, export {run, id}
// Messages out: hello {info} | fatal {error}, status {run, status, message?},
//               ready {run, numParams, summary, view}, progress {run, ...}, eval {run, ...},
//               prediction {id, probs | error}, saved {run, weights, config}, error {run, error},
//               weights {run, name, status, kind, text} (idbWeights: loaded or why not),
//               mnistLoad {run, total, rawTotal, fetched, cached, done, cacheNote, chunks, seconds,
//               failed?, error?}
//               (MNIST's gzip chunks: compressed bytes to load, downloaded, read from the Cache API),
//               exported {run, id, weights, check, step, epoch | error} (export/snapshot.js)
import { loadEngine, errorInfo } from './engine.js';
import { generateToy, splitTrainTest, boundaryGrid, GRID } from './datasets.js';
import { dataSeedOf } from './state.js';
import { MNIST_FILES, normaliseInto } from './mnist.js';
import { MnistLoader } from './mnist-fetch.js';
import mnistManifest from 'virtual:kiln-mnist';
import { Trainer, floatSource, scorePredictions } from './trainer.js';
import { loadInitialWeights } from './weights.js';
import { exportSnapshot } from './export/snapshot.js';

const MNIST_SAMPLE = 60; // test digits shown in the grid
const SLICE_MS = 30;

const post = (msg) => self.postMessage(msg);

let engine = null;
let enginePromise = null;
let cur = null; // the current run: {run, state, session, trainer, running, ...}
let mnist = null; // the MnistLoader (keeps the loaded chunks between set-ups)

function getEngine() {
  enginePromise ??= loadEngine().then((e) => (engine = e));
  return enginePromise;
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

async function buildData(ctx, mnistBase) {
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
  const all = generateToy({ kind: state.data, n: state.points, noise: state.noise, seed: dataSeedOf(state), classes: state.classes });
  const { train, test } = splitTrainTest(all, state.test, state.seed);
  const view = {
    kind: 'toy',
    classes: all.numClasses,
    trainX: train.x,
    trainY: train.y,
    testX: test.x,
    testY: test.y,
    trainCount: train.n,
    testCount: test.n,
  };
  return {
    data: { train: floatSource(train.x, train.y, 2), test: floatSource(test.x, test.y, 2), classes: all.numClasses },
    view,
    grid: boundaryGrid(GRID.size, GRID.lo, GRID.hi),
  };
}

function stopCurrent() {
  if (cur) {
    cur.running = false;
    cur.session?.dispose();
    cur = null;
  }
}

async function setup(msg) {
  stopCurrent();
  const ctx = { run: msg.run, state: msg.state, running: false };
  cur = ctx;
  post({ type: 'status', run: ctx.run, status: 'loading', message: msg.state.data === 'mnist' ? 'Loading MNIST…' : 'Building…' });
  try {
    await getEngine();
    const built = await buildData(ctx, msg.mnistBase);
    if (cur !== ctx) return; // superseded while loading
    ctx.session = engine.createSession(msg.spec, msg.state);
    if (msg.weights) ctx.session.load(msg.weights);
    else if (msg.idbWeights) {
      // The link's weights=idb:<name>: on any failure the model keeps its random weights.
      const notice = await loadInitialWeights(engine, ctx.session, msg.idbWeights);
      if (cur !== ctx) {
        ctx.session.dispose(); // superseded while reading IndexedDB
        return;
      }
      post({ type: 'weights', run: ctx.run, name: msg.idbWeights, ...notice });
    }
    ctx.grid = built.grid;
    ctx.view = built.view;
    ctx.trainer = new Trainer(ctx.session, built.data, msg.state);
    post({
      type: 'ready',
      run: ctx.run,
      numParams: ctx.session.numParams,
      summary: ctx.session.summary(),
      view: built.view,
    });
    evaluate(ctx);
    post({ type: 'status', run: ctx.run, status: 'idle' });
  } catch (e) {
    if (cur === ctx) {
      post({ type: 'error', run: ctx.run, error: errorInfo(e) });
      post({ type: 'status', run: ctx.run, status: 'error' });
    }
  }
}

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
    msg.boundary = ctx.session.predict(ctx.grid);
  } else {
    msg.samplePredicted = r.predicted.slice(0, ctx.view.sampleLabels.length);
  }
  post(msg); // copied (structured clone): the arrays may be views the engine reuses
  ctx.evalCost = performance.now() - t0;
  ctx.lastEval = performance.now();
}

function report(ctx) {
  const w = ctx.trainer.takeWindow();
  if (!w) return;
  post({ type: 'progress', run: ctx.run, step: ctx.trainer.step, epoch: ctx.trainer.progress, ...w });
}

function finishIfDone(ctx) {
  if (ctx.trainer.done) {
    ctx.running = false;
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
      // Messages at a bounded rate whatever the speed (a toy epoch can take a millisecond):
      // train metrics every 100 ms, an evaluation every evalEvery() and at an epoch's end
      // (at most every 250 ms), and both when training ends.
      const now = performance.now();
      const done = ctx.trainer.done;
      if (done || now - lastReport >= 100 || (epochEnded && now - lastReport >= 50)) {
        report(ctx);
        lastReport = now;
      }
      if (done || now - ctx.lastEval >= evalEvery() || (epochEnded && now - ctx.lastEval >= 250)) evaluate(ctx);
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
    case 'train':
      if (ctx) trainLoop(ctx);
      break;
    case 'pause':
      if (ctx?.running) {
        ctx.running = false;
        report(ctx);
        evaluate(ctx);
        post({ type: 'status', run: ctx.run, status: 'paused' });
      }
      break;
    case 'step':
      if (ctx) stepOnce(ctx);
      break;
    case 'predict':
      try {
        if (!cur?.session) throw new Error('no model yet');
        const probs = cur.session.predict(msg.x);
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
        evaluate(ctx);
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
    case 'export':
      // The Export menu (export.js): weights and the page's outputs on the first test items.
      try {
        if (!ctx?.session || !ctx.trainer) throw new Error('no model to export yet');
        const snap = exportSnapshot(ctx.session, ctx.trainer, ctx.state.data === 'mnist');
        post({ type: 'exported', run: ctx.run, id: msg.id, ...snap });
      } catch (e) {
        post({ type: 'exported', run: msg.run, id: msg.id, error: errorInfo(e) });
      }
      break;
    default:
      break;
  }
};

getEngine().then(
  (e) => post({ type: 'hello', info: e.info() }),
  (e) => post({ type: 'fatal', error: errorInfo(e) }),
);
