// Reductions written by hand: with indices (maxDimWithIndices, argmax, ...), variance, sort
// and topk. The plain reductions (sum, mean, prod, max, min, any, all and their *Dim forms)
// are generated from ops.def's rows (ops.ts). Whole-tensor forms return a rank-0 [] (PyTorch's
// scalar; Burn and Kiln's C++ API give [1]); with a `dim` they reduce along it
// keeping it with size 1 (the rule for scalar results, README "Scalar results"; norm, std,
// var's correction form, amax and amin are in ops_ext.ts and follow it). topk is the
// engine's (kiln/tensor/derived.hpp, one call).
import { camelErrors } from '../nn.js';
import { checkBool, checkInt } from './checks.js';
import { TensorIndexing } from './indexing.js';
import type { Dim } from './shape.js';
import type { Tensor } from './tensor.js';

export class TensorReduce extends TensorIndexing {
  /** [values, int32 indices] of the max along dim (kept); first index on ties; gradient routed to it. */
  maxDimWithIndices(dim: Dim): [Tensor, Tensor] {
    checkInt(dim, 'maxDimWithIndices', 'dim');
    return this._e.wrapPair(this._e.raw.tExtremeDimWithIndices(this._raw('maxDimWithIndices'), dim, false));
  }

  /** [values, int32 indices] of the min along dim (kept); first index on ties. */
  minDimWithIndices(dim: Dim): [Tensor, Tensor] {
    checkInt(dim, 'minDimWithIndices', 'dim');
    return this._e.wrapPair(this._e.raw.tExtremeDimWithIndices(this._raw('minDimWithIndices'), dim, true));
  }

  /** int32 index of the max along dim (kept, torch.argmax keepdim=True); first on ties; nan counts as the max. */
  argmax(dim: Dim): Tensor {
    checkInt(dim, 'argmax', 'dim');
    return this._e.wrap(this._e.raw.tArgExtreme(this._raw('argmax'), dim, false));
  }

  /** int32 index of the min along dim (kept); first on ties. */
  argmin(dim: Dim): Tensor {
    checkInt(dim, 'argmin', 'dim');
    return this._e.wrap(this._e.raw.tArgExtreme(this._raw('argmin'), dim, true));
  }

  /** Variance along dim (kept), divisor n - 1 (unbiased, default) or n. float32. */
  var(dim: Dim, unbiased: boolean = true): Tensor {
    const [v, m] = this._varMean(dim, unbiased, 'var');
    m.dispose();
    return v;
  }

  /** Variance with divisor n (Burn's var_bias). */
  varBias(dim: Dim): Tensor {
    return this.var(dim, false);
  }

  /** [variance, mean] along dim (both kept). */
  varMean(dim: Dim, unbiased: boolean = true): [Tensor, Tensor] {
    return this._varMean(dim, unbiased, 'varMean');
  }

  /** @internal */
  _varMean(dim: Dim, unbiased: boolean, opName: string): [Tensor, Tensor] {
    checkInt(dim, opName, 'dim');
    checkBool(unbiased, opName, 'unbiased');
    return this._e.wrapPair(this._e.raw.tVarMean(this._raw(opName), dim, unbiased));
  }

  /** Sorted along dim (default -1), stable; nan last ascending (torch.sort). */
  sort(dim: Dim = -1, descending: boolean = false): Tensor {
    const [v, i] = this._sortWithIndices(dim, descending, 'sort');
    i.dispose();
    return v;
  }

  /** Sorted largest first along dim (default -1). */
  sortDescending(dim: Dim = -1): Tensor {
    return this.sort(dim, true);
  }

  /** int32 indices that sort along dim (stable). */
  argsort(dim: Dim = -1, descending: boolean = false): Tensor {
    const [v, i] = this._sortWithIndices(dim, descending, 'argsort');
    v.dispose();
    return i;
  }

  /** [sorted values, int32 indices] along dim (default -1), stable; the gradient follows the permutation. */
  sortWithIndices(dim: Dim = -1, descending: boolean = false): [Tensor, Tensor] {
    return this._sortWithIndices(dim, descending, 'sortWithIndices');
  }

  /** @internal */
  _sortWithIndices(dim: Dim, descending: boolean, opName: string): [Tensor, Tensor] {
    checkInt(dim, opName, 'dim');
    checkBool(descending, opName, 'descending');
    return this._e.wrapPair(this._e.raw.tSortWithIndices(this._raw(opName), dim, descending));
  }

  /** The k largest along dim (default -1), largest first. @throws `Index` if k > size. */
  topk(k: number, dim: Dim = -1): Tensor {
    const op = 'topk';
    const h = this._raw(op);
    checkInt(k, op, 'k');
    checkInt(dim, op, 'dim');
    return this._e.wrap(camelErrors(() => this._e.raw.tTopk(h, k, dim, op)));
  }

  /** [the k largest values, their int32 indices] along dim (default -1), stable. @throws `Index` if k > size. */
  topkWithIndices(k: number, dim: Dim = -1): [Tensor, Tensor] {
    const op = 'topkWithIndices';
    const h = this._raw(op);
    checkInt(k, op, 'k');
    checkInt(dim, op, 'dim');
    return this._e.wrapPair(camelErrors(() => this._e.raw.tTopkWithIndices(h, k, dim, op)));
  }
}
