// The layer, loss and optimizer cases of tests/native/cases/cases.jsonl (PyTorch 1.13
// reference values) through the JS API: kiln.nn layers with weights loaded from
// SafeTensors bytes written here, forward values and gradients (objective sum(out · dy));
// kiln.loss forward and gradients; kiln.optim steps with given gradients.
// The embedding case runs as the lookup it is (Tensor.select of rows of the table, as
// nn::Embedding computes it), since there is no kiln.nn.embedding layer yet. Not here: the
// transposed-convolution case (no such JS layer yet) and the tensor-op cases (tests of the
// Tensor API).
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { caseData, caseTensor, expectClose, loadCases, safetensorsBytes } from './support/train_helpers.mjs';

let kiln;
let cases;
beforeAll(async () => {
  kiln = await init();
  cases = loadCases();
});

/** Loads `params` ({key: case tensor}) into `layer` (num_batches_tracked 0 added for BN). */
function loadParams(layer, params) {
  const tensors = {};
  for (const [key, t] of Object.entries(params)) tensors[key] = { dtype: 'F32', shape: t.shape, data: caseData(t) };
  if ('running_mean' in params) tensors.num_batches_tracked = { dtype: 'I64', shape: [], data: [0] };
  layer.loadSafetensors(safetensorsBytes(tensors));
}

/** out = layer(x); grads of sum(out · dy) for x and the layer's parameters. */
function forwardBackward(layer, xCase, dyCase) {
  return kiln.tidy(() => {
    const x = caseTensor(kiln, xCase).requireGrad();
    const out = layer.forward(x);
    const result = { out: out.dataSync(), shape: out.shape };
    if (dyCase) {
      const grads = out.mul(caseTensor(kiln, dyCase)).sum().backward();
      result.gradX = x.grad(grads).dataSync();
      const params = layer.namedParameters();
      result.gradParams = {};
      for (const [k, p] of Object.entries(params)) {
        const g = p.grad(grads);
        if (g) result.gradParams[k] = g.dataSync();
      }
    }
    return result;
  });
}

