// Internal: JS data in and out of tensors: nested arrays and typed arrays -> a flat typed
// array of a dtype (fromData), with the positions of ragged rows and bad values named.
import { describe, fail, type DType } from './checks.js';

/** Nested arrays of numbers or booleans (any depth, rectangular). */
export type NestedArray = number | boolean | readonly NestedArray[] | TypedArray;

export type TypedArray =
  | Float32Array | Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array
  | Uint16Array | Uint32Array | Uint8ClampedArray;

/** What `toArray()` returns: nested arrays of numbers (booleans for bool), a scalar for rank 0. */
export type NestedData = number | boolean | NestedData[];

/** What `dataSync()` returns per dtype. */
export interface DataTypeMap {
  float32: Float32Array;
  int32: Int32Array;
  bool: Uint8Array;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** The default dtype of fromData(typedArray). */
export const TYPED_DEFAULT_DTYPE = new Map<unknown, DType>([
  [Float32Array, 'float32'], [Float64Array, 'float32'], [Int32Array, 'int32'],
  [Int16Array, 'int32'], [Int8Array, 'int32'], [Uint8Array, 'int32'], [Uint16Array, 'int32'],
  [Uint32Array, 'int32'], [Uint8ClampedArray, 'int32'],
]);

type Indexable = ArrayLike<unknown>;

function isArrayLike(v: unknown): v is Indexable {
  return Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
}

function posString(path: number[]): string {
  return `data${path.map((i) => `[${i}]`).join('')}`;
}

/** Shape of nested arrays (typed arrays allowed as rows) from the first element of each level. */
export function inferNested(data: unknown): number[] {
  const shape: number[] = [];
  let v = data;
  while (isArrayLike(v)) {
    shape.push(v.length);
    if (v.length === 0) break;
    v = v[0];
  }
  return shape;
}

/**
 * The values of nested arrays of `shape`, row-major, and whether every leaf is a boolean.
 * Throws Shape for ragged rows and Type for non-numeric leaves, naming the position.
 */
export function flattenNested(data: unknown, shape: number[], op: string): { values: number[]; allBool: boolean } {
  let total = 1;
  for (const d of shape) total *= d;
  const out = new Array<number>(total);
  let k = 0;
  let allBool = true;
  const path: number[] = [];
  const rank = shape.length;
  const walk = (v: unknown, depth: number): void => {
    if (depth === rank) {
      if (typeof v === 'number') {
        allBool = false;
        out[k++] = v;
      } else if (typeof v === 'boolean') {
        out[k++] = v ? 1 : 0;
      } else if (isArrayLike(v)) {
        throw fail('Shape', `${op}: ragged nested array: ${posString(path)} is an array, expected a number (the first row nests ${rank} deep)`);
      } else {
        throw fail('Type', `${op}: ${posString(path)} must be a number or a boolean, got ${describe(v)}`);
      }
      return;
    }
    if (!isArrayLike(v)) {
      if (typeof v === 'number' || typeof v === 'boolean') {
        throw fail('Shape', `${op}: ragged nested array: ${posString(path)} is a ${typeof v}, expected an array of length ${shape[depth]} (as ${posString(path.map(() => 0))})`);
      }
      throw fail('Type', `${op}: ${posString(path)} must be an array, a number or a boolean, got ${describe(v)}`);
    }
    if (v.length !== shape[depth]) {
      throw fail('Shape', `${op}: ragged nested array: ${posString(path)} has ${v.length} elements, expected ${shape[depth]} (as ${posString(path.map(() => 0))})`);
    }
    if (ArrayBuffer.isView(v) && depth === rank - 1) {
      allBool = false;
      for (let i = 0; i < v.length; i++) out[k++] = Number(v[i]);
      return;
    }
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      walk(v[i], depth + 1);
      path.pop();
    }
  };
  try {
    walk(data, 0);
  } catch (e) {
    // one level of recursion per dim: data nested thousands deep overflows the JS stack
    // before the engine's rank check could name it
    if (e instanceof RangeError) {
      throw fail('Limit', `${op}: data nests ${rank} arrays deep, more than JavaScript's call stack allows (a tensor has at most 8 dims)`);
    }
    throw e;
  }
  return { values: out, allBool: allBool && total > 0 };
}

/** values (array or typed array of numbers) -> the typed array of dtype, range-checked. */
export function toTypedArray(values: ArrayLike<number>, dtype: DType, op: string): Float32Array | Int32Array | Uint8Array {
  const n = values.length;
  if (dtype === 'float32') {
    return values instanceof Float32Array ? values : Float32Array.from(values);
  }
  if (dtype === 'bool') {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = values[i] !== 0 ? 1 : 0;
    return out;
  }
  if (values instanceof Int32Array) return values;
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = Number(values[i]);
    if (!(v >= INT32_MIN && v < INT32_MAX + 1)) {
      throw fail('Value', `${op}: value ${v} at flat index ${i} does not fit in int32`);
    }
    out[i] = Math.trunc(v);
  }
  return out;
}
