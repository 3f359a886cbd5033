// Batchers (Burn's `Batcher<B, I, O>`: items -> one batch): a function or an object with
// `batch(items)`; the default one stacks numbers, booleans, typed arrays and Tensors into
// tensors, keeping the items' arrays and plain objects (as PyTorch's default_collate).
import { KilnError } from '../errors.js';
import { describe, dtypeCode, fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import { camelErrors } from '../nn.js';
import { checkCollateOptions, collate, isPlainTensor, type CollateOptions, type PlainTensor } from './collate.js';

/**
 * Turns a list of items (1 to batchSize of them, in the loader's order) into a batch,
 * typically Tensors: a function `items => batch` or an object with `batch(items)` (Burn's
 * Batcher trait; no device argument: the engine has one). The result must be a Tensor or
 * an array or plain object holding at least one Tensor (other values may sit beside them).
 */
export type Batcher<I = unknown, B = unknown> = ((items: I[]) => B) | { batch(items: I[]): B };

/** The marker of kiln.data.defaultBatcher's functions: their options, for workers. */
export const DEFAULT_BATCHER: unique symbol = Symbol.for('kiln.data.defaultBatcher');

/** The batch the default batcher makes of items of type I. */
export type DefaultBatch = Tensor | DefaultBatch[] | { [key: string]: DefaultBatch };

/** A default batcher function (kiln.data.defaultBatcher()), carrying its options for workers. */
export interface DefaultBatcherFn {
  (items: unknown[]): DefaultBatch;
  [DEFAULT_BATCHER]: CollateOptions;
}

/** The collate options of a default batcher, or null for a user batcher. @internal */
export function defaultBatcherOptions(b: unknown): CollateOptions | null {
  const o = (b as Partial<DefaultBatcherFn> | null)?.[DEFAULT_BATCHER];
  return o === undefined ? null : o;
}

/** A collated leaf of Tensors to stack (collate's `isLeaf` result). */
interface TensorLeaf {
  kilnLeaf: true;
  path: string;
  values: Tensor[];
}

/**
 * PlainTensors (from collate, here or in a worker) -> Tensors in the same structure; Tensor
 * leaves are stacked. On an error every Tensor made so far is disposed.
 */
export function toTensors(e: Engine, plain: unknown, op: string): DefaultBatch {
  const made: Tensor[] = [];
  const walk = (v: unknown): unknown => {
    if (isPlainTensor(v)) {
      const p = v as PlainTensor;
      const t = e.wrap(e.raw.tFromTypedArray(p.data, p.shape, dtypeCode(p.dtype, op)));
      made.push(t);
      return t;
    }
    const leaf = v as Partial<TensorLeaf>;
    if (v !== null && typeof v === 'object' && leaf.kilnLeaf === true) {
      const handles = (leaf.values as Tensor[]).map((t, i) => e.unwrap(t, op, `items[${i}]${leaf.path ? `.${leaf.path}` : ''}`));
      const t = e.wrap(camelErrors(() => e.raw.tStack(handles, 0, op)));
      made.push(t);
      return t;
    }
    if (Array.isArray(v)) return v.map(walk);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as object)) out[k] = walk(x);
    return out;
  };
  try {
    return walk(plain) as DefaultBatch;
  } catch (err) {
    for (const t of made) t.dispose();
    throw err;
  }
}

/**
 * The default batcher (options: per-field dtype and item shape, see CollateOptions): a
 * field of n numbers -> a float32 Tensor `[n]` (booleans: bool), of n typed arrays of
 * length k -> `[n, k]` (float32 for Float32Array/Float64Array, int32 for integer arrays),
 * of n Tensors of shape s -> `[n, ...s]` (stacked by the engine); arrays and plain objects
 * keep their structure: `{x: Float32Array(784), y: 3}` items -> `{x: [n, 784], y: [n]}`.
 * Labels for crossEntropy are int32: `defaultBatcher({dtype: {y: 'int32'}})`.
 * @throws KilnError `Type`/`Config`/`Value` for bad options; when batching, `Type` naming
 *   the item and field whose kind differs from items[0]'s, `Shape` for different lengths.
 */
export function makeDefaultBatcher(e: Engine, options?: CollateOptions): DefaultBatcherFn {
  const op = 'defaultBatcher';
  const opts = checkCollateOptions(options, op);
  const isTensor = (v: unknown) => v instanceof e.Tensor;
  const fn = ((items: unknown[]) => toTensors(e, collate(items, opts, op, isTensor), op)) as DefaultBatcherFn;
  Object.defineProperty(fn, DEFAULT_BATCHER, { value: opts });
  return fn;
}

/** The batch function of a Batcher, or a KilnError `Type` naming op. */
export function batchFunction(b: unknown, op: string): (items: unknown[]) => unknown {
  if (typeof b === 'function') return b as (items: unknown[]) => unknown;
  if (b !== null && typeof b === 'object' && typeof (b as { batch?: unknown }).batch === 'function') {
    const obj = b as { batch(items: unknown[]): unknown };
    return (items) => obj.batch(items);
  }
  throw fail('Type', `${op}: batcher must be a function items => batch or an object with batch(items), got ${describe(b)}`);
}

/**
 * Checks what a batcher returned: a Tensor, or an array or plain object holding at least
 * one Tensor. A Promise is accepted only where `allowPromise` (async iteration awaits it).
 * @throws KilnError `Type` naming op, the batch number and what was returned.
 */
export function checkBatch(e: Engine, batch: unknown, op: string, where: string): void {
  if (batch instanceof e.Tensor) return;
  const bad = (what: string) =>
    fail('Type', `${op}: the batcher returned ${what} for ${where}: expected a batch (a Tensor, or an array or object holding Tensors)`);
  if (batch === null || batch === undefined || typeof batch !== 'object') throw bad(describe(batch));
  if (typeof (batch as { then?: unknown }).then === 'function') {
    throw bad('a Promise (an async batcher works only with `for await`)');
  }
  let found = false;
  const seen = new Set<unknown>();
  const walk = (v: unknown, depth: number): void => {
    if (found || depth > 16 || v === null || typeof v !== 'object' || seen.has(v)) return;
    if (v instanceof e.Tensor) {
      found = true;
      return;
    }
    seen.add(v);
    if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else if (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null) Object.values(v).forEach((x) => walk(x, depth + 1));
  };
  walk(batch, 0);
  if (!found) throw bad(`${describe(batch)} with no Tensor in it`);
}

/** Disposes the Tensors of a batch that is dropped (a broken iteration's prefetched batches). */
export function disposeBatch(e: Engine, batch: unknown): void {
  const walk = (v: unknown, depth: number): void => {
    if (depth > 16 || v === null || typeof v !== 'object') return;
    if (v instanceof e.Tensor) {
      if (!v.isDisposed) v.dispose();
      return;
    }
    if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else Object.values(v).forEach((x) => walk(x, depth + 1));
  };
  walk(batch, 0);
}

export { KilnError };
