// kiln.data's datasets of JS values (Burn's `burn::data::dataset`: the Dataset trait and
// its transforms), engine-free so that a loader's Web Workers / worker threads can rebuild
// them (worker.ts) without loading WebAssembly. The seeded ones (ShuffledDataset,
// SamplerDataset) take their orders from the engine (datasets.ts) and send them to
// workers as index arrays.
import { KilnError } from '../errors.js';
import { describe, fail } from '../tensor/checks.js';

// ---------------------------------------------------------------- the protocol

/**
 * The Dataset protocol (Burn's `Dataset<I>` trait: `len()`, `get(index)`): any object with
 * a `length` (a non-negative integer) and `get(i)` returning item i for 0 <= i < length.
 * Arrays, typed arrays and `{length, get}` objects are datasets as they are; kiln.data's
 * classes implement it.
 */
export interface DatasetLike<T = unknown> {
  readonly length: number;
  get(index: number): T;
}

/** The item type of a dataset. */
export type ItemOf<D> = D extends DatasetLike<infer T> ? T : never;

/**
 * What a worker needs to rebuild a dataset (internal; see DataLoader's numWorkers): plain
 * data (structured-cloneable) and module URLs.
 */
export type Description =
  | { kind: 'items'; items: unknown[] }
  | { kind: 'typed'; values: ArrayLike<number> }
  | { kind: 'columns'; columns: Record<string, unknown>; itemSizes: Record<string, number>; views: string[] }
  | { kind: 'partial'; source: Description; start: number; end: number }
  | { kind: 'indexed'; source: Description; indices: Uint32Array; op: string }
  | { kind: 'composed'; sources: Description[] }
  | { kind: 'mapper'; source: Description; module: string; export: string }
  | { kind: 'module'; module: string; export: string; args: unknown[] };

/** The symbol of the method by which a dataset describes itself to workers. */
export const DESCRIBE: unique symbol = Symbol.for('kiln.data.describe');

/** A dataset that can describe itself to a worker. */
export interface Describable {
  [DESCRIBE](path: string): Description;
}

/**
 * `length` of a dataset, checked: a non-negative safe integer.
 * @throws KilnError `Type` naming op and what was given.
 */
export function checkedLength(d: unknown, op: string, what = 'dataset'): number {
  const n = (d as { length?: unknown } | null)?.length;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw fail('Type', `${op}: the ${what}'s length must be a non-negative integer, got ${describe(n)}`);
  }
  return n;
}

/**
 * Whether `d` follows the Dataset protocol: an array, a typed array, or an object with a
 * `get` method and a `length`.
 */
export function isDatasetLike(d: unknown): d is DatasetLike {
  if (Array.isArray(d) || (ArrayBuffer.isView(d) && !(d instanceof DataView))) return true;
  return d !== null && (typeof d === 'object' || typeof d === 'function') &&
    typeof (d as { get?: unknown }).get === 'function' && 'length' in (d as object);
}

/**
 * The item at `index` of any protocol dataset (arrays and typed arrays by indexing). Does
 * not check the index (the caller has).
 */
export function getItem<T>(d: DatasetLike<T> | ArrayLike<T>, index: number): T {
  if (Array.isArray(d) || ArrayBuffer.isView(d)) return (d as ArrayLike<T>)[index];
  return (d as DatasetLike<T>).get(index);
}

/**
 * Checks that `index` is an integer in [0, length).
 * @throws KilnError `Type` for a non-integer, `Index` out of range (naming op, index and length).
 */
export function checkIndex(index: unknown, length: number, op: string): number {
  if (typeof index !== 'number' || !Number.isSafeInteger(index)) {
    throw fail('Type', `${op}: index must be an integer, got ${describe(index)}`);
  }
  if (index < 0 || index >= length) {
    throw fail('Index', `${op}: index ${index} is out of range for a dataset of length ${length}`);
  }
  return index;
}

/**
 * `source.get(index)` with its exception turned into a KilnError naming op and the index,
 * the original error as `cause` (its code kept if it is a KilnError, else `Value`).
 */
export function getWrapped<T>(source: DatasetLike<T> | ArrayLike<T>, index: number, op: string): T {
  try {
    return getItem(source, index);
  } catch (err) {
    throw wrapItemError(err, index, op);
  }
}

