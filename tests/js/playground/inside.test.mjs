// "Look inside" in Node against the real engine: engine.js's Session.layerOutputs (kiln-dl's
// Sequential.forwardAll), Session.parameters and Session.saliency (checked against central
// finite differences of the logits), and inside-probe.js (blocks of a spec, the toy
// network's numbers recomputed by hand from the weights, histograms).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadEngine } from '../../../web/src/engine.js';
import { blocksOf, histogram, toyProbe, weightProbe, inspectProbe, inputNames, MAX_SHOWN } from '../../../web/src/inside-probe.js';
import { describeModel } from '../../../web/src/modelspec.js';
import { boundaryGrid } from '../../../web/src/datasets.js';

let engine;
beforeAll(async () => {
  engine = await loadEngine();
});

const SETTINGS = { opt: 'adam', lr: 0.01, momentum: 0, wd: 0, seed: 3 };

const session = (layers, input) => engine.createSession(describeModel(layers, input).spec, SETTINGS);

describe('blocksOf', () => {
  it('groups each linear/conv2d with its activation, pooling and dropout', () => {
    const spec = describeModel(
      [
        { kind: 'conv', filters: 4, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' },
        { kind: 'dense', units: 8, act: 'tanh', dropout: 0.5 },
        { kind: 'dense', units: 6, act: 'linear', dropout: 0 },
      ],
      { features: 784, classes: 10, image: [1, 28, 28] },
    ).spec;
    // reshape, conv2d, relu, maxPool2d, flatten, linear, tanh, dropout, linear, linear
    expect(spec.layers.map((l) => l.type)).toEqual(['reshape', 'conv2d', 'relu', 'maxPool2d', 'flatten', 'linear', 'tanh', 'dropout', 'linear', 'linear']);
    expect(blocksOf(spec.layers)).toEqual([
      { param: 1, type: 'conv2d', act: 'relu', out: 2, last: 4 },
      { param: 5, type: 'linear', act: 'tanh', out: 6, last: 7 },
      { param: 8, type: 'linear', act: 'linear', out: 8, last: 8 },
      { param: 9, type: 'linear', act: 'linear', out: 9, last: 9 },
    ]);
  });
});

describe('histogram', () => {
  it('counts every value in equal bins from min to max', () => {
    const h = histogram(Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 5);
    expect(h.min).toBe(0);
    expect(h.max).toBe(10);
    expect(Array.from(h.counts)).toEqual([2, 2, 2, 2, 3]); // [0,2) [2,4) [4,6) [6,8) [8,10]
    expect(h.mean).toBe(5);
    expect(h.std).toBeCloseTo(Math.sqrt(10), 10);
  });
  it('puts equal values in the middle bin; empty data has no counts', () => {
    expect(Array.from(histogram(Float32Array.from([2, 2, 2]), 4).counts)).toEqual([0, 0, 3, 0]);
    expect(Array.from(histogram(new Float32Array(0), 3).counts)).toEqual([0, 0, 0]);
  });
});

describe('Session.layerOutputs and toyProbe', () => {
  it('gives each neuron tanh(W·x + b) over the grid, recomputed here from the parameters', () => {
    const s = session([{ kind: 'dense', units: 3, act: 'tanh', dropout: 0.5 }], { features: 2, classes: 2 });
    const size = 5;
    const grid = boundaryGrid(size, -1, 1);
    const toy = toyProbe(s, s.model.config.layers, grid, size, inputNames({ data: 'xor' }, 2));
    expect(toy.inputs.map((i) => i.name)).toEqual(['X₁', 'X₂']);
    expect(toy.layers.map((l) => [l.units, l.shown, l.act])).toEqual([[3, 3, 'tanh'], [2, 2, 'linear']]);
    const p = s.parameters();
    const [W1, b1, W2, b2] = ['0.weight', '0.bias', '3.weight', '3.bias'].map((k) => p[k].data);
    const n = size * size;
    let worst = 0;
    for (let i = 0; i < n; i++) {
      const x = [grid[2 * i], grid[2 * i + 1]];
      const h = [0, 1, 2].map((u) => Math.tanh(W1[2 * u] * x[0] + W1[2 * u + 1] * x[1] + b1[u]));
      h.forEach((v, u) => (worst = Math.max(worst, Math.abs(toy.layers[0].values[u * n + i] - v))));
      for (let c = 0; c < 2; c++) {
        const z = b2[c] + h.reduce((a, v, u) => a + W2[3 * c + u] * v, 0);
        worst = Math.max(worst, Math.abs(toy.layers[1].values[c * n + i] - z));
      }
      expect(toy.inputs[0].values[i]).toBe(x[0]);
    }
    expect(worst).toBeLessThan(1e-6); // dropout (0.5) is off: the values are exact
    expect(Array.from(toy.layers[1].weight)).toEqual(Array.from(W2));
    expect(s.model.training).toBe(true); // the model's mode is restored
    s.dispose();
  });

  it('shows at most MAX_SHOWN units of a wide layer, with the weights between them', () => {
    const s = session([{ kind: 'dense', units: 40, act: 'relu', dropout: 0 }], { features: 2, classes: 3 });
    const toy = toyProbe(s, s.model.config.layers, boundaryGrid(4, -1, 1), 4, ['a', 'b']);
    expect(toy.layers[0]).toMatchObject({ units: 40, shown: MAX_SHOWN, dInput: 2 });
    expect(toy.layers[0].values.length).toBe(MAX_SHOWN * 16);
    expect(toy.layers[1]).toMatchObject({ units: 3, shown: 3, dInput: 40 });
    const W2 = s.parameters((k) => k === '2.weight')['2.weight'].data;
    expect(toy.layers[1].weight[1 * MAX_SHOWN + 5]).toBe(W2[1 * 40 + 5]);
    s.dispose();
  });
});

describe('Session.saliency', () => {
  it('is |∂ logit_pred / ∂ x|, as central finite differences of the engine’s logits say, dropout off', () => {
    const s = session(
      [
        { kind: 'conv', filters: 3, kernel: 3, act: 'tanh', pool: 'avg', padding: 'valid' },
        { kind: 'dense', units: 6, act: 'tanh', dropout: 0.5 },
      ],
      { features: 64, classes: 4, image: [1, 8, 8] },
    );
    const x = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i * 0.7) * 0.8);
    const { predicted, logits, map } = s.saliency(x);
    const layers = s.model.config.layers;
    const logit = (v) => {
      const outs = s.layerOutputs(v, 1);
      return outs[outs.length - 1].data;
    };
    const base = logit(x);
    expect(Array.from(base).map((v) => v.toFixed(5))).toEqual(Array.from(logits).map((v) => v.toFixed(5)));
    expect(predicted).toBe(base.indexOf(Math.max(...base)));
    const eps = 1e-2;
    let worst = 0;
    let scale = 0;
    for (let i = 0; i < 64; i++) {
      const up = x.slice();
      const down = x.slice();
      up[i] += eps;
      down[i] -= eps;
      const fd = Math.abs((logit(up)[predicted] - logit(down)[predicted]) / (2 * eps));
      worst = Math.max(worst, Math.abs(fd - map[i]));
      scale = Math.max(scale, fd);
    }
    expect(scale).toBeGreaterThan(1e-3);
    expect(worst / scale).toBeLessThan(2e-3);
    expect(layers.some((l) => l.type === 'dropout' && l.prob === 0.5)).toBe(true); // the model keeps its dropout
    s.dispose();
  });
});

