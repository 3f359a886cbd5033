// The layers issue 15 adds to kiln.nn (embedding with paddingIdx, convTranspose2d,
// instanceNorm, rmsNorm, layerNorm over several trailing dims, maxPool1d, avgPool1d,
// adaptiveAvgPool1d, batchNorm with momentum null) as factories and Sequential specs, against
// the PyTorch 1.13 reference cases of tests/native/cases/{cases,round2}.jsonl (values and
// gradients of sum(out · dy)), against values computed with PyTorch where no case exists
// (the command next to them), and by finite differences; their records with PyTorch's keys;
// and the bad inputs (KilnError naming the op, what it expected and what it got).
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';
import { caseData, caseTensor, expectClose, safetensorsBytes, safetensorsHeader } from './support/train_helpers.mjs';
import { fdCheck } from './support/gradcheck.mjs';

let kiln;
const cases = new Map();
beforeAll(async () => {
  kiln = await init();
  for (const file of ['cases.jsonl', 'round2.jsonl']) {
    const text = readFileSync(new URL(`../native/cases/${file}`, import.meta.url), 'utf8');
    for (const line of text.split('\n')) if (line.trim()) cases.set(JSON.parse(line).id, JSON.parse(line));
  }
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

/** Loads {key: case tensor} into a layer (F32). */
function load(layer, params) {
  const tensors = {};
  for (const [key, t] of Object.entries(params)) tensors[key] = { dtype: 'F32', shape: t.shape, data: caseData(t) };
  layer.loadSafetensors(safetensorsBytes(tensors));
}

/** out = layer(x) and the gradients of sum(out · dy) for x (when float) and the parameters. */
function run(layer, x, dy) {
  return kiln.tidy(() => {
    const input = x.dtype === 'int32' ? x : x.requireGrad();
    const out = layer.forward(input);
    const r = { out: out.dataSync(), shape: out.shape, params: {} };
    if (dy) {
      const grads = out.mul(dy).sum().backward();
      if (x.dtype !== 'int32') r.gradX = input.grad(grads).dataSync();
      for (const [k, p] of Object.entries(layer.namedParameters())) {
        const g = p.grad(grads);
        if (g) r.params[k] = g.dataSync();
      }
    }
    return r;
  });
}

describe('embedding', () => {
  it('embedding_repeated_indices_grad: kiln.nn.embedding takes int32 indices; repeated rows add up', () => {
    const c = cases.get('embedding_repeated_indices_grad');
    const emb = kiln.nn.embedding({ nEmbedding: 5, dModel: 3 });
    load(emb, { weight: c.inputs.weight });
    const r = kiln.tidy(() => run(emb, caseTensor(kiln, c.inputs.idx), caseTensor(kiln, c.inputs.dy_out)));
    expect(r.shape).toEqual(c.expected.out.shape);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.params.weight, caseData(c.expected.grad_weight), c.tolerance, 'grad_weight');
    emb.dispose();
  });

  it('embedding_padding_idx: paddingIdx 0 and -1 stop the row\'s gradient, the forward keeps its values', () => {
    const c = cases.get('embedding_padding_idx');
    for (const [name, paddingIdx] of [['emb_pad0', 0], ['emb_pad_last', -1]]) {
      const emb = kiln.nn.embedding({ nEmbedding: 4, dModel: 3, paddingIdx });
      load(emb, { weight: c.inputs.weight });
      const r = kiln.tidy(() => run(emb, caseTensor(kiln, c.inputs.idx), caseTensor(kiln, c.inputs[`dy_${name}`])));
      expectClose(r.out, caseData(c.expected[name]), c.tolerance, name);
      expectClose(r.params.weight, caseData(c.expected[`grad_weight__${name}`]), c.tolerance, `grad ${name}`);
      expect(emb.config.paddingIdx).toBe(paddingIdx);
      emb.dispose();
      // The same through kiln.nn.functional.embedding.
      kiln.tidy(() => {
        const w = caseTensor(kiln, c.inputs.weight).requireGrad();
        const out = kiln.nn.functional.embedding(caseTensor(kiln, c.inputs.idx), w, { paddingIdx });
        expectClose(out.dataSync(), caseData(c.expected[name]), c.tolerance, `functional ${name}`);
        const g = out.mul(caseTensor(kiln, c.inputs[`dy_${name}`])).sum().backward();
        expectClose(w.grad(g).dataSync(), caseData(c.expected[`grad_weight__${name}`]), c.tolerance, `functional grad ${name}`);
      });
    }
  });

  it('starts the padding row at zero (PyTorch reset_parameters) and saves "weight" [n, d]', () => {
    const emb = kiln.nn.embedding({ nEmbedding: 4, dModel: 2, paddingIdx: -2 }, { seed: 3 });
    kiln.tidy(() => {
      const w = emb.namedParameters().weight.toArray();
      expect(w[2]).toEqual([0, 0]);
      expect(w[0].some((v) => v !== 0)).toBe(true);
    });
    const header = safetensorsHeader(emb.saveSafetensors());
    expect(Object.keys(header).filter((k) => k !== '__metadata__')).toEqual(['weight']);
    expect(header.weight).toMatchObject({ dtype: 'F32', shape: [4, 2] });
    emb.dispose();
  });

  it('is the first layer of a Sequential: int32 [batch, seq] -> [batch, seq, dModel] -> linear', () => {
    const model = kiln.nn.sequential([{ type: 'embedding', nEmbedding: 3, dModel: 2 }, { type: 'linear', dInput: 2, dOutput: 1, bias: false }]);
    model.loadSafetensors(safetensorsBytes({
      '0.weight': { dtype: 'F32', shape: [3, 2], data: [1, 2, 3, 4, 5, 6] },
      '1.weight': { dtype: 'F32', shape: [1, 2], data: [1, -1] },
    }));
    kiln.tidy(() => {
      const y = model.forward(kiln.Tensor.fromData([[0, 2], [1, 1]], { dtype: 'int32' }));
      expect(y.shape).toEqual([2, 2, 1]);
      expect(Array.from(y.dataSync())).toEqual([-1, -1, -1, -1]);
    });
    expect(model.outputShape([5])).toEqual([5, 1]);
    model.dispose();
  });

  it('bad inputs: out-of-range index, paddingIdx out of range, float indices that are not integers', () => {
    const emb = kiln.nn.embedding({ nEmbedding: 4, dModel: 2 });
    kiln.tidy(() => {
      expectKilnError(kiln, () => emb.forward(kiln.Tensor.fromData([[1, 4]], { dtype: 'int32' })), 'Index',
        /Embedding::forward: index 4 at \[0, 1\] is out of range \[0, 4\)/);
      expectKilnError(kiln, () => emb.forward(kiln.Tensor.fromData([[-1]], { dtype: 'int32' })), 'Index', /index -1 at \[0, 0\]/);
      expectKilnError(kiln, () => emb.forward(kiln.Tensor.fromData([[0.5, 1]])), 'Value', /expected integer indices, got 0.5 at \[0, 0\]/);
      const w = kiln.Tensor.zeros([4, 2]);
      expectKilnError(kiln, () => kiln.nn.functional.embedding(kiln.Tensor.fromData([4], { dtype: 'int32' }), w), 'Index',
        /embedding: index 4 at \[0, 0\] is out of range \[0, 4\)/);
      expectKilnError(kiln, () => kiln.nn.functional.embedding(kiln.Tensor.fromData([-1], { dtype: 'int32' }), w), 'Index', /index -1/);
      expectKilnError(kiln, () => kiln.nn.functional.embedding(kiln.Tensor.fromData([1], { dtype: 'int32' }), w, { paddingIdx: 4 }), 'Config',
        'embedding: paddingIdx must be in [-4, 4) (the weight has 4 rows), got 4');
      expectKilnError(kiln, () => kiln.nn.functional.embedding(kiln.Tensor.fromData([1]), w), 'DType', 'embedding: expected an int32 tensor, got float32 (shape [1])');
    });
    emb.dispose();
    expectKilnError(kiln, () => kiln.nn.embedding({ nEmbedding: 4, dModel: 2, paddingIdx: -5 }), 'Config',
      'SequentialConfig: layers[0] (embedding): paddingIdx must be in [-4, 4) (nEmbedding = 4), got -5');
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'conv1d', channels: [1, 2], kernelSize: 1 }, { type: 'embedding', nEmbedding: 4, dModel: 2 }]), 'Config',
      'SequentialConfig: layers[1] (embedding): expects input [batch_size, seqLength] (indices) (items of rank 1) but the previous layer outputs items [2, ?]');
  });
});

