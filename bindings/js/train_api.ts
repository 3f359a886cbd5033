/// <reference lib="esnext.disposable" preserve="true" />
// The data types of kiln-dl's models and training API: layer specs, options, logs, and the
// shapes of the namespace objects kiln.nn, kiln.loss, kiln.optim and kiln.data. The classes
// (Sequential, Layer, Loss, Schedule, Optimizer, Dataset, Learner) declare themselves in
// nn.ts and train.ts. Semantics
// are PyTorch's unless stated (torch.nn.Sequential, torch.optim, ...); names are Burn's in
// camelCase. Errors are KilnError with the code named in @throws.
import type { Layer, Model, Sequential } from './nn.js';
import type { Module } from './module_class.js';
import type { NnFunctional } from './nn_functional.js';
import type { Dataset, Learner, Loss, Optimizer, Schedule } from './train.js';
import type { ReduceLROnPlateau } from './train/optim.js';
import type { Accuracy, LearningRate, Loss as LossMetric, Metric, TopKAccuracy } from './train/metrics.js';
import type { GradientsAccumulator, ParamSource } from './train/accumulator.js';
import type { Gradients } from './tensor/gradients.js';
import type { Tensor } from './tensor/tensor.js';
import type { StepFn } from './train/learner_loop.js';
import type { GruLayer, LstmLayer } from './nn_recurrent.js';
export type { GruLayer, GruState, LstmLayer, LstmState } from './nn_recurrent.js';
import type { CheckpointerOptions, EarlyStoppingOptions } from './train/learner_support.js';
import type { AttentionMasks, DecoderMasks, MhaInput, MhaOutput } from './nn_attention.js';
export type { AttentionMasks, DecoderMasks, MhaInput, MhaOutput } from './nn_attention.js';

// ---------------------------------------------------------------- layer specs

/** A {height, width} size: `[h, w]` or one number for both. */
export type Size2d = number | readonly [number, number];

/**
 * The weights' initializer, in Burn's JSON form (kiln/module/initializer.hpp), e.g.
 * `"Ones"`, `{Constant: {value: 0.5}}`, `{KaimingUniform: {gain: 0.577, fan_out_only: false}}`,
 * `{XavierNormal: {gain: 1}}`, `{Uniform: {min: -1, max: 1}}`. Default: PyTorch's.
 */
export type Initializer = string | Record<string, unknown>;

/** `[batch, dInput] -> [batch, dOutput]` (any rank: acts on the last dim). torch.nn.Linear. */
export interface LinearSpec { type: 'linear'; dInput: number; dOutput: number; bias?: boolean; initializer?: Initializer }
/** Inverted dropout with probability `prob` in [0, 1] while training; identity in eval(). */
export interface DropoutSpec { type: 'dropout'; prob: number }
/** Element-wise activations, any shape. */
export interface ActivationSpec { type: 'relu' | 'sigmoid' | 'tanh' | 'silu' }
/** GELU, exact (erf) or with the tanh approximation. */
export interface GeluSpec { type: 'gelu'; approximate?: boolean }
/** max(x, 0) + negativeSlope·min(x, 0); negativeSlope defaults to 0.01. */
export interface LeakyReluSpec { type: 'leakyRelu'; negativeSlope?: number }
/**
 * `[batch, ...] -> [batch, ...shape]` (per-item shape; 1 to 4 dims, one may be -1).
 * torch.nn.Unflatten(1, shape) on `[batch, n]`.
 */
export interface ReshapeSpec { type: 'reshape'; shape: readonly number[] }
/** Flattens dims startDim..endDim (default 1..-1: `[batch, c, h, w] -> [batch, c·h·w]`). torch.nn.Flatten. */
export interface FlattenSpec { type: 'flatten'; startDim?: number; endDim?: number }
/**
 * `[batch, channels[0], h, w] -> [batch, channels[1], h', w']`, h' = floor((h + 2p -
 * dilation·(k - 1) - 1) / stride) + 1. padding: 'valid' (default), 'same' (stride 1 only) or
 * explicit sizes. torch.nn.Conv2d (padding_mode 'zeros'); weight `[out, in / groups, kh, kw]`.
 */
