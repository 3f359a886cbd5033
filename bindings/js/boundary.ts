// Internal: the JS half of the engine's error boundary (the C++ half: `guarded` in
// bindings/js_tensor.hpp). Every Embind entry point of the raw module (its functions and
// the methods of its classes) is replaced, once per instance, by a wrapper that
//   1. calls the entry point; a C++ error never unwinds out of wasm: `guarded` catches it,
//      stores {code, message} in the calling thread's error slot and returns a placeholder;
//   2. checks the slot (`_kiln_error_pending`, a plain wasm export); if set, deletes the
//      placeholder, takes the record (`takeError`) and throws the KilnError from JS;
//   3. if anything is thrown anyway (Embind's own BindingError / TypeError for a deleted
//      handle or a wrong argument, a wasm trap such as `RuntimeError: divide by zero`, a
//      JS exception from inside wasm), restores the shadow stack pointer saved before the
//      call (no wasm code restores it when an exception leaves an export under
//      -fwasm-exceptions, TOOLCHAIN.md "Exceptions and the stack") and rethrows the error
//      as a KilnError: `Disposed` for a deleted handle, `Type` for a rejected argument,
//      `Internal` for anything else (a bug).
// So no error, of any kind, costs the instance stack or heap, and every error leaving the
// engine is a KilnError.
// The engine is not re-entrant: while an entry point runs, the only JS it calls is the
// runtime's (Object.keys, Array.isArray, ...) and, reading an argument, a user's getter or
// Proxy trap. A call into the engine from there, or freeing one of its objects (Embind
// `delete`, reached by every dispose()), would pull memory from under the running call: it is
// refused with KilnError `Busy` and nothing changes (engineBusy, the `delete` guard below).
// A typed array argument reaches the engine as a fresh view of its memory (ownView), so no
// property of the user's object (an own `length` getter) is read inside the call. The stack pointer is per thread: the wrapper saves and restores
// the calling thread's (the only one that calls into the engine from JS).
import { KilnError, type ErrorCode } from './errors.js';
import type { RawModule } from './raw.js';

/** What the boundary needs of the Emscripten module beyond the Embind API. */
interface BoundaryModule {
  stackSave(): number;
  stackRestore(sp: number): void;
  _kiln_error_pending(): number;
  takeError(): { code: ErrorCode; message: string } | null;
}

type AnyFn = (...args: unknown[]) => unknown;

/** Embind's own members of every class prototype: not engine entry points. */
const EMBIND_BUILTINS = new Set([
  'constructor', 'delete', 'isDeleted', 'clone', 'isAliasOf', 'deleteLater',
]);

/** Names of the raw module that are not Embind entry points (already safe, or the boundary's own). */
const NOT_WRAPPED = new Set(['takeError', 'KilnError']);

/** Marks a wrapper (tests/js/error_boundary.test.mjs checks every entry point has one). */
const WRAPPED = 'kilnBoundary';

/**
 * An error thrown past the boundary -> the KilnError the user sees. `name` is the raw
 * entry point's name, for messages of errors that the package's own checks should have
 * caught first (each such case is a bug; the message says which call).
 */
export function toKilnError(err: unknown, name: string): KilnError {
  if (err instanceof KilnError) return err;
  const e = err as { name?: unknown; message?: unknown } | null;
  const errName = typeof e?.name === 'string' ? e.name : typeof err;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  if (errName === 'BindingError' && /deleted object|already deleted|scheduled for deletion/.test(text)) {
    return new KilnError('Disposed', `${name}: an object passed to the engine was disposed (${text})`);
  }
  if (errName === 'BindingError' || errName === 'TypeError') {
    return new KilnError('Type', `${name}: the engine rejected an argument: ${text}`);
  }
  if (errName === 'RangeError' && /call stack/i.test(text)) {
    return new KilnError('Limit', `${name}: the JavaScript call stack overflowed (${text})`);
  }
  return new KilnError('Internal', `${name}: ${errName}: ${text} (a bug in the engine: please report it)`);
}

