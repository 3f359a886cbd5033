/// <reference lib="esnext.disposable" preserve="true" />
// The base of the JS Tensor: the handle it owns, its properties (shape, dtype, ...), data
// out (dataSync, toArray, item), formatting (toString), clone and dispose. The Tensor class
// is built up by concern, each file extending the previous one:
//   core.ts -> creation.ts -> elementwise.ts -> shape.ts -> indexing.ts -> reduce.ts
//   -> autodiff.ts -> tensor.ts (Tensor, plus the methods generated from ops.def)
import { engineBusy } from '../boundary.js';
import type { RawTensor } from '../raw.js';
import { checkInt, checkOptions, DTYPES, fail, type DType } from './checks.js';
import type { NestedData } from './data.js';
import { TOKEN, type Engine } from './engine.js';
import type { Tensor } from './tensor.js';

/** The most arrays and values toArray() builds (2^25: ~0.5 GB of JS heap at most). */
export const TO_ARRAY_LIMIT = 2 ** 25;

/** Throws KilnError `Limit` when nested arrays of `shape` would exceed TO_ARRAY_LIMIT entries. */
function checkToArrayLimit(op: string, shape: number[]): void {
  let entries = 0;
  for (let d = 0, rows = 1; d < shape.length; d++) {
    rows *= shape[d];
    entries += rows;
  }
  if (entries > TO_ARRAY_LIMIT) {
    throw fail('Limit', `${op}: shape [${shape.join(', ')}] would build ${entries} nested arrays and values, more than the limit of ${TO_ARRAY_LIMIT} (dataSync() gives the values as one typed array)`);
  }
}

/** The flat row-major values as nested arrays of `shape` (booleans when isBool; a scalar for rank 0). */
function nest(flat: Float32Array | Int32Array | Uint8Array, shape: number[], isBool: boolean): NestedData {
  const get = isBool ? (i: number) => flat[i] !== 0 : (i: number) => flat[i];
  if (shape.length === 0) return get(0);
  let k = 0;
  const build = (depth: number): NestedData[] => {
    const n = shape[depth];
    const out = new Array<NestedData>(n);
    if (depth === shape.length - 1) {
      for (let i = 0; i < n; i++) out[i] = get(k++);
    } else {
      for (let i = 0; i < n; i++) out[i] = build(depth + 1);
    }
    return out;
  };
  return build(0);
}

export class TensorCore {
  /** The engine instance (on the per-instance subclass's prototype). @internal */
  declare readonly _e: Engine;
  // Plain properties set in the constructor (`declare`: no class-field definitions, which
  // would cost every tensor a [[Define]] per field).
  /** The RawTensor owned, null once disposed. @internal */
  declare _h: RawTensor | null;
  /** The dims, read once from the engine. @internal */
  declare _shape: number[] | undefined;
  /** The tidy() scope that owns this tensor. @internal */
  declare _scope: Set<unknown> | null;
  /**
   * Set (true) on the tensors the webgpu Learner's general path hands its metrics: made from
   * values it read (`fromData`, so their values are on the host), they allow the synchronous
   * reads that the metric protocol uses. Unset on every other tensor. @internal
   */
  declare _hostView: boolean | undefined;

  /** Internal: create tensors with the factories (`Tensor.fromData`, `zeros`, ...); `new` @throws `Type`. */
  constructor(token: never, handle: never) {
    if ((token as unknown) !== TOKEN) {
      throw fail('Type', 'Tensor: use kiln.Tensor.fromData(data), zeros(shape), ... to create tensors (the constructor is internal)');
    }
    this._h = handle as RawTensor;
    this._shape = undefined;
    this._scope = null;
  }

  /** The handle of a live tensor of this engine (Disposed / Type otherwise). @internal */
  _raw(op: string, what?: string): RawTensor {
    return this._e.unwrap(this, op, what);
  }

  /** The dims, cached (the caller has checked the handle). @internal */
  _dims(): number[] {
    return this._shape ?? (this._shape = (this._h as RawTensor).shape());
  }

  // ---- properties

  /** The dims, e.g. `[2, 3]`; `[]` for a scalar (a fresh array on every read). */
  get shape(): number[] {
    this._raw('shape');
    return this._dims().slice();
  }

  get dtype(): DType {
    return DTYPES[this._raw('dtype').dtype()];
  }

  /** The number of dims (0 for a scalar). */
  get rank(): number {
    this._raw('rank');
    return this._dims().length;
  }

  /** The number of elements (product of the dims; 1 for a scalar). */
  get numel(): number {
    this._raw('numel');
    return this._dims().reduce((a, b) => a * b, 1);
  }

  /** Same as numel (TF.js's name). */
  get size(): number {
    return this.numel;
  }

  /** Whether dispose() was called (or its tidy ended). */
  get isDisposed(): boolean {
    return this._h === null;
  }

  /**
   * Whether gradients flow to this tensor: a leaf marked with requireGrad(), or the result
   * of an op with such an input (outside noGrad). PyTorch's `requires_grad`.
   */
  get isRequireGrad(): boolean {
    return this._raw('isRequireGrad').isTracked();
  }

  // ---- data out

