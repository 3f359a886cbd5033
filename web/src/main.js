// The playground page: controls <-> set-up (state.js, kept in the URL), the model
// builder (modelspec.js), and the views fed by the training worker (worker.js).
import KilnWorker from './worker.js?worker';
import { decodeState, encodeState, defaultState, isToy, modelKey, modelInput, parseWeightsRef, NUMBER_FIELDS } from './state.js';
import { initTfp } from './tfp.js';
import {
  describeModel,
  ACTIVATIONS,
  POOLS,
  PADDINGS,
  LIMITS,
  CNN_PRESET,
  DEFAULT_TOY_LAYERS,
  DEFAULT_MNIST_LAYERS,
  cloneLayers,
} from './modelspec.js';
import { GRID } from './datasets.js';
import { Charts } from './charts.js';
import { drawBoundary, buildDigitGrid, updateDigitGrid, drawConfusion, drawProbs } from './views.js';
import { DrawPad } from './draw.js';
import { normaliseGrey } from './mnist.js';
import { MnistLoadView } from './mnist-load.js';
import { Inside } from './inside.js';
import { Live } from './live.js';
import { initExport } from './export.js';
import { showFieldError, clearFieldError, clearAllFieldErrors } from './fielderror.js';
import { ChartText } from './chart-text.js';
import { watchCanvasPixels } from './boundary-res.js';
import { Race } from './race.js';
import { BackendSwitch } from './backend.js';

const $ = (id) => document.getElementById(id);

// ---- state ----------------------------------------------------------------------------
let state;
let run = 0; // id of the current set-up in the worker; messages of older runs are dropped
let status = 'starting';
let view = null; // the worker's view of the data (points or sample digits)
let lastBoundary = null;
let desc = null; // describeModel() of the current set-up
let lastTest = null;
let setupTimer = 0;
let predictId = 0;
const pending = new Map(); // predict id -> callback
let drawing = null; // the current drawing (28 x 28 grey) or null
let drawBusy = false;
let drawDirty = false;
let weightsModel = null; // modelKey() of the set-up the link's weights=idb:<name> came with

const inputFor = (s) => modelInput(s, { csvClasses: tfp.csvClasses() });

// TF Playground's controls (features, regularisation, view options, Regenerate, CSV).
const tfp = initTfp({
  getState: () => state,
  changed: (opts) => changed(opts),
  writeUrl: () => writeUrl(),
  redraw: () => redrawBoundary(),
  regenerate: (s) => {
    if (!['idle', 'paused', 'training', 'done'].includes(status)) return false;
    worker.postMessage({ type: 'regenerate', run, state: structuredClone(s) });
    return true;
  },
});

// ---- messages -------------------------------------------------------------------------
/**
 * A message at the top of the page; `action` ({label, run}) adds a button that runs it and
 * dismisses the message.
 */
function say(text, kind = 'info', action = null) {
  const box = $('messages');
  const p = document.createElement('p');
  p.className = `msg ${kind}`;
  p.textContent = text;
  if (action) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'msg-action';
    b.textContent = action.label;
    b.addEventListener('click', () => {
      p.remove();
      action.run();
    });
    p.append(b);
  }
  const close = document.createElement('button');
  close.type = 'button';
  close.textContent = '×';
  close.setAttribute('aria-label', 'Dismiss message');
  close.addEventListener('click', () => p.remove());
  p.append(close);
  box.append(p);
  while (box.children.length > 4) box.firstChild.remove();
}

const clearMessages = () => $('messages').replaceChildren();

