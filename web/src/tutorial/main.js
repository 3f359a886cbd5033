// The tutorial page: renders the steps (built from web/tutorial/content/*.md by
// vite-tutorial.js), one CodeMirror editor per cell, runs cells in the notebook's Web
// Worker (session.js + worker.js), shows their output under them (output.js), and handles
// Run all, Stop (a fresh worker; the reader is told which cells to re-run) and reset.
//
// Test contract: each cell is an element [data-cell="<id>"] with data-status
// idle|running|ok|error and its output in [data-output]; the button #run-all; the page
// sets body[data-busy] while cells run; window.kilnTutorial.outputText(id) is the text
// of a cell's output (runtime/format.js's outputText).
import steps from 'virtual:kiln-tutorial';
import NotebookWorker from './worker.js?worker';
import { NotebookSession, STOPPED } from './session.js';
import { cellEditor, setCode, highlightInto, markErrorLine } from './editor.js';
import { OutputView, outputTextOf } from './output.js';

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

const session = new NotebookSession(() => new NotebookWorker({ name: location.href }), {
  onStart: (id) => setStatus(cells.get(id), 'running'),
  onEvent: (id, ev) => cells.get(id)?.output.add(ev),
  onReady: () => {
    $('engine-state').textContent = 'Engine: kiln-dl (WebAssembly) ready in a Web Worker';
  },
  onFatal: (message) => {
    $('engine-state').textContent = 'Engine: failed to load';
    notice(`The engine did not load: ${message}`, 'error');
  },
});

function setBusy() {
  const busy = session.busy || runningAll;
  document.body.toggleAttribute('data-busy', busy);
  $('stop').disabled = !busy;
}

function setStatus(cell, status, note) {
  if (!cell) return;
  cell.el.dataset.status = status;
  cell.badge.textContent = note ?? { idle: '', running: 'running…', ok: 'ok', error: 'error' }[status];
}

function notice(text, kind = 'info') {
  const n = $('notice');
  n.hidden = !text;
  n.dataset.kind = kind;
  n.textContent = text;
}

/** Runs one cell (after those already sent); resolves with its result. */
async function runCell(cell) {
  cell.output.clear();
  markErrorLine(cell.view, null);
  cell.el.removeAttribute('data-stale');
  setStatus(cell, 'running', 'waiting…');
  const code = cell.view.state.doc.toString();
  const p = session.run(cell.id, code);
  setBusy();
  const r = await p;
  if (r.error === STOPPED) cell.output.add(STOPPED);
  else if (r.error?.line) markErrorLine(cell.view, r.error.line);
  setStatus(cell, r.status, r.status === 'ok' ? `ok · ${formatMs(r.ms)}` : 'error');
  setBusy();
  return r;
}

function formatMs(ms) {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

async function runAll() {
  if (runningAll) return;
  runningAll = true;
  $('run-all').disabled = true;
  setBusy();
  notice('');
  const t0 = performance.now();
  let failed = null;
  try {
    for (const id of order) {
      const r = await runCell(cells.get(id));
      if (r.status !== 'ok') {
        failed = r;
        break;
      }
    }
  } finally {
    runningAll = false;
    $('run-all').disabled = false;
    setBusy();
  }
  const took = formatMs(performance.now() - t0);
  if (!failed) notice(`Ran all ${order.length} cells in ${took}.`);
  else if (failed.error !== STOPPED) notice(`Run all stopped at cell ${failed.id} (an error, shown under it).`, 'error');
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
  const what = stopped.length ? `Stopped ${stopped[0]}${stopped.length > 1 ? ` (and cancelled ${stopped.slice(1).join(', ')})` : ''}. ` : 'Stopped. ';
  notice(
    rerun.length
      ? `${what}The notebook restarted with a fresh engine, so the names defined by earlier cells are gone: re-run ${rerun.join(', ')} (in this order) before the cells that use them.`
      : `${what}The notebook restarted with a fresh engine.`,
    'warn',
  );
  setBusy();
}

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
  const resetBtn = el('button', { type: 'button', class: 'reset', text: 'Reset', title: "Restore this cell's original code", 'aria-label': `Reset cell ${item.id} to its original code` });
  const head = el(
    'div',
    { class: 'cell-head' },
    el('span', { class: 'cell-label', text: item.exercise ? `Exercise · ${item.id}` : item.id }),
    runBtn,
    resetBtn,
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
  const cell = { id: item.id, el: cellEl, badge, original: item.code, output: new OutputView(outEl), view: null };
  cell.view = cellEditor(editorBox, item.code, { onRun: () => runCell(cell), label: `Code of cell ${item.id} (${stepTitle})` });
  runBtn.addEventListener('click', () => runCell(cell));
  resetBtn.addEventListener('click', () => setCode(cell.view, cell.original));
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
$('run-all').addEventListener('click', runAll);
$('stop').addEventListener('click', stop);

window.kilnTutorial = {
  /** The text of a cell's output (see runtime/format.js outputText). */
  outputText: (id) => outputTextOf(document.querySelector(`[data-cell="${CSS.escape(id)}"] [data-output]`)),
  /** The cell ids in page order. */
  cells: () => [...order],
};

if (import.meta.env.PROD && 'serviceWorker' in navigator) {
  navigator.serviceWorker.register(new URL('../sw.js', location.href)).catch((e) => {
    notice(`Offline use is not available: ${e.message}`, 'warn');
  });
}
