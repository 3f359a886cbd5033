// kiln.activation: Burn's burn::tensor::activation as functions of a tensor, over the
// Tensor methods (logSigmoid and softmin compose them).
import { checkInt } from './checks.js';
import type { Engine } from './engine.js';
import type { Dim } from './shape.js';
import type { Tensor } from './tensor.js';

/** Activation functions (Burn's burn::tensor::activation), each `[...] -> [...]` on float32. */
export interface Activation {
  /** max(0, x); gradient 0 at 0 (torch.relu). */
  relu(x: Tensor): Tensor;
  /** x for x >= 0, negativeSlope·x otherwise (default 0.01, torch). */
  leakyRelu(x: Tensor, negativeSlope?: number): Tensor;
  /** 1 / (1 + exp(-x)), exactly 0 and 1 in the far tails without overflow. */
  sigmoid(x: Tensor): Tensor;
  /** log(sigmoid(x)) = -softplus(-x), stable for large |x|. */
  logSigmoid(x: Tensor): Tensor;
  /** Hyperbolic tangent. */
  tanh(x: Tensor): Tensor;
  /** x·Φ(x) (erf form, torch approximate="none"), or the tanh approximation (Hendrycks & Gimpel 2016). */
  gelu(x: Tensor, options?: { approximate?: 'none' | 'tanh' }): Tensor;
  /** x·sigmoid(x) (SiLU / swish). */
  silu(x: Tensor): Tensor;
  /** log(1 + exp(beta·x)) / beta, x where beta·x > threshold (defaults 1, 20; torch.nn.Softplus). @throws `Value` if beta <= 0. */
  softplus(x: Tensor, beta?: number, threshold?: number): Tensor;
  /** Along dim. @throws `Index` for a bad dim. */
  softmax(x: Tensor, dim: Dim): Tensor;
  /** x - max - log Σ exp(x - max) along dim, without forming the softmax. @throws `Index` for a bad dim. */
  logSoftmax(x: Tensor, dim: Dim): Tensor;
  /** softmin(x) = softmax(-x) along dim. */
  softmin(x: Tensor, dim: Dim): Tensor;
  /** scale·(max(0, x) + min(0, alpha·(e^x - 1))), SELU's constants (torch.selu; Klambauer et al. 2017). */
  selu(x: Tensor): Tensor;
  /** x for x > 0, alpha·(e^x - 1) otherwise (default alpha 1; torch.nn.functional.elu). */
  elu(x: Tensor, alpha?: number): Tensor;
  /** max(0, x) + min(0, alpha·(e^(x/alpha) - 1)) (default alpha 1; torch.nn.functional.celu). @throws `Value` if alpha is 0. */
  celu(x: Tensor, alpha?: number): Tensor;
  /** x·tanh(softplus(x)) (torch.nn.functional.mish; Misra 2019). */
  mish(x: Tensor): Tensor;
  /** clamp(x + 3, 0, 6) / 6 (torch.nn.functional.hardsigmoid). */
  hardSigmoid(x: Tensor): Tensor;
  /** x·clamp(x + 3, 0, 6) / 6 (torch.nn.functional.hardswish; MobileNetV3). */
  hardSwish(x: Tensor): Tensor;
  /** a·sigmoid(b) over the halves of dim (default -1; torch.nn.functional.glu): `[..., 2n] -> [..., n]`. @throws `Shape` for an odd size. */
  glu(x: Tensor, dim?: Dim): Tensor;
  /**
   * x for x > 0, weight·x otherwise (torch.nn.functional.prelu): weight `[numParameters]` over
   * dim 1 of x `[batch, C, ...]`, numParameters = C or 1; gradients reach x and weight.
   * @throws `Shape` unless numParameters is 1 or C.
   */
  prelu(x: Tensor, weight: Tensor): Tensor;
}

/** kiln.activation of one engine instance. */
export function activationApi(e: Engine): Activation {
  const act = <A extends unknown[]>(name: string, f: (x: Tensor, ...args: A) => Tensor) =>
    (x: Tensor, ...args: A): Tensor => {
      if (!(x instanceof e.Tensor)) e.unwrap(x, `activation.${name}`, 'x');
      return f(x, ...args);
    };
  return Object.freeze({
    relu: act('relu', (x) => x.relu()),
    leakyRelu: act('leakyRelu', (x, slope: number = 0.01) => x.leakyRelu(slope)),
    sigmoid: act('sigmoid', (x) => x.sigmoid()),
    logSigmoid: act('logSigmoid', (x) => {
      // log σ(x) = -softplus(-x)
      const n = x.neg();
      try {
        const s = n.softplus();
        try {
          return s.neg();
        } finally {
          s.dispose();
        }
      } finally {
        n.dispose();
      }
    }),
    tanh: act('tanh', (x) => x.tanh()),
    gelu: act('gelu', (x, options?: { approximate?: 'none' | 'tanh' }) => x.gelu(options)),
    silu: act('silu', (x) => x.silu()),
    softplus: act('softplus', (x, beta: number = 1, threshold: number = 20) => x.softplus(beta, threshold)),
    softmax: act('softmax', (x, dim: Dim) => x.softmax(dim)),
    logSoftmax: act('logSoftmax', (x, dim: Dim) => x.logSoftmax(dim)),
    selu: act('selu', (x) => x.selu()),
    elu: act('elu', (x, alpha: number = 1) => x.elu(alpha)),
    celu: act('celu', (x, alpha: number = 1) => x.celu(alpha)),
    mish: act('mish', (x) => x.mish()),
    hardSigmoid: act('hardSigmoid', (x) => x.hardSigmoid()),
    hardSwish: act('hardSwish', (x) => x.hardSwish()),
    glu: act('glu', (x, dim: Dim = -1) => x.glu(dim)),
    prelu: act('prelu', (x, weight: Tensor) =>
      e.wrap(e.raw.tPrelu(e.unwrap(x, 'prelu', 'x'), e.unwrap(weight, 'prelu', 'weight')))),
    softmin: act('softmin', (x, dim: Dim) => {
      checkInt(dim, 'softmin', 'dim');
      const n = x.neg();
      try {
        return n.softmax(dim);
      } finally {
        n.dispose();
      }
    }),
  });
}