// ---- worker ---------------------------------------------------------------------------
const mnistLoad = new MnistLoadView($('status'));
const worker = new KilnWorker();
const inside = new Inside($('inside'), worker);
const backendSwitch = new BackendSwitch($('backend'), {
  request: (want) => {
    clearTimeout(setupTimer);
    if (status === 'training') worker.postMessage({ type: 'pause', run });
    run++; // the run on screen ends: the worker answers `backend`, then a new set-up
    setStatus('loading', want !== 'cpu' ? 'Starting the GPU backend…' : 'Going back to the CPU…');
    worker.postMessage({ type: 'backend', want });
  },
  say: (text, kind) => say(text, kind),
});
backendSwitch.probe(navigator, new URLSearchParams(location.search).get('backendTest'));
worker.onerror = (e) => {
  say(`The training worker failed: ${e.message ?? 'unknown error'}`, 'error');
  setStatus('error');
};
worker.onmessage = (ev) => {
  const m = ev.data;
  switch (m.type) {
    case 'hello': {
      $('engine-info').textContent = BackendSwitch.describe(m.info);
      return;
    }
    case 'backend':
      // The backend switch's answer: the engine in use now; a new model on it.
      $('engine-info').textContent = BackendSwitch.describe(m.info);
      backendSwitch.onBackend(m);
      setup();
      return;
    case 'fatal':
      $('engine-info').textContent = 'The engine could not be loaded.';
      say(`The engine could not be loaded: ${m.error.message}`, 'error');
      setStatus('error');
      return;
    case 'race':
      race.onMessage(m);
      return;
    case 'prediction': {
      const cb = pending.get(m.id);
      pending.delete(m.id);
      cb?.(m);
      return;
    }
    case 'inspected':
      inside.onInspected(m);
      return;
    default:
      break;
  }
  if (m.run !== run) return; // from a set-up that was replaced
  live.onMessage(m);
  switch (m.type) {
    case 'status':
      setStatus(m.status, m.message);
      break;
    case 'ready':
      onReady(m);
      break;
    case 'progress':
      showMetric('m-epoch', m.epoch, (v) => v.toFixed(2));
      showMetric('m-step', m.step, String);
      showMetric('m-train-loss', m.loss, (v) => v.toFixed(4));
      showMetric('m-train-acc', m.accuracy, pct);
      // null: too few steps to measure (one Step); the tile keeps the last measured figure.
      if (m.itemsPerSecond != null) showMetric('m-speed', m.itemsPerSecond, (v) => Math.round(v).toLocaleString('en-US'));
      if (race.active) race.leave(); // the run trains again: its own curves come back
      charts.addTrain(m.epoch, m.loss, m.accuracy);
      break;
    case 'eval':
      onEval(m);
      break;
    case 'saved':
      onSaved(m);
      break;
    case 'weights':
      // weights=idb:<name>: loaded, or why not (the model then starts from random weights).
      document.body.dataset.weights = m.status;
      say(m.text, m.kind);
      break;
    case 'regenerated':
      view = m.view;
      redrawBoundary();
      break;
    case 'error':
      say(`${m.error.code && m.error.code !== 'Internal' ? `[${m.error.code}] ` : ''}${m.error.message}`, 'error');
      break;
    case 'mnistLoad':
      mnistLoad.update(m);
      break;
    case 'inside':
      inside.onInside(m);
      break;
    case 'exported':
      exporter.onExported(m);
      break;
    case 'gpuBlocked':
      // What this set-up cannot do on the GPU backend: said, with the CPU one click away.
      say(m.message, 'warn', { label: 'Use the CPU', run: () => backendSwitch.choose('cpu') });
      break;
    default:
      break;
  }
};

const pct = (v) => `${(v * 100).toFixed(2)} %`;

function showMetric(id, value, fmt) {
  const el = $(id);
  el.textContent = value === null || value === undefined ? '–' : fmt(value);
  el.dataset.value = value === null || value === undefined ? '' : String(value);
}

function predict(x) {
  return new Promise((resolve) => {
    const id = ++predictId;
    pending.set(id, resolve);
    worker.postMessage({ type: 'predict', id, x });
  });
}

const mnistUrl = () => new URL(`${import.meta.env.BASE_URL}mnist/`, document.baseURI).href;

