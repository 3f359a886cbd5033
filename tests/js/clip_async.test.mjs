// kiln.optim.clipGradNormAsync (the device form of clipGradNorm, what the webgpu backend runs;
// C++ kiln::optim::clip_grad_norm_on_device) on the cpu engine, against the PyTorch cases
// clip_grad_norm_global (cases.jsonl) and clip_grad_nonfinite_and_norm_types (round2.jsonl),
// and against the synchronous clipGradNorm. The same cases run on webgpu in
// tests/e2e/webgpu-api.e2e.mjs (part 10).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { caseData, caseTensor, expectClose } from './support/train_helpers.mjs';

let kiln;
const cases = new Map();
beforeAll(async () => {
  kiln = await init();
  for (const file of ['cases.jsonl', 'round2.jsonl']) {
    const text = readFileSync(new URL(`../native/cases/${file}`, import.meta.url), 'utf8');
    for (const line of text.split('\n')) if (line.trim() !== '') { const c = JSON.parse(line); cases.set(c.id, c); }
  }
});

/** Rejects with a KilnError of `code` whose message matches `re`. */
async function rejects(promise, code, re) {
  let caught = null;
  try { await promise; } catch (e) { caught = e; }
  expect(caught, 'expected a rejection').not.toBeNull();
  expect(caught.name).toBe('KilnError');
  expect(caught.code).toBe(code);
  expect(caught.message).toMatch(re);
}

// [case, prefix, gradient inputs -> clipped keys, maxNorm, options]
const RUNS = [
  ['clip_grad_norm_global', '', [['grad_a', 'a'], ['grad_b', 'b'], ['grad_c', 'c']], 6.5, {}],
  ['clip_grad_nonfinite_and_norm_types', 'inf_', [['grad_a', 'a'], ['grad_b_inf', 'b']], 1, {}],
  ['clip_grad_nonfinite_and_norm_types', 'nan_', [['grad_a', 'a'], ['grad_b_nan', 'b']], 1, { normType: 2 }],
  ['clip_grad_nonfinite_and_norm_types', 'maxnorm_', [['grad_a', 'a'], ['grad_b_12', 'b']], 1, { normType: Infinity }],
  ['clip_grad_nonfinite_and_norm_types', 'l1_', [['grad_a_l1', 'a'], ['grad_b_12', 'b']], 5, { normType: 1 }],
];

