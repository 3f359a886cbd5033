// The worker's side of "train without losing the model" (live.js is the page's side):
// - retune: new training settings for the running model (Session.retune: optimizer state
//   and weights carried over; Trainer.retune: batch size and epochs), between two slices of
//   the training loop, which goes on;
// - the previous trained model kept aside when a change of the data or the layers starts a
//   new one, and brought back by undo;
// - forever: train past the epoch count (TF Playground's endless training).
//
// Messages in:  retune {run, state, spec}, undo {run, from, keep} (keep: the run it
//               replaces is kept in its turn), forever {run, on}
// Messages out: retuned {run, step, epoch, optimizerState, why?, modelRebuilt, batch,
//               testLoss, testAccuracy (evaluated after the change)} | retuned {run, error};
//               restored {run, step, epoch, lr, testLoss, testAccuracy} | restored {run, error};
//               progress (also at each epoch's end) carries lr; epochEval {run, step, epoch,
//               loss, accuracy}: the test metrics at an epoch's end between two full
//               evaluations.
import { errorInfo } from './engine.js';

let stash = null; // the previous run's context {run, state, session, trainer, ...}

/** Keeps `ctx` (a run being replaced) for undo, freeing the one kept before. */
export function keepForUndo(ctx) {
  if (stash && stash !== ctx) stash.session?.dispose();
  ctx.running = false;
  stash = ctx;
}

/**
 * The kept run if it is `from`, removed from the stash; null otherwise.
 * @param {number} from the run id the page remembers
 */
export function takeKept(from) {
  if (!stash || stash.run !== from) return null;
  const ctx = stash;
  stash = null;
  return ctx;
}

/** The status a run is in when it is not training. */
export const restingStatus = (ctx) => (ctx.trainer.done ? 'done' : ctx.trainer.step > 0 ? 'paused' : 'idle');

/**
 * Applies new training settings to a run (training or not). Posts `retuned`; when the run
 * rests, a status (an epoch count raised past the end makes a done run 'paused' again).
 * @param ctx the worker's run context
 * @param {{state: object, spec: object}} msg
 * @param {(m: object) => void} post
 */
export function retune(ctx, msg, post) {
  if (!ctx.trainer) {
    post({ type: 'retuned', run: ctx.run, error: { message: 'the model is not built yet', code: 'State' } });
    return false;
  }
  try {
    const r = ctx.session.retune(msg.spec, msg.state);
    ctx.trainer.retune(msg.state);
    ctx.state = msg.state;
    // The test metrics of the model as it now is (the same weights: the same figures).
    const test = ctx.trainer.evaluate();
    post({
      type: 'retuned',
      run: ctx.run,
      step: ctx.trainer.step,
      epoch: ctx.trainer.progress,
      optimizerState: r.optimizerState,
      why: r.why,
      modelRebuilt: r.modelRebuilt,
      batch: ctx.trainer.batch,
      testLoss: test.loss,
      testAccuracy: test.accuracy,
    });
    if (!ctx.running) post({ type: 'status', run: ctx.run, status: restingStatus(ctx) });
    return true;
  } catch (e) {
    post({ type: 'retuned', run: ctx.run, error: errorInfo(e) });
    return false;
  }
}
