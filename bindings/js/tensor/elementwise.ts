// The element-wise methods written by hand: those whose ops.def row has no JS method (pow
// and its Burn names powf/powi; gelu, whose option picks the Gelu or GeluTanh row), the
// reversed scalar forms rsub/rdiv, the parametrised activations (leakyRelu, softplus,
// softmax), clamp, matmul, nan/inf tests, bool logic, casts and masks. The plain unary,
// binary and comparison methods (exp, add, equal, ...) are generated from ops.def (ops.ts).
import { checkNumber, checkInt, checkOptions, describe, dtypeCode, fail, isScalar, type DType } from './checks.js';
import { TensorCreation } from './creation.js';
import { binary, unary } from './ops.js';
import type { Tensor } from './tensor.js';

export class TensorElementwise extends TensorCreation {
  /** this ^ other (float32: std::pow; int32: exact, @throws `Value` for negative exponents). */
  pow(other: Tensor | number): Tensor {
    return binary(this as unknown as Tensor, this._e.ops.id('binary', 'pow'), 'pow', other);
  }

  /** Burn's name for pow on float tensors. */
  powf(other: Tensor | number): Tensor {
    return binary(this as unknown as Tensor, this._e.ops.id('binary', 'pow'), 'powf', other);
  }

  /** Burn's name for pow on int tensors. */
  powi(other: Tensor | number): Tensor {
    return binary(this as unknown as Tensor, this._e.ops.id('binary', 'pow'), 'powi', other);
  }

  /** other - this, for a number other. */
  rsub(other: number): Tensor {
    if (!isScalar(other)) throw fail('Type', `rsub: the value must be a number, got ${describe(other)}`);
    return this._e.wrap(this._e.raw.tBinaryScalar(this._e.ops.id('binary', 'sub'), this._raw('rsub'), Number(other), true));
  }

  /** other / this, for a number other. */
  rdiv(other: number): Tensor {
    if (!isScalar(other)) throw fail('Type', `rdiv: the value must be a number, got ${describe(other)}`);
    return this._e.wrap(this._e.raw.tBinaryScalar(this._e.ops.id('binary', 'div'), this._raw('rdiv'), Number(other), true));
  }

  /** x·Φ(x) (erf form), or the tanh approximation with `{approximate: "tanh"}`. */
  gelu(options?: { approximate?: 'none' | 'tanh' }): Tensor {
    const opts = checkOptions<{ approximate: unknown }>(options, 'gelu');
    if (opts.approximate !== undefined && opts.approximate !== 'none' && opts.approximate !== 'tanh') {
      throw fail('Value', `gelu: approximate must be "none" or "tanh", got ${describe(opts.approximate)}`);
    }
    const row = opts.approximate === 'tanh' ? 'gelu_tanh' : 'gelu';
    return unary(this as unknown as Tensor, this._e.ops.id('unary', row), 'gelu');
  }

  /** x for x >= 0, negativeSlope·x otherwise (default 0.01). */
  leakyRelu(negativeSlope: number = 0.01): Tensor {
    checkNumber(negativeSlope, 'leakyRelu', 'negativeSlope');
    return this._e.wrap(this._e.raw.tLeakyRelu(this._raw('leakyRelu'), negativeSlope));
  }

  /** log(1 + exp(beta·x)) / beta; x where beta·x > threshold (torch.nn.Softplus). @throws `Value` if beta <= 0. */
  softplus(beta: number = 1, threshold: number = 20): Tensor {
    checkNumber(beta, 'softplus', 'beta');
    checkNumber(threshold, 'softplus', 'threshold');
    return this._e.wrap(this._e.raw.tSoftplus(this._raw('softplus'), beta, threshold));
  }

  /** x for x > 0, alpha·(e^x - 1) otherwise (torch.nn.functional.elu, default alpha 1); gradient alpha at 0. */
  elu(alpha: number = 1): Tensor {
    checkNumber(alpha, 'elu', 'alpha');
    return this._e.wrap(this._e.raw.tElu(this._raw('elu'), alpha));
  }

