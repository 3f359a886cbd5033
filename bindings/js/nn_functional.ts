// kiln.nn.functional: the layers' computations as functions of tensors (PyTorch's
// torch.nn.functional, Burn's burn::tensor::module), so that user modules can hold their own
// parameters: convolutions, pools, dropout with an explicit keep-mask, linear, embedding,
// normalisations, the losses and the activations. Each is one call into the engine
// (bindings/nn_functional.cpp, the losses' lossForward of train_loss.cpp, the Tensor
// methods of kiln.activation); gradients reach every tracked tensor argument. This file checks
// only JS types and fills PyTorch's defaults; values and shapes are checked by the engine,
// whose messages name the op (`conv2d: ...`, `maxPool1d: ...`).
import { camelErrors } from './nn.js';
import type { RawTensor } from './raw.js';
import { type Activation, activationApi } from './tensor/activation.js';
import { checkBool, checkInt, checkNumber, checkOptions, describe, fail } from './tensor/checks.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';
import { binaryCrossEntropy, crossEntropy, huber, mse, smoothL1 } from './train/loss.js';
import { type ResampleFunctional, resampleApi } from './nn_resample.js';
import type { Reduction } from './train_api.js';

/** A size per spatial dim: one number for every dim, or one per dim. */
export type SizeNd<N extends number> = N extends 1
  ? number | readonly [number]
  : N extends 2
    ? number | readonly [number, number]
    : number | readonly [number, number, number];

/** Options of conv1d / conv2d / conv3d (torch.nn.functional.conv1d / 2d / 3d; symmetric zero padding). */
export interface ConvOptions<N extends 1 | 2 | 3> {
  /** Step between output positions (default 1). */
  stride?: SizeNd<N>;
  /** Zeros added on both sides of each spatial dim (default 0; 'valid' is 0). */
  padding?: SizeNd<N> | 'valid';
  /** Spacing between kernel taps (default 1). */
  dilation?: SizeNd<N>;
  /** Channel groups (default 1): in and out channels split into groups convolved separately. */
  groups?: number;
}

/** Options of convTranspose2d (torch.nn.functional.conv_transpose2d). */
export interface ConvTranspose2dOptions {
  stride?: SizeNd<2>;
  /** Removed from both sides of the output (default 0). */
  padding?: SizeNd<2>;
  /** Added to the end side of the output: PyTorch's output_padding (default 0; < stride or dilation). */
  paddingOut?: SizeNd<2>;
  dilation?: SizeNd<2>;
  groups?: number;
}

/** Options of convTranspose1d / convTranspose3d (torch.nn.functional.conv_transpose1d / 3d). */
export interface ConvTransposeOptions<N extends 1 | 3> {
  /** Step between input positions in the output (default 1). */
  stride?: SizeNd<N>;
  /** Removed from both sides of the output (default 0). */
  padding?: SizeNd<N>;
  /** Added to the end side of the output: PyTorch's output_padding (default 0; < stride or dilation). */
  paddingOut?: SizeNd<N>;
  /** Spacing between kernel taps (default 1). */
  dilation?: SizeNd<N>;
  /** Channel groups (default 1). */
  groups?: number;
}

/** Options of maxPool1d / maxPool2d (torch.nn.functional.max_pool1d / 2d). */
export interface MaxPoolOptions<N extends 1 | 2> {
  kernelSize: SizeNd<N>;
  /** Default: kernelSize. */
  stride?: SizeNd<N>;
  /** -inf padding on both sides, at most kernelSize / 2 (default 0). */
  padding?: SizeNd<N>;
  dilation?: SizeNd<N>;
  /** Ceil instead of floor in the output-size rule; a last window starting in the right padding is dropped. */
  ceilMode?: boolean;
}

/** Options of avgPool1d / avgPool2d (torch.nn.functional.avg_pool1d / 2d). */
export interface AvgPoolOptions<N extends 1 | 2> {
  kernelSize: SizeNd<N>;
  /** Default: kernelSize. */
  stride?: SizeNd<N>;
  /** Zero padding on both sides, at most kernelSize / 2 (default 0). */
  padding?: SizeNd<N>;
  /** Divide by the window size including padding (default true) or by the elements inside. */
  countIncludePad?: boolean;
  ceilMode?: boolean;
}

