// The optimizer cases of tests/native/cases/round2.jsonl (PyTorch 1.13) through the JS API:
// RMSprop with eps outside the sqrt (plain; centered with momentum and weight decay),
// kiln.optim.clipGradNorm / clipGradValue (non-finite norms, inf and L1 norms, clip by value),
// kiln.optim.schedule.oneCycle (cos two-phase, linear three-phase, with the cycled momentum)
// and kiln.optim.ReduceLROnPlateau (min/rel with cooldown, max/abs), plus their bad inputs.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';
import { caseData, caseTensor, expectClose, safetensorsBytes } from './support/train_helpers.mjs';

let kiln;
const cases = new Map();
beforeAll(async () => {
  kiln = await init();
  const text = readFileSync(new URL('../native/cases/round2.jsonl', import.meta.url), 'utf8');
  for (const line of text.split('\n')) {
    if (line.trim() !== '') {
      const c = JSON.parse(line);
      cases.set(c.id, c);
    }
  }
});

describe('rmsprop_eps_outside_sqrt_centered', () => {
  function run(c, options, key) {
    const p0 = caseData(c.inputs.p0);
    const n = p0.length;
    const grads = caseData(c.inputs.grads);
    const want = caseData(c.expected[`${key}_params_after_each_step`]);
    const model = kiln.nn.linear({ dInput: n, dOutput: 1, bias: false });
    model.loadSafetensors(safetensorsBytes({ weight: { dtype: 'F32', shape: [1, n], data: p0 } }));
    const optimizer = kiln.optim.rmsProp(options);
    for (let step = 0; step < 3; step++) {
      kiln.tidy(() => {
        const { weight } = model.namedParameters();
        const g = kiln.Tensor.fromData(grads.slice(step * n, (step + 1) * n), { shape: [1, n] });
        optimizer.step(model, weight.mul(g).sum().backward());
      });
      kiln.tidy(() => {
        expectClose(model.namedParameters().weight.dataSync(), want.slice(step * n, (step + 1) * n), c.tolerance, `${key} step ${step + 1}`);
      });
    }
    model.dispose();
    optimizer.dispose();
  }

  it('plain: eps added after the square root, accumulator from 0', () => {
    const c = cases.get('rmsprop_eps_outside_sqrt_centered');
    const { lr, alpha, eps } = c.params.plain;
    run(c, { lr, alpha, epsilon: eps }, 'plain');
  });

  it('centered with momentum 0.5 and weight decay 0.1', () => {
    const c = cases.get('rmsprop_eps_outside_sqrt_centered');
    const p = c.params.centered_momentum_wd;
    run(c, { lr: p.lr, alpha: p.alpha, epsilon: p.eps, centered: true, momentum: p.momentum, weightDecay: p.weight_decay }, 'centered_momentum_wd');
  });
});

