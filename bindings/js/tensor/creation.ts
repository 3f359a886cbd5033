// Tensor factories: fromData, zeros, ones, full, random, arange, eye, the *Like forms,
// cat and stack (static methods of kiln.Tensor).
import { camelErrors } from '../nn.js';
import {
  checkInt, checkNumber, checkOptions, checkShape, describe, dtypeCode, fail, isScalar, type DType,
} from './checks.js';
import { flattenNested, inferNested, toTypedArray, TYPED_DEFAULT_DTYPE, type NestedArray } from './data.js';
import type { Engine } from './engine.js';
import { TensorCore } from './core.js';
import type { Tensor } from './tensor.js';

export interface DTypeOption {
  /** Element type of the result (default per factory). */
  dtype?: DType;
}

export interface FromDataOptions extends DTypeOption {
  /**
   * The dims; the data (flat or nested) must hold their product of values. Default: the
   * nesting of `data` (`[]` for a number, `[length]` for a typed array).
   */
  shape?: readonly number[];
}

/**
 * Distribution of `Tensor.random` (Burn's `Distribution`). Omitted: uniform on [0, 1).
 * int32 tensors draw integers in [low, high).
 */
export type Distribution =
  | { uniform: readonly [number, number] }
  | { normal: readonly [number, number] }
  | { bernoulli: number };

/** The engine of a static method's `this` (the per-instance class). */
function engineOfClass(cls: unknown): Engine {
  return (cls as { _e: Engine })._e;
}

/** full() under the name of the factory that called it. */
function full(e: Engine, shape: unknown, value: unknown, options: unknown, opName: string): Tensor {
  const opts = checkOptions<DTypeOption>(options, opName);
  const dims = checkShape(shape, opName);
  if (!isScalar(value)) throw fail('Type', `${opName}: value must be a number or a boolean, got ${describe(value)}`);
  const dtype = opts.dtype ?? (typeof value === 'boolean' ? 'bool' : 'float32');
  return e.wrap(e.raw.tFull(dims, Number(value), dtypeCode(dtype, opName), opName));
}

/** zerosLike / onesLike / fullLike. */
function fullLike(e: Engine, t: unknown, value: unknown, options: unknown, opName: string): Tensor {
  const opts = checkOptions<DTypeOption>(options, opName);
  e.unwrap(t, opName);
  const like = t as Tensor;
  return full(e, like.shape, value, { dtype: opts.dtype ?? like.dtype }, opName);
}

export class TensorCreation extends TensorCore {
  /**
   * A tensor from nested arrays (`[[1, 2], [3, 4]]` -> [2, 2]), a number (rank 0), or a
   * typed array (+ `shape`). Default dtype: bool if every value is a boolean, int32 for
   * Int8/16/32 and Uint8/16/32 typed arrays, else float32. int32 conversion truncates toward zero.
   * @throws KilnError `Shape` for ragged rows (naming the position, `data[1]`) or a data
   *   length that does not match `shape`; `Type` for a non-numeric value (naming its
   *   position) or bad options; `Value` for a value that does not fit in int32.
   */
  static fromData(data: NestedArray, options?: FromDataOptions): Tensor {
    const e = engineOfClass(this);
    const op = 'fromData';
    const opts = checkOptions<FromDataOptions>(options, op);
    if (opts.dtype !== undefined) dtypeCode(opts.dtype, op);
    const givenShape = opts.shape === undefined ? undefined : checkShape(opts.shape, op);
    let values: ArrayLike<number>;
    let shape: readonly number[];
    let dtype = opts.dtype;
    if (typeof data === 'number' || typeof data === 'boolean') {
      values = [Number(data)];
      shape = [];
      dtype ??= typeof data === 'boolean' ? 'bool' : 'float32';
    } else if (ArrayBuffer.isView(data) && !(data instanceof DataView)) {
      const def = TYPED_DEFAULT_DTYPE.get(data.constructor);
      if (def === undefined) {
        throw fail('Type', `${op}: ${data.constructor.name} is not supported (use Float32Array, Int32Array, Uint8Array, ...)`);
      }
      values = data as ArrayLike<number>;
      shape = [(data as ArrayLike<number>).length];
      dtype ??= def;
    } else if (Array.isArray(data)) {
      const dims = inferNested(data);
      const flat = flattenNested(data, dims, op);
      shape = dims;
      values = flat.values;
      dtype ??= flat.allBool ? 'bool' : 'float32';
    } else {
      throw fail('Type', `${op}: data must be a number, a boolean, a (nested) array or a typed array, got ${describe(data)}`);
    }
    if (givenShape !== undefined) {
      const n = givenShape.reduce((a, b) => a * b, 1);
      if (n !== values.length) {
        throw fail('Shape', `${op}: data has ${values.length} values, shape [${givenShape.join(', ')}] needs ${n}`);
      }
      shape = givenShape;
    }
    return e.wrap(e.raw.tFromTypedArray(toTypedArray(values, dtype, op), shape, dtypeCode(dtype, op)));
  }

