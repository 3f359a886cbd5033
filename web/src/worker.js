// The playground's Web Worker: owns the engine (kiln-dl through engine.js), the data and
// the training loop, so the page stays responsive. The loop trains in slices of ~30 ms and
// yields between them, so a prediction request, a pause or a new set-up is handled at once.
//
// Messages in:  setup {run, state, spec, mnistBase, weights?, idbWeights?}, train {run},
//               pause {run}, step {run}, predict {id, x}, save {run},
//               resolution {size} (the decision-boundary canvas's width in device pixels),
//               raceStart / raceStop (race-worker.js: two set-ups side by side; out: race {...})
// Messages out: hello {info} | fatal {error}, status {run, status, message?},
//               ready {run, numParams, summary, view}, progress {run, ...}, eval {run, ...},
//               prediction {id, probs | error}, saved {run, weights, config}, error {run, error},
//               weights {run, name, status, kind, text} (idbWeights: loaded or why not)
// An eval of toy data holds `boundary` (class probabilities over a size x size grid of
// the plane) and `boundarySize`: the canvas's device-pixel size when the model's cost
// allows (boundaryBudget), else the largest grid that does (the page smooths it up).
import { loadEngine, errorInfo } from './engine.js';
import { generateToy, splitTrainTest, boundaryGrid, GRID } from './datasets.js';
import { MNIST_FILES, parseIdx, normaliseInto } from './mnist.js';
import { Trainer, floatSource, scorePredictions } from './trainer.js';
import { loadInitialWeights } from './weights.js';
import { RaceRunner } from './race-worker.js';

const MNIST_SAMPLE = 60; // test digits shown in the grid
const SLICE_MS = 30;

const post = (msg) => self.postMessage(msg);

let engine = null;
let enginePromise = null;
let cur = null; // the current run: {run, state, session, trainer, running, ...}
let boundaryPixels = GRID.size; // the page's canvas width in device pixels (resolution)
const gridCache = new Map(); // size -> boundaryGrid(size)
const BOUNDARY_CHUNK = 16384; // points per predict call and batch (bounds the engine's activations)
const mnistCache = new Map(); // url -> Promise<Uint8Array>

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

async function fetchBytes(url) {
  if (!mnistCache.has(url)) {
    mnistCache.set(
      url,
      fetch(url).then(async (r) => {
        if (!r.ok) throw new Error(`MNIST: ${url} answered ${r.status} ${r.statusText}`);
        return new Uint8Array(await r.arrayBuffer());
      }),
    );
  }
  try {
    return await mnistCache.get(url);
  } catch (e) {
    mnistCache.delete(url);
    throw e;
  }
}

/** A Source over the first `n` images of an MNIST IDX pair, normalised per batch. */
async function mnistSource(base, imagesFile, labelsFile, n) {
  const [imgBytes, lblBytes] = await Promise.all([fetchBytes(base + imagesFile), fetchBytes(base + labelsFile)]);
  const images = parseIdx(imgBytes, 3);
  const labels = parseIdx(lblBytes, 1);
  if (images.dims[1] !== 28 || images.dims[2] !== 28 || labels.dims[0] !== images.dims[0]) {
    throw new Error(`MNIST: ${imagesFile} has dims [${images.dims}], ${labelsFile} [${labels.dims}]`);
  }
  const count = Math.min(n, images.dims[0]);
  const pixels = images.data.subarray(0, count * 784);
  const y = Int32Array.from(labels.data.subarray(0, count));
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

async function buildData(state, mnistBase) {
  if (state.data === 'mnist') {
    const [train, test] = await Promise.all([
      mnistSource(mnistBase, MNIST_FILES.trainImages, MNIST_FILES.trainLabels, state.train),
      mnistSource(mnistBase, MNIST_FILES.testImages, MNIST_FILES.testLabels, state.mtest),
    ]);
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
  const all = generateToy({ kind: state.data, n: state.points, noise: state.noise, seed: state.seed, classes: state.classes });
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
    const built = await buildData(msg.state, msg.mnistBase);
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

/** Milliseconds a decision-boundary evaluation may take: while training, and otherwise. */
const boundaryBudget = (ctx) => (ctx.running ? 25 : 1000);

/** Predicts a grid in chunks, into one Float32Array [points, classes]. */
function predictGrid(session, grid) {
  const n = grid.length / 2;
  let out = null;
  for (let start = 0; start < n; start += BOUNDARY_CHUNK) {
    const count = Math.min(BOUNDARY_CHUNK, n - start);
    const p = session.predict(grid.subarray(2 * start, 2 * (start + count)), BOUNDARY_CHUNK);
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
  const gridOf = (size) => {
    if (!gridCache.has(size)) {
      if (gridCache.size > 4) gridCache.clear();
      gridCache.set(size, boundaryGrid(size, GRID.lo, GRID.hi));
    }
    return gridCache.get(size);
  };
  const t0 = performance.now();
  const measure = (size) => {
    const t = performance.now();
    const probs = predictGrid(ctx.session, gridOf(size));
    ctx.pointCost = Math.max(1e-6, (performance.now() - t) / (size * size));
    return { probs, size };
  };
  const budget = boundaryBudget(ctx);
  const fits = (ms) => Math.max(GRID.size, Math.min(boundaryPixels, Math.floor(Math.sqrt(ms / ctx.pointCost))));
  let best = measure(ctx.pointCost === undefined ? GRID.size : fits(budget));
  for (let round = 0; round < 2 && best.size < boundaryPixels; round++) {
    const next = fits(budget - (performance.now() - t0)); // what the time left allows
    if (next < best.size * 1.25) break;
    best = measure(next);
  }
  return best;
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
    const b = boundary(ctx);
    msg.boundary = b.probs;
    msg.boundarySize = b.size;
    ctx.boundarySize = b.size;
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
    case 'resolution':
      // The page's canvas changed size: a new picture now unless training sends one soon.
      boundaryPixels = Math.max(GRID.size, Math.min(1200, Math.round(msg.size) || GRID.size));
      if (cur?.trainer && cur.grid && !cur.running) evaluate(cur);
      break;
    case 'raceStart':
      race.start(msg);
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
