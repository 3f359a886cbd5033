// The page's TensorFlow Playground controls: input features, L1/L2 regularisation and its
// rate, "Discretize output", "Show test data", Regenerate (new points from a new data seed,
// same model) and "Your CSV" (upload 2-D points with labels). The set-up fields live in
// state.js; this module wires the controls to them and tells the page (main.js) what to do
// through the small API it is given.
import './tfp.css';
import { FEATURES, FEATURE_LABELS, FEATURE_FORMULAS, orderFeatures } from './features.js';
import { REG_RATES, taskOf } from './state.js';
import { parseCsv, CSV_LIMITS } from './csv.js';

const $ = (id) => document.getElementById(id);

/**
 * Wires the controls.
 * @param {{getState: () => object, changed: (opts?: {rerender?: boolean}) => void,
 *   writeUrl: () => void, redraw: () => void, regenerate: (state: object) => boolean}} api
 *   changed: a setting that needs a new model (the page resets the run); writeUrl: keep
 *   the link; redraw: the heat map only; regenerate: ask the worker for new points for the
 *   running model (false if there is no run to give them to).
 * @returns {{render(state: object): void, csvClasses(): number | undefined,
 *   csvPayload(): object | null, blocked(state: object): string | null,
 *   boundaryOptions(state: object, view: object): object}}
 */
/** Where this tab keeps the last uploaded CSV, so a reload can train on it again. */
const CSV_KEY = 'kiln-playground-csv';

