// kiln.Learner: trains a model with an optimizer and a loss, whole steps inside WebAssembly
// (bindings/train_learner.cpp): one call per batch, or per `batchesPerCall` batches; fit()
// yields to the event loop between calls.
import { HandleOwner } from '../handle.js';
import type { Module } from '../module_class.js';
import { camelErrors, unwrapModel, type Model } from '../nn.js';
import type { RawBatchesResult, RawDataset, RawLearner, RawStepper, RawTensor } from '../raw.js';
import { describe, fail } from '../tensor/checks.js';
import { bindClass, type Engine } from '../tensor/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import type { EpochLog, FitOptions, History, LearnerConfig } from '../train_api.js';
import { bool, engineOfNew, int, intShape, nextTurn, now, options, type Options } from './common.js';
import { Dataset, unwrapDataset } from './data.js';
import { lossOf, type Loss } from './loss.js';
import { Optimizer } from './optim.js';
import { checkModel, generalSetup, generalStep, type GeneralFitOptions, type GeneralHistory, type GeneralSetup, type StepFn } from './learner_loop.js';

/**
 * fit()'s default batchesPerCall on the webgpu backend: the steps run on the device and the
 * loss, accuracy and non-finite guard are read back once per call (one GPU read per 16 steps).
 */
export const WEBGPU_BATCHES_PER_CALL = 16;

/** The options that select the Learner's general path. */
const GENERAL_OPTIONS = ['trainStep', 'validStep', 'metrics', 'lrScheduler', 'gradientAccumulation', 'checkpointer', 'earlyStopping'];

