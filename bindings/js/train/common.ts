// Internal: what the training API's parts share: option checks (each names the op and the
// option), the token of their internal constructors, and the event-loop helpers of fit().
import { checkIntArray, checkOptions, describe, fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';

/** A checked options object (its fields are checked where they are read). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Options = Record<string, any>;

export const TOKEN = Symbol('kiln.train.internal');

/** Resolves on the next turn of the event loop (setImmediate in Node, MessageChannel in
 * browsers and workers: both skip setTimeout's clamping of ~1-4 ms). */
export function nextTurn(): Promise<void> {
  const { setImmediate } = globalThis as { setImmediate?: (f: () => void) => void };
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    return new Promise<void>((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(0);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

export function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

// ---------------------------------------------------------------- option checks

export function options(value: unknown, op: string, allowed: string[]): Options {
  const opts = checkOptions<Options>(value, op) as Options;
  for (const key of Object.keys(opts)) {
    if (!allowed.includes(key)) {
      throw fail('Config', `${op}: unknown option "${key}" (options: ${allowed.join(', ')})`);
    }
  }
  return opts;
}

export function num(v: unknown, op: string, what: string, dflt?: number): number {
  if (v === undefined) return dflt as number;
  if (typeof v !== 'number') throw fail('Type', `${op}: ${what} must be a number, got ${describe(v)}`);
  // A number, but not one a config can hold: a Config error naming the field, as
  // engineJson's for ±Infinity (documented: optim.sgd({lr: NaN}) is Config).
  if (Number.isNaN(v)) throw fail('Config', `${op}: ${what}: expected a finite number, got NaN`);
  return v;
}

export function int(v: unknown, op: string, what: string, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw fail('Type', `${op}: ${what} must be an integer, got ${describe(v)}`);
  }
  if (v < min) throw fail('Value', `${op}: ${what} must be >= ${min}, got ${v}`);
  return v;
}

export function bool(v: unknown, op: string, what: string, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw fail('Type', `${op}: ${what} must be a boolean, got ${describe(v)}`);
  return v;
}

export function intShape(v: unknown, op: string, what: string): number[] | null {
  if (v === undefined || v === null) return null;
  return checkIntArray(v, op, what);
}

/** The engine of a class's `this` in a constructor (the per-instance subclass). */
export function engineOfNew(target: unknown, what: string): Engine {
  const e = (target as { _e?: Engine } | undefined)?._e;
  if (e === undefined) throw fail('Type', `${what}: the constructor is internal`);
  return e;
}