/** Sends the current set-up to the worker (a fresh model: the Reset). */
function setup(weights = null) {
  race.leave(); // a new set-up ends a race and brings back the run's curves (before Undo keeps them)
  live.beforeSetup(); // the trained model it replaces is kept for Undo
  clearTimeout(setupTimer);
  setupTimer = 0;
  run++;
  view = null;
  lastBoundary = null;
  lastTest = null;
  charts.clear();
  inside.reset();
  for (const id of ['m-epoch', 'm-step']) showMetric(id, 0, String);
  for (const id of ['m-train-loss', 'm-train-acc', 'm-test-loss', 'm-test-acc', 'm-speed']) showMetric(id, null);
  $('engine-summary').textContent = '';
  if (!desc.ok) {
    setStatus('invalid');
    return;
  }
  const blocked = tfp.blocked(state);
  if (blocked) {
    setStatus('invalid', blocked);
    return;
  }
  const mnistBase = mnistUrl();
  const idbWeights = !weights && state.weights ? parseWeightsRef(state.weights).name : null;
  if (idbWeights) document.body.dataset.weights = 'loading';
  else delete document.body.dataset.weights;
  worker.postMessage({ type: 'setup', run, state: structuredClone(state), spec: desc.spec, mnistBase, weights, idbWeights, csv: tfp.csvPayload(), keep: live.keep });
  live.afterSetup(run, state);
  setStatus('loading');
}

function scheduleSetup() {
  clearTimeout(setupTimer);
  if (status === 'training') worker.postMessage({ type: 'pause', run });
  // The run on screen no longer matches the settings: no Train / Step until the new one is ready.
  run++;
  setStatus('loading', 'Applying the change…');
  setupTimer = setTimeout(() => setup(), 250);
}

function onReady(m) {
  view = m.view;
  $('engine-summary').textContent = m.summary ?? '';
  if (desc.ok && m.numParams !== desc.numParams) {
    say(`The engine reports ${m.numParams} parameters; the playground computed ${desc.numParams}.`, 'warn');
  }
  if (view.kind === 'mnist') {
    buildDigitGrid($('digit-grid'), view.sampleImages, view.sampleLabels);
    $('confusion').replaceChildren();
  } else {
    redrawBoundary();
  }
}

/** Draws the last decision boundary (probabilities over a grid of lastBoundary.size²). */
function redrawBoundary() {
  if (view?.kind !== 'toy') return;
  const canvas = $('boundary');
  const size = lastBoundary?.size ?? GRID.size;
  drawBoundary(canvas, lastBoundary?.probs ?? null, { ...GRID, size, ...tfp.boundaryOptions(state, view) }, view);
  canvas.dataset.gridSize = lastBoundary ? String(size) : '';
}

function onEval(m) {
  lastTest = m;
  showMetric('m-test-loss', m.loss, (v) => v.toFixed(4));
  showMetric('m-test-acc', m.accuracy, pct);
  if (m.step > 0 && !race.active) charts.addTest(m.epoch, m.loss, m.accuracy); // (not onto a race's curves)
  if (!view) return;
  if (view.kind === 'toy') {
    lastBoundary = { probs: m.boundary, size: m.boundarySize ?? GRID.size };
    redrawBoundary();
  } else {
    updateDigitGrid($('digit-grid'), m.samplePredicted);
    drawConfusion($('confusion'), m.confusion, 10);
    if (drawing) predictDrawing();
  }
}

// ---- status and buttons ---------------------------------------------------------------
const STATUS_TEXT = {
  starting: 'Starting…',
  loading: 'Preparing…',
  idle: 'Ready: press Train (or Step one batch).',
  training: 'Training…',
  paused: 'Paused.',
  done: 'Done: all epochs trained.',
  error: 'Error (see the message above).',
  invalid: 'Fix the model to train it (see the messages under Model).',
};

function setStatus(s, message) {
  status = s;
  document.body.dataset.status = s;
  $('status').textContent = message ?? STATUS_TEXT[s] ?? s;
  $('status').title = s === 'done' ? 'Reset, or change a setting, to train again.' : $('status').textContent;
  const trainBtn = $('train-btn');
  trainBtn.textContent = s === 'training' ? 'Pause' : 'Train';
  trainBtn.disabled = !['idle', 'paused', 'training'].includes(s);
  trainBtn.setAttribute('aria-pressed', String(s === 'training'));
  // On the GPU, Train runs whole epochs (Learner.fit): no single steps.
  const gpu = document.body.dataset.backend === 'webgpu';
  $('step-btn').disabled = !['idle', 'paused'].includes(s) || gpu;
  $('step-btn').title = gpu ? 'One batch at a time runs on the CPU backend (on the GPU, Train runs whole epochs)' : '';
  $('save-btn').disabled = !['idle', 'paused', 'done'].includes(s);
  live.onStatus(s);
}

