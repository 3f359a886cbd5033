// The ops PyTorch users reach for (issue 15): norm, std (var's correction form is in
// reduce.ts), amax/amin, pad, tril/triu, cumsum, and the statics linspace and einsum. Each is
// the engine's (kiln/tensor/ops_ext.hpp, bindings/tensor_ops_ext.cpp): JS checks only the
// types of its arguments, then makes one call; values, shapes and gradients are PyTorch's.
//
// Scalar results (one rule for the whole JS API, PyTorch's): a result with no dims left is
// rank 0, shape [] (a reduction over every element: no `dim`, or every dim with
// `{keepDim: false}`; `sum()`, `mean()`, `max()`, losses too); with `dim` the reduced dims are
// kept with size 1 (Burn's `sum_dim`), or removed with `{keepDim: false}` (PyTorch's
// default). A rank-0 tensor stays rank 0 through element-wise ops, a vector·vector `matmul`
// and `einsum('i,i->')` give [], and `item()` reads the one element.
import { camelErrors } from '../nn.js';
import { checkBool, checkInt, checkIntArray, checkNumber, checkOptions, describe, fail } from './checks.js';
import type { Engine } from './engine.js';
import { TensorAutodiff } from './autodiff.js';
import type { Dim } from './shape.js';
import type { Tensor } from './tensor.js';

/** Options of the reductions over dims (norm, std, var, amax, amin). */
export interface ReduceDimOptions {
  /**
   * Keep the reduced dims with size 1 (default: true when `dim` is given, as Kiln's
   * `sumDim`; false without `dim`: the whole-tensor result is rank-0 []). `false` removes them
   * as PyTorch's default keepdim=False.
   */
  keepDim?: boolean;
}

/** Options of std/var: `correction` (PyTorch 2's name; 1 = unbiased, 0 = biased). */
export interface VarOptions extends ReduceDimOptions {
  /** Divisor n - correction (clamped at 0, as torch); default 1. */
  correction?: number;
}

/** Padding modes of `pad` (torch.nn.functional.pad). */
export type PadMode = 'constant' | 'reflect' | 'replicate' | 'circular';

/** Options of `pad`. */
export interface PadOptions {
  /** 'constant' (default), 'reflect', 'replicate' or 'circular'. */
  mode?: PadMode;
  /** The fill value of 'constant' (default 0). */
  value?: number;
}

/** The dims argument of a reduction: one dim, a list, or null/undefined for every dim. */
export type Dims = Dim | readonly Dim[] | null | undefined;

/** @internal [dims list, keepDim] from the JS arguments. */
export function dimsArgs(dim: unknown, options: unknown, op: string): [number[], boolean, Record<string, unknown>] {
  let dims: number[];
  if (dim === undefined || dim === null) dims = [];
  else if (Array.isArray(dim)) {
    dims = checkIntArray(dim, op, 'dim');
    if (dims.length === 0) throw fail('Value', `${op}: dim must list at least one dim (omit it to reduce every dim)`);
  } else dims = [checkInt(dim, op, 'dim')];
  const opts = checkOptions<Record<string, unknown>>(options, op) as Record<string, unknown>;
  const keep = opts.keepDim === undefined ? dims.length > 0 : checkBool(opts.keepDim, op, 'keepDim');
  return [dims, keep, opts];
}

/** @internal The engine of a static method's `this` (the per-instance class). */
function engineOfClass(cls: unknown): Engine {
  return (cls as { _e: Engine })._e;
}

export class TensorOpsExt extends TensorAutodiff {
  /**
   * The vector p-norm over `dim` (torch.linalg.vector_norm(x, ord=p, dim, keepdim)):
   * (Σ|x|^p)^(1/p); p = Infinity the largest |x|, -Infinity the smallest, 0 the number of
   * non-zeros. Default p = 2 over every element. float32 only.
   *
   * Gradient: PyTorch's (norm_backward): 0 where the norm is 0 (the subgradient at the
   * zero vector, for p = 2 too); for p = ±Infinity split evenly among the elements that
   * attain it.
   *
   * Shapes: [d0, ..., dn] -> the reduced dims kept as 1 (or removed with keepDim: false);
   * no dim: [] (rank 0).
   * @throws KilnError `Type` (p not a number, bad dim type), `Value` (p nan), `Index` (dim
   *   out of range or repeated), `DType` (not float32).
   */
  norm(p: number = 2, dim?: Dims, options?: ReduceDimOptions): Tensor {
    const op = 'norm';
    const h = this._raw(op);
    checkNumber(p, op, 'p');
    const [dims, keep] = dimsArgs(dim, options, op);
    return this._e.wrap(camelErrors(() => this._e.raw.tNorm(h, p, dims, keep, op)));
  }