describe('layer cases', () => {
  it('embedding_repeated_indices_grad: the lookup as Tensor.select; repeated rows add up', () => {
    const c = cases.get('embedding_repeated_indices_grad');
    const [batch, seq] = c.inputs.idx.shape;
    const dModel = c.inputs.weight.shape[1];
    kiln.tidy(() => {
      const weight = caseTensor(kiln, c.inputs.weight).requireGrad();
      const idx = caseTensor(kiln, c.inputs.idx);
      expect(idx.dtype).toBe('int32');
      const out = weight.select(0, idx.reshape([batch * seq])).reshape([batch, seq, dModel]);
      expect(out.shape).toEqual(c.expected.out.shape);
      expectClose(out.dataSync(), caseData(c.expected.out), c.tolerance, 'out');
      const grads = out.mul(caseTensor(kiln, c.inputs.dy_out)).sum().backward();
      expectClose(weight.grad(grads).dataSync(), caseData(c.expected.grad_weight), c.tolerance, 'grad_weight');
    });
  });

  it('conv2d_depthwise_stride2_grads', () => {
    const c = cases.get('conv2d_depthwise_stride2_grads');
    const conv = kiln.nn.conv2d({ channels: [4, 4], kernelSize: [3, 3], stride: [2, 2], padding: [1, 1], groups: 4 });
    loadParams(conv, { weight: c.inputs.w, bias: c.inputs.bias });
    const r = forwardBackward(conv, c.inputs.x, c.inputs.dy_out);
    expect(r.shape).toEqual(c.expected.out.shape);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    expectClose(r.gradParams.weight, caseData(c.expected.grad_w), c.tolerance, 'grad_w');
    expectClose(r.gradParams.bias, caseData(c.expected.grad_bias), c.tolerance, 'grad_bias');
    conv.dispose();
  });

  it('conv2d_groups2_dilation2', () => {
    const c = cases.get('conv2d_groups2_dilation2');
    const conv = kiln.nn.conv2d({ channels: [4, 4], kernelSize: 2, padding: 1, dilation: 2, groups: 2, bias: false });
    loadParams(conv, { weight: c.inputs.w });
    const r = forwardBackward(conv, c.inputs.x, c.inputs.dy_out);
    expect(r.shape).toEqual(c.expected.out.shape);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    expectClose(r.gradParams.weight, caseData(c.expected.grad_w), c.tolerance, 'grad_w');
    conv.dispose();
  });

  it('maxpool2d_ties_overlapping', () => {
    const c = cases.get('maxpool2d_ties_overlapping');
    const pool = kiln.nn.maxPool2d({ kernelSize: [2, 2], stride: [1, 1] });
    const r = forwardBackward(pool, c.inputs.x, c.inputs.dy_out);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    pool.dispose();
  });

  it('avgpool2d_count_include_pad', () => {
    const c = cases.get('avgpool2d_count_include_pad');
    for (const [name, include] of [['include_pad', true], ['exclude_pad', false]]) {
      const pool = kiln.nn.avgPool2d({ kernelSize: 3, stride: 2, padding: 1, countIncludePad: include });
      const r = forwardBackward(pool, c.inputs.x, c.inputs[`dy_${name}`]);
      expectClose(r.out, caseData(c.expected[name]), c.tolerance, name);
      expectClose(r.gradX, caseData(c.expected[`grad_x__${name}`]), c.tolerance, `grad_x__${name}`);
      pool.dispose();
    }
  });

  it('adaptive_avgpool2d_non_divisible', () => {
    const c = cases.get('adaptive_avgpool2d_non_divisible');
    const pool = kiln.nn.adaptiveAvgPool2d({ outputSize: [3, 3] });
    const r = forwardBackward(pool, c.inputs.x, c.inputs.dy_out);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    pool.dispose();
  });

  it('batchnorm1d_running_var_unbiased: a training step, the running statistics, then eval', () => {
    const c = cases.get('batchnorm1d_running_var_unbiased');
    const bn = kiln.nn.batchNorm({ numFeatures: 2, momentum: c.params.momentum, epsilon: c.params.eps });
    loadParams(bn, {
      weight: c.inputs.weight, bias: c.inputs.bias, running_mean: c.inputs.running_mean, running_var: c.inputs.running_var,
    });
    const r = forwardBackward(bn, c.inputs.x, c.inputs.dy_y);
    expectClose(r.out, caseData(c.expected.y), c.tolerance, 'y');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    expectClose(r.gradParams.weight, caseData(c.expected.grad_weight), c.tolerance, 'grad_weight');
    expectClose(r.gradParams.bias, caseData(c.expected.grad_bias), c.tolerance, 'grad_bias');
    const p = bn.namedParameters();
    expectClose(p.running_mean.dataSync(), caseData(c.expected.running_mean_after), c.tolerance, 'running_mean');
    expectClose(p.running_var.dataSync(), caseData(c.expected.running_var_after), c.tolerance, 'running_var');
    kiln.dispose(p);
    bn.eval();
    const e = forwardBackward(bn, c.inputs.x_eval, null);
    expectClose(e.out, caseData(c.expected.y_eval), c.tolerance, 'y_eval');
    bn.dispose();
  });

  it('layernorm_eps_inside_sqrt', () => {
    const c = cases.get('layernorm_eps_inside_sqrt');
    const ln = kiln.nn.layerNorm({ dModel: 4, epsilon: 0.5 });
    loadParams(ln, { weight: c.inputs.weight, bias: c.inputs.bias });
    const r = forwardBackward(ln, c.inputs.x, c.inputs.dy_out);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    expectClose(r.gradParams.weight, caseData(c.expected.grad_weight), c.tolerance, 'grad_weight');
    expectClose(r.gradParams.bias, caseData(c.expected.grad_bias), c.tolerance, 'grad_bias');
    ln.dispose();
  });

  it('dropout_inverted_scaling: the scaling law (the mask is random in kiln.nn.dropout)', () => {
    // The case injects its keep-mask; the layer draws its own, so this checks the law the case
    // encodes: training output x·mask/(1 - p) with grad mask/(1 - p); eval the identity; p = 1 zeros.
    const c = cases.get('dropout_inverted_scaling');
    const x = caseData(c.inputs.x);
    const p = c.params.p;
    const drop = kiln.nn.dropout({ prob: p });
    const r = forwardBackward(drop, { shape: [2, 4], dtype: 'float32', data: x }, { shape: [2, 4], dtype: 'float32', data: [1, 1, 1, 1, 1, 1, 1, 1] });
    for (let i = 0; i < x.length; i++) {
      const kept = r.out[i] !== 0 || x[i] === 0;
      const want = kept ? x[i] / (1 - p) : 0;
      expect(r.out[i]).toBeCloseTo(want, 5);
      expect(r.gradX[i]).toBeCloseTo(kept ? 1 / (1 - p) : 0, 5);
    }
    drop.eval(); // eval outputs carry no graph in kiln (Burn's valid()): the value only
    const e = forwardBackward(drop, c.inputs.x, null);
    expectClose(e.out, caseData(c.expected.eval), c.tolerance, 'eval');
    drop.dispose();
    const all = kiln.nn.dropout({ prob: 1 });
    const z = forwardBackward(all, c.inputs.x, c.inputs['dy_train_p1.0']);
    expectClose(z.out, caseData(c.expected['train_p1.0']), c.tolerance, 'train_p1.0');
    expectClose(z.gradX, caseData(c.expected['grad_x__train_p1.0']), c.tolerance, 'grad_x__train_p1.0');
    all.dispose();
  });

  it('activation layers: abs_relu_grad_at_zero, sigmoid_tanh_silu_extreme, gelu_exact_and_tanh', () => {
    const run = (caseId, name, layer) => {
      const c = cases.get(caseId);
      const n = c.inputs.x.shape[0];
      const as2d = (t) => ({ ...t, shape: [1, n] });
      const r = forwardBackward(layer, as2d(c.inputs.x), as2d(c.inputs[`dy_${name}`]));
      expectClose(r.out, caseData(c.expected[name]), c.tolerance, `${caseId} ${name}`);
      expectClose(r.gradX, caseData(c.expected[`grad_x__${name}`]), c.tolerance, `${caseId} grad ${name}`);
      layer.dispose();
    };
    run('abs_relu_grad_at_zero', 'relu', kiln.nn.relu());
    run('abs_relu_grad_at_zero', 'leaky_relu', kiln.nn.leakyRelu({ negativeSlope: 0.1 }));
    run('sigmoid_tanh_silu_extreme', 'sigmoid', kiln.nn.sigmoid());
    run('sigmoid_tanh_silu_extreme', 'tanh', kiln.nn.tanh());
    run('sigmoid_tanh_silu_extreme', 'silu', kiln.nn.silu());
    run('gelu_exact_and_tanh', 'gelu_erf', kiln.nn.gelu());
    run('gelu_exact_and_tanh', 'gelu_tanh', kiln.nn.gelu({ approximate: true }));
  });
});

