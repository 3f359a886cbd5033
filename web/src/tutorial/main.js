// The tutorial page: renders the steps (built from web/tutorial/content/*.md by
// vite-tutorial.js), one CodeMirror editor per cell, runs cells in the notebook's Web
// Worker (session.js + worker.js), shows their output under them (output.js), and handles
// Run all, Stop (a fresh worker; the reader is told which cells to re-run) and reset.
//
// Test contract: each cell is an element [data-cell="<id>"] with data-status
// idle|running|ok|error and its output in [data-output]; the button #run-all; the page
// sets body[data-busy] while cells run; window.kilnTutorial.outputText(id) is the text
// of a cell's output (runtime/format.js's outputText); body[data-offline="ready"] once the
// service worker holds the app and the MNIST files (the page then works offline);
// #file-input (behind the "Add file…" button #add-file) and files dropped on the page
// become `files` in the cells; window.kilnTutorial.files() lists their names and
// body[data-files] counts them.
import steps from 'virtual:kiln-tutorial';
import NotebookWorker from './worker.js?worker';
import { NotebookSession, STOPPED } from './session.js';
import { probeGpu } from '../backend.js';
import { cellEditor, setCode, highlightInto, markErrorLine } from './editor.js';
import { OutputView, outputTextOf } from './output.js';
import { MNIST_FILES } from '../mnist.js';

const $ = (id) => document.getElementById(id);
const cells = new Map(); // id -> cell
const order = []; // cell ids in page order
let runningAll = false;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('data-') || k.startsWith('aria-') || k === 'role' || k === 'type' || k === 'id' || k === 'title' || k === 'tabindex' || k === 'href') e.setAttribute(k, v);
    else e[k] = v;
  }
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

// ---- the notebook session ----

/** The backend the reader chose ('cpu' | 'webgpu'): the worker's name carries it. */
let backend = 'cpu';
/** The GPU adapter's name (probeGpu), or null when the browser has none. */
let gpuAdapter = null;

/** The worker's name: the page's URL (it finds the MNIST files and assets from it), and the backend. */
function workerName() {
  const u = new URL(location.href);
  u.hash = backend === 'webgpu' ? 'kiln-backend=webgpu' : '';
  return u.href;
}

const engineReady = () => (backend === 'webgpu' ? `Engine: kiln-dl (WebGPU on ${gpuAdapter}) ready in a Web Worker` : 'Engine: kiln-dl (WebAssembly) ready in a Web Worker');

const session = new NotebookSession(() => new NotebookWorker({ name: workerName() }), {
  onStart: (id) => setStatus(cells.get(id), 'running'),
  onEvent: (id, ev) => {
    const cell = cells.get(id);
    if (!cell) return;
    cell.output.add(ev);
    // an error thrown by a timer after the cell had finished: the cell is in error now
    if (ev.type === 'error' && ev.late && !cell.pending) {
      setStatus(cell, 'error', 'error after it finished');
      if (ev.line) markErrorLine(cell.view, ev.line);
    }
  },
  onReady: () => {
    $('engine-state').textContent = engineReady();
  },
  onBackend: (m) => {
    if (m.backend === 'webgpu') {
      gpuAdapter = m.adapter ?? gpuAdapter;
      document.body.dataset.backend = 'webgpu';
      $('backend-note').textContent = ''; // the choice and the engine line name the adapter
      return;
    }
    document.body.dataset.backend = 'cpu';
    if (m.error && backend === 'webgpu') {
      // The GPU was asked for and failed: the cells run on the CPU, and the page says why.
      backend = 'cpu';
      $('backend').value = 'cpu';
      $('backend-note').textContent = 'GPU failed to start: running on the CPU';
      notice(`The GPU backend could not start (${m.error}): the cells run on the CPU.`, 'warn');
    }
  },
  onFatal: (message) => {
    $('engine-state').textContent = 'Engine: failed to load';
    notice(/did not start/.test(message) ? `${message[0].toUpperCase()}${message.slice(1)}.` : `The engine did not load: ${message}`, 'error');
  },
});

/**
 * The backend choice (issue 21): the notebook restarts on the chosen engine (as Stop does:
 * the earlier cells' names are gone), and the notice says what changes on the GPU.
 */
