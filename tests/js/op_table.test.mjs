// The op table the JS layer reads from the engine (bindings/op_table.cpp: opTable(), the
// rows of engine/include/kiln/backend/ops.def with the engine's enum values): each id runs
// the op its row names (checked against values computed here with Math), and every row with
// a JS method is a Tensor method (and declared in the generated dist/generated/ops.d.ts). The
// rows carry no doc sentence: only the TypeScript declarations (scripts/gen_ops.mjs) use it.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseOpsDef } from '../../scripts/gen_ops.mjs';
import { init } from '../../dist/node.js';
import { expectClose } from './helpers.mjs';

let kiln;
let raw;
let table;
beforeAll(async () => {
  kiln = await init();
  raw = kiln._internals.raw;
  table = raw.opTable();
});

const row = (family, name) => {
  const r = table[family].find((x) => x.name === name);
  expect(r, `${family} row ${name}`).toBeDefined();
  return r;
};

/** Runs a raw entry point on tensors made from arrays and returns the values of its result. */
function run(f, ...arrays) {
  return kiln.tidy(() => {
    const handles = arrays.map((a) => kiln._internals.unwrap(kiln.Tensor.fromData(a), 'test'));
    const out = kiln._internals.wrap(f(...handles));
    return Array.from(out.dataSync());
  });
}