export interface Conv2dSpec {
  type: 'conv2d'; channels: readonly [number, number]; kernelSize: Size2d; stride?: Size2d;
  padding?: 'valid' | 'same' | Size2d; dilation?: Size2d; groups?: number; bias?: boolean;
  initializer?: Initializer;
}
/** `[batch, channels[0], length] -> [batch, channels[1], length']`. torch.nn.Conv1d. */
export interface Conv1dSpec {
  type: 'conv1d'; channels: readonly [number, number]; kernelSize: number; stride?: number;
  padding?: 'valid' | 'same' | number; dilation?: number; groups?: number; bias?: boolean;
  initializer?: Initializer;
}
/** `[batch, c, h, w] -> [batch, c, h', w']`; stride defaults to kernelSize. torch.nn.MaxPool2d. */
export interface MaxPool2dSpec {
  type: 'maxPool2d'; kernelSize: Size2d; stride?: Size2d; padding?: Size2d; dilation?: Size2d; ceilMode?: boolean;
}
/** `[batch, c, h, w] -> [batch, c, h', w']`; stride defaults to kernelSize. torch.nn.AvgPool2d. */
export interface AvgPool2dSpec {
  type: 'avgPool2d'; kernelSize: Size2d; stride?: Size2d; padding?: Size2d; countIncludePad?: boolean; ceilMode?: boolean;
}
/** `[batch, c, h, w] -> [batch, c, outputSize]`. torch.nn.AdaptiveAvgPool2d. */
export interface AdaptiveAvgPool2dSpec { type: 'adaptiveAvgPool2d'; outputSize: Size2d }
/**
 * Normalises dim 1 of `[batch, numFeatures]` or `[batch, numFeatures, ...]` (ranks 2 to 4):
 * batch statistics while training (running statistics updated, the variance unbiased),
 * running statistics in eval(). torch.nn.BatchNorm1d/2d; records weight, bias,
 * running_mean, running_var, num_batches_tracked.
 */
export interface BatchNormSpec {
  type: 'batchNorm'; numFeatures: number; epsilon?: number;
  /** Default 0.1; null: the cumulative average of the batch statistics (PyTorch's momentum=None). */
  momentum?: number | null;
}
/**
 * Normalises the last dim (size dModel), or the trailing dims normalizedShape (1 to 3 dims;
 * weight and bias of that shape). torch.nn.LayerNorm(normalizedShape).
 */
export type LayerNormSpec =
  | { type: 'layerNorm'; dModel: number; normalizedShape?: readonly number[] | null; epsilon?: number; elementwiseAffine?: boolean }
  | { type: 'layerNorm'; dModel?: number; normalizedShape: readonly number[]; epsilon?: number; elementwiseAffine?: boolean };
/**
 * Normalises dim 1 ([batchSize, numChannels, ...]) in numGroups groups of channels, with a
 * per-channel affine when `affine` (default true). torch.nn.GroupNorm(numGroups, numChannels, eps).
 */
export interface GroupNormSpec { type: 'groupNorm'; numGroups: number; numChannels: number; epsilon?: number; affine?: boolean }

/**
 * A lookup table: int32 indices `[batch, seqLength]` -> `[batch, seqLength, dModel]` (first in
 * a Sequential; Sequential.forward takes the int32 indices). The paddingIdx row (in
 * [-nEmbedding, nEmbedding), negative from the end) starts at 0 and gets no gradient.
 * torch.nn.Embedding(nEmbedding, dModel, padding_idx); weight `[nEmbedding, dModel]`.
 */
export interface EmbeddingSpec { type: 'embedding'; nEmbedding: number; dModel: number; paddingIdx?: number | null; initializer?: Initializer }
/**
 * `[batch, channels[0], h, w] -> [batch, channels[1], (h - 1)·stride - 2·padding +
 * dilation·(k - 1) + paddingOut + 1, ...]`. torch.nn.ConvTranspose2d (paddingOut is
 * output_padding); weight `[in, out / groups, kh, kw]`.
 */
export interface ConvTranspose2dSpec {
  type: 'convTranspose2d'; channels: readonly [number, number]; kernelSize: Size2d; stride?: Size2d;
  padding?: Size2d; paddingOut?: Size2d; dilation?: Size2d; groups?: number; bias?: boolean; initializer?: Initializer;
}
/** Each channel of each sample normalised over its positions (`[batch, numChannels, ...]`, ranks 3 to 4). torch.nn.InstanceNorm1d/2d (affine default true, as Burn). */
export interface InstanceNormSpec { type: 'instanceNorm'; numChannels: number; epsilon?: number; affine?: boolean }
/** x / sqrt(mean(x²) + epsilon) · weight over the last dim (size dModel). torch.nn.RMSNorm([dModel]). */
export interface RmsNormSpec { type: 'rmsNorm'; dModel: number; epsilon?: number }
/** `[batch, c, length] -> [batch, c, length']`; stride defaults to kernelSize. torch.nn.MaxPool1d. */
export interface MaxPool1dSpec { type: 'maxPool1d'; kernelSize: number; stride?: number; padding?: number; dilation?: number; ceilMode?: boolean }
/** `[batch, c, length] -> [batch, c, length']`; stride defaults to kernelSize. torch.nn.AvgPool1d. */
export interface AvgPool1dSpec { type: 'avgPool1d'; kernelSize: number; stride?: number; padding?: number; countIncludePad?: boolean; ceilMode?: boolean }
/** `[batch, c, length] -> [batch, c, outputSize]`. torch.nn.AdaptiveAvgPool1d. */
export interface AdaptiveAvgPool1dSpec { type: 'adaptiveAvgPool1d'; outputSize: number }
/**
 * `[batch, seqLength, dInput] -> [batch, seqLength, D·dHidden]` (D = 2 when bidirectional):
 * the output sequence from a zero state (the layer's forwardWithState takes and returns the
 * state). torch.nn.LSTM(dInput, dHidden, numLayers, bias, batch_first=True, dropout,
 * bidirectional); keys weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse, ..._l1.
 */