  /** Zeros of `shape` (default float32). @throws `Type` for a bad shape; `Limit` past 2^31 - 1 elements; `OutOfMemory`. */
  static zeros(shape: readonly number[], options?: DTypeOption): Tensor {
    return full(engineOfClass(this), shape, 0, options, 'zeros');
  }

  /** Ones of `shape` (default float32). Errors as zeros. */
  static ones(shape: readonly number[], options?: DTypeOption): Tensor {
    return full(engineOfClass(this), shape, 1, options, 'ones');
  }

  /** Filled with value (dtype: bool for a boolean value, else float32 unless given). */
  static full(shape: readonly number[], value: number | boolean, options?: DTypeOption): Tensor {
    return full(engineOfClass(this), shape, value, options, 'full');
  }

  /**
   * Random values: uniform [0, 1) by default, `{uniform: [a, b]}`, `{normal: [mean, std]}`,
   * `{bernoulli: p}`. `seed` reseeds the engine's generator first (kiln.seed); the same
   * seed gives the same values natively and in WebAssembly.
   * @throws `Value` for a bad distribution (low >= high, std < 0, p outside [0, 1]).
   */
  static random(shape: readonly number[], distribution?: Distribution, options?: DTypeOption & { seed?: number }): Tensor {
    const e = engineOfClass(this);
    const op = 'random';
    const opts = checkOptions<DTypeOption & { seed?: number }>(options, op);
    const dims = checkShape(shape, op);
    const dtype = opts.dtype ?? 'float32';
    const code = dtypeCode(dtype, op);
    if (opts.seed !== undefined) e.raw.seed(checkInt(opts.seed, 'seed', 'seed'));
    let kind = 0;
    let a = 0;
    let b = 1;
    const d = distribution as unknown;
    if (d === undefined || d === null || d === 'default') {
      kind = 0;
    } else if (typeof d === 'object' && !Array.isArray(d) && Object.keys(d).length === 1) {
      const dist = d as { uniform?: unknown; normal?: unknown; bernoulli?: unknown };
      if (dist.uniform !== undefined) {
        kind = 1;
        if (!Array.isArray(dist.uniform) || dist.uniform.length !== 2) throw fail('Type', `${op}: uniform must be [low, high], got ${describe(dist.uniform)}`);
        [a, b] = Array.from(dist.uniform as unknown[], (v: unknown, i: number) => checkNumber(v, op, `uniform[${i}]`));
      } else if (dist.normal !== undefined) {
        kind = 2;
        if (!Array.isArray(dist.normal) || dist.normal.length !== 2) throw fail('Type', `${op}: normal must be [mean, std], got ${describe(dist.normal)}`);
        [a, b] = Array.from(dist.normal as unknown[], (v: unknown, i: number) => checkNumber(v, op, `normal[${i}]`));
      } else if (dist.bernoulli !== undefined) {
        kind = 3;
        a = checkNumber(dist.bernoulli, op, 'bernoulli');
      } else {
        throw fail('Type', `${op}: distribution must be {uniform: [a, b]}, {normal: [mean, std]} or {bernoulli: p}, got keys ${Object.keys(d).join(', ')}`);
      }
    } else {
      throw fail('Type', `${op}: distribution must be {uniform: [a, b]}, {normal: [mean, std]} or {bernoulli: p}, got ${describe(d)}`);
    }
    return e.wrap(e.raw.tRandom(dims, kind, a, b, code, op));
  }

