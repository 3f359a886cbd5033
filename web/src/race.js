// "Race" (issue 18): the set-up on the page (A) against B, which differs only in its
// training settings (optimizer, learning rate, momentum, batch size, weight decay,
// regularization and its rate), trained
// side by side in the worker (race-worker.js) on the same data from the same seed, hence
// the same initial weights. Both sides' curves go on the page's loss and accuracy charts,
// each labelled; a results table and a winner line follow. The main run is paused while
// racing; training it again (or any change of set-up) ends the race and brings its own
// curves back.
import './race.css';
import { OPTIMIZERS, OPTIMIZER_NAMES, NUMBER_FIELDS, REGS, REG_NAMES, REG_RATES } from './state.js';
import { showFieldError, clearFieldError } from './fielderror.js';
import { drawBoundary } from './views.js';
import { GRID } from './datasets.js';

/** The race maps' canvas size in pixels (the worker's grid is given at 'ready': mapSize). */
const MAP_PX = 160;

const COLORS = ['#e8710a', '#1967d2']; // A, B
const TRAINING_KEYS = ['opt', 'lr', 'momentum', 'batch', 'wd', 'reg', 'regRate'];
const field = (key) => NUMBER_FIELDS.find((f) => f.key === key);

/** A side's training settings in words: "Adam, lr 0.01, batch 16". */
export function describeSide(s) {
  const parts = [OPTIMIZER_NAMES[s.opt] ?? s.opt, `lr ${s.lr}`];
  if (s.opt === 'sgd') parts.push(`momentum ${s.momentum}`);
  parts.push(`batch ${s.batch}`);
  if (s.wd > 0) parts.push(`weight decay ${s.wd}`);
  if ((s.reg ?? 'none') !== 'none' && s.regRate > 0) parts.push(`${REG_NAMES[s.reg]} ${s.regRate}`);
  return parts.join(', ');
}

/**
 * The winner of a finished race: the side with the higher test accuracy, then the lower
 * test loss; a side whose training failed loses. Equal to 1e-9 is a tie.
 * @param {{failed: object | null, test: {loss: number, accuracy: number | null} | null}[]} results [A, B]
 * @returns {{winner: 0 | 1 | null, reason: 'accuracy' | 'loss' | 'failed' | 'tie' | 'both-failed'}}
 */
export function decideWinner(results) {
  const [a, b] = results;
  if (a.failed && b.failed) return { winner: null, reason: 'both-failed' };
  if (a.failed || b.failed) return { winner: a.failed ? 1 : 0, reason: 'failed' };
  const [ta, tb] = [a.test, b.test];
  if (ta.accuracy != null && tb.accuracy != null && Math.abs(ta.accuracy - tb.accuracy) > 1e-9) {
    return { winner: ta.accuracy > tb.accuracy ? 0 : 1, reason: 'accuracy' };
  }
  if (Math.abs(ta.loss - tb.loss) > 1e-9) return { winner: ta.loss < tb.loss ? 0 : 1, reason: 'loss' };
  return { winner: null, reason: 'tie' };
}

const pct = (v) => `${(v * 100).toFixed(2)} %`;

function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

export class Race {
  /**
   * @param {{root: HTMLElement, worker: Worker, charts: import('./charts.js').Charts,
   *   current: () => {state: object, spec: object, ok: boolean}, pauseMain: () => void,
   *   mnistBase: () => string, csv: () => object | null}} opts
   */
  constructor(opts) {
    Object.assign(this, opts);
    this.id = 0;
    this.active = false; // a race's curves are on the charts
    this.running = false;
    this.saved = null; // the main run's chart datasets while a race shows
    this.sides = null;
    this.b = null; // B's settings (initialised from A on first use)
    this.build();
  }