/** The KilnError for an exception thrown while loading item `index`. */
export function wrapItemError(err: unknown, index: number, op: string): KilnError {
  const e = err as { name?: unknown; message?: unknown } | null;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  const code = err instanceof KilnError ? err.code : 'Value';
  const out = new KilnError(code, `${op}: the dataset's get(${index}) threw ${name}: ${text}`);
  (out as { cause?: unknown }).cause = err;
  return out;
}

/** The worker description of a protocol dataset, or a KilnError `Type` saying why not. */
export function describeDataset(d: unknown, path: string): Description {
  const f = (d as Partial<Describable> | null)?.[DESCRIBE];
  if (typeof f === 'function') return f.call(d, path);
  if (Array.isArray(d)) {
    checkCloneable(d, path);
    return { kind: 'items', items: d };
  }
  if (ArrayBuffer.isView(d) && !(d instanceof DataView)) {
    return { kind: 'typed', values: d as unknown as ArrayLike<number> };
  }
  throw fail(
    'Type',
    `DataLoader: numWorkers > 0 needs a dataset a worker can rebuild, but ${path} is ${describe(d)} ` +
      '(its get() is a function, which cannot be sent to a worker). Use an array, kiln.data.InMemDataset ' +
      'or ColumnDataset of plain data, kiln.data.fromModule(url) for a dataset a module builds, or ' +
      'numWorkers: 0',
  );
}

/**
 * Throws `Type` naming the path of the first value in `v` that a worker cannot receive
 * (functions, symbols, class instances such as Tensors); plain data passes.
 */
export function checkCloneable(v: unknown, path: string, depth = 0): void {
  if (v === null || v === undefined) return;
  switch (typeof v) {
    case 'number': case 'string': case 'boolean': case 'bigint': return;
    case 'function': case 'symbol':
      throw fail('Type', `DataLoader: numWorkers > 0 sends the items to workers, but ${path} is ${describe(v)}`);
    default: break;
  }
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return;
  if (depth > 64) throw fail('Limit', `DataLoader: ${path} nests deeper than 64 levels`);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) checkCloneable(v[i], `${path}[${i}]`, depth + 1);
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) {
    throw fail('Type', `DataLoader: numWorkers > 0 sends the items to workers as plain data, but ${path} is ${describe(v)}`);
  }
  for (const [k, x] of Object.entries(v as object)) checkCloneable(x, `${path}.${k}`, depth + 1);
}

/**
 * A typed array's values in shared memory, when the environment has SharedArrayBuffer
 * (Node; cross-origin isolated pages): every worker then reads the one copy instead of
 * receiving a copy of its own. Other values are returned as they are.
 */
export function shared(v: unknown): unknown {
  const SAB = (globalThis as { SharedArrayBuffer?: SharedArrayBufferConstructor }).SharedArrayBuffer;
  if (typeof SAB !== 'function' || !ArrayBuffer.isView(v) || v instanceof DataView) return v;
  if (v.buffer instanceof SAB) return v;
  const Ctor = v.constructor as new (b: SharedArrayBuffer) => ArrayBufferView & { set(a: ArrayLike<number>): void };
  const copy = new Ctor(new SAB(v.byteLength));
  copy.set(v as unknown as ArrayLike<number>);
  return copy;
}

/** A module URL a worker can import (absolute), or a KilnError `Value`. */
export function checkModuleUrl(url: unknown, op: string): string {
  const text = typeof url === 'object' && url !== null && typeof (url as { href?: unknown }).href === 'string' ? (url as { href: string }).href : url;
  if (typeof text !== 'string') throw fail('Type', `${op}: module must be a URL string, got ${describe(url)}`);
  try {
    return new URL(text).href;
  } catch {
    throw fail('Value', `${op}: module must be an absolute URL (e.g. new URL('./data.mjs', import.meta.url).href), got ${JSON.stringify(text)}`);
  }
}

// ---------------------------------------------------------------- datasets

/** The shared base of kiln.data's dataset classes: iteration and index checks. */
export abstract class BaseDataset<T> implements DatasetLike<T> {
  abstract readonly length: number;
  /** Item `index` (0 <= index < length). @throws KilnError `Index`/`Type` for a bad index. */
  abstract get(index: number): T;

