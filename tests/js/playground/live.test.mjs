// "Train without losing the model" (web/src/live-change.js, live-optim.js, the Trainer's
// retune and engine.js's Session.retune against the real engine): which changes are live,
// the SafeTensors rewrites checked byte by byte, and a retuned session that keeps its
// weights (identical predictions), its Adam moments (the next step equals the one an
// optimizer that never changed takes at the new rate) and its step count.
import { describe, it, expect, beforeAll } from 'vitest';
import { classifyChange } from '../../../web/src/live-change.js';
import { readHeader, rewriteSafetensors, metadataOf, withConstantLr, paramLayerMap, renamer, isIdentity } from '../../../web/src/live-optim.js';
import { Trainer, floatSource } from '../../../web/src/trainer.js';
import { loadEngine } from '../../../web/src/engine.js';
import { defaultState } from '../../../web/src/state.js';
import { describeModel } from '../../../web/src/modelspec.js';

/** A SafeTensors file written by hand: tensors {name: Float32Array} of 1-D shapes. */
function safetensors(tensors, metadata) {
  const header = {};
  let offset = 0;
  for (const [k, v] of Object.entries(tensors)) {
    header[k] = { dtype: 'F32', shape: [v.length], data_offsets: [offset, offset + v.length * 4] };
    offset += v.length * 4;
  }
  if (metadata) header.__metadata__ = metadata;
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const v of Object.values(tensors)) {
    out.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), at);
    at += v.byteLength;
  }
  return out;
}

/** The tensors of a SafeTensors file as {name: number[]} (read by hand from the header). */
function tensorsOf(bytes) {
  const { header, dataStart } = readHeader(bytes);
  const out = {};
  for (const [k, v] of Object.entries(header)) {
    if (k === '__metadata__') continue;
    const [a, b] = v.data_offsets;
    out[k] = Array.from(new Float32Array(bytes.slice(dataStart + a, dataStart + b).buffer));
  }
  return out;
}

describe('classifyChange', () => {
  const base = defaultState('xor');
  it('training settings are live, with what changed', () => {
    const c = classifyChange(base, { ...base, lr: 0.03, batch: 32, epochs: 500, wd: 0.001 });
    expect(c.kind).toBe('live');
    expect(c.live).toEqual(['learning rate 0.01 → 0.03', 'batch size 16 → 32', 'epochs 200 → 500', 'weight decay 0 → 0.001']);
    expect(c.reset).toEqual([]);
  });
  it('the optimizer and momentum are live; the optimizer change is flagged', () => {
    const c = classifyChange(base, { ...base, opt: 'sgd', momentum: 0.5 });
    expect(c.kind).toBe('live');
    expect(c.optimizerChanged).toBe(true);
    expect(c.live).toEqual(['momentum 0.9 → 0.5', 'optimizer Adam → SGD']);
  });
  it('a dropout change is live; units, activations and layer counts reset', () => {
    const drop = structuredClone(base);
    drop.layers[1].dropout = 0.2;
    const c = classifyChange(base, drop);
    expect(c).toMatchObject({ kind: 'live', dropoutChanged: true, live: ['dropout of layer 2 0 → 0.2'] });
    const wider = structuredClone(drop);
    wider.layers[0].units = 16;
    expect(classifyChange(base, wider)).toMatchObject({ kind: 'reset', reset: ['layer 1: 8 → 16 units'] });
    const act = structuredClone(base);
    act.layers[0].act = 'relu';
    expect(classifyChange(base, act).reset).toEqual(['layer 1: tanh → relu']);
    expect(classifyChange(base, { ...base, layers: base.layers.slice(0, 1) }).reset).toEqual(['layers: 2 → 1 hidden layers']);
  });
  it('data and seed changes reset, view settings are ignored', () => {
    expect(classifyChange(base, { ...base, noise: 10, lr: 0.1 })).toMatchObject({ kind: 'reset', reset: ['noise 0 → 10'], live: ['learning rate 0.01 → 0.1'] });
    expect(classifyChange(base, { ...base, seed: 2 }).reset).toEqual(['seed 1 → 2']);
    expect(classifyChange(base, { ...base, features: ['x1', 'x2', 'x1sq'] }).reset).toEqual(['input features x1, x2 → x1, x2, x1sq']);
    expect(classifyChange(base, { ...base, dataSeed: 7 }).kind).toBe('same'); // Regenerate keeps the model
    expect(classifyChange({ ...base, showTest: false }, { ...base, showTest: true, discretize: true }).kind).toBe('same');
    expect(classifyChange({ ...base, reg: 'none', regRate: 0 }, { ...base, reg: 'l2', regRate: 0.01 }).kind).toBe('live');
  });
});

