// Internal: the one owner of an engine handle (RawModel, RawOptimizer, RawDataset,
// RawLearner) that the package's JS classes extend (train.ts: Optimizer, Dataset, Learner;
// nn.ts's Sequential, a Module, uses the same functions adoptHandle/liveHandle/releaseHandle). It frees the handle on dispose() or `using`, turns use after dispose
// into KilnError `Disposed` naming the op, and registers the object with a
// FinalizationRegistry as a safety net (the handle is deleted if the object is collected
// undisposed; call dispose() anyway: collection is not deterministic).
import { engineBusy } from './boundary.js';
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

/** The handle-owning fields shared by HandleOwner and classes that cannot extend it (Sequential extends Module). @internal */
export interface HandleFields<H extends RawOwned> {
  _h: H | null;
  readonly _what: string;
}

/** Starts owning `handle` (the safety-net registration). @internal */
export function adoptHandle<H extends RawOwned>(owner: HandleFields<H>, handle: H): void {
  if (registry) registry.register(owner, handle, owner);
}

/** owner's handle, or KilnError `Disposed` naming `op`. @internal */
export function liveHandle<H extends RawOwned>(owner: HandleFields<H>, op: string): H {
  if (owner._h === null) throw new KilnError('Disposed', `${op}: the ${owner._what} was disposed`);
  return owner._h;
}

/** Frees owner's handle; a second call does nothing. @internal */
export function releaseHandle<H extends RawOwned>(owner: HandleFields<H>): void {
  const h = owner._h;
  if (h === null) return;
  engineBusy(`${owner._what}.dispose`);
  owner._h = null;
  if (registry) registry.unregister(owner);
  h.release();
  h.delete();
}

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
    adoptHandle(this, handle);
  }

  /** The handle, or KilnError `Disposed` naming `op`. @internal */
  _raw(op: string): H {
    return liveHandle(this, op);
  }

  /** Whether dispose() was called. */
  get isDisposed(): boolean {
    return this._h === null;
  }

  /**
   * Frees the engine's memory; a second call does nothing.
   * @throws KilnError `Busy` when called from a getter or Proxy the engine is reading (the running call may hold it); nothing changes.
   */
  dispose(): void {
    releaseHandle(this);
  }

  /** `using x = ...` disposes at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
