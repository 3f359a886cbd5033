// kiln.data's seeded datasets (their orders drawn by the engine, kiln/data/rng.hpp and
// kiln/data/transform/{shuffle,sampler}.hpp, so a seed gives the C++ classes' orders) and
// the constructors of datasets from functions, modules and the WASM-side Dataset.
import { describe, fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import { Dataset as WasmDataset } from '../train/data.js';
import { engineOfNew } from '../train/common.js';
import {
  asDataset, BaseDataset, buildModuleDataset, checkedLength, checkIndex, checkModuleUrl, ColumnDataset, DESCRIBE,
  IndexedDataset, ModuleDataset, type DatasetLike, type Description,
} from './plain.js';

function checkSeed(seed: unknown, op: string): number {
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) {
    throw fail('Type', `${op}: seed must be an integer in [0, 2^53 - 1], got ${describe(seed)}`);
  }
  return seed;
}

/**
 * The items of a source in a seeded random order (Burn's `ShuffledDataset::with_seed`):
 * item i is `source.get(indices[i])` with `indices = permutation(length, seed)`, drawn once
 * by the engine — the order of C++'s `kiln::data::ShuffledDataset(source, seed)`, the same
 * in every build. (Burn draws from rand's StdRng; its orders are not reproduced.)
 * @throws KilnError `Type` for a source that is not a dataset or a bad seed.
 */
export class ShuffledDataset<T> extends IndexedDataset<T> {
  readonly seed: number;

  constructor(source: DatasetLike<T> | readonly T[], seed: number) {
    const e = engineOfNew(new.target, 'ShuffledDataset');
    const op = 'ShuffledDataset';
    const d = asDataset(source, op, 'source') as DatasetLike<T>;
    const s = checkSeed(seed, op);
    super(d, e.raw.dataPermutation(checkedLength(d, op, 'source'), s, -1), op);
    this.seed = s;
  }

  /** Burn's spelling. */
  static withSeed<T>(source: DatasetLike<T> | readonly T[], seed: number): ShuffledDataset<T> {
    return new this(source, seed);
  }
}

/** new kiln.data.SamplerDataset(source, size, options). */
export interface SamplerOptions {
  /** Draw with replacement (default true, as Burn's `SamplerDataset::new`). */
  replacement?: boolean;
  /** The seed (default 0). */
  seed?: number;
}

/**
 * `size` items sampled from a source (Burn's `SamplerDataset`), drawn by the engine as C++'s
 * `kiln::data::SamplerDataset` (a pure function of the seed and index, unlike Burn's
 * stateful sampler): with replacement, item i is the source's item
 * `SplitMix64(mixSeed(seed, i)).below(length)`; without, every source item appears
 * floor(size / length) times plus (size mod length) distinct ones, in a random order.
 * @throws KilnError `Type` for a bad source or option, `Value` for size > 0 of an empty source.
 */
export class SamplerDataset<T> extends IndexedDataset<T> {
  readonly replacement: boolean;
  readonly seed: number;

  constructor(source: DatasetLike<T> | readonly T[], size: number, options: SamplerOptions = {}) {
    const e = engineOfNew(new.target, 'SamplerDataset');
    const op = 'SamplerDataset';
    const d = asDataset(source, op, 'source') as DatasetLike<T>;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0) {
      throw fail('Type', `${op}: size must be a non-negative integer, got ${describe(size)}`);
    }
    if (options === null || typeof options !== 'object') throw fail('Type', `${op}: options must be an object, got ${describe(options)}`);
    for (const k of Object.keys(options)) {
      if (k !== 'replacement' && k !== 'seed') throw fail('Config', `${op}: unknown option "${k}" (options: replacement, seed)`);
    }
    const replacement = options.replacement ?? true;
    if (typeof replacement !== 'boolean') throw fail('Type', `${op}: replacement must be a boolean, got ${describe(replacement)}`);
    const seed = checkSeed(options.seed ?? 0, op);
    super(d, e.raw.dataSamplerIndices(checkedLength(d, op, 'source'), size, replacement, seed), op);
    this.replacement = replacement;
    this.seed = seed;
  }

  /** Burn's `SamplerDataset::with_replacement(dataset, size)`, seeded. */
  static withReplacement<T>(source: DatasetLike<T> | readonly T[], size: number, seed = 0): SamplerDataset<T> {
    return new this(source, size, { replacement: true, seed });
  }

  /** Burn's `SamplerDataset::without_replacement(dataset, size)`, seeded. */
  static withoutReplacement<T>(source: DatasetLike<T> | readonly T[], size: number, seed = 0): SamplerDataset<T> {
    return new this(source, size, { replacement: false, seed });
  }
}

