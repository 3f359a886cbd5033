// The playground session's regression loss and L1/L2 regularisation (web/src/engine.js) on
// kiln-dl: one SGD step against the update derived by hand (MSE gradient 2/n·Σ(ŷ - y)·x,
// penalty gradient λ·sign(w) or λ·w on weights only, never biases), and Trainer.setData
// and scoreRegression (web/src/trainer.js).
import { beforeAll, describe, it, expect } from 'vitest';
import { loadEngine } from '../../../web/src/engine.js';
import { Trainer, floatSource, scoreRegression } from '../../../web/src/trainer.js';

let engine;
beforeAll(async () => {
  engine = await loadEngine();
});

const spec = { layers: [{ type: 'linear', dInput: 3, dOutput: 1, bias: true }] };
const x = new Float32Array([0.5, -1, 2, 1.5, 0.25, -0.5, -1, 1, 0.75, 0.1, 0.2, 0.3]); // [4, 3]
const y = new Float32Array([0.3, -0.2, 0.9, 0.1]);

/** The weights [w0, w1, w2] and bias of the session's linear layer. */
function params(session) {
  const p = session.model.namedParameters();
  const out = { w: Array.from(p['0.weight'].dataSync()), b: p['0.bias'].dataSync()[0] };
  for (const t of Object.values(p)) t.dispose();
  return out;
}

/** One SGD step of lr on mean((w·x + b - y)²) + λ·penalty(w), by hand. */
function handStep({ w, b }, reg, lam, lr) {
  const n = y.length;
  const gw = [0, 0, 0];
  let gb = 0;
  let mse = 0;
  for (let i = 0; i < n; i++) {
    const r = w[0] * x[3 * i] + w[1] * x[3 * i + 1] + w[2] * x[3 * i + 2] + b - y[i];
    mse += (r * r) / n;
    for (let j = 0; j < 3; j++) gw[j] += (2 / n) * r * x[3 * i + j];
    gb += (2 / n) * r;
  }
  const pen = (v) => (reg === 'l1' ? Math.sign(v) : reg === 'l2' ? v : 0);
  return { w: w.map((v, j) => v - lr * (gw[j] + lam * pen(v))), b: b - lr * gb, mse };
}

describe('regression and regularisation in the session', () => {
  for (const [reg, lam] of [['none', 0], ['l2', 0.5], ['l1', 0.2]]) {
    it(`${reg}: one SGD step equals the hand-derived update; the reported loss is the data loss`, () => {
      const s = { opt: 'sgd', lr: 0.1, momentum: 0, wd: 0, seed: 3, reg, regRate: lam };
      const session = engine.createSession(spec, s, 'regression');
      try {
        expect(session.regLearner === null).toBe(reg === 'none');
        const before = params(session);
        const want = handStep(before, reg, lam, 0.1);
        const r = session.trainBatch(x, y, 4, { epoch: 1, batch: 1 });
        const after = params(session);
        after.w.forEach((v, j) => expect(v).toBeCloseTo(want.w[j], 5));
        expect(after.b).toBeCloseTo(want.b, 5); // the bias has no penalty
        expect(r.loss).toBeCloseTo(want.mse, 5);
        // predict gives the raw output (one value per item) of the updated model
        const p = session.predict(x);
        expect(p).toHaveLength(4);
        expect(p[0]).toBeCloseTo(after.w[0] * 0.5 - after.w[1] + 2 * after.w[2] + after.b, 5);
      } finally {
        session.dispose();
      }
    });
  }

  it('classification with L2 keeps cross-entropy and reports its accuracy', () => {
    const cls = { layers: [{ type: 'linear', dInput: 3, dOutput: 2, bias: true }] };
    const session = engine.createSession(cls, { opt: 'adam', lr: 0.01, momentum: 0, wd: 0, seed: 1, reg: 'l2', regRate: 0.01 });
    try {
      const labels = new Int32Array([0, 1, 1, 0]);
      const probs0 = session.predict(x);
      let ce = 0;
      let correct = 0;
      for (let i = 0; i < 4; i++) {
        ce -= Math.log(probs0[2 * i + labels[i]]) / 4;
        if ((probs0[2 * i + 1] > probs0[2 * i] ? 1 : 0) === labels[i]) correct++;
      }
      const r = session.trainBatch(x, labels, 4);
      expect(r.loss).toBeCloseTo(ce, 5);
      expect(r.accuracy).toBe(correct / 4);
    } finally {
      session.dispose();
    }
  });
});

