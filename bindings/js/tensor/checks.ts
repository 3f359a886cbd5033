// Internal: the argument checks of the package's JS layer. Each throws KilnError `Type`
// naming the op and the argument, and describes what it was given (`the string "x"`,
// `an array`, `a Float64Array`, ...). Dims are checked by the engine (check::dim).
import { KilnError, type ErrorCode } from '../errors.js';
import type { EngineValue } from '../raw.js';

export type { EngineValue };

/** Element types: float32 (kind Float), int32 (kind Int), bool (kind Bool, 0/1). */
export type DType = 'float32' | 'int32' | 'bool';

/** The engine's dtype codes (bindings/js_tensor.cpp): the index in this list. */
/**
 * The dtypes by engine code (`DTYPES[code]`) and their codes by name: filled from the engine's
 * op table at init (`installDtypes`; C++ kiln::DType), never copied by hand.
 */
export const DTYPES: DType[] = [];
const DTYPE_CODE: Record<string, number> = Object.create(null) as Record<string, number>;

/** Records the engine's dtype codes (bindings/op_table.cpp's `dtypes`); the same for every instance. */
export function installDtypes(dtypes: readonly { code: number; name: string }[]): void {
  for (const { code, name } of dtypes) {
    DTYPES[code] = name as DType;
    DTYPE_CODE[name] = code;
  }
}

/** A KilnError to throw. */
export function fail(code: ErrorCode, message: string): KilnError {
  return new KilnError(code, message);
}

/** "a Tensor", "an InMemDataset", "an Int32Array", "a Uint8Array": the article of a class name. */
function article(name: string): string {
  return /^[AEIOaeio]/.test(name) ? `an ${name}` : `a ${name}`;
}

