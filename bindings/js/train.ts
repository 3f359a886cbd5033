// kiln-dl's training API: kiln.loss, kiln.optim (optimizers and schedules), kiln.data
// (datasets in WebAssembly memory) and kiln.Learner (one call into WebAssembly per batch,
// or per `batchesPerCall` batches; fit() yields to the event loop between calls).
// Engine side: bindings/train_*.cpp. The option and log types: train_api.ts.
import { HandleOwner } from './handle.js';
import { camelErrors, isPlainObject, unwrapModel, type Model } from './nn.js';
import type { RawDataset, RawLearner, RawModule, RawOptimizer } from './raw.js';
import { checkIntArray, checkOptions, describe, fail } from './tensor/checks.js';
import { bindClass, type Engine } from './tensor/engine.js';
import type { Gradients } from './tensor/gradients.js';
import { Tensor } from './tensor/tensor.js';
import type { EpochLog, FitOptions, History, LearnerConfig } from './train_api.js';

/** A checked options object (its fields are checked where they are read). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Options = Record<string, any>;

const TOKEN = Symbol('kiln.train.internal');

/** Resolves on the next turn of the event loop (setImmediate in Node, MessageChannel in
 * browsers and workers: both skip setTimeout's clamping of ~1-4 ms). */
function nextTurn(): Promise<void> {
  const { setImmediate } = globalThis as { setImmediate?: (f: () => void) => void };
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (typeof MessageChannel === 'function') {
    return new Promise<void>((resolve) => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        resolve();
      };
      channel.port2.postMessage(0);
    });
  }
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

// ---------------------------------------------------------------- option checks

function options(value: unknown, op: string, allowed: string[]): Options {
  const opts = checkOptions<Options>(value, op) as Options;
  for (const key of Object.keys(opts)) {
    if (!allowed.includes(key)) {
      throw fail('Config', `${op}: unknown option "${key}" (options: ${allowed.join(', ')})`);
    }
  }
  return opts;
}

function num(v: unknown, op: string, what: string, dflt?: number): number {
  if (v === undefined) return dflt as number;
  if (typeof v !== 'number' || Number.isNaN(v)) throw fail('Type', `${op}: ${what} must be a number, got ${describe(v)}`);
  return v;
}

function int(v: unknown, op: string, what: string, dflt: number, min = 0): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw fail('Type', `${op}: ${what} must be an integer, got ${describe(v)}`);
  }
  if (v < min) throw fail('Value', `${op}: ${what} must be >= ${min}, got ${v}`);
  return v;
}

function bool(v: unknown, op: string, what: string, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') throw fail('Type', `${op}: ${what} must be a boolean, got ${describe(v)}`);
  return v;
}

function intShape(v: unknown, op: string, what: string): number[] | null {
  if (v === undefined || v === null) return null;
  return checkIntArray(v, op, what);
}

/** The engine of a class's `this` in a constructor (the per-instance subclass). */
function engineOfNew(target: unknown, what: string): Engine {
  const e = (target as { _e?: Engine } | undefined)?._e;
  if (e === undefined) throw fail('Type', `${what}: the constructor is internal`);
  return e;
}

// ---------------------------------------------------------------- losses

/** A loss function object (kiln.loss.crossEntropy(), ...). */
export class Loss {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind: 'crossEntropy' | 'binaryCrossEntropy' | 'mse';
  readonly config: Readonly<Record<string, unknown>>;
  /** The C++ loss config (JSON). @internal */
  readonly _json: string;

  /** Internal: made by kiln.loss.crossEntropy(), binaryCrossEntropy(), mse(). */
  protected constructor(token: never, kind: never, json: never, config: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Loss: use kiln.loss.crossEntropy() or kiln.loss.mse()');
    this.kind = kind;
    this.config = Object.freeze(config as Options);
    this._json = json;
    Object.freeze(this);
  }