export interface LstmSpec { type: 'lstm'; dInput: number; dHidden: number; bias: boolean; numLayers?: number; bidirectional?: boolean; dropout?: number }
/** As LstmSpec for torch.nn.GRU (gates r|z|n, the reset gate applied to W_hn·h + b_hn). */
export interface GruSpec { type: 'gru'; dInput: number; dHidden: number; bias: boolean; numLayers?: number; bidirectional?: boolean; dropout?: number }
/**
 * Multi-head self-attention `[batch, seq, dModel] -> [batch, seq, dModel]` in a Sequential;
 * the layer's attend() takes query/key/value and masks. torch.nn.MultiheadAttention(dModel,
 * nHeads, batch_first=True) (keys inProjWeight... as PyTorch's in_proj_weight, out_proj.*);
 * dropout (on the weights, training only) defaults to 0.1 as Burn's.
 */
export interface MultiHeadAttentionSpec { type: 'multiHeadAttention'; dModel: number; nHeads: number; dropout?: number; bias?: boolean }
/** Shared fields of transformerEncoder and transformerDecoder (Burn's configs; activation 'gelu' by default as Burn, PyTorch's is 'relu'). */
interface TransformerFields { dModel: number; dFf: number; nHeads: number; nLayers: number; dropout?: number; normFirst?: boolean; activation?: 'relu' | 'gelu'; layerNormEps?: number }
/** `[batch, seq, dModel] -> same`. torch.nn.TransformerEncoder(TransformerEncoderLayer(batch_first=True), nLayers). */
export interface TransformerEncoderSpec extends TransformerFields { type: 'transformerEncoder' }
/** torch.nn.TransformerDecoder(TransformerDecoderLayer(batch_first=True), nLayers); needs the memory: not usable inside a Sequential's forward. */
export interface TransformerDecoderSpec extends TransformerFields { type: 'transformerDecoder' }
/** linear(dModel -> dFf), activation, dropout, linear(dFf -> dModel) over the last dim. Burn's PositionWiseFeedForward. */
export interface PositionWiseFeedForwardSpec { type: 'positionWiseFeedForward'; dModel: number; dFf: number; dropout?: number; activation?: 'relu' | 'gelu' }
/** Adds the sinusoids of Vaswani et al. to `[batch, seq, dModel]` (dModel even, seq <= maxSequenceSize). Burn's PositionalEncoding. */
export interface PositionalEncodingSpec { type: 'positionalEncoding'; dModel: number; maxSequenceSize?: number; maxTimescale?: number }
/** Rotates interleaved feature pairs (2i, 2i+1) of `[batch, seq, dModel]` by position·theta^(-2i/dModel) (RoFormer). Burn's RotaryEncoding. */
export interface RotaryEncodingSpec { type: 'rotaryEncoding'; maxSequenceLength: number; dModel: number; theta?: number }

/** kiln.nn.multiHeadAttention(...): forward(x) is self-attention; attend() the full form. */
export interface MultiHeadAttentionLayer extends Layer {
  attend(input: MhaInput): MhaOutput;
  autoregressiveMask(seqLength: number, batchSize?: number): Tensor;
}
/** kiln.nn.transformerEncoder(...): forward with optional masks. */
export interface TransformerEncoderLayer extends Layer {
  forward(x: Tensor, masks?: AttentionMasks): Tensor;
  autoregressiveMask(seqLength: number, batchSize?: number): Tensor;
}
/** kiln.nn.transformerDecoder(...): forward(target, memory, masks?). */
export interface TransformerDecoderLayer extends Layer {
  forward(target: Tensor, memory?: Tensor, masks?: DecoderMasks): Tensor;
  autoregressiveMask(seqLength: number, batchSize?: number): Tensor;
}
/** A size per 3-D spatial dim ([depth, height, width]), or one number for all three. */
export type Size3d = number | readonly [number, number, number];
/**
 * `[batch, channels[0], d, h, w] -> [batch, channels[1], d', h', w']` (per dim as Conv2dSpec).
 * padding: 'valid' (default), 'same' (stride 1 only; an even kernel's extra zero on the end
 * side, as PyTorch) or explicit sizes. torch.nn.Conv3d; weight `[out, in / groups, kd, kh, kw]`.
 */
export interface Conv3dSpec {
  type: 'conv3d'; channels: readonly [number, number]; kernelSize: Size3d; stride?: Size3d;
  padding?: 'valid' | 'same' | Size3d; dilation?: Size3d; groups?: number; bias?: boolean;
  initializer?: Initializer;
}
/**
 * `[batch, channels[0], length] -> [batch, channels[1], (length - 1)·stride - 2·padding +
 * dilation·(k - 1) + paddingOut + 1]`. torch.nn.ConvTranspose1d; weight `[in, out / groups, k]`.
 */
export interface ConvTranspose1dSpec {
  type: 'convTranspose1d'; channels: readonly [number, number]; kernelSize: number; stride?: number;
  padding?: number; paddingOut?: number; dilation?: number; groups?: number; bias?: boolean; initializer?: Initializer;
}
/**
 * `[batch, channels[0], d, h, w] -> [batch, channels[1], d', h', w']` (per dim as
 * ConvTranspose1dSpec). torch.nn.ConvTranspose3d; weight `[in, out / groups, kd, kh, kw]`.
 */
