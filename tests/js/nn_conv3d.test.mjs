// kiln.nn.conv3d / convTranspose1d / convTranspose3d (issue 19) and their functional forms:
// values and gradients of x, weight and bias against PyTorch 1.13
// (tests/native/nn/conv3d_fixtures.json, written by tests/native/nn/make_conv3d_fixtures.py),
// finite differences, rank-5 Sequential specs, records and errors naming the op.
import { readFileSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';
import { expectClose, safetensorsBytes, safetensorsHeader } from './support/train_helpers.mjs';
import { fdCheck } from './support/gradcheck.mjs';

let kiln;
let F;
let cases;
beforeAll(async () => {
  kiln = await init();
  F = kiln.nn.functional;
  cases = JSON.parse(readFileSync(new URL('../native/nn/conv3d_fixtures.json', import.meta.url), 'utf8')).cases;
});
afterEach(() => {
  expect(kiln.memory().tensors).toBe(0);
});

const TOL = { abs: 1e-4, rel: 1e-5 };
const tensor = (t) => kiln.Tensor.fromData(Float32Array.from(t.data), { shape: t.shape });

/** Layer options from a fixture's PyTorch options (camelCase, per-side padding excluded). */
function layerOptions(o) {
  const out = {};
  for (const [k, v] of Object.entries(o)) out[k === 'padding_out' ? 'paddingOut' : k] = v;
  return out;
}

/** fn(x, w, b) on the case's tracked inputs: y, and the gradients of sum(y · dy). */
function checkFunctional(id, c, fn) {
  kiln.tidy(() => {
    const x = tensor(c.x).requireGrad();
    const w = tensor(c.weight).requireGrad();
    const b = c.bias ? tensor(c.bias).requireGrad() : null;
    const y = fn(x, w, b);
    expect(y.shape, id).toEqual(c.y.shape);
    expectClose(y.dataSync(), c.y.data, TOL, `${id} y`);
    const g = y.mul(tensor(c.dy)).sum().backward();
    expectClose(x.grad(g).dataSync(), c.dx.data, TOL, `${id} dx`);
    expectClose(w.grad(g).dataSync(), c.dw.data, TOL, `${id} dw`);
    if (b) expectClose(b.grad(g).dataSync(), c.db.data, TOL, `${id} db`);
  });
}

describe('functional forms against PyTorch', () => {
  it('conv3d (symmetric padding cases), convTranspose3d, convTranspose1d', () => {
    let n = 0;
    for (const [id, c] of Object.entries(cases)) {
      const o = layerOptions(c.options);
      if (c.op === 'conv3d') {
        if (o.padding_end) continue;  // per-side padding: the layer's 'same' below
        checkFunctional(id, c, (x, w, b) => F.conv3d(x, w, b, o));
      } else if (c.op === 'conv_transpose3d') {
        checkFunctional(id, c, (x, w, b) => F.convTranspose3d(x, w, b, o));
      } else {
        checkFunctional(id, c, (x, w, b) => F.convTranspose1d(x, w, b, o));
      }
      n++;
    }
    expect(n).toBe(12);
  });

  it('finite differences of x, weight and bias', () => {
    fdCheck(kiln, (x, w, b) => F.conv3d(x, w, b, { stride: [1, 2, 1], padding: 1, dilation: [1, 1, 2], groups: 2 }),
      [[1, 2, 3, 4, 4], [2, 1, 2, 2, 2], [2]]);
    fdCheck(kiln, (x, w, b) => F.convTranspose3d(x, w, b, { stride: 2, padding: [1, 0, 1], paddingOut: [1, 0, 0] }),
      [[1, 2, 2, 2, 2], [2, 1, 3, 2, 2], [1]]);
    fdCheck(kiln, (x, w, b) => F.convTranspose1d(x, w, b, { stride: 2, padding: 1, paddingOut: 1, dilation: 2, groups: 2 }),
      [[2, 2, 4], [2, 1, 3], [2]]);
  });

  it('bad inputs name the op in camelCase', () => {
    kiln.tidy(() => {
      const x = kiln.Tensor.zeros([1, 4, 3, 3, 3]);
      expectKilnError(kiln, () => F.conv3d(x, kiln.Tensor.zeros([2, 3, 2, 2, 2])), 'Shape',
        'conv3d: x [1, 4, 3, 3, 3] has 4 channels, weight [2, 3, 2, 2, 2] with groups = 1 expects 3 (weight dim 1 · groups)');
      expectKilnError(kiln, () => F.conv3d(kiln.Tensor.zeros([1, 4, 3, 3]), kiln.Tensor.zeros([2, 4, 2, 2, 2])), 'Rank', /conv3d/);
      expectKilnError(kiln, () => F.conv3d(x, kiln.Tensor.zeros([2, 4, 2, 2, 2]), null, { stride: [1, 1] }), 'Type',
        /^conv3d: stride must be an integer or 3 integers, got /);
      expectKilnError(kiln, () => F.convTranspose3d(x, kiln.Tensor.zeros([4, 1, 2, 2, 2]), null, { stride: 2, paddingOut: 2 }), 'Config',
        /convTranspose3d: paddingOut \[2, 2, 2\] must be smaller than stride \[2, 2, 2\]/);
      expectKilnError(kiln, () => F.convTranspose1d(kiln.Tensor.zeros([2, 3, 5]), kiln.Tensor.zeros([2, 4, 3])), 'Shape',
        'convTranspose1d: x [2, 3, 5] has 3 channels, weight [2, 4, 3] expects 2 (weight dim 0)');
      expectKilnError(kiln, () => F.convTranspose1d(kiln.Tensor.zeros([2, 3, 5]), kiln.Tensor.zeros([3, 4, 3]), null, { bogus: 1 }), 'Type',
        /unknown option "bogus"/);
    });
  });
});

describe('layers', () => {
  it('kiln.nn.conv3d with padding same: values and gradients of the even-kernel PyTorch case', () => {
    const c = cases.conv3d_same_even_kernel;  // padding 'same', kernel [4, 3, 2]: 1|2, 1|1, 0|1
    const layer = kiln.nn.conv3d({ channels: [2, 2], kernelSize: [4, 3, 2], padding: 'same' });
    layer.loadSafetensors(safetensorsBytes({
      weight: { dtype: 'F32', shape: c.weight.shape, data: c.weight.data },
      bias: { dtype: 'F32', shape: c.bias.shape, data: c.bias.data },
    }));
    kiln.tidy(() => {
      const x = tensor(c.x).requireGrad();
      const y = layer.forward(x);
      expectClose(y.dataSync(), c.y.data, TOL, 'y');
      const g = y.mul(tensor(c.dy)).sum().backward();
      expectClose(x.grad(g).dataSync(), c.dx.data, TOL, 'dx');
      const p = layer.namedParameters();
      expectClose(p.weight.grad(g).dataSync(), c.dw.data, TOL, 'dw');
      expectClose(p.bias.grad(g).dataSync(), c.db.data, TOL, 'db');
    });
    expect(layer.outputShape([2, 4, 3, 5])).toEqual([2, 4, 3, 5]);
    const header = safetensorsHeader(layer.saveSafetensors());
    expect(header.weight.shape).toEqual([2, 2, 4, 3, 2]);
    layer.dispose();
  });

  it('convTranspose3d and convTranspose1d layers: shapes, records, errors', () => {
    const up = kiln.nn.convTranspose3d({ channels: [4, 6], kernelSize: [3, 3, 2], stride: [2, 2, 1], padding: [1, 1, 0], paddingOut: [1, 0, 0], groups: 2 });
    expect(up.outputShape([4, 3, 4, 5])).toEqual([6, 6, 7, 6]);
    expect(safetensorsHeader(up.saveSafetensors()).weight.shape).toEqual([4, 3, 3, 3, 2]);
    kiln.tidy(() => {
      expect(up.forward(kiln.Tensor.zeros([2, 4, 3, 4, 5])).shape).toEqual([2, 6, 6, 7, 6]);
      expectKilnError(kiln, () => up.forward(kiln.Tensor.zeros([2, 4, 3, 4])), 'Shape',
        /layer 0 \(convTranspose3d\): expected input \[batch_size, channels, depth, height, width\] \(rank 5\), got \[2, 4, 3, 4\]/);
    });
    up.dispose();
    const up1 = kiln.nn.convTranspose1d({ channels: [3, 2], kernelSize: 4, stride: 2, padding: 1 });
    kiln.tidy(() => expect(up1.forward(kiln.Tensor.zeros([2, 3, 50])).shape).toEqual([2, 2, 100]));
    expect(safetensorsHeader(up1.saveSafetensors()).weight.shape).toEqual([3, 2, 4]);
    up1.dispose();
    expectKilnError(kiln, () => kiln.nn.convTranspose1d({ channels: [2, 2], kernelSize: 3, paddingOut: 1 }), 'Config',
      /layers\[0\] \(convTranspose1d\): paddingOut must be smaller than stride or dilation/);
    expectKilnError(kiln, () => kiln.nn.conv3d({ channels: [2, 3], kernelSize: 3, padding: [1, 1] }), 'Config',
      /layers\[0\] \(conv3d\): padding: expected "valid", "same" or \[depth, height, width\]/);
    expectKilnError(kiln, () => kiln.nn.conv3d({ channels: [4, 6], kernelSize: 3, groups: 4 }), 'Config', /divisible by groups/);
  });

  it('a rank-5 Sequential spec trains: reshape -> conv3d -> relu -> convTranspose3d -> flatten -> linear', () => {
    expect(kiln.nn.layerTypes).toEqual(expect.arrayContaining(['conv3d', 'convTranspose1d', 'convTranspose3d']));
    const model = kiln.nn.sequential({ layers: [
      { type: 'reshape', shape: [1, 4, 4, 4] },
      { type: 'conv3d', channels: [1, 2], kernelSize: 3, padding: 'same' },
      { type: 'relu' },
      { type: 'convTranspose3d', channels: [2, 1], kernelSize: 2, stride: 2 },
      { type: 'flatten' },
      { type: 'linear', dInput: 512, dOutput: 1 },
    ] }, { seed: 3 });
    expect(model.outputShape([64])).toEqual([1]);
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData(Float32Array.from({ length: 128 }, (_, i) => Math.sin(i)), { shape: [2, 64] });
      const y = model.forward(x);
      expect(y.shape).toEqual([2, 1]);
      const g = y.sum().backward();
      const params = model.namedParameters();
      expect(Object.keys(params)).toEqual(['1.weight', '1.bias', '3.weight', '3.bias', '5.weight', '5.bias']);
      expect(params['1.weight'].grad(g).shape).toEqual([2, 1, 3, 3, 3]);
      // A rank-5 input straight in.
      const direct = kiln.nn.sequential({ layers: [{ type: 'conv3d', channels: [1, 1], kernelSize: 1 }] });
      expect(direct.forward(kiln.Tensor.zeros([1, 1, 2, 3, 4])).shape).toEqual([1, 1, 2, 3, 4]);
      direct.dispose();
    });
    model.dispose();
  });
});