function chooseBackend(want) {
  if (want === backend) return;
  backend = want;
  document.body.dataset.backend = 'switching';
  $('backend-note').textContent = want === 'webgpu' ? `Starting the GPU backend on ${gpuAdapter}…` : '';
  const { stale } = session.stop();
  runningAll = false;
  for (const id of stale) {
    const c = cells.get(id);
    c.el.dataset.stale = 'true';
    c.badge.textContent = `${c.badge.textContent} · re-run needed`;
  }
  $('engine-state').textContent = 'Engine: loading…';
  session.ensureWorker();
  setBusy();
  notice(
    want === 'webgpu'
      ? 'The cells now run on the GPU (kiln-dl\'s webgpu backend, a fresh engine). There, read tensors with await t.data() or await t.array(): printing a tensor, dataSync(), item(), the full engine\'s layers and (in this build) the Learner and the optimizers throw KilnError State. Switch back to CPU for those cells.'
      : 'The cells run on the CPU again (a fresh engine): run the earlier cells again.',
    want === 'webgpu' ? 'warn' : 'info',
  );
}

/** Offers the GPU when navigator.gpu yields an adapter (its name shown), else says why not. */
async function offerGpu() {
  const r = await probeGpu();
  const option = $('backend').querySelector('option[value="webgpu"]');
  if (r.adapter) {
    gpuAdapter = r.adapter;
    option.disabled = false;
    option.textContent = `GPU (${r.adapter})`;
    $('backend-note').textContent = '';
    document.body.dataset.gpu = 'available';
  } else {
    option.disabled = true;
    option.textContent = 'GPU (unavailable)';
    $('backend').title = `No GPU: ${r.reason}`;
    $('backend-note').textContent = `GPU unavailable: ${r.reason}`;
    document.body.dataset.gpu = 'unavailable';
  }
}

function setBusy() {
  const busy = session.busy || runningAll;
  document.body.toggleAttribute('data-busy', busy);
  $('stop').disabled = !busy;
  // one run at a time from the toolbar: Run all waits for the cells already running
  $('run-all').disabled = busy;
}

function setStatus(cell, status, note) {
  if (!cell) return;
  cell.el.dataset.status = status;
  cell.badge.textContent = note ?? { idle: '', running: 'running…', ok: 'ok', error: 'error' }[status];
  const active = status === 'running';
  cell.runBtn.disabled = active;
  cell.stopBtn.hidden = !active;
}

/**
 * Shows the notice under the toolbar (empty text hides it).
 * @param {string} text one or two short sentences
 * @param {'info'|'warn'|'error'} [kind]
 * @param {{label: string, run: () => void} | null} [action] a button in the notice
 */
function notice(text, kind = 'info', action = null) {
  const n = $('notice');
  n.hidden = !text;
  n.dataset.kind = kind;
  $('notice-text').textContent = text;
  const b = $('notice-action');
  b.hidden = !action;
  b.textContent = action?.label ?? '';
  b.onclick = action
    ? () => {
        notice('');
        action.run();
      }
    : null;
}

/** Runs one cell (after those already sent); resolves with its result. */
function runCell(cell) {
  // Run again while it runs or waits: the same run (not a second one)
  cell.pending ??= runCellNow(cell).finally(() => {
    cell.pending = null;
  });
  return cell.pending;
}

async function runCellNow(cell) {
  cell.output.clear();
  markErrorLine(cell.view, null);
  cell.el.removeAttribute('data-stale');
  setStatus(cell, 'running', 'waiting…');
  const code = cell.view.state.doc.toString();
  const p = session.run(cell.id, code);
  setBusy();
  const r = await p;
  // an error the worker did not show (Stop, an engine that did not load)
  if (r.error && !cell.output.hasError()) cell.output.add(r.error);
  if (r.error?.line) markErrorLine(cell.view, r.error.line);
  const note = r.status === 'ok' ? `ok · ${formatMs(r.ms)}` : r.error === STOPPED ? 'stopped' : 'error';
  setStatus(cell, r.status, note);
  setBusy();
  return r;
}

/** Reset: the original code, no output, idle. */
function resetCell(cell) {
  setCode(cell.view, cell.original);
  session.reset(cell.id);
  if (cell.pending) return; // running: its output is still coming
  cell.output.clear();
  markErrorLine(cell.view, null);
  cell.el.removeAttribute('data-stale');
  setStatus(cell, 'idle');
}

