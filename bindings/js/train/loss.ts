// kiln.loss: loss function objects (cross-entropy, binary cross-entropy, MSE, Huber, smooth
// L1) over the engine's losses (bindings/train_loss.cpp: lossForward, lossValidate).
import { camelErrors } from '../nn.js';
import { describe, engineValue, fail, type EngineValue } from '../tensor/checks.js';
import { bindClass, type Engine } from '../tensor/engine.js';
import type { Tensor } from '../tensor/tensor.js';
import { bool, int, num, options, TOKEN, type Options } from './common.js';

// ---------------------------------------------------------------- losses

/** The kinds of kiln.loss objects. */
export type LossKind = 'crossEntropy' | 'binaryCrossEntropy' | 'mse' | 'huber' | 'smoothL1';

/** A loss function object (kiln.loss.crossEntropy(), ...). */
export class Loss {
  /** @internal */
  declare readonly _e: Engine;
  readonly kind: LossKind;
  readonly config: Readonly<Record<string, unknown>>;
  /** The C++ loss config (its JSON's tree). @internal */
  readonly _spec: EngineValue;

  /** Internal: made by kiln.loss.crossEntropy(), binaryCrossEntropy(), mse(). */
  protected constructor(token: never, kind: never, json: never, config: never) {
    if ((token as unknown) !== TOKEN) throw fail('Type', 'Loss: use kiln.loss.crossEntropy() or kiln.loss.mse()');
    this.kind = kind;
    this.config = Object.freeze(config as Options);
    this._spec = json;
    Object.freeze(this);
  }

  /**
   * crossEntropy: logits `[batch, classes]` float32, targets `[batch]` int32 -> `[]` (rank 0, as PyTorch; `[batch]` for 'none').
   * mse / huber / smoothL1 / binaryCrossEntropy: same shapes (rank 1 to 4) -> `[]` (rank 0; the input's shape for 'none');
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
    return e.wrap(camelErrors(() => e.raw.lossForward(this._spec, a, b)));
  }
}

export type LossCtor = new (token: symbol, kind: string, spec: EngineValue, config: Options) => Loss;

/** Checks a loss spec in the engine (a throwaway learner-free read). */
function validateLoss(e: Engine, spec: EngineValue): void {
  camelErrors(() => e.raw.lossValidate(spec));
}

export function crossEntropy(e: Engine, config?: unknown): Loss {
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
  const spec = engineValue(json, op);
  validateLoss(e, spec);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'crossEntropy', spec, { ...c });
}

export function binaryCrossEntropy(e: Engine, config?: unknown): Loss {
  const op = 'loss.binaryCrossEntropy';
  const c = options(config, op, ['logits', 'labelSmoothing', 'weights', 'posWeight', 'reduction']);
  const json: Options = { kind: 'binary_cross_entropy', logits: bool(c.logits, op, 'logits', false) };
  if (c.posWeight !== undefined) json.pos_weight = numbers(c.posWeight, op, 'posWeight');
  if (c.labelSmoothing !== undefined) json.smoothing = num(c.labelSmoothing, op, 'labelSmoothing');
  if (c.weights !== undefined) {
    if (!Array.isArray(c.weights) && !(c.weights instanceof Float32Array)) {
      throw fail('Type', `${op}: weights must be an array of numbers, got ${describe(c.weights)}`);
    }
    json.weights = Array.from(c.weights as ArrayLike<unknown>, (w, i) => num(w, op, `weights[${i}]`));
  }
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const spec = engineValue(json, op);
  validateLoss(e, spec);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'binaryCrossEntropy', spec, { ...c });
}

export function mse(e: Engine, config?: unknown): Loss {
  const op = 'loss.mse';
  const c = options(config, op, ['reduction']);
  const json: Options = { kind: 'mse' };
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const spec = engineValue(json, op);
  validateLoss(e, spec);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'mse', spec, { ...c });
}

/** An array (or Float32Array) of numbers, checked, as a plain array. */
function numbers(v: unknown, op: string, what: string): number[] {
  if (!Array.isArray(v) && !(v instanceof Float32Array)) {
    throw fail('Type', `${op}: ${what} must be an array of numbers, got ${describe(v)}`);
  }
  return Array.from(v as ArrayLike<unknown>, (w, i) => num(w, op, `${what}[${i}]`));
}

/**
 * Huber loss (torch.nn.HuberLoss): 0.5·r² for |r| <= delta, delta·(|r| - 0.5·delta) beyond,
 * r = input - target; delta > 0 (default 1).
 */
export function huber(e: Engine, config?: unknown): Loss {
  const op = 'loss.huber';
  const c = options(config, op, ['delta', 'reduction']);
  const json: Options = { kind: 'huber' };
  if (c.delta !== undefined) json.delta = num(c.delta, op, 'delta');
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const spec = engineValue(json, op);
  validateLoss(e, spec);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'huber', spec, { ...c });
}

/**
 * Smooth L1 loss (torch.nn.SmoothL1Loss): 0.5·r²/beta for |r| < beta, |r| - 0.5·beta beyond;
 * beta >= 0 (default 1; 0 is exactly the L1 loss).
 */
export function smoothL1(e: Engine, config?: unknown): Loss {
  const op = 'loss.smoothL1';
  const c = options(config, op, ['beta', 'reduction']);
  const json: Options = { kind: 'smooth_l1' };
  if (c.beta !== undefined) json.beta = num(c.beta, op, 'beta');
  if (c.reduction !== undefined) json.reduction = c.reduction;
  const spec = engineValue(json, op);
  validateLoss(e, spec);
  return new (e.bound(Loss) as unknown as LossCtor)(TOKEN, 'smoothL1', spec, { ...c });
}

export function lossOf(e: Engine, v: unknown, op: string): Loss {
  if (v === undefined || v === 'crossEntropy') return crossEntropy(e);
  if (v === 'mse') return mse(e);
  if (v instanceof e.bound(Loss) && v.kind !== 'binaryCrossEntropy' && v.config.reduction !== 'none') return v;
  throw fail('Config', `${op}: loss must be 'crossEntropy', 'mse' or a kiln.loss object, got ${describe(v)}`);
}

const LossBase = Loss;

/**
 * Binds the Loss class to engine `e` (what kiln.nn.functional's losses create) and returns it.
 * kiln-dl/inference calls this alone: its nn.functional has the losses, but no kiln.loss.
 */
export function bindLoss(e: Engine): typeof Loss {
  return bindClass(class Loss extends LossBase {}, e);
}

/** Installs kiln.loss onto `kiln`. */
export function installLoss(kiln: Record<string, unknown>, e: Engine): void {
  const L = bindLoss(e);
  kiln.loss = Object.freeze({
    crossEntropy: (config?: unknown) => crossEntropy(e, config),
    binaryCrossEntropy: (config?: unknown) => binaryCrossEntropy(e, config),
    mse: (config?: unknown) => mse(e, config),
    huber: (config?: unknown) => huber(e, config),
    smoothL1: (config?: unknown) => smoothL1(e, config),
    Loss: L,
  });
}