export interface ConvTranspose3dSpec {
  type: 'convTranspose3d'; channels: readonly [number, number]; kernelSize: Size3d; stride?: Size3d;
  padding?: Size3d; paddingOut?: Size3d; dilation?: Size3d; groups?: number; bias?: boolean; initializer?: Initializer;
}
/** `[batch, c, d, h, w] -> [batch, c, d', h', w']`; stride defaults to kernelSize. torch.nn.MaxPool3d. */
export interface MaxPool3dSpec {
  type: 'maxPool3d'; kernelSize: Size3d; stride?: Size3d; padding?: Size3d; dilation?: Size3d; ceilMode?: boolean;
}
/** `[batch, c, d, h, w] -> [batch, c, d', h', w']`; stride defaults to kernelSize. torch.nn.AvgPool3d. */
export interface AvgPool3dSpec {
  type: 'avgPool3d'; kernelSize: Size3d; stride?: Size3d; padding?: Size3d; countIncludePad?: boolean; ceilMode?: boolean;
}
/** `[batch, c, d, h, w] -> [batch, c, outputSize]`. torch.nn.AdaptiveAvgPool3d. */
export interface AdaptiveAvgPool3dSpec { type: 'adaptiveAvgPool3d'; outputSize: Size3d }
/**
 * Resizes `[batch, c, h, w]` (nearest or bilinear) or `[batch, c, length]` (nearest) to `size`
 * or by `scaleFactor` (exactly one; one number for every spatial dim or one per dim), with
 * PyTorch 1.13's index rules. torch.nn.Upsample; no parameters.
 */
export interface UpsampleSpec {
  type: 'upsample'; size?: number | readonly number[] | null; scaleFactor?: number | readonly number[] | null;
  mode?: 'nearest' | 'bilinear'; alignCorners?: boolean;
}
/** More element-wise activations, any shape: torch.nn.SELU, Mish, Hardsigmoid, Hardswish. */
export interface ActivationMoreSpec { type: 'selu' | 'mish' | 'hardSigmoid' | 'hardSwish' }
/** torch.nn.ELU: x for x > 0, alpha·(e^x - 1) otherwise (alpha default 1, finite). */
export interface EluSpec { type: 'elu'; alpha?: number }
/** torch.nn.CELU: max(0, x) + min(0, alpha·(e^(x/alpha) - 1)) (alpha default 1, finite, not 0). */
export interface CeluSpec { type: 'celu'; alpha?: number }
/** torch.nn.PReLU: a learned slope per channel (dim 1; numParameters = channels) or shared (1, the default), initialised to alpha (0.25); key `weight`. */
export interface PReluSpec { type: 'prelu'; numParameters?: number; alpha?: number }
/** torch.nn.GLU: a·sigmoid(b) over the halves of dim (default -1; not the batch dim 0): `[..., 2n] -> [..., n]`. */
export interface GluSpec { type: 'glu'; dim?: number }
/** Burn's SwiGlu: silu(linearInner(x))·linearOuter(x), `[..., dInput] -> [..., dOutput]`; keys `linear_inner.weight`, `linear_outer.weight` (+ `.bias`; bias default false). */
export interface SwiGluSpec { type: 'swiGlu'; dInput: number; dOutput: number; bias?: boolean; initializer?: Initializer }

/** One layer of a Sequential spec. */
export type LayerSpec =
  | LinearSpec | DropoutSpec | ActivationSpec | GeluSpec | LeakyReluSpec | ReshapeSpec
  | FlattenSpec | Conv2dSpec | Conv1dSpec | MaxPool2dSpec | AvgPool2dSpec | AdaptiveAvgPool2dSpec
  | BatchNormSpec | LayerNormSpec | GroupNormSpec | EmbeddingSpec | ConvTranspose2dSpec
  | InstanceNormSpec | RmsNormSpec | MaxPool1dSpec | AvgPool1dSpec | AdaptiveAvgPool1dSpec
  | LstmSpec | GruSpec
  | MultiHeadAttentionSpec | TransformerEncoderSpec | TransformerDecoderSpec | PositionWiseFeedForwardSpec
  | PositionalEncodingSpec | RotaryEncodingSpec
  | Conv3dSpec | ConvTranspose1dSpec | ConvTranspose3dSpec
  | MaxPool3dSpec | AvgPool3dSpec | AdaptiveAvgPool3dSpec | UpsampleSpec
  | ActivationMoreSpec | EluSpec | CeluSpec | PReluSpec | GluSpec | SwiGluSpec;

/** A Sequential spec: the layers in order. */
export interface SequentialSpec { layers: LayerSpec[] }

/** The config of a layer without its type (the argument of kiln.nn.linear(...), ...). */
export type LayerConfig<S extends LayerSpec> = S extends unknown ? Omit<S, 'type'> : never;

export interface ModelOptions {
  /** Seeds the engine's generator before the parameters are drawn (same seed, same weights, natively and in WebAssembly). */
  seed?: number;
}

// ---------------------------------------------------------------- models

