// The Race in the worker: two sessions (set-ups A and B: the same layers, data and seed,
// so the same initial weights, different training settings) trained side by side. Each
// slice steps whichever side is behind in epochs, so both advance together whatever their
// batch sizes; each side is evaluated on the test part at the start, at every epoch's end
// while an evaluation is cheap (under 5 ms; toy data), every ~250 ms and at the end, so
// even a race of a second draws curves. A side whose step the engine refuses (NonFinite) drops out; the other goes on.
//
// Messages in:  raceStart {race, mnistBase, csv?, sides: [{state, spec}, {state, spec}]}, raceStop {race}
// Messages out: race {race, kind: 'status', text} | {kind: 'ready', numParams}
//               | {kind: 'train', side, epoch, step, loss, accuracy}
//               | {kind: 'eval', side, epoch, step, loss, accuracy, map?} (map: toy data's
//                 outputs over a RACE_MAP² grid of the plane, at the start, every ~250 ms, the end)
//               | {kind: 'failed', side, step, message} | {kind: 'done', results: [...]}
//               | {kind: 'error', message}
import { errorInfo } from './engine.js';
import { Trainer } from './trainer.js';
import { taskOf } from './state.js';
import { boundaryGrid, GRID } from './datasets.js';
import { applyFeatures } from './features.js';

/** The side of each race map's grid (toy data): one point per pixel of its 160 px canvas. */
export const RACE_MAP = 160;

const SLICE_MS = 30;
const REPORT_MS = 100;
const EVAL_MS = 250;

const yieldNow = () =>
  new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => resolve();
    ch.port2.postMessage(null);
  });

/** Runs at most one race at a time in the worker. */
export class RaceRunner {
  /**
   * @param {{getEngine: () => Promise<import('./engine.js').Engine>, buildData: (ctx: {state: object, run: string}, mnistBase: string, csv?: object) => Promise<{data: object}>, post: (msg: object) => void}} deps
   */
  constructor(deps) {
    this.deps = deps;
    this.cur = null;
  }

  /** Stops the race `race` (or any race without an id) and frees its sessions. */
  stop(race) {
    const c = this.cur;
    if (!c || (race !== undefined && c.race !== race)) return;
    c.running = false;
    for (const s of c.sides) s.session?.dispose();
    this.cur = null;
  }

  async start(msg) {
    this.stop();
    const c = { race: msg.race, running: true, sides: [] };
    this.cur = c;
    const post = (m) => this.deps.post({ type: 'race', race: c.race, ...m });
    try {
      post({ kind: 'status', text: 'Preparing the race…' });
      const engine = await this.deps.getEngine();
      // One data set for both: built from A's set-up (B differs only in training settings).
      // (Its MNIST loading messages carry a run id of no page run, so the page ignores them.)
      const built = await this.deps.buildData({ state: msg.sides[0].state, run: `race-${c.race}` }, msg.mnistBase, msg.csv);
      if (this.cur !== c) return;
      for (const side of msg.sides) {
        const session = engine.createSession(side.spec, side.state, taskOf(side.state.data));
        c.sides.push({ session, trainer: new Trainer(session, built.data, side.state), failed: null });
      }
      const toy = built.view?.kind === 'toy';
      c.map = toy ? applyFeatures(boundaryGrid(RACE_MAP, GRID.lo, GRID.hi), built.view.features) : null;
      post({ kind: 'ready', numParams: c.sides[0].session.numParams, view: toy ? built.view : null, mapSize: RACE_MAP });
      c.sides.forEach((s, i) => this.evaluate(c, i, post, true));
      post({ kind: 'status', text: 'Racing…' });
      await this.loop(c, post);
    } catch (e) {
      if (this.cur === c) {
        post({ kind: 'error', message: errorInfo(e).message });
        this.stop(c.race);
      }
    }
  }

  evaluate(c, i, post, withMap = false) {
    const s = c.sides[i];
    const t0 = performance.now();
    const r = s.trainer.evaluate();
    s.evalCost = performance.now() - t0;
    s.last = { epoch: s.trainer.progress, step: s.trainer.step, loss: r.loss, accuracy: r.accuracy };
    // (copied by postMessage: the engine may reuse the array)
    const map = withMap && c.map ? s.session.predict(c.map, 4096) : undefined;
    post({ kind: 'eval', side: i, ...s.last, map });
  }

  report(c, i, post) {
    const s = c.sides[i];
    const w = s.trainer.takeWindow();
    if (w) post({ kind: 'train', side: i, epoch: s.trainer.progress, step: s.trainer.step, loss: w.loss, accuracy: w.accuracy });
  }

  async loop(c, post) {
    const live = () => c.sides.map((s, i) => i).filter((i) => !c.sides[i].failed && !c.sides[i].trainer.done);
    let lastReport = performance.now();
    let lastEval = performance.now();
    while (c.running && this.cur === c && live().length > 0) {
      const end = performance.now() + SLICE_MS;
      while (performance.now() < end) {
        const ids = live();
        if (ids.length === 0) break;
        // The side behind in epochs steps next (A first on a tie).
        const i = ids.reduce((a, b) => (c.sides[b].trainer.progress < c.sides[a].trainer.progress ? b : a));
        const s = c.sides[i];
        try {
          if (s.trainer.trainStep().epochEnded && !s.trainer.done && s.evalCost < 5) {
            this.report(c, i, post);
            this.evaluate(c, i, post);
          }
        } catch (e) {
          s.failed = { step: s.trainer.step + 1, message: errorInfo(e).message };
          post({ kind: 'failed', side: i, ...s.failed });
        }
        if (s.trainer.done) {
          this.report(c, i, post);
          this.evaluate(c, i, post, true);
        }
      }
      const now = performance.now();
      if (now - lastReport >= REPORT_MS) {
        for (const i of live()) this.report(c, i, post);
        lastReport = now;
      }
      if (now - lastEval >= EVAL_MS) {
        for (const i of live()) this.evaluate(c, i, post, true);
        lastEval = now;
      }
      await yieldNow();
    }
    if (!c.running || this.cur !== c) return;
    const results = c.sides.map((s) => ({ epoch: s.trainer.progress, step: s.trainer.step, failed: s.failed, test: s.last ?? null }));
    post({ kind: 'done', results });
    this.stop(c.race);
  }
}