/** Affine parameters and epsilon of a normalisation. */
export interface NormOptions {
  weight?: Tensor | null;
  bias?: Tensor | null;
  /** Added to the variance inside the square root (default 1e-5). */
  epsilon?: number;
}

/** Options of batchNorm (torch.nn.functional.batch_norm). */
export interface BatchNormOptions extends NormOptions {
  /** Batch statistics and updated running statistics (true), or the running statistics (false, default). */
  training?: boolean;
  /** running = (1 - momentum)·running + momentum·batch (default 0.1). */
  momentum?: number;
}

/** What batchNorm returns in training mode: the output and the updated running statistics. */
export interface BatchNormResult {
  output: Tensor;
  runningMean: Tensor | null;
  runningVar: Tensor | null;
}

/**
 * kiln.nn.functional: the layers as functions of tensors (torch.nn.functional). Float32
 * inputs; every result carries the autodiff graph of its tracked arguments (inside
 * kiln.noGrad none). Errors are KilnErrors naming the op: `Rank`/`Shape` for inputs that do
 * not fit, `Config`/`Value` for bad sizes or probabilities, `Type` for JS values of the wrong
 * type, `DType` for a wrong dtype. The activations are kiln.activation's.
 */
export interface NnFunctional extends Activation, ResampleFunctional {
  /**
   * 1-D convolution: x `[batch, cIn, length]`, weight `[cOut, cIn / groups, k]`, bias `[cOut]`
   * -> `[batch, cOut, floor((length + 2·padding - dilation·(k - 1) - 1) / stride) + 1]`.
   * torch.nn.functional.conv1d.
   */
  conv1d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvOptions<1>): Tensor;
  /**
   * 2-D convolution: x `[batch, cIn, h, w]`, weight `[cOut, cIn / groups, kh, kw]`, bias `[cOut]`
   * -> `[batch, cOut, h', w']` (per dim as conv1d). torch.nn.functional.conv2d.
   */
  conv2d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvOptions<2>): Tensor;
  /**
   * Transposed 2-D convolution: x `[batch, cIn, h, w]`, weight `[cIn, cOut / groups, kh, kw]`,
   * bias `[cOut]` -> `[batch, cOut, (h - 1)·stride - 2·padding + dilation·(kh - 1) + paddingOut + 1, ...]`.
   * torch.nn.functional.conv_transpose2d.
   */
  convTranspose2d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTranspose2dOptions): Tensor;
  /**
   * 3-D convolution: x `[batch, cIn, d, h, w]`, weight `[cOut, cIn / groups, kd, kh, kw]`, bias
   * `[cOut]` -> `[batch, cOut, d', h', w']` (per dim as conv1d). torch.nn.functional.conv3d.
   * @throws KilnError `Shape` (channels, kernel larger than the padded input), `Rank`, `Config`.
   */
  conv3d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvOptions<3>): Tensor;
  /**
   * Transposed 1-D convolution: x `[batch, cIn, length]`, weight `[cIn, cOut / groups, k]`, bias
   * `[cOut]` -> `[batch, cOut, (length - 1)·stride - 2·padding + dilation·(k - 1) + paddingOut + 1]`.
   * torch.nn.functional.conv_transpose1d.
   * @throws KilnError `Shape`, `Rank`, `Config` (paddingOut not below stride or dilation).
   */
  convTranspose1d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTransposeOptions<1>): Tensor;
  /**
   * Transposed 3-D convolution: x `[batch, cIn, d, h, w]`, weight `[cIn, cOut / groups, kd, kh, kw]`,
   * bias `[cOut]` -> `[batch, cOut, d', h', w']` (per dim as convTranspose1d).
   * torch.nn.functional.conv_transpose3d.
   * @throws KilnError `Shape`, `Rank`, `Config`.
   */
  convTranspose3d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTransposeOptions<3>): Tensor;
  /** `[batch, c, length] -> [batch, c, length']`; gradient to the first maximum of each window. torch.nn.functional.max_pool1d. */
  maxPool1d(x: Tensor, options: MaxPoolOptions<1>): Tensor;
  /** `[batch, c, h, w] -> [batch, c, h', w']`. torch.nn.functional.max_pool2d. */
  maxPool2d(x: Tensor, options: MaxPoolOptions<2>): Tensor;
  /** `[batch, c, length] -> [batch, c, length']`. torch.nn.functional.avg_pool1d. */
  avgPool1d(x: Tensor, options: AvgPoolOptions<1>): Tensor;
  /** `[batch, c, h, w] -> [batch, c, h', w']`. torch.nn.functional.avg_pool2d. */
  avgPool2d(x: Tensor, options: AvgPoolOptions<2>): Tensor;
  /** `[batch, c, length] -> [batch, c, outputSize]`, windows [floor(i·L/out), ceil((i+1)·L/out)). torch.nn.functional.adaptive_avg_pool1d. */
  adaptiveAvgPool1d(x: Tensor, outputSize: SizeNd<1>): Tensor;
  /** `[batch, c, h, w] -> [batch, c, outH, outW]`. torch.nn.functional.adaptive_avg_pool2d. */
  adaptiveAvgPool2d(x: Tensor, outputSize: SizeNd<2>): Tensor;
  /**
   * Inverted dropout (any shape): x·mask/(1 - p) with the given keep-mask (float32 or bool of
   * x's shape, 1 = keep) or one drawn from the engine's generator (kiln.seed); zeros for
   * p = 1; x itself when `training` is false. Default p 0.5, training true.
   * torch.nn.functional.dropout.
   */
  dropout(x: Tensor, options?: { p?: number; mask?: Tensor; training?: boolean }): Tensor;
  /** x `[..., dIn]`, weight `[dOut, dIn]`, bias `[dOut]` -> `[..., dOut]`: x·Wᵀ + b. torch.nn.functional.linear. */
  linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor;
  /**
   * Rows of weight `[n, d]` for int32 indices `[...]` (rank 1 to 3) -> `[..., d]`; the
   * paddingIdx row (negative counts from the end) gets no gradient. @throws `Index` for an
   * index outside [0, n). torch.nn.functional.embedding.
   */
  embedding(indices: Tensor, weight: Tensor, options?: { paddingIdx?: number }): Tensor;
  /** Normalises the trailing dims normalizedShape (weight, bias of that shape). torch.nn.functional.layer_norm. */
  layerNorm(x: Tensor, normalizedShape: number | readonly number[], options?: NormOptions): Tensor;
  /** x `[batch, c, ...]` in numGroups groups of channels; weight, bias `[c]`. torch.nn.functional.group_norm. */
  groupNorm(x: Tensor, numGroups: number, options?: NormOptions): Tensor;
  /**
   * Batch normalisation over dim 1 of x `[batch, c, ...]` (rank 2 to 5) with running
   * statistics `[c]` (null: batch statistics only). In training mode returns the output and
   * the updated running statistics as new tensors (PyTorch updates its buffers in place).
   * torch.nn.functional.batch_norm.
   */
  batchNorm(x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options?: BatchNormOptions & { training?: false }): Tensor;
  batchNorm(x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options: BatchNormOptions & { training: true }): BatchNormResult;
  /** Cross-entropy of logits `[batch, classes]` and int32 targets `[batch]` -> `[1]` (`[batch]` for 'none'). torch.nn.functional.cross_entropy. */
  crossEntropy(logits: Tensor, targets: Tensor, options?: { labelSmoothing?: number; weights?: number[]; ignoreIndex?: number; reduction?: Reduction }): Tensor;
  /** Mean squared error, same shapes. torch.nn.functional.mse_loss. */
  mse(input: Tensor, target: Tensor, options?: { reduction?: Reduction }): Tensor;
  /**
   * BCE on probabilities in [0, 1] (logs clamped at -100), times a per-element `weight` (x's
   * shape, broadcast as PyTorch's). torch.nn.functional.binary_cross_entropy.
   */
  binaryCrossEntropy(input: Tensor, target: Tensor, options?: { weight?: Tensor; labelSmoothing?: number; reduction?: Reduction }): Tensor;
  /**
   * BCE on logits, stable for any magnitude; posWeight (per label of the last dim, or one
   * number) weights the positive term, `weight` each element.
   * torch.nn.functional.binary_cross_entropy_with_logits.
   */
  binaryCrossEntropyWithLogits(logits: Tensor, target: Tensor, options?: { weight?: Tensor; posWeight?: Tensor | number | readonly number[]; labelSmoothing?: number; reduction?: Reduction }): Tensor;
  /** Huber loss, delta > 0 (default 1). torch.nn.functional.huber_loss. */
  huber(input: Tensor, target: Tensor, options?: { delta?: number; reduction?: Reduction }): Tensor;
  /** Smooth L1 loss, beta >= 0 (default 1; 0 is L1). torch.nn.functional.smooth_l1_loss. */
  smoothL1(input: Tensor, target: Tensor, options?: { beta?: number; reduction?: Reduction }): Tensor;
}

