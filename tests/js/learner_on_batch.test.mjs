// Learner.trainOnBatch: one synchronous step of the general path (trainStep + the engine's
// guarded step) equals what fit() does with the same batches; it refuses the built-in loss
// path and a non-finite step (nothing changed).
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
beforeAll(async () => {
  kiln = await init();
});

const spec = { layers: [{ type: 'linear', dInput: 4, dOutput: 8 }, { type: 'tanh' }, { type: 'dropout', prob: 0.3 }, { type: 'linear', dInput: 8, dOutput: 3 }] };

function batches(k) {
  let a = 7;
  const r = () => ((a = (a * 1103515245 + 12345) % 2147483648) / 2147483648);
  return Array.from({ length: 3 }, () => ({
    x: k.Tensor.fromData(Float32Array.from({ length: 16 }, () => r() * 2 - 1), { shape: [4, 4] }),
    y: k.Tensor.fromData(Int32Array.from({ length: 4 }, () => Math.floor(r() * 3)), { dtype: 'int32' }),
  }));
}

describe('Learner.trainOnBatch', () => {
  it('two epochs of trainOnBatch equal fit over the same batches (dropout seeded per epoch)', async () => {
    const data = batches(kiln);
    const step = (m, b) => {
      const out = m.forward(b.x);
      return { loss: kiln.loss.crossEntropy().forward(out, b.y), output: out, targets: b.y };
    };
    const a = kiln.nn.sequential(spec, { seed: 4 });
    const b = kiln.nn.sequential(spec, { seed: 4 });
    const la = new kiln.Learner(a, { optimizer: kiln.optim.adam({ lr: 0.01 }), trainStep: step, seed: 9 });
    const lb = new kiln.Learner(b, { optimizer: kiln.optim.adam({ lr: 0.01 }), trainStep: step, seed: 9 });
    const h = await la.fit(data, { epochs: 2 });
    const losses = [];
    for (let epoch = 1; epoch <= 2; epoch++) {
      data.forEach((batch, i) => losses.push(lb.trainOnBatch(batch, { epoch, batch: i + 1 }).loss));
    }
    expect(Buffer.from(a.saveSafetensors()).equals(Buffer.from(b.saveSafetensors()))).toBe(true);
    expect(lb.steps).toBe(6);
    expect(losses.slice(3).reduce((s, v) => s + v, 0) / 3).toBeCloseTo(h.epochs[1].train.loss, 6);
    for (const d of data) {
      d.x.dispose();
      d.y.dispose();
    }
  });

  it('refuses the built-in loss path, and a non-finite loss changes nothing', () => {
    const m = kiln.nn.sequential({ layers: [{ type: 'linear', dInput: 2, dOutput: 1 }] }, { seed: 1 });
    const opt = kiln.optim.sgd({ lr: 0.1 });
    const builtin = new kiln.Learner(m, { optimizer: opt, loss: 'mse' });
    expectKilnError(kiln, () => builtin.trainOnBatch({}), 'State', /^Learner.trainOnBatch: this Learner has the built-in loss path/);
    const x = kiln.Tensor.fromData(new Float32Array([1, 2]), { shape: [1, 2] });
    const general = new kiln.Learner(m, { optimizer: opt, trainStep: (mm, b) => ({ loss: mm.forward(b).sum().mul(Number.NaN) }) });
    const before = Buffer.from(m.saveSafetensors());
    expectKilnError(kiln, () => general.trainOnBatch(x), 'NonFinite', /loss is NaN/);
    expect(Buffer.from(m.saveSafetensors()).equals(before)).toBe(true);
    x.dispose();
  });
});
