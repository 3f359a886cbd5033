// kiln.optim.GradientsAccumulator (Burn's GradientsAccumulator): sums the gradients of
// several backward passes (micro-batches of one large batch) for a set of parameters, then
// hands them to optimizer.step as one Gradients. The sums are engine tensors (add in C++);
// the bookkeeping (which parameter has which sum) is JS.
//
//   const acc = new kiln.optim.GradientsAccumulator();
//   for (const micro of microBatches) acc.accumulate(model, lossOf(model, micro).backward());
//   optimizer.step(model, acc.grads());
import { describe, fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import type { Gradients } from '../tensor/gradients.js';
import type { RawTensor } from '../raw.js';
import type { Tensor } from '../tensor/tensor.js';
import { engineOfNew } from './common.js';

/** Anything with parameters: a Module / Sequential / layer (namedParameters()), a list or a record of tensors. */
export type ParamSource = { namedParameters(): Record<string, Tensor> | Iterable<[string, Tensor]> } | Tensor[] | Record<string, Tensor>;

/** The [name, tensor] pairs of `params` (tensors that require a gradient). @internal */
export function paramList(e: Engine, params: unknown, op: string): [string, Tensor][] {
  let entries: [string, Tensor][];
  if (Array.isArray(params)) {
    entries = params.map((t, i) => [String(i), t as Tensor]);
  } else if (params !== null && typeof params === 'object' && typeof (params as { namedParameters?: unknown }).namedParameters === 'function') {
    const named = (params as { namedParameters(): unknown }).namedParameters();
    entries = (named !== null && typeof named === 'object' && Symbol.iterator in (named as object))
      ? [...(named as Iterable<[string, Tensor]>)]
      : Object.entries(named as Record<string, Tensor>);
  } else if (params !== null && typeof params === 'object' && Object.getPrototypeOf(params) === Object.prototype) {
    entries = Object.entries(params as Record<string, Tensor>);
  } else {
    throw fail('Type', `${op}: params must be a model (namedParameters()), an array or a record of tensors, got ${describe(params)}`);
  }
  for (const [name, t] of entries) {
    if (!(t instanceof e.Tensor)) throw fail('Type', `${op}: parameter "${name}" must be a Tensor, got ${describe(t)}`);
    t._raw(op);
  }
  return entries;
}

function escape(t: Tensor): Tensor {
  if (t._scope) {
    t._scope.delete(t);
    t._scope = null;
  }
  return t;
}

/**
 * Sums gradients over several backward passes (Burn's GradientsAccumulator). Parameters are
 * matched by name across calls (a model's dotted names; a list's indices). The sums are held
 * (outside any tidy scope) until grads() hands them out or dispose() frees them.
 */
export class GradientsAccumulator {
  /** @internal */
  declare readonly _e: Engine;
  /** By parameter name (a model's dotted name, or the index in a list): the parameter (a
   * handle of its own, so the caller's wrappers may be disposed) and the running sum. @internal */
  _sums: Map<string, { param: Tensor; sum: Tensor }>;
  /** Backward passes accumulated since the last grads(). */
  count: number;

  constructor() {
    engineOfNew(new.target, 'optim.GradientsAccumulator');
    this._sums = new Map();
    this.count = 0;
  }

  /**
   * Adds the gradient of every parameter of `params` found in `grads` to its running sum
   * (parameters without a gradient there are skipped, as Burn's). grads stays usable.
   * @throws KilnError `Type` (params, grads), `Shape` (a gradient whose shape differs from the
   *   running sum's: nothing is added then), `Disposed`.
   */
  accumulate(params: ParamSource, grads: Gradients): void {
    const op = 'GradientsAccumulator.accumulate';
    const e = this._e;
    const list = paramList(e, params, op);
    const g = e.unwrapGradients(grads, op);
    const fresh: [string, Tensor, Tensor][] = [];
    try {
      for (const [name, p] of list) {
        const h = e.raw.tGrad(p._raw(op), g);
        if (h === undefined) continue;
        const t = escape(e.wrap(h));
        fresh.push([name, p, t]);
        const old = this._sums.get(name);
        if (old && old.sum.shape.join(',') !== t.shape.join(',')) {
          throw fail('Shape', `${op}: the gradient of "${name}" has shape [${t.shape.join(', ')}], the accumulated one [${old.sum.shape.join(', ')}]`);
        }
      }
    } catch (err) {
      for (const [, , t] of fresh) t.dispose();
      throw err;
    }
    for (const [name, p, t] of fresh) {
      const old = this._sums.get(name);
      if (old) {
        const sum = escape(old.sum.add(t));
        old.sum.dispose();
        t.dispose();
        this._sums.set(name, { param: old.param, sum });
      } else {
        const param = escape(e.wrap((p._raw(op) as unknown as { clone(): RawTensor }).clone()));
        this._sums.set(name, { param, sum: t });
      }
    }
    this.count++;
  }

  /**
   * The sums as a Gradients (for optimizer.step or tensor.grad), resetting the accumulator
   * (Burn's grads()). Dispose it when done (or create it inside tidy).
   * @throws KilnError `Disposed` if a parameter was disposed meanwhile.
   */
  grads(): Gradients {
    const op = 'GradientsAccumulator.grads';
    const e = this._e;
    const out = e.wrapGradients(e.raw.gradientsEmpty());
    try {
      for (const { param, sum } of this._sums.values()) e.raw.tGradReplace(param._raw(op), e.unwrapGradients(out, op), sum._raw(op));
    } catch (err) {
      out.dispose();
      throw err;
    }
    this.dispose();
    return out;
  }

  /** Frees the running sums (the accumulator stays usable, empty). */
  dispose(): void {
    for (const { param, sum } of this._sums.values()) {
      param.dispose();
      sum.dispose();
    }
    this._sums.clear();
    this.count = 0;
  }
}