  /**
   * Standard deviation over `dim` (torch.std): sqrt(Σ(x - mean)² / max(0, n - correction)).
   * The second argument is `unbiased` (true: correction 1, the default; false: 0) as
   * `var(dim, unbiased)`, or `{correction, keepDim}`. Gradient 0 where the result is 0
   * (torch's std_backward). float32 only.
   *
   * Shapes: as `norm`.
   * @throws KilnError `Value` (correction negative or not finite), `Index`, `DType`, `Type`.
   */
  std(dim?: Dims, options?: boolean | VarOptions): Tensor {
    return this._varCorrection(dim, options, true, 'std');
  }

  /**
   * Variance over `dim` (torch.var). `var(dim, unbiased = true)` is unchanged (dim kept,
   * divisor n - 1 or n); additions: `dim` may be a list or omitted (every element), and the
   * second argument may be `{correction, keepDim}`: Σ(x - mean)² / max(0, n - correction).
   * float32 only. Shapes: as `norm`.
   * @throws KilnError `Value` (correction negative or not finite), `Index`, `DType`, `Type`.
   */
  override var(dim?: Dims, options?: boolean | VarOptions): Tensor {
    if (typeof dim === 'number' && (options === undefined || options === null || typeof options !== 'object')) {
      return super.var(dim, options as boolean | undefined); // today's form, its checks and messages
    }
    return this._varCorrection(dim, options, false, 'var');
  }

  /** @internal std/var with correction (var's options form, reduce.ts). */
  _varCorrection(dim: unknown, options: unknown, takeSqrt: boolean, op: string): Tensor {
    const h = this._raw(op);
    let correction = 1;
    let opts: unknown = options;
    if (typeof options === 'boolean') {
      correction = options ? 1 : 0;
      opts = undefined;
    }
    const [dims, keep, o] = dimsArgs(dim, opts, op);
    if (o.correction !== undefined) correction = checkNumber(o.correction, op, 'correction');
    return this._e.wrap(camelErrors(() => this._e.raw.tVarCorrection(h, dims, correction, keep, takeSqrt, op)));
  }

  /**
   * The largest element over `dim` (torch.amax); float32 or int32. Unlike `max(dim)`, the
   * gradient is split evenly among tied maxima (PyTorch's amax rule).
   * Shapes: as `norm`. @throws KilnError `Value` reducing an empty dim, `Index`, `DType` (bool).
   */
  amax(dim?: Dims, options?: ReduceDimOptions): Tensor {
    return this._amax(dim, options, false, 'amax');
  }

  /** The smallest element over `dim` (torch.amin); gradient split evenly among ties. As `amax`. */
  amin(dim?: Dims, options?: ReduceDimOptions): Tensor {
    return this._amax(dim, options, true, 'amin');
  }

  /** @internal */
  _amax(dim: unknown, options: unknown, min: boolean, op: string): Tensor {
    const h = this._raw(op);
    const [dims, keep] = dimsArgs(dim, options, op);
    return this._e.wrap(camelErrors(() => this._e.raw.tAmax(h, dims, keep, min, op)));
  }

  /**
   * Pads (or, with negative pads, crops) trailing dims (torch.nn.functional.pad): `pads` is
   * PyTorch's list, last dim first: [lastLeft, lastRight, prevLeft, prevRight, ...].
   * mode 'constant' fills with `value` (default 0); 'reflect' mirrors without repeating the
   * edge; 'replicate' repeats the edge; 'circular' wraps around. Any dtype.
   *
   * Shapes: [..., n] -> [..., n + left + right] for each padded dim (e.g. [2, 3] with
   * [1, 2] -> [2, 6]). Gradient: the padded positions pass none; reflected/replicated ones
   * add to their sources.
   * @throws KilnError `Value` for an odd-length list, more pairs than dims, an unknown mode,
   *   a negative result size, reflect pads >= the dim, non-constant modes on an empty dim;
   *   `Type` for non-integer pads or a non-number value.
   */
  pad(pads: readonly number[], options?: PadOptions): Tensor {
    const op = 'pad';
    const h = this._raw(op);
    const padList = checkIntArray(pads, op, 'pads');
    const opts = checkOptions<PadOptions>(options, op);
    const mode = opts.mode ?? 'constant';
    if (typeof mode !== 'string') throw fail('Type', `${op}: mode must be a string, got ${describe(mode)}`);
    const value = opts.value === undefined ? 0 : checkNumber(opts.value, op, 'value');
    return this._e.wrap(camelErrors(() => this._e.raw.tPad(h, padList, mode, value, op)));
  }