  /**
   * The values, row-major, in a new typed array (a copy): Float32Array / Int32Array / Uint8Array (bool).
   * @throws KilnError `State` on the webgpu backend, whose reads are asynchronous: use
   *   `await tensor.data()`.
   */
  dataSync(): Float32Array | Int32Array | Uint8Array {
    const h = this._raw('dataSync');
    this._syncRead('dataSync', 'data');
    return this._e.raw.tDataSync(h);
  }

  /**
   * The values, row-major, in a new typed array (TensorFlow.js's `data()`): on every backend.
   * On the cpu backend it resolves to what dataSync() returns; on the webgpu backend it waits
   * for the GPU work that computes the tensor and copies its buffer back (the tensor may be
   * disposed meanwhile: the copy is recorded first).
   * @throws (rejects) KilnError `Disposed` for a disposed tensor; on the webgpu backend
   *   `Device` or `OutOfMemory` when the GPU reported an error (a validation error, a lost
   *   device, an allocation that failed) since the last read; `Index` when an index computed
   *   on the GPU by an op since the last read was out of range (a device check; reported once,
   *   by this first read after the op, whichever tensor it reads).
   */
  async data(): Promise<Float32Array | Int32Array | Uint8Array> {
    const h = this._raw('data');
    const read = this._e.asyncRead;
    return read ? read(h) : this._e.raw.tDataSync(h);
  }

  /**
   * The values as nested arrays, as toArray() gives them (TensorFlow.js's `array()`), on
   * every backend (see data()).
   * @throws (rejects) as data(), and `Limit` as toArray().
   */
  async array(): Promise<NestedData> {
    const dtype = this._raw('array').dtype();
    const shape = this._dims();
    checkToArrayLimit('array', shape);
    return nest(await this.data(), shape, dtype === 2);
  }

  /** Throws KilnError `State` for a synchronous read on the webgpu backend, naming the async form. */
  private _syncRead(op: string, alternative: string): void {
    if (this._hostView === true) return;
    this._e.requireSyncReads(op, `\`await tensor.${alternative}()\``);
  }

  /**
   * The values as nested arrays (`[[1, 2], [3, 4]]`); booleans for bool tensors; a number
   * (boolean) for rank 0.
   * @throws `Limit` if the nested arrays would hold more than TO_ARRAY_LIMIT arrays and
   *   values in all (e.g. shape [2147483647, 0]: no elements, but 2^31 - 1 empty rows, more
   *   than a JS heap holds); dataSync() returns any tensor's values as one typed array.
   */
  toArray(): NestedData {
    const h = this._raw('toArray');
    const shape = this._dims();
    checkToArrayLimit('toArray', shape);
    this._syncRead('toArray', 'array');
    return nest(this._e.raw.tDataSync(h), shape, h.dtype() === 2);
  }

  /** The only element. @throws KilnError `Shape` unless numel is 1. */
  item(): number | boolean {
    const h = this._raw('item');
    const n = h.numel();
    if (n !== 1) {
      throw fail('Shape', `item: expected a tensor with one element, got shape [${this._dims().join(', ')}] (${n} elements)`);
    }
    this._syncRead('item', 'data');
    const v = this._e.raw.tDataSync(h)[0];
    return h.dtype() === 2 ? v !== 0 : v;
  }

  // ---- formatting

  /**
   * Burn's Display: values nested by rank (summarised past 1000 elements), then shape,
   * device, backend, kind and dtype. `precision`: digits after the point (0 to 20;
   * default: the shortest form that reads back exactly).
   * @throws KilnError `Value` for a precision outside [0, 20].
   */
  toString(options?: { precision?: number }): string {
    const op = 'toString';
    const opts = checkOptions<{ precision: unknown }>(options, op);
    let precision = -1;
    if (opts.precision !== undefined) {
      const p = checkInt(opts.precision, op, 'precision');
      if (p < 0 || p > 20) throw fail('Value', `${op}: precision must be in [0, 20], got ${p}`);
      precision = p;
    }
    if (this._h === null) return 'Tensor { disposed }';
    const h = this._raw(op);
    this._syncRead(op, 'data');
    return this._e.raw.tToString(h, precision);
  }

  /** Node's util.inspect shows toString(). @internal */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }

  // ---- lifetime

  /** A new handle sharing the buffer (and the autodiff node); dispose both. */
  clone(): Tensor {
    return this._e.wrap(this._raw('clone').clone());
  }

  /**
   * Frees the tensor's memory now. Safe to call twice.
   * @throws KilnError `Busy` when called from a getter or Proxy that the engine is reading (the
   *   running call may hold this tensor); nothing changes.
   */
  dispose(): void {
    const h = this._h;
    if (h === null) return;
    engineBusy('Tensor.dispose');
    this._h = null;
    const e = this._e;
    if (e.registry) e.registry.unregister(this);
    if (this._scope) {
      this._scope.delete(this);
      this._scope = null;
    }
    h.delete();
    e.liveTensors--;
  }

  /** `using t = kiln.Tensor.zeros([2])` disposes at the end of the block. */
  [Symbol.dispose](): void {
    this.dispose();
  }
}
Object.defineProperty(TensorCore.prototype, Symbol.toStringTag, { value: 'Tensor' });