$('train-btn').addEventListener('click', () => {
  race.leave();
  if (status === 'training') worker.postMessage({ type: 'pause', run });
  else worker.postMessage({ type: 'train', run });
});
$('step-btn').addEventListener('click', () => {
  race.leave();
  worker.postMessage({ type: 'step', run });
});
$('reset-btn').addEventListener('click', () => setup());

// ---- controls <-> state ---------------------------------------------------------------
const NUMBER_INPUTS = ['points', 'noise', 'test', 'classes', 'lr', 'momentum', 'batch', 'epochs', 'wd', 'seed'];
const SELECT_NUMBERS = ['train', 'mtest'];

function setSelect(el, value) {
  const v = String(value);
  if (![...el.options].some((o) => o.value === v)) {
    const o = document.createElement('option');
    o.value = v;
    o.textContent = Number(v).toLocaleString('en-US');
    el.append(o);
  }
  el.value = v;
}

function renderOutputs() {
  $('points-out').textContent = String(state.points);
  $('noise-out').textContent = `${state.noise} %`;
  $('test-out').textContent = `${Math.round(state.test * 100)} %`;
}

function renderControls() {
  $('data').value = state.data;
  for (const k of NUMBER_INPUTS) $(k).value = String(state[k]);
  for (const k of SELECT_NUMBERS) setSelect($(k), state[k]);
  $('opt').value = state.opt;
  renderOutputs();
  const toy = isToy(state.data);
  document.body.classList.toggle('is-toy', toy);
  document.body.classList.toggle('is-mnist', !toy);
  document.body.classList.toggle('is-gauss', state.data === 'gauss');
  document.body.classList.toggle('is-sgd', state.opt === 'sgd');
  $('wd-label').textContent = state.opt === 'adamw' ? 'Weight decay (decoupled)' : 'L2 / weight decay';
  tfp.render(state);
  renderLayers();
  renderModelInfo();
}

function writeUrl() {
  const hash = `#${encodeState(state)}`;
  if (location.hash !== hash) history.replaceState(null, '', hash);
  $('link').value = location.href;
}

/**
 * A setting changed in the page: keep the URL, re-describe the model, reset the run.
 * `reset`: a new model even if the set-up reads the same (a new CSV file under data=csv).
 */
function changed({ rerender = false, reset = false } = {}) {
  if (rerender) renderControls();
  else {
    renderOutputs();
    renderModelInfo();
  }
  if (state.weights && modelKey(state) !== weightsModel) {
    say(`The layers changed: the weights "${parseWeightsRef(state.weights).name}" no longer apply; the model starts from random weights.`, 'info');
    state.weights = null;
  }
  writeUrl();
  if (reset || !live.apply()) scheduleSetup(); // training settings change live (live.js)
}

$('data').addEventListener('change', () => {
  const next = $('data').value;
  if (isToy(next) !== isToy(state.data)) {
    // Toy <-> MNIST: the other kind's default model and training settings.
    state = { ...defaultState(next), seed: state.seed };
  } else {
    state.data = next;
  }
  changed({ rerender: true });
});

for (const k of NUMBER_INPUTS) {
  const el = $(k);
  el.addEventListener(el.type === 'range' ? 'input' : 'change', () => {
    const v = Number(el.value);
    if (el.value.trim() === '' || !Number.isFinite(v) || (el.min !== '' && v < Number(el.min)) || (el.max !== '' && v > Number(el.max))) {
      // Beside the field, which keeps what was typed; the run keeps the last good value.
      const name = el.labels?.[0]?.textContent?.trim() || k;
      const range = el.max !== '' ? `from ${el.min} to ${el.max}` : `at least ${el.min}`;
      showFieldError(el, `${name}: ${el.value.trim() === '' ? 'empty' : `"${el.value}"`} is not a number ${range}; training keeps ${state[k]}.`);
      return;
    }
    clearFieldError(el);
    state[k] = el.step === '1' ? Math.round(v) : v;
    changed();
  });
}
for (const k of SELECT_NUMBERS) {
  $(k).addEventListener('change', () => {
    state[k] = Number($(k).value);
    changed();
  });
}
$('opt').addEventListener('change', () => {
  state.opt = $('opt').value;
  document.body.classList.toggle('is-sgd', state.opt === 'sgd');
  $('wd-label').textContent = state.opt === 'adamw' ? 'Weight decay (decoupled)' : 'L2 / weight decay';
  changed();
});