  /** max(0, x) + min(0, alpha·(e^(x/alpha) - 1)) (torch.nn.functional.celu, default alpha 1). @throws `Value` if alpha is 0. */
  celu(alpha: number = 1): Tensor {
    checkNumber(alpha, 'celu', 'alpha');
    return this._e.wrap(this._e.raw.tCelu(this._raw('celu'), alpha));
  }

  /**
   * a·sigmoid(b), a and b the two halves of dim (torch.nn.functional.glu, default the last dim):
   * `[..., 2n, ...] -> [..., n, ...]`. @throws `Shape` if the size of dim is odd; `Index` for a bad dim.
   */
  glu(dim: number = -1): Tensor {
    checkInt(dim, 'glu', 'dim');
    return this._e.wrap(this._e.raw.tGlu(this._raw('glu'), dim));
  }

  /** exp(x - max) / Σ exp(x - max) along dim; -inf entries get 0; an all -inf row gives nan (PyTorch). */
  softmax(dim: number): Tensor {
    checkInt(dim, 'softmax', 'dim');
    return this._e.wrap(this._e.raw.tSoftmax(this._raw('softmax'), dim, false));
  }

  /** x - max - log Σ exp(x - max) along dim. */
  logSoftmax(dim: number): Tensor {
    checkInt(dim, 'logSoftmax', 'dim');
    return this._e.wrap(this._e.raw.tSoftmax(this._raw('logSoftmax'), dim, true));
  }

  /**
   * Clamps to [min, max] (either may be null/undefined); nan stays nan; the gradient
   * passes where min <= x <= max (torch.clamp). @throws `Value` if min > max.
   */
  clamp(min?: number | null, max?: number | null): Tensor {
    const op = 'clamp';
    const h = this._raw(op);
    const hasMin = min !== undefined && min !== null;
    const hasMax = max !== undefined && max !== null;
    if (hasMin) checkNumber(min, op, 'min');
    if (hasMax) checkNumber(max, op, 'max');
    return this._e.wrap(this._e.raw.tClamp(h, hasMin, hasMin ? min : 0, hasMax, hasMax ? max : 0));
  }

  /** max(x, min) (torch.clamp(min=...)). */
  clampMin(min: number): Tensor {
    checkNumber(min, 'clampMin', 'min');
    return this._e.wrap(this._e.raw.tClamp(this._raw('clampMin'), true, min, false, 0));
  }

  /** min(x, max) (torch.clamp(max=...)). */
  clampMax(max: number): Tensor {
    checkNumber(max, 'clampMax', 'max');
    return this._e.wrap(this._e.raw.tClamp(this._raw('clampMax'), false, 0, true, max));
  }

  /**
   * torch.matmul: `[..., m, k] x [..., k, n] -> [..., m, n]`, batch dims broadcast
   * (`[2, 1, m, k] x [5, k, n] -> [2, 5, m, n]`); a rank-1 lhs `[k]` is a row and a rank-1
   * rhs `[k]` a column, their dim removed from the result (`[k] x [k] -> []`). float32.
   * @throws `Shape` if the inner dims differ or batch dims do not broadcast; `Rank` for a scalar.
   */
  matmul(other: Tensor): Tensor {
    const op = 'matmul';
    const e = this._e;
    const a = this._raw(op);
    const b = e.unwrap(other, op, 'other');
    const sa = this._dims();
    const sb = other._dims();
    if (sa.length === 0 || sb.length === 0) {
      throw fail('Rank', `${op}: both operands need rank >= 1: lhs [${sa.join(', ')}] vs rhs [${sb.join(', ')}]`);
    }
    if (sa.length >= 2 && sb.length >= 2) return e.wrap(e.raw.tMatmul(a, b));
    const k1 = sa[sa.length - 1];
    const k2 = sb.length === 1 ? sb[0] : sb[sb.length - 2];
    if (k1 !== k2) {
      throw fail('Shape', `${op}: inner dimensions differ: lhs [${sa.join(', ')}] vs rhs [${sb.join(', ')}] (${k1} != ${k2})`);
    }
    const temps = [];
    try {
      let la = a;
      let lb = b;
      if (sa.length === 1) temps.push((la = e.raw.tReshape(a, [1, sa[0]])));
      if (sb.length === 1) temps.push((lb = e.raw.tReshape(b, [sb[0], 1])));
      const prod = e.raw.tMatmul(la, lb);
      temps.push(prod);
      let out = prod.shape();
      if (sb.length === 1) out = out.slice(0, -1);
      if (sa.length === 1) out = sb.length === 1 ? out.slice(0, -1) : [...out.slice(0, -2), out[out.length - 1]];
      return e.wrap(e.raw.tReshape(prod, out));
    } finally {
      for (const t of temps) t.delete();
    }
  }