describe('regularisation of a CNN (MNIST-shaped)', () => {
  it('L1: one SGD step differs from the unregularised one by -lr·rate·sign(w) on every weight, 0 on biases', () => {
    const cnn = {
      layers: [
        { type: 'reshape', shape: [1, 28, 28] },
        { type: 'conv2d', channels: [1, 2], kernelSize: [3, 3], stride: [1, 1], padding: 'valid' },
        { type: 'relu' },
        { type: 'maxPool2d', kernelSize: [2, 2] },
        { type: 'flatten' },
        { type: 'linear', dInput: 2 * 13 * 13, dOutput: 10, bias: true },
      ],
    };
    const xs = Float32Array.from({ length: 4 * 784 }, (_, i) => Math.cos(i * 0.37));
    const ys = new Int32Array([3, 1, 4, 1]);
    const run = (reg) => {
      const s = engine.createSession(cnn, { opt: 'sgd', lr: 0.1, momentum: 0, wd: 0, seed: 5, reg, regRate: 0.01 }, 'classification');
      try {
        const p0 = s.model.namedParameters();
        const before = Object.fromEntries(Object.entries(p0).map(([k, t]) => [k, Float32Array.from(t.dataSync())]));
        for (const t of Object.values(p0)) t.dispose();
        s.trainBatch(xs, ys, 4, { epoch: 1, batch: 1 });
        const p1 = s.model.namedParameters();
        const after = Object.fromEntries(Object.entries(p1).map(([k, t]) => [k, Float32Array.from(t.dataSync())]));
        for (const t of Object.values(p1)) t.dispose();
        return { before, after };
      } finally {
        s.dispose();
      }
    };
    const plain = run('none');
    const l1 = run('l1');
    const keys = Object.keys(plain.after);
    expect(keys.filter((k) => k.endsWith('.weight')).length).toBe(2); // the conv's and the linear's
    for (const k of keys) {
      const w0 = l1.before[k];
      expect(Array.from(w0)).toEqual(Array.from(plain.before[k])); // same seed, same start
      for (let i = 0; i < w0.length; i++) {
        const want = k.endsWith('.weight') ? -0.1 * 0.01 * Math.sign(w0[i]) : 0;
        expect(l1.after[k][i] - plain.after[k][i]).toBeCloseTo(want, 6);
      }
    }
  });
});

describe('trainer: regression scoring and new data', () => {
  it('scoreRegression is the mean squared error, no accuracy', () => {
    const s = scoreRegression(new Float32Array([1, 0, -1]), new Float32Array([0.5, 0, 1]));
    expect(s.loss).toBeCloseTo((0.25 + 0 + 4) / 3, 12);
    expect(s.accuracy).toBe(null);
  });

  it('setData keeps the step and the epoch position for a same-size draw', () => {
    const calls = [];
    const session = { trainBatch: (bx, by, n) => (calls.push(Array.from(bx)), { loss: 0, accuracy: 0 }), predict: (t) => new Float32Array(t.length) };
    const mk = (v) => floatSource(new Float32Array(8).fill(v), new Float32Array(4), 2);
    const t = new Trainer(session, { train: mk(1), test: mk(1), classes: 1, task: 'regression' }, { batch: 2, epochs: 3, seed: 1 });
    t.trainStep();
    t.setData({ train: mk(7), test: mk(7), classes: 1, task: 'regression' });
    expect(t.step).toBe(1);
    expect(t.progress).toBe(0.5);
    t.trainStep();
    expect(calls[1]).toEqual([7, 7, 7, 7]); // the new points
    expect(t.progress).toBe(1);
    expect(t.takeWindow().accuracy).toBe(null);
    expect(() => t.setData({ train: floatSource(new Float32Array(3), new Float32Array(1), 3), test: mk(0) })).toThrow(/3 features per item, the model reads 2/);
  });
});
