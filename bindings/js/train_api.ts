/// <reference lib="esnext.disposable" preserve="true" />
// The public types of kiln-dl's models and training API (kiln.nn, kiln.loss, kiln.optim,
// kiln.data, kiln.Learner), exported by index.ts; nn.ts and train.ts implement them (their
// classes `implements` these interfaces, so tsc checks one against the other). Semantics
// are PyTorch's unless stated (torch.nn.Sequential, torch.optim, ...); names are Burn's in
// camelCase. Errors are KilnError with the code named in @throws.
import type { Gradients } from './tensor/gradients.js';
import type { Tensor } from './tensor/tensor.js';

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
export interface BatchNormSpec { type: 'batchNorm'; numFeatures: number; epsilon?: number; momentum?: number }
/** Normalises the last dim (size dModel). torch.nn.LayerNorm([dModel]). */
export interface LayerNormSpec { type: 'layerNorm'; dModel: number; epsilon?: number; elementwiseAffine?: boolean }

/** One layer of a Sequential spec. */
export type LayerSpec =
  | LinearSpec | DropoutSpec | ActivationSpec | GeluSpec | LeakyReluSpec | ReshapeSpec
  | FlattenSpec | Conv2dSpec | Conv1dSpec | MaxPool2dSpec | AvgPool2dSpec | AdaptiveAvgPool2dSpec
  | BatchNormSpec | LayerNormSpec;

/** A Sequential spec: the layers in order. */
export interface SequentialSpec { layers: LayerSpec[] }

/** The config of a layer without its type (the argument of kiln.nn.linear(...), ...). */
export type LayerConfig<S extends LayerSpec> = Omit<S, 'type'>;

export interface ModelOptions {
  /** Seeds the engine's generator before the parameters are drawn (same seed, same weights, natively and in WebAssembly). */
  seed?: number;
}

// ---------------------------------------------------------------- models

/**
 * What models and single layers share: layers applied in order (PyTorch's nn.Sequential).
 * Parameters live in WebAssembly memory until dispose(). New models are in training mode
 * (dropout active, batchNorm on batch statistics), as PyTorch's.
 */
export interface Model {
  /**
   * Applies every layer: `[batch, ...] -> [batch, ...]`, input rank 2 to 4, e.g.
   * `[batch, 784] -> [batch, 10]`. In training mode the output carries the graph (backward()
   * reaches the parameters; batchNorm's running statistics move); in eval() mode and inside
   * kiln.noGrad it carries none.
   * @throws KilnError `Shape` naming the layer whose input does not fit
   *   (`Sequential::forward: layer 1 (conv2d): expected input [batch_size, channels, height, width] (rank 4), got [64, 784]`),
   *   `DType` for a non-float32 input, `Type` for a non-Tensor, `Disposed`.
   */
  forward(x: Tensor): Tensor;
  /** Number of parameter elements (batchNorm's running statistics included). */
  readonly numParams: number;
  /** The C++ spec (snake_case JSON text, {"layers": [...]}) that nn::SequentialConfig reads. */
  configJson(): string;
  /**
   * A table: layer index, type, output shape (as far as the spec determines it, from
   * `inputShape` (per item) when given), parameters; and the totals.
   * @throws KilnError `Config` if inputShape does not fit the first layers.
   */
  summary(options?: { inputShape?: number[] }): string;
  /** The per-item output shape for items of `inputShape`, e.g. `[784] -> [10]`. @throws KilnError `Config` naming the layer. */
  outputShape(inputShape: number[]): number[];
  /**
   * The parameters, keyed as in the records ("0.weight", ...): new Tensors sharing the
   * model's current values (float32 ones are tracked leaves: x.grad(grads) works on them;
   * num_batches_tracked is int32). Dispose them (or use kiln.tidy).
   */
  namedParameters(): Record<string, Tensor>;
  /**
   * The parameters as SafeTensors bytes with PyTorch nn.Sequential's keys ("0.weight",
   * "0.bias", "2.running_mean", ...; a Layer: "weight", "bias"; F32, num_batches_tracked
   * I64): the same bytes as the C++
   * nn::Sequential of the same spec; loads in torch with load_state_dict(strict=True).
   */
  saveSafetensors(): Uint8Array;
  /**
   * Replaces the parameters by those of SafeTensors bytes (from saveSafetensors, C++ or
   * PyTorch). Returns this.
   * @throws KilnError `Format` for malformed bytes or missing, unexpected or mis-shaped
   *   entries (all listed); the model is then unchanged. `Type` for a non-Uint8Array.
   */
  loadSafetensors(bytes: Uint8Array): this;
  /** Training mode (default): dropout active, batchNorm on batch statistics. Returns this. */
  train(mode?: boolean): this;
  /** Inference mode: dropout off, batchNorm on running statistics, outputs untracked. Returns this. */
  eval(): this;
  readonly training: boolean;
  /** `Sequential {0: Linear {d_input: 784, ...}, ...}` (the C++ module's printout). */
  toString(): string;
  readonly isDisposed: boolean;
  /** Frees the parameters (unless a Learner still trains the model). Idempotent. */
  dispose(): void;
  [Symbol.dispose](): void;
}