  // ---- nan / inf and bool logic

  /** bool: true where nan (float32 only). */
  isNan(): Tensor {
    return this._e.wrap(this._e.raw.tBoolUnary(0, this._raw('isNan')));
  }

  /** bool: true where ±inf (float32 only). */
  isInf(): Tensor {
    return this._e.wrap(this._e.raw.tBoolUnary(1, this._raw('isInf')));
  }

  /** bool [1]: whether any element is nan. */
  containsNan(): Tensor {
    const h = this._raw('containsNan');
    const e = this._e;
    const nan = e.raw.tBoolUnary(0, h);
    try {
      return e.wrap(e.raw.tReduce(e.ops.id('reduce', 'any'), nan));
    } finally {
      nan.delete();
    }
  }

  /** Logic on bool tensors (broadcast). @throws `DType` for other dtypes. */
  boolNot(): Tensor {
    return this._e.wrap(this._e.raw.tBoolUnary(2, this._raw('boolNot')));
  }

  /** Logical and of two bool tensors (broadcast). */
  boolAnd(other: Tensor): Tensor {
    return this._e.wrap(this._e.raw.tBoolBinary(0, this._raw('boolAnd'), this._e.unwrap(other, 'boolAnd', 'other')));
  }

  /** Logical or of two bool tensors (broadcast). */
  boolOr(other: Tensor): Tensor {
    return this._e.wrap(this._e.raw.tBoolBinary(1, this._raw('boolOr'), this._e.unwrap(other, 'boolOr', 'other')));
  }

  /** Logical xor of two bool tensors (broadcast). */
  boolXor(other: Tensor): Tensor {
    return this._e.wrap(this._e.raw.tBoolBinary(2, this._raw('boolXor'), this._e.unwrap(other, 'boolXor', 'other')));
  }

  // ---- casts and masks

  /** Cast to float32 (bool -> 0/1). A cast to the tensor's own dtype is a clone(). */
  float(): Tensor {
    return this._e.wrap(this._e.raw.tCast(this._raw('float'), 0));
  }

  /** Cast to int32 (float32 truncates toward zero, as PyTorch `.int()`). */
  int(): Tensor {
    return this._e.wrap(this._e.raw.tCast(this._raw('int'), 1));
  }

  /** Cast to bool (`!= 0`; nan is true). */
  bool(): Tensor {
    return this._e.wrap(this._e.raw.tCast(this._raw('bool'), 2));
  }

  /** Cast to `dtype` by name (as float() / int() / bool()). @throws `Type` for an unknown dtype. */
  cast(dtype: DType): Tensor {
    return this._e.wrap(this._e.raw.tCast(this._raw('cast'), dtypeCode(dtype, 'cast')));
  }

  /** `value` where mask is true, else this (torch.where(mask, value, this)); all three broadcast. mask: bool. */
  maskWhere(mask: Tensor, value: Tensor): Tensor {
    const op = 'maskWhere';
    const e = this._e;
    return e.wrap(e.raw.tMaskWhere(this._raw(op), e.unwrap(mask, op, 'mask'), e.unwrap(value, op, 'value')));
  }

  /** `value` where mask is true, else this (torch.masked_fill). mask: bool. */
  maskFill(mask: Tensor, value: number | boolean): Tensor {
    const op = 'maskFill';
    const e = this._e;
    const h = this._raw(op);
    const m = e.unwrap(mask, op, 'mask');
    if (!isScalar(value)) throw fail('Type', `${op}: value must be a number or a boolean, got ${describe(value)}`);
    return e.wrap(e.raw.tMaskFill(h, m, Number(value)));
  }
}