export interface Nn {
  /**
   * A Sequential from a spec `{layers: [...]}` (or an array of layer specs, Layers and
   * Sequentials, concatenated; their current parameter values are copied).
   * @throws KilnError `Config` naming the layer index, type and field
   *   (`SequentialConfig: layers[2] (linear): dInput is 32 but the previous layer outputs 16`);
   *   `Type` for bad options.
   */
  sequential(spec: SequentialSpec | Array<LayerSpec | Model>, options?: ModelOptions): Sequential;
  /**
   * With a module written in JS among the layers (a kiln.Module that is not a kiln.nn
   * Sequential or layer): a JS-side Sequential module whose forward applies the layers in
   * order (the modules are shared, not copied, as PyTorch's nn.Sequential(*modules); specs
   * become built-in layers); its keys are "0.weight", ... as PyTorch's.
   * @throws KilnError as above; `Disposed` for a disposed module.
   */
  sequential(layers: Array<LayerSpec | Module>, options?: ModelOptions): Module;
  linear(config: LayerConfig<LinearSpec>, options?: ModelOptions): Layer;
  conv2d(config: LayerConfig<Conv2dSpec>, options?: ModelOptions): Layer;
  conv1d(config: LayerConfig<Conv1dSpec>, options?: ModelOptions): Layer;
  maxPool2d(config: LayerConfig<MaxPool2dSpec>): Layer;
  avgPool2d(config: LayerConfig<AvgPool2dSpec>): Layer;
  adaptiveAvgPool2d(config: LayerConfig<AdaptiveAvgPool2dSpec>): Layer;
  batchNorm(config: LayerConfig<BatchNormSpec>): Layer;
  layerNorm(config: LayerConfig<LayerNormSpec>): Layer;
  groupNorm(config: LayerConfig<GroupNormSpec>): Layer;
  dropout(config: LayerConfig<DropoutSpec>): Layer;
  relu(): Layer;
  sigmoid(): Layer;
  tanh(): Layer;
  silu(): Layer;
  gelu(config?: LayerConfig<GeluSpec>): Layer;
  leakyRelu(config?: LayerConfig<LeakyReluSpec>): Layer;
  reshape(config: LayerConfig<ReshapeSpec>): Layer;
  flatten(config?: LayerConfig<FlattenSpec>): Layer;
  /** torch.nn.Embedding; forward takes int32 indices `[batch, seqLength]`. @throws KilnError `Config` for paddingIdx out of range; forward `Index` for an index out of range. */
  embedding(config: LayerConfig<EmbeddingSpec>, options?: ModelOptions): Layer;
  convTranspose2d(config: LayerConfig<ConvTranspose2dSpec>, options?: ModelOptions): Layer;
  instanceNorm(config: LayerConfig<InstanceNormSpec>): Layer;
  rmsNorm(config: LayerConfig<RmsNormSpec>): Layer;
  maxPool1d(config: LayerConfig<MaxPool1dSpec>): Layer;
  avgPool1d(config: LayerConfig<AvgPool1dSpec>): Layer;
  adaptiveAvgPool1d(config: LayerConfig<AdaptiveAvgPool1dSpec>): Layer;
  /** torch.nn.LSTM(batch_first=True): forward(x) is the output sequence; forwardWithState(x, {hidden, cell}?) -> {output, state}. @throws KilnError `Config` naming the field. */
  lstm(config: LayerConfig<LstmSpec>, options?: ModelOptions): LstmLayer;
  /** torch.nn.GRU(batch_first=True): forward(x) is the output sequence; forwardWithState(x, {hidden}?) -> {output, state}. @throws KilnError `Config` naming the field. */
  gru(config: LayerConfig<GruSpec>, options?: ModelOptions): GruLayer;
  /** torch.nn.MultiheadAttention (batch_first). @throws KilnError `Config` if nHeads does not divide dModel. */
  multiHeadAttention(config: LayerConfig<MultiHeadAttentionSpec>, options?: ModelOptions): MultiHeadAttentionLayer;
  transformerEncoder(config: LayerConfig<TransformerEncoderSpec>, options?: ModelOptions): TransformerEncoderLayer;
  transformerDecoder(config: LayerConfig<TransformerDecoderSpec>, options?: ModelOptions): TransformerDecoderLayer;
  positionWiseFeedForward(config: LayerConfig<PositionWiseFeedForwardSpec>, options?: ModelOptions): Layer;
  positionalEncoding(config: LayerConfig<PositionalEncodingSpec>): Layer;
  rotaryEncoding(config: LayerConfig<RotaryEncodingSpec>): Layer;
  /** torch.nn.Conv3d: forward takes `[batch, channels[0], d, h, w]`. @throws KilnError `Config` for bad sizes; forward `Shape`. */
  conv3d(config: LayerConfig<Conv3dSpec>, options?: ModelOptions): Layer;
  /** torch.nn.ConvTranspose1d: forward takes `[batch, channels[0], length]`. @throws KilnError `Config`; forward `Shape`. */
  convTranspose1d(config: LayerConfig<ConvTranspose1dSpec>, options?: ModelOptions): Layer;
  /** torch.nn.ConvTranspose3d: forward takes `[batch, channels[0], d, h, w]`. @throws KilnError `Config`; forward `Shape`. */
  convTranspose3d(config: LayerConfig<ConvTranspose3dSpec>, options?: ModelOptions): Layer;
  maxPool3d(config: LayerConfig<MaxPool3dSpec>): Layer;
  avgPool3d(config: LayerConfig<AvgPool3dSpec>): Layer;
  adaptiveAvgPool3d(config: LayerConfig<AdaptiveAvgPool3dSpec>): Layer;
  /** torch.nn.Upsample. @throws KilnError `Config` for both or neither of size and scaleFactor, a bad mode or alignCorners with nearest. */
  upsample(config: LayerConfig<UpsampleSpec>): Layer;
  selu(): Layer;
  mish(): Layer;
  hardSigmoid(): Layer;
  hardSwish(): Layer;
  elu(config?: LayerConfig<EluSpec>): Layer;
  celu(config?: LayerConfig<CeluSpec>): Layer;
  /** torch.nn.PReLU; its `weight` is trained. */
  prelu(config?: LayerConfig<PReluSpec>, options?: ModelOptions): Layer;
  glu(config?: LayerConfig<GluSpec>): Layer;
  swiGlu(config: LayerConfig<SwiGluSpec>, options?: ModelOptions): Layer;
  /** The layers as functions of tensors (torch.nn.functional), for user-written layers. */
  readonly functional: NnFunctional;
  /** The layer types a spec may use. */
  readonly layerTypes: readonly LayerSpec['type'][];
  /** For instanceof checks (not constructible). */
  readonly Sequential: abstract new (...args: never[]) => Sequential;
  readonly Layer: abstract new (...args: never[]) => Layer;
}