describe('convTranspose2d', () => {
  it('conv_transpose2d_output_padding: the layer and the functional form, values and gradients', () => {
    const c = cases.get('conv_transpose2d_output_padding');
    const layer = kiln.nn.convTranspose2d({ channels: [2, 3], kernelSize: 3, stride: 2, padding: 1, paddingOut: 1 });
    load(layer, { weight: c.inputs.w, bias: c.inputs.bias });
    const r = kiln.tidy(() => run(layer, caseTensor(kiln, c.inputs.x), caseTensor(kiln, c.inputs.dy_out)));
    expect(r.shape).toEqual([1, 3, 6, 6]);
    expectClose(r.out, caseData(c.expected.out), c.tolerance, 'out');
    expectClose(r.gradX, caseData(c.expected.grad_x), c.tolerance, 'grad_x');
    expectClose(r.params.weight, caseData(c.expected.grad_w), c.tolerance, 'grad_w');
    expectClose(r.params.bias, caseData(c.expected.grad_bias), c.tolerance, 'grad_bias');
    const header = safetensorsHeader(layer.saveSafetensors());
    expect(header.weight.shape).toEqual([2, 3, 3, 3]);
    expect(header.bias.shape).toEqual([3]);
    expect(layer.outputShape([2, 3, 3])).toEqual([3, 6, 6]);
    layer.dispose();
    kiln.tidy(() => {
      const x = caseTensor(kiln, c.inputs.x).requireGrad();
      const w = caseTensor(kiln, c.inputs.w).requireGrad();
      const b = caseTensor(kiln, c.inputs.bias).requireGrad();
      const out = kiln.nn.functional.convTranspose2d(x, w, b, { stride: 2, padding: 1, paddingOut: 1 });
      expectClose(out.dataSync(), caseData(c.expected.out), c.tolerance, 'functional out');
      const g = out.mul(caseTensor(kiln, c.inputs.dy_out)).sum().backward();
      expectClose(x.grad(g).dataSync(), caseData(c.expected.grad_x), c.tolerance, 'functional grad_x');
      expectClose(w.grad(g).dataSync(), caseData(c.expected.grad_w), c.tolerance, 'functional grad_w');
      expectClose(b.grad(g).dataSync(), caseData(c.expected.grad_bias), c.tolerance, 'functional grad_bias');
    });
  });

  it('bad configs and inputs name the layer', () => {
    expectKilnError(kiln, () => kiln.nn.convTranspose2d({ channels: [2, 3], kernelSize: 3, stride: 2, paddingOut: 2 }), 'Config',
      /layers\[0\] \(convTranspose2d\): paddingOut must be smaller than stride or dilation, got paddingOut 2, stride 2, dilation 1 in dim 0/);
    expectKilnError(kiln, () => kiln.nn.convTranspose2d({ channels: [3, 4], kernelSize: 3, groups: 2 }), 'Config', /divisible by groups/);
    const layer = kiln.nn.convTranspose2d({ channels: [2, 3], kernelSize: 3 });
    kiln.tidy(() => {
      expectKilnError(kiln, () => layer.forward(kiln.Tensor.zeros([1, 4, 3, 3])), 'Shape', /convTranspose2d/);
      expectKilnError(kiln, () => layer.forward(kiln.Tensor.zeros([1, 2, 3])), 'Shape', /expected input \[batch_size, channels, height, width\] \(rank 4\), got \[1, 2, 3\]/);
    });
    layer.dispose();
  });
});

