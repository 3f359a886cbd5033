// kiln.nn.functional: the layers' computations on tensors, with gradients to every tracked
// argument. Values and gradients against the PyTorch 1.13 reference cases of
// tests/native/cases/{cases,round2}.jsonl (objective sum(out · dy)), against PyTorch values
// pasted with their command, by hand, and by finite differences (support/gradcheck.mjs); the
// losses kiln.loss.huber / smoothL1 / binaryCrossEntropy({posWeight}); bad inputs.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';
import { caseData, caseTensor, expectClose } from './support/train_helpers.mjs';
import { fdCheck } from './support/gradcheck.mjs';

let kiln;
let F;
const cases = new Map();
beforeAll(async () => {
  kiln = await init();
  F = kiln.nn.functional;
  for (const file of ['cases.jsonl', 'round2.jsonl']) {
    const text = readFileSync(new URL(`../native/cases/${file}`, import.meta.url), 'utf8');
    for (const line of text.split('\n')) if (line.trim()) cases.set(JSON.parse(line).id, JSON.parse(line));
  }
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

/**
 * Runs fn on the case's inputs `names` (tracked), checks `out` against expected[outKey] and
 * the gradients of sum(out · dy) against expected[`grad_<name><suffix>`].
 */
function checkCase(c, names, fn, { outKey = 'out', dyKey = 'dy_out', suffix = '', gradNames = {} } = {}) {
  kiln.tidy(() => {
    const ts = names.map((n) => {
      const t = caseTensor(kiln, c.inputs[n]);
      return t.dtype === 'float32' ? t.requireGrad() : t;
    });
    const out = fn(...ts);
    expect(out.shape).toEqual(c.expected[outKey].shape);
    expectClose(out.dataSync(), caseData(c.expected[outKey]), c.tolerance, `${c.id} ${outKey}`);
    if (!c.inputs[dyKey]) return;
    const g = out.mul(caseTensor(kiln, c.inputs[dyKey])).sum().backward();
    names.forEach((n, i) => {
      const key = `grad_${gradNames[n] ?? n}${suffix}`;
      if (c.expected[key]) expectClose(ts[i].grad(g).dataSync(), caseData(c.expected[key]), c.tolerance, `${c.id} ${key}`);
    });
  });
}

describe('convolutions', () => {
  it('conv2d_depthwise_stride2_grads and conv2d_groups2_dilation2', () => {
    checkCase(cases.get('conv2d_depthwise_stride2_grads'), ['x', 'w', 'bias'],
      (x, w, b) => F.conv2d(x, w, b, { stride: 2, padding: 1, groups: 4 }));
    checkCase(cases.get('conv2d_groups2_dilation2'), ['x', 'w'],
      (x, w) => F.conv2d(x, w, null, { padding: [1, 1], dilation: 2, groups: 2 }));
  });

  it('conv_padding_ge_kernel_stride_gt_kernel: conv2d padding (3, 1) stride (3, 2); conv1d padding 5 stride 4', () => {
    const c = cases.get('conv_padding_ge_kernel_stride_gt_kernel');
    checkCase(c, ['x', 'w', 'bias'], (x, w, b) => F.conv2d(x, w, b, { stride: [3, 2], padding: [3, 1] }),
      { outKey: 'conv2d', dyKey: 'dy_conv2d', suffix: '__conv2d' });
    checkCase(c, ['x1', 'w1'], (x, w) => F.conv1d(x, w, null, { stride: 4, padding: 5 }),
      { outKey: 'conv1d', dyKey: 'dy_conv1d', suffix: '__conv1d' });
  });

  it('finite differences: conv1d, conv2d, convTranspose2d (input, weight, bias)', () => {
    fdCheck(kiln, (x, w, b) => F.conv1d(x, w, b, { stride: 2, padding: 1, dilation: 2, groups: 2 }), [[1, 4, 7], [2, 2, 2], [2]]);
    fdCheck(kiln, (x, w, b) => F.conv2d(x, w, b, { stride: [1, 2], padding: 1, groups: 1 }), [[1, 2, 4, 3], [2, 2, 2, 2], [2]]);
    fdCheck(kiln, (x, w, b) => F.convTranspose2d(x, w, b, { stride: 2, padding: 1, paddingOut: 1, groups: 2 }), [[1, 2, 2, 3], [2, 1, 3, 3], [2]]);
  });

  it('bad inputs name the op, what was expected and what was given', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([1, 2, 5, 5]);
      const w = kiln.Tensor.zeros([3, 2, 3, 3]);
      expectKilnError(kiln, () => F.conv2d(kiln.Tensor.zeros([2, 5, 5]), w), 'Rank', /conv2d: .*rank 4.*\[2, 5, 5\]/);
      expectKilnError(kiln, () => F.conv2d(kiln.Tensor.zeros([1, 4, 5, 5]), w), 'Shape', /conv2d: /);
      expectKilnError(kiln, () => F.conv2d(x, w, kiln.Tensor.zeros([2])), 'Shape', /conv2d: .*bias/);
      expectKilnError(kiln, () => F.conv2d(x, w, null, { stride: 0 }), 'Config', /conv2d: .*stride/);
      expectKilnError(kiln, () => F.conv2d(x, w, null, { stride: [1, 2, 3] }), 'Type', 'conv2d: stride must be an integer or 2 integers, got an array');
      expectKilnError(kiln, () => F.conv2d(x, w, null, { padding: 'same' }), 'Type', /conv2d: padding must be an integer or 2 integers, got/);
      expectKilnError(kiln, () => F.conv2d(x, w, null, { strides: 1 }), 'Type', 'conv2d: unknown option "strides" (options: stride, padding, dilation, groups)');
      expectKilnError(kiln, () => F.conv1d(x, w), 'Rank', /conv1d: /);
      expectKilnError(kiln, () => F.conv2d([1, 2], w), 'Type', /conv2d: x must be a kiln Tensor/);
      expectKilnError(kiln, () => F.convTranspose2d(x, kiln.Tensor.zeros([2, 3, 3, 3]), null, { stride: 1, paddingOut: 1 }), 'Config',
        'convTranspose2d: paddingOut [1, 1] must be smaller than stride [1, 1] or dilation [1, 1] in every dim');
    });
  });
});

