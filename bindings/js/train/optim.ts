// kiln.optim: optimizers (SGD, Adam, AdamW, RMSprop) with their state in WebAssembly memory
// (bindings/train_optim.cpp) and learning-rate schedules.
import { KilnError } from '../errors.js';
import { HandleOwner } from '../handle.js';
import { gatherParams, stepParams, type Module } from '../module_class.js';
import { camelErrors, isPlainObject, Sequential, unwrapModel, type Model } from '../nn.js';
import type { RawOptimizer, RawPlateau, RawTensor } from '../raw.js';
import { describe, engineValue, fail, type EngineValue } from '../tensor/checks.js';
import { bindClass, type Engine } from '../tensor/engine.js';
import { Gradients as GradientsClass, type Gradients } from '../tensor/gradients.js';
import type { Scoped } from '../tensor/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import { GradientsAccumulator, paramList } from './accumulator.js';
import { bool, engineOfNew, int, num, options, TOKEN, type Options } from './common.js';

const options_ = options;

// ---------------------------------------------------------------- schedules

/** A learning-rate schedule: the rate of each optimizer step (Burn's lr_scheduler). */
export class Schedule {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind: 'constant' | 'step' | 'exponential' | 'linear' | 'cosine' | 'noam' | 'oneCycle';
  readonly config: Readonly<Record<string, unknown>>;
  /** The C++ schedule config (its JSON's tree). @internal */
  readonly _spec: EngineValue;

  /** Internal: made by kiln.optim.schedule.*(...). */
  protected constructor(token: never, kind: never, json: never, config: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Schedule: use kiln.optim.schedule.*(...)');
    this.kind = kind;
    this.config = Object.freeze(config as Options);
    this._spec = json;
    Object.freeze(this);
  }

  /**
   * The first n rates (the schedule's step() n times).
   * @throws KilnError `State` for a oneCycle schedule asked for more than totalSteps rates.
   */
  values(n: number): Float64Array {
    int(n, 'Schedule.values', 'n', 0);
    return camelErrors(() => this._e.raw.scheduleValues(this._spec, n));
  }

  /**
   * The momentum PyTorch's OneCycleLR sets at each of the first n steps (cycled between
   * maxMomentum and baseMomentum, mirroring the rate); NaN for the other schedules and for
   * oneCycle with cycleMomentum false. Kiln's optimizers do not take it (their configs are
   * fixed): it is there to report or plot.
   */
  momentumValues(n: number): Float64Array {
    int(n, 'Schedule.momentumValues', 'n', 0);
    return camelErrors(() => this._e.raw.scheduleMomentums(this._spec, n));
  }
}

// ---------------------------------------------------------------- ReduceLROnPlateau

/** The options of ReduceLROnPlateau (torch.optim.lr_scheduler.ReduceLROnPlateau's, camelCase). */
export interface ReduceLROnPlateauOptions {
  /** 'min' (a loss: lower is better, default) or 'max' (an accuracy). */
  mode?: 'min' | 'max';
  /** new lr = lr · factor, in [0, 1). Default 0.1. */
  factor?: number;
  /** Non-improving steps tolerated before a reduction (the (patience+1)-th reduces). Default 10. */
  patience?: number;
  /** What counts as an improvement (see thresholdMode). Default 1e-4. */
  threshold?: number;
  /** 'rel': better than best·(1 ∓ threshold) (default); 'abs': best ∓ threshold. */
  thresholdMode?: 'rel' | 'abs';
  /** Steps after a reduction during which bad steps are not counted. Default 0. */
  cooldown?: number;
  /** Lower bound of the rate. Default 0. */
  minLr?: number;
  /** A reduction smaller than eps is skipped. Default 1e-8. */
  eps?: number;
}

/** The state of a ReduceLROnPlateau (plain JSON-able object; best may be ±Infinity). */
export interface ReduceLROnPlateauState {
  lr: number;
  best: number;
  numBadEpochs: number;
  cooldownCounter: number;
  steps: number;
}

const PLATEAU_FIELDS = ['mode', 'factor', 'patience', 'threshold', 'thresholdMode', 'cooldown', 'minLr', 'eps'];