// ---- model builder --------------------------------------------------------------------
function option(value, text, selected) {
  const o = document.createElement('option');
  o.value = String(value);
  o.textContent = text;
  if (selected) o.selected = true;
  return o;
}

function field(labelText, control) {
  const label = document.createElement('label');
  label.className = 'mini';
  const span = document.createElement('span');
  span.textContent = labelText;
  label.append(span, control);
  return label;
}

function numberInput(value, min, max, step, onValue) {
  const el = document.createElement('input');
  el.type = 'number';
  el.min = String(min);
  el.max = String(max);
  el.step = String(step);
  el.value = String(value);
  el.addEventListener('change', () => onValue(el.value.trim() === '' ? NaN : Number(el.value)));
  return el;
}

function selectInput(values, value, onValue, names = {}) {
  const el = document.createElement('select');
  for (const v of values) el.append(option(v, names[v] ?? String(v), v === value));
  el.addEventListener('change', () => onValue(el.value));
  return el;
}

function button(text, label, onClick, cls = '') {
  const b = document.createElement('button');
  b.type = 'button';
  b.textContent = text;
  if (label) b.setAttribute('aria-label', label);
  b.title = label ?? text;
  if (cls) b.className = cls;
  b.addEventListener('click', onClick);
  return b;
}

function renderLayers() {
  const list = $('layers');
  list.replaceChildren();
  state.layers.forEach((l, i) => {
    const li = document.createElement('li');
    li.className = `layer ${l.kind}`;
    const n = i + 1;
    const title = document.createElement('span');
    title.className = 'layer-title';
    title.textContent = l.kind === 'dense' ? `Dense ${n}` : `Conv ${n}`;
    title.append(
      button('✕', `Remove layer ${n}`, () => {
        state.layers.splice(i, 1);
        renderLayers();
        changed();
        $('add-dense').focus();
      }, 'remove'),
    );
    li.append(title);
    const edit = (key, conv = (v) => v) => (v) => {
      state.layers[i][key] = conv(v);
      changed();
    };
    if (l.kind === 'dense') {
      const units = numberInput(l.units, 1, LIMITS.maxUnits, 1, edit('units'));
      units.setAttribute('aria-label', `Units of layer ${n}`);
      const half = button('−', `Halve the units of layer ${n}`, () => {
        state.layers[i].units = Math.max(1, Math.floor(state.layers[i].units / 2));
        units.value = String(state.layers[i].units);
        changed();
      });
      const dbl = button('+', `Double the units of layer ${n}`, () => {
        state.layers[i].units = Math.min(LIMITS.maxUnits, state.layers[i].units * 2);
        units.value = String(state.layers[i].units);
        changed();
      });
      const unitsBox = document.createElement('span');
      unitsBox.className = 'units-box';
      unitsBox.append(half, field('Units', units), dbl);
      li.append(
        unitsBox,
        field('Activation', selectInput(ACTIVATIONS, l.act, edit('act'))),
        field('Dropout', numberInput(l.dropout, 0, LIMITS.maxDropout, 0.05, edit('dropout'))),
      );
    } else {
      li.append(
        field('Filters', numberInput(l.filters, 1, LIMITS.maxFilters, 1, edit('filters'))),
        field('Kernel', selectInput(LIMITS.kernels, l.kernel, edit('kernel', Number), { 1: '1×1', 3: '3×3', 5: '5×5', 7: '7×7' })),
        field('Activation', selectInput(ACTIVATIONS, l.act, edit('act'))),
        field('Pool', selectInput(POOLS, l.pool, edit('pool'), { max: 'max 2×2', avg: 'avg 2×2', none: 'none' })),
        field('Padding', selectInput(PADDINGS, l.padding, edit('padding'))),
      );
    }
    list.append(li);
  });
  const full = state.layers.length >= LIMITS.maxBlocks;
  $('add-dense').disabled = full;
  $('add-conv').disabled = full;
  $('layers-full').hidden = !full;
  $('layers-full').textContent = `${LIMITS.maxBlocks} layers is the playground's limit: remove a layer to add another.`;
}