/** `{x, y}` or `[x, y]` -> output = model.forward(x), loss = loss.forward(output, y). */
function defaultTrainStep(e: Engine, loss: Loss, op: string): StepFn {
  return (model, batch) => {
    let x: unknown;
    let y: unknown;
    if (Array.isArray(batch) && batch.length === 2) [x, y] = batch;
    else if (batch !== null && typeof batch === 'object' && 'x' in batch && 'y' in batch) ({ x, y } = batch as { x: unknown; y: unknown });
    else throw fail('Type', `${op}: the default step needs batches {x, y} or [x, y] of tensors (or give trainStep), got ${describe(batch)}`);
    if (!(x instanceof e.Tensor) || !(y instanceof e.Tensor)) {
      throw fail('Type', `${op}: the default step needs batches {x, y} of tensors, got x ${describe(x)}, y ${describe(y)}`);
    }
    const output = (model as { forward(t: Tensor): Tensor }).forward(x);
    return { loss: loss.forward(output, y), output, targets: y };
  };
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
  readonly model: Model | Module;
  readonly optimizer: Optimizer;
  readonly loss: Loss;
  /** @internal */
  _busy: boolean;

  /** The general path's settings (trainStep, metrics, ...), null for the built-in loss path. @internal */
  _general: GeneralSetup | null;

  /**
   * Two paths. `{optimizer, loss, seed?, inputShape?}`: the built-in loss path (fit over a
   * kiln.data Dataset, whole steps in WebAssembly). With any of `trainStep`, `validStep`,
   * `metrics`, `lrScheduler`, `gradientAccumulation`, `checkpointer`, `earlyStopping`: the
   * general path, where fit() runs over any (async) iterable of batches (a
   * kiln.data.DataLoader) and each step is
   *   `trainStep(model, batch) => ({loss, output, targets})`   (default with a loss:
   *   `{x, y}` or `[x, y]` batches, output = model.forward(x), loss = loss.forward(output, y))
   * followed by the engine's guarded step (C++ kiln::train::train_step: the loss and every
   * gradient and update must be finite, clipping, optimizer step; a refused step changes
   * nothing and throws `NonFinite`). Options of the general path:
   * - metrics: kiln.metrics.* or your own ({name, update(output, targets, info), value(), reset()});
   *   a Loss metric is added when none is named "loss".
   * - lrScheduler: a kiln.optim.schedule.*(...) (set as the optimizer's per-step rate) or a
   *   kiln.optim.ReduceLROnPlateau over this optimizer, stepped after each epoch with
   *   {scheduler, monitor: "valid.loss"} (default valid.loss with a validLoader, else train.loss).
   * - gradientAccumulation: N: the gradients of N batches are summed (Burn's
   *   GradientsAccumulator; not averaged) and one guarded step is taken with them.
   * - checkpointer: {directory} (Node; files written atomically) or {store: {save, load}}
   *   (browser: kiln.io.indexedDBStore(prefix)), `every` epochs: model, optimizer state, scheduler, data-loader position
   *   (loader.state()), early-stopping state and history; fit({resume: true}) continues from it
   *   bit-identically (the engine's random generator is seeded from (seed, epoch) each epoch).
   * - earlyStopping: {monitor, patience, minDelta, mode}.
   * - seed: the per-epoch seed base (default 0).
   * On the webgpu backend the general path runs each step's checks on the device and reads its
   * loss (and, with metrics, its output and targets: the metrics get tensors whose synchronous
   * reads work) after it: 1 to 3 readbacks per step, where the built-in loss path reads once per
   * `batchesPerCall` steps; checkpoints read the model and the optimizer's state with await.
   * @throws KilnError `Type` (model, functions, metrics), `Config` (optimizer, loss, unknown
   *   options, metric names, a scheduler of another optimizer; inputShape that does not fit the
   *   model).
   */
  constructor(model: Model | Module, config: LearnerConfig) {
    const op = 'Learner';
    const e = engineOfNew(new.target, op);
    const c = options(config, op, ['optimizer', 'loss', 'seed', 'inputShape', ...GENERAL_OPTIONS]);
    if (GENERAL_OPTIONS.some((k) => c[k] !== undefined)) {
      if (c.inputShape !== undefined) throw fail('Config', `${op}: inputShape is an option of the built-in loss path (not with trainStep, metrics, ...)`);
      const loss = c.loss === undefined ? null : lossOf(e, c.loss, op);
      checkModel(e, model, op);
      const defaultStep = loss === null ? null : defaultTrainStep(e, loss, op);
      let stepper: RawStepper | null = null;
      const general = generalSetup(e, model, c, op, defaultStep, () => (stepper = e.raw.stepperCreate()));
      super(stepper as unknown as RawLearner, 'learner');
      this.model = model;
      this.optimizer = general.optimizer;
      this.loss = loss as Loss;
      this._busy = false;
      this._general = general;
      return;
    }
    const m = unwrapModel(e, model, op);
    if (!(c.optimizer instanceof e.bound(Optimizer))) {
      throw fail('Config', `${op}: optimizer must be a kiln.optim optimizer (e.g. kiln.optim.adam({lr: 1e-3})), got ${describe(c.optimizer)}`);
    }
    const optimizer = c.optimizer as Optimizer;
    const loss = lossOf(e, c.loss, op);
    const seed = int(c.seed, op, 'seed', 0);
    const inputShape = intShape(c.inputShape, op, 'inputShape');
    super(camelErrors(() => e.raw.learnerCreate(m, optimizer._raw(op), loss._spec, seed, inputShape)), 'learner');
    this.model = model;
    this.optimizer = optimizer;
    this.loss = loss;
    this._busy = false;
    this._general = null;
  }

  /** The built-in loss path's handle (`State` on the general path). @internal */
  _legacy(op: string): RawLearner {
    const h = this._raw(op);
    if (this._general !== null) {
      throw fail('State', `${op}: this Learner has a trainStep/metrics setup; ${op.split('.')[1]} belongs to the built-in loss path (new kiln.Learner(model, {optimizer, loss}))`);
    }
    return h;
  }

  /** The handle; `Busy` while fit() runs unless allowBusy. @internal */
  _raw(op: string, allowBusy = false): RawLearner {
    const h = super._raw(op);
    if (this._busy && !allowBusy) throw fail('Busy', `${op}: fit() is running on this learner`);
    return h;
  }

  /**
   * One step on a batch: x `[n·itemSize]`, y Int32Array `[n]` labels or Float32Array targets.
   * The step is the engine's one guarded training step (forward, loss, non-finite guard,
   * backward, clipping, optimizer step: C++ `kiln::train::train_step`, as SupervisedTraining).
   * Accuracy: argmax matches the label (mse: argmax of output and target, or |out - t| < 0.5 for one output).
   * @throws KilnError `Type`, `Shape` (lengths, the model's input), `DType` (float targets for crossEntropy), `Index` (label out of range), `Busy` (fit running), `Disposed`;
   *   `NonFinite` when the step's loss, a gradient or an updated weight is not finite: the step is
   *   refused (the model, the optimizer's state and its schedule are unchanged) and the message
   *   names the step, e.g. "Learner.fit: loss is NaN at epoch 1, batch 2 (...)".
   */
  trainBatch(x: Float32Array, y: Int32Array | Float32Array, n?: number): { loss: number; accuracy: number } {
    const op = 'Learner.trainBatch';
    const h = this._legacy(op);
    if (!(x instanceof Float32Array)) throw fail('Type', `${op}: x must be a Float32Array, got ${describe(x)}`);
    if (!(y instanceof Int32Array) && !(y instanceof Float32Array)) {
      throw fail('Type', `${op}: y must be an Int32Array (class labels) or a Float32Array (targets), got ${describe(y)}`);
    }
    const count = int(n, op, 'n', 0, 1);
    const r = camelErrors(() => h.trainBatch(x, y, count));
    return { loss: r.loss, accuracy: r.accuracy };
  }

  /**
   * One training step of the general path on one batch, synchronously (Keras'
   * `train_on_batch`, for loops that schedule their own steps, e.g. a page's worker):
   * `trainStep(model, batch)`, then the engine's guarded step (the loss and every gradient
   * and update finite, clipping, optimizer step), then the metrics' update. The model is put
   * in train() mode; the engine's randomness (dropout) is seeded from (seed, epoch) when
   * `epoch` differs from the previous call's, as fit() does at each epoch's start. `batch`
   * (from 1) names the step in a refused step's message. The batch's tensors stay the
   * caller's; every other tensor the step makes is disposed.
   * @param position {epoch, batch}, default {epoch: 1, batch: 1}
   * @returns the step's loss value.
   * @throws KilnError `State` on the built-in loss path (use trainBatch there), with
   *   gradientAccumulation (whose steps fit() completes) or on the webgpu backend (it returns
   *   the loss synchronously: use fit()), `Busy` while fit runs, `NonFinite`
   *   for a refused step (nothing changed), and what the trainStep throws.
   */
  trainOnBatch(batch: unknown, position?: { epoch?: number; batch?: number }): { loss: number } {
    const op = 'Learner.trainOnBatch';
    this._raw(op);
    const general = this._general;
    if (general === null) throw fail('State', `${op}: this Learner has the built-in loss path; use trainBatch(x, y) (trainOnBatch runs a trainStep)`);
    if (general.accumulation !== 1) throw fail('State', `${op}: gradientAccumulation ${general.accumulation} needs fit() to complete its steps`);
    this._e.requireSyncReads(op, 'await learner.fit(batches) (it reads each step\'s loss after the step)');
    const p = options(position ?? {}, op, ['epoch', 'batch']);
    const epoch = int(p.epoch, op, 'epoch', 1, 1);
    const index = int(p.batch, op, 'batch', 1, 1);
    const e = this._e;
    if (epoch !== this._lastEpoch) {
      e.raw.seed((general.seed * 1000003 + epoch * 7919) % 2147483647);
      this._lastEpoch = epoch;
    }
    (general.model as { train?: () => unknown }).train?.();
    try {
      return { loss: generalStep(e, general, batch, epoch, index, op).loss };
    } catch (err) {
      general.stepper.clear();
      throw err;
    }
  }

  /** The epoch of the last trainOnBatch (its seed is set). @internal */
  _lastEpoch = 0;

  /**
   * Trains for `epochs` epochs; resolves with the history. Built-in loss path: `train` is a
   * kiln.data Dataset (options FitOptions). General path: `train` is any iterable or async
   * iterable of batches (a kiln.data.DataLoader, an array, a generator) and the options are
   * {epochs, validLoader, signal, callbacks: {onEpochBegin, onBatchEnd, onEpochEnd,
   * onTrainEnd}, resume, progress}; a loader with state()/loadState() has its position
   * checkpointed. The tensors of each batch a loader or generator yields are disposed after
   * its step (an array's batches stay the caller's: they are used again every epoch); every
   * other tensor a step makes is disposed too, so memory stays flat over epochs. In Node a progress bar (batches, items/s, ETA, loss) is drawn on stderr when
   * it is a terminal (progress: true/false forces it).
   * @throws as trainBatch; rejects with the signal's reason when aborted. General path: `Type`
   *   (a step that does not return {loss: Tensor, ...}, data that is not iterable), `Shape`/
   *   `DType`/`State` (a loss that is not one float element of the graph), `NonFinite` (a refused
   *   step), `Format` (resume from a checkpoint of another model: the mismatched keys are named
   *   and nothing is loaded; a checkpoint file that is not valid JSON, naming it), `Io` (the
   *   checkpointer's directory cannot be created, written or read: naming the path, the system
   *   error as cause; paths under /proc and /sys are refused), and whatever the user's steps
   *   and metrics throw. A failed step's batch is disposed all the same.
   */
  async fit(train: Dataset, config?: FitOptions): Promise<History>;
  async fit(train: AsyncIterable<unknown> | Iterable<unknown>, config?: GeneralFitOptions): Promise<GeneralHistory>;
  async fit(train: Dataset | AsyncIterable<unknown> | Iterable<unknown>, config?: FitOptions | GeneralFitOptions): Promise<History | GeneralHistory> {
    const op = 'Learner.fit';
    this._raw(op);
    const general = this._general;
    if (general !== null) {
      this._busy = true;
      try {
        // The general path's loop loads on its first use (learner_fit.ts: a chunk of its own
        // in the bundled browser entry; the built-in loss path below never needs it).
        const { generalFit } = await import('./learner_fit.js');
        return await generalFit(this._e, general, train, config);
      } finally {
        this._busy = false;
      }
    }
    return this._fitDataset(train as Dataset, config as FitOptions | undefined);
  }

  /** @internal */
  async _fitDataset(train: Dataset, config?: FitOptions): Promise<History> {
    const op = 'Learner.fit';
    const h = this._raw(op);
    if (!(train instanceof this._e.bound(Dataset)) && train !== null && typeof train === 'object' && (Symbol.iterator in train || Symbol.asyncIterator in train)) {
      throw fail('Type', `${op}: train must be a kiln.data Dataset for a Learner made with {optimizer, loss}; to train on an iterable of batches (a kiln.data.DataLoader) give the Learner a trainStep or metrics (new kiln.Learner(model, {optimizer, loss, metrics: [...]})), got ${describe(train)}`);
    }
    unwrapDataset(this._e, train, op, 'train');
    const c = options(config, op, [
      'epochs', 'batchSize', 'shuffle', 'validationData', 'batchesPerCall', 'onBatchEnd',
      'onEpochEnd', 'signal', 'validationBatchSize',
    ]);
    const epochs = int(c.epochs, op, 'epochs', 1, 0);
    const batchSize = int(c.batchSize, op, 'batchSize', 32, 1);
    const shuffle = bool(c.shuffle, op, 'shuffle', true);
    // The webgpu backend reads the loss (with the steps' device-side guard) once per call.
    const perCall = int(c.batchesPerCall, op, 'batchesPerCall', this._e.asyncRead !== null ? WEBGPU_BATCHES_PER_CALL : 1, 1);
    const validBatch = int(c.validationBatchSize, op, 'validationBatchSize', 256, 1);
    if (c.validationData !== undefined) unwrapDataset(this._e, c.validationData, op, 'validationData');
    // The datasets are unwrapped again where they are used: disposing one while fit() awaits
    // (in a callback, or between event-loop turns) makes fit reject with `Disposed`.
    const valid = c.validationData === undefined ? null : () => unwrapDataset(this._e, c.validationData, op, 'validationData');
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
        const data = unwrapDataset(this._e, train, op, 'train');
        const numBatches = camelErrors(() => h.beginEpoch(data, batchSize, shuffle, epoch));
        const start = now();
        let lossSum = 0;
        let correct = 0;
        let items = 0;
        let batch = 0;
        for (;;) {
          const r = await this._settled(h, camelErrors(() => h.trainBatches(perCall)));
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
    } catch (err) {
      throw deviceErrorOf(op, err);
    } finally {
      this._busy = false;
    }
    return history;
  }

  /** @internal */
  async _evaluateAsync(dataOf: () => RawDataset, batchSize: number, checkAbort: () => void): Promise<{ loss: number; accuracy: number }> {
    const h = this._raw('Learner.fit', true);
    let lossSum = 0;
    let correct = 0;
    let items = 0;
    const perCall = Math.max(1, Math.floor(4096 / batchSize));
    for (let first = 0; ; first += perCall) {
      checkAbort();
      const data = dataOf();
      const r = await this._settled(h, camelErrors(() => h.evalBatches(data, batchSize, first, perCall)));
      lossSum += r.lossSum;
      correct += r.correct;
      items += r.items;
      if (r.done) break;
      await nextTurn();
    }
    return { loss: lossSum / items, accuracy: correct / items };
  }

  /**
   * On the webgpu engine, the totals of the batches trainBatches / evalBatches just ran: one
   * GPU read of the loss sums, the correct counts and the guard status of the steps (the
   * non-finite checks ran on the device, kiln/train/deferred_step.hpp); settle checks the steps
   * (rejects with `NonFinite` naming the first refused one: the model and the optimizer are
   * then those of the step before it) and returns the totals. On the cpu engine, `r` itself.
   * @internal
   */
  async _settled(h: RawLearner, r: RawBatchesResult): Promise<RawBatchesResult> {
    if (this._e.asyncRead === null) return r;
    const totals = this._e.wrap(camelErrors(() => (h.pendingTotals as () => RawTensor)()));
    const settle = (v: Float32Array, done: boolean) => (h.settle as (v: Float32Array, done: boolean) => RawBatchesResult).call(h, v, done);
    let values: Float32Array;
    try {
      values = (await totals.data()) as Float32Array;
    } catch (err) {
      // The steps are still pending. A device check (`Index`; the steps after it were refused
      // on the device) or an out-of-memory error is reported once, so the totals read now:
      // settle them (a refusal puts the optimizer back), then report the first error.
      try {
        const again = (await totals.data()) as Float32Array;
        try { settle(again, r.done); } catch { /* err names the cause */ }
      } catch { /* the device is gone: the instance is unusable anyway */ }
      throw err;
    } finally {
      totals.dispose();
    }
    return camelErrors(() => settle(values, r.done));
  }

  /**
   * Mean loss and accuracy over data in inference mode (batchSize default 256).
   * @throws KilnError `State` on the webgpu backend (its reads are asynchronous: give fit()
   *   `validationData`, or compute the loss with kiln.nn.functional and `await loss.data()`;
   *   webgpu_init.ts installs that error).
   */
  evaluate(data: Dataset, config?: { batchSize?: number }): { loss: number; accuracy: number } {
    const op = 'Learner.evaluate';
    this._legacy(op);

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
   * @throws KilnError `State` on the webgpu backend (its reads are asynchronous: use
   *   `model.forward(x)` and `await output.data()`; webgpu_init.ts installs that error).
   */
  predict(x: Float32Array | Tensor | Dataset, config?: { batchSize?: number; n?: number }): Float32Array {
    const op = 'Learner.predict';
    this._legacy(op);

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

  /** Epochs started (built-in loss path). */
  get epoch(): number {
    this._legacy('Learner.epoch');
    return this._raw('Learner.epoch', true).info().epoch;
  }

  /** Optimizer steps taken. */
  get steps(): number {
    if (this._general !== null) return this.optimizer.steps;
    return this._raw('Learner.steps', true).info().steps;
  }

  /** The last learning rate. */
  get learningRate(): number {
    if (this._general !== null) return this.optimizer.learningRate;
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

const LearnerBase = Learner;

/** Installs kiln.Learner onto `kiln`. */
export function installLearner(kiln: Record<string, unknown>, e: Engine): void {
  kiln.Learner = bindClass(class Learner extends LearnerBase {}, e);
}

/**
 * A GPU error (KilnError `Device`: device lost, validation; `OutOfMemory`) met inside fit()
 * names the primitive that met it ("fromData: WebGPU device lost ..."): the same error with
 * `op` in front, so the message says which call failed (the original is its `cause`). Any
 * other error as it is.
 */
function deviceErrorOf(op: string, err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (!(err instanceof Error) || (code !== 'Device' && code !== 'OutOfMemory') || err.message.startsWith(`${op}:`)) return err;
  const e = fail(code, `${op}: ${err.message}`);
  Object.defineProperty(e, 'cause', { value: err, configurable: true, writable: true });
  return e;
}
