// The training loop's bookkeeping, independent of the worker's messaging (so it can be
// driven step by step): epochs of shuffled mini-batches, the running train metrics, and
// evaluation on the test part (loss and accuracy from the predicted probabilities).
import { createRng } from './rng.js';

/**
 * An in-memory classification set: either float features (toy sets) or MNIST bytes that
 * are normalised batch by batch.
 * @typedef {{n: number, itemSize: number, y: Int32Array, fill(outX: Float32Array, order: Int32Array | null, start: number, count: number): void}} Source
 */

/** A Source over float features [n, itemSize]. */
export function floatSource(x, y, itemSize) {
  return {
    n: y.length,
    itemSize,
    y,
    fill(out, order, start, count) {
      for (let i = 0; i < count; i++) {
        const item = order ? order[start + i] : start + i;
        out.set(x.subarray(item * itemSize, (item + 1) * itemSize), i * itemSize);
      }
    },
  };
}

/** All items of a Source as one Float32Array (for predict). */
export function materialise(src) {
  const out = new Float32Array(src.n * src.itemSize);
  src.fill(out, null, 0, src.n);
  return out;
}

/**
 * Mean cross-entropy and accuracy of predicted probabilities against labels, and the
 * confusion matrix (rows: true class, columns: predicted).
 * @param {Float32Array} probs [n, classes]
 * @param {Int32Array} y [n]
 */
export function scorePredictions(probs, y, classes) {
  const n = y.length;
  let loss = 0;
  let correct = 0;
  const predicted = new Int32Array(n);
  const confusion = new Int32Array(classes * classes);
  for (let i = 0; i < n; i++) {
    const row = i * classes;
    let best = 0;
    for (let c = 1; c < classes; c++) if (probs[row + c] > probs[row + best]) best = c;
    predicted[i] = best;
    if (best === y[i]) correct++;
    confusion[y[i] * classes + best]++;
    loss -= Math.log(Math.max(probs[row + y[i]], 1e-12));
  }
  return { loss: loss / n, accuracy: correct / n, predicted, confusion };
}

/**
 * Mean squared error of one output per item against the targets (torch.nn.MSELoss, mean):
 * the regression sets' test loss.
 * @param {Float32Array} out [n] (the [n, 1] outputs)
 * @param {Float32Array} y [n]
 */
export function scoreRegression(out, y) {
  let s = 0;
  for (let i = 0; i < y.length; i++) s += (out[i] - y[i]) ** 2;
  return { loss: s / y.length, accuracy: null, predicted: null, confusion: null };
}

/**
 * The playground's message for a step the engine refused (a KilnError of code NonFinite,
 * "<op>: loss is NaN at step 3 (the step was not applied: ...)" or naming the gradient or
 * the updated weight that is not finite): what became non-finite, at which step, and the
 * usual remedy. Keeps the code NonFinite.
 */
