// The playground's URL state (web/src/state.js): round trip, defaults, bad links.
import { describe, it, expect } from 'vitest';
import { decodeState, encodeState, defaultState, decodeLayer, encodeLayer, parseWeightsRef, modelKey } from '../../../web/src/state.js';

describe('URL state round trip', () => {
  it('reproduces a customised toy set-up exactly', () => {
    const s = defaultState('gauss');
    Object.assign(s, { points: 750, noise: 35, test: 0.4, classes: 4, opt: 'sgd', lr: 0.05, momentum: 0.8, batch: 7, epochs: 33, wd: 0.0001, seed: 12345 });
    s.layers = [
      { kind: 'dense', units: 5, act: 'sigmoid', dropout: 0 },
      { kind: 'dense', units: 3, act: 'leakyRelu', dropout: 0.25 },
    ];
    const hash = encodeState(s);
    const { state, warnings } = decodeState(`#${hash}`);
    expect(warnings).toEqual([]);
    expect(state).toEqual(s);
    expect(encodeState(state)).toBe(hash);
  });

  it('reproduces an MNIST CNN set-up, and the link is readable', () => {
    const s = defaultState('mnist');
    s.layers = [
      { kind: 'conv', filters: 8, kernel: 3, act: 'relu', pool: 'max', padding: 'valid' },
      { kind: 'conv', filters: 16, kernel: 5, act: 'gelu', pool: 'none', padding: 'same' },
      { kind: 'dense', units: 32, act: 'tanh', dropout: 0.5 },
    ];
    s.opt = 'adamw';
    s.train = 20000;
    s.mtest = 2000;
    const hash = encodeState(s);
    expect(hash).toBe('data=mnist&train=20000&mtest=2000&layers=c8-3-relu-max,c16-5-gelu-none-same,d32-tanh-0.5&opt=adamw&lr=0.001&batch=64&epochs=1&wd=0&seed=1');
    expect(decodeState(hash).state).toEqual(s);
  });

  it('writes only the settings that apply (no MNIST sizes for toys, momentum only for SGD)', () => {
    const hash = encodeState(defaultState('xor'));
    expect(hash).toBe('data=xor&points=400&noise=0&test=0.25&features=x1,x2&layers=d8-tanh,d8-tanh&opt=adam&lr=0.01&batch=16&epochs=200&wd=0&seed=1');
  });

  it('writes numbers without binary float noise', () => {
    const s = defaultState('xor');
    s.lr = 0.1 + 0.2; // 0.30000000000000004
    expect(encodeState(s)).toContain('lr=0.3&');
  });

  it('an empty fragment gives the XOR default with no warnings', () => {
    for (const h of ['', '#', '?']) {
      const { state, warnings } = decodeState(h);
      expect(warnings).toEqual([]);
      expect(state).toEqual(defaultState('xor'));
    }
  });

  it('missing settings take the defaults of the data kind', () => {
    const { state } = decodeState('#data=mnist&seed=9');
    expect(state.layers.map(encodeLayer)).toEqual(['d128-relu', 'd64-relu']);
    expect(state.lr).toBe(0.001);
    expect(state.batch).toBe(64);
    expect(state.seed).toBe(9);
  });

  it('a model with no hidden layers round-trips', () => {
    const s = defaultState('circle');
    s.layers = [];
    const { state, warnings } = decodeState(encodeState(s));
    expect(warnings).toEqual([]);
    expect(state.layers).toEqual([]);
  });
});

describe('bad links', () => {
  it('an unknown data set falls back to XOR with a warning', () => {
    const { state, warnings } = decodeState('#data=imagenet');
    expect(state.data).toBe('xor');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/Unknown data set "imagenet"/);
  });

  it('out-of-range, non-numeric and non-integer numbers are replaced and named', () => {
    const { state, warnings } = decodeState('#data=xor&lr=abc&batch=2.5&noise=50.5&epochs=-1&seed=&points=1e9');
    const d = defaultState('xor');
    expect(state.lr).toBe(d.lr);
    expect(state.batch).toBe(d.batch);
    expect(state.noise).toBe(d.noise);
    expect(state.epochs).toBe(d.epochs);
    expect(state.seed).toBe(d.seed);
    expect(state.points).toBe(d.points);
    expect(warnings).toHaveLength(6);
    expect(warnings.join('\n')).toMatch(/Bad learning rate "abc"/);
    expect(warnings.join('\n')).toMatch(/Bad batch size "2.5" .*an integer/);
    expect(warnings.join('\n')).toMatch(/Bad noise \(percent\) "50.5" .*from 0 to 50/);
  });

  it('unknown keys and optimizers are reported', () => {
    const { state, warnings } = decodeState('#opt=lbfgs&colour=red');
    expect(state.opt).toBe('adam');
    expect(warnings.some((w) => /Unknown setting "colour"/.test(w))).toBe(true);
    expect(warnings.some((w) => /Unknown optimizer "lbfgs"/.test(w))).toBe(true);
  });

  it('a malformed layer keeps the default model and names the token', () => {
    const { state, warnings } = decodeState('#data=circle&layers=d8-relu,x9,d4-tanh');
    expect(state.layers).toEqual(defaultState('circle').layers);
    expect(warnings).toEqual([expect.stringContaining('layer "x9"')]);
  });

  it('garbage does not throw', () => {
    for (const h of ['#%%%', '#&&&=', '#data', '#layers=,,,', '#=x', '#data=mnist&layers=c8']) {
      expect(() => decodeState(h)).not.toThrow();
    }
  });

  it('a syntactically valid but out-of-range layer survives decoding (the model check reports it)', () => {
    const { state, warnings } = decodeState('#layers=d0-relu');
    expect(warnings).toEqual([]);
    expect(state.layers).toEqual([{ kind: 'dense', units: 0, act: 'relu', dropout: 0 }]);
  });
});