  /**
   * crossEntropy: logits `[batch, classes]` float32, targets `[batch]` int32 -> `[1]` (`[batch]` for 'none').
   * mse / binaryCrossEntropy: same shapes (rank 1 to 4) -> `[1]` (the input's shape for 'none');
   * binaryCrossEntropy targets may be int32 0/1 or float32.
   * The result carries the graph (backward() gives the gradients).
   * @throws KilnError `Shape` (mismatched shapes), `Index` (a class target out of range, naming the row),
   *   `DType`, `Rank`, `Value` (probabilities outside [0, 1]), `Type`.
   */
  forward(logits: Tensor, targets: Tensor): Tensor {
    const op = `${this.kind}.forward`;
    const e = this._e;
    const a = e.unwrap(logits, op, 'logits');
    const b = e.unwrap(targets, op, 'targets');
    return e.wrap(e.raw.lossForward(this._json, a, b));
  }
}

// ---------------------------------------------------------------- schedules

/** A learning-rate schedule: the rate of each optimizer step (Burn's lr_scheduler). */
export class Schedule {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind: 'constant' | 'step' | 'exponential' | 'linear' | 'cosine' | 'noam';
  readonly config: Readonly<Record<string, unknown>>;
  /** The C++ schedule config (JSON). @internal */
  readonly _json: string;

  /** Internal: made by kiln.optim.schedule.*(...). */
  protected constructor(token: never, kind: never, json: never, config: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Schedule: use kiln.optim.schedule.*(...)');
    this.kind = kind;
    this.config = Object.freeze(config as Options);
    this._json = json;
    Object.freeze(this);
  }

  /** The first n rates (the schedule's step() n times). */
  values(n: number): Float64Array {
    int(n, 'Schedule.values', 'n', 0);
    return camelErrors(() => this._e.raw.scheduleValues(this._json, n));
  }
}

// ---------------------------------------------------------------- optimizers

/** An optimizer with its state (moments, momentum buffers) in WebAssembly memory. */
export class Optimizer extends HandleOwner<RawOptimizer> {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind: 'sgd' | 'adam' | 'adamW' | 'rmsProp';
  readonly config: Readonly<Record<string, unknown>>;

  /** Internal: made by kiln.optim.sgd/adam/adamW/rmsProp(...). */
  protected constructor(token: never, kind: never, handle: never, config: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Optimizer: use kiln.optim.sgd/adam/adamW/rmsProp(...)');
    super(handle as RawOptimizer, 'optimizer');
    this.kind = kind;
    this.config = Object.freeze(config as Options);
  }

  /**
   * One step on the model's parameters that have a gradient in grads (at the schedule's next
   * rate). grads stays usable.
   * @throws KilnError `Type` for a non-model / non-Gradients, `Disposed`.
   */
  step(model: Model, grads: Gradients): void {
    const op = 'Optimizer.step';
    const h = this._raw(op);
    const m = unwrapModel(this._e, model, op);
    const g = this._e.unwrapGradients(grads, op);
    camelErrors(() => h.step(m, g));
  }

  /** The rate of the last step (NaN before the first). */
  get learningRate(): number {
    return this._raw('Optimizer.learningRate').lastLr();
  }

  /** Steps taken. */
  get steps(): number {
    return this._raw('Optimizer.steps').steps();
  }
}

// ---------------------------------------------------------------- data

/**
 * Items (inputs `[...itemShape]` and targets) held once in WebAssembly memory; shuffle,
 * split, take and slice return new views of the same arrays (dispose each view; the arrays
 * are freed with the last one).
 */
export class Dataset extends HandleOwner<RawDataset> {
  /** @internal */
  declare readonly _e: Engine;
  /** @internal */
  _info: ReturnType<RawDataset['info']> | null;

  /** Internal: made by kiln.data.fromArrays(...) and kiln.data.mnist(...). */
  protected constructor(token: never, handle: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Dataset: use kiln.data.fromArrays(...) or kiln.data.mnist(...)');
    super(handle as RawDataset, 'dataset');
    this._info = null;
  }

  /** A new Dataset of this instance over `handle`. @internal */
  _make(handle: RawDataset): Dataset {
    return new (this.constructor as unknown as DatasetCtor)(TOKEN, handle);
  }

  /** @internal */
  _meta(): ReturnType<RawDataset['info']> {
    return this._info ?? (this._info = this._raw('Dataset').info());
  }

  /** The number of items. */
  get length(): number {
    return this._meta().length;
  }

