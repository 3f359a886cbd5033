// kiln.data: datasets held once in WebAssembly memory (bindings/train_data.cpp), from arrays
// or from MNIST's IDX files.
import { HandleOwner } from '../handle.js';
import type { RawDataset } from '../raw.js';
import { checkIntArray, describe, fail } from '../tensor/checks.js';
import { bindClass, type Engine } from '../tensor/engine.js';
import { int, intShape, num, options, TOKEN } from './common.js';

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
    // NaN is a number outside [0, 1] here (Value), not a config field (num's Config).
    const f = typeof fraction === 'number' && Number.isNaN(fraction) ? NaN : num(fraction, op, 'fraction');
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
export function unwrapDataset(e: Engine, d: unknown, op: string, what = 'data'): RawDataset {
  if (!(d instanceof e.bound(Dataset))) throw fail('Type', `${op}: ${what} must be a kiln.data Dataset, got ${describe(d)}`);
  return d._raw(op);
}

const DatasetBase = Dataset;

/** Installs kiln.data onto `kiln`. */
export function installData(kiln: Record<string, unknown>, e: Engine): void {
  const { raw } = e;
  const D = bindClass(class Dataset extends DatasetBase {}, e) as unknown as DatasetCtor & typeof Dataset;

  function fromArrays(x: unknown, y: unknown, config?: unknown): Dataset {
    const op = 'data.fromArrays';
    const c = options(config, op, ['itemShape', 'targetShape', 'numClasses']);
    if (!(x instanceof Float32Array)) throw fail('Type', `${op}: x must be a Float32Array, got ${describe(x)}`);
    if (!(y instanceof Int32Array) && !(y instanceof Float32Array)) {
      throw fail('Type', `${op}: y must be an Int32Array (class labels) or a Float32Array (targets), got ${describe(y)}`);
    }
    if (c.itemShape === undefined) throw fail('Config', `${op}: itemShape is required (e.g. [784] or [2])`);
    const itemShape = checkIntArray(c.itemShape, op, 'itemShape');
    const targetShape = intShape(c.targetShape, op, 'targetShape');
    const numClasses = int(c.numClasses, op, 'numClasses', 0);
    return new D(TOKEN, raw.datasetFromArrays(x, y, itemShape, targetShape, numClasses));
  }

  function mnist(images: unknown, labels: unknown): Dataset {
    const op = 'data.mnist';
    if (!(images instanceof Uint8Array)) throw fail('Type', `${op}: imagesIdxBytes must be a Uint8Array, got ${describe(images)}`);
    if (!(labels instanceof Uint8Array)) throw fail('Type', `${op}: labelsIdxBytes must be a Uint8Array, got ${describe(labels)}`);
    return new D(TOKEN, raw.datasetMnist(images, labels));
  }

  kiln.data = Object.freeze({ fromArrays, mnist, Dataset: D });
}