describe('pools', () => {
  it('maxpool2d_ties_overlapping, avgpool2d_count_include_pad, adaptive_avgpool2d_non_divisible', () => {
    checkCase(cases.get('maxpool2d_ties_overlapping'), ['x'], (x) => F.maxPool2d(x, { kernelSize: 2, stride: 1 }));
    const c = cases.get('avgpool2d_count_include_pad');
    for (const [name, include] of [['include_pad', true], ['exclude_pad', false]]) {
      checkCase(c, ['x'], (x) => F.avgPool2d(x, { kernelSize: 3, stride: 2, padding: 1, countIncludePad: include }),
        { outKey: name, dyKey: `dy_${name}`, suffix: `__${name}` });
    }
    checkCase(cases.get('adaptive_avgpool2d_non_divisible'), ['x'], (x) => F.adaptiveAvgPool2d(x, [3, 3]));
  });

  it('finite differences: every pool, 1-D and 2-D', () => {
    fdCheck(kiln, (x) => F.maxPool1d(x, { kernelSize: 3, stride: 2, padding: 1, ceilMode: true }), [[1, 2, 8]]);
    fdCheck(kiln, (x) => F.maxPool2d(x, { kernelSize: [2, 3], stride: 1, dilation: [2, 1] }), [[1, 1, 5, 5]]);
    fdCheck(kiln, (x) => F.avgPool1d(x, { kernelSize: 4, stride: 3, padding: 2, countIncludePad: false, ceilMode: true }), [[2, 1, 7]]);
    fdCheck(kiln, (x) => F.avgPool2d(x, { kernelSize: 3, stride: 2, padding: 1 }), [[1, 2, 5, 4]]);
    fdCheck(kiln, (x) => F.adaptiveAvgPool1d(x, 3), [[1, 2, 7]]);
    fdCheck(kiln, (x) => F.adaptiveAvgPool2d(x, [2, 3]), [[1, 1, 5, 4]]);
  });

  it('bad inputs: ranks, kernels that do not fit, output sizes', () => {
    kiln.tidy(() => {
      expectKilnError(kiln, () => F.maxPool1d(kiln.Tensor.zeros([1, 4, 4, 4]), { kernelSize: 2 }), 'Rank', /maxPool1d: .*rank 3/);
      expectKilnError(kiln, () => F.maxPool2d(kiln.Tensor.zeros([1, 1, 2, 2]), { kernelSize: 3 }), 'Shape', /maxPool2d: /);
      expectKilnError(kiln, () => F.avgPool1d(kiln.Tensor.zeros([1, 1, 4]), { kernelSize: 0 }), 'Config', /avgPool1d: kernel/);
      expectKilnError(kiln, () => F.maxPool2d(kiln.Tensor.zeros([1, 1, 4, 4]), {}), 'Type', /maxPool2d: kernelSize must be an integer or 2 integers, got undefined/);
      expectKilnError(kiln, () => F.adaptiveAvgPool1d(kiln.Tensor.zeros([1, 1, 4]), 0), 'Config', 'adaptiveAvgPool1d: outputSize must be >= 1, got 0');
      expectKilnError(kiln, () => F.adaptiveAvgPool2d(kiln.Tensor.zeros([1, 1, 4, 4]), [2, 0]), 'Config', /adaptiveAvgPool2d: outputSize must be >= 1/);
    });
  });
});