  /** Per-item input shape, e.g. [784] or [1, 28, 28]. */
  get itemShape(): number[] {
    return [...this._meta().itemShape];
  }

  /** Per-item target shape for float32 targets; null for int32 class labels. */
  get targetShape(): number[] | null {
    const t = this._meta().targetShape;
    return t === null ? null : [...t];
  }

  /** Classes of int32 labels (given, or max label + 1); 0 for float targets without numClasses. */
  get numClasses(): number {
    return this._meta().numClasses;
  }

  /** The items in a random order (deterministic for a seed, the same in every build). */
  shuffle(seed: number = 0): Dataset {
    const op = 'Dataset.shuffle';
    int(seed, op, 'seed', 0);
    return this._make(this._raw(op).shuffle(seed));
  }

  /** [the first round(fraction·length) items, the rest]. @throws KilnError `Value` for fraction outside [0, 1]. */
  split(fraction: number): [Dataset, Dataset] {
    const op = 'Dataset.split';
    const f = num(fraction, op, 'fraction');
    if (!(f >= 0 && f <= 1)) throw fail('Value', `${op}: fraction must be in [0, 1], got ${f}`);
    const h = this._raw(op);
    const n = this.length;
    const k = Math.round(f * n);
    return [this._make(h.slice(0, k)), this._make(h.slice(k, n))];
  }

  /** The first min(n, length) items. */
  take(n: number): Dataset {
    const op = 'Dataset.take';
    int(n, op, 'n', 0);
    return this._make(this._raw(op).slice(0, Math.min(n, this.length)));
  }

  /** Items [begin, end). @throws KilnError `Index`. */
  slice(begin: number, end: number = this.length): Dataset {
    const op = 'Dataset.slice';
    int(begin, op, 'begin', 0);
    int(end, op, 'end', 0);
    return this._make(this._raw(op).slice(begin, end));
  }

  /** Copies: x `[length·itemSize]` row-major (MNIST normalised), y labels or targets. */
  toArrays(): { x: Float32Array; y: Int32Array | Float32Array } {
    return this._raw('Dataset.toArrays').toArrays();
  }
}

type DatasetCtor = new (token: symbol, handle: RawDataset) => Dataset;

/** The engine's dataset of `d` (a Dataset of this instance), or `Type` naming op. */
function unwrapDataset(e: Engine, d: unknown, op: string, what = 'data'): RawDataset {
  if (!(d instanceof e.bound(Dataset))) throw fail('Type', `${op}: ${what} must be a kiln.data Dataset, got ${describe(d)}`);
  return d._raw(op);
}

// ---------------------------------------------------------------- Learner

/**
 * Trains a model with an optimizer and a loss. Each trainBatch, and each call fit() makes,
 * runs whole steps inside WebAssembly (forward, loss, backward, optimizer step, accuracy).
 * The model's parameters are updated in place (the JS model object sees them).
 */
export class Learner extends HandleOwner<RawLearner> {
  /** @internal */
  declare readonly _e: Engine;
  readonly model: Model;
  readonly optimizer: Optimizer;
  readonly loss: Loss;
  /** @internal */
  _busy: boolean;

  /** @throws KilnError `Type` (model), `Config` (optimizer, loss, options; inputShape that does not fit the model). */
  constructor(model: Model, config: LearnerConfig) {
    const op = 'Learner';
    const e = engineOfNew(new.target, op);
    const c = options(config, op, ['optimizer', 'loss', 'seed', 'inputShape']);
    const m = unwrapModel(e, model, op);
    if (!(c.optimizer instanceof e.bound(Optimizer))) {
      throw fail('Config', `${op}: optimizer must be a kiln.optim optimizer (e.g. kiln.optim.adam({lr: 1e-3})), got ${describe(c.optimizer)}`);
    }
    const optimizer = c.optimizer as Optimizer;
    const loss = lossOf(e, c.loss, op);
    const seed = int(c.seed, op, 'seed', 0);
    const inputShape = intShape(c.inputShape, op, 'inputShape');
    super(camelErrors(() => e.raw.learnerCreate(m, optimizer._raw(op), loss._json, seed, inputShape)), 'learner');
    this.model = model;
    this.optimizer = optimizer;
    this.loss = loss;
    this._busy = false;
  }