describe('clip_grad_nonfinite_and_norm_types (kiln.optim.clipGradNorm / clipGradValue)', () => {
  function clip(names, maxNorm, options) {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    return kiln.tidy(() => {
      const grads = names.map((n) => caseTensor(kiln, c.inputs[n]));
      const total = kiln.optim.clipGradNorm(grads, maxNorm, options);
      return { total, values: grads.map((g) => g.dataSync()), shapes: grads.map((g) => g.shape) };
    });
  }

  it('an inf gradient: total inf, finite entries zeroed, the inf one nan', () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    const r = clip(['grad_a', 'grad_b_inf'], 1);
    expectClose([r.total], caseData(c.expected.inf_total_norm), c.tolerance, 'inf_total_norm');
    expectClose(r.values[0], caseData(c.expected.inf_clipped_a), c.tolerance, 'inf_clipped_a');
    expectClose(r.values[1], caseData(c.expected.inf_clipped_b), c.tolerance, 'inf_clipped_b');
    expect(r.shapes).toEqual([[2], [1]]);
  });

  it('a nan gradient poisons every gradient', () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    const r = clip(['grad_a', 'grad_b_nan'], 1, { normType: 2 });
    expectClose([r.total], caseData(c.expected.nan_total_norm), c.tolerance, 'nan_total_norm');
    expectClose(r.values[0], caseData(c.expected.nan_clipped_a), c.tolerance, 'nan_clipped_a');
    expectClose(r.values[1], caseData(c.expected.nan_clipped_b), c.tolerance, 'nan_clipped_b');
  });

  it('errorIfNonfinite: NonFinite, the gradients unchanged', () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    expect(c.expected.nan_error_if_nonfinite.error).toBe(true);
    kiln.tidy(() => {
      const a = caseTensor(kiln, c.inputs.grad_a);
      const b = caseTensor(kiln, c.inputs.grad_b_nan);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([a, b], 1, { errorIfNonfinite: true }), 'NonFinite', /clipGradNorm: the total norm of order 2 of the gradients is NaN \(errorIfNonfinite is set; the gradients are unchanged\)/);
      expect(Array.from(a.dataSync())).toEqual([3, 4]);
    });
  });

  it('normType Infinity: the max |g| over all gradients', () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    const r = clip(['grad_a', 'grad_b_12'], 1, { normType: Infinity });
    expectClose([r.total], caseData(c.expected.maxnorm_total_norm), c.tolerance, 'maxnorm_total_norm');
    expectClose(r.values[0], caseData(c.expected.maxnorm_clipped_a), c.tolerance, 'maxnorm_clipped_a');
    expectClose(r.values[1], caseData(c.expected.maxnorm_clipped_b), c.tolerance, 'maxnorm_clipped_b');
  });

  it('normType 1: the sum of |g|', () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    const r = clip(['grad_a_l1', 'grad_b_12'], 5, { normType: 1 });
    expectClose([r.total], caseData(c.expected.l1_total_norm), c.tolerance, 'l1_total_norm');
    expectClose(r.values[0], caseData(c.expected.l1_clipped_a), c.tolerance, 'l1_clipped_a');
    expectClose(r.values[1], caseData(c.expected.l1_clipped_b), c.tolerance, 'l1_clipped_b');
  });

  it('clipGradValue clamps inf to the bound and keeps nan', () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    kiln.tidy(() => {
      const g = caseTensor(kiln, c.inputs.grad_value);
      kiln.optim.clipGradValue([g], 1);
      expectClose(g.dataSync(), caseData(c.expected.value_clipped), c.tolerance, 'value_clipped');
    });
  });

  it('clip_grad_norm_global (cases.jsonl): global norm 13, one factor for all', () => {
    const text = readFileSync(new URL('../native/cases/cases.jsonl', import.meta.url), 'utf8');
    const c = text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).find((x) => x.id === 'clip_grad_norm_global');
    kiln.tidy(() => {
      const g = ['grad_a', 'grad_b', 'grad_c'].map((n) => caseTensor(kiln, c.inputs[n]));
      expectClose([kiln.optim.clipGradNorm(g, 6.5)], caseData(c.expected.total_norm), c.tolerance, 'total_norm');
      expectClose(g[0].dataSync(), caseData(c.expected.clipped_a), c.tolerance, 'clipped_a');
      expectClose(g[1].dataSync(), caseData(c.expected.clipped_b), c.tolerance, 'clipped_b');
      expect(g[1].shape).toEqual([2, 1]);
      expectClose(g[2].dataSync(), caseData(c.expected.clipped_c), c.tolerance, 'clipped_c');
      const small = ['grad_a', 'grad_b'].map((n) => caseTensor(kiln, c.inputs[n]));
      expectClose([kiln.optim.clipGradNorm(small, 10)], caseData(c.expected.total_norm_ab), c.tolerance, 'total_norm_ab');
      expectClose(small[0].dataSync(), caseData(c.expected.unclipped_a), c.tolerance, 'unclipped_a');
    });
  });

  it('clip_grad_norm_global on a Gradients: {params} selects the parameters (clip_grad_norm_(parameters))', () => {
    const text = readFileSync(new URL('../native/cases/cases.jsonl', import.meta.url), 'utf8');
    const c = text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l)).find((x) => x.id === 'clip_grad_norm_global');
    kiln.tidy(() => {
      const names = ['grad_a', 'grad_b', 'grad_c'];
      const params = names.map((n) => kiln.Tensor.zeros(c.inputs[n].shape).requireGrad());
      const other = kiln.Tensor.ones([2]).requireGrad();  // not listed: left alone
      let loss = other.mul(kiln.Tensor.fromData([100, 100])).sum();
      names.forEach((n, i) => { loss = loss.add(params[i].mul(caseTensor(kiln, c.inputs[n])).sum()); });
      const grads = loss.backward();
      expectClose([kiln.optim.clipGradNorm(grads, 6.5, { params })], caseData(c.expected.total_norm), c.tolerance, 'total_norm');
      expectClose(grads.get(params[0]).dataSync(), caseData(c.expected.clipped_a), c.tolerance, 'clipped_a');
      expectClose(grads.get(params[1]).dataSync(), caseData(c.expected.clipped_b), c.tolerance, 'clipped_b');
      expectClose(grads.get(params[2]).dataSync(), caseData(c.expected.clipped_c), c.tolerance, 'clipped_c');
      expect(Array.from(grads.get(other).dataSync())).toEqual([100, 100]);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm(grads, 1), 'Config', /with a Gradients, say whose gradients to clip: \{params: model\}/);
    });
  });

  it('bad inputs', () => {
    kiln.tidy(() => {
      const g = kiln.Tensor.fromData([1, 2]);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm(g, 1), 'Type', /optim.clipGradNorm: grads must be an array of gradient tensors/);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([g, 3], 1), 'Type', /grads\[1\] must be a Tensor, got/);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 0), 'Value', /clipGradNorm: maxNorm must be finite and > 0, got 0/);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 1, { normType: -1 }), 'Value', /clipGradNorm: normType must be > 0 or Infinity, got -1/);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 1, { norm: 2 }), 'Config', /unknown option "norm"/);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([kiln.Tensor.fromData([1], { dtype: 'int32' })], 1), 'DType', /grads\[0\] must be a float32 tensor/);
      expectKilnError(kiln, () => kiln.optim.clipGradNorm([g, g], 1), 'Value', /the same tensor twice/);
      expectKilnError(kiln, () => kiln.optim.clipGradValue([g], -1), 'Value', /clipGradValue: clipValue must be finite and > 0, got -1/);
      expect(Array.from(g.dataSync())).toEqual([1, 2]);
    });
  });
});

