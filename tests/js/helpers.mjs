// Shared helpers of the JS tests (not a test file itself).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect } from 'vitest';

/** Runs fn and returns the error it throws (fails the test if it does not throw). */
export function caught(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to throw');
}

/** Awaits `promise` and returns the reason it rejects with (fails the test if it resolves). */
export async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  throw new Error('expected the promise to reject');
}

/** expectKilnError for a promise: it rejects with a KilnError of `code` matching `message`. */
export async function expectKilnRejection(kiln, promise, code, message) {
  const e = await rejection(promise);
  return expectKilnError(kiln, () => {
    throw e;
  }, code, message);
}

/** mulberry32: a small seeded PRNG, uniform in [0, 1), for test data and shuffles. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A maker of fresh temporary directories named `<prefix>XXXXXX`, all removed after the
 * file's tests (call it at the top level of a test file).
 */
export function tempDirs(prefix) {
  const dirs = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
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
