// "Train without losing the model" (issue 18), the page's side (live-worker.js is the
// worker's): the learning rate, batch size, weight decay, momentum, optimizer, dropout and
// epochs change while the model trains, as in ConvNetJS (step count, weights, optimizer
// state and charts kept); a change of the data or the layers starts a new model, with a
// notice and an Undo that brings back the previous set-up and its trained model; "Train
// forever" (TF Playground) and "One more epoch" after Done.
import './live.css';
import { classifyChange } from './live-change.js';
import { setMarks } from './live-marks.js';

const $ = (id) => document.getElementById(id);
const fmtInt = (v) => Math.round(v).toLocaleString('en-US');
const MAX_LOG = 6;

/**
 * The page's hooks into main.js.
 * @typedef {object} LiveHost
 * @property {Worker} worker
 * @property {() => object} getState the page's set-up
 * @property {(s: object) => void} setState replaces it (and re-renders the controls and the URL)
 * @property {() => number} getRun the current run id
 * @property {() => number} nextRun a new run id (messages of older runs are dropped)
 * @property {() => string} getStatus
 * @property {(s: string, message?: string) => void} setStatus
 * @property {() => {ok: boolean, spec: object}} describe the model of the page's set-up
 * @property {import('./charts.js').Charts} charts
 * @property {(id: string, value: number|null, fmt?: (v: number) => string) => void} showMetric
 * @property {(text: string, kind?: string) => void} say
 * @property {() => void} reset a new model from the page's set-up (after a delay)
 */

const METRICS = ['m-epoch', 'm-step', 'm-train-loss', 'm-train-acc', 'm-test-loss', 'm-test-acc', 'm-speed'];

export class Live {
  /** @param {LiveHost} host */
  constructor(host) {
    this.host = host;
    this.posted = null; // {run, state, step}: the run the worker holds
    this.undo = null; // snapshot(): the previous trained run, kept for Undo
    this.epoch = 0; // the current run's epochs (fractional), as last reported
    this.pending = []; // the changes sent to the worker, answered in order by 'retuned'
    this.marks = []; // [{epoch, label}] on the charts
    this.forever = $('forever');
    this.more = $('more-btn');
    this.notice = $('live-notice');
    this.log = $('live-log');
    this.forever.addEventListener('change', () => this.sendForever());
    this.more.addEventListener('click', () => this.oneMoreEpoch());
  }

  /**
   * A setting changed in the page. Applies it to the running model if it is a training
   * setting and the model is ready; returns false when a new model is needed (the caller
   * resets).
   */
  apply() {
    const { host } = this;
    if (!this.posted || !['idle', 'paused', 'training', 'done'].includes(host.getStatus())) return false;
    const state = host.getState();
    const change = classifyChange(this.posted.state, state);
    if (change.kind === 'reset') return false;
    if (change.kind === 'same') return true;
    const desc = host.describe();
    if (!desc.ok) return false;
    host.worker.postMessage({ type: 'retune', run: this.posted.run, state: structuredClone(state), spec: desc.spec });
    this.pending.push({ change, before: this.posted.state });
    this.posted.state = structuredClone(state);
    return true;
  }

  /** Before a new model replaces the current one: keeps the current one for Undo if it trained. */
  beforeSetup() {
    const p = this.posted;
    if (p && p.step > 0 && this.undo?.run !== p.run) this.undo = this.snapshot(p);
  }

  /** What Undo needs to bring back a run: its set-up, charts, marks and metric tiles. */
  snapshot(p) {
    const m = Object.fromEntries(METRICS.map((id) => [id, { text: $(id).textContent, value: $(id).dataset.value ?? '' }]));
    return { run: p.run, state: structuredClone(p.state), charts: this.host.charts.snapshot(), marks: [...this.marks], metrics: m, step: p.step };
  }