function formatMs(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Runs `ids` in order, stopping at the first that does not end ok. */
async function runList(ids) {
  if (runningAll || session.busy) return;
  runningAll = true;
  setBusy();
  notice('');
  const t0 = performance.now();
  let failed = null;
  try {
    for (const id of ids) {
      const r = await runCell(cells.get(id));
      if (r.status !== 'ok') {
        failed = r;
        break;
      }
    }
  } finally {
    runningAll = false;
    setBusy();
  }
  const took = formatMs(performance.now() - t0);
  const all = ids === order;
  if (!failed) notice(all ? `Ran all ${ids.length} cells in ${took}.` : `Ran ${ids.length} cell${ids.length === 1 ? '' : 's'} in ${took}.`);
  else if (failed.error !== STOPPED) notice(`${all ? 'Run all' : 'The run'} stopped at cell ${failed.id} (an error, shown under it).`, 'error');
}

const runAll = () => runList(order);

/** The ids as a short phrase: all of them when few, else the first and last. */
function idList(ids) {
  return ids.length <= 3 ? ids.join(', ') : `${ids[0]} … ${ids[ids.length - 1]}`;
}

function stop() {
  const { stopped, stale } = session.stop();
  runningAll = false;
  for (const id of stopped) {
    const c = cells.get(id);
    if (c && c.el.dataset.status === 'running') setStatus(c, 'error', 'stopped');
  }
  const rerun = stale.filter((id) => !stopped.includes(id));
  for (const id of rerun) {
    const c = cells.get(id);
    c.el.dataset.stale = 'true';
    c.badge.textContent = `${c.badge.textContent} · re-run needed`;
  }
  $('engine-state').textContent = 'Engine: restarting (a fresh worker)…';
  session.ensureWorker();
  const what = stopped.length ? `Stopped ${stopped[0]}${stopped.length > 1 ? ` (${stopped.length - 1} queued cancelled)` : ''}.` : 'Stopped.';
  const n = rerun.length;
  notice(
    n ? `${what} Fresh engine: the names of ${n} earlier cell${n === 1 ? '' : 's'} (${idList(rerun)}) are gone.` : `${what} The notebook restarted with a fresh engine.`,
    'warn',
    n ? { label: `Re-run ${n === 1 ? 'this cell' : `these ${n} cells`}`, run: () => runList(rerun) } : null,
  );
  setBusy();
}

// ---- the reader's files ----

/** The largest file the page accepts (it is held by the page and copied to the worker). */
const MAX_FILE_BYTES = 512 * 1024 * 1024;

function formatBytes(n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Gives the cells the files the reader dropped or chose: `files.get(name)` (a Uint8Array;
 * a newer file of a name replaces the older), and says so in the notice.
 * @param {File[]} list
 */
async function addFiles(list) {
  const added = [];
  const refused = [];
  for (const file of list) {
    if (file.size > MAX_FILE_BYTES) {
      refused.push(`${file.name} (${formatBytes(file.size)}: the page takes files up to ${formatBytes(MAX_FILE_BYTES)})`);
      continue;
    }
    try {
      session.addFile(file.name, new Uint8Array(await file.arrayBuffer()));
      added.push(file);
    } catch (e) {
      refused.push(`${file.name} (${e?.message ?? e})`);
    }
  }
  document.body.dataset.files = String(session.files.size);
  if (!added.length) {
    if (refused.length) notice(`Not added: ${refused.join('; ')}.`, 'error');
    return;
  }
  const first = added[0].name;
  const names = added.map((f) => `${f.name} (${formatBytes(f.size)})`).join(', ');
  const quoted = `files.get('${first.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}')`;
  const use = /\.(pt|pth)$/i.test(first) ? `; a PyTorch checkpoint loads with kiln.io.loadPytorch(${quoted})` : '';
  const more = added.length > 1 ? ' (each file by its name)' : '';
  const tail = refused.length ? ` Not added: ${refused.join('; ')}.` : '';
  notice(`Added ${names}. In a cell, ${quoted} is its bytes${more}, a Uint8Array${use}.${tail}`, refused.length ? 'warn' : 'info');
}

$('add-file').addEventListener('click', () => $('file-input').click());
$('file-input').addEventListener('change', async (ev) => {
  const list = [...ev.target.files];
  ev.target.value = ''; // the same file can be chosen again
  await addFiles(list);
});

// Files dropped anywhere on the page (an editor too: capture, before CodeMirror would
// insert a file's text) become `files`.
const hasFiles = (ev) => [...(ev.dataTransfer?.types ?? [])].includes('Files');
window.addEventListener(
  'dragover',
  (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    ev.stopPropagation();
    ev.dataTransfer.dropEffect = 'copy';
    document.body.dataset.dropping = '';
  },
  true,
);
window.addEventListener('dragleave', (ev) => {
  if (ev.relatedTarget === null) delete document.body.dataset.dropping;
});
window.addEventListener(
  'drop',
  (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    ev.stopPropagation();
    delete document.body.dataset.dropping;
    addFiles([...(ev.dataTransfer?.files ?? [])]);
  },
  true,
);

// ---- rendering ----

function compareTabs(cellEl, hasRust, hasCpp) {
  const tabs = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Burn, Kiln C++ and Kiln JS' });
  const names = [hasRust && ['rust', 'Burn (Rust)'], hasCpp && ['cpp', 'Kiln C++'], ['js', 'Kiln JS']].filter(Boolean);
  const select = (key, focus) => {
    cellEl.querySelector('.compare').dataset.tab = key;
    for (const b of tabs.children) {
      const on = b.dataset.tab === key;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
      if (on && focus) b.focus();
    }
  };
  names.forEach(([key, label], i) => {
    const b = el('button', { type: 'button', role: 'tab', 'data-tab': key, text: label });
    b.addEventListener('click', () => select(key, false));
    b.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      const next = names[(i + (e.key === 'ArrowRight' ? 1 : names.length - 1)) % names.length][0];
      select(next, true);
      e.preventDefault();
    });
    tabs.append(b);
  });
  return { tabs, select };
}