export function refusedStep(error, step) {
  const loss = /: loss is (\S+) at /.exec(error.message);
  const what = /^[^:]*: (.*) at (?:step \d+|epoch \d+, batch \d+) \(/.exec(error.message);
  const message = loss
    ? `the loss became ${loss[1]} at step ${step}: lower the learning rate`
    : `step ${step} was not applied: ${what ? what[1] : error.message}: lower the learning rate`;
  return Object.assign(new Error(message), { code: 'NonFinite' });
}

/**
 * The speed is shown only when measured over at least this many steps and milliseconds of
 * training (one step, the Step button's, times one call: its figure means nothing). The
 * measure runs across report windows (a toy epoch's window can be a millisecond) until
 * it has that much, then gives a figure and starts again.
 */
export const SPEED_MIN = { steps: 5, ms: 20 };

export class Trainer {
  /**
   * @param {import('./engine.js').Session} session
   * @param {{train: Source, test: Source, classes: number, task?: 'classification' | 'regression'}} data
   *   regression: y holds float targets (Float32Array) and the model has one output
   * @param {{batch: number, epochs: number, seed: number}} settings
   */
  constructor(session, data, settings) {
    this.session = session;
    this.data = data;
    this.batch = Math.min(settings.batch, data.train.n);
    this.epochs = settings.epochs;
    this.seed = settings.seed;
    this.epoch = 0; // completed epochs
    this.pos = 0; // items done in the current epoch
    this.step = 0; // optimizer steps done
    this.order = null;
    this.x = new Float32Array(this.batch * data.train.itemSize);
    this.y = new data.train.y.constructor(this.batch);
    this.testX = null;
    this.forever = false;
    this.resetWindow();
  }

  /** All epochs trained (never while `forever` is set: TF Playground's endless training). */
  get done() {
    return !this.forever && this.epoch >= this.epochs;
  }

  /**
   * New batch size and epoch count in the middle of a run (live.js): the epoch in progress
   * goes on with the new batch size from where it is; the step count and the order stay.
   * @param {{batch: number, epochs: number}} settings
   */
  retune({ batch, epochs }) {
    const b = Math.min(batch, this.data.train.n);
    if (b !== this.batch) {
      this.batch = b;
      this.x = new Float32Array(b * this.data.train.itemSize);
      this.y = new this.y.constructor(b); // Int32Array labels (or Float32Array targets)
    }
    this.epochs = epochs;
  }

  /** Epochs done, fractional (the charts' x axis). */
  get progress() {
    return this.epoch + this.pos / this.data.train.n;
  }

  resetWindow() {
    this.window = { loss: 0, correct: 0, items: 0 };
    this.speed ??= { items: 0, time: 0, steps: 0 };
  }

  /**
   * Trains one mini-batch (the last batch of an epoch may be smaller).
   * @returns {{loss: number, accuracy: number, count: number, epochEnded: boolean}}
   */
  trainStep() {
    if (this.done) throw new Error('training is finished: reset or raise the epochs');
    const { train } = this.data;
    if (this.pos === 0) {
      this.order = new Int32Array(train.n);
      for (let i = 0; i < train.n; i++) this.order[i] = i;
      createRng((this.seed * 7919 + this.epoch) >>> 0).shuffle(this.order);
    }
    const count = Math.min(this.batch, train.n - this.pos);
    const t0 = performance.now(); // the step's whole cost: the batch's data and the engine's step
    train.fill(this.x, this.order, this.pos, count);
    for (let i = 0; i < count; i++) this.y[i] = train.y[this.order[this.pos + i]];
    const x = count === this.batch ? this.x : this.x.subarray(0, count * train.itemSize);
    const y = count === this.batch ? this.y : this.y.subarray(0, count);
    let r;
    try {
      r = this.session.trainBatch(x, y, count, { epoch: this.epoch + 1, batch: Math.floor(this.pos / this.batch) + 1 });
    } catch (e) {
      // The engine refuses a step whose loss, gradients or updated weights are not finite
      // (kiln::train::train_step): the model keeps the weights of the step before.
      throw e?.code === 'NonFinite' ? refusedStep(e, this.step + 1) : e;
    }
    this.speed.time += performance.now() - t0;
    this.speed.items += count;
    this.speed.steps++;
    this.window.loss += r.loss * count;
    this.window.correct += r.accuracy * count;
    this.window.items += count;
    this.step++;
    this.pos += count;
    let epochEnded = false;
    if (this.pos >= train.n) {
      this.pos = 0;
      this.epoch++;
      epochEnded = true;
    }
    return { loss: r.loss, accuracy: r.accuracy, count, epochEnded };
  }

  /**
   * The train metrics since the last call (means over the items seen), then a new window.
   * itemsPerSecond: items over the time spent in trainStep since the last figure, once that
   * is at least SPEED_MIN steps and milliseconds; null until then.
   */
  takeWindow() {
    const w = this.window;
    this.resetWindow();
    if (w.items === 0) return null;
    const sp = this.speed;
    let itemsPerSecond = null;
    if (sp.steps >= SPEED_MIN.steps && sp.time >= SPEED_MIN.ms) {
      itemsPerSecond = (sp.items * 1000) / sp.time;
      this.speed = { items: 0, time: 0, steps: 0 };
    }
    return { loss: w.loss / w.items, accuracy: this.data.task === 'regression' ? null : w.correct / w.items, itemsPerSecond };
  }

  /** Predicts the whole test part and scores it (regression: MSE, no accuracy). */
  evaluate() {
    if (!this.testX) this.testX = materialise(this.data.test);
    const probs = this.session.predict(this.testX);
    if (this.data.task === 'regression') return scoreRegression(probs, this.data.test.y);
    return scorePredictions(probs, this.data.test.y, this.data.classes);
  }

  /**
   * Trains on new data from now on (the Regenerate button: new points, same model, same
   * optimizer state and step count). With as many training items as before (a new draw
   * of the same set) the epoch goes on where it was, in the same shuffled order of item
   * positions; otherwise the current epoch counts as ended. Same item size and task.
   */
  setData(data) {
    if (data.train.itemSize !== this.data.train.itemSize) throw new Error(`new data have ${data.train.itemSize} features per item, the model reads ${this.data.train.itemSize}`);
    const sameSize = data.train.n === this.data.train.n;
    this.data = data;
    this.batch = Math.min(this.batch, data.train.n);
    this.x = new Float32Array(this.batch * data.train.itemSize);
    this.y = new data.train.y.constructor(this.batch);
    this.testX = null;
    if (!sameSize && this.pos > 0) {
      this.epoch++;
      this.pos = 0;
    }
  }
}