/**
 * Lowers the learning rate when a metric stops improving (PyTorch's
 * torch.optim.lr_scheduler.ReduceLROnPlateau; Burn has none). The rule runs in the engine
 * (C++ kiln::optim::ReduceLrOnPlateau):
 *   better: min/rel m < best·(1 - threshold); min/abs m < best - threshold;
 *           max/rel m > best·(1 + threshold); max/abs m > best + threshold
 *   a better m resets the bad count, else it grows; during cooldown it stays 0;
 *   bad > patience: lr = max(lr·factor, minLr) (skipped if that changes lr by <= eps).
 * Over an optimizer (`new kiln.optim.ReduceLROnPlateau(optimizer, {...})`) it starts from the
 * optimizer's rate, which must be a number (not a schedule), and sets the optimizer's rate on
 * each step(metric); over a number it only computes rates.
 *
 *   const plateau = new kiln.optim.ReduceLROnPlateau(optimizer, { patience: 2 });
 *   for (...) { ...; plateau.step(validLoss); }
 */
export class ReduceLROnPlateau extends HandleOwner<RawPlateau> {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind = 'reduceOnPlateau' as const;
  /** The options with every default filled in. */
  readonly config: Readonly<Required<ReduceLROnPlateauOptions>>;
  /** The optimizer it drives (null when made over a number). */
  readonly optimizer: Optimizer | null;

  /**
   * @param optimizerOrLr a kiln.optim optimizer whose lr is a number, or an initial rate.
   * @throws KilnError `Type` (neither), `Config` (an unknown option, a value out of range, an
   *   optimizer whose lr is a schedule), `Disposed`.
   */
  constructor(optimizerOrLr: Optimizer | number, options?: ReduceLROnPlateauOptions) {
    const op = 'optim.ReduceLROnPlateau';
    const e = engineOfNew(new.target, op);
    const c = options_(options, op, PLATEAU_FIELDS);
    const config = {
      mode: c.mode ?? 'min',
      factor: num(c.factor, op, 'factor', 0.1),
      patience: int(c.patience, op, 'patience', 10, 0),
      threshold: num(c.threshold, op, 'threshold', 1e-4),
      thresholdMode: c.thresholdMode ?? 'rel',
      cooldown: int(c.cooldown, op, 'cooldown', 0, 0),
      minLr: num(c.minLr, op, 'minLr', 0),
      eps: num(c.eps, op, 'eps', 1e-8),
    };
    for (const f of ['mode', 'thresholdMode'] as const) {
      if (typeof config[f] !== 'string') throw fail('Type', `${op}: ${f} must be a string, got ${describe(config[f])}`);
    }
    const json: Options = {
      initial_lr: 0, mode: config.mode, factor: config.factor, patience: config.patience,
      threshold: config.threshold, threshold_mode: config.thresholdMode, cooldown: config.cooldown,
      min_lr: config.minLr, eps: config.eps,
    };
    let handle: RawPlateau;
    let optimizer: Optimizer | null = null;
    if (optimizerOrLr instanceof e.bound(Optimizer)) {
      optimizer = optimizerOrLr;
      const raw = optimizer._raw(op);
      handle = camelErrors(() => e.raw.plateauCreateFor(engineValue(json, op), raw));
    } else if (typeof optimizerOrLr === 'number') {
      json.initial_lr = num(optimizerOrLr, op, 'lr');
      handle = camelErrors(() => e.raw.plateauCreate(engineValue(json, op)));
    } else {
      throw fail('Type', `${op}: the first argument must be a kiln.optim optimizer or an initial lr (a number), got ${describe(optimizerOrLr)}`);
    }
    super(handle, 'scheduler');
    this.config = Object.freeze(config) as Readonly<Required<ReduceLROnPlateauOptions>>;
    this.optimizer = optimizer;
  }

  /**
   * Feeds one value of the monitored metric (e.g. the validation loss of an epoch); returns
   * the rate from now on (also set on the optimizer). NaN counts as not better.
   * @throws KilnError `Type` (not a number), `Config` (the optimizer's lr became a schedule), `Disposed`.
   */
  step(metric: number): number {
    const op = 'ReduceLROnPlateau.step';
    const h = this._raw(op);
    if (typeof metric !== 'number') throw fail('Type', `${op}: metric must be a number, got ${describe(metric)}`);
    if (this.optimizer) this.optimizer._raw(op);
    return camelErrors(() => h.step(metric));
  }

