// kiln.optim: optimizers (SGD, Adam, AdamW, RMSprop) with their state in WebAssembly memory
// (bindings/train_optim.cpp) and learning-rate schedules.
import { HandleOwner } from '../handle.js';
import { stepParams, type Module } from '../module_class.js';
import { camelErrors, isPlainObject, Sequential, unwrapModel, type Model } from '../nn.js';
import type { Tensor } from '../tensor/tensor.js';
import type { RawOptimizer } from '../raw.js';
import { describe, engineJson, fail } from '../tensor/checks.js';
import { bindClass, type Engine } from '../tensor/engine.js';
import type { Gradients } from '../tensor/gradients.js';
import { bool, int, num, options, TOKEN, type Options } from './common.js';

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
}

type ScheduleCtor = new (token: symbol, kind: string, json: string, config: Options) => Schedule;
type OptimizerCtor = new (token: symbol, kind: string, handle: RawOptimizer, config: Options) => Optimizer;

const ScheduleBase = Schedule;
const OptimizerBase = Optimizer;

/** Installs kiln.optim onto `kiln`. */
export function installOptim(kiln: Record<string, unknown>, e: Engine): void {
  const { raw } = e;
  const S = bindClass(class Schedule extends ScheduleBase {}, e) as unknown as ScheduleCtor & typeof Schedule;
  const O = bindClass(class Optimizer extends OptimizerBase {}, e) as unknown as OptimizerCtor & typeof Optimizer;

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
      const text = engineJson(json, op);
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
    if (typeof lr !== 'number') {
      throw fail('Type', `${op}: lr must be a number or a kiln.optim.schedule, got ${describe(lr)}`);
    }
    return engineJson({ kind: 'constant', lr }, op); // NaN, ±Infinity: Config naming lr
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
    const text = engineJson(config, op);
    const handle = camelErrors(() => raw.optimizerCreate(kind, text, lr));
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
}