describe('pools over one dim', () => {
  it('maxpool_ceil_mode_drops_window_in_padding: maxPool2d and maxPool1d layers and functional forms', () => {
    const c = cases.get('maxpool_ceil_mode_drops_window_in_padding');
    const check = (name, xKey, layer, fn) => {
      const r = kiln.tidy(() => run(layer, caseTensor(kiln, c.inputs[xKey]), caseTensor(kiln, c.inputs[`dy_${name}`])));
      expect(r.shape).toEqual(c.expected[name].shape);
      expectClose(r.out, caseData(c.expected[name]), c.tolerance, name);
      expectClose(r.gradX, caseData(c.expected[`grad_${xKey}__${name}`]), c.tolerance, `grad ${name}`);
      layer.dispose();
      kiln.tidy(() => {
        const x = caseTensor(kiln, c.inputs[xKey]).requireGrad();
        const out = fn(x);
        expectClose(out.dataSync(), caseData(c.expected[name]), c.tolerance, `functional ${name}`);
        const g = out.mul(caseTensor(kiln, c.inputs[`dy_${name}`])).sum().backward();
        expectClose(x.grad(g).dataSync(), caseData(c.expected[`grad_${xKey}__${name}`]), c.tolerance, `functional grad ${name}`);
      });
    };
    const F = () => kiln.nn.functional;
    check('p5', 'x5', kiln.nn.maxPool2d({ kernelSize: 2, stride: 2, padding: 1, ceilMode: true }),
      (x) => F().maxPool2d(x, { kernelSize: 2, stride: 2, padding: 1, ceilMode: true }));
    check('p67', 'x67', kiln.nn.maxPool2d({ kernelSize: 1, stride: 2, ceilMode: true }),
      (x) => F().maxPool2d(x, { kernelSize: 1, stride: 2, ceilMode: true }));
    check('p9', 'x9', kiln.nn.maxPool1d({ kernelSize: 2, stride: 3, ceilMode: true }),
      (x) => F().maxPool1d(x, { kernelSize: 2, stride: 3, ceilMode: true }));
    check('p7', 'x7', kiln.nn.maxPool1d({ kernelSize: 2, stride: 2, ceilMode: true }),
      (x) => F().maxPool1d(x, { kernelSize: 2, stride: 2, ceilMode: true }));
    // The spec's shape rule applies the same ceil-mode rule.
    const m = kiln.nn.maxPool1d({ kernelSize: 2, stride: 3, ceilMode: true });
    expect(m.outputShape([1, 9])).toEqual([1, 3]);
    m.dispose();
  });

  it('pool_padding_over_half_kernel_rejected: rejected as PyTorch, pad == kernel / 2 computed', () => {
    const c = cases.get('pool_padding_over_half_kernel_rejected');
    const F = kiln.nn.functional;
    kiln.tidy(() => {
      const x = caseTensor(kiln, c.inputs.x);
      expectKilnError(kiln, () => F.maxPool2d(x, { kernelSize: 2, stride: 2, padding: 2 }), 'Config', /maxPool2d: .*padding/);
      expectKilnError(kiln, () => F.maxPool2d(x, { kernelSize: 3, stride: 2, padding: 2, dilation: 2 }), 'Config', /maxPool2d: .*padding/);
      expectKilnError(kiln, () => F.avgPool2d(x, { kernelSize: 2, stride: 2, padding: 2 }), 'Config', /avgPool2d: .*padding/);
      expectClose(F.maxPool2d(x, { kernelSize: 4, stride: 4, padding: 2 }).dataSync(), caseData(c.expected.maxpool_k4_s4_p2), c.tolerance, 'max k4');
      expectClose(F.avgPool2d(x, { kernelSize: 4, stride: 4, padding: 2, countIncludePad: true }).dataSync(),
        caseData(c.expected.avgpool_k4_s4_p2), c.tolerance, 'avg k4');
      // The 1-D forms and layers follow the same rule.
      const x1 = kiln.Tensor.zeros([1, 1, 5]);
      expectKilnError(kiln, () => F.maxPool1d(x1, { kernelSize: 2, padding: 2 }), 'Config', /maxPool1d: .*padding/);
      expectKilnError(kiln, () => F.avgPool1d(x1, { kernelSize: 3, padding: 2 }), 'Config', /avgPool1d: .*padding/);
    });
    expectKilnError(kiln, () => kiln.nn.maxPool1d({ kernelSize: 2, padding: 2 }), 'Config',
      'SequentialConfig: layers[0] (maxPool1d): padding must be in [0, kernelSize / 2] (as PyTorch), got padding 2 for kernelSize 2');
    expectKilnError(kiln, () => kiln.nn.avgPool1d({ kernelSize: 4, padding: 3 }), 'Config', /layers\[0\] \(avgPool1d\): padding must be in/);
    expectKilnError(kiln, () => kiln.nn.adaptiveAvgPool1d({ outputSize: 0 }), 'Config', /layers\[0\] \(adaptiveAvgPool1d\): outputSize must be >= 1, got 0/);
  });

  it('avgPool1d and adaptiveAvgPool1d layers match torch.nn.AvgPool1d / AdaptiveAvgPool1d', () => {
    // /usr/bin/python3 -c 'import torch; x = torch.arange(7.).reshape(1, 1, 7) ** 2;
    //   print(torch.nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False)(x), torch.nn.AdaptiveAvgPool1d(3)(x))'
    // -> [0.5000, 4.6667, 16.6667, 30.5000] and [1.6667, 9.6667, 25.6667] (windows [0,3), [2,5), [4,7): 5/3, 29/3, 77/3)
    const x = [0, 1, 4, 9, 16, 25, 36];
    const avg = kiln.nn.avgPool1d({ kernelSize: 3, stride: 2, padding: 1, countIncludePad: false });
    const ad = kiln.nn.adaptiveAvgPool1d({ outputSize: 3 });
    kiln.tidy(() => {
      const t = kiln.Tensor.fromData(x, { shape: [1, 1, 7] });
      expectClose(avg.forward(t).dataSync(), [0.5, 14 / 3, 50 / 3, 30.5], undefined, 'avgPool1d');
      expectClose(ad.forward(t).dataSync(), [5 / 3, 29 / 3, 77 / 3], undefined, 'adaptiveAvgPool1d');
      expectKilnError(kiln, () => ad.forward(kiln.Tensor.zeros([1, 7])), 'Shape', /expected input \[batch_size, channels, length\] \(rank 3\), got \[1, 7\]/);
    });
    expect(kiln.nn.sequential([{ type: 'avgPool1d', kernelSize: 3, stride: 2, padding: 1 }, { type: 'adaptiveAvgPool1d', outputSize: 2 }]).outputShape([4, 7])).toEqual([4, 2]);
    avg.dispose();
    ad.dispose();
  });
});