describe('SafeTensors rewrites', () => {
  const a = Float32Array.from([1, 2, 3]);
  const b = Float32Array.from([-4.5, 5.25]);
  it('renames tensors and sets metadata; the data bytes are unchanged; the header is 8-aligned', () => {
    const bytes = safetensors({ '0.weight': a, '3.bias': b }, { x: 'y' });
    const out = rewriteSafetensors(bytes, { rename: (k) => k.replace(/^3\./, '2.'), metadata: { z: 'w' } });
    expect(tensorsOf(out)).toEqual({ '0.weight': [1, 2, 3], '2.bias': [-4.5, 5.25] });
    expect(metadataOf(out)).toEqual({ x: 'y', z: 'w' });
    expect(readHeader(out).dataStart % 8).toBe(0);
    expect(out.subarray(readHeader(out).dataStart)).toEqual(bytes.subarray(readHeader(bytes).dataStart));
  });
  it('refuses two tensors of one name and a truncated header', () => {
    const bytes = safetensors({ a, b });
    expect(() => rewriteSafetensors(bytes, { rename: () => 'same' })).toThrow(/two tensors would be named "same"/);
    expect(() => readHeader(bytes.subarray(0, 12))).toThrow(/header claims/);
  });
  it('withConstantLr sets the schedule from the saved step on', () => {
    const bytes = safetensors({ '0.weight.moment_1': a }, { format: 'kiln optimizer state', optimizer: 'adam', steps: '12', schedule: '{"kind":"constant","lr":0.01}', schedule_start: '0', last_lr: '0.01' });
    const meta = metadataOf(withConstantLr(bytes, 0.03));
    expect(JSON.parse(meta.schedule)).toEqual({ kind: 'constant', lr: 0.03 });
    expect(meta).toMatchObject({ schedule_start: '12', steps: '12', last_lr: '0.01', optimizer: 'adam' });
    expect(() => withConstantLr(safetensors({ a }), 0.1)).toThrow(/not a kiln optimizer state/);
    expect(() => withConstantLr(bytes, -1)).toThrow(/positive/);
  });
  it('paramLayerMap pairs the parameter layers across dropout layers', () => {
    const s = (drop) => describeModel([{ kind: 'dense', units: 4, act: 'relu', dropout: drop }, { kind: 'dense', units: 3, act: 'tanh', dropout: 0 }], { features: 2, classes: 2 }).spec;
    const map = paramLayerMap(s(0), s(0.3));
    expect([...map]).toEqual([[0, 0], [2, 3], [4, 5]]);
    expect(isIdentity(map)).toBe(false);
    expect(isIdentity(paramLayerMap(s(0.1), s(0.3)))).toBe(true);
    expect(renamer(map)('2.weight.moment_1')).toBe('3.weight.moment_1');
    expect(() => renamer(map)('1.weight')).toThrow(/no parameter layer/);
    const wider = describeModel([{ kind: 'dense', units: 5, act: 'relu', dropout: 0 }, { kind: 'dense', units: 3, act: 'tanh', dropout: 0 }], { features: 2, classes: 2 }).spec;
    expect(paramLayerMap(s(0), wider)).toBeNull();
  });
});

describe('Trainer.retune', () => {
  it('a new batch size goes on from the position in the epoch; epochs and forever decide done', () => {
    const n = 10;
    const x = new Float32Array(n * 2);
    const y = new Int32Array(n);
    for (let i = 0; i < n; i++) x[2 * i + 1] = i;
    const sizes = [];
    const session = { trainBatch: (bx, by, count) => (sizes.push(count), { loss: 0, accuracy: 0 }) };
    const t = new Trainer(session, { train: floatSource(x, y, 2), test: floatSource(x, y, 2), classes: 2 }, { batch: 4, epochs: 1, seed: 1 });
    t.trainStep();
    t.retune({ batch: 3, epochs: 1 });
    t.trainStep();
    t.trainStep();
    expect(sizes).toEqual([4, 3, 3]);
    expect(t.done).toBe(true);
    expect(t.step).toBe(3);
    t.retune({ batch: 3, epochs: 2 });
    expect(t.done).toBe(false);
    t.retune({ batch: 3, epochs: 1 });
    t.forever = true;
    expect(t.done).toBe(false);
    t.trainStep();
    expect(t.step).toBe(4);
  });
});