describe('loss cases', () => {
  it('cross_entropy_ignore_index_partial', () => {
    const c = cases.get('cross_entropy_ignore_index_partial');
    const loss = kiln.loss.crossEntropy({ ignoreIndex: -100 });
    kiln.tidy(() => {
      const logits = caseTensor(kiln, c.inputs.logits).requireGrad();
      const out = loss.forward(logits, caseTensor(kiln, c.inputs.target));
      expect(out.shape).toEqual([]); // a reduced loss is rank-0, as PyTorch's (issue 15's one rule)
      expectClose(out.dataSync(), caseData(c.expected.out), c.tolerance, 'out');
      const grads = out.backward();
      expectClose(logits.grad(grads).dataSync(), caseData(c.expected.grad_logits), c.tolerance, 'grad_logits');
    });
  });

  it('cross_entropy_ignore_index_all: mean is NaN, sum is 0', () => {
    const c = cases.get('cross_entropy_ignore_index_all');
    kiln.tidy(() => {
      const logits = caseTensor(kiln, c.inputs.logits);
      const target = caseTensor(kiln, c.inputs.target);
      const mean = kiln.loss.crossEntropy({ ignoreIndex: -100 }).forward(logits, target);
      const sum = kiln.loss.crossEntropy({ ignoreIndex: -100, reduction: 'sum' }).forward(logits, target);
      expectClose(mean.dataSync(), caseData(c.expected.loss_mean), c.tolerance, 'loss_mean');
      expectClose(sum.dataSync(), caseData(c.expected.loss_sum), c.tolerance, 'loss_sum');
    });
  });

  it('bce_with_logits_extreme and bce_probabilities_clamped_log (reduction none)', () => {
    const c = cases.get('bce_with_logits_extreme');
    kiln.tidy(() => {
      const logits = caseTensor(kiln, c.inputs.logits).requireGrad();
      const out = kiln.loss.binaryCrossEntropy({ logits: true, reduction: 'none' }).forward(logits, caseTensor(kiln, c.inputs.target));
      expectClose(out.dataSync(), caseData(c.expected.out), c.tolerance, 'out');
      const grads = out.mul(caseTensor(kiln, c.inputs.dy_out)).sum().backward();
      expectClose(logits.grad(grads).dataSync(), caseData(c.expected.grad_logits), c.tolerance, 'grad_logits');
    });
    const p = cases.get('bce_probabilities_clamped_log');
    kiln.tidy(() => {
      const out = kiln.loss.binaryCrossEntropy({ reduction: 'none' }).forward(caseTensor(kiln, p.inputs.p), caseTensor(kiln, p.inputs.target));
      expectClose(out.dataSync(), caseData(p.expected.out), p.tolerance, 'out');
    });
  });
});

