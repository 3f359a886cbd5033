// Internal: one engine instance's tensor state (the Emscripten module, live tensors, tidy
// scopes, the op ids read from the engine's op table) and the wrap/unwrap of handles.
// Every Tensor and Gradients of a module instance reaches it as `this._e`: installTensor
// (install.ts) makes per-instance subclasses of Tensor and Gradients (bindClass) whose
// prototype carries the engine, so `x instanceof kiln.Tensor` and the checks below reject a
// tensor of another module instance, as they always did.
import type { RawGradients, RawModule, RawTensor } from '../raw.js';
import { checkIntArray, describe, fail, installDtypes } from './checks.js';
import { toTypedArray } from './data.js';
import type { Gradients } from './gradients.js';
import { OpIds } from './ops.js';
import type { Tensor } from './tensor.js';

/** The token that guards the internal constructors of Tensor and Gradients. */
export const TOKEN: unique symbol = Symbol('kiln.Tensor.internal');

/** Something a tidy() scope owns. */
export interface Scoped {
  _scope: Set<unknown> | null;
  dispose(): void;
}

type Ctor<T> = new (token: never, handle: never) => T;

export class Engine {
  readonly raw: RawModule;
  /** Live JS Tensor objects (created, not disposed). */
  liveTensors = 0;
  /** The open tidy() scopes, innermost last. */
  readonly scopes: Set<Scoped>[] = [];
  /** Opt-in (init({autoDispose: true})): ~3 µs per tensor, more than a small op itself. */
  readonly registry: FinalizationRegistry<RawTensor | RawGradients> | null;
  /** The op ids of ops.def's rows, read from the engine (bindings/op_table.cpp). */
  readonly ops: OpIds;
  /** The per-instance subclasses made by bindClass, by base class. */
  readonly classes = new Map<unknown, unknown>();
  /**
   * The webgpu engine's asynchronous read of a tensor's values (set by index.ts for
   * init({ backend: 'webgpu' })); null on the cpu backend, whose reads are synchronous.
   */
  asyncRead: ((h: RawTensor) => Promise<Float32Array | Int32Array | Uint8Array>) | null = null;
  /** This instance's Tensor and Gradients classes (set by installTensor). */
  Tensor!: Ctor<Tensor>;
  Gradients!: Ctor<Gradients>;

  /**
   * Throws KilnError `State` on the webgpu backend, whose tensors are read asynchronously:
   * "<op>: the webgpu backend reads tensors asynchronously: use <instead>" (`instead`: the
   * asynchronous way, e.g. "`await tensor.data()`"). Nothing on the cpu backend.
   */
  requireSyncReads(op: string, instead: string): void {
    if (this.asyncRead !== null) throw fail('State', `${op}: the webgpu backend reads tensors asynchronously: use ${instead}`);
  }

  /** This instance's subclass of Base (bindClass), for `instanceof` and construction. */
  bound<C>(Base: C): C {
    const c = this.classes.get(Base);
    if (c === undefined) throw fail('Internal', `kiln: ${(Base as { name?: string }).name} is not installed`);
    return c as C;
  }

  constructor(raw: RawModule, options: { autoDispose?: boolean }) {
    this.raw = raw;
    installDtypes(raw.dtypeTable());
    this.ops = new OpIds(raw.opTable());
    this.registry =
      options.autoDispose === true && typeof FinalizationRegistry === 'function'
        ? new FinalizationRegistry<RawTensor | RawGradients>((handle) => {
            // A Tensor the program lost without dispose(): free its memory now.
            try {
              if (!handle.isDeleted()) {
                handle.delete();
                this.liveTensors--;
              }
            } catch {
              /* already gone */
            }
          })
        : null;
  }

  /** Puts obj into the innermost tidy() scope, if any. */
  track(obj: Scoped): void {
    if (this.scopes.length > 0) {
      const scope = this.scopes[this.scopes.length - 1];
      scope.add(obj);
      obj._scope = scope;
    }
  }

  /** RawTensor -> a new JS Tensor that owns it. */
  wrap(handle: RawTensor): Tensor {
    const t = new this.Tensor(TOKEN as never, handle as never);
    this.liveTensors++;
    if (this.registry) this.registry.register(t, handle, t);
    this.track(t);
    return t;
  }

  /**
   * RawTensors the caller owns (an engine call's array) -> Tensors, each wrapped once. If a
   * wrap throws, the Tensors made so far are disposed and the handles not yet wrapped are
   * deleted before the error propagates: nothing leaks.
   */
  wrapAll(handles: readonly RawTensor[]): Tensor[] {
    const out: Tensor[] = [];
    try {
      for (const h of handles) out.push(this.wrap(h));
      return out;
    } catch (err) {
      for (const t of out) t.dispose();
      for (let i = out.length; i < handles.length; i++) handles[i].delete();
      throw err;
    }
  }