  /** The current rate. */
  get lr(): number {
    return this._raw('ReduceLROnPlateau.lr').lr();
  }

  /**
   * The state (best, counters, rate): a plain object for checkpoints. `best` is ±Infinity
   * until a first metric was fed; JSON turns that into null, which loadState accepts.
   */
  state(): ReduceLROnPlateauState {
    return { ...this._raw('ReduceLROnPlateau.state').state() } as ReduceLROnPlateauState;
  }

  /**
   * Restores state() of a scheduler with the same options (and sets the optimizer's rate).
   * The state may have been through JSON: `best` null (what JSON.stringify makes of
   * ±Infinity) is the initial best, +Infinity in mode 'min' and -Infinity in mode 'max'; the
   * strings "Infinity" and "-Infinity" are read as those numbers.
   * @throws KilnError `Type` (not such an object), `Value` (negative counts, a bad rate), `Disposed`.
   */
  loadState(state: ReduceLROnPlateauState): void {
    const op = 'ReduceLROnPlateau.loadState';
    const h = this._raw(op);
    const s = { ...options_(state, op, ['lr', 'best', 'numBadEpochs', 'cooldownCounter', 'steps']) };
    if (s.best === null) s.best = this.config.mode === 'max' ? -Infinity : Infinity;
    else if (s.best === 'Infinity' || s.best === '-Infinity') s.best = Number(s.best);
    const n = (f: string) => {
      if (typeof s[f] !== 'number') throw fail('Type', `${op}: ${f} must be a number, got ${describe(s[f])}`);
      return s[f] as number;
    };
    const values = [n('lr'), n('best'), int(s.numBadEpochs, op, 'numBadEpochs', 0), int(s.cooldownCounter, op, 'cooldownCounter', 0), int(s.steps, op, 'steps', 0)];
    camelErrors(() => h.loadState(values[0], values[1], values[2], values[3], values[4]));
  }
}

// ---------------------------------------------------------------- gradient clipping

/**
 * Scales gradients so that their joint p-norm is at most maxNorm (PyTorch's
 * torch.nn.utils.clip_grad_norm_; C++ kiln::optim::clip_grad_norm): every tensor is
 * multiplied by min(1, maxNorm / (totalNorm + 1e-6)), in place (each tensor keeps its
 * identity and shape; its values change). Returns totalNorm, the norm before clipping:
 * (Σ over all elements of all tensors |g|^p)^(1/p), or max |g| for normType Infinity.
 * As PyTorch (errorIfNonfinite false): a NaN norm makes every gradient NaN and an infinite
 * one zeroes the finite ones; with errorIfNonfinite the call throws and changes nothing.
 * @param grads gradient tensors (float32, any shapes), e.g. `params.map((p) => grads.get(p))`;
 *   or a Gradients (from loss.backward()) with `options.params` (a model or tensors): the
 *   gradients of those parameters are clipped inside it (PyTorch's clip_grad_norm_(parameters)).
 * @param maxNorm finite, > 0.
 * @param options normType: p > 0 or Infinity (default 2); errorIfNonfinite (default false);
 *   params (only with a Gradients: `Config` with an array).
 * @throws KilnError `Type` (not an array of tensors), `DType` (a non-float tensor),
 *   `Value` (maxNorm or normType out of range, NaN included), `NonFinite` (errorIfNonfinite and a NaN/inf norm),
 *   `Config` (an unknown option), `Disposed`.
 */
export function clipGradNorm(e: Engine, grads: unknown, maxNorm: unknown, options?: unknown): number {
  const op = 'optim.clipGradNorm';
  e.requireSyncReads(op, '`await kiln.optim.clipGradNormAsync(grads, maxNorm, options)`');
  if (grads instanceof e.bound(GradientsClass)) return clipGradientsOf(e, grads as Gradients, maxNorm, options, op);
  const a = clipNormArgs(e, grads, maxNorm, options, op);
  const r = camelErrors(() => e.raw.clipGradNorm(a.tensors.map((t) => t._raw(op)), a.maxNorm, a.normType, a.errorIfNonfinite));
  swapHandles(e, a.tensors, r.tensors);
  return r.totalNorm;
}