/** How a value reads in a message: `the number 3`, `an array`, `a Tensor`, ... */
export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (ArrayBuffer.isView(v)) return article(v.constructor.name);
  switch (typeof v) {
    case 'string': return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v)}`;
    case 'number': return `the number ${v}`;
    case 'boolean': return `the boolean ${v}`;
    case 'undefined': return 'undefined';
    case 'bigint': return `the bigint ${v}n`;
    case 'function': return 'a function';
    case 'symbol': return 'a symbol';
    default: {
      const name = (v as { constructor?: { name?: string } }).constructor?.name;
      return name && name !== 'Object' ? article(name) : 'an object';
    }
  }
}

export function checkNumber(v: unknown, op: string, what: string): number {
  if (typeof v !== 'number') throw fail('Type', `${op}: ${what} must be a number, got ${describe(v)}`);
  return v;
}

export function checkInt(v: unknown, op: string, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw fail('Type', `${op}: ${what} must be an integer, got ${describe(v)}`);
  }
  return v;
}

export function checkBool(v: unknown, op: string, what: string): boolean {
  if (typeof v !== 'boolean') throw fail('Type', `${op}: ${what} must be a boolean, got ${describe(v)}`);
  return v;
}

export function checkIntArray(v: unknown, op: string, what: string): number[] {
  if (!Array.isArray(v)) throw fail('Type', `${op}: ${what} must be an array of integers, got ${describe(v)}`);
  const out: number[] = [];
  for (let i = 0, n = v.length; i < n; i++) {
    const x: unknown = v[i];
    if (typeof x !== 'number' || !Number.isSafeInteger(x)) {
      throw fail('Type', `${op}: ${what}[${i}] must be an integer, got ${describe(x)}`);
    }
    out.push(x);
  }
  return out;
}

export function checkShape(v: unknown, op: string): number[] {
  if (!Array.isArray(v)) throw fail('Type', `${op}: shape must be an array of integers, got ${describe(v)}`);
  const out: number[] = [];
  for (let i = 0, n = v.length; i < n; i++) {
    const d: unknown = v[i];
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw fail('Type', `${op}: shape[${i}] must be an integer >= 0, got ${describe(d)}`);
    }
    out.push(d);
  }
  return out;
}

/** An options object ({} for undefined); `Type` for anything but a plain object. */
export function checkOptions<T extends object = Record<string, unknown>>(v: unknown, op: string): Partial<T> {
  if (v === undefined) return {};
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw fail('Type', `${op}: options must be an object, got ${describe(v)}`);
  }
  return v as Partial<T>;
}

/** The engine's code of a dtype name ('float32', 'int32', 'bool'); `Type` for anything else. */
export function dtypeCode(dtype: unknown, op: string): number {
  const code = typeof dtype === 'string' ? DTYPE_CODE[dtype] : undefined;
  if (code === undefined || !Object.prototype.hasOwnProperty.call(DTYPE_CODE, dtype as string)) {
    throw fail('Type', `${op}: dtype must be "float32", "int32" or "bool", got ${describe(dtype)}`);
  }
  return code;
}

/** Scalars as operands: numbers, or booleans (as 0/1). */
export function isScalar(v: unknown): v is number | boolean {
  return typeof v === 'number' || typeof v === 'boolean';
}

/** What installTensor hands the other parts of the package (nn.ts, train.ts). */
export const checks = {
  describe, checkNumber, checkInt, checkBool, checkIntArray, checkShape, checkOptions, dtypeCode,
};

/**
 * A config or spec for the engine: engineJson's checks, then the plain tree JSON.parse makes of
 * that text (so toJSON, undefined members and the rest of JSON.stringify's rules apply as before),
 * deep-frozen: no user code (a getter, a Proxy) runs when the engine reads it.
 * @throws KilnError as engineJson.
 */
export function engineValue(value: unknown, op: string): EngineValue {
  return deepFreeze(JSON.parse(engineJson(value, op)) as EngineValue);
}

/** Freezes a JSON tree: a spec kept for later calls (Loss._spec, Schedule._spec) stays as checked. */
function deepFreeze(v: EngineValue): EngineValue {
  if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** A lone UTF-16 surrogate: no Unicode text, so no UTF-8 for the engine (`u` pairs the others). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * JSON.stringify for the engine's configs and specs. JSON has no NaN or ±Infinity (stringify
 * writes null, which the engine would report as "got null"), so a non-finite number is a
 * `Config` error naming its field (camelCase) and value instead; a BigInt, a function or a
 * symbol (which stringify throws on or drops silently) is a `Type` error naming its field.
 * @throws KilnError `Config` "<op>: <field>: expected a finite number, got NaN", `Config` for a
 *   string or key holding a lone UTF-16 surrogate (JSON text of it is no UTF-8), `Type` for a
 *   BigInt/function/symbol, `Config` for an object that contains itself, `Limit` for one
 *   nested deeper than JavaScript's call stack allows.
 */
export function engineJson(value: unknown, op: string): string {
  const fieldOf = (key: string): string =>
    /^\d+$/.test(key) ? `element ${key}` : key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  try {
    return JSON.stringify(value, function replacer(key: string, v: unknown): unknown {
      if (typeof v === 'number' && !Number.isFinite(v)) {
        throw fail('Config', `${op}: ${fieldOf(key)}: expected a finite number, got ${v}`);
      }
      if (LONE_SURROGATE.test(key) || (typeof v === 'string' && LONE_SURROGATE.test(v))) {
        const what = key === '' ? 'the config' : fieldOf(key);
        throw fail('Config', `${op}: ${what}: a string holds a lone UTF-16 surrogate (not valid Unicode text)`);
      }
      if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') {
        const what = key === '' ? 'the config' : fieldOf(key);
        throw fail('Type', `${op}: ${what}: expected a number, string, boolean, array or object, got ${describe(v)}`);
      }
      return v;
    });
  } catch (e) {
    if (e instanceof KilnError) throw e;
    if (e instanceof RangeError) {
      throw fail('Limit', `${op}: the config is nested too deeply for JavaScript's call stack (the engine allows 64 levels)`);
    }
    if (e instanceof TypeError) throw fail('Config', `${op}: the config contains itself (a circular structure)`);
    throw e;
  }
}