  /** Whether the worker should keep the run it replaces (the one Undo brings back). */
  get keep() {
    return this.undo !== null && this.undo.run === this.posted?.run;
  }

  /** A new model was sent to the worker: shows the notice with Undo if one is kept. */
  afterSetup(run, state) {
    this.posted = { run, state: structuredClone(state), step: 0 };
    this.epoch = 0;
    this.pending = [];
    this.showMarks([]);
    this.clearLog();
    this.showNotice(state);
  }

  /**
   * The notice of a new model (or, after Undo, of the model brought back) with Undo when a
   * trained one is kept.
   */
  showNotice(state, lead = 'A new model', left = 'The previous one') {
    const u = this.undo;
    if (!u) {
      this.notice.hidden = true;
      return;
    }
    const { reset } = classifyChange(u.state, state);
    const why = reset.length ? `${lead}: ${reset.join('; ')}.` : `${lead} from the same set-up.`;
    const acc = u.metrics['m-test-acc'].value;
    const what = `${left} (step ${fmtInt(u.step)}${acc !== '' && acc !== 'null' ? `, test accuracy ${(Number(acc) * 100).toFixed(1)} %` : ''}) is kept.`;
    const text = document.createElement('span');
    text.textContent = `${why} ${what}`;
    const undo = document.createElement('button');
    undo.type = 'button';
    undo.id = 'undo-btn';
    undo.textContent = 'Undo';
    undo.title = 'Bring back the previous set-up and its trained model';
    undo.addEventListener('click', () => this.doUndo());
    const close = document.createElement('button');
    close.type = 'button';
    close.className = 'close';
    close.textContent = '×';
    close.setAttribute('aria-label', 'Dismiss (the previous model stays kept until the next new model)');
    close.addEventListener('click', () => {
      this.notice.hidden = true;
    });
    this.notice.replaceChildren(text, undo, close);
    this.notice.hidden = false;
  }

  /** Brings back the kept set-up and its model, charts and metrics. */
  doUndo() {
    const u = this.undo;
    if (!u) return;
    const { host } = this;
    // The model being left is kept in its turn if it trained: Undo again swaps back.
    const p = this.posted;
    const left = p && p.step > 0 && p.run !== u.run ? this.snapshot(p) : null;
    this.undo = left;
    const run = host.nextRun();
    host.setState(structuredClone(u.state));
    host.charts.restore(u.charts);
    this.pending = [];
    this.showMarks(u.marks);
    for (const [id, { text, value }] of Object.entries(u.metrics)) {
      $(id).textContent = text;
      $(id).dataset.value = value;
    }
    this.posted = { run, state: structuredClone(u.state), step: u.step };
    this.clearLog();
    host.setStatus('loading', 'Bringing back the previous model…');
    host.worker.postMessage({ type: 'undo', run, from: u.run, keep: left !== null });
    this.showNotice(u.state, 'Undo: the previous model is back', 'The model you left');
  }