  /** [RawTensor, RawTensor] -> [Tensor, Tensor] (as wrapAll). */
  wrapPair(pair: [RawTensor, RawTensor]): [Tensor, Tensor] {
    return this.wrapAll(pair) as [Tensor, Tensor];
  }

  /** Tensor -> its RawTensor; Type for anything else, Disposed after dispose(). */
  unwrap(t: unknown, op: string, what = 'tensor'): RawTensor {
    if (!(t instanceof this.Tensor)) {
      throw fail('Type', `${op}: ${what} must be a kiln Tensor, got ${describe(t)}`);
    }
    const handle = t._h;
    if (handle === null) {
      // what is a word ('x', 'items[0]') or a quoted name ('"fc1.weight"': the tensor "fc1.weight").
      const subject = what.startsWith('"') ? `the tensor ${what}` : `the ${what}`;
      throw fail('Disposed', `${op}: ${subject} was disposed (by dispose() or at the end of the tidy() that created it)`);
    }
    return handle;
  }

  wrapGradients(handle: RawGradients): Gradients {
    const g = new this.Gradients(TOKEN as never, handle as never);
    if (this.registry) this.registry.register(g, handle, g);
    this.track(g);
    return g;
  }

  unwrapGradients(g: unknown, op: string): RawGradients {
    if (!(g instanceof this.Gradients)) {
      throw fail('Type', `${op}: grads must be the Gradients returned by backward(), got ${describe(g)}`);
    }
    if (g._h === null) throw fail('Disposed', `${op}: the Gradients were disposed`);
    return g._h;
  }

  /** An int32 index tensor from a Tensor or an array of integers (then a temporary to delete). */
  indexArg(v: unknown, op: string, what: string): { handle: RawTensor; temp: RawTensor | null } {
    if (v instanceof this.Tensor) return { handle: this.unwrap(v, op, what), temp: null };
    if (Array.isArray(v) || v instanceof Int32Array) {
      const data = toTypedArray(Array.isArray(v) ? checkIntArray(v, op, what) : v, 'int32', op);
      const temp = this.raw.tFromTypedArray(data, [data.length], 1);
      return { handle: temp, temp };
    }
    throw fail('Type', `${op}: ${what} must be an int32 Tensor or an array of integers, got ${describe(v)}`);
  }
}

/** The engine of a Tensor method's `this`, or the `Type` error unwrap gives for a non-tensor. */
export function engineOf(self: unknown, op: string): Engine {
  const e = (self as { _e?: Engine } | null | undefined)?._e;
  if (!(e instanceof Engine)) throw fail('Type', `${op}: tensor must be a kiln Tensor, got ${describe(self)}`);
  return e;
}

/**
 * Makes `Sub`, a subclass the caller writes for one engine instance (`class Tensor extends
 * Tensor {}` in install.ts: a class literal keeps its name, "a Tensor" in messages, and a
 * fast-properties constructor, which `instanceof` needs to stay cheap), that instance's
 * class of `Base`: `_e` on its prototype and on itself, and the static methods of its bases
 * bound to it, so `const { fromData } = kiln.Tensor` works as before. When `Sub` does not
 * extend `Base` itself (a Layer made as a subclass of this instance's Sequential, so that
 * it is `instanceof kiln.nn.Sequential`), Base's own prototype members are copied onto it.
 */
export function bindClass<C extends { prototype: object }>(Sub: C, e: Engine, Base: object = Object.getPrototypeOf(Sub)): C {
  const base = Base as { prototype: object };
  if (Object.getPrototypeOf(Sub) !== Base) {
    for (const key of Reflect.ownKeys(base.prototype)) {
      if (key === 'constructor') continue;
      Object.defineProperty(Sub.prototype, key, Object.getOwnPropertyDescriptor(base.prototype, key) as PropertyDescriptor);
    }
  }
  Object.defineProperty(Sub.prototype, '_e', { value: e });
  Object.defineProperty(Sub, '_e', { value: e });
  e.classes.set(Base, Sub);
  const seen = new Set(['length', 'name', 'prototype', '_e']);
  for (let c: object | null = Sub; c !== null && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    for (const key of Object.getOwnPropertyNames(c)) {
      if (seen.has(key)) continue;
      seen.add(key);
      const desc = Object.getOwnPropertyDescriptor(c, key);
      if (desc && typeof desc.value === 'function') {
        Object.defineProperty(Sub, key, { value: desc.value.bind(Sub), writable: true, configurable: true });
      }
    }
  }
  return Sub;
}
