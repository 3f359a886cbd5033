// The exported programs run, for the set-ups the page cannot make yet (the tfp fields:
// features, L1/L2 regularisation, regression with MSE) and each optimizer: a "page" run is
// made here with kiln-dl as the worker makes it (datasets.js's points, features.js's inputs,
// a Sequential from modelspec.js's spec, a Learner, trainBatch), exported, and then
// - the PyTorch script (/usr/bin/python3, Debian's PyTorch) and the Kiln JS module (node,
//   this repository's dist/) load its weights and reproduce its outputs to 1e-5;
// - both, from those weights, train one more epoch (the page's batch order, the loss plus the
//   regularisation, the optimizer) and still agree with each other to 1e-5: two engines
//   checking each other's loss, penalty and update rule;
// - one C++ program (regression, features, L1, SGD) compiles against engine/include and, with
//   a native build, runs and agrees too.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { generateToy, splitTrainTest } from '../../../web/src/datasets.js';
import { describeModel } from '../../../web/src/modelspec.js';
import { defaultState } from '../../../web/src/state.js';
import { createRng } from '../../../web/src/rng.js';
import { applyFeatures } from '../../../web/src/features.js';
import { exportSetup } from '../../../web/src/export/setup.js';
import { TARGETS } from '../../../web/src/export/targets.js';
import { REPO, havePytorch, nativeLib, runProgram, compileCpp, readPredictions, maxDiff } from '../../e2e/export_runners.mjs';

const DIR = join(REPO, 'test-output/export-vitest'); // inside the repository: 'kiln-dl' resolves
const torch = havePytorch();

/** The model's inputs as the page computes them (features.js, as the worker). */
const featuresOf = (points, features) => applyFeatures(points, features);

let kiln;
beforeAll(async () => {
  kiln = await init({ threads: false });
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
});

/**
 * A trained "page" run and its export: `steps` batches of the page's first epoch, with
 * kiln-dl's Learner (crossEntropy or mse), then the weights and the outputs on the test points.
 */