describe('opTable()', () => {
  it('has the four families, each row with exactly id, name, method and kinds (no doc: the engine does not carry the doc strings)', () => {
    expect(Object.keys(table).sort()).toEqual(['binary', 'compare', 'reduce', 'unary']);
    for (const family of Object.keys(table)) {
      expect(table[family].length).toBeGreaterThan(0);
      for (const r of table[family]) {
        expect(Number.isInteger(r.id)).toBe(true);
        expect(r.name).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(r.method === null || /^[a-z][A-Za-z0-9]*$/.test(r.method)).toBe(true);
        expect(['float', 'numeric', 'any']).toContain(r.kinds);
        expect(Object.keys(r).sort()).toEqual(['id', 'kinds', 'method', 'name']);
      }
      // Rows in enum order: ids 0..n-1 (an enumerator's value is its row's position).
      expect(table[family].map((r) => r.id)).toEqual(table[family].map((_, i) => i));
    }
  });

  it('matches ops.def as scripts/gen_ops.mjs reads it (the rows the TypeScript declarations come from)', () => {
    const rows = parseOpsDef(readFileSync(new URL('../../engine/include/kiln/backend/ops.def', import.meta.url), 'utf8'));
    for (const family of Object.keys(table)) {
      const fromDef = rows.filter((r) => r.family === family).map(({ snake, method, kinds }) => ({ name: snake, method, kinds }));
      expect(table[family].map(({ name, method, kinds }) => ({ name, method, kinds }))).toEqual(fromDef);
    }
  });

  it('unary ids run the op their row names', () => {
    const x = [-1.5, 0, 0.5, 2];
    expectClose(run((a) => raw.tUnary(row('unary', 'exp').id, a), x), x.map(Math.exp));
    expectClose(run((a) => raw.tUnary(row('unary', 'neg').id, a), x), x.map((v) => -v));
    expectClose(run((a) => raw.tUnary(row('unary', 'tanh').id, a), x), x.map(Math.tanh));
    expectClose(run((a) => raw.tUnary(row('unary', 'log1p').id, a), [0, 1, 3]), [0, 1, 3].map(Math.log1p));
    expectClose(run((a) => raw.tUnary(row('unary', 'sigmoid').id, a), x), x.map((v) => 1 / (1 + Math.exp(-v))));
    expectClose(run((a) => raw.tUnary(row('unary', 'relu').id, a), x), [0, 0, 0.5, 2]);
  });

  it('binary ids run the op their row names', () => {
    const a = [7, -7, 2.5, 9];
    const b = [2, 2, -0.5, 3];
    expectClose(run((x, y) => raw.tBinary(row('binary', 'sub').id, x, y), a, b), a.map((v, i) => v - b[i]));
    expectClose(run((x, y) => raw.tBinary(row('binary', 'div').id, x, y), a, b), a.map((v, i) => v / b[i]));
    expectClose(run((x, y) => raw.tBinary(row('binary', 'pow').id, x, y), [2, 3], [3, 2]), [8, 9]);
    // remainder takes the divisor's sign (Python %), fmod the dividend's (C fmod).
    expectClose(run((x, y) => raw.tBinary(row('binary', 'remainder').id, x, y), [7, -7], [3, 3]), [1, 2]);
    expectClose(run((x, y) => raw.tBinary(row('binary', 'fmod').id, x, y), [7, -7], [3, 3]), [1, -1]);
    expectClose(run((x, y) => raw.tBinary(row('binary', 'max_pair').id, x, y), a, b), a.map((v, i) => Math.max(v, b[i])));
  });

  it('compare and reduce ids run the op their row names', () => {
    const a = [1, 2, 3];
    const b = [3, 2, 1];
    expect(run((x, y) => raw.tCompare(row('compare', 'greater').id, x, y), a, b)).toEqual([0, 0, 1]);
    expect(run((x, y) => raw.tCompare(row('compare', 'lower_equal').id, x, y), a, b)).toEqual([1, 1, 0]);
    expect(run((x, y) => raw.tCompare(row('compare', 'not_equal').id, x, y), a, b)).toEqual([1, 0, 1]);
    const v = [2, -3, 4];
    expectClose(run((x) => raw.tReduce(row('reduce', 'sum').id, x), v), [3]);
    expectClose(run((x) => raw.tReduce(row('reduce', 'prod').id, x), v), [-24]);
    expectClose(run((x) => raw.tReduce(row('reduce', 'min').id, x), v), [-3]);
    expectClose(run((x) => raw.tReduce(row('reduce', 'mean').id, x), v), [1]);
  });

  it('every row with a JS method is a Tensor method (compare: also *Elem, reduce: also *Dim)', () => {
    const proto = kiln.Tensor.prototype;
    const expected = [];
    for (const r of table.unary) if (r.method) expected.push(r.method);
    for (const r of table.binary) if (r.method) expected.push(r.method);
    for (const r of table.compare) if (r.method) expected.push(r.method, `${r.method}Elem`);
    for (const r of table.reduce) if (r.method) expected.push(r.method, `${r.method}Dim`);
    for (const m of expected) expect(typeof proto[m], m).toBe('function');
    // The generated method runs its row: t.exp() is e^x.
    const exp = table.unary.find((r) => r.method === 'exp');
    expect(exp.name).toBe('exp');
    kiln.tidy(() => {
      expectClose(kiln.Tensor.fromData([0, 1, -2]).exp().dataSync(), [1, Math.E, Math.exp(-2)]);
    });
    // ... and has a TypeScript declaration generated from ops.def.
    const dts = readFileSync(new URL('../../dist/generated/ops.d.ts', import.meta.url), 'utf8');
    for (const m of expected) expect(dts, m).toMatch(new RegExp(`\\b${m}\\(`));
  });

  it('rows without a JS method have hand-written methods that use their ids', () => {
    const handWritten = Object.values(table).flat().filter((r) => r.method === null).map((r) => r.name).sort();
    expect(handWritten).toEqual(['gelu', 'gelu_tanh', 'pow']);
    kiln.tidy(() => {
      const x = kiln.Tensor.fromData([2, 3]);
      expectClose(x.pow(2).dataSync(), [4, 9]);
      expectClose(x.powf(x).dataSync(), [4, 27]);
      // gelu(x) = x·Φ(x); Φ(1) = 0.8413447460685429
      expectClose(kiln.Tensor.fromData([1]).gelu().dataSync(), [0.8413447460685429]);
      // tanh form: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³)))
      const t = 0.5 * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (1 + 0.044715)));
      expectClose(kiln.Tensor.fromData([1]).gelu({ approximate: 'tanh' }).dataSync(), [t]);
    });
  });
});