  /** Messages of the current run (main.js passes each one before its own handling). */
  onMessage(m) {
    const { host } = this;
    switch (m.type) {
      case 'ready':
        if (this.forever.checked) this.sendForever();
        break;
      case 'progress':
        if (this.posted && m.run === this.posted.run) this.posted.step = m.step;
        this.epoch = m.epoch;
        if (Number.isFinite(m.lr)) this.showLr(m.lr);
        break;
      case 'eval':
        this.epoch = m.epoch;
        break;
      case 'regenerated':
        // New points, same model (Regenerate): the run's set-up has the new data seed.
        if (this.posted) this.posted.state.dataSeed = host.getState().dataSeed;
        break;
      case 'epochEval':
        // The test metrics at an epoch's end between two full evaluations.
        host.showMetric('m-test-loss', m.loss, (v) => v.toFixed(4));
        host.showMetric('m-test-acc', m.accuracy, (v) => `${(v * 100).toFixed(2)} %`);
        host.charts.addTest(m.epoch, m.loss, m.accuracy);
        break;
      case 'retuned': {
        const sent = this.pending.shift();
        if (m.error) {
          // The running model keeps its old settings: it is kept for Undo, a new model
          // takes the new ones.
          host.say(`The change could not be applied to the running model (${m.error.message}); starting a new model (Undo brings back the trained one).`, 'warn');
          if (sent && this.posted) this.posted.state = sent.before;
          host.reset();
        } else {
          const what = sent?.change.live.join(', ') ?? 'settings';
          const kept = m.optimizerState === 'kept' ? 'optimizer state kept' : m.why;
          const li = this.addLog(`Step ${fmtInt(m.step)} (epoch ${m.epoch.toFixed(2)}): ${what}; weights${m.modelRebuilt ? ' carried into the rebuilt model' : ' kept'}, ${kept}; test loss ${m.testLoss.toFixed(4)}.`);
          li.dataset.testLoss = String(m.testLoss);
          li.dataset.testAccuracy = String(m.testAccuracy ?? '');
          host.showMetric('m-test-loss', m.testLoss, (v) => v.toFixed(4));
          host.showMetric('m-test-acc', m.testAccuracy, (v) => `${(v * 100).toFixed(2)} %`);
          if (sent?.change.marks.length && m.step > 0) this.showMarks([...this.marks, { epoch: m.epoch, label: sent.change.marks.join(', ') }]);
        }
        break;
      }
      case 'restored':
        if (m.error) {
          host.say(`Undo: ${m.error.message}; the previous set-up starts from a new model.`, 'warn');
          this.posted = null;
          host.reset();
        } else {
          this.posted.step = m.step;
          this.epoch = m.epoch;
          host.showMetric('m-step', m.step, String);
          host.showMetric('m-epoch', m.epoch, (v) => v.toFixed(2));
          if (Number.isFinite(m.lr)) this.showLr(m.lr);
          const li = this.addLog(`Undo: the previous model is back at step ${fmtInt(m.step)}; test loss ${m.testLoss.toFixed(4)}.`);
          li.dataset.testLoss = String(m.testLoss);
          li.dataset.testAccuracy = String(m.testAccuracy ?? '');
        }
        break;
      default:
        break;
    }
  }

  /** Status changes: "One more epoch" is offered after Done. */
  onStatus(s) {
    const max = Number($('epochs').max) || Infinity;
    this.more.hidden = s !== 'done';
    this.more.disabled = s !== 'done' || Math.floor(this.epoch + 1e-9) + 1 > max;
  }

  sendForever() {
    const p = this.posted;
    document.body.classList.toggle('is-forever', this.forever.checked);
    if (p) this.host.worker.postMessage({ type: 'forever', run: p.run, on: this.forever.checked });
  }

  /** After Done: the epoch count one past the epochs trained, and train on. */
  oneMoreEpoch() {
    const { host } = this;
    if (host.getStatus() !== 'done' || !this.posted) return;
    const state = host.getState();
    const next = Math.floor(this.epoch + 1e-9) + 1;
    host.setState({ ...state, epochs: next });
    if (!this.apply()) return;
    host.worker.postMessage({ type: 'train', run: this.posted.run });
  }

  showMarks(marks) {
    this.marks = marks;
    setMarks([this.host.charts.loss, this.host.charts.acc], marks);
  }

  showLr(lr) {
    const el = $('live-lr');
    el.textContent = String(Number(lr.toPrecision(6)));
    el.dataset.value = String(lr);
  }

  addLog(text) {
    const li = document.createElement('li');
    li.textContent = text;
    this.log.append(li);
    while (this.log.children.length > MAX_LOG) this.log.firstChild.remove();
    this.log.hidden = false;
    return li;
  }

  clearLog() {
    this.log.replaceChildren();
    this.log.hidden = true;
    const el = $('live-lr');
    el.textContent = '–';
    el.dataset.value = '';
  }
}