/** clipGradNorm's arguments with an array of gradient tensors, checked. @internal */
export function clipNormArgs(e: Engine, grads: unknown, maxNorm: unknown, options: unknown, op: string):
  { tensors: Tensor[]; maxNorm: number; normType: number; errorIfNonfinite: boolean } {
  const tensors = gradTensors(e, grads, op);
  const c = options_(options, op, ['normType', 'errorIfNonfinite', 'params']);
  if (c.params !== undefined) {
    throw fail('Config', `${op}: params applies when grads is a Gradients (from backward()); here grads is an array of gradient tensors, which are clipped as given`);
  }
  const max = rangeNum(maxNorm, op, 'maxNorm', 'finite and > 0');
  if (!(Number.isFinite(max) && max > 0)) throw fail('Value', `${op}: maxNorm must be finite and > 0, got ${max}`);
  const normType = c.normType === undefined ? 2 : rangeNum(c.normType, op, 'normType', '> 0 or Infinity');
  if (!(normType > 0)) throw fail('Value', `${op}: normType must be > 0 or Infinity, got ${normType}`);
  return { tensors, maxNorm: max, normType, errorIfNonfinite: bool(c.errorIfNonfinite, op, 'errorIfNonfinite', false) };
}

/**
 * Clamps every gradient element to [-clipValue, clipValue] in place (PyTorch's
 * torch.nn.utils.clip_grad_value_; C++ kiln::optim::clip_grad_value). NaN stays NaN.
 * @throws KilnError `Type`, `DType`, `Value` (clipValue not finite and > 0), `Disposed`.
 */
export function clipGradValue(e: Engine, grads: unknown, clipValue: unknown): void {
  const op = 'optim.clipGradValue';
  const tensors = gradTensors(e, grads, op);
  const value = rangeNum(clipValue, op, 'clipValue', 'finite and > 0');
  const out = camelErrors(() => e.raw.clipGradValue(tensors.map((t) => t._raw(op)), value));
  swapHandles(e, tensors, out);
}

/**
 * clipGradNorm on the gradients of `options.params` (a model or tensors) inside a Gradients
 * (what loss.backward() returns), in place, as torch.nn.utils.clip_grad_norm_(parameters):
 * the clipped gradients replace theirs in `grads`, ready for optimizer.step(model, grads).
 */
function clipGradientsOf(e: Engine, grads: Gradients, maxNorm: unknown, options: unknown, op: string): number {
  const c = options_(options, op, ['normType', 'errorIfNonfinite', 'params']);
  if (c.params === undefined) {
    throw fail('Config', `${op}: with a Gradients, say whose gradients to clip: {params: model} (a kiln.Module, or an array of tensors)`);
  }
  const g = e.unwrapGradients(grads, op);
  const scope = new Set<Scoped>();
  e.scopes.push(scope);
  try {
    const pairs: [Tensor, Tensor][] = [];
    for (const [, p] of paramList(e, c.params, op)) {
      const h = e.raw.tGrad(p._raw(op), g);
      if (h !== undefined) pairs.push([p, e.wrap(h)]);
    }
    const { params: _params, ...rest } = c;
    const total = clipGradNorm(e, pairs.map(([, t]) => t), maxNorm, rest);
    for (const [p, t] of pairs) e.raw.tGradReplace(p._raw(op), g, t._raw(op));
    return total;
  } finally {
    e.scopes.pop();
    for (const obj of [...scope]) obj.dispose();
  }
}

/**
 * A number option whose range the engine checks (`Value` out of range); NaN is out of range
 * too: `Value` with the engine's wording (not num()'s `Config`).
 */
function rangeNum(v: unknown, op: string, what: string, rule: string): number {
  if (typeof v !== 'number') throw fail('Type', `${op}: ${what} must be a number, got ${describe(v)}`);
  if (Number.isNaN(v)) throw fail('Value', `${op}: ${what} must be ${rule}, got NaN`);
  return v;
}