// ---------------------------------------------------------------- losses

export type Reduction = 'mean' | 'sum' | 'none';

export interface LossModule {
  /**
   * Cross-entropy on logits with class targets (torch.nn.CrossEntropyLoss).
   * @throws KilnError `Config` for labelSmoothing outside [0, 1], bad weights, unknown options.
   */
  crossEntropy(config?: { labelSmoothing?: number; weights?: number[]; ignoreIndex?: number; reduction?: Reduction }): Loss;
  /**
   * Binary cross-entropy on probabilities, or on logits with `logits: true` (torch BCELoss /
   * BCEWithLogitsLoss). posWeight (logits only): the positive term's weight per label of the
   * last dim, or one entry for all. Per-element weights: kiln.nn.functional.binaryCrossEntropy.
   * @throws KilnError `Config` for posWeight without logits, negative or non-finite weights.
   */
  binaryCrossEntropy(config?: { logits?: boolean; labelSmoothing?: number; weights?: number[]; posWeight?: number[]; reduction?: Reduction }): Loss;
  /** Mean squared error (torch.nn.MSELoss). */
  mse(config?: { reduction?: Reduction }): Loss;
  /** Huber loss (torch.nn.HuberLoss), delta > 0 (default 1). @throws KilnError `Config` for delta <= 0. */
  huber(config?: { delta?: number; reduction?: Reduction }): Loss;
  /** Smooth L1 loss (torch.nn.SmoothL1Loss), beta >= 0 (default 1; 0 is L1). @throws KilnError `Config` for beta < 0. */
  smoothL1(config?: { beta?: number; reduction?: Reduction }): Loss;
}

// ---------------------------------------------------------------- optimizers

export interface ScheduleModule {
  constant(lr: number | { lr: number }): Schedule;
  /** initialLr · gamma^floor(i / stepSize) (gamma default 0.1). */
  step(config: { initialLr: number; stepSize: number; gamma?: number }): Schedule;
  /** initialLr · gamma^i; both in (0, 1]. */
  exponential(config: { initialLr: number; gamma: number }): Schedule;
  /** From initialLr to finalLr in numIters equal steps, then finalLr. */
  linear(config: { initialLr: number; finalLr: number; numIters: number }): Schedule;
  /** minLr + (initialLr - minLr)·(1 + cos(π·i/numIters))/2, restarting after numIters (SGDR). */
  cosine(config: { initialLr: number; numIters: number; minLr?: number }): Schedule;
  /** factor · modelSize^-0.5 · min(n^-0.5, n · warmupSteps^-1.5), n = i + 1. */
  noam(config: { factor: number; warmupSteps?: number; modelSize?: number }): Schedule;
  /**
   * PyTorch's OneCycleLR: from maxLr/divFactor up to maxLr (first pctStart of totalSteps),
   * then down to maxLr/(divFactor·finalDivFactor) (threePhase: back to the start first);
   * 'cos' or 'linear' annealing. Defaults: pctStart 0.3, annealStrategy 'cos', divFactor 25,
   * finalDivFactor 1e4, threePhase false, cycleMomentum true, baseMomentum 0.85, maxMomentum 0.95.
   * @throws KilnError `Config` (a value out of range, totalSteps too small for the phases).
   */
  oneCycle(config: {
    maxLr: number; totalSteps: number; pctStart?: number; annealStrategy?: 'cos' | 'linear';
    divFactor?: number; finalDivFactor?: number; threePhase?: boolean; cycleMomentum?: boolean;
    baseMomentum?: number; maxMomentum?: number;
  }): Schedule;
}

