// The reference cases (tests/native/cases/*.jsonl, copied from PyTorch 1.13 runs; format in
// tests/native/cases/README.md) as JS tensors, and the comparison of a result with a case's
// expected tensor: shared by cases.test.mjs and ops_cases.test.mjs.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { expectClose } from '../helpers.mjs';

/** The cases of tests/native/cases/<file> by id. */
export function readCases(file) {
  return new Map(
    readFileSync(new URL(`../../native/cases/${file}`, import.meta.url), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l))
      .map((c) => [c.id, c]),
  );
}

/** A case's number ("nan", "inf", "-inf" are strings in the files). */
export const caseNum = (v) => (v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : v);

/** inputs[name] of case c as a tensor of kiln.Tensor `T` (int64 -> int32). */
export function caseInput(T, c, name) {
  const t = c.inputs[name];
  const dtype = t.dtype.startsWith('int') ? 'int32' : t.dtype === 'bool' ? 'bool' : 'float32';
  return T.fromData(t.data.map(caseNum), { shape: t.shape, dtype });
}

/**
 * Compares `tensor` with expected[name]: values within the case tolerance and the shape
 * equal to `shape` (default: the expected shape).
 */
export function caseCheck(c, name, tensor, shape) {
  const e = c.expected[name];
  expect(e, `${c.id}: no expected ${name}`).toBeDefined();
  expect(tensor, `${c.id}.${name}: missing`).toBeDefined();
  expect(tensor.shape, `${c.id}.${name} shape`).toEqual(shape ?? e.shape);
  expectClose(tensor.dataSync(), e.data.map(caseNum), c.tolerance);
}

/** Gradients of sum(out * dy) (of out itself without dy) with respect to the leaves. */
export function caseGrads(out, dy, leaves) {
  const g = (dy === undefined ? out : out.mul(dy).sum()).backward();
  return leaves.map((x) => x.grad(g));
}
