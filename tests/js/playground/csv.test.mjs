// "Your CSV" (web/src/csv.js): header or not, column names, class numbering, scaling into
// the square, and the messages for bad files (naming the line).
import { describe, it, expect } from 'vitest';
import { parseCsv, CSV_LIMITS } from '../../../web/src/csv.js';

const rows = (n, f) => Array.from({ length: n }, (_, i) => f(i)).join('\n');

describe('CSV of 2-D points', () => {
  it('reads rows without a header; scales by one factor about the centre', () => {
    // x1 in [0, 10], x2 in [0, 4]: centre (5, 2), half-range max(5, 2) = 5 -> scale 0.2.
    const text = rows(12, (i) => `${(i * 10) / 11},${(i % 5)},${i % 2}`);
    const r = parseCsv(text, 'p.csv');
    expect(r.ok).toBe(true);
    expect(r.header).toBe(false);
    expect(r.n).toBe(12);
    expect(r.numClasses).toBe(2);
    expect(r.scale).toBeCloseTo(0.2, 12);
    expect(r.center).toEqual([5, 2]);
    expect(r.x[0]).toBeCloseTo(-1, 6); // (0 - 5) · 0.2
    expect(r.x[1]).toBeCloseTo(-0.4, 6); // (0 - 2) · 0.2
    expect(r.x[22]).toBeCloseTo(1, 6); // the last x1 is 10
    expect(Array.from(r.y)).toEqual(Array.from({ length: 12 }, (_, i) => i % 2));
  });

  it('a header names the columns in any order; words are labels, numbered in sorted order', () => {
    const text = `Label;Y;X\n${rows(10, (i) => `${i % 3 === 0 ? 'cat' : i % 3 === 1 ? 'ant' : 'bee'};${i};${-i}`)}\n\n`;
    const r = parseCsv(text);
    expect(r.ok).toBe(true);
    expect(r.header).toBe(true);
    expect(r.columns).toEqual(['X', 'Y', 'Label']);
    expect(r.classNames).toEqual(['ant', 'bee', 'cat']);
    expect(r.y[0]).toBe(2); // cat
    expect(r.y[1]).toBe(0); // ant
    // x1 is the X column: -0 .. -9 -> centre -4.5; the first point is at +1.
    expect(r.x[0]).toBeCloseTo(1, 6);
    // Numeric labels sort numerically: 10 after 9.
    const num = parseCsv(rows(12, (i) => `${i},${i * 2},${i < 6 ? 9 : 10}`));
    expect(num.classNames).toEqual(['9', '10']);
  });

  it('bad rows are named by line; the file is rejected', () => {
    const text = `x1,x2,label\n1,2,a\n3,oops,b\n\n5\n7,8,\n${rows(10, (i) => `${i},${i},a`)}`;
    const r = parseCsv(text, 'bad.csv');
    expect(r.ok).toBe(false);
    expect(r.errors).toEqual([
      'line 3: x2 "oops" is not a number',
      'line 5: 1 field ("5"); expected 3: x1, x2, label',
      'line 6: the label is empty',
    ]);
  });

  it('stops after a few errors and says so', () => {
    const r = parseCsv(rows(40, (i) => `a${i},1,0`));
    expect(r.ok).toBe(false);
    expect(r.errors).toHaveLength(CSV_LIMITS.maxErrors + 1);
    expect(r.errors[0]).toBe('line 2: a0 "a1" is not a number'); // line 1 (a0,1,0) is taken as the header
    expect(r.errors.at(-1)).toMatch(/stopped after 8 errors/);
  });

  it('limits: too few points, one class, too many classes, identical points, too many points, empty', () => {
    expect(parseCsv(rows(5, (i) => `${i},1,${i % 2}`), 'f.csv').errors[0]).toMatch(/f\.csv has 5 points; at least 10/);
    expect(parseCsv(rows(20, (i) => `${i},1,z`)).errors[0]).toMatch(/every point has the label "z"; at least 2 classes/);
    expect(parseCsv(rows(20, (i) => `${i},1,${i}`)).errors[0]).toMatch(/20 different values .*at most 5 classes/);
    expect(parseCsv(rows(20, (i) => `3,4,${i % 2}`)).errors[0]).toMatch(/all points are at the same place \(3, 4\)/);
    expect(parseCsv(rows(5001, (i) => `${i},1,${i % 2}`)).errors[0]).toMatch(/5001 points; at most 5000/);
    expect(parseCsv('', 'e.csv').errors[0]).toMatch(/e\.csv is empty/);
    expect(parseCsv('a,b,c\x00').errors[0]).toMatch(/not a text file/);
  });
});
