// kiln.Param (see module_class.ts): a module parameter, a Tensor subclass whose value is a
// C++ module::Param (bindings/module_params.cpp RawParam). In its own file because it
// extends Tensor, which module_class.ts (imported by nn.ts, imported by the tensor files)
// must not need while the Tensor class is being built.
import { engineBusy } from './boundary.js';
import type { RawParam, RawTensor } from './raw.js';
import { checkOptions, describe, fail } from './tensor/checks.js';
import { bindClass, TOKEN, type Engine } from './tensor/engine.js';
import { Tensor } from './tensor/tensor.js';
import { PARAM_KEY, swapHandle, type ParamOptions } from './module_class.js';

/**
 * A parameter of a module (PyTorch's nn.Parameter, Burn's Param): a float32 Tensor of rank
 * 1 to 6 that is a graph leaf (backward computes its gradient unless frozen), with a stable
 * id (`paramId`, the C++ ParamId) that keeps the optimizer's state attached to it. It is a
 * Tensor: `x.matmul(this.w)` works. It is not owned by kiln.tidy: it lives until its
 * module's dispose() (or its own). An optimizer step, assign() and requiresGrad swap its
 * value in place (the same JS object then holds the new value).
 *
 *   const w = new kiln.Param(kiln.Tensor.randn([4, 3]));   // or this.param('w', tensor) in a Module
 *
 * The values are copied from `value` (not its graph); `value` stays the caller's.
 * @throws KilnError `Type` for a non-Tensor, `DType` for a non-float32 tensor, `Rank` for
 *   rank 0 (use shape [1]) or above 6, `Disposed`.
 */
export class Param extends Tensor {
  /** The C++ parameter. @internal */
  declare _p: RawParam | null;

  constructor(value: Tensor, options?: ParamOptions) {
    // The per-instance class (installModule) builds it; this base is never constructed.
    super(TOKEN as never, makeParam(value, options) as never);
  }

  /** The C++ ParamId's value (unique in the process; kept by steps, assign and load). */
  get paramId(): number {
    return this._param('Param.paramId').id();
  }

  /** Whether optimizers update it and backward computes its gradient (PyTorch's requires_grad). */
  get requiresGrad(): boolean {
    return this._param('Param.requiresGrad').requiresGrad();
  }

  /**
   * Freezes (false) or unfreezes it: its value becomes untracked (or a new leaf); the
   * optimizer leaves a frozen parameter and its state unchanged.
   * @throws KilnError `Type` for a non-boolean.
   */
  set requiresGrad(require: boolean) {
    const p = this._param('Param.requiresGrad');
    if (typeof require !== 'boolean') {
      throw fail('Type', `Param.requiresGrad: expected a boolean, got ${describe(require)}`);
    }
    p.setRequiresGrad(require);
    swapHandle(this, p.tensor());
  }

  /**
   * Replaces the value by `value`'s (copied; same shape, float32), keeping the ParamId (and
   * so the optimizer's state). Returns this.
   * @throws KilnError `Shape` for another shape, `DType` for a non-float32 tensor, `Type`, `Disposed`.
   */
  assign(value: Tensor): this {
    const p = this._param('Param.assign');
    p.assign(this._e.unwrap(value, 'Param.assign', 'value'), 'Param.assign');
    swapHandle(this, p.tensor());
    return this;
  }

  /**
   * Frees the parameter (its module can no longer use it). Safe to call twice.
   * @throws KilnError `Busy` when called from a getter or Proxy the engine is reading (the running call may hold it); nothing changes.
   */
  dispose(): void {
    const p = this._p;
    if (p !== null && p !== undefined) {
      engineBusy('Param.dispose');
      this._p = null;
      p.release();
      p.delete();
    }
    super.dispose();
  }

  /** The C++ parameter, or `Disposed` naming op. @internal */
  _param(op: string): RawParam {
    const p = this._p;
    if (p === null || p === undefined || this._h === null) throw fail('Disposed', `${op}: the parameter was disposed`);
    return p;
  }

  /** Re-reads the value after the C++ parameter changed (an optimizer step). @internal */
  _refresh(): void {
    const p = this._p;
    if (p !== null && p !== undefined && this._h !== null) swapHandle(this, p.tensor());
  }
}

/** Never called: the per-instance Param class (installModule) replaces the constructor. */
function makeParam(value: unknown, options: unknown): RawTensor {
  void value;
  void options;
  throw fail('Type', 'Param: use new kiln.Param(tensor) (of a loaded kiln instance)');
}

/** Installs kiln.Param (the per-instance class) onto `kiln`. @internal */
export function installParam(kiln: Record<string, unknown>, e: Engine): void {
  const T = e.Tensor as unknown as typeof Tensor;
  // Param: a subclass of this instance's Tensor (so unwrap and instanceof kiln.Tensor accept
  // it) with Param's members copied (bindClass does when Sub does not extend Base).
  class Param extends (T as unknown as new (token: never, handle: never) => Tensor) {
    constructor(value: Tensor, options?: ParamOptions) {
      const rp = (value as unknown) === RAW_PARAM ? (options as unknown as { rp: RawParam }).rp : createParam(e, value, options);
      let h: RawTensor;
      try {
        h = rp.tensor();
      } catch (err) {
        rp.delete();
        throw err;
      }
      super(TOKEN as never, h as never);
      (this as unknown as { _p: RawParam })._p = rp;
      e.liveTensors++;
      if (e.registry) e.registry.register(this, h, this);
      if (paramRegistry) paramRegistry.register(this, rp, this);
    }

    static _fromRaw(rp: RawParam): Param {
      return new Param(RAW_PARAM as never, { rp } as never);
    }
  }
  const PB = bindClass(Param, e, ParamBase);
  e.classes.set(PARAM_KEY, PB);
  kiln.Param = PB;
}

/** Frees a lost Param's C++ parameter (its tensor handle has the engine's own registry). */
const paramRegistry = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry<RawParam>((h) => {
    try {
      if (!h.isDeleted()) h.delete();
    } catch {
      /* gone */
    }
  })
  : null;

const RAW_PARAM = Symbol('kiln.Param.raw');
const ParamBase = Param;


/** A new C++ parameter from `value`'s values (the Param constructor's checks). */
function createParam(e: Engine, value: unknown, options: unknown): RawParam {
  const op = 'Param';
  const opts = checkOptions<{ requiresGrad: unknown }>(options, op);
  for (const key of Object.keys(opts)) {
    if (key !== 'requiresGrad') throw fail('Type', `${op}: unknown option "${key}" (options: requiresGrad)`);
  }
  const require = opts.requiresGrad === undefined ? true : opts.requiresGrad;
  if (typeof require !== 'boolean') throw fail('Type', `${op}: requiresGrad must be a boolean, got ${describe(require)}`);
  return e.raw.paramCreate(e.unwrap(value, op, 'value'), require);
}
