// Internal: kiln.Learner's general path (learner.ts): a user trainStep/validStep over any
// (async) iterable of batches, metrics, an lr scheduler, gradient accumulation, checkpoints
// with resume, early stopping, the Node progress bar and callbacks. Each training step is the
// engine's one guarded step (bindings/train_learner.cpp RawStepper -> kiln::train::train_step /
// apply_checked_step: loss check, backward, gradient checks, clipping, optimizer step, update
// checks; on the webgpu engine the same checks on the device, read after the step:
// learner_fit.ts generalStepAsync); this file is the loop around it.
// fit() on this path runs learner_fit.ts (the epoch loop, checkpoints, the progress bar),
// which learner.ts imports on the first such fit(): a page that trains on the built-in loss
// path never fetches it.
import { gatherParams, Module as ModuleClass, type Module } from '../module_class.js';
import { camelErrors, type Model } from '../nn.js';
import type { RawStepper } from '../raw.js';
import { describe, fail } from '../tensor/checks.js';
import type { Engine, Scoped } from '../tensor/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import { int, options, type Options } from './common.js';
import { checkpointerOf, EarlyStopping, isNode, type CheckpointStore } from './learner_support.js';
import { checkMetric, Loss as LossMetric, type Metric } from './metrics.js';
import { Optimizer, ReduceLROnPlateau, Schedule } from './optim.js';

/** What a train or valid step returns. */
export interface StepOutput {
  /** The batch's loss: a one-element float32 tensor whose graph reaches the parameters (train). */
  loss: Tensor;
  /** The model's output (what metrics such as Accuracy read). */
  output?: Tensor;
  /** The batch's targets (what metrics compare the output with). */
  targets?: Tensor | Int32Array | Float32Array;
}

/** A user step: forward and loss of one batch (`(model, batch) => ({loss, output, targets})`). */
export type StepFn<M = Model | Module, B = unknown> = (model: M, batch: B) => StepOutput;

/** The per-epoch record of the general path. */
export interface GeneralEpochLog {
  epoch: number;
  /** metric name -> value over the epoch's training batches. */
  train: Record<string, number>;
  /** metric name -> value over the validation batches (empty without validLoader). */
  valid: Record<string, number>;
  /** train.loss / train.accuracy / valid.loss / valid.accuracy (NaN when absent), as EpochLog. */
  loss: number;
  accuracy: number;
  validLoss?: number;
  validAccuracy?: number;
  /** The learning rate of the epoch's last step. */
  lr: number;
  itemsPerSecond: number;
  seconds: number;
}

export interface GeneralBatchLog {
  epoch: number;
  batch: number;
  /** Batches per epoch when the loader says (its length), else NaN. */
  numBatches: number;
  loss: number;
  lr: number;
  itemsPerSecond: number;
}

/** Callbacks of fit() (the browser's way to follow training; Node also draws a progress bar). */
export interface FitCallbacks {
  onEpochBegin?: (epoch: number) => void | Promise<void>;
  onBatchEnd?: (log: GeneralBatchLog) => void | Promise<void>;
  onEpochEnd?: (log: GeneralEpochLog) => void | Promise<void>;
  onTrainEnd?: (history: GeneralHistory) => void | Promise<void>;
}

export interface GeneralHistory {
  epochs: GeneralEpochLog[];
  loss: number[];
  accuracy: number[];
  validLoss: number[];
  validAccuracy: number[];
  /** Why fit() ended: 'epochs' (all done) or 'earlyStopping'. */
  stopReason: 'epochs' | 'earlyStopping';
}

/** The general path's settings (checked by the Learner's constructor). */
export interface GeneralSetup {
  model: Model | Module;
  optimizer: Optimizer;
  trainStep: StepFn;
  validStep: StepFn;
  metrics: Metric[];
  plateau: ReduceLROnPlateau | null;
  monitor: string;
  accumulation: number;
  checkpointer: { store: CheckpointStore; every: number } | null;
  earlyStopping: EarlyStopping | null;
  seed: number;
  stepper: RawStepper;
}

