// kiln.metrics: training metrics (Burn's burn-train metric module: AccuracyMetric, LossMetric,
// TopKAccuracyMetric, LearningRateMetric) and the protocol user-defined metrics follow. They
// accumulate host-side numbers over the batches of an epoch (JS plumbing); the values they
// read (argmax, the loss) come from the engine. Used by kiln.Learner and on their own:
//
//   const acc = new kiln.metrics.Accuracy();
//   for (const { x, y } of batches) acc.update(model.forward(x), y);
//   acc.value();  // fraction of rows whose argmax is the label
import { describe, fail } from '../tensor/checks.js';
import type { Tensor } from '../tensor/tensor.js';
import { int, options } from './common.js';

/** What the Learner passes besides output and targets (standalone callers may omit it). */
export interface MetricInfo {
  /** The batch's loss (a number). */
  loss?: number;
  /** The learning rate of the step. */
  lr?: number;
  /** Items in the batch (output's first dim when absent). */
  batchSize?: number;
}

/**
 * The metric protocol: `name`, `update(output, targets, info)` once per batch, `value()` for
 * the epoch so far, `reset()` at the start of each epoch. Extend this class (or write any
 * object with these members) for a custom metric; the Learner reports `value()` under `name`
 * in its history and callbacks ("higher is better" unless `higherIsBetter` is false, which
 * earlyStopping's default mode reads).
 */
export abstract class Metric {
  /** The key of the metric in logs and history, e.g. "accuracy". */
  abstract readonly name: string;
  /** Whether larger values are better (earlyStopping's default mode). */
  get higherIsBetter(): boolean {
    return true;
  }
  /** Adds one batch. */
  abstract update(output: Tensor | undefined, targets: Tensor | Int32Array | Float32Array | undefined, info?: MetricInfo): void;
  /** The value over the batches since reset() (NaN before any). */
  abstract value(): number;
  /** Forgets every batch. */
  abstract reset(): void;
}

/** Class labels as an Int32Array of length n (a Tensor [n] int32, an Int32Array). */
function labelsOf(targets: unknown, n: number, op: string): Int32Array {
  let labels: unknown = targets;
  if (targets !== null && typeof targets === 'object' && typeof (targets as Tensor).dataSync === 'function' && 'shape' in (targets as object)) {
    const t = targets as Tensor;
    if (t.isDisposed) throw fail('Disposed', `${op}: targets (a Tensor) was disposed`);
    if (t.dtype !== 'int32') throw fail('DType', `${op}: targets must be int32 class labels, got a ${t.dtype} tensor`);
    const shape = t.shape;
    if (shape.length !== 1 && !(shape.length === 2 && shape[1] === 1)) {
      throw fail('Shape', `${op}: targets must be [batch_size] class labels, got shape [${shape.join(', ')}]`);
    }
    labels = t.dataSync();
  }
  if (!(labels instanceof Int32Array)) {
    throw fail('Type', `${op}: targets must be an int32 Tensor or an Int32Array of class labels, got ${describe(targets)}`);
  }
  if (labels.length !== n) {
    throw fail('Shape', `${op}: output has ${n} rows but targets has ${labels.length} labels`);
  }
  return labels;
}

/** The [n, c] float values of output. */
function logitsOf(output: unknown, op: string): { values: ArrayLike<number>; n: number; c: number } {
  if (output === null || typeof output !== 'object' || typeof (output as Tensor).dataSync !== 'function') {
    throw fail('Type', `${op}: output must be a Tensor [batch_size, num_classes], got ${describe(output)}`);
  }
  const t = output as Tensor;
  if (t.isDisposed) throw fail('Disposed', `${op}: output (a Tensor) was disposed`);
  const shape = t.shape;
  if (shape.length !== 2) {
    throw fail('Shape', `${op}: output must be [batch_size, num_classes], got shape [${shape.join(', ')}]`);
  }
  if (t.dtype !== 'float32') throw fail('DType', `${op}: output must be float32, got ${t.dtype}`);
  return { values: t.dataSync() as Float32Array, n: shape[0], c: shape[1] };
}