describe('onecycle_lr_schedule (kiln.optim.schedule.oneCycle)', () => {
  it('cosine, two phases: rates and cycled momentum at t = 0..9', () => {
    const c = cases.get('onecycle_lr_schedule');
    const s = kiln.optim.schedule.oneCycle({ maxLr: 1, totalSteps: 10, pctStart: 0.3, divFactor: 25, finalDivFactor: 1e4 });
    expect(s.kind).toBe('oneCycle');
    expectClose(s.values(10), caseData(c.expected.cos_lr), c.tolerance, 'cos_lr');
    expectClose(s.momentumValues(10), caseData(c.expected.cos_momentum), c.tolerance, 'cos_momentum');
  });

  it('linear, three phases', () => {
    const c = cases.get('onecycle_lr_schedule');
    const s = kiln.optim.schedule.oneCycle({ maxLr: 1, totalSteps: 10, annealStrategy: 'linear', threePhase: true });
    expectClose(s.values(10), caseData(c.expected.linear_three_phase_lr), c.tolerance, 'lr');
    expectClose(s.momentumValues(10), caseData(c.expected.linear_three_phase_momentum), c.tolerance, 'momentum');
  });

  it('drives an optimizer: learningRate follows the schedule step by step', () => {
    const c = cases.get('onecycle_lr_schedule');
    const want = caseData(c.expected.cos_lr);
    const model = kiln.nn.linear({ dInput: 2, dOutput: 1 });
    const sgd = kiln.optim.sgd({ lr: kiln.optim.schedule.oneCycle({ maxLr: 1, totalSteps: 10 }) });
    for (let t = 0; t < 10; t++) {
      kiln.tidy(() => sgd.step(model, model.forward(kiln.Tensor.ones([1, 2])).sum().mul(0).backward()));
      expectClose([sgd.learningRate], [want[t]], c.tolerance, `step ${t}`);
    }
    model.dispose();
    sgd.dispose();
  });

  it('bad inputs: past totalSteps is State; bad options are Config', () => {
    const s = kiln.optim.schedule.oneCycle({ maxLr: 1, totalSteps: 10 });
    expectKilnError(kiln, () => s.values(11), 'State', /Schedule.values: the schedule has totalSteps = 10 steps, this is step 11/);
    expectKilnError(kiln, () => kiln.optim.schedule.oneCycle({ maxLr: 1, totalSteps: 10, annealStrategy: 'cosine' }), 'Config', /optim.schedule.oneCycle: annealStrategy must be "cos" or "linear", got "cosine"/);
    expectKilnError(kiln, () => kiln.optim.schedule.oneCycle({ maxLr: 1 }), 'Config', /optim.schedule.oneCycle: .*totalSteps/);
    expectKilnError(kiln, () => kiln.optim.schedule.oneCycle({ maxLr: 1, totalSteps: 10, warmup: 3 }), 'Config', /unknown option "warmup"/);
    expectKilnError(kiln, () => kiln.optim.schedule.oneCycle({ maxLr: -1, totalSteps: 10 }), 'Config', /optim.schedule.oneCycle: maxLr must be finite and > 0, got -1/);
  });
});

