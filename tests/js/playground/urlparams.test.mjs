// The link reader's handling of malformed percent-escapes and the sliders' steps (issue 18).
import { describe, it, expect } from 'vitest';
import { readParams, decodePart } from '../../../web/src/urlparams.js';
import { decodeState, defaultState, encodeState, NUMBER_FIELDS, snapToStep } from '../../../web/src/state.js';

describe('readParams', () => {
  it('decodes as URLSearchParams does for valid text', () => {
    const text = 'a=1&b=x%20y+z&a=2&c&d=%E2%9C%93';
    const p = readParams(text);
    const u = new URLSearchParams(text);
    for (const k of ['a', 'b', 'c', 'd', 'e']) expect(p.get(k)).toBe(u.get(k));
    expect([...p.keys()]).toEqual(['a', 'b', 'c', 'd']);
    expect(p.problems).toEqual([]);
  });

  it('names the raw text of a malformed key instead of "�"', () => {
    const p = readParams('data=xor&%E9%A=1');
    expect(p.get('data')).toBe('xor');
    expect([...p.keys()]).toEqual(['data']);
    expect(p.problems).toHaveLength(1);
    expect(p.problems[0]).toContain('"%E9%A"');
    expect(p.problems[0]).not.toContain('\uFFFD');
  });

  it('names the raw value and the key of a malformed value', () => {
    const p = readParams('lr=%ZZ1&seed=3');
    expect(p.get('lr')).toBe(null);
    expect(p.badValues.has('lr')).toBe(true);
    expect(p.problems[0]).toMatch(/"%ZZ1" of "lr"/);
    expect(decodePart('%')).toBe(null);
    expect(decodePart('%41')).toBe('A');
  });
});

describe('decodeState and malformed links', () => {
  it('reports "%A" by its raw text and keeps the rest of the link', () => {
    const { state, warnings } = decodeState('#data=circle&%E9%A&lr=0.05');
    expect(state.data).toBe('circle');
    expect(state.lr).toBe(0.05);
    expect(warnings.join('\n')).toContain('"%E9%A"');
    expect(warnings.join('\n')).not.toContain('\uFFFD');
  });

  it('gives field warnings by key for the page to show beside the field', () => {
    const { fields } = decodeState('#data=xor&batch=0&lr=abc');
    expect(Object.keys(fields).sort()).toEqual(['batch', 'lr']);
    expect(fields.batch).toMatch(/Bad batch size "0"/);
  });
});

describe('slider fields', () => {
  const sliders = NUMBER_FIELDS.filter((f) => f.step);

  it('cover every value a link may set: the steps divide the ranges', () => {
    expect(sliders.map((f) => f.key).sort()).toEqual(['noise', 'points', 'test']);
    for (const f of sliders) {
      const n = (f.max - f.min) / f.step;
      expect(Math.abs(n - Math.round(n))).toBeLessThan(1e-9);
    }
  });

  it('keeps link values on the step and the range ends', () => {
    const { state, warnings } = decodeState('#data=xor&test=0.05&points=5000&noise=50');
    expect(warnings).toEqual([]);
    expect(state.test).toBe(0.05);
    expect(state.points).toBe(5000);
    expect(state.noise).toBe(50);
  });

  it('moves a value off the step to the nearest step, with a warning', () => {
    const { state, warnings, fields } = decodeState('#data=xor&points=437&test=0.333');
    expect(state.points).toBe(440);
    expect(state.test).toBe(0.33);
    expect(fields.points).toMatch(/437.*using 440/);
    expect(warnings).toHaveLength(2);
    expect(snapToStep(0.4, NUMBER_FIELDS.find((f) => f.key === 'test'))).toBe(0.4);
  });

  it('round-trips the defaults without warnings', () => {
    for (const data of ['xor', 'gauss', 'mnist']) {
      expect(decodeState(encodeState(defaultState(data))).warnings).toEqual([]);
    }
  });
});