function gradTensors(e: Engine, grads: unknown, op: string): Tensor[] {
  if (!Array.isArray(grads)) {
    throw fail('Type', `${op}: grads must be an array of gradient tensors (e.g. params.map((p) => grads.get(p))), got ${describe(grads)}`);
  }
  grads.forEach((t, i) => {
    if (!(t instanceof e.Tensor)) throw fail('Type', `${op}: grads[${i}] must be a Tensor, got ${describe(t)}`);
    (t as Tensor)._raw(op);
    const dtype = (t as Tensor).dtype;
    if (dtype !== 'float32') throw fail('DType', `${op}: grads[${i}] must be a float32 tensor, got ${dtype}`);
  });
  if (new Set(grads).size !== grads.length) throw fail('Value', `${op}: grads lists the same tensor twice`);
  return grads as Tensor[];
}

/** Gives each tensor the new handle (as requireGrad does), deleting the old one. @internal */
export function swapHandles(e: Engine, tensors: Tensor[], handles: RawTensor[]): void {
  tensors.forEach((t, i) => {
    const old = t._h as RawTensor;
    const next = handles[i];
    if (e.registry) {
      e.registry.unregister(t);
      e.registry.register(t, next, t);
    }
    t._h = next;
    t._shape = undefined;
    old.delete();
  });
}

// ---------------------------------------------------------------- optimizers

/** An optimizer with its state (moments, momentum buffers) in WebAssembly memory. */
export class Optimizer extends HandleOwner<RawOptimizer> {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind: 'sgd' | 'adam' | 'adamW' | 'rmsProp';
  /**
   * The options with every default filled in, e.g. adam():
   * `{lr: 0.001, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, amsgrad: false, weightDecay: 0, gradClipping: null}`.
   * JS defaults are PyTorch's (epsilon 1e-8; sgd/rmsProp momentum 0; adamW weightDecay 0.01);
   * the C++ configs keep Burn's (AdamConfig/AdamWConfig/RmsPropConfig epsilon 1e-5,
   * RmsPropConfig momentum 0.9, AdamWConfig weight_decay 1e-4, MomentumConfig 0.9 with
   * dampening 0.1): see the table at kiln.optim (train_api.ts, Optim).
   */
  readonly config: Readonly<Record<string, unknown>>;

  /** Internal: made by kiln.optim.sgd/adam/adamW/rmsProp(...). */
  protected constructor(token: never, kind: never, handle: never, config: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Optimizer: use kiln.optim.sgd/adam/adamW/rmsProp(...)');
    super(handle as RawOptimizer, 'optimizer');
    this.kind = kind;
    this.config = Object.freeze(config as Options);
  }