describe('dropout with an explicit mask', () => {
  it('dropout_inverted_scaling: the case\'s mask, p = 0.25 and p = 1, eval', () => {
    const c = cases.get('dropout_inverted_scaling');
    checkCase(c, ['x', 'mask'], (x, m) => F.dropout(x, { p: 0.25, mask: m.detach() }),
      { outKey: 'train_p0.25', dyKey: 'dy_train_p0.25', suffix: '__train_p0.25' });
    checkCase(c, ['x', 'mask'], (x, m) => F.dropout(x, { p: 1, mask: m.detach() }),
      { outKey: 'train_p1.0', dyKey: 'dy_train_p1.0', suffix: '__train_p1.0' });
    checkCase(c, ['x'], (x) => F.dropout(x, { p: 0.25, training: false }), { outKey: 'eval', dyKey: 'dy_eval', suffix: '__eval' });
    // A bool mask is the same mask.
    kiln.tidy(() => {
      const x = caseTensor(kiln, c.inputs.x);
      const mask = caseTensor(kiln, c.inputs.mask).greaterElem(0.5);
      expectClose(F.dropout(x, { p: 0.25, mask }).dataSync(), caseData(c.expected['train_p0.25']), c.tolerance, 'bool mask');
    });
  });

  it('finite differences through the mask; a drawn mask keeps the scaling law', () => {
    const mask = { shape: [2, 5], data: [1, 0, 1, 1, 0, 0, 1, 1, 1, 0], dtype: 'float32' };
    fdCheck(kiln, (x, m) => F.dropout(x, { p: 0.4, mask: m }), [[2, 5], mask], { skip: [1] });
    kiln.tidy(() => {
      const y = F.dropout(kiln.Tensor.ones([1000]), { p: 0.5 }).dataSync();
      expect(y.every((v) => v === 0 || v === 2)).toBe(true);
      const kept = y.filter((v) => v === 2).length;
      expect(kept).toBeGreaterThan(400);
      expect(kept).toBeLessThan(600);
    });
  });

  it('bad inputs: mask shape, mask dtype, p', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.ones([2, 3]);
      expectKilnError(kiln, () => F.dropout(x, { p: 0.5, mask: kiln.Tensor.ones([3, 2]) }), 'Shape', 'dropout: mask must have the input\'s shape [2, 3], got [3, 2]');
      expectKilnError(kiln, () => F.dropout(x, { p: 0.5, mask: kiln.Tensor.ones([2, 3], { dtype: 'int32' }) }), 'DType', /dropout: mask must be a float32 or bool tensor/);
      expectKilnError(kiln, () => F.dropout(x, { p: 1.5 }), 'Value', 'dropout: p must be in [0, 1], got 1.5');
      expectKilnError(kiln, () => F.dropout(x, { p: 0.5, mask: [1, 0] }), 'Type', /dropout: mask must be a kiln Tensor/);
    });
  });
});

