// Builds the tensor API of one engine instance: the per-instance Tensor and Gradients
// classes (with the op-table methods installed), tidy and friends, kiln.activation.
//
// Internal interface for the other parts of the package (nn.ts, train.ts): installTensor()
// returns `internals` = { raw, Tensor, Gradients, wrap(rawTensor) -> Tensor,
// unwrap(tensor, op, what?) -> RawTensor, wrapGradients, unwrapGradients, fail(code,
// message), checks: {...} }.
import type { RawGradients, RawModule, RawTensor } from '../raw.js';
import { activationApi } from './activation.js';
import { checks, describe, fail } from './checks.js';
import { bindClass, Engine } from './engine.js';
import { Gradients, Gradients as GradientsBase } from './gradients.js';
import { memoryApi } from './memory.js';
import { installOps } from './ops.js';
import { Tensor, Tensor as TensorBase } from './tensor.js';

export interface TensorInternals {
  raw: RawModule;
  engine: Engine;
  Tensor: typeof Tensor;
  Gradients: typeof Gradients;
  wrap(handle: RawTensor): Tensor;
  unwrap(t: unknown, op: string, what?: string): RawTensor;
  wrapGradients(handle: RawGradients): Gradients;
  unwrapGradients(g: unknown, op: string): RawGradients;
  fail: typeof fail;
  checks: typeof checks;
}

/**
 * Builds the tensor API of one engine instance onto `kiln` and returns the internals.
 * @param kiln the public object under construction
 * @param raw the Emscripten module
 * @param options init()'s options
 */
export function installTensor(kiln: Record<string, unknown>, raw: RawModule, options: { autoDispose?: boolean } = {}): TensorInternals {
  const e = new Engine(raw, options);
  const T = bindClass(class Tensor extends TensorBase {}, e);
  installOps(T.prototype, e.ops.table);
  guardReceivers(T.prototype, TensorBase, 'Tensor');
  e.Tensor = T as unknown as Engine['Tensor'];
  e.Gradients = bindClass(class Gradients extends GradientsBase {}, e) as unknown as Engine['Gradients'];
  const mem = memoryApi(e);
  Object.assign(kiln, {
    Tensor: T,
    Gradients: e.Gradients,
    ...mem,
    activation: activationApi(e),
    backendInfo: () => raw.backendInfo(),
  });
  return {
    raw,
    engine: e,
    Tensor: T,
    Gradients: e.Gradients as unknown as typeof Gradients,
    wrap: (h) => e.wrap(h),
    unwrap: (t, op, what) => e.unwrap(t, op, what),
    wrapGradients: (h) => e.wrapGradients(h),
    unwrapGradients: (g, op) => e.unwrapGradients(g, op),
    fail,
    checks,
  };
}

/**
 * Makes every method of `proto` (own and inherited, up to Object.prototype) check its
 * receiver: a method called on something that is not a `Base` (`const f = t.exp; f()`,
 * `xs.map(t.add)`, `Tensor.prototype.sum.call(5)`) throws KilnError `Type` naming the
 * method (as engineOf's check: `exp: tensor must be a kiln Tensor, got undefined`), instead
 * of a TypeError from inside the package. Receivers that are a Base of
 * another module instance keep their own checks (engineOf / unwrap).
 */
function guardReceivers(proto: object, Base: abstract new (...args: never[]) => unknown, what: string): void {
  const seen = new Set<string>();
  for (let o: object | null = proto; o !== null && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name === 'constructor' || seen.has(name)) continue;
      seen.add(name);
      const d = Object.getOwnPropertyDescriptor(o, name);
      if (d === undefined || typeof d.value !== 'function') continue;
      const method = d.value as (...args: unknown[]) => unknown;
      const guarded = function (this: unknown, ...args: unknown[]): unknown {
        if (!(this instanceof Base)) {
          throw fail('Type', `${name}: ${what.toLowerCase()} must be a kiln ${what}, got ${describe(this)}`);
        }
        return method.apply(this, args);
      };
      Object.defineProperty(guarded, 'name', { value: name });
      Object.defineProperty(proto, name, { ...d, value: guarded });
    }
  }
}