/** A model built from a spec (kiln.nn.sequential); records keyed "0.weight", ... */
export interface Sequential extends Model {
  /** The spec (camelCase, every default filled in): kiln.nn.sequential(model.config) builds the same architecture. */
  readonly config: SequentialSpec;
  /** JSON.stringify(model) gives the spec. */
  toJSON(): SequentialSpec;
}

/** A single layer (kiln.nn.linear(...)); its records use the layer's keys ("weight", "bias"). */
export interface Layer extends Model {
  readonly type: LayerSpec['type'];
  /** The layer's spec ({type: 'linear', dInput: 2, ...}). */
  readonly config: LayerSpec;
  toJSON(): LayerSpec;
}

export interface Nn {
  /**
   * A Sequential from a spec `{layers: [...]}` (or an array of layer specs, Layers and
   * Sequentials, concatenated; their current parameter values are copied).
   * @throws KilnError `Config` naming the layer index, type and field
   *   (`SequentialConfig: layers[2] (linear): dInput is 32 but the previous layer outputs 16`);
   *   `Type` for bad options.
   */
  sequential(spec: SequentialSpec | Array<LayerSpec | Model>, options?: ModelOptions): Sequential;
  linear(config: LayerConfig<LinearSpec>, options?: ModelOptions): Layer;
  conv2d(config: LayerConfig<Conv2dSpec>, options?: ModelOptions): Layer;
  conv1d(config: LayerConfig<Conv1dSpec>, options?: ModelOptions): Layer;
  maxPool2d(config: LayerConfig<MaxPool2dSpec>): Layer;
  avgPool2d(config: LayerConfig<AvgPool2dSpec>): Layer;
  adaptiveAvgPool2d(config: LayerConfig<AdaptiveAvgPool2dSpec>): Layer;
  batchNorm(config: LayerConfig<BatchNormSpec>): Layer;
  layerNorm(config: LayerConfig<LayerNormSpec>): Layer;
  dropout(config: LayerConfig<DropoutSpec>): Layer;
  relu(): Layer;
  sigmoid(): Layer;
  tanh(): Layer;
  silu(): Layer;
  gelu(config?: LayerConfig<GeluSpec>): Layer;
  leakyRelu(config?: LayerConfig<LeakyReluSpec>): Layer;
  reshape(config: LayerConfig<ReshapeSpec>): Layer;
  flatten(config?: LayerConfig<FlattenSpec>): Layer;
  /** The layer types a spec may use. */
  readonly layerTypes: readonly LayerSpec['type'][];
  /** For instanceof checks (not constructible). */
  readonly Sequential: abstract new (...args: never[]) => Sequential;
  readonly Layer: abstract new (...args: never[]) => Layer;
}

// ---------------------------------------------------------------- losses

export type Reduction = 'mean' | 'sum' | 'none';

/** A loss function object. */
export interface Loss {
  readonly kind: 'crossEntropy' | 'binaryCrossEntropy' | 'mse';
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * crossEntropy: logits `[batch, classes]` float32, targets `[batch]` int32 -> `[1]` (`[batch]` for 'none').
   * mse / binaryCrossEntropy: same shapes (rank 1 to 4) -> `[1]` (the input's shape for 'none');
   * binaryCrossEntropy targets may be int32 0/1 or float32.
   * The result carries the graph (backward() gives the gradients).
   * @throws KilnError `Shape` (mismatched shapes), `Index` (a class target out of range, naming the row),
   *   `DType`, `Rank`, `Value` (probabilities outside [0, 1]), `Type`.
   */
  forward(logits: Tensor, targets: Tensor): Tensor;
}

export interface LossModule {
  /**
   * Cross-entropy on logits with class targets (torch.nn.CrossEntropyLoss).
   * @throws KilnError `Config` for labelSmoothing outside [0, 1], bad weights, unknown options.
   */
  crossEntropy(config?: { labelSmoothing?: number; weights?: number[]; ignoreIndex?: number; reduction?: Reduction }): Loss;
  /** Binary cross-entropy on probabilities, or on logits with `logits: true` (torch BCELoss / BCEWithLogitsLoss). */
  binaryCrossEntropy(config?: { logits?: boolean; labelSmoothing?: number; weights?: number[]; reduction?: Reduction }): Loss;
  /** Mean squared error (torch.nn.MSELoss). */
  mse(config?: { reduction?: Reduction }): Loss;
}

// ---------------------------------------------------------------- optimizers

/** A learning-rate schedule: the rate of each optimizer step (Burn's lr_scheduler). */
export interface Schedule {
  readonly kind: 'constant' | 'step' | 'exponential' | 'linear' | 'cosine' | 'noam';
  readonly config: Readonly<Record<string, unknown>>;
  /** The first n rates. */
  values(n: number): Float64Array;
}

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
}

/** Gradient clipping before each step: by the global L2 norm (as torch.nn.utils.clip_grad_norm_) or by value. */
export type GradClipping = { norm: number } | { value: number };