  /** The handle; `Busy` while fit() runs unless allowBusy. @internal */
  _raw(op: string, allowBusy = false): RawLearner {
    const h = super._raw(op);
    if (this._busy && !allowBusy) throw fail('Busy', `${op}: fit() is running on this learner`);
    return h;
  }

  /**
   * One step on a batch: x `[n·itemSize]`, y Int32Array `[n]` labels or Float32Array targets.
   * Accuracy: argmax matches the label (mse: argmax of output and target, or |out - t| < 0.5 for one output).
   * @throws KilnError `Type`, `Shape` (lengths, the model's input), `DType` (float targets for crossEntropy), `Index` (label out of range), `Busy` (fit running), `Disposed`.
   */
  trainBatch(x: Float32Array, y: Int32Array | Float32Array, n?: number): { loss: number; accuracy: number } {
    const op = 'Learner.trainBatch';
    const h = this._raw(op);
    if (!(x instanceof Float32Array)) throw fail('Type', `${op}: x must be a Float32Array, got ${describe(x)}`);
    if (!(y instanceof Int32Array) && !(y instanceof Float32Array)) {
      throw fail('Type', `${op}: y must be an Int32Array (class labels) or a Float32Array (targets), got ${describe(y)}`);
    }
    const count = int(n, op, 'n', 0, 1);
    const r = camelErrors(() => h.trainBatch(x, y, count));
    return { loss: r.loss, accuracy: r.accuracy };
  }

  /** Trains for `epochs` epochs; resolves with the history. @throws as trainBatch; rejects with the signal's reason when aborted. */
  async fit(train: Dataset, config?: FitOptions): Promise<History> {
    const op = 'Learner.fit';
    const h = this._raw(op);
    const data = unwrapDataset(this._e, train, op, 'train');
    const c = options(config, op, [
      'epochs', 'batchSize', 'shuffle', 'validationData', 'batchesPerCall', 'onBatchEnd',
      'onEpochEnd', 'signal', 'validationBatchSize',
    ]);
    const epochs = int(c.epochs, op, 'epochs', 1, 0);
    const batchSize = int(c.batchSize, op, 'batchSize', 32, 1);
    const shuffle = bool(c.shuffle, op, 'shuffle', true);
    const perCall = int(c.batchesPerCall, op, 'batchesPerCall', 1, 1);
    const validBatch = int(c.validationBatchSize, op, 'validationBatchSize', 256, 1);
    const valid = c.validationData === undefined ? null : unwrapDataset(this._e, c.validationData, op, 'validationData');
    for (const f of ['onBatchEnd', 'onEpochEnd']) {
      if (c[f] !== undefined && typeof c[f] !== 'function') throw fail('Type', `${op}: ${f} must be a function, got ${describe(c[f])}`);
    }
    const signal = c.signal;
    if (signal !== undefined && (signal === null || typeof signal.aborted !== 'boolean')) {
      throw fail('Type', `${op}: signal must be an AbortSignal, got ${describe(signal)}`);
    }
    const checkAbort = () => {
      if (signal && signal.aborted) {
        throw signal.reason ?? fail('State', `${op}: aborted`);
      }
    };
    const history: History = { epochs: [] as EpochLog[], loss: [] as number[], accuracy: [] as number[], validLoss: [] as number[], validAccuracy: [] as number[] };
    this._busy = true;
    try {
      for (let epoch = 1; epoch <= epochs; epoch++) {
        checkAbort();
        const numBatches = camelErrors(() => h.beginEpoch(data, batchSize, shuffle));
        const start = now();
        let lossSum = 0;
        let correct = 0;
        let items = 0;
        let batch = 0;
        for (;;) {
          const r = camelErrors(() => h.trainBatches(perCall));
          lossSum += r.lossSum;
          correct += r.correct;
          items += r.items;
          batch += r.batches;
          if (c.onBatchEnd) {
            await c.onBatchEnd({
              epoch, batch, numBatches, loss: r.loss, accuracy: r.accuracy,
              itemsPerSecond: items / Math.max(1e-9, (now() - start) / 1000),
            });
          }
          if (r.done) break;
          await nextTurn();
          checkAbort();  // the model keeps what it learned so far
        }
        const seconds = (now() - start) / 1000;
        const log: Options = {
          epoch, loss: lossSum / items, accuracy: correct / items,
          itemsPerSecond: items / Math.max(1e-9, seconds), seconds,
        };
        if (valid) {
          const v = await this._evaluateAsync(valid, validBatch, checkAbort);
          log.validLoss = v.loss;
          log.validAccuracy = v.accuracy;
          history.validLoss.push(v.loss);
          history.validAccuracy.push(v.accuracy);
        }
        history.epochs.push(log as EpochLog);
        history.loss.push(log.loss);
        history.accuracy.push(log.accuracy);
        if (c.onEpochEnd) await c.onEpochEnd({ ...log });
        await nextTurn();
      }
    } finally {
      this._busy = false;
    }
    return history;
  }