export function initTfp(api) {
  let csv = null; // the parsed upload: {x, y, numClasses, classNames, name, ...}
  try {
    const kept = JSON.parse(sessionStorage.getItem(CSV_KEY) ?? 'null');
    const r = kept ? parseCsv(kept.text, kept.name) : null;
    if (r?.ok) csv = { ...r, name: kept.name };
  } catch {
    // no sessionStorage (or nothing readable in it): the upload is asked for again
  }

  // ---- features: one checkbox each, in FEATURES order ----
  const boxes = $('feature-boxes');
  for (const f of FEATURES) {
    const label = document.createElement('label');
    const input = document.createElement('input');
    input.type = 'checkbox';
    input.name = 'feature';
    input.value = f;
    input.id = `feature-${f}`;
    input.setAttribute('aria-label', `Input feature ${FEATURE_FORMULAS[f]}`);
    label.append(input, document.createTextNode(FEATURE_LABELS[f]));
    boxes.append(label);
  }
  const featMsg = $('features-msg');
  boxes.addEventListener('change', (ev) => {
    const state = api.getState();
    const chosen = [...boxes.querySelectorAll('input:checked')].map((el) => el.value);
    if (chosen.length === 0) {
      ev.target.checked = true;
      featMsg.textContent = `Keep at least one input feature (${FEATURE_LABELS[ev.target.value]} stays on).`;
      featMsg.classList.add('error');
      return;
    }
    featMsg.textContent = '';
    featMsg.classList.remove('error');
    state.features = orderFeatures(chosen);
    api.changed();
  });

  // ---- regularisation ----
  const reg = $('reg');
  const rate = $('reg-rate');
  const fillRates = (value) => {
    const values = REG_RATES.includes(value) ? REG_RATES : [...REG_RATES, value].sort((a, b) => a - b);
    rate.replaceChildren(...values.map((v) => Object.assign(document.createElement('option'), { value: String(v), textContent: String(v) })));
    rate.value = String(value);
  };
  reg.addEventListener('change', () => {
    const state = api.getState();
    state.reg = reg.value;
    // A penalty of rate 0 does nothing: start at TF Playground's smallest non-zero rate.
    if (state.reg !== 'none' && !(state.regRate > 0)) state.regRate = 0.001;
    renderReg(state);
    api.changed();
  });
  rate.addEventListener('change', () => {
    const state = api.getState();
    state.regRate = Number(rate.value);
    api.changed();
  });
  function renderReg(state) {
    reg.value = state.reg ?? 'none';
    fillRates(state.regRate ?? 0);
    rate.disabled = reg.value === 'none';
  }

  // ---- view options: no new model, only the picture and the link ----
  for (const [id, key] of [['discretize', 'discretize'], ['show-test', 'showTest']]) {
    $(id).addEventListener('change', () => {
      const state = api.getState();
      state[key] = $(id).checked;
      api.writeUrl();
      api.redraw();
    });
  }

  // ---- Regenerate ----
  $('regen-btn').addEventListener('click', () => {
    const state = api.getState();
    const seed = new Uint32Array(1);
    crypto.getRandomValues(seed);
    state.dataSeed = seed[0] % 2 ** 31;
    api.writeUrl();
    if (!api.regenerate(state)) api.changed();
  });

  // ---- CSV upload ----
  const status = $('csv-status');
  const showCsv = (kind, text, list = []) => {
    status.className = `csv-status ${kind}`;
    status.replaceChildren(Object.assign(document.createElement('p'), { textContent: text }));
    if (list.length) {
      const ul = document.createElement('ul');
      for (const item of list) ul.append(Object.assign(document.createElement('li'), { textContent: item }));
      status.append(ul);
    }
  };
  $('csv-input').addEventListener('change', async (ev) => {
    const file = ev.target.files?.[0];
    ev.target.value = '';
    if (!file) return;
    const keep = csv ? ` The points of ${csv.name} stay.` : '';
    if (file.size > CSV_LIMITS.maxBytes) {
      showCsv('error', `${file.name} is ${(file.size / 1048576).toFixed(1)} MB; at most ${CSV_LIMITS.maxBytes / 1048576} MB.${keep}`);
      return;
    }
    const text = await file.text();
    const r = parseCsv(text, file.name);
    if (!r.ok) {
      showCsv('error', `Could not use ${file.name}:${keep}`, r.errors);
      return;
    }
    csv = { ...r, name: file.name };
    try {
      sessionStorage.setItem(CSV_KEY, JSON.stringify({ name: file.name, text }));
    } catch {
      // too large for this tab's storage: a reload asks for the file again
    }
    const state = api.getState();
    state.data = 'csv';
    // Another file while data=csv leaves the set-up the same: the new points need a new model.
    api.changed({ rerender: true, reset: true });
  });

  function describeCsv() {
    const counts = new Array(csv.numClasses).fill(0);
    for (const v of csv.y) counts[v]++;
    const classes = csv.classNames.map((c, i) => `${c}: ${counts[i]}`).join(', ');
    const f = (v) => String(Number(v.toPrecision(4)));
    return `${csv.name}: ${csv.n} points, ${csv.numClasses} classes (${classes}); scaled ×${f(csv.scale)} around (${f(csv.center[0])}, ${f(csv.center[1])}).`;
  }

  return {
    /** Shows the set-up's TF Playground settings. */
    render(state) {
      const toy = state.data !== 'mnist';
      document.body.classList.toggle('is-csv', state.data === 'csv');
      document.body.classList.toggle('is-regression', toy && taskOf(state.data) === 'regression');
      const chosen = new Set(state.features ?? []);
      for (const input of boxes.querySelectorAll('input')) input.checked = chosen.has(input.value);
      renderReg(state);
      $('discretize').checked = Boolean(state.discretize);
      $('show-test').checked = Boolean(state.showTest);
      if (state.data === 'csv') {
        if (csv) showCsv('info', describeCsv());
        else showCsv('error', 'This set-up uses points from a CSV file, which a link cannot carry: upload the file (rows of x1, x2, label) to train. The other settings are kept.');
      } else if (!status.classList.contains('error')) {
        status.replaceChildren();
      }
    },
    /** The number of classes of the uploaded points (undefined before an upload). */
    csvClasses: () => csv?.numClasses,
    /** The uploaded points for the worker's setup message (null if none). */
    csvPayload: () => (csv ? { x: csv.x, y: csv.y, numClasses: csv.numClasses, classNames: csv.classNames } : null),
    /** Why the set-up cannot be built yet (a CSV set-up without its file), or null. */
    blocked(state) {
      return state.data === 'csv' && !csv ? 'Upload a CSV file of points to train (see Data).' : null;
    },
    /** The heat map's drawing options for the current view. */
    boundaryOptions(state, view) {
      return { classes: view.classes, task: view.task ?? 'classification', discretize: Boolean(state.discretize), showTest: Boolean(state.showTest) };
    },
  };
}