/** Checks an options object: a plain object whose keys are all in `allowed`. */
function opts<T extends object>(v: unknown, op: string, allowed: readonly string[]): Partial<T> {
  const o = checkOptions<T>(v, op);
  for (const key of Object.keys(o)) {
    if (!allowed.includes(key)) throw fail('Type', `${op}: unknown option "${key}" (options: ${allowed.join(', ')})`);
  }
  return o;
}

/** One integer for every dim, or one per dim -> `n` integers. */
function sizes(v: unknown, n: number, op: string, what: string, dflt?: number[]): number[] {
  if (v === undefined && dflt !== undefined) return dflt;
  if (typeof v === 'number') return new Array<number>(n).fill(checkInt(v, op, what));
  if (Array.isArray(v) && v.length === n) return Array.from(v as unknown[], (x: unknown, i: number) => checkInt(x, op, `${what}[${i}]`));
  throw fail('Type', `${op}: ${what} must be an integer${n > 1 ? ` or ${n} integers` : ''}, got ${describe(v)}`);
}

/** kiln.nn.functional of one engine instance. */
export function functionalApi(e: Engine): NnFunctional {
  const raw = e.raw;
  const t = (v: unknown, op: string, what: string): RawTensor => e.unwrap(v, op, what);
  const optT = (v: unknown, op: string, what: string): RawTensor | null => (v === undefined || v === null ? null : t(v, op, what));
  const call = (f: () => RawTensor): Tensor => e.wrap(camelErrors(f));

  function conv(dims: 1 | 2, x: unknown, weight: unknown, bias: unknown, options: unknown): Tensor {
    const op = `conv${dims}d`;
    const o = opts<ConvOptions<2>>(options, op, ['stride', 'padding', 'dilation', 'groups']);
    const ones = new Array<number>(dims).fill(1);
    const padding = o.padding === 'valid' ? new Array<number>(dims).fill(0) : sizes(o.padding, dims, op, 'padding', new Array<number>(dims).fill(0));
    const stride = sizes(o.stride, dims, op, 'stride', ones);
    const dilation = sizes(o.dilation, dims, op, 'dilation', ones);
    const groups = o.groups === undefined ? 1 : checkInt(o.groups, op, 'groups');
    const hx = t(x, op, 'x');
    const hw = t(weight, op, 'weight');
    const hb = optT(bias, op, 'bias');
    return call(() => raw.fConv(hx, hw, hb, stride, padding, dilation, groups, dims));
  }

  function conv3d(x: unknown, weight: unknown, bias: unknown, options: unknown): Tensor {
    const op = 'conv3d';
    const o = opts<ConvOptions<3>>(options, op, ['stride', 'padding', 'dilation', 'groups']);
    const padding = o.padding === 'valid' ? [0, 0, 0] : sizes(o.padding, 3, op, 'padding', [0, 0, 0]);
    const stride = sizes(o.stride, 3, op, 'stride', [1, 1, 1]);
    const dilation = sizes(o.dilation, 3, op, 'dilation', [1, 1, 1]);
    const groups = o.groups === undefined ? 1 : checkInt(o.groups, op, 'groups');
    const hx = t(x, op, 'x');
    const hw = t(weight, op, 'weight');
    const hb = optT(bias, op, 'bias');
    return call(() => raw.fConv3d(hx, hw, hb, stride, padding, dilation, groups));
  }

  function convTranspose(dims: 1 | 3, x: unknown, weight: unknown, bias: unknown, options: unknown): Tensor {
    const op = `convTranspose${dims}d`;
    const o = opts<ConvTransposeOptions<3>>(options, op, ['stride', 'padding', 'paddingOut', 'dilation', 'groups']);
    const zeros = new Array<number>(dims).fill(0);
    const ones = new Array<number>(dims).fill(1);
    const stride = sizes(o.stride, dims, op, 'stride', ones);
    const padding = sizes(o.padding, dims, op, 'padding', zeros);
    const paddingOut = sizes(o.paddingOut, dims, op, 'paddingOut', zeros);
    const dilation = sizes(o.dilation, dims, op, 'dilation', ones);
    const groups = o.groups === undefined ? 1 : checkInt(o.groups, op, 'groups');
    const hx = t(x, op, 'x');
    const hw = t(weight, op, 'weight');
    const hb = optT(bias, op, 'bias');
    return call(() => raw.fConvTransposeNd(hx, hw, hb, stride, padding, paddingOut, dilation, groups, dims));
  }

  function maxPool(dims: 1 | 2, x: unknown, options: unknown): Tensor {
    const op = `maxPool${dims}d`;
    const o = opts<MaxPoolOptions<2>>(options, op, ['kernelSize', 'stride', 'padding', 'dilation', 'ceilMode']);
    const kernel = sizes(o.kernelSize, dims, op, 'kernelSize');
    const stride = sizes(o.stride, dims, op, 'stride', kernel);
    const padding = sizes(o.padding, dims, op, 'padding', new Array<number>(dims).fill(0));
    const dilation = sizes(o.dilation, dims, op, 'dilation', new Array<number>(dims).fill(1));
    const ceil = o.ceilMode === undefined ? false : checkBool(o.ceilMode, op, 'ceilMode');
    const hx = t(x, op, 'x');
    return call(() => raw.fMaxPool(hx, kernel, stride, padding, dilation, ceil, dims));
  }

  function avgPool(dims: 1 | 2, x: unknown, options: unknown): Tensor {
    const op = `avgPool${dims}d`;
    const o = opts<AvgPoolOptions<2>>(options, op, ['kernelSize', 'stride', 'padding', 'countIncludePad', 'ceilMode']);
    const kernel = sizes(o.kernelSize, dims, op, 'kernelSize');
    const stride = sizes(o.stride, dims, op, 'stride', kernel);
    const padding = sizes(o.padding, dims, op, 'padding', new Array<number>(dims).fill(0));
    const include = o.countIncludePad === undefined ? true : checkBool(o.countIncludePad, op, 'countIncludePad');
    const ceil = o.ceilMode === undefined ? false : checkBool(o.ceilMode, op, 'ceilMode');
    const hx = t(x, op, 'x');
    return call(() => raw.fAvgPool(hx, kernel, stride, padding, include, ceil, dims));
  }

  function adaptive(dims: 1 | 2, x: unknown, outputSize: unknown): Tensor {
    const op = `adaptiveAvgPool${dims}d`;
    const out = sizes(outputSize, dims, op, 'outputSize');
    const hx = t(x, op, 'x');
    return call(() => raw.fAdaptiveAvgPool(hx, out, dims));
  }

  function normOptions(o: Partial<NormOptions>, op: string): { w: RawTensor | null; b: RawTensor | null; eps: number } {
    return {
      w: optT(o.weight, op, 'weight'),
      b: optT(o.bias, op, 'bias'),
      eps: o.epsilon === undefined ? 1e-5 : checkNumber(o.epsilon, op, 'epsilon'),
    };
  }

  /** losses(reduction 'none') · weight, reduced as `reduction` (PyTorch's weighted BCE). */
  function weighted(losses: Tensor, weight: Tensor, reduction: unknown): Tensor {
    const w = losses.mul(weight);
    if (reduction === 'none') {
      losses.dispose();
      return w;
    }
    try {
      const r = reduction === 'sum' ? w.sum() : w.mean();
      try {
        return r.reshape([1]);
      } finally {
        r.dispose();
      }
    } finally {
      w.dispose();
      losses.dispose();
    }
  }

  function bce(logits: boolean, input: unknown, target: unknown, options: unknown): Tensor {
    const op = logits ? 'binaryCrossEntropyWithLogits' : 'binaryCrossEntropy';
    const allowed = logits ? ['weight', 'posWeight', 'labelSmoothing', 'reduction'] : ['weight', 'labelSmoothing', 'reduction'];
    const o = opts<{ weight: Tensor; posWeight: unknown; labelSmoothing: number; reduction: Reduction }>(options, op, allowed);
    const config: Record<string, unknown> = { logits };
    if (o.labelSmoothing !== undefined) config.labelSmoothing = o.labelSmoothing;
    if (o.posWeight !== undefined) {
      const pw = o.posWeight;
      if (typeof pw === 'number') config.posWeight = [pw];
      else if (pw instanceof e.Tensor) config.posWeight = Array.from((pw as Tensor).dataSync() as Float32Array);
      else config.posWeight = pw;
    }
    if (o.weight === undefined || o.weight === null) {
      if (o.reduction !== undefined) config.reduction = o.reduction;
      return binaryCrossEntropy(e, config).forward(input as Tensor, target as Tensor);
    }
    t(o.weight, op, 'weight');
    if (o.reduction !== undefined && o.reduction !== 'mean' && o.reduction !== 'sum' && o.reduction !== 'none') {
      throw fail('Config', `${op}: reduction must be "mean", "sum" or "none", got ${describe(o.reduction)}`);
    }
    const losses = binaryCrossEntropy(e, { ...config, reduction: 'none' }).forward(input as Tensor, target as Tensor);
    return weighted(losses, o.weight, o.reduction ?? 'mean');
  }

  const f = {
    ...activationApi(e),
    conv1d: (x: Tensor, w: Tensor, b?: Tensor | null, o?: ConvOptions<1>) => conv(1, x, w, b, o),
    conv2d: (x: Tensor, w: Tensor, b?: Tensor | null, o?: ConvOptions<2>) => conv(2, x, w, b, o),
    convTranspose2d(x: Tensor, weight: Tensor, bias?: Tensor | null, options?: ConvTranspose2dOptions): Tensor {
      const op = 'convTranspose2d';
      const o = opts<ConvTranspose2dOptions>(options, op, ['stride', 'padding', 'paddingOut', 'dilation', 'groups']);
      const stride = sizes(o.stride, 2, op, 'stride', [1, 1]);
      const padding = sizes(o.padding, 2, op, 'padding', [0, 0]);
      const paddingOut = sizes(o.paddingOut, 2, op, 'paddingOut', [0, 0]);
      const dilation = sizes(o.dilation, 2, op, 'dilation', [1, 1]);
      const groups = o.groups === undefined ? 1 : checkInt(o.groups, op, 'groups');
      const hx = t(x, op, 'x');
      const hw = t(weight, op, 'weight');
      const hb = optT(bias, op, 'bias');
      return call(() => raw.fConvTranspose2d(hx, hw, hb, stride, padding, paddingOut, dilation, groups));
    },
    conv3d: (x: Tensor, w: Tensor, b?: Tensor | null, o?: ConvOptions<3>) => conv3d(x, w, b, o),
    convTranspose1d: (x: Tensor, w: Tensor, b?: Tensor | null, o?: ConvTransposeOptions<1>) => convTranspose(1, x, w, b, o),
    convTranspose3d: (x: Tensor, w: Tensor, b?: Tensor | null, o?: ConvTransposeOptions<3>) => convTranspose(3, x, w, b, o),
    maxPool1d: (x: Tensor, o: MaxPoolOptions<1>) => maxPool(1, x, o),
    maxPool2d: (x: Tensor, o: MaxPoolOptions<2>) => maxPool(2, x, o),
    avgPool1d: (x: Tensor, o: AvgPoolOptions<1>) => avgPool(1, x, o),
    avgPool2d: (x: Tensor, o: AvgPoolOptions<2>) => avgPool(2, x, o),
    adaptiveAvgPool1d: (x: Tensor, out: SizeNd<1>) => adaptive(1, x, out),
    adaptiveAvgPool2d: (x: Tensor, out: SizeNd<2>) => adaptive(2, x, out),
    dropout(x: Tensor, options?: { p?: number; mask?: Tensor; training?: boolean }): Tensor {
      const op = 'dropout';
      const o = opts<{ p: number; mask: Tensor; training: boolean }>(options, op, ['p', 'mask', 'training']);
      const p = o.p === undefined ? 0.5 : checkNumber(o.p, op, 'p');
      const training = o.training === undefined ? true : checkBool(o.training, op, 'training');
      const hx = t(x, op, 'x');
      const hm = optT(o.mask, op, 'mask');
      return call(() => raw.fDropout(hx, p, hm, training));
    },
    linear(x: Tensor, weight: Tensor, bias?: Tensor | null): Tensor {
      const op = 'linear';
      const hx = t(x, op, 'x');
      const hw = t(weight, op, 'weight');
      const hb = optT(bias, op, 'bias');
      return call(() => raw.fLinear(hx, hw, hb));
    },
    embedding(indices: Tensor, weight: Tensor, options?: { paddingIdx?: number }): Tensor {
      const op = 'embedding';
      const o = opts<{ paddingIdx: number }>(options, op, ['paddingIdx']);
      const pad = o.paddingIdx === undefined || o.paddingIdx === null ? null : checkInt(o.paddingIdx, op, 'paddingIdx');
      const hi = t(indices, op, 'indices');
      const hw = t(weight, op, 'weight');
      return call(() => raw.fEmbedding(hi, hw, pad));
    },
    layerNorm(x: Tensor, normalizedShape: number | readonly number[], options?: NormOptions): Tensor {
      const op = 'layerNorm';
      const ns = typeof normalizedShape === 'number' ? [checkInt(normalizedShape, op, 'normalizedShape')]
        : Array.isArray(normalizedShape) ? Array.from(normalizedShape as unknown[], (d: unknown, i: number) => checkInt(d, op, `normalizedShape[${i}]`))
          : (() => { throw fail('Type', `${op}: normalizedShape must be an integer or an array of integers, got ${describe(normalizedShape)}`); })();
      const { w, b, eps } = normOptions(opts<NormOptions>(options, op, ['weight', 'bias', 'epsilon']), op);
      const hx = t(x, op, 'x');
      return call(() => raw.fLayerNorm(hx, ns, w, b, eps));
    },
    groupNorm(x: Tensor, numGroups: number, options?: NormOptions): Tensor {
      const op = 'groupNorm';
      const g = checkInt(numGroups, op, 'numGroups');
      const { w, b, eps } = normOptions(opts<NormOptions>(options, op, ['weight', 'bias', 'epsilon']), op);
      const hx = t(x, op, 'x');
      return call(() => raw.fGroupNorm(hx, g, w, b, eps));
    },
    batchNorm(x: Tensor, runningMean: Tensor | null, runningVar: Tensor | null, options?: BatchNormOptions): Tensor | BatchNormResult {
      const op = 'batchNorm';
      const o = opts<BatchNormOptions>(options, op, ['weight', 'bias', 'epsilon', 'training', 'momentum']);
      const { w, b, eps } = normOptions(o, op);
      const training = o.training === undefined ? false : checkBool(o.training, op, 'training');
      const momentum = o.momentum === undefined ? 0.1 : checkNumber(o.momentum, op, 'momentum');
      const hx = t(x, op, 'x');
      const hm = optT(runningMean, op, 'runningMean');
      const hv = optT(runningVar, op, 'runningVar');
      const [out, mean, variance, hasStats] = camelErrors(() => raw.fBatchNorm(hx, hm, hv, w, b, training, momentum, eps));
      if (!training || !hasStats) {
        mean.delete();
        variance.delete();
        const output = e.wrap(out);
        return training ? { output, runningMean: null, runningVar: null } : output;
      }
      const [output, newMean, newVar] = e.wrapAll([out, mean, variance]);
      return { output, runningMean: newMean, runningVar: newVar };
    },
    crossEntropy: (logits: Tensor, targets: Tensor, options?: object) => crossEntropy(e, options).forward(logits, targets),
    mse: (input: Tensor, target: Tensor, options?: object) => mse(e, options).forward(input, target),
    binaryCrossEntropy: (input: Tensor, target: Tensor, options?: object) => bce(false, input, target, options),
    binaryCrossEntropyWithLogits: (logits: Tensor, target: Tensor, options?: object) => bce(true, logits, target, options),
    huber: (input: Tensor, target: Tensor, options?: object) => huber(e, options).forward(input, target),
    smoothL1: (input: Tensor, target: Tensor, options?: object) => smoothL1(e, options).forward(input, target),
    ...resampleApi(e),
  };
  return Object.freeze(f) as unknown as NnFunctional;
}
