// TF Playground's settings in the URL state (web/src/state.js) and the input features
// (web/src/features.js): defaults, round trip, bad links, feature vectors by hand.
import { describe, it, expect } from 'vitest';
import { decodeState, encodeState, defaultState, taskOf, modelInput, modelKey, dataSeedOf, DATA_KINDS } from '../../../web/src/state.js';
import { FEATURES, applyFeatures, featureNames, orderFeatures } from '../../../web/src/features.js';

describe('TF Playground settings in the link', () => {
  it('defaults: x1, x2; no regularisation; view options off; the data seed is the seed', () => {
    for (const kind of ['xor', 'plane', 'mnist']) {
      const s = defaultState(kind);
      expect(s.features).toEqual(['x1', 'x2']);
      expect(s.reg).toBe('none');
      expect(s.regRate).toBe(0);
      expect(s.discretize).toBe(false);
      expect(s.showTest).toBe(false);
      expect(s.dataSeed).toBe(null);
      expect(dataSeedOf(s)).toBe(s.seed);
    }
    expect(DATA_KINDS).toEqual(['xor', 'circle', 'spiral', 'gauss', 'plane', 'mgauss', 'csv', 'mnist']);
  });

  it('round-trips every new field', () => {
    const s = defaultState('spiral');
    Object.assign(s, { features: ['x1', 'x2', 'x1sq', 'sinx2'], reg: 'l1', regRate: 0.003, discretize: true, showTest: true, dataSeed: 777, noise: 35 });
    const hash = encodeState(s);
    expect(hash).toContain('&noise=35&');
    expect(hash).toContain('&features=x1,x2,x1sq,sinx2&');
    expect(hash).toContain('&dataSeed=777&');
    expect(hash).toMatch(/&reg=l1&regRate=0\.003&discretize=1&showTest=1$/);
    const { state, warnings } = decodeState(hash);
    expect(warnings).toEqual([]);
    expect(state).toEqual(s);
  });

  it('noise: integer percent; an old link\'s fraction (0 .. 0.5) is read as percent and said so', () => {
    const { state, warnings } = decodeState('#data=spiral&noise=0.35');
    expect(state.noise).toBe(35);
    expect(warnings).toEqual(['Noise "0.35" in the link is on the old 0 to 0.5 scale: read as 35 % (noise is now a percentage, 0 to 50, as in TensorFlow Playground)']);
    expect(decodeState('#data=spiral&noise=7').state.noise).toBe(7);
    expect(decodeState('#data=spiral&noise=7.5').warnings[0]).toMatch(/Bad noise \(percent\) "7.5" in the link \(expected an integer from 0 to 50\)/);
  });

  it('features are kept in FEATURES order, whatever order the link gives', () => {
    const { state, warnings } = decodeState('#data=xor&features=sinx1,x2,x1x2,x2');
    expect(warnings).toEqual([]);
    expect(state.features).toEqual(['x2', 'x1x2', 'sinx1']);
    expect(encodeState(state)).toContain('features=x2,x1x2,sinx1');
  });

  it('bad new fields are named and replaced by the defaults; the rest stays', () => {
    const { state, warnings } = decodeState('#data=circle&features=x1,x3&reg=l3&regRate=11&discretize=yes&dataSeed=-2&lr=0.05');
    expect(state.features).toEqual(['x1', 'x2']);
    expect(state.reg).toBe('none');
    expect(state.regRate).toBe(0);
    expect(state.discretize).toBe(false);
    expect(state.dataSeed).toBe(null);
    expect(state.lr).toBe(0.05);
    const all = warnings.join('\n');
    expect(all).toMatch(/Bad features "x1,x3" in the link: unknown feature "x3"/);
    expect(all).toMatch(/Unknown regularization "l3"/);
    expect(all).toMatch(/Bad regularization rate "11" .*from 0 to 10/);
    expect(all).toMatch(/Bad discretize "yes"/);
    expect(all).toMatch(/Bad data seed "-2"/);
    expect(warnings).toHaveLength(5);
    expect(decodeState('#data=xor&features=').warnings[0]).toMatch(/at least one input feature/);
  });

  it('writes only what applies: no features for MNIST, no points/noise for CSV, no rate without reg', () => {
    const m = encodeState({ ...defaultState('mnist'), reg: 'l2', regRate: 0.01 });
    expect(m).not.toContain('features=');
    expect(m).toContain('&reg=l2&regRate=0.01');
    const c = encodeState(defaultState('csv'));
    expect(c).toMatch(/^data=csv&test=0\.25&features=x1,x2&/);
    expect(encodeState({ ...defaultState('xor'), regRate: 0.3 })).not.toContain('reg');
    expect(encodeState({ ...defaultState('csv'), dataSeed: 4 })).not.toContain('dataSeed');
  });

  it('task and model input: regression has one output; features set the input size', () => {
    expect(taskOf('plane')).toBe('regression');
    expect(taskOf('mgauss')).toBe('regression');
    expect(taskOf('xor')).toBe('classification');
    expect(taskOf('mnist')).toBe('classification');
    expect(modelInput({ ...defaultState('mgauss'), features: ['x1', 'x2', 'x1x2'] })).toEqual({ features: 3, classes: 1, task: 'regression' });
    expect(modelInput({ ...defaultState('gauss'), classes: 4 })).toEqual({ features: 2, classes: 4, task: 'classification' });
    expect(modelInput(defaultState('csv'), { csvClasses: 3 })).toEqual({ features: 2, classes: 3, task: 'classification' });
    expect(modelInput(defaultState('mnist')).features).toBe(784);
    // The features decide the model's parameters: they are part of modelKey.
    expect(modelKey(defaultState('xor'))).not.toBe(modelKey({ ...defaultState('xor'), features: ['x1'] }));
  });
});

describe('input features', () => {
  it('computes each feature by hand, columns in FEATURES order', () => {
    const pts = new Float32Array([0.5, -0.25, -1, 2]);
    const v = applyFeatures(pts, ['sinx2', 'x1', 'x1x2', 'x2sq', 'x1sq', 'x2', 'sinx1']);
    expect(v).toHaveLength(14);
    const want = [
      [0.5, -0.25, 0.25, 0.0625, -0.125, Math.sin(0.5), Math.sin(-0.25)],
      [-1, 2, 1, 4, -2, Math.sin(-1), Math.sin(2)],
    ].flat();
    want.forEach((w, i) => expect(v[i]).toBeCloseTo(w, 6));
    expect(Array.from(applyFeatures(pts, ['x2']))).toEqual([-0.25, 2]);
    expect(FEATURES).toEqual(['x1', 'x2', 'x1sq', 'x2sq', 'x1x2', 'sinx1', 'sinx2']);
  });

  it('featureNames: the chosen ones in order; none for MNIST', () => {
    expect(featureNames({ data: 'xor', features: ['x1x2', 'x1'] })).toEqual(['x1', 'x1x2']);
    expect(featureNames({ data: 'mnist', features: ['x1'] })).toEqual([]);
    expect(() => orderFeatures(['cosx1'])).toThrow(/unknown feature "cosx1"/);
    expect(() => orderFeatures([])).toThrow(/at least one/);
  });
});