/**
 * Fraction of rows whose argmax over classes equals the label (Burn's AccuracyMetric, as a
 * fraction in [0, 1]; rows whose label is ignoreIndex are not counted, Burn's pad_token).
 * Shapes: output [batch_size, num_classes] float32, targets [batch_size] int32.
 * @throws KilnError `Type`, `Shape` (ranks, row counts), `DType`, `Disposed` from update;
 *   `Index` for a label outside [0, num_classes) that is not ignoreIndex (as CrossEntropyLoss;
 *   the batch is then not counted).
 */
export class Accuracy extends Metric {
  readonly name: string;
  readonly ignoreIndex: number | null;
  /** @internal */
  _correct = 0;
  /** @internal */
  _count = 0;

  /** @param config name (default "accuracy"), ignoreIndex (default none). */
  constructor(config?: { name?: string; ignoreIndex?: number }) {
    super();
    const op = 'metrics.Accuracy';
    const c = options(config, op, ['name', 'ignoreIndex']);
    this.name = nameOf(c.name, op, 'accuracy');
    this.ignoreIndex = c.ignoreIndex === undefined ? null : int(c.ignoreIndex, op, 'ignoreIndex', 0, -(2 ** 31));
  }

  update(output: Tensor, targets: Tensor | Int32Array): void {
    const op = 'Accuracy.update';
    const { values, n, c } = logitsOf(output, op);
    const labels = labelsOf(targets, n, op);
    for (let i = 0; i < n; i++) {
      const label = labels[i];
      if (label !== this.ignoreIndex && (label < 0 || label >= c)) {
        throw fail('Index', `${op}: targets must be class indices in [0, ${c})${this.ignoreIndex === null ? '' : ` or ignoreIndex ${this.ignoreIndex}`}: row ${i} has target ${label}`);
      }
    }
    let correct = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (labels[i] === this.ignoreIndex) continue;
      let best = 0;
      for (let j = 1; j < c; j++) if (values[i * c + j] > values[i * c + best]) best = j;
      correct += best === labels[i] ? 1 : 0;
      count++;
    }
    this._correct += correct;
    this._count += count;
  }

  value(): number {
    return this._count === 0 ? NaN : this._correct / this._count;
  }

  reset(): void {
    this._correct = 0;
    this._count = 0;
  }
}

/**
 * Fraction of rows whose label is among the k largest outputs (Burn's TopKAccuracyMetric):
 * a row counts when fewer than k classes score strictly higher than the label's class.
 * Shapes as Accuracy.
 */
export class TopKAccuracy extends Metric {
  readonly name: string;
  readonly k: number;
  /** @internal */
  _correct = 0;
  /** @internal */
  _count = 0;

  /** @param config k (>= 1, required), name (default "top{k}Accuracy"). */
  constructor(config: { k: number; name?: string }) {
    super();
    const op = 'metrics.TopKAccuracy';
    const c = options(config, op, ['k', 'name']);
    if (c.k === undefined) throw fail('Config', `${op}: k is required (e.g. {k: 5})`);
    this.k = int(c.k, op, 'k', 1, 1);
    this.name = nameOf(c.name, op, `top${this.k}Accuracy`);
  }

  update(output: Tensor, targets: Tensor | Int32Array): void {
    const op = 'TopKAccuracy.update';
    const { values, n, c } = logitsOf(output, op);
    const labels = labelsOf(targets, n, op);
    let correct = 0;
    for (let i = 0; i < n; i++) {
      const label = labels[i];
      if (label < 0 || label >= c) throw fail('Index', `${op}: label ${label} at row ${i} is not in [0, ${c})`);
      const v = values[i * c + label];
      let higher = 0;
      for (let j = 0; j < c; j++) if (values[i * c + j] > v) higher++;
      correct += higher < this.k ? 1 : 0;
    }
    this._correct += correct;
    this._count += n;
  }

  value(): number {
    return this._count === 0 ? NaN : this._correct / this._count;
  }

  reset(): void {
    this._correct = 0;
    this._count = 0;
  }
}

/**
 * The mean loss over the items seen (Burn's LossMetric): Σ loss·batchSize / Σ batchSize,
 * with the batch's loss from `info.loss` (the Learner passes it) and batchSize from
 * `info.batchSize` or output's first dim.
 * @throws KilnError from update: `Value` without info.loss, `NonFinite` for a NaN or infinite
 *   info.loss (nothing is added), `Type` for a non-number.
 */