  /**
   * One step on the parameters that have a gradient in grads (at the schedule's next rate;
   * the schedule advances once per call). grads stays usable. `params` is
   * - a model: a kiln.nn Sequential or layer, or any kiln.Module (a module written in JS,
   *   holding built-in layers or not): its parameters are updated where they live (Params
   *   swap their values in place; built-in layers' parameters keep their ParamIds);
   * - an array of Tensors (or Params): PyTorch-like, each tensor is updated IN PLACE (the
   *   same JS object holds the new value, a graph leaf again); its optimizer state follows
   *   the JS object.
   * Frozen parameters (requiresGrad false) and those without a gradient in grads are left
   * unchanged, their state too. The state (moments, momentum) is keyed by the C++ ParamId,
   * one rule for all (the engine's OptimizerAdaptor).
   * @throws KilnError `Type` for anything else or non-Gradients, `DType` for a non-float32
   *   tensor in the array, `Shape` if a gradient's shape differs from its parameter's,
   *   `Disposed` (naming a disposed submodule or parameter); nothing is updated then.
   */
  step(model: Model | Module | Tensor[], grads: Gradients): void {
    const op = 'Optimizer.step';
    const h = this._raw(op);
    if (!(model instanceof this._e.bound(Sequential))) {
      camelErrors(() => stepParams(this._e, h, model, grads, op));
      return;
    }
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

  /**
   * The optimizer's state for `model` as SafeTensors bytes: every moment/buffer keyed by
   * "<parameter path>.<field>" ("0.weight.moment_1", "0.weight.time": C++
   * OptimizerAdaptor::to_named_record, the record native checkpoints write), with the step
   * count and the schedule (and its position) in the metadata, so that loadState continues
   * exactly where this optimizer is. Parameters never stepped have no entries.
   * @throws KilnError `Type` (not a model), `Disposed`; `State` on the webgpu backend (its
   *   reads are asynchronous: saveStateAsync).
   */
  saveState(model: Model | Module): Uint8Array {
    const op = 'Optimizer.saveState';
    const h = this._raw(op);
    this._e.requireSyncReads(op, '`await optimizer.saveStateAsync(model)`');
    const { list } = gatherParams(this._e, model, op);
    try {
      return camelErrors(() => this._e.raw.optimizerSaveStateList(h, list));
    } finally {
      list.release();
      list.delete();
    }
  }

  /**
   * saveState's bytes on every backend (TF.js's async save): on the webgpu backend the state
   * tensors are read with `await` (there saveState throws `State`); the bytes are the state,
   * step count and schedule at the call. On the cpu backend it resolves to saveState(model).
   * @throws KilnError (rejects) as saveState; `Device` on a lost GPU.
   */
  async saveStateAsync(model: Model | Module): Promise<Uint8Array> {
    const op = 'Optimizer.saveStateAsync';
    if (this._e.asyncRead === null) return this.saveState(model);
    return (await import('./optim_async.js')).saveStateAsync(this._e, this, model, op);
  }

  /**
   * Replaces this optimizer's state by saveState's bytes, matched against `model`'s
   * parameters by path (another process, other parameter ids: fine). Everything is checked
   * before anything changes.
   * @throws KilnError `Type` (not a Uint8Array / model), `Format` (not an optimizer state, the
   *   state of another kind of optimizer, or one that does not fit the model: the message lists
   *   every missing, unexpected and wrongly shaped entry), `Disposed`.
   */
  loadState(model: Model | Module, bytes: Uint8Array): void {
    const op = 'Optimizer.loadState';
    const h = this._raw(op);
    if (!(bytes instanceof Uint8Array)) throw fail('Type', `${op}: bytes must be a Uint8Array (from saveState), got ${describe(bytes)}`);
    const { list } = gatherParams(this._e, model, op);
    try {
      try {
        camelErrors(() => this._e.raw.optimizerLoadStateList(h, list, bytes));
      } catch (err) {
        // The engine's reader names itself first ("readSafetensors: Optimizer.loadState: the
        // header ..."): the op comes first, as in every other message.
        const prefix = `readSafetensors: ${op}: `;
        if (err instanceof KilnError && err.message.startsWith(prefix)) {
          throw new KilnError(err.code, `${op}: the bytes are not a SafeTensors file: ${err.message.slice(prefix.length)}`);
        }
        throw err;
      }
    } finally {
      list.release();
      list.delete();
    }
  }

}

type ScheduleCtor = new (token: symbol, kind: string, spec: EngineValue, config: Options) => Schedule;
type OptimizerCtor = new (token: symbol, kind: string, handle: RawOptimizer, config: Options) => Optimizer;

const ScheduleBase = Schedule;
const OptimizerBase = Optimizer;
const PlateauBase = ReduceLROnPlateau;
const GradientsAccumulatorBase = GradientsAccumulator;

/** Installs kiln.optim onto `kiln`. */
export function installOptim(kiln: Record<string, unknown>, e: Engine): void {
  const { raw } = e;
  const S = bindClass(class Schedule extends ScheduleBase {}, e) as unknown as ScheduleCtor & typeof Schedule;
  const O = bindClass(class Optimizer extends OptimizerBase {}, e) as unknown as OptimizerCtor & typeof Optimizer;

  // ---- schedules

  function schedule(kind: string, fields: string[], jsonKind = kind) {
    return (config?: unknown): Schedule => {
      const op = `optim.schedule.${kind}`;
      const c = options(kind === 'constant' && typeof config === 'number' ? { lr: config } : config, op, fields);
      const json: Options = { kind: jsonKind };
      for (const f of fields) {
        if (c[f] === undefined) continue;
        json[f.replace(/[A-Z]/g, (x) => `_${x.toLowerCase()}`)] = c[f];
      }
      const spec = engineValue(json, op);
      camelErrors(() => raw.scheduleValues(spec, 0));
      return new S(TOKEN, kind, spec, { ...c });
    };
  }

  const scheduleFns = Object.freeze({
    constant: schedule('constant', ['lr']),
    step: schedule('step', ['initialLr', 'stepSize', 'gamma']),
    exponential: schedule('exponential', ['initialLr', 'gamma']),
    linear: schedule('linear', ['initialLr', 'finalLr', 'numIters']),
    cosine: schedule('cosine', ['initialLr', 'numIters', 'minLr']),
    noam: schedule('noam', ['factor', 'warmupSteps', 'modelSize']),
    /**
     * PyTorch's OneCycleLR (the 1cycle policy): {maxLr, totalSteps, pctStart = 0.3,
     * annealStrategy = 'cos' | 'linear', divFactor = 25, finalDivFactor = 1e4, threePhase =
     * false, cycleMomentum = true, baseMomentum = 0.85, maxMomentum = 0.95}. Rates exist for
     * steps 0 .. totalSteps-1; a further step throws `State`. C++ OneCycleLrScheduler.
     */
    oneCycle: schedule('oneCycle', ['maxLr', 'totalSteps', 'pctStart', 'annealStrategy', 'cycleMomentum',
      'baseMomentum', 'maxMomentum', 'divFactor', 'finalDivFactor', 'threePhase'], 'one_cycle'),
  });

  // ---- optimizers

  function lrSpec(lr: unknown, op: string, dflt: Options | undefined): EngineValue {
    if (lr === undefined) {
      if (dflt === undefined) throw fail('Config', `${op}: lr is required`);
      return engineValue(dflt, op);
    }
    if (lr instanceof S) return lr._spec;
    if (typeof lr !== 'number') {
      throw fail('Type', `${op}: lr must be a number or a kiln.optim.schedule, got ${describe(lr)}`);
    }
    return engineValue({ kind: 'constant', lr }, op); // NaN, ±Infinity: Config naming lr
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

  function makeOptimizer(kind: string, op: string, c: Options, config: Options, lrDefault: Options | undefined,
    filled: Options): Optimizer {
    const lr = lrSpec(c.lr, op, lrDefault);
    const spec = engineValue(config, op);
    const handle = camelErrors(() => raw.optimizerCreate(kind, spec, lr));
    return new O(TOKEN, kind, handle, { lr: c.lr ?? lrDefault?.lr, ...filled, gradClipping: c.gradClipping ?? null });
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
    return makeOptimizer('sgd', op, c, json, undefined,
      { momentum, dampening, nesterov, weightDecay: num(c.weightDecay, op, 'weightDecay', 0) });
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
    const filled: Options = {
      beta1: json.beta_1, beta2: json.beta_2, epsilon: json.epsilon, amsgrad: json.amsgrad,
      weightDecay: kind === 'adamW' ? json.weight_decay : num(c.weightDecay, op, 'weightDecay', 0),
    };
    return makeOptimizer(kind, op, c, json, { kind: 'constant', lr: 1e-3 }, filled);
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
    const filled: Options = {
      alpha: json.alpha, momentum: json.momentum, epsilon: json.epsilon, centered: json.centered,
      weightDecay: num(c.weightDecay, op, 'weightDecay', 0),
    };
    return makeOptimizer('rmsProp', op, c, json, { kind: 'constant', lr: 1e-2 }, filled);
  }

  const P = bindClass(class ReduceLROnPlateau extends PlateauBase {}, e);
  const A = bindClass(class GradientsAccumulator extends GradientsAccumulatorBase {}, e);
  kiln.optim = Object.freeze({
    sgd, adam, adamW, rmsProp, schedule: scheduleFns, Optimizer: O, Schedule: S,
    ReduceLROnPlateau: P,
    GradientsAccumulator: A,
    clipGradNorm: (grads: unknown, maxNorm: unknown, opts?: unknown) => clipGradNorm(e, grads, maxNorm, opts),
    // optim_async.ts, a chunk of its own: loaded on the first call.
    clipGradNormAsync: async (grads: unknown, maxNorm: unknown, opts?: unknown) => (await import('./optim_async.js')).clipGradNormAsync(e, grads, maxNorm, opts),
    clipGradValue: (grads: unknown, clipValue: unknown) => clipGradValue(e, grads, clipValue),
  });
}