/** Gradient clipping before each step: by the global L2 norm (as torch.nn.utils.clip_grad_norm_) or by value. */
export type GradClipping = { norm: number } | { value: number };

/**
 * Defaults are PyTorch's (eps 1e-8, momentum 0, dampening 0, AdamW weight decay 0.01), and
 * `optimizer.config` shows them filled in. The C++ configs keep Burn's defaults, which differ:
 *
 *   | option            | JS (PyTorch) | C++ (Burn)                          |
 *   | adam epsilon      | 1e-8         | AdamConfig::epsilon 1e-5            |
 *   | adamW epsilon     | 1e-8         | AdamWConfig::epsilon 1e-5           |
 *   | adamW weightDecay | 0.01         | AdamWConfig::weight_decay 1e-4      |
 *   | rmsProp epsilon   | 1e-8         | RmsPropConfig::epsilon 1e-5         |
 *   | rmsProp momentum  | 0            | RmsPropConfig::momentum 0.9         |
 *   | sgd momentum      | 0 (none)     | none; MomentumConfig 0.9, dampening 0.1 when given |
 *   | adam/rmsProp lr   | 1e-3 / 1e-2  | passed to each step (no default)    |
 * Betas (0.9, 0.999) and RMSprop's alpha 0.99 agree.
 */
export interface Optim {
  /** torch.optim.SGD. @throws KilnError `Config` without lr, for nesterov without momentum > 0 and dampening 0, negative values. */
  sgd(config: { lr: number | Schedule; momentum?: number; dampening?: number; nesterov?: boolean; weightDecay?: number; gradClipping?: GradClipping }): Optimizer;
  /** torch.optim.Adam (lr 1e-3, betas 0.9/0.999, eps 1e-8; weightDecay is L2 added to the gradient). @throws KilnError `Config`. */
  adam(config?: { lr?: number | Schedule; beta1?: number; beta2?: number; epsilon?: number; weightDecay?: number; amsgrad?: boolean; gradClipping?: GradClipping }): Optimizer;
  /** torch.optim.AdamW (decoupled weight decay, default 0.01). @throws KilnError `Config`. */
  adamW(config?: { lr?: number | Schedule; beta1?: number; beta2?: number; epsilon?: number; weightDecay?: number; amsgrad?: boolean; gradClipping?: GradClipping }): Optimizer;
  /** torch.optim.RMSprop (lr 1e-2, alpha 0.99, eps 1e-8, momentum 0). @throws KilnError `Config`. */
  rmsProp(config?: { lr?: number | Schedule; alpha?: number; momentum?: number; epsilon?: number; centered?: boolean; weightDecay?: number; gradClipping?: GradClipping }): Optimizer;
  schedule: ScheduleModule;
  /** Metric-driven rate (torch.optim.lr_scheduler.ReduceLROnPlateau): `new kiln.optim.ReduceLROnPlateau(optimizer, {patience})`. */
  readonly ReduceLROnPlateau: typeof ReduceLROnPlateau;
  /** Burn's GradientsAccumulator: `accumulate(params, grads)` then `grads()`. */
  readonly GradientsAccumulator: typeof GradientsAccumulator;
  /**
   * torch.nn.utils.clip_grad_norm_ on gradient tensors, in place; returns the total norm.
   * @throws KilnError `Type`, `DType`, `Value`, `NonFinite` (errorIfNonfinite); `State` on
   *   the webgpu backend (its reads are asynchronous: clipGradNormAsync).
   */
  clipGradNorm(grads: Tensor[], maxNorm: number, options?: { normType?: number; errorIfNonfinite?: boolean }): number;
  /** The same on the gradients of `params` inside a Gradients (torch.nn.utils.clip_grad_norm_(parameters)). */
  clipGradNorm(grads: Gradients, maxNorm: number, options: { params: ParamSource; normType?: number; errorIfNonfinite?: boolean }): number;
  /**
   * clipGradNorm computed on the device and read with `await`: what the webgpu backend runs
   * (there clipGradNorm throws `State`), on every backend. Resolves to the total norm; the
   * gradients change only once it is read (errorIfNonfinite: `NonFinite`, nothing changed).
   * @throws KilnError (rejects) as clipGradNorm; `Disposed`; `Device`; `Index` (a device check
   *   reporting an earlier op at this first read after it).
   */
  clipGradNormAsync(grads: Tensor[], maxNorm: number, options?: { normType?: number; errorIfNonfinite?: boolean }): Promise<number>;
  /** The same on the gradients of `params` inside a Gradients. */
  clipGradNormAsync(grads: Gradients, maxNorm: number, options: { params: ParamSource; normType?: number; errorIfNonfinite?: boolean }): Promise<number>;
  /** torch.nn.utils.clip_grad_value_ on gradient tensors, in place. @throws KilnError `Type`, `DType`, `Value`. */
  clipGradValue(grads: Tensor[], clipValue: number): void;
}