describe('reduce_lr_on_plateau_patience_cooldown (kiln.optim.ReduceLROnPlateau)', () => {
  function run(p, metrics) {
    const s = new kiln.optim.ReduceLROnPlateau(1.0, {
      mode: p.mode, factor: p.factor, patience: p.patience, threshold: p.threshold,
      thresholdMode: p.threshold_mode, cooldown: p.cooldown, minLr: p.min_lr,
    });
    const out = metrics.map((m) => s.step(m));
    s.dispose();
    return out;
  }

  it('(a) min, rel threshold, patience 2, cooldown 1, min_lr 0.1', () => {
    const c = cases.get('reduce_lr_on_plateau_patience_cooldown');
    expectClose(run(c.params.a, caseData(c.inputs.metrics_min)), caseData(c.expected.lr_after_each_step_min), c.tolerance, 'min');
  });

  it('(b) max, abs threshold, patience 1, cooldown 0', () => {
    const c = cases.get('reduce_lr_on_plateau_patience_cooldown');
    expectClose(run(c.params.b, caseData(c.inputs.metrics_max)), caseData(c.expected.lr_after_each_step_max), c.tolerance, 'max');
  });

  it('over an optimizer: sets its rate; config shows the defaults; state round-trips', () => {
    const c = cases.get('reduce_lr_on_plateau_patience_cooldown');
    const metrics = caseData(c.inputs.metrics_min);
    const want = caseData(c.expected.lr_after_each_step_min);
    const model = kiln.nn.linear({ dInput: 2, dOutput: 1 });
    const sgd = kiln.optim.sgd({ lr: 1 });
    const opts = { factor: 0.5, patience: 2, threshold: 0.1, cooldown: 1, minLr: 0.1 };
    const plateau = new kiln.optim.ReduceLROnPlateau(sgd, opts);
    expect(plateau.config).toEqual({ mode: 'min', factor: 0.5, patience: 2, threshold: 0.1, thresholdMode: 'rel', cooldown: 1, minLr: 0.1, eps: 1e-8 });
    for (let i = 0; i < 12; i++) plateau.step(metrics[i]);
    kiln.tidy(() => sgd.step(model, model.forward(kiln.Tensor.ones([1, 2])).sum().mul(0).backward()));
    expect(sgd.learningRate).toBe(want[11]);
    // JSON round trip (best is finite here) into a fresh scheduler over a fresh optimizer
    const saved = JSON.parse(JSON.stringify(plateau.state()));
    const sgd2 = kiln.optim.sgd({ lr: 1 });
    const again = new kiln.optim.ReduceLROnPlateau(sgd2, opts);
    again.loadState(saved);
    for (let i = 12; i < metrics.length; i++) expect(again.step(metrics[i])).toBe(want[i]);
    kiln.tidy(() => sgd2.step(model, model.forward(kiln.Tensor.ones([1, 2])).sum().mul(0).backward()));
    expect(sgd2.learningRate).toBe(want[want.length - 1]);
    for (const x of [model, sgd, sgd2, plateau, again]) x.dispose();
  });

  it('bad inputs', () => {
    const sched = kiln.optim.sgd({ lr: kiln.optim.schedule.cosine({ initialLr: 0.1, numIters: 10 }) });
    expectKilnError(kiln, () => new kiln.optim.ReduceLROnPlateau(sched), 'Config', /the optimizer's lr is a schedule \(cosine\)/);
    expectKilnError(kiln, () => new kiln.optim.ReduceLROnPlateau('sgd'), 'Type', /must be a kiln.optim optimizer or an initial lr/);
    expectKilnError(kiln, () => new kiln.optim.ReduceLROnPlateau(1, { factor: 1 }), 'Config', /factor must be in \[0, 1\), got 1/);
    expectKilnError(kiln, () => new kiln.optim.ReduceLROnPlateau(1, { mode: 'minimum' }), 'Config', /mode must be "min" or "max", got "minimum"/);
    expectKilnError(kiln, () => new kiln.optim.ReduceLROnPlateau(1, { patience: -1 }), 'Value', /patience must be >= 0, got -1/);
    expectKilnError(kiln, () => new kiln.optim.ReduceLROnPlateau(1, { monitor: 'loss' }), 'Config', /unknown option "monitor"/);
    const p = new kiln.optim.ReduceLROnPlateau(1);
    expectKilnError(kiln, () => p.step('0.5'), 'Type', /metric must be a number/);
    expectKilnError(kiln, () => p.loadState({ lr: 1, best: 0, numBadEpochs: -1, cooldownCounter: 0, steps: 0 }), 'Value', /numBadEpochs must be >= 0/);
    expect(p.lr).toBe(1);
    p.dispose();
    expectKilnError(kiln, () => p.step(1), 'Disposed', /ReduceLROnPlateau.step: the scheduler was disposed/);
    sched.dispose();
  });
});

describe('optimizer.config and saveState/loadState', () => {
  it('config shows the filled-in defaults (JS: PyTorch eps/momentum)', () => {
    expect(kiln.optim.adam().config).toEqual({ lr: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, amsgrad: false, weightDecay: 0, gradClipping: null });
    expect(kiln.optim.adamW({ lr: 0.01 }).config).toEqual({ lr: 0.01, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, amsgrad: false, weightDecay: 0.01, gradClipping: null });
    expect(kiln.optim.sgd({ lr: 0.1, gradClipping: { norm: 1 } }).config).toEqual({ lr: 0.1, momentum: 0, dampening: 0, nesterov: false, weightDecay: 0, gradClipping: { norm: 1 } });
    expect(kiln.optim.rmsProp().config).toEqual({ lr: 1e-2, alpha: 0.99, momentum: 0, epsilon: 1e-8, centered: false, weightDecay: 0, gradClipping: null });
  });

  /** n Adam steps on a fixed quadratic loss; returns the weights. */
  function train(model, optimizer, n) {
    for (let i = 0; i < n; i++) {
      kiln.tidy(() => {
        const x = kiln.Tensor.fromData([[1, 2, 3], [0.5, -1, 2]]);
        const y = model.forward(x);
        optimizer.step(model, y.mul(y).sum().backward());
      });
    }
  }

  it('saveState -> loadState into a new optimizer and a model copy continues bit-identically', () => {
    const spec = { layers: [{ type: 'linear', dInput: 3, dOutput: 4 }, { type: 'relu' }, { type: 'linear', dInput: 4, dOutput: 2 }] };
    const a = kiln.nn.sequential(spec, { seed: 3 });
    const optA = kiln.optim.adam({ lr: kiln.optim.schedule.cosine({ initialLr: 0.05, numIters: 8 }) });
    train(a, optA, 3);
    const weights = a.saveSafetensors();
    const state = optA.saveState(a);
    expect(state).toBeInstanceOf(Uint8Array);
    train(a, optA, 3);

    const b = kiln.nn.sequential(spec, { seed: 99 });
    b.loadSafetensors(weights);
    const optB = kiln.optim.adam({ lr: 0.5 });
    optB.loadState(b, state);
    expect(optB.steps).toBe(3);
    train(b, optB, 3);
    expect(Buffer.from(b.saveSafetensors()).equals(Buffer.from(a.saveSafetensors()))).toBe(true);
    expect(optB.learningRate).toBe(optA.learningRate);
    for (const x of [a, b, optA, optB]) x.dispose();
  });

  it('bad inputs: another model, another optimizer, not a state; nothing applied', () => {
    const a = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 3, dOutput: 4 }] });
    const other = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 3, dOutput: 5 }] });
    const opt = kiln.optim.adam({ lr: 0.1 });
    train(a, opt, 1);
    const state = opt.saveState(a);
    const fresh = kiln.optim.adam({ lr: 0.1 });
    expectKilnError(kiln, () => fresh.loadState(other, state), 'Format', /^Optimizer.loadState: the state does not fit the model: 4 problems: "0.weight.moment1" has shape \[4, 3\], the parameter \[5, 3\]/);
    expect(fresh.steps).toBe(0);
    expectKilnError(kiln, () => kiln.optim.sgd({ lr: 0.1, momentum: 0.9 }).loadState(a, state), 'Format', /the state is of a "adam" optimizer, this one is "sgd"/);
    expectKilnError(kiln, () => fresh.loadState(a, a.saveSafetensors()), 'Format', /not an optimizer state/);
    expectKilnError(kiln, () => fresh.loadState(a, [1, 2]), 'Type', /bytes must be a Uint8Array/);
    expectKilnError(kiln, () => fresh.saveState({}), 'Type', /.+/);
    for (const x of [a, other, opt, fresh]) x.dispose();
  });
});
