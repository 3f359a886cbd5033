// kiln.nn.functional.interpolate and the upsample layer (kiln.nn.upsample, {type:
// 'upsample'}): values and input gradients against PyTorch 1.13
// (tests/native/nn/resample_fixtures.json, written by make_resample_fixtures.py; objective
// sum(out · dy)), values by hand, finite differences, bad arguments.
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
  fixtures = JSON.parse(readFileSync(new URL('../native/nn/resample_fixtures.json', import.meta.url), 'utf8')).cases
    .filter((c) => c.op === 'interpolate');
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const tol = { abs: 1e-5, rel: 1e-5 };
const tensor = (t) => kiln.Tensor.fromData(Float32Array.from(t.data), { shape: t.shape });
const options = (a) => ({
  ...(a.size !== undefined ? { size: a.size } : {}),
  ...(a.scale_factor !== undefined ? { scaleFactor: a.scale_factor } : {}),
  mode: a.mode,
  ...(a.mode === 'bilinear' ? { alignCorners: a.align_corners } : {}),
});

describe('interpolate', () => {
  it('values and input gradients match torch.nn.functional.interpolate (nearest 3-D/4-D, bilinear both alignments)', () => {
    expect(fixtures.length).toBe(14);
    for (const c of fixtures) {
      kiln.tidy(() => {
        const x = tensor(c.x).requireGrad();
        const out = F.interpolate(x, options(c.args));
        expect(out.shape, c.name).toEqual(c.out.shape);
        expectClose(out.dataSync(), c.out.data, tol, `${c.name} out`);
        const g = out.mul(tensor(c.dy)).sum().backward();
        expectClose(x.grad(g).dataSync(), c.grad_x.data, tol, `${c.name} grad_x`);
      });
    }
  });

  it('by hand: nearest x2 repeats, bilinear with alignCorners averages the corners', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([[[[1, 2], [3, 4]]]]);
      expect(Array.from(F.interpolate(x, { scaleFactor: 2 }).dataSync())).toEqual([1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
      expect(Array.from(F.interpolate(x, { size: 3, mode: 'bilinear', alignCorners: true }).dataSync()))
        .toEqual([1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4]);
      expect(F.interpolate(kiln.Tensor.zeros([2, 3, 5]), { size: 8 }).shape).toEqual([2, 3, 8]);
    });
  });

  it('finite differences', () => {
    fdCheck(kiln, (x) => F.interpolate(x, { size: [5, 3], mode: 'bilinear' }), [[1, 2, 3, 4]]);
    fdCheck(kiln, (x) => F.interpolate(x, { scaleFactor: [1.5, 0.75], mode: 'bilinear', alignCorners: true }), [[1, 1, 3, 4]]);
    fdCheck(kiln, (x) => F.interpolate(x, { scaleFactor: 1.5 }), [[1, 2, 3]]);
  });

  it('bad arguments are KilnErrors naming the op', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([1, 2, 3, 4]);
      expectKilnError(kiln, () => F.interpolate(x, {}), 'Config', /interpolate: exactly one of size and scaleFactor must be given, got neither/);
      expectKilnError(kiln, () => F.interpolate(x, { size: 2, scaleFactor: 2 }), 'Config', /got size \[2\] and scaleFactor \[2\]/);
      expectKilnError(kiln, () => F.interpolate(x, { size: 2, mode: 'bicubic' }), 'Config', 'interpolate: mode must be "nearest" or "bilinear", got "bicubic"');
      expectKilnError(kiln, () => F.interpolate(x, { size: 2, alignCorners: true }), 'Config', /alignCorners can only be set with mode "bilinear"/);
      expectKilnError(kiln, () => F.interpolate(kiln.Tensor.zeros([1, 2, 3]), { size: 2, mode: 'bilinear' }), 'Rank', /interpolate: mode "bilinear" needs input/);
      expectKilnError(kiln, () => F.interpolate(kiln.Tensor.zeros([2, 3]), { size: 2 }), 'Rank', /interpolate: expected input/);
      expectKilnError(kiln, () => F.interpolate(x, { scaleFactor: 0.1 }), 'Shape', /interpolate: scaleFactor 0.1 gives an output size of 0/);
      expectKilnError(kiln, () => F.interpolate(x, { size: '2' }), 'Type', /interpolate: size must be a number or an array of numbers/);
    });
  });
});

describe('upsample layer', () => {
  it('kiln.nn.upsample and specs match torch.nn.Upsample; shapes through a Sequential', () => {
    const up = kiln.nn.upsample({ scaleFactor: 2, mode: 'bilinear' });
    kiln.tidy(() => {
      // torch.nn.Upsample(scale_factor=2, mode='bilinear')(torch.tensor([[[[1., 2.], [3., 4.]]]]))[0, 0, 0]
      //   -> [1.0, 1.25, 1.75, 2.0]
      const y = up.forward(kiln.Tensor.fromData([[[[1, 2], [3, 4]]]]));
      expect(y.shape).toEqual([1, 1, 4, 4]);
      expect(Array.from(y.dataSync()).slice(0, 4)).toEqual([1, 1.25, 1.75, 2]);
    });
    expect(kiln.nn.layerTypes).toContain('upsample');
    expect(up.config).toEqual({ type: 'upsample', size: null, scaleFactor: [2], mode: 'bilinear', alignCorners: false });
    up.dispose();
    const model = kiln.nn.sequential([
      { type: 'conv2d', channels: [1, 4], kernelSize: 3, padding: 1 },
      { type: 'upsample', size: [6, 5] },
      { type: 'flatten', startDim: 2 },
      { type: 'upsample', scaleFactor: 0.5 },
    ]);
    expect(model.outputShape([1, 3, 2])).toEqual([4, 15]);
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([2, 1, 3, 2]).requireGrad();
      const y = model.forward(x);
      expect(y.shape).toEqual([2, 4, 15]);
      const g = y.sum().backward();
      expect(x.grad(g).shape).toEqual([2, 1, 3, 2]);
    });
    model.dispose();
  });

  it('bad specs name the layer', () => {
    expectKilnError(kiln, () => kiln.nn.upsample({ mode: 'nearest' }), 'Config', /layers\[0\] \(upsample\): exactly one of size and scaleFactor must be given, got neither/);
    expectKilnError(kiln, () => kiln.nn.upsample({ size: 2, mode: 'area' }), 'Config', /mode must be "nearest" or "bilinear", got "area"/);
    expectKilnError(kiln, () => kiln.nn.sequential([{ type: 'reshape', shape: [2, 3] }, { type: 'upsample', scaleFactor: 2, mode: 'bilinear' }]),
      'Config', /layers\[1\] \(upsample\): expects input \[batch_size, channels, height, width\]/);
  });
});