describe('optimizer cases (given gradients through loss = sum(weight · g))', () => {
  /** A linear layer without bias whose weight [1, n] holds the case's p0. */
  function paramModel(p0) {
    const m = kiln.nn.linear({ dInput: p0.length, dOutput: 1, bias: false });
    m.loadSafetensors(safetensorsBytes({ weight: { dtype: 'F32', shape: [1, p0.length], data: p0 } }));
    return m;
  }

  function runSteps(c, optimizer) {
    const p0 = caseData(c.inputs.p0);
    const n = p0.length;
    const grads = caseData(c.inputs.grads);
    const want = caseData(c.expected.params_after_each_step);
    const model = paramModel(p0);
    for (let step = 0; step < 3; step++) {
      kiln.tidy(() => {
        const { weight } = model.namedParameters();
        const g = kiln.Tensor.fromData(grads.slice(step * n, (step + 1) * n), { shape: [1, n] });
        optimizer.step(model, weight.mul(g).sum().backward());
      });
      kiln.tidy(() => {
        const { weight } = model.namedParameters();
        expectClose(weight.dataSync(), want.slice(step * n, (step + 1) * n), c.tolerance, `${c.id} step ${step + 1}`);
      });
    }
    expect(optimizer.steps).toBe(3);
    model.dispose();
    optimizer.dispose();
  }

  it('sgd_momentum_dampening_weight_decay', () => {
    const c = cases.get('sgd_momentum_dampening_weight_decay');
    const { lr, momentum, dampening, weight_decay: weightDecay } = c.params;
    runSteps(c, kiln.optim.sgd({ lr, momentum, dampening, weightDecay }));
  });

  it('sgd_nesterov', () => {
    const c = cases.get('sgd_nesterov');
    const { lr, momentum, weight_decay: weightDecay } = c.params;
    runSteps(c, kiln.optim.sgd({ lr, momentum, nesterov: true, weightDecay }));
  });

  it('adamw_decoupled_weight_decay', () => {
    const c = cases.get('adamw_decoupled_weight_decay');
    const { lr, beta1, beta2, eps, weight_decay: weightDecay } = c.params;
    runSteps(c, kiln.optim.adamW({ lr, beta1, beta2, epsilon: eps, weightDecay }));
  });

  it('clip_grad_norm_global: gradClipping {norm} scales all gradients by one factor', () => {
    const c = cases.get('clip_grad_norm_global');
    // Parameters a [2] = layer 0's bias, b [2, 1] = layer 0's weight, c [1] = layer 2's bias,
    // all 0; SGD with lr 1 moves each by minus its clipped gradient.
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 1, dOutput: 2 }, { type: 'relu' }, { type: 'linear', dInput: 2, dOutput: 1 }] });
    model.loadSafetensors(safetensorsBytes({
      '0.weight': { dtype: 'F32', shape: [2, 1], data: [0, 0] },
      '0.bias': { dtype: 'F32', shape: [2], data: [0, 0] },
      '2.weight': { dtype: 'F32', shape: [1, 2], data: [0, 0] },
      '2.bias': { dtype: 'F32', shape: [1], data: [0] },
    }));
    const sgd = kiln.optim.sgd({ lr: 1, gradClipping: { norm: 6.5 } });
    kiln.tidy(() => {
      const p = model.namedParameters();
      const loss = p['0.bias'].mul(caseTensor(kiln, c.inputs.grad_a)).sum()
        .add(p['0.weight'].mul(caseTensor(kiln, c.inputs.grad_b)).sum())
        .add(p['2.bias'].mul(caseTensor(kiln, c.inputs.grad_c)).sum());
      sgd.step(model, loss.backward());
    });
    kiln.tidy(() => {
      const p = model.namedParameters();
      expectClose(p['0.bias'].neg().dataSync(), caseData(c.expected.clipped_a), c.tolerance, 'clipped_a');
      expectClose(p['0.weight'].neg().dataSync(), caseData(c.expected.clipped_b), c.tolerance, 'clipped_b');
      expectClose(p['2.bias'].neg().dataSync(), caseData(c.expected.clipped_c), c.tolerance, 'clipped_c');
      expectClose(p['2.weight'].dataSync(), [0, 0], { abs: 0, rel: 0 }, 'no gradient: unchanged');
    });
    model.dispose();
    sgd.dispose();
  });
});
