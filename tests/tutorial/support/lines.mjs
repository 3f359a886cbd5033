// Reading a tutorial cell's output in its expectation (tests/tutorial/expect/*.mjs).
//
// Cells print `name: value` lines (print('name:', value)); the notebook shows arrays and
// objects as compact JSON-like text (`[[1, 2], [3, 4]]`, `{dInput: 784, type: 'linear'}`),
// which these helpers parse back so an expectation compares numbers, not strings.
import assert from 'node:assert/strict';

const SPECIAL = { __Infinity: Infinity, '__-Infinity': -Infinity, __NaN: NaN, __undefined: undefined };

/**
 * Parses a printed value: JSON, or the JS-like text of the notebook's print (single-quoted
 * strings, unquoted keys, Infinity/NaN). Returns the text itself when it is neither.
 */
export function parseValue(text) {
  const t = text.trim();
  try {
    return JSON.parse(t);
  } catch {
    // fall through to the JS-like form
  }
  const json = t
    .replace(/'((?:[^'\\]|\\.)*)'/g, (_, s) => JSON.stringify(s))
    .replace(/([{,]\s*)([A-Za-z_$][\w$]*)\s*:/g, '$1"$2":')
    .replace(/(?<!["\w])(-?Infinity|NaN|undefined)(?![\w"])/g, '"__$1"');
  try {
    return JSON.parse(json, (_, v) => (typeof v === 'string' && v in SPECIAL ? SPECIAL[v] : v));
  } catch {
    return t;
  }
}

/** Every `name: value` line of `out` (the last one wins), values parsed by parseValue. */
export function values(out) {
  const map = new Map();
  for (const line of out.split('\n')) {
    const m = /^([A-Za-z][\w.[\]-]*): (.*)$/.exec(line.trim());
    if (m) map.set(m[1], parseValue(m[2]));
  }
  return map;
}

/** The value printed as `name: ...`; fails naming the missing line and showing the output. */
export function get(out, name) {
  const map = values(out);
  assert.ok(map.has(name), `no "${name}:" line in the cell's output:\n${out}`);
  return map.get(name);
}

/**
 * Asserts that got (a number or nested arrays of numbers) equals want within
 * |got - want| <= tol·(1 + |want|) element by element, with the same nesting.
 */
export function assertClose(got, want, tol = 1e-5, where = 'value') {
  if (Array.isArray(want)) {
    assert.ok(Array.isArray(got), `${where}: expected an array, got ${JSON.stringify(got)}`);
    assert.equal(got.length, want.length, `${where}: length ${got.length} != ${want.length}`);
    want.forEach((w, i) => assertClose(got[i], w, tol, `${where}[${i}]`));
    return;
  }
  assert.equal(typeof got, 'number', `${where}: expected a number, got ${JSON.stringify(got)}`);
  assert.ok(Math.abs(got - want) <= tol * (1 + Math.abs(want)), `${where}: ${got} != ${want} (tol ${tol})`);
}

/** The text after `name: ` on the first line that starts with it (not parsed); fails naming the line. */
export function field(out, name) {
  const line = out.split('\n').find((l) => l.startsWith(`${name}: `));
  assert.ok(line !== undefined, `no "${name}:" line in:\n${out}`);
  return line.slice(name.length + 2).trim();
}

/** field(out, name) as a number. */
export const num = (out, name) => Number(field(out, name));
