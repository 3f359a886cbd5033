// The Speed tile's figure (issue 18): none after a single step, items per second of the
// time spent training once measured over enough steps.
import { describe, it, expect, vi, afterEach } from 'vitest';
import { Trainer, floatSource, SPEED_MIN } from '../../../web/src/trainer.js';

function session() {
  return {
    trainBatch: () => ({ loss: 1, accuracy: 0.5 }),
    predict: (x) => new Float32Array(x.length),
  };
}

function trainer(n = 64, batch = 4) {
  const x = new Float32Array(n * 2);
  const y = new Int32Array(n);
  return new Trainer(session(), { train: floatSource(x, y, 2), test: floatSource(x, y, 2), classes: 2 }, { batch, epochs: 100, seed: 1 });
}

afterEach(() => vi.restoreAllMocks());

describe('speed', () => {
  it('is null after one step', () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 50)); // every step "takes" 50 ms
    const t = trainer();
    t.trainStep();
    const w = t.takeWindow();
    expect(w.loss).toBe(1);
    expect(w.itemsPerSecond).toBe(null);
  });

  it('is items over the time of the steps once there are enough of them', () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 5)); // t0 and t1 of each step: 5 ms apart
    const t = trainer(64, 4);
    for (let i = 0; i < SPEED_MIN.steps; i++) t.trainStep();
    const w = t.takeWindow();
    // 5 steps of 4 items, 5 ms each -> 20 items in 25 ms = 800 items/s
    expect(w.itemsPerSecond).toBeCloseTo((SPEED_MIN.steps * 4 * 1000) / (SPEED_MIN.steps * 5), 6);
    expect(t.takeWindow()).toBe(null);
  });

  it('is measured across report windows too short on their own (a toy epoch each)', () => {
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 1)); // 1 ms per step
    const t = trainer(64, 4);
    const figures = [];
    for (let w = 0; w < 12; w++) {
      for (let i = 0; i < 4; i++) t.trainStep(); // 4 steps, 4 ms: too little alone
      figures.push(t.takeWindow().itemsPerSecond);
    }
    // 20 ms are reached after 5 windows (20 steps of 4 items in 20 ms = 4000 items/s), then again.
    expect(figures.map((f) => f !== null)).toEqual([false, false, false, false, true, false, false, false, false, true, false, false]);
    expect(figures[4]).toBeCloseTo(4000, 6);
  });
});
