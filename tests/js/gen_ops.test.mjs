// scripts/gen_ops.mjs: the TypeScript declarations of the op-table methods come from
// ops.def's rows. It reads the first five arguments of a row (Name, snake, jsMethod, KINDS,
// "doc") and ignores the rest, however they are written (kernel expressions with commas,
// parentheses and strings, rows over several lines); a row with jsMethod `_` gets no
// declaration; a new row gives a new declared method.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generate, parseOpsDef } from '../../scripts/gen_ops.mjs';

const DEF = `
// a comment with KILN_UNARY_OP(Fake, fake, fake, FLOAT, "not a row")
#ifndef KILN_UNARY_OP
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, doc, ...)
#endif
KILN_UNARY_OP(Exp, exp, exp, FLOAT, "e^x (torch.exp)", xsimd::exp(x), g * y)
KILN_UNARY_OP(Expm1, expm1, expm1, FLOAT,
              "exp(x) - 1, accurate near 0 (torch.expm1)",
              xsimd::expm1(x), g * (y + 1))  /* more arguments */
KILN_BINARY_OP(Pow, pow, _, NUMERIC, "lhs to the power rhs (torch.pow)", std::pow(a, b), "a, b")
KILN_COMPARE_OP(Greater, greater, greater, NUMERIC, "lhs > rhs " "(torch.gt)")
KILN_REDUCE_OP(Sum, sum, sum, NUMERIC, "sum of the elements (torch.sum)", f(a, (b, c)))
`;

describe('scripts/gen_ops.mjs', () => {
  it('reads the first five arguments of each row and ignores the rest', () => {
    const rows = parseOpsDef(DEF);
    expect(rows.map(({ family, name, snake, method, kinds, doc }) => ({ family, name, snake, method, kinds, doc }))).toEqual([
      { family: 'unary', name: 'Exp', snake: 'exp', method: 'exp', kinds: 'float', doc: 'e^x (torch.exp)' },
      { family: 'unary', name: 'Expm1', snake: 'expm1', method: 'expm1', kinds: 'float', doc: 'exp(x) - 1, accurate near 0 (torch.expm1)' },
      { family: 'binary', name: 'Pow', snake: 'pow', method: null, kinds: 'numeric', doc: 'lhs to the power rhs (torch.pow)' },
      { family: 'compare', name: 'Greater', snake: 'greater', method: 'greater', kinds: 'numeric', doc: 'lhs > rhs (torch.gt)' },
      { family: 'reduce', name: 'Sum', snake: 'sum', method: 'sum', kinds: 'numeric', doc: 'sum of the elements (torch.sum)' },
    ]);
  });

  it('declares one method per row with a JS method (two for compare and reduce), its doc as JSDoc', () => {
    const ts = generate(parseOpsDef(DEF), 'ops.def');
    expect(ts).toMatch(/\* exp\(x\) - 1, accurate near 0 \(torch\.expm1\)\.\n[^]*?\n {2}expm1\(\): Tensor;/);
    expect(ts).toContain('  exp(): Tensor;');
    expect(ts).toContain('  greater(other: Tensor | number): Tensor;');
    expect(ts).toContain('  greaterElem(value: number): Tensor;');
    expect(ts).toContain('  sum(dim?: number): Tensor;');
    expect(ts).toContain('  sumDim(dim: number): Tensor;');
    expect(ts).not.toMatch(/\bpow\(/);
  });

  it('rejects a row whose first five arguments are not Name, snake, jsMethod, KINDS, "doc"', () => {
    expect(() => parseOpsDef('KILN_UNARY_OP(Exp, exp, exp, FLOATS, "e^x")')).toThrow(/KINDS must be FLOAT, NUMERIC or ANY, got FLOATS/);
    expect(() => parseOpsDef('KILN_UNARY_OP(Exp, exp, exp, FLOAT)')).toThrow(/at least 5 arguments/);
    expect(() => parseOpsDef('KILN_UNARY_OP(Exp, exp, exp, FLOAT, e^x)')).toThrow(/the doc must be a string literal/);
  });

  it('parses the real ops.def: every row the engine reports, in the same order', () => {
    const rows = parseOpsDef(readFileSync(new URL('../../engine/include/kiln/backend/ops.def', import.meta.url), 'utf8'));
    const families = ['binary', 'unary', 'compare', 'reduce'];
    for (const f of families) expect(rows.filter((r) => r.family === f).length).toBeGreaterThan(0);
    expect(rows.find((r) => r.snake === 'exp')).toMatchObject({ family: 'unary', method: 'exp', kinds: 'float' });
  });
});
