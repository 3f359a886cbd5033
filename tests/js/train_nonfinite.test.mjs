// kiln.Learner refuses a training step that is not finite, as C++'s SupervisedTraining does
// (both run kiln::train::train_step): a NaN loss, or an SGD learning rate of 1e30 whose
// first update overflows the weights although the loss is finite. fit() rejects with a
// KilnError of code NonFinite naming the epoch and batch, and the model keeps the weights
// it had before the refused step (all finite), the optimizer its state (checked by training
// on: the same weights as a run that never tried the refused step).
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { rejection } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

const SPEC = {
  layers: [{ type: 'linear', dInput: 2, dOutput: 16 }, { type: 'relu' }, { type: 'linear', dInput: 16, dOutput: 2 }],
};

/** 32 points of the XOR of signs, coordinates in [-1, 1] scaled by `scale`; item i's label is 1 when x0·x1 > 0. */
function xorData(scale = 1) {
  const x = new Float32Array(64);
  const y = new Int32Array(32);
  for (let i = 0; i < 32; i++) {
    const a = Math.cos(i * 1.7) * scale;
    const b = Math.sin(i * 2.3 + 0.4) * scale;
    x[2 * i] = a;
    x[2 * i + 1] = b;
    y[i] = a * b > 0 ? 1 : 0;
  }
  return { x, y };
}

/** Every parameter's values, by name. */
function weights(model) {
  const out = {};
  for (const [name, t] of Object.entries(model.namedParameters())) {
    out[name] = Array.from(t.dataSync());
    t.dispose();
  }
  return out;
}

function expectAllFinite(w) {
  for (const [name, values] of Object.entries(w)) {
    expect(values.every(Number.isFinite), `${name} is finite`).toBe(true);
  }
}

describe('Learner.fit refuses a non-finite step', () => {
  it('a NaN loss: the model keeps the weights of the step before, the optimizer its moments', async () => {
    const { x, y } = xorData();
    x[2 * 20] = NaN; // item 20: batch 2 of 16 (no shuffle)
    const data = kiln.data.fromArrays(x, y, { itemShape: [2] });
    const model = kiln.nn.sequential(SPEC, { seed: 5 });
    const optimizer = kiln.optim.adam({ lr: 0.01 });
    const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy' });
    let before = null;
    const error = await rejection(
      learner.fit(data, {
        epochs: 1,
        batchSize: 16,
        shuffle: false,
        onBatchEnd: () => {
          before = weights(model); // after batch 1, the last step applied
        },
      }),
    );
    expect(error).toBeInstanceOf(kiln.KilnError);
    expect(error.code, error.message).toBe('NonFinite');
    expect(error.message).toBe(
      'Learner.fit: loss is NaN at epoch 1, batch 2 (the step was not applied: the model is that of the previous step)',
    );
    expect(before).not.toBe(null);
    const after = weights(model);
    expectAllFinite(after);
    expect(after).toEqual(before);
    expect(learner.steps).toBe(1);

    // Adam's moments and step count are those of step 1: training on gives the weights of a
    // run that never tried the NaN batch.
    const good = xorData();
    const xs = good.x.subarray(32, 64);
    const ys = good.y.subarray(16, 32);
    learner.trainBatch(xs, ys);
    const twin = kiln.nn.sequential(SPEC, { seed: 5 });
    const twinOptimizer = kiln.optim.adam({ lr: 0.01 });
    const twinLearner = new kiln.Learner(twin, { optimizer: twinOptimizer, loss: 'crossEntropy' });
    twinLearner.trainBatch(x.subarray(0, 32), y.subarray(0, 16)); // batch 1, as fit did
    twinLearner.trainBatch(xs, ys);
    expect(weights(model)).toEqual(weights(twin));
    expect(learner.steps).toBe(2);

    for (const d of [learner, optimizer, model, twinLearner, twinOptimizer, twin, data]) d.dispose();
  });

  it('SGD with lr 1e30: the first update overflows; the weights stay the initial ones', async () => {
    // Inputs of size ~1e10 give gradients of ~1e9 and a finite loss; lr 1e30 would move the
    // weights by ~1e39, past float32's largest value (3.4e38).
    const { x, y } = xorData(1e10);
    const data = kiln.data.fromArrays(x, y, { itemShape: [2] });
    const model = kiln.nn.sequential(SPEC, { seed: 5 });
    const initial = weights(model);
    const optimizer = kiln.optim.sgd({ lr: 1e30 });
    const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy' });
    let batches = 0;
    const error = await rejection(
      learner.fit(data, { epochs: 1, batchSize: 16, shuffle: false, onBatchEnd: () => batches++ }),
    );
    expect(error).toBeInstanceOf(kiln.KilnError);
    expect(error.code, error.message).toBe('NonFinite');
    expect(error.message).toMatch(
      /^Learner\.fit: the update of parameter [0-9]+\.(weight|bias) with learning rate 1e\+30 is not finite \([0-9]+ .*of [0-9]+ values\) at epoch 1, batch 1 \(the step was not applied: the model is that of the previous step\)$/,
    );
    expect(batches).toBe(0);
    const after = weights(model);
    expectAllFinite(after);
    expect(after).toEqual(initial);
    expect(learner.steps).toBe(0);
    for (const d of [learner, optimizer, model, data]) d.dispose();
  });

  it('trainBatch outside fit names the step', () => {
    const { x, y } = xorData();
    const model = kiln.nn.sequential(SPEC, { seed: 5 });
    const optimizer = kiln.optim.sgd({ lr: 0.1 });
    const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy' });
    learner.trainBatch(x.subarray(0, 8), y.subarray(0, 4));
    const before = weights(model);
    const bad = x.slice(8, 16);
    bad[3] = NaN;
    let error = null;
    try {
      learner.trainBatch(bad, y.subarray(4, 8));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(kiln.KilnError);
    expect(error.code).toBe('NonFinite');
    expect(error.message).toMatch(/^Learner\.trainBatch: loss is NaN at step 2 \(the step was not applied/);
    expect(weights(model)).toEqual(before);
    expect(learner.steps).toBe(1);
    for (const d of [learner, optimizer, model]) d.dispose();
  });

  it('names the epoch as the fit() in progress counts it (1 in a second fit), as its callbacks do', async () => {
    const { x, y } = xorData();
    const good = kiln.data.fromArrays(x, y, { itemShape: [2] });
    const badX = x.slice();
    badX[0] = NaN; // item 0: batch 1
    const bad = kiln.data.fromArrays(badX, y, { itemShape: [2] });
    const model = kiln.nn.sequential(SPEC, { seed: 5 });
    const optimizer = kiln.optim.adam({ lr: 0.01 });
    const learner = new kiln.Learner(model, { optimizer, loss: 'crossEntropy' });
    const epochsSeen = [];
    await learner.fit(good, { epochs: 3, batchSize: 16, onEpochEnd: (log) => epochsSeen.push(log.epoch) });
    expect(epochsSeen).toEqual([1, 2, 3]);
    const error = await rejection(learner.fit(bad, { epochs: 1, batchSize: 16, shuffle: false }));
    expect(error.code).toBe('NonFinite');
    expect(error.message).toMatch(/^Learner\.fit: loss is NaN at epoch 1, batch 1 \(/);
    for (const d of [learner, optimizer, model, good, bad]) d.dispose();
  });
});
