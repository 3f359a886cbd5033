/// <reference lib="esnext.disposable" preserve="true" />
// The gradients of one backward() (Burn's Gradients) over the engine's RawGradients.
import { engineBusy } from '../boundary.js';
import type { RawGradients } from '../raw.js';
import { fail } from './checks.js';
import { TOKEN, type Engine } from './engine.js';
import type { Tensor } from './tensor.js';

/** The gradients of one backward() (Burn's Gradients). Dispose it (or create it inside tidy). */
export class Gradients {
  /** The engine instance (on the per-instance subclass's prototype). @internal */
  declare readonly _e: Engine;
  /** @internal */
  declare _h: RawGradients | null;
  /** @internal */
  declare _scope: Set<unknown> | null;

  /** Internal: returned by tensor.backward(). Allows `g instanceof kiln.Gradients`. */
  constructor(token: never, handle: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Gradients: returned by tensor.backward() (the constructor is internal)');
    this._h = handle as RawGradients;
    this._scope = null;
  }

  /** The number of tensors that have a gradient. */
  get size(): number {
    return this._e.unwrapGradients(this, 'size').size();
  }

  /** Whether dispose() was called (or its tidy ended). */
  get isDisposed(): boolean {
    return this._h === null;
  }

  /** The gradient of `tensor` (as tensor.grad(this)). */
  get(tensor: Tensor): Tensor | undefined {
    this._e.unwrapGradients(this, 'Gradients.get');
    this._e.unwrap(tensor, 'Gradients.get');
    return tensor.grad(this);
  }

  /**
   * Frees the gradients now (safe twice).
   * @throws KilnError `Busy` when called from a getter or Proxy the engine is reading (the running call may hold it); nothing changes.
   */
  dispose(): void {
    const h = this._h;
    if (h === null) return;
    engineBusy('Gradients.dispose');
    this._h = null;
    if (this._e.registry) this._e.registry.unregister(this);
    if (this._scope) {
      this._scope.delete(this);
      this._scope = null;
    }
    h.delete();
  }

  /** `using grads = loss.backward()` disposes at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