describe('kiln.optim.clipGradNormAsync', () => {
  for (const [id, prefix, grads, maxNorm, options] of RUNS) {
    it(`${id} ${prefix || 'global'}: PyTorch's total norm and clipped gradients, as clipGradNorm`, async () => {
      const c = cases.get(id);
      const g = grads.map(([n]) => caseTensor(kiln, c.inputs[n]));
      const h = grads.map(([n]) => caseTensor(kiln, c.inputs[n]));
      const total = await kiln.optim.clipGradNormAsync(g, maxNorm, options);
      expectClose([total], caseData(c.expected[`${prefix}total_norm`]), c.tolerance, `${prefix}total_norm`);
      grads.forEach(([, k], i) => {
        expectClose(g[i].dataSync(), caseData(c.expected[`${prefix}clipped_${k}`]), c.tolerance, `${prefix}clipped_${k}`);
        expect(g[i].shape).toEqual(c.inputs[grads[i][0]].shape);
      });
      // The synchronous form on the same inputs: the same values to float32 rounding.
      const sync = kiln.optim.clipGradNorm(h, maxNorm, options);
      expectClose([total], [sync], { abs: 0, rel: 1e-6 }, 'vs clipGradNorm');
      g.forEach((t, i) => expectClose(t.dataSync(), h[i].dataSync(), { abs: 1e-7, rel: 1e-6 }, 'vs clipGradNorm'));
      [...g, ...h].forEach((t) => t.dispose());
    });
  }

  it('below maxNorm: the norm, values unchanged (clip_grad_norm_global total_norm_ab)', async () => {
    const c = cases.get('clip_grad_norm_global');
    const g = ['grad_a', 'grad_b'].map((n) => caseTensor(kiln, c.inputs[n]));
    expectClose([await kiln.optim.clipGradNormAsync(g, 10)], caseData(c.expected.total_norm_ab), c.tolerance, 'total_norm_ab');
    expectClose(g[0].dataSync(), caseData(c.expected.unclipped_a), c.tolerance, 'unclipped_a');
    expectClose(g[1].dataSync(), caseData(c.expected.unclipped_b), c.tolerance, 'unclipped_b');
    g.forEach((t) => t.dispose());
  });

  it('errorIfNonfinite: rejects NonFinite after reading the norm, the gradients unchanged (nan_error_if_nonfinite)', async () => {
    const c = cases.get('clip_grad_nonfinite_and_norm_types');
    expect(c.expected.nan_error_if_nonfinite.error).toBe(true);
    const a = caseTensor(kiln, c.inputs.grad_a);
    const b = caseTensor(kiln, c.inputs.grad_b_nan);
    const live = kiln.memory().tensors;
    await rejects(kiln.optim.clipGradNormAsync([a, b], 1, { errorIfNonfinite: true }), 'NonFinite',
      /^optim\.clipGradNormAsync: the total norm of order 2 of the gradients is NaN \(errorIfNonfinite is set; the gradients are unchanged\)$/);
    expect(Array.from(a.dataSync())).toEqual([3, 4]);
    expect(kiln.memory().tensors).toBe(live);
    // An infinite norm too; a finite one with the flag clips as without it.
    const inf = caseTensor(kiln, c.inputs.grad_b_inf);
    await rejects(kiln.optim.clipGradNormAsync([a, inf], 1, { errorIfNonfinite: true }), 'NonFinite', /is Infinity/);
    expect(Array.from(a.dataSync())).toEqual([3, 4]);
    expect(await kiln.optim.clipGradNormAsync([a], 1, { errorIfNonfinite: true })).toBeCloseTo(5, 5);
    expectClose(a.dataSync(), [3 / (5 + 1e-6), 4 / (5 + 1e-6)], { abs: 1e-7, rel: 1e-6 }, 'clipped');
    [a, b, inf].forEach((t) => t.dispose());
  });

  it('on a Gradients with {params}: the listed parameters\' gradients, the others untouched', async () => {
    const c = cases.get('clip_grad_norm_global');
    const names = ['grad_a', 'grad_b', 'grad_c'];
    const params = names.map((n) => kiln.Tensor.zeros(c.inputs[n].shape).requireGrad());
    const other = kiln.Tensor.ones([2]).requireGrad();
    const grads = kiln.tidy(() => {
      let loss = other.mul(kiln.Tensor.fromData([100, 100])).sum();
      names.forEach((n, i) => { loss = loss.add(params[i].mul(caseTensor(kiln, c.inputs[n])).sum()); });
      return loss.backward();
    });
    const live = kiln.memory().tensors;
    expectClose([await kiln.optim.clipGradNormAsync(grads, 6.5, { params })], caseData(c.expected.total_norm), c.tolerance, 'total_norm');
    expect(kiln.memory().tensors).toBe(live);
    ['a', 'b', 'c'].forEach((k, i) => expectClose(grads.get(params[i]).dataSync(), caseData(c.expected[`clipped_${k}`]), c.tolerance, `clipped_${k}`));
    expect(Array.from(grads.get(other).dataSync())).toEqual([100, 100]);
    await rejects(kiln.optim.clipGradNormAsync(grads, 1), 'Config', /with a Gradients, say whose gradients to clip: \{params: model\}/);
  });

  it('a gradient disposed while the norm is read: Disposed, nothing changed, nothing leaked', async () => {
    const a = kiln.Tensor.fromData([3, 4]);
    const b = kiln.Tensor.fromData([12]);
    const live = kiln.memory().tensors;
    const p = kiln.optim.clipGradNormAsync([a, b], 1);
    b.dispose();
    await rejects(p, 'Disposed', /clipGradNormAsync/);
    expect(Array.from(a.dataSync())).toEqual([3, 4]);
    expect(kiln.memory().tensors).toBe(live - 1);
    a.dispose();
  });

  it('on a Gradients, a parameter disposed while the norm is read: Disposed, no gradient replaced', async () => {
    const p1 = kiln.Tensor.zeros([2]).requireGrad();
    const p2 = kiln.Tensor.zeros([1]).requireGrad();
    const grads = kiln.tidy(() => p1.mul(kiln.Tensor.fromData([3, 4])).sum().add(p2.mul(kiln.Tensor.fromData([12])).sum()).backward());
    const pending = kiln.optim.clipGradNormAsync(grads, 1, { params: [p1, p2] });
    p2.dispose();
    await rejects(pending, 'Disposed', /clipGradNormAsync/);
    expect(Array.from(grads.get(p1).dataSync())).toEqual([3, 4]);
    p1.dispose();
  });

  it('bad inputs reject with clipGradNorm\'s errors, naming clipGradNormAsync', async () => {
    const g = kiln.Tensor.fromData([1, 2]);
    await rejects(kiln.optim.clipGradNormAsync(g, 1), 'Type', /^optim\.clipGradNormAsync: grads must be an array of gradient tensors/);
    await rejects(kiln.optim.clipGradNormAsync([g], 0), 'Value', /maxNorm must be finite and > 0, got 0/);
    await rejects(kiln.optim.clipGradNormAsync([g], -1), 'Value', /^optim\.clipGradNormAsync: maxNorm must be finite and > 0, got -1$/);
    await rejects(kiln.optim.clipGradNormAsync([g], Infinity), 'Value', /^optim\.clipGradNormAsync: maxNorm must be finite and > 0, got Infinity$/);
    await rejects(kiln.optim.clipGradNormAsync([g], 1, { normType: -2 }), 'Value', /^optim\.clipGradNormAsync: normType must be > 0 or Infinity, got -2$/);
    await rejects(kiln.optim.clipGradNormAsync([g], NaN), 'Value', /maxNorm must be finite and > 0, got NaN/);
    await rejects(kiln.optim.clipGradNormAsync([g], 1, { normType: 0 }), 'Value', /normType must be > 0 or Infinity, got 0/);
    await rejects(kiln.optim.clipGradNormAsync([g], 1, { norm: 2 }), 'Config', /unknown option "norm"/);
    await rejects(kiln.optim.clipGradNormAsync([g, g], 1), 'Value', /the same tensor twice/);
    expect(Array.from(g.dataSync())).toEqual([1, 2]);
    g.dispose();
  });
});

describe('Optimizer.saveStateAsync (the webgpu backend\'s form of saveState; webgpu-train.e2e.mjs runs it there)', () => {
  it('on the cpu backend: saveState\'s bytes, which load back', async () => {
    const model = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 3, dOutput: 2 }] }, { seed: 4 });
    const optimizer = kiln.optim.adam({ lr: 0.1 });
    kiln.tidy(() => {
      const grads = model.forward(kiln.Tensor.fromData([[1, 2, 3]])).sum().backward();
      optimizer.step(model, grads);
    });
    const sync = optimizer.saveState(model);
    const bytes = await optimizer.saveStateAsync(model);
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(bytes).equals(Buffer.from(sync))).toBe(true);
    // The moments are in it: a fresh optimizer loads them and reports the step count.
    const again = kiln.optim.adam({ lr: 0.1 });
    again.loadState(model, bytes);
    expect(again.steps).toBe(1);
    expect(Buffer.from(again.saveState(model)).equals(Buffer.from(sync))).toBe(true);
  });
});
