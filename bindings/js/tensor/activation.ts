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
