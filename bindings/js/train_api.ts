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
import type { CheckpointerOptions, EarlyStoppingOptions } from './train/learner_support.js';

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
 * `[batch, ...] -> [batch, ...shape]` (per-item shape; 1 to 3 dims, one may be -1).
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
   * @throws KilnError `Type`, `DType`, `Value`, `NonFinite` (errorIfNonfinite).
   */
  clipGradNorm(grads: Tensor[], maxNorm: number, options?: { normType?: number; errorIfNonfinite?: boolean }): number;
  /** The same on the gradients of `params` inside a Gradients (torch.nn.utils.clip_grad_norm_(parameters)). */
  clipGradNorm(grads: Gradients, maxNorm: number, options: { params: ParamSource; normType?: number; errorIfNonfinite?: boolean }): number;
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