/** The entry point running now (on this JS thread, in any instance), or null. */
let running: string | null = null;

/**
 * Throws KilnError `Busy` when called while an entry point of the engine runs, i.e. from a
 * getter or Proxy trap of one of its arguments: `op` (a dispose, an op) would change what the
 * running call holds. Package code calls it before changing any state of its own.
 * @throws KilnError `Busy` "<op>: called while the engine runs <entry point> (from a getter or
 *   Proxy of its argument); the engine is not re-entrant"
 */
export function engineBusy(op: string): void {
  if (running !== null) {
    // The entry point under the name a user knows: tReshape -> reshape, RawLearner.trainBatch -> Learner.trainBatch.
    const entry = running.replace(/^Raw/, '').replace(/^t([A-Z])/, (_m, c: string) => c.toLowerCase());
    throw new KilnError('Busy', `${op}: called while the engine runs ${entry} (from a getter or Proxy of its argument); the engine is not re-entrant`);
  }
}

// The typed arrays' own accessors, taken before any user code runs: what a typed array is
// and where its memory lies, read from its internal slots, not from properties a user can
// shadow (an own `length` getter on a Float32Array would otherwise run inside the engine
// and lie to it about the size).
const TYPED_ARRAY_PROTO = Object.getPrototypeOf(Int8Array.prototype) as object;
const intrinsicGetter = (key: PropertyKey) => Object.getOwnPropertyDescriptor(TYPED_ARRAY_PROTO, key)?.get as (this: unknown) => unknown;
const typedArrayName = intrinsicGetter(Symbol.toStringTag);
const typedArrayBuffer = intrinsicGetter('buffer');
const typedArrayOffset = intrinsicGetter('byteOffset');
const typedArrayLength = intrinsicGetter('length');
type TypedArrayCtor = new (buffer: ArrayBufferLike, byteOffset: number, length: number) => ArrayBufferView;
const TYPED_ARRAYS = new Map<unknown, TypedArrayCtor>(
  ([Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array,
    Float64Array, BigInt64Array, BigUint64Array] as unknown as TypedArrayCtor[]).map((c) => [(c as { name: string }).name, c]));

/**
 * A fresh view of the same type over the same memory as the typed array `v` (no copy), with
 * no properties but its own: what an entry point gets instead of the user's object. A
 * DataView is returned as it is.
 */
export function ownView(v: ArrayBufferView): ArrayBufferView {
  const Ctor = TYPED_ARRAYS.get(typedArrayName.call(v));
  if (Ctor === undefined) return v;
  const buffer = typedArrayBuffer.call(v) as ArrayBufferLike;
  const length = typedArrayLength.call(v) as number;
  // A detached buffer reads as length 0 (and a view of it cannot be made): an empty array.
  return length === 0 ? new Ctor(new ArrayBuffer(0), 0, 0) : new Ctor(buffer, typedArrayOffset.call(v) as number, length);
}

/** The wrapper of one entry point (a function of the module or a method of a class). */
function wrap(fn: AnyFn, name: string, m: BoundaryModule): AnyFn {
  const wrapped = function (this: unknown, ...args: unknown[]): unknown {
    engineBusy(name);
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (ArrayBuffer.isView(a)) args[i] = ownView(a);
    }
    const sp = m.stackSave();
    let result: unknown;
    running = name;
    try {
      result = fn.apply(this, args);
    } catch (err) {
      running = null;
      m.stackRestore(sp);
      // A JS error thrown inside wasm may have left a record behind: drop it.
      if (m._kiln_error_pending() !== 0) m.takeError();
      throw toKilnError(err, name);
    }
    running = null;
    if (m._kiln_error_pending() !== 0) {
      discard(result);
      const record = m.takeError();
      if (record !== null) throw new KilnError(record.code, jsNumbers(record.message));
    }
    return result;
  };
  Object.defineProperty(wrapped, 'name', { value: name });
  Object.defineProperty(wrapped, WRAPPED, { value: true });
  return wrapped;
}

