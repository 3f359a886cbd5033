// Regression tests of the fresh-eyes report (/tmp/breaker_report.md), metrics and
// optimizers: 5 (ReduceLROnPlateau.state() through JSON: best ±Infinity became null, which
// loadState refused), 7 (Accuracy counted out-of-range labels as wrong: KilnError Index as
// CrossEntropyLoss), 15 (clipGradNorm's NaN was Config where 0 and Infinity are Value; the
// unknown-option list; "got i32"; metrics.Loss with a NaN loss), 14 (Accuracy.update of a
// disposed tensor said "shape: the tensor was disposed").
import { beforeAll, describe, expect, it } from 'vitest';
import { init } from 'kiln-dl';
import { expectKilnError } from './helpers.mjs';

let kiln;
let T;
beforeAll(async () => {
  kiln = await init();
  T = kiln.Tensor;
});

describe('5: ReduceLROnPlateau state through JSON', () => {
  it('best null (JSON of ±Infinity) is the initial best of the mode; the run continues as the original', () => {
    for (const mode of ['min', 'max']) {
      const opts = { mode, patience: 0, factor: 0.5 };
      const a = new kiln.optim.ReduceLROnPlateau(0.1, opts);
      const saved = JSON.parse(JSON.stringify(a.state()));
      expect(saved.best).toBeNull();
      const b = new kiln.optim.ReduceLROnPlateau(0.1, opts);
      b.step(mode === 'min' ? 5 : -5);  // b has a best now: loadState must put it back
      b.loadState(saved);
      expect(saved.best).toBeNull();  // the caller's object is not changed
      expect(b.state()).toEqual(a.state());
      expect(b.state().best).toBe(mode === 'min' ? Infinity : -Infinity);
      // Same metrics -> same rates (patience 0: a non-improving step halves the rate).
      const metrics = mode === 'min' ? [1, 2, 0.5, 0.6] : [1, 0.5, 2, 1.5];
      expect(metrics.map((m) => b.step(m))).toEqual(metrics.map((m) => a.step(m)));
      expect(a.lr).toBeCloseTo(0.025, 12);
      // The strings a checkpoint may carry.
      const c = new kiln.optim.ReduceLROnPlateau(0.1, opts);
      c.loadState({ ...a.state(), best: mode === 'min' ? 'Infinity' : '-Infinity' });
      expect(c.state().best).toBe(mode === 'min' ? Infinity : -Infinity);
      expectKilnError(kiln, () => c.loadState({ ...a.state(), best: 'big' }), 'Type', 'ReduceLROnPlateau.loadState: best must be a number, got the string "big"');
      kiln.dispose([a, b, c]);
    }
  });

  it('over an optimizer: the rate comes back too', () => {
    const opt = kiln.optim.sgd({ lr: 0.2 });
    const p = new kiln.optim.ReduceLROnPlateau(opt, { patience: 0, factor: 0.5 });
    const fresh = JSON.parse(JSON.stringify(p.state()));
    p.step(1);
    p.step(2);
    expect(p.lr).toBeCloseTo(0.1, 12);
    p.loadState(fresh);
    expect(p.lr).toBeCloseTo(0.2, 12);
    expect(p.state().best).toBe(Infinity);
    expect(p.step(3)).toBeCloseTo(0.2, 12);  // the first metric is an improvement on +Infinity
    p.dispose();
    opt.dispose();
  });
});

