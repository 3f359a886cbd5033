// Installs kiln.data's datasets, batchers and DataLoader beside the WASM-side
// fromArrays/mnist Datasets (train/data.ts), which stay as they are.
import { fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import { bindClass } from '../tensor/engine.js';
import { makeDefaultBatcher, type DefaultBatcherFn } from './batcher.js';
import type { CollateOptions } from './collate.js';
import { FunctionDataset, fromModule, SamplerDataset, ShuffledDataset } from './datasets.js';
import { DataLoader } from './loader.js';
import { CsvDataset } from './csv.js';
import { SqliteDataset } from './sqlite.js';
import { TabularDataset } from './tabular.js';
import {
  BaseDataset, ColumnDataset, ComposedDataset, InMemDataset, MapperDataset, ModuleDataset, PartialDataset,
} from './plain.js';

/** What install adds to kiln.data. */
export interface DataPipeline {
  /** The base class of kiln.data's JS datasets (for instanceof; any {length, get} object is a dataset too). */
  readonly BaseDataset: typeof BaseDataset;
  readonly InMemDataset: typeof InMemDataset;
  readonly ColumnDataset: typeof ColumnDataset;
  readonly MapperDataset: typeof MapperDataset;
  readonly PartialDataset: typeof PartialDataset;
  readonly ShuffledDataset: typeof ShuffledDataset;
  readonly ComposedDataset: typeof ComposedDataset;
  readonly SamplerDataset: typeof SamplerDataset;
  readonly FunctionDataset: typeof FunctionDataset;
  readonly ModuleDataset: typeof ModuleDataset;
  readonly DataLoader: typeof DataLoader;
  /** Rows of CSV text as `{features, label}` items (papaparse, imported on first use). */
  readonly CsvDataset: typeof CsvDataset;
  /** Rows of an SQLite table or query as `{features, label}` items (sqlite-wasm, imported on first use). */
  readonly SqliteDataset: typeof SqliteDataset;
  /** The base of CsvDataset and SqliteDataset (featureNames, labelName, classes, classId). */
  readonly TabularDataset: typeof TabularDataset;
  /** See ModuleDataset. */
  fromModule: typeof fromModule;
  /**
   * The default batcher with options (per-field dtype and item shape); see DataLoader.
   * `kiln.data.defaultBatcher({dtype: {y: 'int32'}})`.
   */
  defaultBatcher(options?: CollateOptions): DefaultBatcherFn;
  /**
   * The engine's seeded permutation of 0..n-1 (Fisher–Yates with SplitMix64,
   * kiln/data/rng.hpp), of `mixSeed(seed, stream)` when a stream is given (a loader's epoch).
   * @throws KilnError `Value` for n or seed outside [0, 2^32 - 1] / [0, 2^53 - 1].
   */
  permutation(n: number, seed: number, stream?: number): number[];
}

/** Adds the data pipeline to kiln.data (a new frozen object with the old names and these). */
export function installDataPipeline(kiln: Record<string, unknown>, e: Engine): void {
  const bind = <C extends { prototype: object }>(c: C): C => bindClass(c, e);
  const extra: DataPipeline = {
    BaseDataset,
    InMemDataset,
    ColumnDataset,
    MapperDataset,
    PartialDataset,
    ComposedDataset,
    FunctionDataset,
    ModuleDataset,
    ShuffledDataset: bind(class ShuffledDataset<T> extends ShuffledDatasetBase<T> {}) as typeof ShuffledDataset,
    SamplerDataset: bind(class SamplerDataset<T> extends SamplerDatasetBase<T> {}) as typeof SamplerDataset,
    DataLoader: bind(class DataLoader<I, B> extends DataLoaderBase<I, B> {}) as typeof DataLoader,
    CsvDataset,
    SqliteDataset,
    TabularDataset,
    fromModule,
    defaultBatcher: (options?: CollateOptions) => makeDefaultBatcher(e, options),
    permutation: (n: number, seed: number, stream?: number) => {
      const op = 'data.permutation';
      for (const [what, v] of [['n', n], ['seed', seed], ['stream', stream ?? 0]] as const) {
        if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
          throw fail('Type', `${op}: ${what} must be a non-negative integer, got ${String(v)}`);
        }
      }
      return Array.from(e.raw.dataPermutation(n, seed, stream ?? -1));
    },
  };
  kiln.data = Object.freeze({ ...(kiln.data as object), ...extra });
}

const ShuffledDatasetBase = ShuffledDataset;
const SamplerDatasetBase = SamplerDataset;
const DataLoaderBase = DataLoader;