  /**
   * The lower triangle of the last two dims (torch.tril): elements with column - row <=
   * `diagonal` kept (0: the main diagonal; > 0 above it, < 0 below), the others 0. Any dtype;
   * gradient through the kept elements. Shapes: [..., m, n] -> the same.
   * @throws KilnError `Rank` below rank 2, `Type` for a non-integer diagonal.
   */
  tril(diagonal: number = 0): Tensor {
    return this._triangle(diagonal, false, 'tril');
  }

  /** The upper triangle (torch.triu): column - row >= `diagonal` kept. As `tril`. */
  triu(diagonal: number = 0): Tensor {
    return this._triangle(diagonal, true, 'triu');
  }

  /** @internal */
  _triangle(diagonal: unknown, upper: boolean, op: string): Tensor {
    const h = this._raw(op);
    checkInt(diagonal, op, 'diagonal');
    return this._e.wrap(camelErrors(() => this._e.raw.tTriangle(h, diagonal as number, upper, op)));
  }

  /**
   * Cumulative sum along `dim` (torch.cumsum): out[i] = Σ_{j <= i} x[j]; float32 or int32
   * (int32 wraps). Gradient: the reversed cumulative sum. Shapes: unchanged.
   * @throws KilnError `DType` for bool (cast it first), `Index` for dim, `Type`.
   */
  cumsum(dim: Dim): Tensor {
    const op = 'cumsum';
    const h = this._raw(op);
    checkInt(dim, op, 'dim');
    return this._e.wrap(camelErrors(() => this._e.raw.tCumsum(h, dim, op)));
  }

  /**
   * `steps` evenly spaced float32 values from start to end inclusive (torch.linspace, its
   * float32 formula: both ends exact). Shapes: -> [steps].
   * @throws KilnError `Type` (non-number start/end, non-integer steps), `Value` (steps < 0,
   *   start or end not finite).
   */
  static linspace(start: number, end: number, steps: number): Tensor {
    const e = engineOfClass(this);
    const op = 'linspace';
    checkNumber(start, op, 'start');
    checkNumber(end, op, 'end');
    checkInt(steps, op, 'steps');
    return e.wrap(e.raw.tLinspace(start, end, steps, op));
  }

  /**
   * Einstein summation over one or two float32 operands (torch.einsum), e.g. 'ij,jk->ik'
   * (matmul), 'bij,bjk->bik' (batched), 'i,i->' (dot, shape []), 'i,j->ij' (outer),
   * 'ij->ji', 'ij->' ([]), 'bi,bi->b'. Labels are letters; without '->' the output is the
   * labels used once, alphabetically. Lowered to sums, permute, reshape and one matmul, so
   * values and gradients are those ops'. Not supported: '...', a label repeated within
   * one operand (diagonals), more than two operands.
   * @throws KilnError `Value` for a malformed or unsupported equation or a wrong operand
   *   count; `Shape` when a label has two sizes or a term's length differs from its
   *   operand's rank; `DType` unless float32; `Type`.
   */
  static einsum(equation: string, ...operands: Tensor[]): Tensor {
    const e = engineOfClass(this);
    const op = 'einsum';
    if (typeof equation !== 'string') throw fail('Type', `${op}: equation must be a string, got ${describe(equation)}`);
    if (operands.length < 1 || operands.length > 2) {
      throw fail('Value', `${op}: one or two operands are supported, got ${operands.length}`);
    }
    const a = e.unwrap(operands[0], op, 'operands[0]');
    const b = operands.length > 1 ? e.unwrap(operands[1], op, 'operands[1]') : a;
    return e.wrap(e.raw.tEinsum(equation, a, b, operands.length, op));
  }
}