  build() {
    const { root } = this;
    const opt = el('select', { id: 'race-opt' }, ...OPTIMIZERS.map((o) => el('option', { value: o, textContent: OPTIMIZER_NAMES[o] })));
    const num = (key, step) => {
      const f = field(key);
      return el('input', { id: `race-${key}`, type: 'number', min: String(f.min), max: String(f.max), step: String(step), inputMode: 'decimal' });
    };
    const row = (key, text, control, cls = 'field') => el('div', { className: cls }, el('label', { htmlFor: `race-${key}`, textContent: text }), control);
    const reg = el('select', { id: 'race-reg' }, ...REGS.map((r) => el('option', { value: r, textContent: REG_NAMES[r] })));
    const regRate = el('select', { id: 'race-regRate' }, ...REG_RATES.map((r) => el('option', { value: String(r), textContent: String(r) })));
    this.inputs = { opt, lr: num('lr', 'any'), momentum: num('momentum', 0.05), batch: num('batch', 1), wd: num('wd', 'any'), reg, regRate };
    this.start = el('button', { type: 'button', id: 'race-start', textContent: 'Start race' });
    this.stopBtn = el('button', { type: 'button', id: 'race-stop', textContent: 'Stop', disabled: true });
    this.status = el('p', { id: 'race-status', className: 'race-status' });
    this.status.setAttribute('aria-live', 'polite');
    this.winner = el('p', { id: 'race-winner', className: 'race-winner' });
    this.winner.setAttribute('aria-live', 'polite');
    this.table = el('table', { id: 'race-table', className: 'race-table' });
    // Toy data: each side's decision boundary, side by side, as training goes.
    this.mapCanvases = ['A', 'B'].map((name) => {
      const c = el('canvas', { id: `race-map-${name.toLowerCase()}`, width: MAP_PX, height: MAP_PX });
      c.setAttribute('role', 'img');
      c.setAttribute('aria-label', `Decision boundary of set-up ${name}`);
      return c;
    });
    this.mapCaptions = ['A', 'B'].map((name) => el('figcaption', { textContent: name }));
    this.maps = el('div', { className: 'race-maps', hidden: true }, ...this.mapCanvases.map((c, i) => el('figure', {}, c, this.mapCaptions[i])));
    root.replaceChildren(
      el('h2', { id: 'h-race', textContent: 'Race' }),
      el('p', { className: 'hint', textContent: 'Train the set-up above (A) against B, which differs only in its training settings, side by side: same layers, data, seed and initial weights. Both curves go on the charts above.' }),
      el(
        'fieldset',
        { className: 'race-b' },
        el('legend', { textContent: 'Set-up B' }),
        el(
          'div',
          { className: 'grid2' },
          row('opt', 'Optimizer', opt, 'field wide'),
          row('lr', 'Learning rate', this.inputs.lr),
          row('momentum', 'Momentum', this.inputs.momentum, 'field race-sgd'),
          row('batch', 'Batch size', this.inputs.batch),
          row('wd', 'Weight decay', this.inputs.wd),
          row('reg', 'Regularization', reg),
          row('regRate', 'Regularization rate', regRate),
        ),
      ),
      el('div', { className: 'buttons' }, this.start, this.stopBtn),
      this.status,
      this.winner,
      this.maps,
      this.table,
    );
    root.setAttribute('aria-labelledby', 'h-race');
    opt.addEventListener('change', () => this.showSgd());
    // The run's own actions elsewhere on the page (live.js's Undo and One more epoch) end the
    // race view first, so they find the run's curves on the charts (capture: before them).
    document.addEventListener('click', (e) => {
      if (this.active && e.target instanceof Element && e.target.closest('#undo-btn, #more-btn')) this.leave();
    }, true);
    this.start.addEventListener('click', () => this.begin());
    this.stopBtn.addEventListener('click', () => this.halt('Stopped.'));
  }

  showSgd() {
    this.root.classList.toggle('race-is-sgd', this.inputs.opt.value === 'sgd');
  }

  /** B's inputs from A on first use: the other optimizer family (SGD <-> Adam), A's other settings. */
  prepare(a) {
    if (this.b) return;
    this.b = { opt: a.opt === 'sgd' ? 'adam' : 'sgd', lr: a.lr, momentum: a.momentum, batch: a.batch, wd: a.wd, reg: a.reg ?? 'none', regRate: a.regRate ?? 0 };
    for (const k of TRAINING_KEYS) this.inputs[k].value = String(this.b[k]);
    if (this.inputs.regRate.value === '') this.inputs.regRate.value = '0'; // a rate off TF Playground's list
    this.showSgd();
  }

