// The engine-free half of kiln.data's default batcher (as PyTorch's default_collate): a
// list of items of one structure -> one structure of flat typed arrays with shapes
// (`PlainTensor`s). Workers run it; the main thread turns the leaves into tensors
// (batcher.ts).
import { describe, fail, type DType } from '../tensor/checks.js';

/** A leaf of a collated batch: a tensor's values, not yet in the engine. */
export interface PlainTensor {
  kilnPlainTensor: true;
  dtype: DType;
  shape: number[];
  data: Float32Array | Int32Array | Uint8Array;
}

/** A collated batch: PlainTensors in the items' structure (arrays and plain objects). */
export type PlainBatch = PlainTensor | PlainBatch[] | { [key: string]: PlainBatch };

/**
 * Options of the default batcher, per field: one value for every field, or an object
 * keyed by the field's path (`'x'`, `'y'`, `'0'` for tuple items, `'a.b'` for nested
 * objects, `''` for bare items).
 */
export interface CollateOptions {
  /** The dtype of a field's tensor. Default: float32 for numbers and float typed arrays, int32 for integer typed arrays, bool for booleans. */
  dtype?: DType | Record<string, DType>;
  /** The per-item shape of a field (its values reshaped; default `[]` for numbers, `[length]` for typed arrays). */
  shape?: readonly number[] | Record<string, readonly number[]>;
}

const DTYPE_NAMES = new Set(['float32', 'int32', 'bool']);

function isTyped(v: unknown): v is ArrayLike<number> & ArrayBufferView {
  return ArrayBuffer.isView(v) && !(v instanceof DataView);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const p = Object.getPrototypeOf(v);
  return p === Object.prototype || p === null;
}

/** Checks options once (Type/Value errors naming op). @internal */
export function checkCollateOptions(o: unknown, op: string): CollateOptions {
  if (o === undefined) return {};
  if (!isPlainObject(o)) throw fail('Type', `${op}: options must be an object, got ${describe(o)}`);
  for (const k of Object.keys(o)) {
    if (k !== 'dtype' && k !== 'shape') throw fail('Config', `${op}: unknown option "${k}" (options: dtype, shape)`);
  }
  const { dtype, shape } = o as CollateOptions;
  const dtypes = typeof dtype === 'string' ? { '': dtype } : dtype;
  if (dtypes !== undefined) {
    if (!isPlainObject(dtypes)) throw fail('Type', `${op}: dtype must be a dtype name or an object of them, got ${describe(dtype)}`);
    for (const [k, v] of Object.entries(dtypes)) {
      if (!DTYPE_NAMES.has(v as string)) throw fail('Value', `${op}: dtype${k ? `.${k}` : ''} must be 'float32', 'int32' or 'bool', got ${describe(v)}`);
    }
  }
  if (shape !== undefined) {
    const shapes = Array.isArray(shape) ? { '': shape } : shape;
    if (!isPlainObject(shapes)) throw fail('Type', `${op}: shape must be an array of dims or an object of them, got ${describe(shape)}`);
    for (const [k, v] of Object.entries(shapes)) {
      if (!Array.isArray(v) || !v.every((d) => Number.isSafeInteger(d) && d >= 0)) {
        throw fail('Type', `${op}: shape${k ? `.${k}` : ''} must be an array of non-negative integers, got ${describe(v)}`);
      }
    }
  }
  return o as CollateOptions;
}

function pick<V>(opt: V | Record<string, V> | undefined, path: string, isValue: (v: unknown) => boolean): V | undefined {
  if (opt === undefined) return undefined;
  if (isValue(opt)) return opt as V;
  return (opt as Record<string, V>)[path];
}

const typedDtype = (v: ArrayBufferView): DType =>
  v instanceof Float32Array || v instanceof Float64Array ? 'float32' : 'int32';

/** Where a field is, for messages: `items[3].x`. */
const where = (i: number, path: string): string => `items[${i}]${path === '' ? '' : `.${path}`}`;

/**
 * @internal
 * Collates `items` (one structure: numbers, booleans, typed arrays, arrays as tuples, plain
 * objects) into a PlainBatch: a field of n numbers -> `[n]`, of n typed arrays of length k
 * -> `[n, k]` (or `[n, ...shape]`). `isLeaf` lets the caller keep other leaves (Tensors) as
 * they are: they are returned in `others` per path for the caller to stack.
 * @throws KilnError `Type` naming the item and field for a value of another kind than
 *   items[0]'s, `Shape` for typed arrays of different lengths or a shape that does not fit,
 *   `Value` for an empty list.
 */
export function collate(items: readonly unknown[], options: CollateOptions, op: string,
  isLeaf: (v: unknown) => boolean = () => false): PlainBatch | unknown {
  if (!Array.isArray(items) || items.length === 0) throw fail('Value', `${op}: expected a non-empty array of items, got ${describe(items)}`);
  return collateAt(items, '', options, op, isLeaf, 0);
}

