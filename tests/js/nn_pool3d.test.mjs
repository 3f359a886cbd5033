// kiln.nn.functional.maxPool3d / avgPool3d / adaptiveAvgPool3d: values and input gradients
// against PyTorch 1.13 (tests/native/nn/resample_fixtures.json, written by
// make_resample_fixtures.py; objective sum(out · dy)), finite differences, bad arguments.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';
import { expectClose } from './support/train_helpers.mjs';
import { fdCheck } from './support/gradcheck.mjs';

let kiln;
let F;
let fixtures;
beforeAll(async () => {
  kiln = await init();
  F = kiln.nn.functional;
  fixtures = JSON.parse(readFileSync(new URL('../native/nn/resample_fixtures.json', import.meta.url), 'utf8')).cases;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const tol = { abs: 1e-5, rel: 1e-5 };
const tensor = (t) => kiln.Tensor.fromData(Float32Array.from(t.data), { shape: t.shape });

/** The JS call of a fixture case (PyTorch's argument names -> kiln.nn.functional's). */
function run(c, x) {
  const a = c.args;
  if (c.op === 'max_pool3d') {
    return F.maxPool3d(x, { kernelSize: a.kernel_size, stride: a.stride, padding: a.padding, dilation: a.dilation, ceilMode: a.ceil_mode });
  }
  if (c.op === 'avg_pool3d') {
    return F.avgPool3d(x, { kernelSize: a.kernel_size, stride: a.stride, padding: a.padding, countIncludePad: a.count_include_pad, ceilMode: a.ceil_mode });
  }
  return F.adaptiveAvgPool3d(x, a.output_size);
}

describe('3-D pools', () => {
  it('values and input gradients match torch.nn.functional (ties, padding, dilation, ceil mode)', () => {
    const cs = fixtures.filter((c) => c.op.endsWith('pool3d'));
    expect(cs.length).toBe(9);
    for (const c of cs) {
      kiln.tidy(() => {
        const x = tensor(c.x).requireGrad();
        const out = run(c, x);
        expect(out.shape, c.name).toEqual(c.out.shape);
        expectClose(out.dataSync(), c.out.data, tol, `${c.name} out`);
        const g = out.mul(tensor(c.dy)).sum().backward();
        expectClose(x.grad(g).dataSync(), c.grad_x.data, tol, `${c.name} grad_x`);
      });
    }
  });

  it('defaults: stride = kernelSize, one number for all three dims', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData(Float32Array.from({ length: 8 }, (_, i) => i), { shape: [1, 1, 2, 2, 2] });
      expect(Array.from(F.maxPool3d(x, { kernelSize: 2 }).dataSync())).toEqual([7]);
      expect(Array.from(F.avgPool3d(x, { kernelSize: 2 }).dataSync())).toEqual([3.5]);
      expect(Array.from(F.adaptiveAvgPool3d(x, [1, 1, 2]).dataSync())).toEqual([3, 4]);
      expect(F.maxPool3d(kiln.Tensor.zeros([2, 3, 4, 6, 8]), { kernelSize: [2, 3, 4] }).shape).toEqual([2, 3, 2, 2, 2]);
    });
  });

  it('finite differences', () => {
    fdCheck(kiln, (x) => F.avgPool3d(x, { kernelSize: [3, 2, 2], stride: [2, 1, 2], padding: 1, countIncludePad: false, ceilMode: true }), [[1, 2, 4, 3, 3]]);
    fdCheck(kiln, (x) => F.adaptiveAvgPool3d(x, [2, 3, 2]), [[1, 1, 3, 4, 3]]);
    fdCheck(kiln, (x) => F.maxPool3d(x, { kernelSize: 2, stride: 1 }), [[1, 1, 3, 3, 3]]);
  });

  it('bad arguments are KilnErrors naming the op', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([1, 2, 3, 4, 5]);
      expectKilnError(kiln, () => F.maxPool3d(kiln.Tensor.zeros([1, 4, 4, 4]), { kernelSize: 2 }), 'Rank', /maxPool3d: .*rank 5/);
      expectKilnError(kiln, () => F.maxPool3d(x, { kernelSize: [4, 2, 2] }), 'Shape', /maxPool3d: the window \(kernelSize \{4, 2, 2\}/);
      expectKilnError(kiln, () => F.avgPool3d(x, { kernelSize: 2, padding: [0, 2, 0] }), 'Config', /avgPool3d: padding must be in \[0, kernelSize \/ 2\]/);
      expectKilnError(kiln, () => F.avgPool3d(x, { kernelSize: [2, 2] }), 'Type', /avgPool3d: kernelSize must be an integer or 3 integers/);
      expectKilnError(kiln, () => F.adaptiveAvgPool3d(x, [1, 0, 1]), 'Config', 'adaptiveAvgPool3d: outputSize must be >= 1, got {1, 0, 1}');
      expectKilnError(kiln, () => F.maxPool3d(x, { kernelSize: 2, dilations: 2 }), 'Type', /unknown option "dilations"/);
    });
  });
});

describe('3-D pool layers', () => {
  it('kiln.nn.maxPool3d / avgPool3d / adaptiveAvgPool3d and specs equal the functional forms', () => {
    expect(kiln.nn.layerTypes).toEqual(expect.arrayContaining(['maxPool3d', 'avgPool3d', 'adaptiveAvgPool3d']));
    const model = kiln.nn.sequential([
      { type: 'maxPool3d', kernelSize: 2, stride: [1, 2, 2], padding: [1, 0, 0] },
      { type: 'avgPool3d', kernelSize: [1, 2, 2], ceilMode: true },
      { type: 'adaptiveAvgPool3d', outputSize: 1 },
    ]);
    expect(model.outputShape([3, 4, 8, 9])).toEqual([3, 1, 1, 1]);
    expect(model.config.layers[0]).toEqual({ type: 'maxPool3d', kernelSize: [2, 2, 2], stride: [1, 2, 2], padding: [1, 0, 0], dilation: [1, 1, 1], ceilMode: false });
    kiln.tidy(() => {
      const x = kiln.Tensor.random([2, 3, 4, 8, 9], { normal: [0, 1] });
      const want = F.adaptiveAvgPool3d(F.avgPool3d(F.maxPool3d(x, { kernelSize: 2, stride: [1, 2, 2], padding: [1, 0, 0] }), { kernelSize: [1, 2, 2], ceilMode: true }), 1);
      const y = model.forward(x);
      expect(y.shape).toEqual([2, 3, 1, 1, 1]);
      expect(Array.from(y.dataSync())).toEqual(Array.from(want.dataSync()));
    });
    model.dispose();
    const layer = kiln.nn.maxPool3d({ kernelSize: 2 });
    kiln.tidy(() => expect(layer.forward(kiln.Tensor.zeros([1, 1, 4, 4, 4])).shape).toEqual([1, 1, 2, 2, 2]));
    layer.dispose();
  });

  it('bad specs name the layer', () => {
    expectKilnError(kiln, () => kiln.nn.avgPool3d({ kernelSize: 3, padding: 2 }), 'Config', /layers\[0\] \(avgPool3d\): padding must be in/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'conv2d', channels: [1, 2], kernelSize: 3 }, { type: 'maxPool3d', kernelSize: 2 }]),
      'Config', /layers\[1\] \(maxPool3d\): expects input \[batch_size, channels, depth, height, width\]/);
  });
});