/** Checks and fills the general path's options (the constructor's). */
export function generalSetup(e: Engine, model: Model | Module, c: Options, op: string, defaultStep: StepFn | null,
  stepper: () => RawStepper): GeneralSetup {
  const bound = e.bound(Optimizer);
  if (!(c.optimizer instanceof bound)) {
    throw fail('Config', `${op}: optimizer must be a kiln.optim optimizer (e.g. kiln.optim.adam({lr: 1e-3})), got ${describe(c.optimizer)}`);
  }
  for (const f of ['trainStep', 'validStep']) {
    if (c[f] !== undefined && typeof c[f] !== 'function') throw fail('Type', `${op}: ${f} must be a function (model, batch) => ({loss, output, targets}), got ${describe(c[f])}`);
  }
  const trainStep = (c.trainStep ?? defaultStep) as StepFn | null;
  if (trainStep === null) throw fail('Config', `${op}: give trainStep (model, batch) => ({loss, output, targets}), or a loss for the default step`);
  const validStep = (c.validStep ?? c.trainStep ?? defaultStep) as StepFn;
  if (c.metrics !== undefined && !Array.isArray(c.metrics)) throw fail('Type', `${op}: metrics must be an array of metrics, got ${describe(c.metrics)}`);
  const metrics = ((c.metrics ?? []) as unknown[]).map((m, i) => checkMetric(m, op, `metrics[${i}]`));
  const names = new Set<string>();
  for (const m of metrics) {
    if (names.has(m.name)) throw fail('Config', `${op}: two metrics are named "${m.name}" (give one a name: {name})`);
    names.add(m.name);
  }
  if (!names.has('loss')) metrics.unshift(new LossMetric());
  let plateau: ReduceLROnPlateau | null = null;
  let schedule: Schedule | null = null;
  let monitor = '';
  const lr = c.lrScheduler;
  if (lr !== undefined) {
    const target = lr !== null && typeof lr === 'object' && 'scheduler' in lr ? options(lr, `${op}: lrScheduler`, ['scheduler', 'monitor']) : { scheduler: lr };
    const s = target.scheduler;
    if (s instanceof e.bound(ReduceLROnPlateau)) {
      plateau = s;
      if (s.optimizer !== c.optimizer) throw fail('Config', `${op}: lrScheduler is a ReduceLROnPlateau of another optimizer (make it with new kiln.optim.ReduceLROnPlateau(optimizer, ...))`);
      if (target.monitor !== undefined) {
        if (typeof target.monitor !== 'string' || !/^(train|valid)\.[^.]+$/.test(target.monitor)) {
          throw fail('Config', `${op}: lrScheduler.monitor must be "train.<metric>" or "valid.<metric>", got ${describe(target.monitor)}`);
        }
        monitor = target.monitor;
      }
    } else if (s instanceof e.bound(Schedule)) {
      schedule = s as Schedule;  // set on the optimizer once every option is checked
    } else {
      throw fail('Type', `${op}: lrScheduler must be a kiln.optim.schedule.*(...) or a kiln.optim.ReduceLROnPlateau, got ${describe(s)}`);
    }
  }
  const accumulation = int(c.gradientAccumulation, op, 'gradientAccumulation', 1, 1);
  const checkpointer = checkpointerOf(c.checkpointer, op);
  const earlyStopping = c.earlyStopping === undefined ? null : new EarlyStopping(c.earlyStopping, op);
  const seed = int(c.seed, op, 'seed', 0, 0);
  if (schedule !== null) {
    const optimizer = c.optimizer as Optimizer;
    const spec = schedule._spec;
    camelErrors(() => e.raw.optimizerSetSchedule(optimizer._raw(op), spec));
  }
  return {
    model, optimizer: c.optimizer as Optimizer, trainStep, validStep, metrics, plateau, monitor, accumulation,
    checkpointer, earlyStopping, seed, stepper: stepper(),
  };
}