  /** Items 0..length-1 in order (Burn's `iter()`). */
  *[Symbol.iterator](): IterableIterator<T> {
    const n = this.length;
    for (let i = 0; i < n; i++) yield this.get(i);
  }

  /** @internal */
  abstract [DESCRIBE](path: string): Description;
}

/**
 * Items held in a JS array (Burn's `InMemDataset`): `new kiln.data.InMemDataset([{x, y}, ...])`.
 * The array is copied (shallowly) so later pushes do not change the dataset.
 * @throws KilnError `Type` unless items is an array or typed array.
 */
export class InMemDataset<T> extends BaseDataset<T> {
  /** @internal */
  readonly _items: readonly T[];

  constructor(items: readonly T[] | ArrayLike<T>) {
    super();
    if (!Array.isArray(items) && !(ArrayBuffer.isView(items) && !(items instanceof DataView))) {
      throw fail('Type', `InMemDataset: items must be an array, got ${describe(items)}`);
    }
    this._items = Array.from(items as ArrayLike<T>);
  }

  get length(): number {
    return this._items.length;
  }

  get(index: number): T {
    return this._items[checkIndex(index, this._items.length, 'InMemDataset.get')];
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    checkCloneable(this._items, `${path} (an InMemDataset) item`);
    return { kind: 'items', items: this._items as unknown[] };
  }
}

/** Arrays a ColumnDataset holds: typed arrays (item i is a subarray view) or plain arrays. */
export type Column = ArrayLike<unknown>;

/**
 * Items made of columns, e.g. `{x: Float32Array(n·784), y: Int32Array(n)}` with
 * `itemSizes: {x: 784}`: item i is `{x: x.subarray(i·784, (i+1)·784), y: y[i]}` (a view, no
 * copy; a column of size 1 gives numbers, unless it is named in `views`: then a view of
 * one value, e.g. a table with one feature column). With workers, each worker receives one copy of
 * the columns (typed arrays are cheap to send), the fastest way to load large data there.
 * Like PyTorch's TensorDataset over JS arrays.
 * @throws KilnError `Type` for a non-object or a column that is not an array; `Shape` when
 *   columns hold different numbers of items (naming both).
 */
export class ColumnDataset<T = Record<string, unknown>> extends BaseDataset<T> {
  /** @internal */
  readonly _columns: Record<string, Column>;
  /** @internal */
  readonly _sizes: Record<string, number>;
  /** @internal columns whose items are views even at size 1 */
  readonly _views: Set<string>;
  readonly length: number;

  constructor(columns: Record<string, Column>, options: { itemSizes?: Record<string, number>; views?: string[] } = {}) {
    super();
    const op = 'ColumnDataset';
    if (columns === null || typeof columns !== 'object' || Array.isArray(columns)) {
      throw fail('Type', `${op}: columns must be an object of arrays, got ${describe(columns)}`);
    }
    const sizes = options.itemSizes ?? {};
    if (sizes === null || typeof sizes !== 'object') throw fail('Type', `${op}: itemSizes must be an object, got ${describe(sizes)}`);
    for (const key of Object.keys(sizes)) {
      if (!(key in columns)) throw fail('Config', `${op}: itemSizes names "${key}", which is not a column (columns: ${Object.keys(columns).join(', ')})`);
    }
    const views = options.views ?? [];
    if (!Array.isArray(views)) throw fail('Type', `${op}: views must be an array of column names, got ${describe(views)}`);
    for (const key of views) {
      if (typeof key !== 'string' || !(key in columns)) throw fail('Config', `${op}: views names ${describe(key)}, which is not a column (columns: ${Object.keys(columns).join(', ')})`);
      const col = columns[key];
      if (!ArrayBuffer.isView(col) || col instanceof DataView) throw fail('Type', `${op}: column "${key}" is in views, which needs a typed array, got ${describe(col)}`);
    }
    this._views = new Set(views);
    this._columns = {};
    this._sizes = {};
    let length: number | null = null;
    let first = '';
    for (const [key, col] of Object.entries(columns)) {
      const typed = ArrayBuffer.isView(col) && !(col instanceof DataView);
      if (!Array.isArray(col) && !typed) throw fail('Type', `${op}: column "${key}" must be an array or a typed array, got ${describe(col)}`);
      const size = sizes[key] ?? 1;
      if (!Number.isSafeInteger(size) || size < 1) throw fail('Value', `${op}: itemSizes.${key} must be an integer >= 1, got ${describe(size)}`);
      if (size > 1 && !typed) throw fail('Type', `${op}: column "${key}" has itemSizes ${size}, which needs a typed array, got ${describe(col)}`);
      const len = (col as Column).length;
      if (len % size !== 0) throw fail('Shape', `${op}: column "${key}" has ${len} values, not a multiple of its item size ${size}`);
      const n = len / size;
      if (length === null) {
        length = n;
        first = key;
      } else if (n !== length) {
        throw fail('Shape', `${op}: column "${key}" has ${n} items but column "${first}" has ${length}`);
      }
      this._columns[key] = col as Column;
      this._sizes[key] = size;
    }
    this.length = length ?? 0;
  }