/**
 * C++ prints non-finite doubles as `nan`, `inf`, `-inf`; a JS user reads NaN, Infinity,
 * -Infinity (what they passed). Standalone tokens only (`info`, `nanos` stay).
 */
export function jsNumbers(message: string): string {
  return message
    .replace(/(?<![\w.])-?nan(?![\w])/g, 'NaN')
    .replace(/(?<![\w.])(-?)inf(?![\w])/g, '$1Infinity');
}

/** Frees the placeholder a failed entry point returned (an Embind handle, or arrays of them). */
function discard(v: unknown): void {
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v) discard(x);
    return;
  }
  const h = v as { delete?: unknown; isDeleted?: unknown };
  if (typeof h.delete === 'function' && typeof h.isDeleted === 'function') {
    try {
      if (!(h.isDeleted as () => boolean)()) (h.delete as () => void)();
    } catch {
      /* not ours to free */
    }
  }
}

/** Whether v is an Embind class constructor (its prototype has Embind's isAliasOf). */
function isEmbindClass(v: unknown): v is { prototype: Record<string, unknown>; name: string } {
  return typeof v === 'function' && typeof (v as { prototype?: { isAliasOf?: unknown } }).prototype?.isAliasOf === 'function';
}

/**
 * Wraps every Embind entry point of `raw` (its Embind functions, and the methods of its
 * Embind classes) in the boundary. Idempotent.
 */
export function installBoundary(raw: RawModule): void {
  const m = raw as unknown as BoundaryModule & Record<string, unknown>;
  for (const need of ['stackSave', 'stackRestore', '_kiln_error_pending', 'takeError'] as const) {
    if (typeof m[need] !== 'function') {
      throw new KilnError('Internal', `kiln: the engine build lacks ${need} (rebuild dist/ with scripts/build.sh)`);
    }
  }
  const names = Object.keys(m);
  for (const name of names) {
    const v = m[name];
    if (isEmbindClass(v)) {
      const proto = v.prototype;
      // Embind's delete/deleteLater live on its root ClassHandle.prototype, reachable from any
      // handle through the prototype chain: guarded where they are defined, not only here.
      for (let p: Record<string, unknown> | null = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        for (const name of ['delete', 'deleteLater']) {
          const f = Object.prototype.hasOwnProperty.call(p, name) ? (p[name] as AnyFn & Record<string, boolean>) : undefined;
          if (typeof f === 'function' && !f[WRAPPED]) p[name] = guardDelete(f, `Embind ${name}`);
        }
      }
      for (const method of Object.getOwnPropertyNames(proto)) {
        if (EMBIND_BUILTINS.has(method)) continue;
        const f = proto[method];
        if (typeof f !== 'function' || (f as unknown as Record<string, boolean>)[WRAPPED]) continue;
        proto[method] = wrap(f as AnyFn, `${v.name}.${method}`, m);
      }
      continue;
    }
    if (typeof v !== 'function' || NOT_WRAPPED.has(name)) continue;
    if (!isEmbindFunction(v)) continue;
    if ((v as unknown as Record<string, boolean>)[WRAPPED]) continue;
    m[name] = wrap(v as AnyFn, name, m);
  }
}

/** Embind's `delete` (or `deleteLater`), refused while an entry point runs (engineBusy). */
function guardDelete(del: AnyFn, name: string): AnyFn {
  const guarded = function (this: unknown, ...args: unknown[]): unknown {
    engineBusy(name);
    return del.apply(this, args);
  };
  Object.defineProperty(guarded, WRAPPED, { value: true });
  return guarded;
}

/** Embind's free functions carry `argCount` (set when exposed) or an overload table. */
function isEmbindFunction(v: unknown): boolean {
  const f = v as { argCount?: unknown; overloadTable?: unknown };
  return 'argCount' in (f as object) || f.overloadTable !== undefined;
}