export class Loss extends Metric {
  readonly name: string;
  /** @internal */
  _sum = 0;
  /** @internal */
  _count = 0;

  constructor(config?: { name?: string }) {
    super();
    const c = options(config, 'metrics.Loss', ['name']);
    this.name = nameOf(c.name, 'metrics.Loss', 'loss');
  }

  get higherIsBetter(): boolean {
    return false;
  }

  update(output: Tensor | undefined, _targets: unknown, info?: MetricInfo): void {
    const op = 'Loss.update';
    const i = options(info, op, ['loss', 'lr', 'batchSize']);
    const loss = finite(i.loss, op, 'info.loss');
    if (loss === undefined) throw fail('Value', `${op}: info.loss is required (the batch's loss)`);
    const n = batchSizeOf(output, i.batchSize, op);
    this._sum += loss * n;
    this._count += n;
  }

  value(): number {
    return this._count === 0 ? NaN : this._sum / this._count;
  }

  reset(): void {
    this._sum = 0;
    this._count = 0;
  }
}

/**
 * The learning rate of the last step (Burn's LearningRateMetric).
 * @throws KilnError from update: `Value` without info.lr, `NonFinite` for a NaN or infinite one.
 */
export class LearningRate extends Metric {
  readonly name: string;
  /** @internal */
  _lr = NaN;

  constructor(config?: { name?: string }) {
    super();
    const c = options(config, 'metrics.LearningRate', ['name']);
    this.name = nameOf(c.name, 'metrics.LearningRate', 'learningRate');
  }

  get higherIsBetter(): boolean {
    return false;
  }

  update(_output: unknown, _targets: unknown, info?: MetricInfo): void {
    const op = 'LearningRate.update';
    const i = options(info, op, ['loss', 'lr', 'batchSize']);
    const lr = finite(i.lr, op, 'info.lr');
    if (lr === undefined) throw fail('Value', `${op}: info.lr is required (the step's learning rate)`);
    this._lr = lr;
  }

  value(): number {
    return this._lr;
  }

  reset(): void {
    this._lr = NaN;
  }
}

/**
 * A number a metric accumulates (undefined when absent): `Type` for a non-number,
 * `NonFinite` for NaN or ±Infinity (as the Learner's refused step for a NaN loss).
 */
function finite(v: unknown, op: string, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number') throw fail('Type', `${op}: ${what} must be a number, got ${describe(v)}`);
  if (!Number.isFinite(v)) throw fail('NonFinite', `${op}: ${what} must be a finite number, got ${v}`);
  return v;
}

function nameOf(v: unknown, op: string, dflt: string): string {
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || v === '') throw fail('Type', `${op}: name must be a non-empty string, got ${describe(v)}`);
  return v;
}

function batchSizeOf(output: unknown, given: unknown, op: string): number {
  if (given !== undefined) return int(given, op, 'info.batchSize', 0, 1);
  if (output !== null && typeof output === 'object' && Array.isArray((output as Tensor).shape)) {
    const shape = (output as Tensor).shape;
    return shape.length === 0 ? 1 : shape[0];
  }
  throw fail('Value', `${op}: pass info.batchSize or an output tensor whose first dim is the batch size`);
}

/** Checks that `m` follows the metric protocol; `where` names it in the message. */
export function checkMetric(m: unknown, op: string, where: string): Metric {
  const x = m as Partial<Metric> | null;
  const missing: string[] = [];
  if (x === null || typeof x !== 'object') {
    throw fail('Type', `${op}: ${where} must be a metric (name, update(output, targets, info), value(), reset()), got ${describe(m)}`);
  }
  if (typeof x.name !== 'string' || x.name === '') missing.push('name (a non-empty string)');
  for (const f of ['update', 'value', 'reset'] as const) if (typeof x[f] !== 'function') missing.push(`${f}()`);
  if (missing.length > 0) {
    throw fail('Type', `${op}: ${where} is not a metric: it lacks ${missing.join(', ')}`);
  }
  return m as Metric;
}

/** Installs kiln.metrics onto `kiln`. */
export function installMetrics(kiln: Record<string, unknown>): void {
  kiln.metrics = Object.freeze({ Metric, Accuracy, TopKAccuracy, Loss, LearningRate });
}