describe('weightProbe and inspectProbe', () => {
  it('gives each layer’s histogram, conv filters, and every layer’s output of one item', () => {
    const s = session([{ kind: 'conv', filters: 2, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' }], { features: 64, classes: 3, image: [1, 8, 8] });
    const layers = s.model.config.layers;
    const w = weightProbe(s, layers);
    expect(w.layers.map((l) => [l.param, l.type, l.shape])).toEqual([[1, 'conv2d', [2, 1, 3, 3]], [5, 'linear', [3, 18]]]);
    expect(w.layers[0].hist.counts.reduce((a, c) => a + c, 0)).toBe(18);
    expect(Array.from(w.layers[0].filters)).toEqual(Array.from(s.parameters((k) => k === '1.weight')['1.weight'].data));
    const x = Float32Array.from({ length: 64 }, (_, i) => (i % 7) / 7);
    const r = inspectProbe(s, layers, x);
    expect(r.outputs.map((o) => [o.type, o.shape])).toEqual([
      ['reshape', [1, 1, 8, 8]],
      ['conv2d', [1, 2, 6, 6]],
      ['relu', [1, 2, 6, 6]],
      ['maxPool2d', [1, 2, 3, 3]],
      ['flatten', [1, 18]],
      ['linear', [1, 3]],
    ]);
    expect(r.outputs[2].data.every((v, i) => v === Math.max(0, r.outputs[1].data[i]))).toBe(true);
    expect(r.saliency.map.length).toBe(64);
    s.dispose();
  });
});