  get(index: number): T {
    checkIndex(index, this.length, 'ColumnDataset.get');
    const out: Record<string, unknown> = {};
    for (const [key, col] of Object.entries(this._columns)) {
      const size = this._sizes[key];
      out[key] = size === 1 && !this._views.has(key) ? col[index] : (col as Float32Array).subarray(index * size, (index + 1) * size);
    }
    return out as T;
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    for (const [key, col] of Object.entries(this._columns)) {
      if (Array.isArray(col)) checkCloneable(col, `${path} (a ColumnDataset) column ${key}`);
    }
    const columns: Record<string, unknown> = {};
    for (const [key, col] of Object.entries(this._columns)) columns[key] = shared(col);
    return { kind: 'columns', columns, itemSizes: this._sizes, views: [...this._views] };
  }
}

/**
 * Item i is `mapper(source.get(i), i)` (Burn's `MapperDataset` with a `Mapper`), computed on
 * each access. For a loader with workers, give where the worker finds the same function:
 * `{module: url, export: 'name'}` (the module's export is called as mapper).
 * @throws KilnError `Type` for a source that is not a dataset or a mapper that is not a function.
 */
export class MapperDataset<S, T> extends BaseDataset<T> {
  /** @internal */
  readonly _source: DatasetLike<S>;
  /** @internal */
  readonly _mapper: (item: S, index: number) => T;
  /** @internal */
  readonly _module: { module: string; export: string } | null;

  constructor(source: DatasetLike<S> | readonly S[], mapper: (item: S, index: number) => T,
    worker?: { module: string | { href: string }; export?: string }) {
    super();
    const op = 'MapperDataset';
    this._source = asDataset(source, op, 'source') as DatasetLike<S>;
    if (typeof mapper !== 'function') throw fail('Type', `${op}: mapper must be a function, got ${describe(mapper)}`);
    this._mapper = mapper;
    this._module = null;
    if (worker !== undefined) {
      if (worker === null || typeof worker !== 'object') throw fail('Type', `${op}: worker must be {module, export}, got ${describe(worker)}`);
      const name = worker.export ?? 'default';
      if (typeof name !== 'string') throw fail('Type', `${op}: worker.export must be a string, got ${describe(name)}`);
      this._module = { module: checkModuleUrl(worker.module, op), export: name };
    }
  }

  get length(): number {
    return checkedLength(this._source, 'MapperDataset', 'source');
  }

  get(index: number): T {
    checkIndex(index, this.length, 'MapperDataset.get');
    return this._mapper(getWrapped(this._source, index, 'MapperDataset.get'), index);
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    if (this._module === null) {
      throw fail('Type', `DataLoader: numWorkers > 0 needs a dataset a worker can rebuild, but ${path} is a MapperDataset whose ` +
        "mapper is a function only: pass where a worker finds it, new MapperDataset(source, fn, {module: url, export: 'fn'})");
    }
    return { kind: 'mapper', source: describeDataset(this._source, `${path}.source`), ...this._module };
  }
}

/**
 * Items start..end-1 of a source (Burn's `PartialDataset`); `end` defaults to the
 * source's length. Burn's `split` is `PartialDataset.split(source, n)`.
 * @throws KilnError `Type` for non-integers, `Index` unless 0 <= start <= end <= source length.
 */