/** An optimizer with its state (moments, momentum buffers) in WebAssembly memory. */
export interface Optimizer {
  readonly kind: 'sgd' | 'adam' | 'adamW' | 'rmsProp';
  readonly config: Readonly<Record<string, unknown>>;
  /**
   * One step on the model's parameters that have a gradient in grads (at the schedule's next
   * rate). grads stays usable.
   * @throws KilnError `Type` for a non-model / non-Gradients, `Disposed`.
   */
  step(model: Model, grads: Gradients): void;
  /** The rate of the last step (NaN before the first). */
  readonly learningRate: number;
  /** Steps taken. */
  readonly steps: number;
  readonly isDisposed: boolean;
  dispose(): void;
  [Symbol.dispose](): void;
}

/** Defaults are PyTorch's (eps 1e-8, momentum 0, dampening 0, AdamW weight decay 0.01). */
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
}

// ---------------------------------------------------------------- data

/**
 * Items (inputs `[...itemShape]` and targets) held once in WebAssembly memory; shuffle,
 * split, take and slice return new views of the same arrays (dispose each view; the arrays
 * are freed with the last one).
 */
export interface Dataset {
  readonly length: number;
  /** Per-item input shape, e.g. [784] or [1, 28, 28]. */
  readonly itemShape: number[];
  /** Per-item target shape for float32 targets; null for int32 class labels. */
  readonly targetShape: number[] | null;
  /** Classes of int32 labels (given, or max label + 1); 0 for float targets without numClasses. */
  readonly numClasses: number;
  /** The items in a random order (deterministic for a seed, the same in every build). */
  shuffle(seed?: number): Dataset;
  /** [the first round(fraction·length) items, the rest]. @throws KilnError `Value` for fraction outside [0, 1]. */
  split(fraction: number): [Dataset, Dataset];
  /** The first min(n, length) items. */
  take(n: number): Dataset;
  /** Items [begin, end). @throws KilnError `Index`. */
  slice(begin: number, end?: number): Dataset;
  /** Copies: x `[length·itemSize]` row-major (MNIST normalised), y labels or targets. */
  toArrays(): { x: Float32Array; y: Int32Array | Float32Array };
  readonly isDisposed: boolean;
  dispose(): void;
  [Symbol.dispose](): void;
}

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
  /** 'crossEntropy' (default; int32 labels) or 'mse' (float targets of the output's shape, or int32 labels as one-hot rows), or a kiln.loss object. */
  loss?: 'crossEntropy' | 'mse' | Loss;
  /** Seeds dropout and the per-epoch shuffles (default 0). */
  seed?: number;
  /** Per-item input shape for trainBatch/predict on flat arrays (default: what the spec fixes, e.g. the first linear's dInput). */
  inputShape?: number[];
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

/**
 * Trains a model with an optimizer and a loss. Each trainBatch, and each call fit() makes,
 * runs whole steps inside WebAssembly (forward, loss, backward, optimizer step, accuracy).
 * The model's parameters are updated in place (the JS model object sees them).
 */
export interface Learner {
  readonly model: Model;
  readonly optimizer: Optimizer;
  readonly loss: Loss;
  /**
   * One step on a batch: x `[n·itemSize]`, y Int32Array `[n]` labels or Float32Array targets.
   * Accuracy: argmax matches the label (mse: argmax of output and target, or |out - t| < 0.5 for one output).
   * @throws KilnError `Type`, `Shape` (lengths, the model's input), `DType` (float targets for crossEntropy), `Index` (label out of range), `Busy` (fit running), `Disposed`.
   */
  trainBatch(x: Float32Array, y: Int32Array | Float32Array, n?: number): { loss: number; accuracy: number };
  /** Trains for `epochs` epochs; resolves with the history. @throws as trainBatch; rejects with the signal's reason when aborted. */
  fit(train: Dataset, options?: FitOptions): Promise<History>;
  /** Mean loss and accuracy over data in inference mode (batchSize default 256). */
  evaluate(data: Dataset, options?: { batchSize?: number }): { loss: number; accuracy: number };
  /**
   * Outputs in inference mode, row-major `[n, ...output]`: softmax probabilities for
   * crossEntropy, raw outputs for mse. A Float32Array x needs the item size (see inputShape) or `n`.
   */
  predict(x: Float32Array | Tensor | Dataset, options?: { batchSize?: number; n?: number }): Float32Array;
  /** Epochs started, optimizer steps taken, the last learning rate. */
  readonly epoch: number;
  readonly steps: number;
  readonly learningRate: number;
  readonly isDisposed: boolean;
  /** Frees the learner (not the model, optimizer or data). @throws KilnError `Busy` while fit runs. */
  dispose(): void;
  [Symbol.dispose](): void;
}

export interface LearnerStatic {
  /** @throws KilnError `Type` (model), `Config` (optimizer, loss, options; inputShape that does not fit the model). */
  new (model: Model, config: LearnerConfig): Learner;
}

/** The training half of the `Kiln` object. */
export interface KilnTraining {
  nn: Nn;
  loss: LossModule;
  optim: Optim;
  data: Data;
  Learner: LearnerStatic;
}
