// The page's Export menu: PyTorch, Kiln JS and Kiln C++ programs of the current model and
// training set-up, plus its trained weights (SafeTensors). Choosing an entry asks the worker
// for the weights and its outputs on the test items (one snapshot, export/snapshot.js),
// writes the program (export/*.js, pure) and shows it in a dialog with its downloads.
import { exportSetup } from './export/setup.js';
import { TARGETS, programFile, weightsFile } from './export/targets.js';
import './export.css';

/** Statuses in which the worker has a model to export. */
const READY = ['idle', 'paused', 'training', 'done'];

function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function download(name, blob) {
  const a = el('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

/**
 * Builds the Export menu into `root` and its dialog.
 * @param {object} p
 * @param {HTMLElement} p.root where the menu button goes (the Keep section's buttons)
 * @param {Worker} p.worker the training worker
 * @param {() => number} p.run the current run id
 * @param {() => object} p.state the current set-up (state.js)
 * @param {() => {ok: boolean, spec: object}} p.desc describeModel() of the set-up
 * @param {() => object | null} p.view the worker's view of the data
 * @param {(state: object) => string} p.link the set-up's URL fragment (state.js encodeState)
 * @returns {{onExported(m: object): void}} the worker's 'exported' messages go to onExported
 */
export function initExport({ root, worker, run, state, desc, view, link }) {
  let requestId = 0;
  let pending = null; // {id, target}
  let current = null; // {setup, target, code, weights}

  const btn = el('button', { type: 'button', id: 'export-btn', textContent: 'Export ▾', disabled: true });
  btn.setAttribute('aria-haspopup', 'menu');
  btn.setAttribute('aria-expanded', 'false');
  btn.setAttribute('aria-controls', 'export-menu');
  const items = [
    ...Object.entries(TARGETS).map(([key, t]) => [key, t.label, `${t.ext} + weights`]),
    ['weights', 'Weights only', '.safetensors'],
  ].map(([key, label, hint]) => {
    const b = el('button', { type: 'button', className: 'export-item' }, label, ' ', el('small', { textContent: hint }));
    b.dataset.target = key;
    b.setAttribute('role', 'menuitem');
    return b;
  });
  const menu = el('ul', { id: 'export-menu', className: 'export-menu', hidden: true }, ...items.map((b) => el('li', { role: 'none' }, b)));
  menu.setAttribute('role', 'menu');
  menu.setAttribute('aria-label', 'Export as');
  const error = el('p', { id: 'export-error', className: 'export-error', hidden: true });
  error.setAttribute('role', 'alert');
  const box = el('div', { className: 'export' }, btn, menu, error);
  root.append(box);

  const title = el('h2', { id: 'export-title' });
  const about = el('p', { id: 'export-about', className: 'hint' });
  const runCode = el('code', { id: 'export-run' });
  const dlCode = el('button', { type: 'button', id: 'export-dl-code', className: 'primary', textContent: 'Download the program' });
  const dlWeights = el('button', { type: 'button', id: 'export-dl-weights', textContent: 'Download the weights' });
  const copy = el('button', { type: 'button', id: 'export-copy', textContent: 'Copy code' });
  const close = el('button', { type: 'button', id: 'export-close', textContent: 'Close' });
  const copied = el('span', { id: 'export-copied', className: 'hint' });
  copied.setAttribute('aria-live', 'polite');
  const code = el('code', { id: 'export-code' });
  const pre = el('pre', { className: 'export-code', tabIndex: 0 }, code);
  pre.setAttribute('aria-label', 'The exported program');
  const dialog = el(
    'dialog',
    { id: 'export-dialog', className: 'export-dialog' },
    title,
    about,
    el('div', { className: 'buttons' }, dlCode, dlWeights, copy, close, copied),
    el('p', { className: 'export-run-label', textContent: 'Run it:' }),
    el('pre', { className: 'export-run' }, runCode),
    pre,
  );
  dialog.setAttribute('aria-labelledby', 'export-title');
  document.body.append(dialog);

  const showError = (text) => {
    error.textContent = text;
    error.hidden = !text;
  };

  // The menu is usable while the worker has a model (body[data-status], set by main.js).
  const syncStatus = () => {
    const ok = READY.includes(document.body.dataset.status);
    btn.disabled = !ok || pending !== null;
    btn.title = ok ? 'Code and weights of this model and set-up' : 'Export needs a model: wait until it is ready (or fix the model)';
    if (!ok) closeMenu(false);
  };
  new MutationObserver(syncStatus).observe(document.body, { attributes: true, attributeFilter: ['data-status'] });

  function openMenu() {
    menu.hidden = false;
    btn.setAttribute('aria-expanded', 'true');
    items[0].focus();
  }
  function closeMenu(focusButton = true) {
    if (menu.hidden) return;
    menu.hidden = true;
    btn.setAttribute('aria-expanded', 'false');
    if (focusButton) btn.focus();
  }

  btn.addEventListener('click', () => (menu.hidden ? openMenu() : closeMenu()));
  btn.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown' && menu.hidden) {
      ev.preventDefault();
      openMenu();
    }
  });
  menu.addEventListener('keydown', (ev) => {
    const i = items.indexOf(document.activeElement);
    const move = { ArrowDown: 1, ArrowUp: -1 }[ev.key];
    if (move) {
      ev.preventDefault();
      items[(i + move + items.length) % items.length].focus();
    } else if (ev.key === 'Home' || ev.key === 'End') {
      ev.preventDefault();
      items[ev.key === 'Home' ? 0 : items.length - 1].focus();
    } else if (ev.key === 'Escape') {
      ev.preventDefault();
      closeMenu();
    } else if (ev.key === 'Tab') {
      closeMenu(false);
    }
  });
  document.addEventListener('click', (ev) => {
    if (!box.contains(ev.target)) closeMenu(false);
  });
  for (const item of items) {
    item.addEventListener('click', () => {
      closeMenu();
      request(item.dataset.target);
    });
  }

  function request(target) {
    showError('');
    const d = desc();
    if (!d?.ok) {
      showError('Export: the model is not valid; fix it under Model first.');
      return;
    }
    pending = { id: ++requestId, target };
    btn.textContent = 'Preparing…';
    btn.setAttribute('aria-busy', 'true');
    syncStatus();
    worker.postMessage({ type: 'export', run: run(), id: pending.id });
  }

  function onExported(m) {
    if (!pending || m.id !== pending.id) return;
    const { target } = pending;
    pending = null;
    btn.textContent = 'Export ▾';
    btn.removeAttribute('aria-busy');
    syncStatus();
    if (m.error) {
      showError(`Export: ${m.error.message}`);
      return;
    }
    let setup;
    try {
      const s = state();
      setup = exportSetup({ state: s, spec: desc().spec, view: view(), check: m.check, link: link(s) });
    } catch (e) {
      showError(e.message);
      return;
    }
    const weights = new Blob([m.weights], { type: 'application/octet-stream' });
    if (target === 'weights') {
      download(weightsFile(setup), weights);
      document.body.dataset.exported = 'weights';
      return;
    }
    const t = TARGETS[target];
    let text;
    try {
      text = t.generate(setup);
    } catch (e) {
      showError(e.message);
      return;
    }
    current = { setup, target, text, weights };
    title.textContent = `Export: ${t.label}`;
    const trained = m.step === 0 ? 'the initial (untrained) weights' : `the weights after ${m.step === 1 ? '1 step' : `${m.step.toLocaleString('en-US')} steps`} (epoch ${m.epoch.toFixed(2)})`;
    about.textContent =
      `${programFile(setup, target)}: this model and training set-up as a runnable program (${setup.toy ? 'the page\'s points embedded' : 'MNIST read from its IDX files'}). ` +
      `${weightsFile(setup)}: ${trained}; with them the program prints how far its outputs are from the page's on ${m.check.count} test items.`;
    runCode.textContent = t.run(setup).join('\n');
    dlCode.textContent = `Download ${programFile(setup, target)}`;
    dlWeights.textContent = `Download ${weightsFile(setup)}`;
    code.textContent = text;
    copied.textContent = '';
    dialog.dataset.target = target;
    dialog.dataset.step = String(m.step);
    if (!dialog.open) dialog.showModal();
    dlCode.focus();
  }

  dlCode.addEventListener('click', () => {
    if (current) download(programFile(current.setup, current.target), new Blob([current.text], { type: TARGETS[current.target].mime }));
  });
  dlWeights.addEventListener('click', () => {
    if (current) download(weightsFile(current.setup), current.weights);
  });
  copy.addEventListener('click', async () => {
    if (!current) return;
    try {
      await navigator.clipboard.writeText(current.text);
      copied.textContent = 'Copied.';
    } catch {
      const range = document.createRange();
      range.selectNodeContents(code);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      copied.textContent = 'Selected: copy it with Ctrl+C (the browser did not allow copying).';
    }
  });
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => btn.focus());

  syncStatus();
  return { onExported };
}