function renderModelInfo() {
  desc = describeModel(state.layers, inputFor(state));
  $('num-params').textContent = desc.ok ? desc.numParams.toLocaleString('en-US') : '–';
  $('num-params').dataset.value = desc.ok ? String(desc.numParams) : '';
  [...$('layers').children].forEach((li, i) => {
    const mine = desc.errors.filter((e) => e.startsWith(`Layer ${i + 1} `) || e.startsWith(`Layer ${i + 1}:`));
    const bad = mine.length > 0;
    li.classList.toggle('invalid', bad);
    // The layer's errors beside it as well as under the list (the list may be long).
    let box = li.querySelector(':scope > .field-error');
    if (bad && !box) {
      box = Object.assign(document.createElement('p'), { className: 'field-error', id: `layer-${i + 1}-error` });
      box.setAttribute('role', 'alert');
      li.append(box);
    }
    if (bad) box.textContent = mine.join('; ');
    else box?.remove();
    li.querySelectorAll('input, select').forEach((el) => {
      el.setAttribute('aria-invalid', String(bad));
      if (bad) el.setAttribute('aria-describedby', box.id);
      else el.removeAttribute('aria-describedby');
    });
  });
  const errors = $('model-errors');
  errors.replaceChildren(...desc.errors.map((e) => Object.assign(document.createElement('p'), { textContent: e })));
  const body = $('summary-table').tBodies[0];
  body.replaceChildren();
  for (const r of desc.rows) {
    const tr = document.createElement('tr');
    for (const v of [r.index, r.layer, r.output, r.params.toLocaleString('en-US')]) {
      const td = document.createElement('td');
      td.textContent = String(v);
      tr.append(td);
    }
    body.append(tr);
  }
}