function collateAt(items: readonly unknown[], path: string, options: CollateOptions, op: string,
  isLeaf: (v: unknown) => boolean, depth: number): unknown {
  if (depth > 32) throw fail('Limit', `${op}: items nest deeper than 32 levels at ${where(0, path)}`);
  const first = items[0];
  const n = items.length;
  const child = (key: string) => (path === '' ? key : `${path}.${key}`);
  if (isLeaf(first)) {
    items.forEach((v, i) => {
      if (!isLeaf(v)) throw fail('Type', `${op}: ${where(i, path)} is ${describe(v)} but ${where(0, path)} is ${describe(first)}`);
    });
    return { kilnLeaf: true, path, values: items };
  }
  if (typeof first === 'number' || typeof first === 'boolean' || isTyped(first)) {
    const kind = typeof first === 'number' ? 'number' : typeof first === 'boolean' ? 'boolean' : 'typed';
    const width = kind === 'typed' ? (first as ArrayLike<number>).length : 1;
    const dtype = pick(options.dtype, path, (v) => typeof v === 'string') ??
      (kind === 'boolean' ? 'bool' : kind === 'typed' ? typedDtype(first as ArrayBufferView) : 'float32');
    const itemShape = pick(options.shape, path, Array.isArray) ?? (kind === 'typed' ? [width] : []);
    const size = itemShape.reduce((a, b) => a * b, 1);
    if (size !== width) {
      throw fail('Shape', `${op}: ${where(0, path)} has ${width} value${width === 1 ? '' : 's'}, shape [${itemShape.join(', ')}] needs ${size}`);
    }
    const data = dtype === 'float32' ? new Float32Array(n * width) : dtype === 'int32' ? new Int32Array(n * width) : new Uint8Array(n * width);
    for (let i = 0; i < n; i++) {
      const v = items[i];
      if (kind === 'typed') {
        if (!isTyped(v)) throw fail('Type', `${op}: ${where(i, path)} is ${describe(v)} but ${where(0, path)} is ${describe(first)}`);
        const len = (v as ArrayLike<number>).length;
        if (len !== width) throw fail('Shape', `${op}: ${where(i, path)} has ${len} values but ${where(0, path)} has ${width}`);
        if (dtype === 'bool') {
          for (let k = 0; k < width; k++) data[i * width + k] = (v as ArrayLike<number>)[k] ? 1 : 0;
        } else {
          data.set(v as ArrayLike<number>, i * width);
        }
      } else {
        if (typeof v !== typeof first) throw fail('Type', `${op}: ${where(i, path)} is ${describe(v)} but ${where(0, path)} is ${describe(first)}`);
        data[i] = dtype === 'bool' ? (v ? 1 : 0) : Number(v);
      }
    }
    if (dtype === 'int32' && kind !== 'typed') {
      for (let i = 0; i < n; i++) {
        const v = items[i] as number;
        if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) {
          throw fail('Value', `${op}: ${where(i, path)} = ${String(v)} is not an int32 (an integer in [-2^31, 2^31 - 1])`);
        }
      }
    }
    const leaf: PlainTensor = { kilnPlainTensor: true, dtype, shape: [n, ...itemShape], data };
    return leaf;
  }
  if (Array.isArray(first)) {
    const len = first.length;
    items.forEach((v, i) => {
      if (!Array.isArray(v)) throw fail('Type', `${op}: ${where(i, path)} is ${describe(v)} but ${where(0, path)} is an array`);
      if (v.length !== len) throw fail('Shape', `${op}: ${where(i, path)} has ${v.length} elements but ${where(0, path)} has ${len}`);
    });
    const out: unknown[] = [];
    for (let k = 0; k < len; k++) out.push(collateAt(items.map((v) => (v as unknown[])[k]), child(String(k)), options, op, isLeaf, depth + 1));
    return out;
  }
  if (isPlainObject(first)) {
    const keys = Object.keys(first);
    items.forEach((v, i) => {
      if (!isPlainObject(v)) throw fail('Type', `${op}: ${where(i, path)} is ${describe(v)} but ${where(0, path)} is an object`);
      const ks = Object.keys(v);
      if (ks.length !== keys.length || !keys.every((k) => k in v)) {
        throw fail('Shape', `${op}: ${where(i, path)} has keys [${ks.join(', ')}] but ${where(0, path)} has [${keys.join(', ')}]`);
      }
    });
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = collateAt(items.map((v) => (v as Record<string, unknown>)[k]), child(k), options, op, isLeaf, depth + 1);
    return out;
  }
  throw fail('Type', `${op}: ${where(0, path)} is ${describe(first)}: the default batcher stacks numbers, booleans, typed arrays ` +
    'and Tensors, in arrays and plain objects (pass a batcher function for other items)');
}

/** Whether v is a PlainTensor. @internal */
export function isPlainTensor(v: unknown): v is PlainTensor {
  return v !== null && typeof v === 'object' && (v as { kilnPlainTensor?: unknown }).kilnPlainTensor === true;
}