describe('linear, embedding, normalisations', () => {
  it('linear by hand and by finite differences, any leading dims', () => {
    kiln.tidy(() => {
      const y = F.linear(kiln.Tensor.fromData([[1, 2], [3, 4]]), kiln.Tensor.fromData([[1, 0], [1, -1], [2, 1]]), kiln.Tensor.fromData([0.5, 0, -1]));
      expect(y.toArray()).toEqual([[1.5, -1, 3], [3.5, -1, 9]]);
      expect(F.linear(kiln.Tensor.ones([2]), kiln.Tensor.ones([3, 2])).toArray()).toEqual([2, 2, 2]);
      expectKilnError(kiln, () => F.linear(kiln.Tensor.ones([2, 3]), kiln.Tensor.ones([3, 2])), 'Shape', 'linear: expected input [..., 2] (weight [3, 2] is [dOutput, dInput]), got [2, 3]');
      expectKilnError(kiln, () => F.linear(kiln.Tensor.ones([2, 2]), kiln.Tensor.ones([3, 2]), kiln.Tensor.ones([2])), 'Shape', 'linear: bias must be [3] (dOutput), got [2]');
    });
    fdCheck(kiln, (x, w, b) => F.linear(x, w, b), [[2, 3, 4], [5, 4], [5]]);
  });

  it('embedding_repeated_indices_grad; finite differences of the weight (paddingIdx: embedding_padding_idx)', () => {
    const c = cases.get('embedding_repeated_indices_grad');
    checkCase(c, ['idx', 'weight'], (idx, w) => F.embedding(idx, w));
    // Without paddingIdx: the padding row's gradient is 0 by definition (PyTorch), not the derivative.
    fdCheck(kiln, (idx, w) => F.embedding(idx, w),
      [{ shape: [2, 3], data: [0, 1, 2, 2, 1, 3], dtype: 'int32' }, [4, 2]]);
  });

  it('layerNorm, groupNorm and batchNorm by finite differences (input, weight, bias)', () => {
    fdCheck(kiln, (x, w, b) => F.layerNorm(x, [2, 3], { weight: w, bias: b }), [[2, 2, 3], [2, 3], [2, 3]]);
    fdCheck(kiln, (x, w, b) => F.groupNorm(x, 2, { weight: w, bias: b, epsilon: 1e-3 }), [[2, 4, 3], [4], [4]]);
    fdCheck(kiln, (x, w, b) => F.batchNorm(x, null, null, { weight: w, bias: b, training: true }).output, [[3, 2, 2], [2], [2]]);
    fdCheck(kiln, (x, m, v) => F.batchNorm(x, m, v), [[3, 2], [2], { shape: [2], data: [0.5, 2] }], { skip: [1, 2] });
  });

  it('bad inputs: shapes of normalizedShape, weight, bias and statistics', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.ones([2, 3]);
      expectKilnError(kiln, () => F.layerNorm(x, [4]), 'Shape', 'layerNorm: normalizedShape [4] must be the trailing dims of the input (1 to 2 of them), got input [2, 3]');
      expectKilnError(kiln, () => F.layerNorm(x, 3, { weight: kiln.Tensor.ones([2]) }), 'Shape', 'layerNorm: weight must have shape normalizedShape [3], got [2]');
      expectKilnError(kiln, () => F.layerNorm(x, 3, { epsilon: -1 }), 'Value', 'layerNorm: epsilon must be >= 0, got -1');
      expectKilnError(kiln, () => F.layerNorm(x, 'x'), 'Type', /layerNorm: normalizedShape must be an integer or an array of integers/);
      expectKilnError(kiln, () => F.groupNorm(kiln.Tensor.ones([3]), 1), 'Rank', /groupNorm: expected input \[batch_size, channels, \.\.\.\] of rank 2 to 6, got a tensor of rank 1/);
      expectKilnError(kiln, () => F.batchNorm(x, kiln.Tensor.zeros([3]), null), 'Value', 'batchNorm: give both runningMean and runningVar, or neither');
    });
  });
});