describe('7: Accuracy with labels outside [0, num_classes)', () => {
  it('is KilnError Index naming the row (as CrossEntropyLoss); the batch is not counted', () => {
    const acc = new kiln.metrics.Accuracy();
    const out = T.fromData([[1, 0, 0], [0, 1, 0]]);
    acc.update(out, new Int32Array([0, 2]));
    expect(acc.value()).toBe(0.5);
    expectKilnError(kiln, () => acc.update(out, new Int32Array([0, 9])), 'Index', 'Accuracy.update: targets must be class indices in [0, 3): row 1 has target 9');
    expectKilnError(kiln, () => acc.update(out, T.fromData([-1, 0], { dtype: 'int32' })), 'Index', 'Accuracy.update: targets must be class indices in [0, 3): row 0 has target -1');
    expect(acc.value()).toBe(0.5);
    // The same rule as the engine's CrossEntropyLoss.
    const ce = kiln.loss.crossEntropy();
    const y = T.fromData([0, 9], { dtype: 'int32' });
    expectKilnError(kiln, () => ce.forward(out, y), 'Index', /targets must be class indices in \[0, 3\)/);
    // ignoreIndex rows are skipped, others are still checked.
    const ignoring = new kiln.metrics.Accuracy({ ignoreIndex: -1 });
    ignoring.update(out, new Int32Array([-1, 1]));
    expect(ignoring.value()).toBe(1);
    expectKilnError(kiln, () => ignoring.update(out, new Int32Array([-1, 3])), 'Index', 'Accuracy.update: targets must be class indices in [0, 3) or ignoreIndex -1: row 1 has target 3');
    expect(ignoring.value()).toBe(1);
    kiln.dispose([out, y]);
  });

  it('14: a disposed output or target is Disposed naming Accuracy.update', () => {
    const acc = new kiln.metrics.Accuracy();
    const out = T.fromData([[1, 0]]);
    const y = T.fromData([0], { dtype: 'int32' });
    y.dispose();
    expectKilnError(kiln, () => acc.update(out, y), 'Disposed', 'Accuracy.update: targets (a Tensor) was disposed');
    out.dispose();
    expectKilnError(kiln, () => acc.update(out, new Int32Array([0])), 'Disposed', 'Accuracy.update: output (a Tensor) was disposed');
    expect(acc.value()).toBeNaN();
  });
});

describe('15: clipGradNorm / clipGradValue and metric inputs', () => {
  it('NaN maxNorm, normType or clipValue is Value like 0 and Infinity; the gradients are unchanged', () => {
    const g = T.fromData([3, 4]);
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], NaN), 'Value', 'optim.clipGradNorm: maxNorm must be finite and > 0, got NaN');
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 0), 'Value', /maxNorm must be finite and > 0, got 0/);
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], Infinity), 'Value', /maxNorm must be finite and > 0, got Infinity/);
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 1, { normType: NaN }), 'Value', 'optim.clipGradNorm: normType must be > 0 or Infinity, got NaN');
    expectKilnError(kiln, () => kiln.optim.clipGradValue([g], NaN), 'Value', 'optim.clipGradValue: clipValue must be finite and > 0, got NaN');
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], '1'), 'Type', 'optim.clipGradNorm: maxNorm must be a number, got the string "1"');
    expect(Array.from(g.dataSync())).toEqual([3, 4]);
    // And a valid call clips: norm 5 -> 1.
    expect(kiln.optim.clipGradNorm([g], 1)).toBeCloseTo(5, 5);
    expect(Array.from(g.dataSync()).map((v) => Math.round(v * 1e4) / 1e4)).toEqual([0.6, 0.8]);
    g.dispose();
  });

  it('the unknown-option list names params; params with an array is Config; an int tensor says int32', () => {
    const g = T.fromData([1, 2]);
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 1, { foo: 1 }), 'Config', 'optim.clipGradNorm: unknown option "foo" (options: normType, errorIfNonfinite, params)');
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([g], 1, { params: [g] }), 'Config', /^optim\.clipGradNorm: params applies when grads is a Gradients \(from backward\(\)\)/);
    const i = T.fromData([1], { dtype: 'int32' });
    expectKilnError(kiln, () => kiln.optim.clipGradNorm([i], 1), 'DType', 'optim.clipGradNorm: grads[0] must be a float32 tensor, got int32');
    expectKilnError(kiln, () => kiln.optim.clipGradValue([g, i], 1), 'DType', 'optim.clipGradValue: grads[1] must be a float32 tensor, got int32');
    expect(Array.from(g.dataSync())).toEqual([1, 2]);
    kiln.dispose([g, i]);
  });

  it('metrics.Loss / LearningRate with a NaN or infinite value: NonFinite, nothing added', () => {
    const loss = new kiln.metrics.Loss();
    loss.update(undefined, undefined, { loss: 2, batchSize: 2 });
    for (const v of [NaN, Infinity, -Infinity]) {
      expectKilnError(kiln, () => loss.update(undefined, undefined, { loss: v, batchSize: 1 }), 'NonFinite', `Loss.update: info.loss must be a finite number, got ${v}`);
    }
    expect(loss.value()).toBe(2);
    const lr = new kiln.metrics.LearningRate();
    lr.update(undefined, undefined, { lr: 0.5 });
    expectKilnError(kiln, () => lr.update(undefined, undefined, { lr: NaN }), 'NonFinite', 'LearningRate.update: info.lr must be a finite number, got NaN');
    expect(lr.value()).toBe(0.5);
    expectKilnError(kiln, () => loss.update(undefined, undefined, { loss: '1', batchSize: 1 }), 'Type', 'Loss.update: info.loss must be a number, got the string "1"');
  });
});