function staticPanel(kind, title, code, caption) {
  const codeEl = el('code');
  highlightInto(codeEl, code, kind);
  return el(
    'div',
    { class: `panel panel-${kind}`, role: 'tabpanel' },
    el('h4', { class: 'panel-title', text: title }),
    caption ? el('p', { class: 'panel-caption', text: caption }) : null,
    el('pre', { class: `code code-${kind}` }, codeEl),
  );
}

function renderCell(item, stepTitle) {
  const cellEl = el('div', { class: `cell${item.exercise ? ' exercise' : ''}`, 'data-cell': item.id, 'data-status': 'idle' });
  const badge = el('span', { class: 'badge', 'aria-live': 'polite' });
  const runBtn = el('button', { type: 'button', class: 'run', text: 'Run', title: 'Run this cell (Shift+Enter)', 'aria-label': `Run cell ${item.id}` });
  const resetBtn = el('button', { type: 'button', class: 'reset', text: 'Reset', title: "Restore this cell's original code and clear its output", 'aria-label': `Reset cell ${item.id} to its original code` });
  // Stop on the running cell itself (the toolbar's may be out of reach on a phone)
  const stopBtn = el('button', { type: 'button', class: 'stop-cell', text: 'Stop', title: 'Stop this cell (restarts the notebook)', 'aria-label': `Stop cell ${item.id}`, hidden: true });
  const head = el(
    'div',
    { class: 'cell-head' },
    el('span', { class: 'cell-label', text: item.exercise ? `Exercise · ${item.id}` : item.id }),
    runBtn,
    resetBtn,
    // after Run and Reset: showing it moves neither (a double click on Run never hits Stop)
    stopBtn,
    badge,
  );
  const editorBox = el('div', { class: 'editor' });
  const jsPanel = el('div', { class: 'panel panel-js', role: 'tabpanel' }, item.compare ? el('h4', { class: 'panel-title', text: 'Kiln JS' }) : null, head, editorBox);
  const compare = el('div', { class: `compare${item.compare ? ' has-compare' : ''}`, 'data-tab': 'js' });
  if (item.compare) {
    const { tabs, select } = compareTabs(cellEl, Boolean(item.compare.rust), Boolean(item.compare.cpp));
    cellEl.append(tabs);
    if (item.compare.rust) compare.append(staticPanel('rust', 'Burn (Rust)', item.compare.rust.code));
    if (item.compare.cpp) compare.append(staticPanel('cpp', 'Kiln C++', item.compare.cpp.code, item.compare.cpp.file));
    cellEl._select = select;
  }
  compare.append(jsPanel);
  const outEl = el('div', { class: 'output', 'data-output': '', 'aria-live': 'polite', 'aria-label': `Output of ${item.id}` });
  cellEl.append(compare, outEl);
  if (cellEl._select) cellEl._select('js', false);
  const cell = { id: item.id, el: cellEl, badge, runBtn, stopBtn, original: item.code, output: new OutputView(outEl), view: null, pending: null };
  cell.view = cellEditor(editorBox, item.code, { onRun: () => runCell(cell), label: `Code of cell ${item.id} (${stepTitle})` });
  runBtn.addEventListener('click', () => runCell(cell));
  stopBtn.addEventListener('click', () => {
    stop();
    runBtn.focus(); // the Stop button hides: keep the keyboard focus in the cell
  });
  resetBtn.addEventListener('click', () => resetCell(cell));
  cells.set(item.id, cell);
  order.push(item.id);
  return cellEl;
}

