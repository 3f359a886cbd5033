// Autodiff methods (float32 tensors live on Autodiff<Cpu>): requireGrad, detach, backward
// and the gradient accessors. The Gradients class is in gradients.ts.
import { checkBool, checkOptions } from './checks.js';
import type { Gradients } from './gradients.js';
import { TensorReduce } from './reduce.js';
import type { Tensor } from './tensor.js';

export class TensorAutodiff extends TensorReduce {
  /**
   * Marks this tensor, IN PLACE, as a leaf whose gradient backward() computes (PyTorch's
   * requires_grad_(), Burn's require_grad); returns this. On an op output: keeps its
   * gradient too (retain_grad). @throws `DType` unless float32; `State` under kiln-dl/inference,
   *   whose engine runs on the inner backend and records no graph (Burn's inference backend).
   */
  requireGrad(): this {
    return this._setRequireGrad(true, 'requireGrad');
  }

  /** true: as requireGrad(); false: stops tracking this tensor (in place). Returns this. */
  setRequireGrad(require: boolean): this {
    return this._setRequireGrad(require, 'setRequireGrad');
  }

  /** @internal */
  _setRequireGrad(require: boolean, opName: string): this {
    const h = this._raw(opName);
    checkBool(require, opName, 'require');
    const e = this._e;
    const next = e.raw.tSetRequireGrad(h, require);
    if (e.registry) {
      e.registry.unregister(this);
      e.registry.register(this, next, this);
    }
    this._h = next;
    h.delete();
    return this;
  }

  /** The same values cut from the graph (a new tensor; no gradient flows through it). */
  detach(): Tensor {
    return this._e.wrap(this._e.raw.tDetach(this._raw('detach')));
  }

  /**
   * Gradients of this one-element tensor (a loss, shape [1] or []) w.r.t. every tensor that
   * required them. Releases the graph: a second backward() through it throws `State`
   * (PyTorch's "Trying to backward through the graph a second time"). With
   * `{retainGraph: true}` (PyTorch's retain_graph=True) the graph is kept, so a later
   * backward() through it works (each call returns its own Gradients; nothing accumulates).
   * @throws `Shape` unless exactly one element; `State` if nothing requires gradients or
   *   the graph was already released (always under kiln-dl/inference, which records no graph);
   *   `Type` for a non-boolean retainGraph.
   */
  backward(options?: { retainGraph?: boolean }): Gradients {
    const op = 'backward';
    const h = this._raw(op);
    const opts = checkOptions<{ retainGraph?: boolean }>(options, op);
    if (opts.retainGraph === undefined || opts.retainGraph === false) {
      if (opts.retainGraph !== undefined) checkBool(opts.retainGraph, op, 'retainGraph');
      return this._e.wrapGradients(this._e.raw.tBackward(h));
    }
    checkBool(opts.retainGraph, op, 'retainGraph');
    return this._e.wrapGradients(this._e.raw.tBackwardRetain(h, true));
  }

  /** This tensor's gradient in `grads` (an untracked float32 tensor of this shape), or undefined. */
  grad(grads: Gradients): Tensor | undefined {
    const h = this._raw('grad');
    const g = this._e.raw.tGrad(h, this._e.unwrapGradients(grads, 'grad'));
    return g === undefined ? undefined : this._e.wrap(g);
  }

  /** Removes and returns this tensor's gradient from grads. */
  gradRemove(grads: Gradients): Tensor | undefined {
    const h = this._raw('gradRemove');
    const g = this._e.raw.tGradRemove(h, this._e.unwrapGradients(grads, 'gradRemove'));
    return g === undefined ? undefined : this._e.wrap(g);
  }

  /** Sets this tensor's gradient in grads. @throws `State` if it does not require gradients, `Shape` for a wrong shape. */
  gradReplace(grads: Gradients, grad: Tensor): void {
    const h = this._raw('gradReplace');
    this._e.raw.tGradReplace(h, this._e.unwrapGradients(grads, 'gradReplace'), this._e.unwrap(grad, 'gradReplace', 'grad'));
  }
}
