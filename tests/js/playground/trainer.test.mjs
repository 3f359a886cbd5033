// The training loop's bookkeeping (web/src/trainer.js) with a recording stand-in for the
// engine session: epochs visit every item once in a seeded order, the last batch is
// partial, metrics are item-weighted means, and test scoring is checked by hand.
import { describe, it, expect } from 'vitest';
import { Trainer, floatSource, scorePredictions } from '../../../web/src/trainer.js';

/** A session that records what it was given and reports loss = mean of the first feature. */
function recordingSession() {
  const batches = [];
  return {
    batches,
    trainBatch(x, y, n) {
      expect(x.length).toBe(n * 2);
      expect(y.length).toBe(n);
      batches.push({ ids: Array.from({ length: n }, (_, i) => x[2 * i + 1]), y: Array.from(y) });
      let s = 0;
      for (let i = 0; i < n; i++) s += x[2 * i];
      return { loss: s / n, accuracy: n % 2 ? 1 : 0 };
    },
    predict(x) {
      const n = x.length / 2;
      const p = new Float32Array(n * 2);
      for (let i = 0; i < n; i++) {
        p[2 * i] = 0.25;
        p[2 * i + 1] = 0.75;
      }
      return p;
    },
  };
}

/** An error as kiln-dl's Learner throws for a refused step (a KilnError of code NonFinite). */
function refused(what) {
  return Object.assign(new Error(`${what} (the step was not applied: the model is that of the previous step)`), { code: 'NonFinite' });
}

// item i has features [i % 3, i] (the second feature identifies it) and label i % 2
function data(n) {
  const x = new Float32Array(n * 2);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    x[2 * i] = i % 3;
    x[2 * i + 1] = i;
    y[i] = i % 2;
  }
  return floatSource(x, y, 2);
}

describe('Trainer', () => {
  it('each epoch visits every item once, in a seeded order, with a partial last batch', () => {
    const s = recordingSession();
    const t = new Trainer(s, { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 2, seed: 3 });
    const ended = [];
    while (!t.done) ended.push(t.trainStep().epochEnded);
    expect(s.batches.map((b) => b.ids.length)).toEqual([4, 4, 2, 4, 4, 2]);
    expect(ended).toEqual([false, false, true, false, false, true]);
    expect(t.step).toBe(6);
    expect(t.epoch).toBe(2);
    const epoch1 = s.batches.slice(0, 3).flatMap((b) => b.ids);
    const epoch2 = s.batches.slice(3).flatMap((b) => b.ids);
    expect([...epoch1].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect([...epoch2].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(epoch1).not.toEqual(epoch2); // reshuffled per epoch
    for (const b of s.batches) expect(b.y).toEqual(b.ids.map((i) => i % 2)); // labels follow items
    // same seed, same order
    const s2 = recordingSession();
    const t2 = new Trainer(s2, { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 2, seed: 3 });
    while (!t2.done) t2.trainStep();
    expect(s2.batches).toEqual(s.batches);
    expect(() => t.trainStep()).toThrow(/training is finished/);
  });

  it('progress is fractional epochs; a batch larger than the set is capped', () => {
    const t = new Trainer(recordingSession(), { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 3, seed: 0 });
    expect(t.progress).toBe(0);
    t.trainStep();
    expect(t.progress).toBeCloseTo(0.4);
    const big = new Trainer(recordingSession(), { train: data(5), test: data(4), classes: 2 }, { batch: 64, epochs: 1, seed: 0 });
    expect(big.batch).toBe(5);
  });

  it('the metrics window is an item-weighted mean, then empties', () => {
    const s = recordingSession();
    const t = new Trainer(s, { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 1, seed: 1 });
    t.trainStep();
    t.trainStep();
    t.trainStep(); // 4 + 4 + 2 items: all ten
    const w = t.takeWindow();
    // loss: mean of i % 3 over all ten items = (0+1+2+0+1+2+0+1+2+0)/10 = 0.9
    expect(w.loss).toBeCloseTo(0.9, 6);
    // (the plain mean of the three batch means differs here, so the weighting is tested)
    const means = s.batches.map((b) => b.ids.reduce((a, i) => a + (i % 3), 0) / b.ids.length);
    expect(Math.abs(means.reduce((a, b) => a + b) / 3 - 0.9)).toBeGreaterThan(0.01);
    // accuracy: batches of 4 report 0, the batch of 2 reports 0 -> 0
    expect(w.accuracy).toBe(0);
    expect(t.takeWindow()).toBe(null);
  });

  it('a non-finite loss stops with a clear message', () => {
    // The engine refuses the step (kiln-dl's Learner.trainBatch throws a KilnError NonFinite).
    const s = { trainBatch: () => { throw refused('Learner.trainBatch: loss is NaN at step 1'); } };
    const t = new Trainer(s, { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 1, seed: 1 });
    expect(() => t.trainStep()).toThrow(/the loss became NaN at step 1: lower the learning rate/);
  });

  it('a refused update is reported with its reason, and the step is not counted', () => {
    const s = recordingSession();
    const t = new Trainer(s, { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 1, seed: 1 });
    t.trainStep();
    s.trainBatch = () => {
      throw refused('Learner.trainBatch: the update of parameter 0.weight with learning rate 1e+30 is not finite (6 -inf of 6 values) at step 2');
    };
    let error = null;
    try {
      t.trainStep();
    } catch (e) {
      error = e;
    }
    expect(error.code).toBe('NonFinite');
    expect(error.message).toBe(
      'step 2 was not applied: the update of parameter 0.weight with learning rate 1e+30 is not finite (6 -inf of 6 values): lower the learning rate',
    );
    expect(t.step).toBe(1);
    expect(t.progress).toBeCloseTo(0.4);
    // other errors pass through unchanged
    const other = Object.assign(new Error('Learner.trainBatch: it was disposed'), { code: 'State' });
    s.trainBatch = () => {
      throw other;
    };
    expect(() => t.trainStep()).toThrow(other);
  });

  it('evaluate predicts the whole test part', () => {
    const t = new Trainer(recordingSession(), { train: data(10), test: data(4), classes: 2 }, { batch: 4, epochs: 1, seed: 1 });
    const r = t.evaluate();
    // always class 1 with p = 0.75: labels 0,1,0,1 -> accuracy 0.5, loss (2·-ln .25 + 2·-ln .75)/4
    expect(r.accuracy).toBe(0.5);
    expect(r.loss).toBeCloseTo((-2 * Math.log(0.25) - 2 * Math.log(0.75)) / 4, 6);
  });
});

describe('scorePredictions', () => {
  it('loss, accuracy, predictions and confusion by hand', () => {
    const probs = Float32Array.from([0.7, 0.2, 0.1, 0.1, 0.1, 0.8, 0.3, 0.4, 0.3]);
    const y = Int32Array.from([0, 2, 0]);
    const r = scorePredictions(probs, y, 3);
    expect(Array.from(r.predicted)).toEqual([0, 2, 1]);
    expect(r.accuracy).toBeCloseTo(2 / 3);
    expect(r.loss).toBeCloseTo(-(Math.log(0.7) + Math.log(0.8) + Math.log(0.3)) / 3, 6);
    // rows true, columns predicted
    expect(Array.from(r.confusion)).toEqual([1, 1, 0, 0, 0, 0, 0, 0, 1]);
  });

  it('a zero probability for the true class gives a large finite loss', () => {
    const r = scorePredictions(Float32Array.from([1, 0]), Int32Array.from([1]), 2);
    expect(r.loss).toBeCloseTo(-Math.log(1e-12), 6);
  });
});