$('add-dense').addEventListener('click', () => {
  const last = [...state.layers].reverse().find((l) => l.kind === 'dense');
  state.layers.push({ kind: 'dense', units: last ? last.units : isToy(state.data) ? 8 : 64, act: last ? last.act : 'relu', dropout: 0 });
  renderLayers();
  changed();
});
$('add-conv').addEventListener('click', () => {
  const convs = state.layers.filter((l) => l.kind === 'conv');
  const at = convs.length; // conv layers come first
  const prev = convs[convs.length - 1];
  state.layers.splice(at, 0, { kind: 'conv', filters: prev ? Math.min(LIMITS.maxFilters, prev.filters * 2) : 8, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' });
  renderLayers();
  changed();
});
$('preset-mlp').addEventListener('click', () => {
  state.layers = cloneLayers(isToy(state.data) ? DEFAULT_TOY_LAYERS : DEFAULT_MNIST_LAYERS);
  renderLayers();
  changed();
});
$('preset-cnn').addEventListener('click', () => {
  state.layers = cloneLayers(CNN_PRESET);
  renderLayers();
  changed();
});

// ---- drawing --------------------------------------------------------------------------
const pad = new DrawPad($('draw'), (grey) => {
  drawing = grey;
  inside.onDrawing(grey);
  if (!grey) {
    $('draw-pred').textContent = '–';
    $('draw-pred').dataset.value = '';
    $('probs').replaceChildren();
    return;
  }
  predictDrawing();
});

async function predictDrawing() {
  if (drawBusy) {
    drawDirty = true;
    return;
  }
  if (!drawing || !view || view.kind !== 'mnist') return;
  drawBusy = true;
  try {
    const res = await predict(normaliseGrey(drawing));
    if (res.error) {
      $('draw-pred').textContent = `– (${res.error.message})`;
    } else if (drawing) {
      const best = drawProbs($('probs'), res.probs);
      $('draw-pred').textContent = String(best);
      $('draw-pred').dataset.value = String(best);
      $('draw-pred').dataset.probs = Array.from(res.probs, (p) => p.toFixed(6)).join(',');
      $('draw-pred').dataset.status = status; // what the worker was doing when it answered
    }
  } finally {
    drawBusy = false;
    if (drawDirty) {
      drawDirty = false;
      predictDrawing();
    }
  }
}

$('clear-draw').addEventListener('click', () => pad.clear());
$('sample-draw').addEventListener('click', () => {
  if (!view || view.kind !== 'mnist') return;
  const k = Math.floor(Math.random() * view.sampleLabels.length);
  pad.clear(false);
  pad.paintImage(view.sampleImages.subarray(k * 784, (k + 1) * 784));
});

// ---- save / load ----------------------------------------------------------------------
let saveRequested = false;
$('save-btn').addEventListener('click', () => {
  saveRequested = true;
  worker.postMessage({ type: 'save', run });
});

function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

function onSaved(m) {
  if (!saveRequested) return;
  saveRequested = false;
  const base = `kiln-${state.data}-${desc.numParams}p`;
  const meta = {
    format: 'kiln-playground-model',
    version: 1,
    weights: `${base}.safetensors`,
    setup: encodeState(state),
    state,
    spec: desc.spec,
    engineConfig: m.config ?? null,
    numParams: desc.numParams,
    trained: lastTest ? { steps: lastTest.step, epochs: lastTest.epoch, testLoss: lastTest.loss, testAccuracy: lastTest.accuracy } : null,
    savedAt: new Date().toISOString(),
  };
  download(`${base}.safetensors`, new Blob([m.weights], { type: 'application/octet-stream' }));
  download(`${base}.json`, new Blob([JSON.stringify(meta, null, 2)], { type: 'application/json' }));
  say(`Downloaded ${base}.safetensors and ${base}.json.`, 'info');
}

/** The weights format of a file by its name: 'safetensors', 'pytorch' or null. */
const weightsFormat = (name) => (/\.safetensors$/i.test(name) ? 'safetensors' : /\.(pt|pth)$/i.test(name) ? 'pytorch' : null);

/**
 * Loads a weights-only file (.safetensors, or PyTorch's .pt / .pth of the equivalent
 * nn.Sequential) into the current model, keeping the set-up; the worker says how it went.
 */
async function loadWeightsFile(file) {
  if (!desc.ok || status === 'invalid' || status === 'loading') {
    say(`Load model: the model is not ready yet; try ${file.name} again in a moment.`, 'error');
    return;
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  worker.postMessage({ type: 'loadWeights', run, bytes, format: weightsFormat(file.name), name: file.name }, [bytes.buffer]);
}

async function loadFiles(files) {
  const json = files.find((f) => /\.json$/i.test(f.name));
  const weights = files.find((f) => weightsFormat(f.name) !== null);
  if (!json && weights && files.length === 1) {
    await loadWeightsFile(weights);
    return;
  }
  if (!json || !weights || weightsFormat(weights.name) !== 'safetensors') {
    say('Load model: choose the .json set-up and the .safetensors weights together, or one weights file (.safetensors, or a PyTorch .pt / .pth) for the current layers.', 'error');
    return;
  }
  let meta;
  try {
    meta = JSON.parse(await json.text());
  } catch (e) {
    say(`Load model: ${json.name} is not JSON (${e.message}).`, 'error');
    return;
  }
  if (meta?.format !== 'kiln-playground-model' || typeof meta.setup !== 'string') {
    say(`Load model: ${json.name} is not a Kiln playground model (no "format": "kiln-playground-model" and "setup").`, 'error');
    return;
  }
  const { state: loaded, warnings } = decodeState(meta.setup);
  if (warnings.length) {
    say(`Load model: the set-up in ${json.name} is not valid: ${warnings.join('; ')}`, 'error');
    return;
  }
  state = { ...loaded, weights: null }; // the file's weights, not the link's
  renderControls();
  writeUrl();
  if (!desc.ok) {
    say(`Load model: ${desc.errors.join('; ')}`, 'error');
    return;
  }
  setup(new Uint8Array(await weights.arrayBuffer()));
  say(`Loaded ${weights.name} (${desc.numParams.toLocaleString('en-US')} parameters).`, 'info');
}

$('load-input').addEventListener('change', async (ev) => {
  const files = [...ev.target.files];
  ev.target.value = '';
  await loadFiles(files);
});

// Files dropped anywhere on the page load as "Load model…" would.
document.addEventListener('dragover', (ev) => {
  if ([...(ev.dataTransfer?.types ?? [])].includes('Files')) {
    ev.preventDefault();
    ev.dataTransfer.dropEffect = 'copy';
    document.body.dataset.dropping = '';
  }
});
document.addEventListener('dragleave', (ev) => {
  if (ev.relatedTarget === null) delete document.body.dataset.dropping;
});
document.addEventListener('drop', async (ev) => {
  const files = [...(ev.dataTransfer?.files ?? [])];
  if (files.length === 0) return;
  ev.preventDefault();
  delete document.body.dataset.dropping;
  await loadFiles(files);
});

$('copy-link').addEventListener('click', async () => {
  writeUrl();
  try {
    await navigator.clipboard.writeText(location.href);
    say('Link copied: it reproduces this set-up.', 'info');
  } catch {
    $('link').focus();
    $('link').select();
    say('Copy the selected link (the browser did not allow copying).', 'info');
  }
});

// ---- start ----------------------------------------------------------------------------
const charts = new Charts($('loss-chart'), $('acc-chart'));
const live = new Live({
  worker,
  getState: () => state,
  setState: (s) => {
    state = s;
    renderControls();
    writeUrl();
  },
  getRun: () => run,
  nextRun: () => ++run,
  getStatus: () => status,
  setStatus,
  describe: () => desc,
  charts,
  showMetric,
  say,
  reset: () => scheduleSetup(),
});
const exporter = initExport({ root: $('export-root'), worker, run: () => run, state: () => state, desc: () => desc, view: () => view, link: encodeState });
{
  // The charts' text alternative: a summary and a table under each, kept up to date.
  const lossText = new ChartText(charts.loss, $('loss-summary'), $('loss-table'), { fmt: (v) => v.toFixed(4), better: 'min' });
  const accText = new ChartText(charts.acc, $('acc-summary'), $('acc-table'), { fmt: pct, better: 'max' });
  charts.onDraw = () => {
    lossText.update();
    accText.update();
  };
  charts.onDraw();
}

// Race: the set-up on the page (A) against B, side by side (race.js).
const race = new Race({
  root: $('race'),
  worker,
  charts,
  current: () => ({ state, spec: desc.spec, ok: desc.ok }),
  pauseMain: () => {
    if (status === 'training') worker.postMessage({ type: 'pause', run });
  },
  mnistBase: mnistUrl,
  csv: () => tfp.csvPayload(),
});

// Sliders take their range and step from the set-up's fields, so a link can set no value
// a slider cannot show (decodeState moves a value off the step to the nearest one).
for (const f of NUMBER_FIELDS) {
  const el = $(f.key);
  if (!el || el.tagName !== 'INPUT') continue;
  el.min = String(f.min);
  el.max = String(f.max);
  if (el.type === 'range' && f.step) el.step = String(f.step);
}

function loadFromUrl() {
  const { state: s, warnings, fields = {} } = decodeState(location.hash);
  state = s;
  weightsModel = state.weights ? modelKey(state) : null;
  for (const w of warnings) say(w, 'warn');
  renderControls();
  clearAllFieldErrors(document.querySelector('.controls'));
  for (const [k, w] of Object.entries(fields)) if ($(k)) showFieldError($(k), w);
  writeUrl();
}

window.addEventListener('hashchange', () => {
  if (location.hash === `#${encodeState(state)}`) return;
  clearMessages();
  loadFromUrl();
  setup();
});

// The decision boundary is drawn at the canvas's device-pixel size; the worker evaluates
// the model on a grid of that size (or the largest its cost allows, smoothed up).
watchCanvasPixels($('boundary'), (px) => {
  redrawBoundary();
  worker.postMessage({ type: 'resolution', size: px });
});

loadFromUrl();
race.prepare(state);
setup();