describe('layer tokens', () => {
  it('decode each form', () => {
    expect(decodeLayer('d64-relu')).toEqual({ kind: 'dense', units: 64, act: 'relu', dropout: 0 });
    expect(decodeLayer('d10-silu-0.3')).toEqual({ kind: 'dense', units: 10, act: 'silu', dropout: 0.3 });
    expect(decodeLayer('c4-5-tanh-avg')).toEqual({ kind: 'conv', filters: 4, kernel: 5, act: 'tanh', pool: 'avg', padding: 'valid' });
    expect(decodeLayer('c4-5-tanh-avg-same').padding).toBe('same');
  });

  it('reject bad tokens with the reason', () => {
    expect(() => decodeLayer('d64')).toThrow(/expected d<units>-<activation>/);
    expect(() => decodeLayer('d64-swish')).toThrow(/unknown activation "swish"/);
    expect(() => decodeLayer('dx-relu')).toThrow(/units must be a number/);
    expect(() => decodeLayer('c8-3-relu-median')).toThrow(/unknown pooling "median"/);
    expect(() => decodeLayer('c8-3-relu-max-valid')).toThrow(/must be "same"/);
    expect(() => decodeLayer('lstm')).toThrow(/expected a dense layer/);
  });
});

describe('weights=idb:<name> (initial weights from IndexedDB)', () => {
  it("decodes the tutorial's link: MNIST, one 128-unit ReLU layer, the named weights", () => {
    const { state, warnings } = decodeState('#data=mnist&layers=d128-relu&weights=idb:tutorial-mnist-mlp');
    expect(warnings).toEqual([]);
    expect(state.data).toBe('mnist');
    expect(state.layers).toEqual([{ kind: 'dense', units: 128, act: 'relu', dropout: 0 }]);
    expect(state.weights).toBe('idb:tutorial-mnist-mlp');
  });

  it('round-trips, written last; a set-up without weights writes none', () => {
    const s = defaultState('mnist');
    s.weights = 'idb:my model/v2';
    const hash = encodeState(s);
    expect(hash.endsWith('&weights=idb:my%20model%2Fv2')).toBe(true);
    const { state, warnings } = decodeState(hash);
    expect(warnings).toEqual([]);
    expect(state).toEqual(s);
    expect(encodeState(defaultState('mnist'))).not.toContain('weights');
    expect(defaultState('xor').weights).toBe(null);
  });

  it('parseWeightsRef reads idb:<name> and refuses other forms with the reason', () => {
    expect(parseWeightsRef('idb:a')).toEqual({ source: 'idb', name: 'a' });
    expect(parseWeightsRef('idb:idb:x')).toEqual({ source: 'idb', name: 'idb:x' });
    expect(() => parseWeightsRef('http://x/w.safetensors')).toThrow(/expected idb:<name>/);
    expect(() => parseWeightsRef('idb:')).toThrow(/expected idb:<name>/);
    expect(() => parseWeightsRef('idb: padded')).toThrow(/spaces/);
    expect(() => parseWeightsRef(`idb:${'x'.repeat(201)}`)).toThrow(/201 characters long, at most 200/);
  });

  it('bad weights in a link are reported and dropped; the rest of the set-up stays', () => {
    const { state, warnings } = decodeState('#data=mnist&layers=d32-tanh&weights=file:w.bin');
    expect(state.weights).toBe(null);
    expect(state.layers).toEqual([{ kind: 'dense', units: 32, act: 'tanh', dropout: 0 }]);
    expect(warnings).toEqual([expect.stringMatching(/^Bad weights in the link: weights "file:w.bin": expected idb:<name>/)]);
  });

  it('modelKey changes with the layers and the data kind, not with training settings', () => {
    const a = defaultState('mnist');
    const b = { ...defaultState('mnist'), lr: 0.1, epochs: 7, seed: 3 };
    expect(modelKey(a)).toBe(modelKey(b));
    expect(modelKey(a)).toBe('mnist|d128-relu,d64-relu');
    expect(modelKey({ ...a, layers: [{ kind: 'dense', units: 128, act: 'relu', dropout: 0 }] })).toBe('mnist|d128-relu');
    expect(modelKey({ ...defaultState('gauss'), classes: 3 })).not.toBe(modelKey({ ...defaultState('gauss'), classes: 4 }));
  });
});