describe('normalisations', () => {
  it('layerNorm over several trailing dims: torch.nn.LayerNorm([2, 3]), weight [2, 3] in the records', () => {
    // /usr/bin/python3 -c 'import torch; x = torch.tensor([[[1., 2, 4], [8, 16, 32]], [[0, -1, 3], [2, 2, 5]]]);
    //   print(torch.nn.LayerNorm([2, 3])(x).flatten().tolist())'
    const want = [-0.8773384094238281, -0.7849870324134827, -0.600284218788147, -0.2308785319328308, 0.5079327821731567,
      1.9855554103851318, -0.939792275428772, -1.4524061679840088, 0.5980495810508728, 0.08543562889099121,
      0.08543562889099121, 1.6232774257659912];
    const ln = kiln.nn.layerNorm({ normalizedShape: [2, 3] });
    const header = safetensorsHeader(ln.saveSafetensors());
    expect(header.weight.shape).toEqual([2, 3]);
    expect(header.bias.shape).toEqual([2, 3]);
    const r = kiln.tidy(() => run(ln, kiln.Tensor.fromData([[[1, 2, 4], [8, 16, 32]], [[0, -1, 3], [2, 2, 5]]]), null));
    expectClose(r.out, want, { abs: 1e-5, rel: 1e-4 }, 'layerNorm([2, 3])');
    expect(ln.config).toMatchObject({ type: 'layerNorm', normalizedShape: [2, 3] });
    kiln.tidy(() => {
      expectKilnError(kiln, () => ln.forward(kiln.Tensor.zeros([2, 3, 2])), 'Shape', /LayerNorm::forward: expected input \[\.\.\., 2, 3\]/);
    });
    ln.dispose();
    expectKilnError(kiln, () => kiln.nn.layerNorm({ normalizedShape: [2, 0] }), 'Config', /normalizedShape must have 1 to 3 dims, each >= 1, got \[2, 0\]/);
    expectKilnError(kiln, () => kiln.nn.layerNorm({ dModel: 4, normalizedShape: [2, 3] }), 'Config', /dModel is 4 but normalizedShape \[2, 3\] ends in 3/);
    expectKilnError(kiln, () => kiln.nn.layerNorm({}), 'Config', /dModel must be >= 1, got 0/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'conv1d', channels: [1, 2], kernelSize: 1 }, { type: 'layerNorm', normalizedShape: [3, 5] }]), 'Config',
      /layers\[1\] \(layerNorm\): normalizedShape is \[3, 5\] but the previous layer outputs/);
  });

  it('layernorm_eps_inside_sqrt through kiln.nn.functional.layerNorm', () => {
    const c = cases.get('layernorm_eps_inside_sqrt');
    kiln.tidy(() => {
      const x = caseTensor(kiln, c.inputs.x).requireGrad();
      const w = caseTensor(kiln, c.inputs.weight).requireGrad();
      const b = caseTensor(kiln, c.inputs.bias).requireGrad();
      const out = kiln.nn.functional.layerNorm(x, 4, { weight: w, bias: b, epsilon: 0.5 });
      expectClose(out.dataSync(), caseData(c.expected.out), c.tolerance, 'out');
      const g = out.mul(caseTensor(kiln, c.inputs.dy_out)).sum().backward();
      expectClose(x.grad(g).dataSync(), caseData(c.expected.grad_x), c.tolerance, 'grad_x');
      expectClose(w.grad(g).dataSync(), caseData(c.expected.grad_weight), c.tolerance, 'grad_weight');
      expectClose(b.grad(g).dataSync(), caseData(c.expected.grad_bias), c.tolerance, 'grad_bias');
    });
  });

  it('instanceNorm and rmsNorm match torch.nn.InstanceNorm1d(affine=True) / RMSNorm', () => {
    // /usr/bin/python3 -c 'import torch; x = torch.tensor([[[1., 2, 4, 7], [0, 0, 1, -1]]]);
    //   print(torch.nn.InstanceNorm1d(2, affine=True)(x).flatten().tolist())'
    // RMSNorm (torch 1.13 has no nn.RMSNorm): x / sqrt(mean(x²) + 1e-5), by hand below
    const x = [[[1, 2, 4, 7], [0, 0, 1, -1]]];
    const inorm = kiln.nn.instanceNorm({ numChannels: 2 });
    const rms = kiln.nn.rmsNorm({ dModel: 4 });
    kiln.tidy(() => {
      const t = kiln.Tensor.fromData(x);
      expectClose(inorm.forward(t).dataSync(), [-1.0910884141921997, -0.654653012752533, 0.21821773052215576, 1.5275238752365112, 0, 0, 1.4141994714736938, -1.4141994714736938], undefined, 'instanceNorm');
      const want = x[0].flatMap((row) => {
        const r = Math.sqrt(row.reduce((s, v) => s + v * v, 0) / 4 + 1e-5);
        return row.map((v) => v / r);
      });
      expectClose(rms.forward(t).dataSync(), want, undefined, 'rmsNorm');
      expectKilnError(kiln, () => inorm.forward(kiln.Tensor.zeros([2, 2])), 'Shape', /rank/);
      expectKilnError(kiln, () => inorm.forward(kiln.Tensor.zeros([1, 3, 4])), 'Shape', /InstanceNorm::forward: expected input \[batch_size, 2, \.\.\.\]/);
      expectKilnError(kiln, () => rms.forward(kiln.Tensor.zeros([1, 3])), 'Shape', /RmsNorm::forward: expected input \[\.\.\., 4\]/);
    });
    expect(Object.keys(safetensorsHeader(inorm.saveSafetensors())).sort()).toEqual(['bias', 'weight']);
    expect(Object.keys(safetensorsHeader(rms.saveSafetensors()))).toContain('weight');
    inorm.dispose();
    rms.dispose();
    expectKilnError(kiln, () => kiln.nn.rmsNorm({ dModel: 0 }), 'Config', /layers\[0\] \(rmsNorm\): need dModel >= 1/);
    expectKilnError(kiln, () => kiln.nn.instanceNorm({ numChannels: 2, epsilon: -1 }), 'Config', /layers\[0\] \(instanceNorm\): need numChannels >= 1 and epsilon >= 0/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'linear', dInput: 3, dOutput: 5 }, { type: 'rmsNorm', dModel: 4 }]), 'Config',
      /layers\[1\] \(rmsNorm\): dModel is 4 but the previous layer outputs/);
  });

  it('batchnorm_cumulative_average_and_single_value: momentum null is the cumulative average', () => {
    const c = cases.get('batchnorm_cumulative_average_and_single_value');
    const bn = kiln.nn.batchNorm({ numFeatures: 2, momentum: null });
    expect(bn.config.momentum).toBe(null);
    for (const i of [1, 2, 3]) {
      kiln.tidy(() => {
        bn.forward(caseTensor(kiln, c.inputs[`x${i}`]));
        const p = bn.namedParameters();
        expectClose(p.running_mean.dataSync(), caseData(c.expected[`running_mean_after_${i}`]), c.tolerance, `running_mean ${i}`);
        expectClose(p.running_var.dataSync(), caseData(c.expected[`running_var_after_${i}`]), c.tolerance, `running_var ${i}`);
        expect(Array.from(p.num_batches_tracked.dataSync())).toEqual([i]);
      });
    }
    bn.eval();
    kiln.tidy(() => expectClose(bn.forward(caseTensor(kiln, c.inputs.x_eval)).dataSync(), caseData(c.expected.y_eval), c.tolerance, 'y_eval'));
    bn.dispose();
    const bn01 = kiln.nn.batchNorm({ numFeatures: 2, momentum: 0.01 });
    kiln.tidy(() => {
      bn01.forward(caseTensor(kiln, c.inputs.x1));
      bn01.forward(caseTensor(kiln, c.inputs.x2));
      const p = bn01.namedParameters();
      expectClose(p.running_mean.dataSync(), caseData(c.expected['momentum_0.01_running_mean']), c.tolerance, 'momentum 0.01 mean');
      expectClose(p.running_var.dataSync(), caseData(c.expected['momentum_0.01_running_var']), c.tolerance, 'momentum 0.01 var');
    });
    bn01.dispose();
    const bn1 = kiln.nn.batchNorm({ numFeatures: 1 });
    kiln.tidy(() => {
      expectClose(bn1.forward(caseTensor(kiln, c.inputs.x_n1l2)).dataSync(), caseData(c.expected.train_n1_l2), c.tolerance, 'train_n1_l2');
      expectKilnError(kiln, () => bn1.forward(kiln.Tensor.zeros([1, 1, 1, 1])), 'Shape', /expected more than 1 value per channel when training, got input \[1, 1, 1, 1\]/);
    });
    bn1.dispose();
    const bn2 = kiln.nn.batchNorm({ numFeatures: 2 });
    kiln.tidy(() => {
      expectKilnError(kiln, () => bn2.forward(kiln.Tensor.zeros([1, 2])), 'Shape', /expected more than 1 value per channel when training, got input \[1, 2\]/);
    });
    bn2.dispose();
  });

  it('batchnorm1d_running_var_unbiased through kiln.nn.functional.batchNorm (training, then eval)', () => {
    const c = cases.get('batchnorm1d_running_var_unbiased');
    kiln.tidy(() => {
      const x = caseTensor(kiln, c.inputs.x).requireGrad();
      const w = caseTensor(kiln, c.inputs.weight).requireGrad();
      const b = caseTensor(kiln, c.inputs.bias).requireGrad();
      const r = kiln.nn.functional.batchNorm(x, caseTensor(kiln, c.inputs.running_mean), caseTensor(kiln, c.inputs.running_var),
        { weight: w, bias: b, training: true, momentum: 0.1, epsilon: 1e-5 });
      expectClose(r.output.dataSync(), caseData(c.expected.y), c.tolerance, 'y');
      expectClose(r.runningMean.dataSync(), caseData(c.expected.running_mean_after), c.tolerance, 'running_mean');
      expectClose(r.runningVar.dataSync(), caseData(c.expected.running_var_after), c.tolerance, 'running_var');
      const g = r.output.mul(caseTensor(kiln, c.inputs.dy_y)).sum().backward();
      expectClose(x.grad(g).dataSync(), caseData(c.expected.grad_x), c.tolerance, 'grad_x');
      expectClose(w.grad(g).dataSync(), caseData(c.expected.grad_weight), c.tolerance, 'grad_weight');
      expectClose(b.grad(g).dataSync(), caseData(c.expected.grad_bias), c.tolerance, 'grad_bias');
      const y = kiln.nn.functional.batchNorm(caseTensor(kiln, c.inputs.x_eval), r.runningMean, r.runningVar, { weight: w, bias: b });
      expectClose(y.dataSync(), caseData(c.expected.y_eval), c.tolerance, 'y_eval');
      expectKilnError(kiln, () => kiln.nn.functional.batchNorm(x, kiln.Tensor.zeros([3]), kiln.Tensor.ones([2])), 'Shape',
        'batchNorm: runningMean must be [2] (one per channel), got [3]');
      expectKilnError(kiln, () => kiln.nn.functional.batchNorm(x, null, null, { momentum: 2, training: true }), 'Value', 'batchNorm: momentum must be in [0, 1], got 2');
    });
  });

  it('groupNorm through kiln.nn.functional: torch.nn.functional.group_norm and its errors', () => {
    // /usr/bin/python3 -c 'import torch; print(torch.nn.functional.group_norm(torch.arange(8.).reshape(1, 4, 2), 2).flatten().tolist())'
    // -> [-1.3416354656219482, -0.4472118318080902, 0.4472118318080902, 1.3416354656219482, (again)]
    kiln.tidy(() => {
      const x = kiln.Tensor.arange(0, 8).float().reshape([1, 4, 2]);
      expectClose(kiln.nn.functional.groupNorm(x, 2).dataSync(), [-1.3416355, -0.4472118, 0.4472118, 1.3416355, -1.3416355, -0.4472118, 0.4472118, 1.3416355], undefined, 'groupNorm');
      expectKilnError(kiln, () => kiln.nn.functional.groupNorm(x, 3), 'Value', 'groupNorm: numGroups must be >= 1 and divide the 4 channels of input [1, 4, 2], got 3');
      expectKilnError(kiln, () => kiln.nn.functional.groupNorm(x, 2, { weight: kiln.Tensor.ones([3]) }), 'Shape', 'groupNorm: weight must be [4] (one per channel), got [3]');
    });
  });
});