function render() {
  const main = $('steps');
  const toc = $('toc-list');
  if (!steps.length) main.append(el('p', { class: 'empty', text: 'No steps yet (web/tutorial/content/ is empty).' }));
  for (const step of steps) {
    const anchor = `step-${step.step}`;
    const section = el('section', { class: 'step', id: anchor, 'aria-labelledby': `${anchor}-h`, 'data-step': String(step.step) });
    section.append(el('h2', { id: `${anchor}-h`, text: `Step ${step.step} — ${step.title}` }));
    for (const item of step.items) {
      if (item.type === 'html') {
        const prose = el('div', { class: 'prose' });
        prose.innerHTML = item.html;
        for (const code of prose.querySelectorAll('pre > code[class*="language-"]')) {
          const lang = /language-(\w+)/.exec(code.className)?.[1];
          highlightInto(code, code.textContent, lang);
          code.parentElement.classList.add('code', `code-${lang}`);
        }
        section.append(prose);
      } else {
        section.append(renderCell(item, step.title));
      }
    }
    main.append(section);
    toc.append(el('li', {}, el('a', { href: `#${anchor}`, text: `${step.step}. ${step.title}` })));
  }
}

render();
// Start the worker (and load the engine) now, so the first run does not wait for it.
if (order.length) {
  $('engine-state').textContent = 'Engine: loading…';
  session.ensureWorker();
}
document.body.dataset.backend = 'cpu';
offerGpu();
$('backend').addEventListener('change', (e) => chooseBackend(e.target.value));
$('run-all').addEventListener('click', runAll);
$('stop').addEventListener('click', stop);
$('notice-close').addEventListener('click', () => notice(''));

// The sticky header's height (it grows with the notice): the TOC and the step headings
// are placed below it (tutorial.css reads --top-h).
new ResizeObserver(() => {
  const top = document.querySelector('.top');
  const fixed = getComputedStyle(top).position === 'sticky';
  document.documentElement.style.setProperty('--top-h', `${fixed ? Math.ceil(top.getBoundingClientRect().height) : 0}px`);
}).observe(document.querySelector('.top'));

window.kilnTutorial = {
  /** The text of a cell's output (see runtime/format.js outputText). */
  outputText: (id) => outputTextOf(document.querySelector(`[data-cell="${CSS.escape(id)}"] [data-output]`)),
  /** The cell ids in page order. */
  cells: () => [...order],
  /** The names of the files the reader gave the cells, oldest first. */
  files: () => [...session.files.keys()],
};

const MNIST_CACHE = 'kiln-mnist-v1'; // the name sw.js and worker.js use

/**
 * After the first visit: the MNIST files the cells load are fetched into the service
 * worker's cache in the background (one at a time), so Steps 12 and 13 run offline even
 * if their cells never ran online. Sets body[data-offline] and the #offline-state text.
 */
async function keepMnistOffline() {
  const state = $('offline-state');
  const say = (text, ready = false) => {
    state.textContent = text;
    if (ready) document.body.dataset.offline = 'ready';
  };
  await navigator.serviceWorker.ready;
  const cache = await caches.open(MNIST_CACHE);
  const files = Object.values(MNIST_FILES);
  let done = 0;
  for (const file of files) {
    const url = new URL(`../mnist/${file}`, location.href).href;
    if (!(await cache.match(url, { ignoreVary: true }))) {
      say(`Offline: saving MNIST (${done}/${files.length})…`);
      const r = await fetch(url);
      if (!r.ok) throw new Error(`${url} answered ${r.status}`);
      await cache.put(url, r);
    }
    done++;
  }
  say('Offline: ready', true);
}

if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  navigator.serviceWorker
    .register(new URL('../sw.js', location.href))
    // offline, the update check of an installed worker fails: the installed one still serves
    .catch((e) => {
      if (!navigator.serviceWorker.controller) throw e;
    })
    .then(() => keepMnistOffline())
    .catch((e) => {
      $('offline-state').textContent = `Offline: not available (${e.message})`;
    });
}