export class PartialDataset<T> extends BaseDataset<T> {
  /** @internal */
  readonly _source: DatasetLike<T>;
  readonly start: number;
  readonly end: number;

  constructor(source: DatasetLike<T> | readonly T[], start: number, end?: number) {
    super();
    const op = 'PartialDataset';
    this._source = asDataset(source, op, 'source') as DatasetLike<T>;
    const n = checkedLength(this._source, op, 'source');
    const e = end ?? n;
    for (const [what, v] of [['start', start], ['end', e]] as const) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw fail('Type', `${op}: ${what} must be an integer, got ${describe(v)}`);
    }
    if (!(start >= 0 && start <= e && e <= n)) {
      throw fail('Index', `${op}: range ${start}..${e} is not within the source's 0..${n}`);
    }
    this.start = start;
    this.end = e;
  }

  /** Burn's `PartialDataset::split(dataset, n)`: n consecutive parts of near-equal length (the first ones one longer). */
  static split<T>(source: DatasetLike<T> | readonly T[], n: number): PartialDataset<T>[] {
    const op = 'PartialDataset.split';
    const d = asDataset(source, op, 'source') as DatasetLike<T>;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) throw fail('Value', `${op}: n must be an integer >= 1, got ${describe(n)}`);
    const len = checkedLength(d, op, 'source');
    const base = Math.floor(len / n);
    const extra = len % n;
    const parts: PartialDataset<T>[] = [];
    let start = 0;
    for (let i = 0; i < n; i++) {
      const size = base + (i < extra ? 1 : 0);
      parts.push(new this(d, start, start + size) as PartialDataset<T>);
      start += size;
    }
    return parts;
  }

  get length(): number {
    return this.end - this.start;
  }

  get(index: number): T {
    checkIndex(index, this.length, 'PartialDataset.get');
    return getWrapped(this._source, this.start + index, 'PartialDataset.get');
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    return { kind: 'partial', source: describeDataset(this._source, `${path}.source`), start: this.start, end: this.end };
  }
}

/**
 * Item i is `source.get(indices[i])`: the base of ShuffledDataset and SamplerDataset (the
 * engine draws the indices).
 */
export class IndexedDataset<T> extends BaseDataset<T> {
  /** @internal */
  readonly _source: DatasetLike<T>;
  /** @internal */
  readonly _indices: Uint32Array;
  /** @internal */
  readonly _op: string;

  constructor(source: DatasetLike<T>, indices: Uint32Array, op = 'IndexedDataset') {
    super();
    this._source = source;
    this._indices = indices;
    this._op = op;
  }

  get length(): number {
    return this._indices.length;
  }

  get(index: number): T {
    const op = `${this._op}.get`;
    checkIndex(index, this._indices.length, op);
    return getWrapped(this._source, this._indices[index], op);
  }

  /** The source index of each item: get(i) is the source's get(indices[i]) (a copy). */
  get indices(): number[] {
    return Array.from(this._indices);
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    return { kind: 'indexed', source: describeDataset(this._source, `${path}.source`), indices: this._indices, op: this._op };
  }
}

/**
 * The items of several datasets one after the other (Burn's `ComposedDataset`).
 * @throws KilnError `Type` unless given an array of datasets.
 */
export class ComposedDataset<T> extends BaseDataset<T> {
  /** @internal */
  readonly _sources: DatasetLike<T>[];

  constructor(sources: readonly (DatasetLike<T> | readonly T[])[]) {
    super();
    const op = 'ComposedDataset';
    if (!Array.isArray(sources)) throw fail('Type', `${op}: sources must be an array of datasets, got ${describe(sources)}`);
    this._sources = sources.map((s, i) => asDataset(s, op, `sources[${i}]`) as DatasetLike<T>);
  }

  get length(): number {
    let n = 0;
    this._sources.forEach((s, i) => (n += checkedLength(s, 'ComposedDataset', `sources[${i}]`)));
    return n;
  }

  get(index: number): T {
    const op = 'ComposedDataset.get';
    checkIndex(index, this.length, op);
    let i = index;
    for (const s of this._sources) {
      const n = s.length;
      if (i < n) return getWrapped(s, i, op);
      i -= n;
    }
    throw fail('Index', `${op}: index ${index} is out of range`); // unreachable: checked above
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    return { kind: 'composed', sources: this._sources.map((s, i) => describeDataset(s, `${path}.sources[${i}]`)) };
  }
}