/** Throws `Type` unless `model` is a kiln.Module (a user module, Sequential or layer). */
export function checkModel(e: Engine, model: unknown, op: string): void {
  // gatherParams also takes arrays of tensors (optimizer.step's), which a Learner does not.
  if (!(model instanceof e.bound(ModuleClass))) {
    throw fail('Type', `${op}: model must be a kiln.Module (a kiln.nn Sequential or layer, or a class extending kiln.Module), got ${describe(model)}`);
  }
  const { list } = gatherParams(e, model, op);
  list.release();
  list.delete();
}

// ---------------------------------------------------------------- scopes

/** Runs fn in a tidy-like scope: every tensor it creates is disposed at the end. @internal */
export function scoped<T>(e: Engine, fn: () => T): T {
  const scope = new Set<Scoped>();
  e.scopes.push(scope);
  try {
    return fn();
  } finally {
    e.scopes.pop();
    for (const obj of [...scope]) obj.dispose();
  }
}

/** r as a StepOutput, or `Type` naming the step (`which`). @internal */
export function checkStepOutput(r: unknown, e: Engine, op: string, which: string): StepOutput {
  if (r === null || typeof r !== 'object') {
    throw fail('Type', `${op}: ${which} must return {loss, output, targets}, got ${describe(r)}`);
  }
  if (typeof (r as { then?: unknown }).then === 'function') {
    throw fail('Type', `${op}: ${which} returned a Promise; steps run synchronously (no await inside a step)`);
  }
  const o = r as Options;
  if (!(o.loss instanceof e.Tensor)) {
    throw fail('Type', `${op}: ${which} must return {loss, output, targets} with loss a Tensor (one element), got loss ${describe(o.loss)}`);
  }
  for (const f of ['output']) {
    if (o[f] !== undefined && !(o[f] instanceof e.Tensor)) throw fail('Type', `${op}: ${which}'s ${f} must be a Tensor, got ${describe(o[f])}`);
  }
  return o as StepOutput;
}

/**
 * One step of the general path on one batch: the user's trainStep, then the engine's guarded
 * step (or the gradients' accumulation), then the metrics. Every tensor the step makes is
 * disposed; the batch is not. `batch` counts from 1 in its epoch.
 * @returns the step's loss value and item count.
 */
export function generalStep(e: Engine, s: GeneralSetup, b: unknown, epoch: number, batch: number, op: string): { loss: number; n: number } {
  return scoped(e, () => {
    const r = checkStepOutput(s.trainStep(s.model, b), e, op, 'trainStep');
    const lossRaw = r.loss._raw(op, 'loss');
    const { list, refresh } = gatherParams(e, s.model, op);
    let value: number;
    try {
      if (s.accumulation === 1) {
        value = camelErrors(() => s.stepper.stepList(s.optimizer._raw(op), list, lossRaw, epoch, batch));
        refresh();
      } else {
        value = camelErrors(() => s.stepper.accumulateList(list, lossRaw, epoch, batch));
        if (batch % s.accumulation === 0) {
          camelErrors(() => s.stepper.applyList(s.optimizer._raw(op), list, epoch, batch));
          refresh();
        }
      }
    } finally {
      list.release();
      list.delete();
    }
    const n = r.output ? (r.output.shape[0] ?? 1) : 1;
    const info = { loss: value, lr: s.optimizer.learningRate, batchSize: n };
    for (const m of s.metrics) m.update(r.output as Tensor, r.targets as Tensor, info);
    return { loss: value, n };
  });
}

// ---------------------------------------------------------------- fit

export interface GeneralFitOptions {
  epochs?: number;
  validLoader?: AsyncIterable<unknown> | Iterable<unknown>;
  signal?: { readonly aborted: boolean; readonly reason?: unknown };
  callbacks?: FitCallbacks;
  /** Continue from the checkpointer's latest checkpoint (true) or that of an epoch. */
  resume?: boolean | number;
  /** Node: draw a progress bar on stderr (default: when stderr is a terminal). */
  progress?: boolean;
}

export { isNode };
