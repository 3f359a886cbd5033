// Shared helpers of the JS tests (not a test file itself).
import { expect } from 'vitest';

/** Runs fn and returns the error it throws (fails the test if it does not throw). */
export function caught(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to throw');
}

/** Expects fn to throw a KilnError of `code` whose message matches `message` (RegExp or string). */
export function expectKilnError(kiln, fn, code, message) {
  const e = caught(fn);
  expect(e).toBeInstanceOf(kiln.KilnError);
  expect(e).toBeInstanceOf(Error);
  expect(e.name).toBe('KilnError');
  expect({ code: e.code, message: e.message }).toEqual({
    code,
    message: message instanceof RegExp ? expect.stringMatching(message) : message,
  });
  return e;
}

/** |a - e| <= abs + rel·|e| element-wise; nan matches nan, inf the same inf (cases README). */
export function expectClose(actual, expected, { abs = 1e-5, rel = 1e-4 } = {}) {
  const a = Array.from(actual);
  const e = Array.from(expected);
  expect(a.length).toBe(e.length);
  e.forEach((x, i) => {
    const y = a[i];
    if (Number.isNaN(x)) {
      expect(Number.isNaN(y), `element ${i}: expected nan, got ${y}`).toBe(true);
    } else if (!Number.isFinite(x)) {
      expect(y, `element ${i}`).toBe(x);
    } else {
      expect(Math.abs(y - x) <= abs + rel * Math.abs(x), `element ${i}: got ${y}, expected ${x}`).toBe(true);
    }
  });
}

/** Flat row-major values of nested arrays. */
export function flat(nested) {
  return Array.isArray(nested) ? nested.flatMap(flat) : [nested];
}
