// The tutorial's examples (examples/js/tutorial/*.mjs, one per step of the Burn chapter)
// run as a reader runs them (`node <file>`) and must exit 0 within 5 minutes; every
// `name: <json>` line they print is checked here against values computed independently
// (by hand, or in plain JS from the definitions), never against the engine.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/train_helpers.mjs';

const DIR = `${ROOT}examples/js/tutorial/`;

function run(file) {
  const r = spawnSync(process.execPath, [`${DIR}${file}`], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
  const values = new Map();
  for (const line of r.stdout.split('\n')) {
    const m = /^([A-Za-z0-9_.]+): (.*)$/.exec(line);
    if (m) {
      try {
        values.set(m[1], JSON.parse(m[2]));
      } catch {
        // a printed table or tensor line that happens to contain ': '
      }
    }
  }
  return { status: r.status, out: `${r.stdout}${r.stderr}`, v: (k) => {
    if (!values.has(k)) throw new Error(`${file} printed no "${k}:" line\n${r.stdout}${r.stderr}`);
    return values.get(k);
  } };
}

const close = (got, want, tol = 1e-4) => {
  expect(got.length).toBe(want.length);
  got.forEach((g, i) => expect(Math.abs(g - want[i])).toBeLessThanOrEqual(tol * (1 + Math.abs(want[i]))));
};
const softmaxRow = (r) => { const m = Math.max(...r); const e = r.map((x) => Math.exp(x - m)); const s = e.reduce((a, b) => a + b); return e.map((x) => x / s); };

describe('examples/js/tutorial', () => {
  it('has at least 11 steps, each a .mjs file directly in the folder', () => {
    expect(readdirSync(DIR).filter((f) => f.endsWith('.mjs')).length).toBeGreaterThanOrEqual(11);
  });

  it('01_tensors.mjs: creation, dtypes, reading data, exercise 1', () => {
    const r = run('01_tensors.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('a')).toEqual([[1, 2], [3, 4]]);
    expect(r.v('a.shape')).toEqual([2, 2]);
    expect(r.v('a.dtype')).toBe('float32');
    expect(r.v('zeros.shape')).toEqual([3, 4]);
    expect(r.v('zeros.sum')).toBe(0);
    close(r.v('full'), [3.14, 3.14, 3.14, 3.14, 3.14], 1e-6);
    expect(r.v('uniform.inRange')).toBe(true);
    expect(r.v('labels')).toEqual([0, 1, 2, 1]);
    expect(r.v('labels.dtype')).toBe('int32');
    expect(r.v('range')).toEqual([0, 1, 2, 3, 4]);
    expect(r.v('mask')).toEqual([[false, false], [true, true]]);
    expect(r.v('mask.dtype')).toBe('bool');
    expect(r.v('a.dataSync')).toEqual([1, 2, 3, 4]);
    expect(r.v('scalar')).toBe(42);
    const eye = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
    expect(r.v('exercise1.identity')).toEqual(eye);
    expect(r.v('exercise1.eyeMatches')).toBe(true);
    expect(r.v('exercise1.ints')).toEqual([10, 20, 30]);
    expect(r.v('exercise1.positive')).toEqual(eye.map((row) => row.map((x) => x > 0)));
    expect(r.v('liveTensors')).toBe(0);
    expect(r.out).toContain('[[1.00, 2.00],');
  });

  it('02_ownership_and_ops.mjs: tidy/dispose free everything; ops give the hand-computed values', () => {
    const r = run('02_ownership_and_ops.mjs');
    expect(r.status, r.out).toBe(0);
    close(r.v('w'), [1, 2, 3].map((x) => x + Math.exp(x)));
    expect(r.v('ownership.leaked')).toBe(0);
    expect(r.v('tidy.kept')).toEqual([3, 5, 7]);
    expect(r.v('tidy.leaked')).toBe(0);
    expect(r.v('add')).toEqual([[11, 22], [33, 44]]);
    expect(r.v('sub')).toEqual([[-9, -18], [-27, -36]]);
    expect(r.v('mul')).toEqual([[10, 40], [90, 160]]);
    close(r.v('div'), [0.1, 0.1, 0.1, 0.1]);
    expect(r.v('broadcast')).toEqual([[101, 202], [103, 204]]);
    close(r.v('exp'), [0, 1, 2].map(Math.exp));
    close(r.v('sin'), [0, 1, 2].map(Math.sin));
    close(r.v('tanh'), [0, 1, 2].map(Math.tanh));
    expect(r.v('recip')).toEqual([1, 0.5, 0.25]);
    expect(r.v('recipOfZero')).toBe('Infinity');
    expect(r.v('floor')).toEqual([-2, 2]);
    expect(r.v('matmul')).toEqual([[1 * 5 + 2 * 7, 1 * 6 + 2 * 8], [3 * 5 + 4 * 7, 3 * 6 + 4 * 8]]);
    expect(r.v('sum')).toBe(21);
    expect(r.v('sumDim0')).toEqual([[5, 7, 9]]);
    expect(r.v('sumDim1')).toEqual([[6], [15]]);
    expect(r.v('mean')).toBe(3.5);
    expect(r.v('max')).toBe(6);
    expect(r.v('argmax1')).toEqual([[2], [2]]);
    expect(r.v('flatten.shape')).toEqual([6]);
    expect(r.v('unsqueeze.shape')).toEqual([1, 2, 3]);
    expect(r.v('squeeze.shape')).toEqual([2, 3]);
    expect(r.v('swapDims')).toEqual([[1, 4], [2, 5], [3, 6]]);
    expect(r.v('transpose')).toEqual([[1, 4], [2, 5], [3, 6]]);
    expect(r.v('cat')).toEqual([[1, 2], [3, 4]]);
    expect(r.v('stack.shape')).toEqual([2, 1, 2]);
    expect(r.v('row0')).toEqual([[1, 2, 3]]);
    expect(r.v('col01')).toEqual([[1, 2], [4, 5], [7, 8]]);
    expect(r.v('single')).toEqual([[5]]);
    expect(r.v('gt3')).toEqual([false, true, false]);
    expect(r.v('eq5')).toEqual([false, true, false]);
    expect(r.v('exercise2.normalized')).toEqual([0, 0.25, 0.5, 0.75, 1]);
    const sm = [...softmaxRow([1, 2, 3]), ...softmaxRow([1, 1, 1])];
    close(r.v('exercise2.softmax'), sm, 1e-4);
    close(r.v('exercise2.softmaxBuiltin'), sm, 1e-4);
    expect(r.v('liveTensors')).toBe(0);
  });

  it('03_autodiff.mjs: gradients match the derivatives by hand', () => {
    const r = run('03_autodiff.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('loss')).toBe(14);
    expect(r.v('dx')).toEqual([2, 4, 6]);
    expect(r.v('dxTimesData')).toEqual([5, 6, 7]);
    expect(r.v('dataHasGrad')).toBe(false);
    expect(r.v('noGrad.value')).toBe(12);
    expect(r.v('noGrad.backwardError')).toBe('State');
    expect(r.v('dxThroughDetach')).toEqual([1, 1, 1]);
    const yHat = 0.5 - 0.6 + 2.4;
    close([r.v('exercise3.yHat')], [yHat]);
    close([r.v('exercise3.loss')], [(yHat - 2.5) ** 2]);
    close(r.v('exercise3.dw'), [1, 2, 3].map((x) => 2 * (yHat - 2.5) * x));
    expect(r.v('liveTensors')).toBe(0);
  });

  it('04_config.mjs: configs fill defaults, round-trip through JSON, bad ones are Config errors', () => {
    const r = run('04_config.mjs');
    expect(r.status, r.out).toBe(0);
    const c = r.v('linear.config');
    expect(c).toMatchObject({ type: 'linear', dInput: 784, dOutput: 128, bias: true });
    expect(r.v('linear.numParams')).toBe(784 * 128 + 128);
    expect(r.v('config.roundTrip')).toBe(true);
    expect(r.v('config.layerTypes')).toEqual(['linear', 'relu', 'dropout', 'linear']);
    expect(r.v('config.numParams')).toBe(4 * 8 + 8 + 8 * 3 + 3);
    expect(r.out).toMatch(/badConfig: \{"code":"Config","message":"[^"]*missing required field \\"dOutput\\""/);
    expect(r.out).toMatch(/badConfig: \{"code":"Config","message":"[^"]*unknown field \\"bais\\"/);
    expect(r.out).toMatch(/badConfig: \{"code":"Config","message":"[^"]*dInput must be >= 1, got -1"/);
    expect(r.v('exercise4.config')).toEqual({ hiddenSize: 64, dropout: 0.3, activation: 'relu', lr: 1e-4 });
    expect(r.v('exercise4.matches')).toBe(true);
    expect(r.v('exercise4.numParams')).toBe(2 * 64 + 64 + 64 + 1);
  });

  it('08_data.mjs: datasets, a batcher, a loader over one epoch, workers give the same batches', () => {
    const r = run('08_data.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('dataset.length')).toBe(3);
    expect(r.v('dataset.get1')).toEqual({ features: [5, 6, 7, 8], label: 1 });
    expect(r.v('mapper.get0')).toEqual([2, 4, 6, 8]);
    expect(r.v('partial.length')).toBe(2);
    expect(r.v('shuffled.isPermutation')).toBe(true);
    expect(r.v('batcher.inputs.shape')).toEqual([2, 4]);
    expect(r.v('batcher.targets')).toEqual([0, 2]);
    expect(r.v('exercise8.batchesPerEpoch')).toBe(Math.ceil(200 / 16));
    const want = Array.from({ length: 13 }, (_, i) => (i < 12 ? [[16, 2], [16]] : [[200 - 12 * 16, 2], [200 - 12 * 16]]));
    expect(r.v('exercise8.shapes')).toEqual(want);
    expect(r.v('exercise8.itemsSeen')).toBe(200);
    expect(r.v('exercise8.labelsAreXor')).toBe(true);
    expect(r.v('workers.sameFirstBatch')).toBe(true);
    expect(r.v('liveTensors')).toBe(0);
  }, 60_000);

  it('05_module.mjs: a user module registers its layers and params by name; forward = the maths by hand', () => {
    const r = run('05_module.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('names')).toEqual(['linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias']);
    expect(r.v('numParams')).toBe(4 * 32 + 32 + 32 * 2 + 2);
    expect(r.v('output.shape')).toEqual([8, 2]);
    expect(r.v('forwardMatchesByHand')).toBe(true);
    expect(r.v('affine.names')).toEqual(['scale', 'shift']);
    expect(r.v('affine.dScale')).toEqual([1, 2, 3]);
    expect(r.v('noForward.code')).toBe('Type');
    expect(r.v('exercise5.outputShape')).toEqual([16, 3]);
    expect(r.v('exercise5.numParams')).toBe(10 * 64 + 64 + 64 * 32 + 32 + 32 * 3 + 3);
    expect(r.v('exercise5.names')).toEqual(['fc1', 'fc2', 'fc3'].flatMap((l) => [`${l}.weight`, `${l}.bias`]));
    expect(r.v('liveTensors')).toBe(0);
    expect(r.out).toMatch(/\(linear1\): Linear/);
  });

  it('10_training_loop.mjs: the manual loop learns XOR (0 1 1 0), with validation and early stopping', () => {
    const r = run('10_training_loop.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('predictions')).toEqual([0, 1, 1, 0]);
    expect(r.v('finalAccuracy')).toBe(1);
    expect(r.v('loss.last')).toBeLessThan(r.v('loss.first'));
    expect(r.v('loss.first')).toBeGreaterThan(0.3);   // about ln 2 before learning
    expect(r.v('loss.last')).toBeLessThan(0.05);
    for (const h of [16, 64]) {
      const e = r.v(`earlyStop.hidden${h}`);
      expect(e.accuracy).toBe(1);
      expect(e.stoppedAt).toBeLessThan(50);
    }
    expect(r.v('liveTensors')).toBe(0);
  }, 120_000);

  it('11_save_load.mjs: a saved model loads into a fresh one and predicts the same; another architecture is refused', () => {
    const r = run('11_save_load.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('trained.predictions')).toEqual([0, 1, 1, 0]);
    expect(r.v('loaded.predictions')).toEqual([0, 1, 1, 0]);
    expect(r.v('loaded.sameLogits')).toBe(true);
    expect(r.v('stateDict.names')).toEqual(['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']);
    // Bytes that do not fit are a Format error, as the C++ recorders' and Sequential's.
    expect(r.v('otherModel.code')).toBe('Format');
    expect(r.out).toMatch(/otherModel.message: XorModel.loadSafetensors: bytes: 3 problems: "fc1.weight" has shape \[16, 2\], module expects \[8, 2\]/);
    // float16 stores 2 bytes per value instead of 4: the file shrinks by 2 bytes per parameter.
    const numParams = 16 * 2 + 16 + 2 * 16 + 2;
    expect(r.v('file.bytes') - r.v('half.bytes')).toBe(2 * numParams);
    expect(r.v('half.predictions')).toEqual([0, 1, 1, 0]);
    expect(r.v('half.maxLogitDiff')).toBeLessThan(0.05);
    expect(r.v('liveTensors')).toBe(0);
  }, 60_000);

  it('07_losses.mjs: built-in and custom losses equal the formulas computed here', () => {
    const r = run('07_losses.mjs');
    expect(r.status, r.out).toBe(0);
    const ceRow = (row, t) => -Math.log(softmaxRow(row)[t]);
    close([r.v('crossEntropy')], [(ceRow([2, 1, 0.1], 0) + ceRow([0.5, 2.5, 0.3], 1)) / 2], 1e-5);
    expect(r.v('mse')).toBe((0 + 1 + 4 + 9) / 4);
    expect(r.v('mseSum')).toBe(14);
    const z = [3, -2, 0, 40];
    const t = [1, 0, 1, 0];
    const sig = (x) => 1 / (1 + Math.exp(-x));
    const bce = z.map((zi, i) => Math.max(zi, 0) - zi * t[i] + Math.log1p(Math.exp(-Math.abs(zi)))).reduce((a, b) => a + b) / 4;
    close([r.v('customBce')], [bce], 1e-5);
    close([r.v('builtinBce')], [bce], 1e-5);
    close(r.v('customBce.grad'), z.map((zi, i) => (sig(zi) - t[i]) / 4), 1e-5);
    const logits = r.v('exercise7.logits');
    const targets = r.v('exercise7.targets');
    expect(targets.every((k) => Number.isInteger(k) && k >= 0 && k < 5)).toBe(true);
    const want = targets.map((k, i) => ceRow(logits.slice(5 * i, 5 * i + 5), k)).reduce((a, b) => a + b) / 8;
    close([r.v('exercise7.builtin')], [want], 1e-5);
    close([r.v('exercise7.manual')], [want], 1e-5);
    expect(r.v('liveTensors')).toBe(0);
  });

  it('09_optimizers.mjs: configs, Adam\'s first step by hand, one step changes the loss, accumulation = the whole batch', () => {
    const r = run('09_optimizers.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('adam.config')).toMatchObject({ lr: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 });
    expect(r.v('sgd.config')).toMatchObject({ lr: 0.1, momentum: 0.9, dampening: 0, nesterov: false });
    const g = [1, 2, 3].map((x) => 2 * (2.3 - 2.5) * x);
    close(r.v('step.grad'), g, 1e-5);
    // Adam's first step: m̂ = g, v̂ = g², so w -= lr · g / (|g| + eps).
    close(r.v('step.w'), [0.5, -0.3, 0.8].map((w, i) => w - 0.1 * g[i] / (Math.abs(g[i]) + 1e-8)), 1e-5);
    expect(r.v('exercise9.changed')).toBe(true);
    expect(r.v('exercise9.lossAfter')).toBeLessThan(r.v('exercise9.lossBefore'));
    expect(r.v('exercise9.steps')).toBe(1);
    expect(r.v('accumulation.maxDiff')).toBe(true);
    expect(r.v('accumulation.steps')).toBe(2);
    expect(r.v('liveTensors')).toBe(0);
  });

  it('12_learner.mjs: the Learner learns XOR, a resumed run equals the uninterrupted one bit for bit', () => {
    const r = run('12_learner.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('history.epochs')).toBe(4);
    expect(r.v('valid.accuracy')).toBe(1);
    expect(r.v('train.lossFalls')).toBe(true);
    expect(r.v('checkpoint.files')).toBe(true);
    expect(r.v('resume.history')).toEqual([1, 2, 3, 4]);
    expect(r.v('resume.identicalWeights')).toBe(true);
    expect(r.v('predictions')).toEqual([0, 1, 1, 0]);
    expect(r.v('earlyStopping.stoppedBefore50')).toBe(true);
    expect(r.v('liveTensors')).toBe(0);
  }, 120_000);

  it('06_layers.mjs: each layer gives the shape and values its definition gives; the exercise CNN is [4, 10]', () => {
    const r = run('06_layers.mjs');
    expect(r.status, r.out).toBe(0);
    expect(r.v('linear.out')).toEqual([2, 128]);
    expect(r.v('conv2d.out')).toEqual([2, 32, 28, 28]);
    expect(r.v('conv2d.stride2.out')).toEqual([2, 4, Math.floor((28 - 3) / 2) + 1, Math.floor((28 - 3) / 2) + 1]);
    expect(r.v('batchNorm.out')).toEqual([2, 32, 28, 28]);
    expect(r.v('batchNorm.channelMeanNearZero')).toBe(true);
    expect(r.v('dropout.values')).toEqual([0, 2]);            // kept values scaled by 1 / (1 - 0.5)
    expect(r.v('dropout.eval.identity')).toEqual([[1, 1, 1, 1]]);
    expect(r.v('maxPool2d.out')).toEqual([2, 1, 14, 14]);
    expect(r.v('adaptiveAvgPool2d.out')).toEqual([2, 1, 1, 1]);
    expect(r.v('maxPool2d.values')).toEqual([[[[6, 8], [14, 16]]]]);
    expect(r.v('adaptiveAvgPool2d.value')).toEqual([[[[(1 + 16) / 2]]]]);
    expect(r.v('maxPool1d.values')).toEqual([[[5, 4, 3]]]);
    expect(r.v('embedding.out')).toEqual([2, 3, 256]);
    expect(r.v('embedding.paddingRow')).toEqual([[[0, 0, 0]]]);
    const xs = [1, 2, 3, 4];
    const mean = 2.5;
    const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / 4 + 1e-5);
    close(r.v('layerNorm.row'), xs.map((x) => (x - mean) / sd), 1e-3);
    expect(r.v('rmsNorm.out')).toEqual([1, 4]);
    const x = [-2, -0.5, 0, 0.5, 2];
    expect(r.v('relu')).toEqual(x.map((v) => Math.max(v, 0)));
    close(r.v('sigmoid'), x.map((v) => 1 / (1 + Math.exp(-v))), 1e-3);
    const erf = (z) => { const t = 1 / (1 + 0.3275911 * Math.abs(z)); const y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z); return z >= 0 ? y : -y; };
    close(r.v('gelu'), x.map((v) => 0.5 * v * (1 + erf(v / Math.SQRT2))), 1e-3);
    expect(r.v('softmax.sum')).toBe(1);
    expect(r.v('functional.conv2d.identity')).toEqual([[[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]]]);
    expect(r.v('exercise6.out')).toEqual([4, 10]);
    expect(r.v('exercise6.numParams')).toBe((1 * 16 * 9 + 16) + (16 * 32 * 9 + 32) + (32 * 10 + 10));
    expect(r.v('liveTensors')).toBe(0);
  }, 60_000);
});