  /** @internal */
  async _evaluateAsync(data: RawDataset, batchSize: number, checkAbort: () => void): Promise<{ loss: number; accuracy: number }> {
    const h = this._raw('Learner.fit', true);
    let lossSum = 0;
    let correct = 0;
    let items = 0;
    const perCall = Math.max(1, Math.floor(4096 / batchSize));
    for (let first = 0; ; first += perCall) {
      checkAbort();
      const r = camelErrors(() => h.evalBatches(data, batchSize, first, perCall));
      lossSum += r.lossSum;
      correct += r.correct;
      items += r.items;
      if (r.done) break;
      await nextTurn();
    }
    return { loss: lossSum / items, accuracy: correct / items };
  }

  /** Mean loss and accuracy over data in inference mode (batchSize default 256). */
  evaluate(data: Dataset, config?: { batchSize?: number }): { loss: number; accuracy: number } {
    const op = 'Learner.evaluate';
    const h = this._raw(op, true);
    const d = unwrapDataset(this._e, data, op);
    const c = options(config, op, ['batchSize']);
    const batchSize = int(c.batchSize, op, 'batchSize', 256, 1);
    const n = Math.ceil(d.length() / batchSize);
    const r = camelErrors(() => h.evalBatches(d, batchSize, 0, n));
    return { loss: r.loss, accuracy: r.accuracy };
  }

  /**
   * Outputs in inference mode, row-major `[n, ...output]`: softmax probabilities for
   * crossEntropy, raw outputs for mse. A Float32Array x needs the item size (see inputShape) or `n`.
   */
  predict(x: Float32Array | Tensor | Dataset, config?: { batchSize?: number; n?: number }): Float32Array {
    const op = 'Learner.predict';
    const h = this._raw(op, true);
    const c = options(config, op, ['batchSize', 'n']);
    const batchSize = int(c.batchSize, op, 'batchSize', 256, 1);
    const e = this._e;
    if (x instanceof e.bound(Dataset)) return camelErrors(() => h.predictDataset(x._raw(op), batchSize));
    if (x instanceof e.Tensor) {
      const shape = x.shape;
      if (shape.length < 2) throw fail('Shape', `${op}: x must be [n, ...], got shape [${shape.join(', ')}]`);
      const values = x.dataSync();
      if (!(values instanceof Float32Array)) throw fail('DType', `${op}: x must be a float32 tensor, got ${x.dtype}`);
      return camelErrors(() => h.predict(values, shape[0], batchSize));
    }
    if (!(x instanceof Float32Array)) {
      throw fail('Type', `${op}: x must be a Float32Array, a Tensor or a Dataset, got ${describe(x)}`);
    }
    const n = int(c.n, op, 'n', 0, 1);
    return camelErrors(() => h.predict(x, n, batchSize));
  }

  /** Epochs started. */
  get epoch(): number {
    return this._raw('Learner.epoch', true).info().epoch;
  }

  /** Optimizer steps taken. */
  get steps(): number {
    return this._raw('Learner.steps', true).info().steps;
  }

  /** The last learning rate. */
  get learningRate(): number {
    return this._raw('Learner.learningRate', true).info().learningRate;
  }