  /** Reads B's inputs; shows a message beside each bad one. @returns {object | null} */
  readB() {
    const b = { opt: this.inputs.opt.value, reg: this.inputs.reg.value, regRate: Number(this.inputs.regRate.value) };
    let ok = true;
    for (const k of ['lr', 'momentum', 'batch', 'wd']) {
      const input = this.inputs[k];
      const f = field(k);
      const v = input.value.trim() === '' ? NaN : Number(input.value);
      if (!Number.isFinite(v) || v < f.min || v > f.max || (f.int && !Number.isInteger(v))) {
        showFieldError(input, `B's ${f.label}: ${input.value.trim() === '' ? 'empty' : `"${input.value}"`} is not ${f.int ? 'an integer' : 'a number'} from ${f.min} to ${f.max}.`);
        ok = false;
      } else {
        clearFieldError(input);
        b[k] = v;
      }
    }
    return ok ? b : null;
  }

  /** Starts a race of the page's set-up (A) against B. */
  begin() {
    const cur = this.current();
    if (!cur.ok) {
      this.status.textContent = 'Fix the model first (see the messages under Model).';
      return;
    }
    this.prepare(cur.state);
    const b = this.readB();
    if (!b) {
      this.status.textContent = 'Fix B\'s settings (see the messages beside them).';
      return;
    }
    this.b = b;
    this.pauseMain();
    const a = structuredClone(cur.state);
    const sides = [a, { ...structuredClone(cur.state), ...b }];
    this.sides = sides;
    this.id++;
    this.running = true;
    this.winner.textContent = '';
    this.table.replaceChildren();
    this.results = [null, null];
    this.initial = [null, null]; // test losses before training (equal: same initial weights)
    this.start.disabled = true;
    this.stopBtn.disabled = false;
    document.body.dataset.race = 'running';
    this.worker.postMessage({ type: 'raceStart', race: this.id, mnistBase: this.mnistBase(), csv: this.csv(), sides: sides.map((state) => ({ state, spec: cur.spec })) });
  }

  /** Puts four labelled curves per chart (A and B, train and test), keeping the main run's. */
  showCurves(sides) {
    const { loss, acc } = this.charts;
    if (!this.active) this.saved = [loss.data.datasets, acc.data.datasets];
    this.active = true;
    for (const [chart, what] of [[loss, 'loss'], [acc, 'accuracy']]) {
      chart.data.datasets = sides.flatMap((s, i) => {
        const name = i === 0 ? 'A' : 'B';
        const color = COLORS[i];
        return [
          { label: `${name} train ${what}`, data: [], borderColor: color, backgroundColor: color, borderWidth: 1.2, borderDash: [4, 3], pointRadius: 0, tension: 0 },
          { label: `${name} test ${what}`, data: [], borderColor: color, backgroundColor: color, borderWidth: 2.2, pointRadius: (ctx) => (ctx.dataset.data.length > 60 ? 0 : 2), tension: 0 },
        ];
      });
    }
    this.charts.schedule();
  }

  /** The race ends (if running) and the main run's curves come back. */
  leave() {
    if (this.running) this.halt(null);
    if (!this.active) return;
    this.charts.loss.data.datasets = this.saved[0];
    this.charts.acc.data.datasets = this.saved[1];
    this.saved = null;
    this.active = false;
    this.charts.schedule();
    this.status.textContent = '';
    this.winner.textContent = '';
    this.table.replaceChildren();
    this.maps.hidden = true;
    delete document.body.dataset.race;
  }

  halt(text) {
    if (!this.running) return;
    this.worker.postMessage({ type: 'raceStop', race: this.id });
    this.running = false;
    this.start.disabled = false;
    this.stopBtn.disabled = true;
    if (text) this.status.textContent = text;
    document.body.dataset.race = 'stopped';
  }