function pageRun(name, state, { regression = false, steps = 12 } = {}) {
  const all = generateToy({ kind: state.data, n: 120, noise: 5, seed: state.seed, classes: state.classes });
  expect(all.task).toBe(regression ? 'regression' : 'classification');
  const { train, test } = splitTrainTest(all, 0.25, state.seed);
  const trainY = train.y;
  const testY = test.y;
  const k = state.features.length;
  const desc = describeModel(state.layers, { features: k, classes: regression ? 1 : all.numClasses });
  expect(desc.errors).toEqual([]);
  const model = kiln.nn.sequential(desc.spec, { seed: state.seed });
  const optimizer = state.opt === 'sgd' ? kiln.optim.sgd({ lr: state.lr, momentum: state.momentum, weightDecay: state.wd }) : kiln.optim[state.opt === 'adam' ? 'adam' : 'adamW']({ lr: state.lr, weightDecay: state.wd });
  const learner = new kiln.Learner(model, { optimizer, loss: regression ? 'mse' : 'crossEntropy', seed: state.seed });
  const x = featuresOf(train.x, state.features);
  const order = Array.from({ length: train.n }, (_, i) => i);
  createRng(state.seed).shuffle(order);
  for (let s = 0; s < steps; s++) {
    const ids = order.slice((s * state.batch) % train.n).slice(0, state.batch);
    const bx = new Float32Array(ids.length * k);
    ids.forEach((id, i) => bx.set(x.subarray(id * k, (id + 1) * k), i * k));
    learner.trainBatch(bx, (regression ? Float32Array : Int32Array).from(ids, (id) => trainY[id]), ids.length);
  }
  const values = Float32Array.from(learner.predict(featuresOf(test.x, state.features)));
  const weights = model.saveSafetensors();
  for (const o of [learner, optimizer, model]) o.dispose();
  const setup = exportSetup({
    state,
    spec: desc.spec,
    view: { trainX: train.x, trainY, testX: test.x, testY },
    check: { count: test.n, values },
  });
  const dir = join(DIR, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${setup.name}.safetensors`), weights);
  const files = {};
  for (const [key, t] of Object.entries(TARGETS)) {
    files[key] = join(dir, `${setup.name}${t.ext}`);
    writeFileSync(files[key], t.generate(setup));
  }
  return { setup, values, dir, weights: join(dir, `${setup.name}.safetensors`), files };
}

/** Runs a program with the page's weights (and optional epochs); its outputs on the test points. */
function outputsOf(kind, run, file, extra = []) {
  const out = join(run.dir, `${kind}-${extra.join('_') || 'eval'}.json`);
  const stdout = runProgram(kind, file, ['--weights', run.weights, '--predictions', out, ...extra], run.dir);
  return { stdout, outputs: readPredictions(out).outputs };
}

const VARIANTS = [
  {
    name: 'features-l2-adamw',
    state: { ...defaultState('xor'), features: ['x1', 'x2', 'x1sq', 'x2sq', 'x1x2', 'sinx1', 'sinx2'], reg: 'l2', regRate: 0.03, opt: 'adamw', lr: 0.01, wd: 0.01, batch: 10, seed: 4, layers: [{ kind: 'dense', units: 6, act: 'leakyRelu', dropout: 0 }, { kind: 'dense', units: 5, act: 'gelu', dropout: 0 }] },
  },
  {
    name: 'regression-l1-sgd',
    regression: true,
    state: { ...defaultState('xor'), data: 'mgauss', features: ['x1', 'x2', 'x1x2'], reg: 'l1', regRate: 0.01, opt: 'sgd', lr: 0.05, momentum: 0.9, wd: 0.001, batch: 8, seed: 2, layers: [{ kind: 'dense', units: 6, act: 'silu', dropout: 0 }, { kind: 'dense', units: 4, act: 'sigmoid', dropout: 0 }] },
  },
  {
    name: 'gauss3-adam',
    state: { ...defaultState('gauss'), classes: 3, features: ['x1', 'x2', 'sinx1'], reg: 'none', opt: 'adam', lr: 0.02, batch: 16, seed: 9, layers: [{ kind: 'dense', units: 8, act: 'relu', dropout: 0 }, { kind: 'dense', units: 8, act: 'linear', dropout: 0 }] },
  },
];

describe.skipIf(!torch)('exported programs of the tfp set-ups (PyTorch and Kiln JS)', () => {
  for (const v of VARIANTS) {
    it(`${v.name}: both load the page's weights and reproduce its outputs; one more epoch agrees`, () => {
      const run = pageRun(v.name, v.state, { regression: v.regression });
      const py = outputsOf('pytorch', run, run.files.pytorch);
      expect(py.stdout).toMatch(/loaded \d+ tensors from .* \(strict\)/);
      expect(maxDiff(py.outputs, Array.from(run.values))).toBeLessThanOrEqual(1e-5);
      const js = outputsOf('kilnjs', run, run.files.kilnjs);
      expect(maxDiff(js.outputs, Array.from(run.values))).toBeLessThanOrEqual(1e-5);
      // One epoch more from the page's weights in each engine: same loss, penalty and update.
      const py1 = outputsOf('pytorch', run, run.files.pytorch, ['--epochs', '1']);
      const js1 = outputsOf('kilnjs', run, run.files.kilnjs, ['--epochs', '1']);
      expect(maxDiff(py1.outputs, run.values)).toBeGreaterThan(1e-4); // it did train
      expect(maxDiff(py1.outputs, js1.outputs)).toBeLessThanOrEqual(1e-5);
      expect(py1.stdout).toMatch(/^epoch 1\/1 {2}train loss/m);
    }, 120_000);
  }

  it('the regularisation term is in the loss that is trained (a large L2 rate shrinks the weights)', () => {
    const base = VARIANTS[2].state;
    const plain = pageRun('reg-off', { ...base, reg: 'none' });
    const strong = pageRun('reg-on', { ...base, reg: 'l2', regRate: 3 });
    const spread = (o) => Math.max(...o) - Math.min(...o);
    const off = outputsOf('kilnjs', plain, plain.files.kilnjs, ['--epochs', '3']);
    const on = outputsOf('kilnjs', strong, strong.files.kilnjs, ['--epochs', '3']);
    const onPy = outputsOf('pytorch', strong, strong.files.pytorch, ['--epochs', '3']);
    // With Σ ½w² · 3 the weights decay towards 0 and the probabilities towards uniform (1/3).
    expect(spread(on.outputs)).toBeLessThan(spread(off.outputs) / 2);
    expect(maxDiff(on.outputs, onPy.outputs)).toBeLessThanOrEqual(1e-5);
  }, 120_000);
});

describe('the exported C++ program', () => {
  it('compiles against engine/include; with a native build, runs and agrees with PyTorch', () => {
    const run = pageRun('cpp-regression-l1-sgd', VARIANTS[1].state, { regression: true });
    const exe = join(run.dir, 'program');
    const { linked } = compileCpp(run.files.kilncpp, exe);
    if (!linked) {
      console.warn(`export_run: no native build (${join(REPO, 'build/native/libkiln.a')}): the C++ program was compiled, not linked or run`);
      return;
    }
    const cpp = outputsOf('kilncpp', run, exe);
    expect(maxDiff(cpp.outputs, Array.from(run.values))).toBeLessThanOrEqual(1e-5);
    const cpp1 = outputsOf('kilncpp', run, exe, ['--epochs', '1']);
    if (torch) {
      const py1 = outputsOf('pytorch', run, run.files.pytorch, ['--epochs', '1']);
      expect(maxDiff(cpp1.outputs, py1.outputs)).toBeLessThanOrEqual(1e-5);
    }
    expect(nativeLib()).not.toBeNull();
  }, 600_000);
});