/**
 * A dataset of `length` items whose item i is `get(i)` (a function). Main thread only: a
 * function cannot be sent to workers (use fromModule there).
 */
export class FunctionDataset<T> extends BaseDataset<T> {
  readonly length: number;
  /** @internal */
  readonly _get: (index: number) => T;

  constructor(length: number, get: (index: number) => T) {
    super();
    const op = 'FunctionDataset';
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) {
      throw fail('Type', `${op}: length must be a non-negative integer, got ${describe(length)}`);
    }
    if (typeof get !== 'function') throw fail('Type', `${op}: get must be a function, got ${describe(get)}`);
    this.length = length;
    this._get = get;
  }

  get(index: number): T {
    return this._get(checkIndex(index, this.length, 'FunctionDataset.get'));
  }

  /** @internal */
  [DESCRIBE](path: string): Description {
    throw fail('Type', `DataLoader: numWorkers > 0 needs a dataset a worker can rebuild, but ${path} is a FunctionDataset ` +
      '(a function cannot be sent to a worker): build it in a module and use kiln.data.fromModule(url)');
  }
}

/**
 * `await kiln.data.fromModule(url, {export, args})`: imports the module (an absolute URL,
 * e.g. `new URL('./my-data.mjs', import.meta.url).href`), calls its export (default
 * `default`) with args (plain data) and returns the dataset it makes, which workers
 * rebuild the same way.
 * @throws KilnError `Value` if the module cannot be imported, `Type` if the export is not
 *   a function or does not return a dataset, or args cannot be sent to a worker.
 */
export async function fromModule<T = unknown>(module: string | { href: string }, options: { export?: string; args?: unknown[] } = {}): Promise<ModuleDataset<T>> {
  const op = 'fromModule';
  const url = checkModuleUrl(module, op);
  if (options === null || typeof options !== 'object') throw fail('Type', `${op}: options must be an object, got ${describe(options)}`);
  const name = options.export ?? 'default';
  if (typeof name !== 'string') throw fail('Type', `${op}: export must be a string, got ${describe(name)}`);
  const args = options.args ?? [];
  if (!Array.isArray(args)) throw fail('Type', `${op}: args must be an array, got ${describe(args)}`);
  const inner = await buildModuleDataset(url, name, args, op);
  return new ModuleDataset<T>(inner as DatasetLike<T>, url, name, args);
}

/**
 * A protocol dataset of a WASM-side kiln.data Dataset (fromArrays, mnist): its arrays
 * copied once into a ColumnDataset of items `{x: Float32Array(itemSize), y}` (y a number
 * for int32 labels, a Float32Array for float targets). @internal
 */
export function fromWasmDataset(e: Engine, d: unknown): ColumnDataset | null {
  if (!(d instanceof e.bound(WasmDataset))) return null;
  const { x, y } = d.toArrays();
  const n = d.length;
  const itemSize = d.itemShape.reduce((a, b) => a * b, 1);
  const targetSize = n === 0 ? 1 : y.length / n;
  return new ColumnDataset({ x, y }, { itemSizes: { x: itemSize, y: targetSize } });
}