/** kiln.metrics: the metric protocol and Burn's metrics (AccuracyMetric, LossMetric, ...). */
export interface Metrics {
  readonly Metric: typeof Metric;
  readonly Accuracy: typeof Accuracy;
  readonly TopKAccuracy: typeof TopKAccuracy;
  readonly Loss: typeof LossMetric;
  readonly LearningRate: typeof LearningRate;
}

// ---------------------------------------------------------------- data

export interface Data {
  /**
   * x: `[n·itemSize]` float32 row-major; y: Int32Array `[n]` class labels or Float32Array
   * `[n·targetSize]` targets (targetShape default `[y.length / n]`). Copies both once.
   * @throws KilnError `Type` (array types), `Config` (no itemShape), `Shape` (lengths that
   *   do not fit), `Value` (negative label, label >= numClasses).
   */
  fromArrays(x: Float32Array, y: Int32Array | Float32Array, config: { itemShape: number[]; targetShape?: number[]; numClasses?: number }): Dataset;
  /**
   * MNIST from the bytes of its IDX files (e.g. train-images-idx3-ubyte, train-labels-idx1-ubyte):
   * itemShape [784], labels 0-9; pixels normalised per batch as Burn's MnistBatcher,
   * (p / 255 - 0.1307) / 0.3081.
   * @throws KilnError `Format` naming the file for a bad magic number, size or label; `Type`.
   */
  mnist(imagesIdxBytes: Uint8Array, labelsIdxBytes: Uint8Array): Dataset;
}

// ---------------------------------------------------------------- Learner

export interface LearnerConfig {
  optimizer: Optimizer;
  /** 'crossEntropy' (default; int32 labels) or 'mse' (float targets of the output's shape, or int32 labels as one-hot rows), or a kiln.loss object (crossEntropy, mse, huber, smoothL1). */
  loss?: 'crossEntropy' | 'mse' | Loss;
  /** Seeds dropout and the per-epoch shuffles (default 0). */
  seed?: number;
  /** Per-item input shape for trainBatch/predict on flat arrays (default: what the spec fixes, e.g. the first linear's dInput). */
  inputShape?: number[];
  // ---- the general path (any of these selects it; see Learner's constructor)
  /** `(model, batch) => ({loss, output, targets})`: forward and loss of one batch (default: `{x, y}` batches with `loss`). */
  trainStep?: StepFn;
  /** The validation step (default: trainStep), run in eval() mode without gradients. */
  validStep?: StepFn;
  /** kiln.metrics.* or your own (name, update, value, reset). */
  metrics?: Metric[];
  /** A per-step schedule, or a ReduceLROnPlateau of this optimizer stepped per epoch (optionally with the monitored "valid.<metric>"). */
  lrScheduler?: Schedule | ReduceLROnPlateau | { scheduler: ReduceLROnPlateau; monitor?: string };
  /** Sum the gradients of this many batches per optimizer step (default 1). */
  gradientAccumulation?: number;
  /** Checkpoints every `every` epochs to a directory (Node) or a {save, load} store. */
  checkpointer?: string | CheckpointerOptions;
  /** Stop when the monitored metric stops improving. */
  earlyStopping?: EarlyStoppingOptions;
}

export interface BatchLog {
  epoch: number;
  /** Batches done in this epoch (the last one of this call). */
  batch: number;
  numBatches: number;
  /** Mean loss and accuracy over the batches of this call. */
  loss: number;
  accuracy: number;
  /** Items per second over the epoch so far. */
  itemsPerSecond: number;
}

export interface EpochLog {
  epoch: number;
  /** Item-weighted means over the epoch's batches (as trained: dropout active). */
  loss: number;
  accuracy: number;
  /** On validationData, in inference mode. */
  validLoss?: number;
  validAccuracy?: number;
  itemsPerSecond: number;
  seconds: number;
}

export interface History {
  epochs: EpochLog[];
  loss: number[];
  accuracy: number[];
  validLoss: number[];
  validAccuracy: number[];
}

/** What fit() reads of an AbortSignal (declared here so that no DOM or Node typings are needed). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
}

export interface FitOptions {
  epochs?: number;
  batchSize?: number;
  /** A new order every epoch (default true). */
  shuffle?: boolean;
  validationData?: Dataset;
  validationBatchSize?: number;
  /** Batches per call into WebAssembly (default 1); fit yields to the event loop between calls. */
  batchesPerCall?: number;
  /** After every call; fit awaits it (a returned Promise pauses training). */
  onBatchEnd?: (log: BatchLog) => void | Promise<void>;
  onEpochEnd?: (log: EpochLog) => void | Promise<void>;
  /** Aborting rejects fit() with signal.reason (an AbortError) at the next call boundary; the model keeps what it learned. */
  signal?: AbortSignalLike;
}

/** kiln.Learner: `new kiln.Learner(model, {optimizer, loss})`. */
export type LearnerStatic = typeof Learner;

/** The training half of the `Kiln` object. */
export interface KilnTraining {
  nn: Nn;
  loss: LossModule;
  optim: Optim;
  data: Data;
  Learner: LearnerStatic;
  metrics: Metrics;
}