/**
 * A dataset a module builds: the module's export `name` is called with args (it may be
 * async) and returns a protocol dataset; workers import the same module and call it with
 * the same args. Made by `await kiln.data.fromModule(url, {export, args})`.
 */
export class ModuleDataset<T = unknown> extends BaseDataset<T> {
  /** @internal */
  readonly _inner: DatasetLike<T>;
  readonly module: string;
  readonly exportName: string;
  /** @internal */
  readonly _args: unknown[];

  /** @internal */
  constructor(inner: DatasetLike<T>, module: string, exportName: string, args: unknown[]) {
    super();
    this._inner = inner;
    this.module = module;
    this.exportName = exportName;
    this._args = args;
  }

  get length(): number {
    return checkedLength(this._inner, 'ModuleDataset', `dataset of ${this.module}`);
  }

  get(index: number): T {
    const op = 'ModuleDataset.get';
    checkIndex(index, this.length, op);
    return getWrapped(this._inner, index, op);
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    checkCloneable(this._args, `${path} (a ModuleDataset) args`);
    return { kind: 'module', module: this.module, export: this.exportName, args: this._args };
  }
}

/** Imports `module` and builds the dataset its export makes (main thread and workers). @internal */
export async function buildModuleDataset(module: string, exportName: string, args: unknown[], op: string): Promise<DatasetLike> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(/* @vite-ignore */ module)) as Record<string, unknown>;
  } catch (err) {
    const e = fail('Value', `${op}: cannot import ${module}: ${(err as Error)?.message ?? String(err)}`);
    (e as { cause?: unknown }).cause = err;
    throw e;
  }
  const factory = mod[exportName];
  if (typeof factory !== 'function') {
    throw fail('Type', `${op}: ${module} has no function export "${exportName}" (got ${describe(factory)})`);
  }
  const made = await (factory as (...a: unknown[]) => unknown)(...args);
  if (!isDatasetLike(made)) throw fail('Type', `${op}: ${module}'s ${exportName}(...) must return a dataset ({length, get}), got ${describe(made)}`);
  checkedLength(made, op, `dataset of ${module}`);
  return made;
}

/**
 * A protocol dataset from arrays, typed arrays and `{length, get}` objects (as they are),
 * or a KilnError `Type` naming op and what.
 */
export function asDataset(d: unknown, op: string, what = 'dataset'): DatasetLike {
  if (!isDatasetLike(d)) {
    throw fail('Type', `${op}: ${what} must be a dataset (an array, a typed array or an object with length and get(i)), got ${describe(d)}`);
  }
  checkedLength(d, op, what);
  return d as DatasetLike;
}

// ---------------------------------------------------------------- rebuilding (workers)

/** A dataset from its description (in a worker; engine-free). @internal */
export async function rebuild(desc: Description): Promise<DatasetLike> {
  switch (desc.kind) {
    case 'items':
      return new InMemDataset(desc.items);
    case 'typed':
      return new InMemDataset(desc.values);
    case 'columns':
      return new ColumnDataset(desc.columns as Record<string, Column>, { itemSizes: desc.itemSizes, views: desc.views });
    case 'partial':
      return new PartialDataset(await rebuild(desc.source), desc.start, desc.end);
    case 'indexed':
      return new IndexedDataset(await rebuild(desc.source), desc.indices, desc.op);
    case 'composed':
      return new ComposedDataset(await Promise.all(desc.sources.map(rebuild)));
    case 'mapper': {
      const source = await rebuild(desc.source);
      let mod: Record<string, unknown>;
      try {
        mod = (await import(/* @vite-ignore */ desc.module)) as Record<string, unknown>;
      } catch (err) {
        throw fail('Value', `MapperDataset: a worker cannot import ${desc.module}: ${(err as Error)?.message ?? String(err)}`);
      }
      const fn = mod[desc.export];
      if (typeof fn !== 'function') throw fail('Type', `MapperDataset: ${desc.module} has no function export "${desc.export}"`);
      return new MapperDataset(source, fn as (x: unknown, i: number) => unknown);
    }
    case 'module':
      return buildModuleDataset(desc.module, desc.export, desc.args, 'fromModule');
  }
}