describe('losses', () => {
  it('smooth_l1_beta_zero_is_l1: kiln.loss.smoothL1 and F.smoothL1, beta 0 and 1e-6; invalid beta/delta rejected', () => {
    const c = cases.get('smooth_l1_beta_zero_is_l1');
    for (const [name, beta] of [['beta0', 0], ['beta1e-6', 1e-6]]) {
      checkCase(c, ['pred', 'target'], (p, t) => kiln.loss.smoothL1({ beta, reduction: 'none' }).forward(p, t),
        { outKey: name, dyKey: `dy_${name}`, suffix: `__${name}` });
      checkCase(c, ['pred', 'target'], (p, t) => F.smoothL1(p, t, { beta, reduction: 'none' }),
        { outKey: name, dyKey: `dy_${name}`, suffix: `__${name}` });
    }
    expectKilnError(kiln, () => kiln.loss.smoothL1({ beta: -1 }), 'Config', 'loss.smoothL1: beta must be >= 0 and finite, got -1');
    expectKilnError(kiln, () => kiln.loss.huber({ delta: 0 }), 'Config', 'loss.huber: delta must be positive and finite, got 0');
    expectKilnError(kiln, () => kiln.loss.huber({ delta: 1, beta: 2 }), 'Config', 'loss.huber: unknown option "beta" (options: delta, reduction)');
  });

  it('huber by hand: 0.5·r² inside delta, delta·(|r| - delta/2) outside; mean and sum', () => {
    kiln.tidy(() => {
      const p = kiln.Tensor.fromData([0.5, -3, 2, 0]).requireGrad();
      const t = kiln.Tensor.fromData([0, 0, 0, 1]);
      const huber = kiln.loss.huber({ delta: 1.5, reduction: 'none' });
      // r = [0.5, -3, 2, -1]: [0.125, 1.5·(3 - 0.75), 1.5·(2 - 0.75), 0.5]
      expectClose(huber.forward(p, t).dataSync(), [0.125, 3.375, 1.875, 0.5], undefined, 'none');
      const mean = kiln.loss.huber({ delta: 1.5 }).forward(p, t);
      expect(mean.shape).toEqual([]); // a reduced loss is rank 0, as torch (README "Scalar results")
      expectClose(mean.dataSync(), [(0.125 + 3.375 + 1.875 + 0.5) / 4], undefined, 'mean');
      expectClose(F.huber(p, t, { delta: 1.5, reduction: 'sum' }).dataSync(), [5.875], undefined, 'sum');
      // gradient r inside, delta·sign(r) outside, / 4 for the mean
      expectClose(p.grad(mean.backward()).dataSync(), [0.125, -0.375, 0.375, -0.25], undefined, 'grad');
    });
    fdCheck(kiln, (p, t) => F.huber(p, t, { delta: 0.3, reduction: 'none' }), [[3, 4], [3, 4]]);
    fdCheck(kiln, (p, t) => F.smoothL1(p, t, { beta: 0.3 }), [[3, 4], [3, 4]]);
  });

  it('cross_entropy_label_smoothing_weight_ignore: mean, sum, none and the mean\'s gradient', () => {
    const c = cases.get('cross_entropy_label_smoothing_weight_ignore');
    const opts = { weights: caseData(c.inputs.weight), labelSmoothing: 0.2, ignoreIndex: -100 };
    kiln.tidy(() => {
      const logits = caseTensor(kiln, c.inputs.logits).requireGrad();
      const target = caseTensor(kiln, c.inputs.target);
      const mean = F.crossEntropy(logits, target, opts);
      expectClose(mean.dataSync(), caseData(c.expected.loss_mean), c.tolerance, 'mean');
      expectClose(kiln.loss.crossEntropy({ ...opts, reduction: 'sum' }).forward(logits, target).dataSync(), caseData(c.expected.loss_sum), c.tolerance, 'sum');
      expectClose(F.crossEntropy(logits, target, { ...opts, reduction: 'none' }).dataSync(), caseData(c.expected.loss_none), c.tolerance, 'none');
      expectClose(logits.grad(mean.backward()).dataSync(), caseData(c.expected.grad_logits), c.tolerance, 'grad');
    });
  });

  it('bce_with_logits_extreme and bce_probabilities_clamped_log through F', () => {
    checkCase(cases.get('bce_with_logits_extreme'), ['logits', 'target'],
      (x, t) => F.binaryCrossEntropyWithLogits(x, t, { reduction: 'none' }), { gradNames: {} });
    const p = cases.get('bce_probabilities_clamped_log');
    kiln.tidy(() => {
      const out = F.binaryCrossEntropy(caseTensor(kiln, p.inputs.p), caseTensor(kiln, p.inputs.target), { reduction: 'none' });
      expectClose(out.dataSync(), caseData(p.expected.out), p.tolerance, 'out');
    });
  });

  it('posWeight and per-element weight: torch.nn.functional.binary_cross_entropy_with_logits', () => {
    // x = torch.tensor([[0.5, -1., 2.], [-0.25, 3., -2.]]); t = torch.tensor([[1., 0, 1], [0, 1, 1]])
    // pw = torch.tensor([2., 0.5, 3.]); w = torch.tensor([[1., 2, 0.5], [0, 1, 3]])
    // F.binary_cross_entropy_with_logits(x, t, weight=w, pos_weight=pw, reduction='none') = w·l, with
    // l = -(pw·t·log σ(x) + (1 - t)·log(1 - σ(x))), computed here in float64.
    const x = [[0.5, -1, 2], [-0.25, 3, -2]];
    const t = [[1, 0, 1], [0, 1, 1]];
    const pw = [2, 0.5, 3];
    const w = [[1, 2, 0.5], [0, 1, 3]];
    const logSig = (v) => -Math.log1p(Math.exp(-v));
    const l = x.map((row, i) => row.map((v, j) => -(pw[j] * t[i][j] * logSig(v) + (1 - t[i][j]) * logSig(-v))));
    const weighted = l.flatMap((row, i) => row.map((v, j) => v * w[i][j]));
    kiln.tidy(() => {
      const X = kiln.Tensor.fromData(x);
      const T = kiln.Tensor.fromData(t);
      expectClose(kiln.loss.binaryCrossEntropy({ logits: true, posWeight: pw, reduction: 'none' }).forward(X, T).dataSync(), l.flat(), undefined, 'posWeight');
      expectClose(F.binaryCrossEntropyWithLogits(X, T, { posWeight: kiln.Tensor.fromData(pw), weight: kiln.Tensor.fromData(w), reduction: 'none' }).dataSync(),
        weighted, undefined, 'posWeight and weight');
      expectClose(F.binaryCrossEntropyWithLogits(X, T, { posWeight: pw, weight: kiln.Tensor.fromData(w) }).dataSync(),
        [weighted.reduce((a, b) => a + b) / 6], undefined, 'mean');
      expectClose(F.binaryCrossEntropyWithLogits(X, T, { posWeight: 2 }).dataSync(),
        [x.flatMap((row, i) => row.map((v, j) => -(2 * t[i][j] * logSig(v) + (1 - t[i][j]) * logSig(-v)))).reduce((a, b) => a + b) / 6], undefined, 'one posWeight');
    });
    fdCheck(kiln, (X, W) => F.binaryCrossEntropyWithLogits(X, kiln.Tensor.fromData(t), { posWeight: pw, weight: W, reduction: 'sum' }), [[2, 3], [2, 3]]);
    expectKilnError(kiln, () => kiln.loss.binaryCrossEntropy({ posWeight: [1] }), 'Config',
      'loss.binaryCrossEntropy: posWeight needs logits = true (PyTorch\'s BCEWithLogitsLoss; BCELoss on probabilities has none)');
    expectKilnError(kiln, () => kiln.loss.binaryCrossEntropy({ logits: true, posWeight: [-1] }), 'Config', /posWeight: weights\[0\] must be finite and non-negative, got -1/);
    kiln.tidy(() => {
      expectKilnError(kiln, () => kiln.loss.binaryCrossEntropy({ logits: true, posWeight: [1, 2] }).forward(kiln.Tensor.zeros([2, 3]), kiln.Tensor.zeros([2, 3])), 'Shape',
        'BinaryCrossEntropyLoss::forward: posWeight has 2 entries but input [2, 3] has 3 labels in its last dim (give 1 or 3)');
      expectKilnError(kiln, () => F.binaryCrossEntropy(kiln.Tensor.zeros([2]), kiln.Tensor.zeros([2]), { posWeight: [1] }), 'Type',
        'binaryCrossEntropy: unknown option "posWeight" (options: weight, labelSmoothing, reduction)');
    });
  });

  it('the Learner trains with kiln.loss.huber and smoothL1 (regression on float targets)', () => {
    for (const loss of [kiln.loss.huber({ delta: 0.5 }), kiln.loss.smoothL1({ beta: 0.5 })]) {
      const model = kiln.nn.linear({ dInput: 1, dOutput: 1 }, { seed: 1 });
      const learner = new kiln.Learner(model, { optimizer: kiln.optim.sgd({ lr: 0.1 }), loss });
      const x = Float32Array.from([0, 1, 2, 3]);
      const y = Float32Array.from([1, 3, 5, 7]);
      const first = learner.trainBatch(x, y).loss;
      let last = first;
      for (let i = 0; i < 200; i++) last = learner.trainBatch(x, y).loss;
      expect(last).toBeLessThan(first / 10);
      learner.dispose();
      model.dispose();
    }
  });
});

describe('the activations are kiln.activation\'s', () => {
  it('relu, gelu, leakyRelu, softmax by hand and by finite differences', () => {
    kiln.tidy(() => {
      expect(Array.from(F.relu(kiln.Tensor.fromData([-1, 2])).dataSync())).toEqual([0, 2]);
      expectClose(F.leakyRelu(kiln.Tensor.fromData([-1, 2]), 0.2).dataSync(), [-0.2, 2]);
      expectClose(F.softmax(kiln.Tensor.fromData([[0, Math.log(3)]]), 1).dataSync(), [0.25, 0.75]);
    });
    fdCheck(kiln, (x) => F.gelu(x), [[7]]);
    fdCheck(kiln, (x) => F.logSoftmax(x, -1), [[2, 4]]);
  });
});