describe('Session.retune (kiln-dl)', () => {
  let engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });
  const X = Float32Array.from([0, 0, 0, 1, 1, 0, 1, 1, 0.5, -0.5, -1, 0.25, 0.3, 0.9, -0.7, -0.2]);
  const Y = Int32Array.from([0, 1, 1, 0, 1, 0, 1, 0]);
  const layers = (drop) => [{ kind: 'dense', units: 6, act: 'tanh', dropout: drop }, { kind: 'dense', units: 5, act: 'relu', dropout: 0 }];
  const spec = (drop) => describeModel(layers(drop), { features: 2, classes: 2 }).spec;
  const settings = (over) => ({ ...defaultState('xor'), opt: 'adam', lr: 0.01, ...over });

  it('a new rate keeps the weights and the Adam moments: the next update is the unchanged optimizer\'s times the rate ratio', () => {
    // a and b train alike (same seed, same batches) for 5 steps at 0.01; then b steps at
    // 0.01 and a, retuned, at 0.05. Adam's update is lr · m̂ / (√v̂ + ε) with the same
    // moments, so a's update is 5 times b's (with fresh moments it would not be).
    const a = engine.createSession(spec(0), settings());
    const b = engine.createSession(spec(0), settings());
    for (let i = 0; i < 5; i++) {
      a.trainBatch(X, Y, 8);
      b.trainBatch(X, Y, 8);
    }
    const w5 = tensorsOf(a.save());
    expect(tensorsOf(b.save())).toEqual(w5);
    const before = a.predict(X);
    const r = a.retune(spec(0), settings({ lr: 0.05 }));
    expect(r).toMatchObject({ optimizerState: 'kept', modelRebuilt: false });
    expect(a.predict(X)).toEqual(before);
    a.trainBatch(X, Y, 8);
    b.trainBatch(X, Y, 8);
    expect(a.learningRate).toBeCloseTo(0.05, 12);
    expect(b.learningRate).toBeCloseTo(0.01, 12);
    expect(a.optimizer.steps).toBe(6);
    const wa = tensorsOf(a.save());
    const wb = tensorsOf(b.save());
    let compared = 0;
    for (const k of Object.keys(w5)) {
      w5[k].forEach((w, i) => {
        const db = wb[k][i] - w;
        const da = wa[k][i] - w;
        if (Math.abs(db) > 1e-5) {
          expect(da / db).toBeCloseTo(5, 2);
          compared++;
        }
      });
    }
    expect(compared).toBeGreaterThan(20);
    for (const s of [a, b]) s.dispose();
  });

  it('a dropout change rebuilds the model with the same weights (layer indices moved) and the moments', () => {
    const a = engine.createSession(spec(0), settings());
    for (let i = 0; i < 4; i++) a.trainBatch(X, Y, 8);
    const before = a.predict(X);
    const keysBefore = Object.keys(tensorsOf(a.save()));
    const r = a.retune(spec(0.5), settings());
    expect(r).toMatchObject({ optimizerState: 'kept', modelRebuilt: true });
    expect(a.predict(X)).toEqual(before); // dropout is off in inference
    expect(keysBefore).toEqual(['0.bias', '0.weight', '2.bias', '2.weight', '4.bias', '4.weight']);
    expect(Object.keys(tensorsOf(a.save())).sort()).toEqual(['0.bias', '0.weight', '3.bias', '3.weight', '5.bias', '5.weight']);
    expect(a.optimizer.steps).toBe(4);
    a.trainBatch(X, Y, 8);
    expect(a.optimizer.steps).toBe(5);
    a.retune(spec(0), settings());
    expect(Object.keys(tensorsOf(a.save())).sort()).toEqual(keysBefore);
    a.dispose();
  });

  it('an optimizer change keeps the weights and starts the new optimizer state; SGD momentum changes keep it', () => {
    const a = engine.createSession(spec(0), settings({ opt: 'sgd', momentum: 0.9, lr: 0.1 }));
    for (let i = 0; i < 3; i++) a.trainBatch(X, Y, 8);
    const before = a.predict(X);
    expect(a.retune(spec(0), settings({ opt: 'sgd', momentum: 0.5, lr: 0.1 })).optimizerState).toBe('kept');
    expect(a.optimizer.steps).toBe(3);
    const r = a.retune(spec(0), settings({ opt: 'adam', lr: 0.01 }));
    expect(r.optimizerState).toBe('fresh');
    expect(r.why).toMatch(/Adam optimizer's state starts from zero/);
    expect(a.predict(X)).toEqual(before);
    a.dispose();
  });

  it('SGD momentum 0.9 → 0 → 0.9: the weights are kept either way', () => {
    const a = engine.createSession(spec(0), settings({ opt: 'sgd', momentum: 0.9, lr: 0.1 }));
    for (let i = 0; i < 3; i++) a.trainBatch(X, Y, 8);
    const before = a.predict(X);
    const off = a.retune(spec(0), settings({ opt: 'sgd', momentum: 0, lr: 0.1 }));
    expect(['kept', 'fresh']).toContain(off.optimizerState);
    expect(a.predict(X)).toEqual(before);
    a.trainBatch(X, Y, 8);
    expect(a.retune(spec(0), settings({ opt: 'sgd', momentum: 0.9, lr: 0.1 })).optimizerState).toBe('kept');
    a.trainBatch(X, Y, 8);
    expect(a.learningRate).toBeCloseTo(0.1, 12);
    a.dispose();
  });

  it('a CNN (conv layers, then dense with dropout) keeps its weights across a dropout change', () => {
    const cnn = (drop) =>
      describeModel(
        [
          { kind: 'conv', filters: 2, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' },
          { kind: 'dense', units: 5, act: 'relu', dropout: drop },
        ],
        { features: 784, classes: 10, image: [1, 28, 28] },
      ).spec;
    const x = Float32Array.from({ length: 4 * 784 }, (_, i) => Math.sin(i * 0.37));
    const y = Int32Array.from([3, 1, 4, 1]);
    const a = engine.createSession(cnn(0), settings({ lr: 0.001 }));
    a.trainBatch(x, y, 4);
    const before = a.predict(x);
    expect(a.retune(cnn(0.3), settings({ lr: 0.002 }))).toMatchObject({ optimizerState: 'kept', modelRebuilt: true });
    expect(a.predict(x)).toEqual(before);
    a.trainBatch(x, y, 4);
    expect(a.optimizer.steps).toBe(2);
    expect(a.learningRate).toBeCloseTo(0.002, 12);
    a.dispose();
  });

  it('regularisation changes live (L2 on, off, L1) and a regression session retunes', () => {
    const a = engine.createSession(spec(0), settings({ reg: 'l2', regRate: 0.1 }));
    for (let i = 0; i < 2; i++) a.trainBatch(X, Y, 8);
    const before = a.predict(X);
    a.retune(spec(0), settings({ reg: 'none', regRate: 0 }));
    expect(a.reg).toBeNull();
    expect(a.predict(X)).toEqual(before);
    a.trainBatch(X, Y, 8);
    a.retune(spec(0.2), settings({ reg: 'l1', regRate: 0.01 }));
    expect(a.reg).toMatchObject({ kind: 'l1', rate: 0.01 });
    a.trainBatch(X, Y, 8);
    expect(a.optimizer.steps).toBe(4);
    a.dispose();
    // Regression: one output, MSE; float targets.
    const rspec = describeModel(layers(0), { features: 2, classes: 1 }).spec;
    const t = Float32Array.from([0.5, -0.5, 0.25, 0, 1, -1, 0.1, 0.9]);
    const r = engine.createSession(rspec, settings(), 'regression');
    r.trainBatch(X, t, 8);
    const rb = r.predict(X);
    r.retune(rspec, settings({ lr: 0.02, reg: 'l2', regRate: 0.003 }));
    expect(r.predict(X)).toEqual(rb);
    expect(r.trainBatch(X, t, 8).loss).toBeGreaterThan(0);
    expect(r.learningRate).toBeCloseTo(0.02, 12);
    r.dispose();
  });

  it('refuses other layers (a new model is needed) and leaves the session working', () => {
    const a = engine.createSession(spec(0), settings());
    const other = describeModel([{ kind: 'dense', units: 7, act: 'tanh', dropout: 0 }], { features: 2, classes: 2 }).spec;
    expect(() => a.retune(other, settings())).toThrow(/layers differ/);
    expect(a.trainBatch(X, Y, 8).loss).toBeGreaterThan(0);
    a.dispose();
  });
});