  /**
   * [start, end) by step (`arange(5)` = [0, 5)): shape [ceil((end - start) / step)];
   * int32 when all arguments are integers, else float32. @throws `Value` for step 0.
   */
  static arange(start: number, end?: number | DTypeOption, step?: number | DTypeOption, options?: DTypeOption): Tensor {
    const e = engineOfClass(this);
    const op = 'arange';
    let s: unknown = start;
    let en: unknown = end;
    let st: unknown = step;
    let o: unknown = options;
    if (typeof st === 'object' && st !== null) {
      o = st;
      st = undefined;
    }
    if (typeof en === 'object' && en !== null) {
      o = en;
      en = undefined;
    }
    const opts = checkOptions<DTypeOption>(o, op);
    checkNumber(s, op, 'start');
    if (en === undefined) {
      en = s;
      s = 0;
    }
    const endN = checkNumber(en, op, 'end');
    const startN = s as number;
    const stepN = st === undefined ? 1 : checkNumber(st, op, 'step');
    const allInt = Number.isInteger(startN) && Number.isInteger(endN) && Number.isInteger(stepN);
    const dtype = opts.dtype ?? (allInt ? 'int32' : 'float32');
    if (stepN === 0) throw fail('Value', `${op}: step must not be 0`);
    return e.wrap(e.raw.tArange(startN, endN, stepN, dtypeCode(dtype, op)));
  }

  /** The n x m identity (m defaults to n), float32 unless given. */
  static eye(n: number, m?: number | DTypeOption, options?: DTypeOption): Tensor {
    const e = engineOfClass(this);
    const op = 'eye';
    let cols: unknown = m;
    let o: unknown = options;
    if (typeof cols === 'object' && cols !== null) {
      o = cols;
      cols = undefined;
    }
    const opts = checkOptions<DTypeOption>(o, op);
    checkInt(n, op, 'n');
    if (cols === undefined) cols = n;
    checkInt(cols, op, 'm');
    return e.wrap(e.raw.tEye(n, cols as number, dtypeCode(opts.dtype ?? 'float32', op)));
  }

  /** Zeros with t's shape (and dtype, unless given). */
  static zerosLike(t: Tensor, options?: DTypeOption): Tensor {
    return fullLike(engineOfClass(this), t, 0, options, 'zerosLike');
  }

  /** Ones with t's shape (and dtype, unless given). */
  static onesLike(t: Tensor, options?: DTypeOption): Tensor {
    return fullLike(engineOfClass(this), t, 1, options, 'onesLike');
  }

  /** `value` with t's shape (and dtype, unless given). */
  static fullLike(t: Tensor, value: number | boolean, options?: DTypeOption): Tensor {
    return fullLike(engineOfClass(this), t, value, options, 'fullLike');
  }

  /**
   * Concatenates along dim (torch.cat): same dtype and rank, same dims outside dim.
   * @throws `Shape` naming the first mismatch; `Value` for an empty list; `DType`/`Rank`.
   */
  static cat(tensors: readonly Tensor[], dim: number = 0): Tensor {
    const e = engineOfClass(this);
    const op = 'cat';
    if (!Array.isArray(tensors)) throw fail('Type', `${op}: tensors must be an array of Tensors, got ${describe(tensors)}`);
    checkInt(dim, op, 'dim');
    const handles = Array.from(tensors, (t, i) => e.unwrap(t, op, `tensors[${i}]`));
    return e.wrap(e.raw.tCat(handles, dim));
  }

  /**
   * Stacks equal shapes along a new dim (torch.stack): n x [a, b] -> [n, a, b] for dim 0.
   * The engine's (kiln/tensor/derived.hpp). @throws `Value` for an empty list; `Shape`
   * naming the first shape that differs; `DType` for mixed dtypes.
   */
  static stack(tensors: readonly Tensor[], dim: number = 0): Tensor {
    const e = engineOfClass(this);
    const op = 'stack';
    if (!Array.isArray(tensors)) throw fail('Type', `${op}: tensors must be an array of Tensors, got ${describe(tensors)}`);
    checkInt(dim, op, 'dim');
    const handles = Array.from(tensors, (t, i) => e.unwrap(t, op, `tensors[${i}]`));
    return e.wrap(camelErrors(() => e.raw.tStack(handles, dim, op)));
  }
}