  /** A `race` message from the worker. */
  onMessage(m) {
    if (m.race !== this.id || !this.running) return;
    if (!this.active && m.kind !== 'ready' && m.kind !== 'status' && m.kind !== 'error') return;
    switch (m.kind) {
      case 'status':
        this.status.textContent = m.text;
        break;
      case 'ready':
        // Shown now, not at Start: the main run's last points (its pause) came before this.
        this.showCurves(this.sides);
        this.view = m.view;
        this.mapSize = m.mapSize;
        this.maps.hidden = !m.view;
        this.sides.forEach((side, i) => {
          this.mapCaptions[i].textContent = `${i === 0 ? 'A' : 'B'}: ${describeSide(side)}`;
          this.mapCanvases[i].setAttribute('aria-label', `Decision boundary of set-up ${i === 0 ? 'A' : 'B'} (${describeSide(side)}) over the plane, with the training points`);
        });
        break;
      case 'train':
        this.charts.push(2 * m.side, m.epoch, m.loss, m.accuracy);
        break;
      case 'eval':
        this.charts.push(2 * m.side + 1, m.epoch, m.loss, m.accuracy);
        if (m.map && this.view) {
          const v = this.view;
          drawBoundary(this.mapCanvases[m.side], m.map, { ...GRID, size: this.mapSize, classes: v.classes, task: v.task, showTest: false }, v);
          this.mapCanvases[m.side].dataset.step = String(m.step);
        }
        this.results[m.side] = m;
        if (m.step === 0) this.initial[m.side] = m.loss;
        this.status.textContent = `Racing… A at epoch ${(this.results[0]?.epoch ?? 0).toFixed(2)}, B at epoch ${(this.results[1]?.epoch ?? 0).toFixed(2)}.`;
        break;
      case 'failed':
        this.status.textContent = `${m.side === 0 ? 'A' : 'B'} stopped at step ${m.step}: ${m.message}`;
        break;
      case 'done':
        this.finish(m.results);
        break;
      case 'error':
        this.status.textContent = `The race could not run: ${m.message}`;
        this.halt(null);
        break;
      default:
        break;
    }
  }

  finish(results) {
    this.running = false;
    this.start.disabled = false;
    this.stopBtn.disabled = true;
    const names = this.sides.map((s, i) => `${i === 0 ? 'A' : 'B'} (${describeSide(s)})`);
    const { winner, reason } = decideWinner(results);
    const epochs = Math.max(...results.map((r) => r.epoch));
    const after = `after ${epochs} epoch${epochs === 1 ? '' : 's'}`;
    const vs = (k, fmt) => `${fmt(results[winner].test[k])} vs ${fmt(results[1 - winner].test[k])}`;
    let text;
    if (reason === 'both-failed') text = 'No winner: both set-ups failed (lower the learning rates).';
    else if (reason === 'failed') text = `Winner: ${names[winner]}; ${names[1 - winner].split(' ')[0]} failed at step ${results[1 - winner].failed.step}.`;
    else if (reason === 'tie') text = `A tie: both reach test loss ${results[0].test.loss.toFixed(4)}${results[0].test.accuracy != null ? ` and test accuracy ${pct(results[0].test.accuracy)}` : ''} ${after}.`;
    else {
      const acc = results[0].test.accuracy != null ? `test accuracy ${vs('accuracy', pct)}, ` : '';
      text = `Winner: ${names[winner]}: ${acc}test loss ${vs('loss', (v) => v.toFixed(4))} ${after}.`;
    }
    this.winner.textContent = text;
    this.winner.dataset.winner = winner === null ? '' : winner === 0 ? 'A' : 'B';
    this.status.textContent = 'Race finished.';
    const head = el('tr', {}, ...['Set-up', 'Settings', 'Test loss at start', 'Steps', 'Test loss', 'Test accuracy'].map((h) => el('th', { scope: 'col', textContent: h })));
    const rows = results.map((r, i) =>
      el(
        'tr',
        { className: i === winner ? 'race-won' : '' },
        el('th', { scope: 'row', textContent: i === 0 ? 'A' : 'B' }),
        el('td', { textContent: describeSide(this.sides[i]) }),
        el('td', { textContent: this.initial[i] === null ? '–' : this.initial[i].toFixed(4) }),
        el('td', { textContent: String(r.step) }),
        el('td', { textContent: r.test ? r.test.loss.toFixed(4) : '–' }),
        el('td', { textContent: r.failed ? `failed at step ${r.failed.step}` : r.test?.accuracy != null ? pct(r.test.accuracy) : '–' }),
      ),
    );
    this.table.replaceChildren(el('thead', {}, head), el('tbody', {}, ...rows));
    document.body.dataset.race = 'done';
  }
}
