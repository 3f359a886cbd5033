// Internal: the one owner of an engine handle (RawModel, RawOptimizer, RawDataset,
// RawLearner) that the package's JS classes extend (nn.ts: Sequential; train.ts: Optimizer,
// Dataset, Learner). It frees the handle on dispose() or `using`, turns use after dispose
// into KilnError `Disposed` naming the op, and registers the object with a
// FinalizationRegistry as a safety net (the handle is deleted if the object is collected
// undisposed; call dispose() anyway: collection is not deterministic).
import { KilnError } from './errors.js';
import type { RawOwned } from './raw.js';

const registry =
  typeof FinalizationRegistry === 'function'
    ? new FinalizationRegistry<RawOwned>((handle) => {
        try {
          if (!handle.isDeleted()) handle.delete();
        } catch {
          /* already gone */
        }
      })
    : null;

export class HandleOwner<H extends RawOwned = RawOwned> {
  /** @internal */
  _h: H | null;
  /** @internal */
  readonly _what: string;

  /**
   * @param handle the Embind object owned from now on
   * @param what the noun of Disposed messages ("model", "optimizer", ...)
   * @internal
   */
  constructor(handle: H, what: string) {
    this._h = handle;
    this._what = what;
    if (registry) registry.register(this, handle, this);
  }

  /** The handle, or KilnError `Disposed` naming `op`. @internal */
  _raw(op: string): H {
    if (this._h === null) throw new KilnError('Disposed', `${op}: the ${this._what} was disposed`);
    return this._h;
  }

  /** Whether dispose() was called. */
  get isDisposed(): boolean {
    return this._h === null;
  }

  /** Frees the engine's memory; a second call does nothing. */
  dispose(): void {
    const h = this._h;
    if (h === null) return;
    this._h = null;
    if (registry) registry.unregister(this);
    h.release();
    h.delete();
  }

  /** `using x = ...` disposes at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