  /** Frees the learner (not the model, optimizer or data). @throws KilnError `Busy` while fit runs. */
  dispose(): void {
    if (this._h !== null && this._busy) {
      throw fail('Busy', 'Learner.dispose: fit() is running (abort it with its signal first)');
    }
    super.dispose();
  }
}

// ---------------------------------------------------------------- the factories

type LossCtor = new (token: symbol, kind: string, json: string, config: Options) => Loss;
type ScheduleCtor = new (token: symbol, kind: string, json: string, config: Options) => Schedule;
type OptimizerCtor = new (token: symbol, kind: string, handle: RawOptimizer, config: Options) => Optimizer;

/** Checks a loss JSON in the engine (a throwaway learner-free parse). */
function validateLoss(e: Engine, text: string): void {
  camelErrors(() => e.raw.lossValidate(text));
}

function crossEntropy(e: Engine, config?: unknown): Loss {
  const op = 'loss.crossEntropy';
  const c = options(config, op, ['labelSmoothing', 'weights', 'ignoreIndex', 'reduction']);
  const json: Options = { kind: 'cross_entropy' };
  if (c.labelSmoothing !== undefined) json.smoothing = num(c.labelSmoothing, op, 'labelSmoothing');
  if (c.weights !== undefined) {
    if (!Array.isArray(c.weights) && !(c.weights instanceof Float32Array)) {
      throw fail('Type', `${op}: weights must be an array of numbers, got ${describe(c.weights)}`);
    }
    json.weights = Array.from(c.weights as ArrayLike<unknown>, (w, i) => num(w, op, `weights[${i}]`));
  }
  if (c.ignoreIndex !== undefined) json.ignore_index = int(c.ignoreIndex, op, 'ignoreIndex', 0, -2147483648);
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const text = JSON.stringify(json);
  validateLoss(e, text);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'crossEntropy', text, { ...c });
}

function binaryCrossEntropy(e: Engine, config?: unknown): Loss {
  const op = 'loss.binaryCrossEntropy';
  const c = options(config, op, ['logits', 'labelSmoothing', 'weights', 'reduction']);
  const json: Options = { kind: 'binary_cross_entropy', logits: bool(c.logits, op, 'logits', false) };
  if (c.labelSmoothing !== undefined) json.smoothing = num(c.labelSmoothing, op, 'labelSmoothing');
  if (c.weights !== undefined) {
    if (!Array.isArray(c.weights) && !(c.weights instanceof Float32Array)) {
      throw fail('Type', `${op}: weights must be an array of numbers, got ${describe(c.weights)}`);
    }
    json.weights = Array.from(c.weights as ArrayLike<unknown>, (w, i) => num(w, op, `weights[${i}]`));
  }
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const text = JSON.stringify(json);
  validateLoss(e, text);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'binaryCrossEntropy', text, { ...c });
}

function mse(e: Engine, config?: unknown): Loss {
  const op = 'loss.mse';
  const c = options(config, op, ['reduction']);
  const json: Options = { kind: 'mse' };
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const text = JSON.stringify(json);
  validateLoss(e, text);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'mse', text, { ...c });
}

function lossOf(e: Engine, v: unknown, op: string): Loss {
  if (v === undefined || v === 'crossEntropy') return crossEntropy(e);
  if (v === 'mse') return mse(e);
  if (v instanceof e.bound(Loss) && v.kind !== 'binaryCrossEntropy' && v.config.reduction !== 'none') return v;
  throw fail('Config', `${op}: loss must be 'crossEntropy', 'mse' or a kiln.loss object, got ${describe(v)}`);
}

const LossBase = Loss;
const ScheduleBase = Schedule;
const OptimizerBase = Optimizer;
const DatasetBase = Dataset;
const LearnerBase = Learner;

