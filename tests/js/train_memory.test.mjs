// WebAssembly memory stays flat over a long training loop from JS: 10,000 Learner steps
// (trainBatch, one call into WebAssembly each) and an epoch loop through fit() allocate and
// free the same tensors every step, so after a warm-up the live tensor bytes, the live JS
// tensors, the autodiff graph and the heap size do not move.
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { XOR_X, XOR_Y } from './support/train_helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

const SPEC = {
  layers: [
    { type: 'linear', dInput: 2, dOutput: 16 }, { type: 'relu' }, { type: 'dropout', prob: 0.1 },
    { type: 'batchNorm', numFeatures: 16 }, { type: 'linear', dInput: 16, dOutput: 2 },
  ],
};

function snapshot() {
  const m = kiln.memory();
  return { bytes: m.bytes, buffers: m.buffers, tensors: m.tensors, graphNodes: m.graphNodes, heapBytes: m.heapBytes };
}

describe('memory over 10,000 training steps', () => {
  it('trainBatch keeps kiln.memory() flat', () => {
    const model = kiln.nn.sequential(SPEC, { seed: 1 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 0.01 }) });
    for (let i = 0; i < 100; i++) learner.trainBatch(XOR_X, XOR_Y); // optimizer state exists now
    const before = snapshot();
    let last;
    for (let i = 0; i < 10000; i++) last = learner.trainBatch(XOR_X, XOR_Y);
    const after = snapshot();
    expect(Number.isFinite(last.loss)).toBe(true);
    expect(learner.steps).toBe(10100);
    expect(after).toEqual(before);
    learner.dispose();
    learner.optimizer.dispose();
    model.dispose();
  });

  it('fit over a dataset keeps it flat too, and disposing frees what the model held', async () => {
    const start = snapshot();
    const model = kiln.nn.sequential(SPEC, { seed: 2 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.05, momentum: 0.9 }) });
    const data = kiln.data.fromArrays(XOR_X, XOR_Y, { itemShape: [2] });
    await learner.fit(data, { epochs: 10, batchSize: 2 });
    const before = snapshot();
    await learner.fit(data, { epochs: 1000, batchSize: 2, batchesPerCall: 2 });
    expect(snapshot()).toEqual(before);
    learner.dispose();
    model.dispose();
    learner.optimizer.dispose();
    data.dispose();
    const end = snapshot();
    expect(end.bytes).toBe(start.bytes);
    expect(end.tensors).toBe(start.tensors);
    expect(end.graphNodes).toBe(start.graphNodes);
  });
});