describe('finite differences: the gradients of the new layers', () => {
  it('convTranspose2d, maxPool1d, avgPool1d, adaptiveAvgPool1d, layerNorm [2, 3], instanceNorm, rmsNorm (input gradients)', () => {
    const mods = [
      [kiln.nn.convTranspose2d({ channels: [2, 2], kernelSize: 2, stride: 2, paddingOut: 1 }, { seed: 1 }), [1, 2, 2, 2]],
      [kiln.nn.maxPool1d({ kernelSize: 3, stride: 2, padding: 1, ceilMode: true }), [2, 1, 6]],
      [kiln.nn.avgPool1d({ kernelSize: 3, stride: 2, padding: 1, countIncludePad: false, ceilMode: true }), [2, 1, 6]],
      [kiln.nn.adaptiveAvgPool1d({ outputSize: 4 }), [1, 2, 7]],
      [kiln.nn.layerNorm({ normalizedShape: [2, 3] }), [2, 2, 3]],
      [kiln.nn.instanceNorm({ numChannels: 2 }), [2, 2, 3]],
      [kiln.nn.rmsNorm({ dModel: 3 }), [2, 3]],
    ];
    for (const [layer, shape] of mods) {
      fdCheck(kiln, (x) => layer.forward(x), [shape]);
      layer.dispose();
    }
  });
});