/** Installs kiln.loss, kiln.optim, kiln.data and kiln.Learner onto `kiln`. */
export function installTrain(kiln: Record<string, unknown>, raw: RawModule, e: Engine): void {
  const L = bindClass(class Loss extends LossBase {}, e) as unknown as LossCtor & typeof Loss;
  const S = bindClass(class Schedule extends ScheduleBase {}, e) as unknown as ScheduleCtor & typeof Schedule;
  const O = bindClass(class Optimizer extends OptimizerBase {}, e) as unknown as OptimizerCtor & typeof Optimizer;
  const D = bindClass(class Dataset extends DatasetBase {}, e) as unknown as DatasetCtor & typeof Dataset;

  kiln.loss = Object.freeze({
    crossEntropy: (config?: unknown) => crossEntropy(e, config),
    binaryCrossEntropy: (config?: unknown) => binaryCrossEntropy(e, config),
    mse: (config?: unknown) => mse(e, config),
    Loss: L,
  });

  // ---- schedules

  function schedule(kind: string, fields: string[]) {
    return (config?: unknown): Schedule => {
      const op = `optim.schedule.${kind}`;
      const c = options(kind === 'constant' && typeof config === 'number' ? { lr: config } : config, op, fields);
      const json: Options = { kind };
      for (const f of fields) {
        if (c[f] === undefined) continue;
        json[f.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`)] = c[f];
      }
      const text = JSON.stringify(json);
      camelErrors(() => raw.scheduleValues(text, 0));
      return new S(TOKEN, kind, text, { ...c });
    };
  }

  const scheduleFns = Object.freeze({
    constant: schedule('constant', ['lr']),
    step: schedule('step', ['initialLr', 'stepSize', 'gamma']),
    exponential: schedule('exponential', ['initialLr', 'gamma']),
    linear: schedule('linear', ['initialLr', 'finalLr', 'numIters']),
    cosine: schedule('cosine', ['initialLr', 'numIters', 'minLr']),
    noam: schedule('noam', ['factor', 'warmupSteps', 'modelSize']),
  });

  // ---- optimizers

  function lrJson(lr: unknown, op: string, dflt: Options | undefined): string {
    if (lr === undefined) {
      if (dflt === undefined) throw fail('Config', `${op}: lr is required`);
      return JSON.stringify(dflt);
    }
    if (lr instanceof S) return lr._json;
    if (typeof lr !== 'number' || Number.isNaN(lr)) {
      throw fail('Type', `${op}: lr must be a number or a kiln.optim.schedule, got ${describe(lr)}`);
    }
    return JSON.stringify({ kind: 'constant', lr });
  }

  function clipping(v: unknown, op: string): Options | undefined {
    if (v === undefined) return undefined;
    if (!isPlainObject(v) || Object.keys(v).length !== 1 || !('norm' in v || 'value' in v)) {
      throw fail('Config', `${op}: gradClipping must be {norm: maxNorm} or {value: threshold}, got ${describe(v)}`);
    }
    return 'norm' in v ? { Norm: num(v.norm, op, 'gradClipping.norm') } : { Value: num(v.value, op, 'gradClipping.value') };
  }

  function decay(v: unknown, op: string): Options | undefined {
    const wd = num(v, op, 'weightDecay', 0);
    return wd === 0 ? undefined : { penalty: wd };
  }

  function makeOptimizer(kind: string, op: string, c: Options, config: Options, lrDefault: Options | undefined): Optimizer {
    const lr = lrJson(c.lr, op, lrDefault);
    const handle = camelErrors(() => raw.optimizerCreate(kind, JSON.stringify(config), lr));
    return new O(TOKEN, kind, handle, { ...c });
  }

  function sgd(config?: unknown): Optimizer {
    const op = 'optim.sgd';
    const c = options(config, op, ['lr', 'momentum', 'dampening', 'nesterov', 'weightDecay', 'gradClipping']);
    const momentum = num(c.momentum, op, 'momentum', 0);
    const dampening = num(c.dampening, op, 'dampening', 0);
    const nesterov = bool(c.nesterov, op, 'nesterov', false);
    if (nesterov && (momentum <= 0 || dampening !== 0)) {
      throw fail('Config', `${op}: nesterov needs momentum > 0 and dampening 0 (as PyTorch), got momentum ${momentum}, dampening ${dampening}`);
    }
    const json: Options = {};
    const wd = decay(c.weightDecay, op);
    if (wd) json.weight_decay = wd;
    if (momentum !== 0 || dampening !== 0) json.momentum = { momentum, dampening, nesterov };
    const clip = clipping(c.gradClipping, op);
    if (clip) json.gradient_clipping = clip;
    return makeOptimizer('sgd', op, c, json, undefined);
  }

  function adamLike(kind: string, op: string, c: Options, weightDecayDefault: number): Optimizer {
    const json: Options = {
      beta_1: num(c.beta1, op, 'beta1', 0.9),
      beta_2: num(c.beta2, op, 'beta2', 0.999),
      epsilon: num(c.epsilon, op, 'epsilon', 1e-8),
      amsgrad: bool(c.amsgrad, op, 'amsgrad', false),
    };
    if (kind === 'adamW') {
      json.weight_decay = num(c.weightDecay, op, 'weightDecay', weightDecayDefault);
    } else {
      const wd = decay(c.weightDecay, op);
      if (wd) json.weight_decay = wd;
    }
    const clip = clipping(c.gradClipping, op);
    if (clip) json.grad_clipping = clip;
    return makeOptimizer(kind, op, c, json, { kind: 'constant', lr: 1e-3 });
  }

  const ADAM_FIELDS = ['lr', 'beta1', 'beta2', 'epsilon', 'weightDecay', 'amsgrad', 'gradClipping'];

  function adam(config?: unknown): Optimizer {
    const op = 'optim.adam';
    return adamLike('adam', op, options(config, op, ADAM_FIELDS), 0);
  }

  function adamW(config?: unknown): Optimizer {
    const op = 'optim.adamW';
    return adamLike('adamW', op, options(config, op, ADAM_FIELDS), 0.01);
  }

  function rmsProp(config?: unknown): Optimizer {
    const op = 'optim.rmsProp';
    const c = options(config, op, ['lr', 'alpha', 'momentum', 'epsilon', 'centered', 'weightDecay', 'gradClipping']);
    const json: Options = {
      alpha: num(c.alpha, op, 'alpha', 0.99),
      momentum: num(c.momentum, op, 'momentum', 0),
      epsilon: num(c.epsilon, op, 'epsilon', 1e-8),
      centered: bool(c.centered, op, 'centered', false),
    };
    const wd = decay(c.weightDecay, op);
    if (wd) json.weight_decay = wd;
    const clip = clipping(c.gradClipping, op);
    if (clip) json.grad_clipping = clip;
    return makeOptimizer('rmsProp', op, c, json, { kind: 'constant', lr: 1e-2 });
  }

  kiln.optim = Object.freeze({ sgd, adam, adamW, rmsProp, schedule: scheduleFns, Optimizer: O, Schedule: S });

  // ---- data

  function fromArrays(x: unknown, y: unknown, config?: unknown): Dataset {
    const op = 'data.fromArrays';
    const c = options(config, op, ['itemShape', 'targetShape', 'numClasses']);
    if (!(x instanceof Float32Array)) throw fail('Type', `${op}: x must be a Float32Array, got ${describe(x)}`);
    if (!(y instanceof Int32Array) && !(y instanceof Float32Array)) {
      throw fail('Type', `${op}: y must be an Int32Array (class labels) or a Float32Array (targets), got ${describe(y)}`);
    }
    if (c.itemShape === undefined) throw fail('Config', `${op}: itemShape is required (e.g. [784] or [2])`);
    checkIntArray(c.itemShape, op, 'itemShape');
    const targetShape = intShape(c.targetShape, op, 'targetShape');
    const numClasses = int(c.numClasses, op, 'numClasses', 0);
    return new D(TOKEN, raw.datasetFromArrays(x, y, c.itemShape, targetShape, numClasses));
  }

  function mnist(images: unknown, labels: unknown): Dataset {
    const op = 'data.mnist';
    if (!(images instanceof Uint8Array)) throw fail('Type', `${op}: imagesIdxBytes must be a Uint8Array, got ${describe(images)}`);
    if (!(labels instanceof Uint8Array)) throw fail('Type', `${op}: labelsIdxBytes must be a Uint8Array, got ${describe(labels)}`);
    return new D(TOKEN, raw.datasetMnist(images, labels));
  }

  kiln.data = Object.freeze({ fromArrays, mnist, Dataset: D });

  // ---- Learner

  kiln.Learner = bindClass(class Learner extends LearnerBase {}, e);
}
