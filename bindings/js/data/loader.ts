// kiln.data.DataLoader: batches of a dataset, in order or reshuffled every epoch from a
// seed, on the main thread or loaded by Web Workers / Node worker threads, with a position
// (state / loadState) that a checkpoint can store (Burn's DataLoader, PyTorch's
// torch.utils.data.DataLoader).
import { KilnError } from '../errors.js';
import { describe, fail } from '../tensor/checks.js';
import type { Engine } from '../tensor/engine.js';
import { engineOfNew } from '../train/common.js';
import {
  batchFunction, checkBatch, defaultBatcherOptions, makeDefaultBatcher, toTensors, type Batcher, type DefaultBatch,
} from './batcher.js';
import { asDataset, checkedLength, describeDataset, getWrapped, type DatasetLike } from './plain.js';
import { liveWorkers } from './live_workers.js';
import type { WorkerPool } from './workers.js';
import { fromWasmDataset } from './datasets.js';
import type { Dataset as WasmDataset } from '../train/data.js';

/** new kiln.data.DataLoader(dataset, options). */
export interface DataLoaderOptions<I = unknown, B = DefaultBatch> {
  /** Items per batch (default 1). The last batch of an epoch may be shorter (see dropLast). */
  batchSize?: number;
  /** A new order every epoch, drawn from (seed, epoch) by the engine (default false). */
  shuffle?: boolean;
  /** The shuffle's seed, an integer in [0, 2^53 - 1] (default 0). */
  seed?: number;
  /** Drop the last batch of an epoch when it is shorter than batchSize (default false). */
  dropLast?: boolean;
  /**
   * 0 (default): items are loaded and batched on the calling thread. k > 0: k Web Workers
   * (browsers) or worker threads (Node) load the items (and collate them, with the default
   * batcher); the main thread makes the tensors. Batches are the same, in the same order,
   * for every k. The dataset must be one a worker can rebuild (arrays and InMemDataset or
   * ColumnDataset of plain data, kiln.data.fromModule(url), and the transforms over them).
   */
  numWorkers?: number;
  /** Batches started ahead per worker (default 2, as PyTorch's prefetch_factor). */
  prefetchFactor?: number;
  /** items -> batch (default: kiln.data.defaultBatcher()). */
  batcher?: Batcher<I, B>;
}

/**
 * A position of a loader, for checkpoints: the epoch (from 0) and the number of its batches
 * handed out; `seed` is the shuffle seed (checked by loadState).
 */
export interface DataLoaderState {
  epoch: number;
  batch: number;
  seed: number;
}

/**
 * The KilnError of an exception a batcher threw for batch j of epoch `epoch`: a KilnError
 * (the default batcher's, naming the item) as it is; anything else as `Value`
 * "DataLoader: the batcher threw RangeError: ... (batch 3 of epoch 0)", the error as cause
 * (as the dataset's get() errors).
 */
function wrapBatcherError(err: unknown, j: number, epoch: number): unknown {
  if (err instanceof KilnError) return err;
  const e = err as { name?: unknown; message?: unknown } | null;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  const name = typeof e?.name === 'string' ? e.name : 'Error';
  const out = new KilnError('Value', `DataLoader: the batcher threw ${name}: ${text} (batch ${j} of epoch ${epoch})`);
  (out as { cause?: unknown }).cause = err;
  return out;
}

const OPTIONS = ['batchSize', 'shuffle', 'seed', 'dropLast', 'numWorkers', 'prefetchFactor', 'batcher'];

function intOption(v: unknown, op: string, what: string, dflt: number, min: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw fail('Type', `${op}: ${what} must be an integer, got ${describe(v)}`);
  if (v < min) throw fail('Value', `${op}: ${what} must be >= ${min}, got ${v}`);
  return v;
}

function boolOption(v: unknown, op: string, what: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== 'boolean') throw fail('Type', `${op}: ${what} must be a boolean, got ${describe(v)}`);
  return v;
}

/**
 * Batches of a dataset (Burn's `DataLoader`, PyTorch's `DataLoader`):
 * ```js
 * const loader = new kiln.data.DataLoader(train, {batchSize: 64, shuffle: true, seed: 42,
 *   batcher: kiln.data.defaultBatcher({dtype: {y: 'int32'}})});
 * for (let epoch = 0; epoch < 10; epoch++) {
 *   for (const {x, y} of loader) { ...; kiln.dispose([x, y]); }    // numWorkers 0
 * }
 * for await (const batch of loader) { ... }                          // any numWorkers
 * ```
 * Each pass over the loader is one epoch. Epoch e visits the items in the order
 * `permutation(n, mixSeed(seed, e))` with `shuffle` (the engine's kiln/data/rng.hpp: the
 * order C++'s `DataLoaderBuilder::shuffle(seed)` gives in its epoch e), else 0..n-1; batch
 * j holds positions j·batchSize .. (j+1)·batchSize - 1. The batches belong to the caller
 * (dispose them); prefetched batches of an iteration that stops early are disposed.
 */
export class DataLoader<I = unknown, B = DefaultBatch> {
  /** @internal */
  declare readonly _e: Engine;
  /**
   * The dataset: as given (arrays and typed arrays are datasets), except that a WASM-side
   * kiln.data Dataset (fromArrays, mnist) becomes a ColumnDataset of its arrays, items
   * `{x: Float32Array(itemSize), y}` (y a number for int32 labels, a Float32Array for targets).
   */
  readonly dataset: DatasetLike<I>;
  readonly batchSize: number;
  readonly shuffle: boolean;
  readonly seed: number;
  readonly dropLast: boolean;
  readonly numWorkers: number;
  readonly prefetchFactor: number;
  /** @internal */
  readonly _batch: (items: I[]) => B;
  /** @internal */
  readonly _batcher: Batcher<I, B>;
  /** @internal where the next iteration starts */
  _next: { epoch: number; batch: number };
  /** @internal the running iteration's position (null: none) */
  _running: { token: object; epoch: number; batch: number } | null = null;

  /**
   * @throws KilnError `Type` for a dataset that does not follow the protocol (naming what
   *   was given) or options of the wrong type; `Value` for batchSize < 1, numWorkers < 0,
   *   a seed outside [0, 2^53 - 1]; `Config` for an unknown option.
   */
  constructor(dataset: DatasetLike<I> | readonly I[] | WasmDataset, options: DataLoaderOptions<I, B> = {}) {
    const e = engineOfNew(new.target, 'DataLoader');
    const op = 'DataLoader';
    // A WASM-side Dataset (fromArrays, mnist) is read once into columns {x, y}.
    this.dataset = (fromWasmDataset(e, dataset) ?? asDataset(dataset, op, 'dataset')) as DatasetLike<I>;
    if (options === null || typeof options !== 'object') throw fail('Type', `${op}: options must be an object, got ${describe(options)}`);
    for (const k of Object.keys(options)) {
      if (!OPTIONS.includes(k)) throw fail('Config', `${op}: unknown option "${k}" (options: ${OPTIONS.join(', ')})`);
    }
    this.batchSize = intOption(options.batchSize, op, 'batchSize', 1, 1);
    this.shuffle = boolOption(options.shuffle, op, 'shuffle');
    this.seed = intOption(options.seed, op, 'seed', 0, 0);
    this.dropLast = boolOption(options.dropLast, op, 'dropLast');
    this.numWorkers = intOption(options.numWorkers, op, 'numWorkers', 0, 0);
    this.prefetchFactor = intOption(options.prefetchFactor, op, 'prefetchFactor', 2, 1);
    this._batcher = (options.batcher ?? makeDefaultBatcher(e)) as Batcher<I, B>;
    this._batch = batchFunction(this._batcher, op) as (items: I[]) => B;
    this._next = { epoch: 0, batch: 0 };
  }

  /**
   * Workers of all loaders running now: 0 once their iterations ended, broke or failed (the
   * iterator's last next()/return() resolves after its workers have exited).
   */
  static liveWorkers(): number {
    return liveWorkers();
  }

  /** Batches per epoch: ceil(n / batchSize), or floor with dropLast (n: the dataset's length now). */
  get length(): number {
    const n = checkedLength(this.dataset, 'DataLoader', 'dataset');
    return this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
  }

  /**
   * The position for a checkpoint: during an iteration, its epoch and the batches handed
   * out so far; otherwise where the next iteration starts (after a complete or stopped
   * epoch e: `{epoch: e + 1, batch: 0}`; after loadState: the loaded position).
   */
  state(): DataLoaderState {
    const p = this._running ?? this._next;
    return { epoch: p.epoch, batch: p.batch, seed: this.seed };
  }

  /**
   * Makes the next iteration resume at `state` (from state(), e.g. of a checkpoint): it
   * yields exactly the batches an iteration at that position would still have yielded.
   * @throws KilnError `State` while an iteration of this loader is running (the position
   *   would be lost when it ends: call loadState before iterating or after the loop);
   *   `Type` for a malformed state; `Value` if its seed is not this loader's or its batch
   *   exceeds the batches per epoch (naming both). Nothing changes on an error.
   */
  loadState(state: DataLoaderState): void {
    const op = 'DataLoader.loadState';
    if (this._running !== null) {
      throw fail('State', `${op}: an iteration of this loader is running (epoch ${this._running.epoch}, ${this._running.batch} batches handed out): ` +
        'call loadState before the loop or after it has ended (break or return() ends it)');
    }
    if (state === null || typeof state !== 'object') throw fail('Type', `${op}: state must be {epoch, batch, seed}, got ${describe(state)}`);
    for (const k of ['epoch', 'batch', 'seed'] as const) {
      const v = (state as unknown as Record<string, unknown>)[k];
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
        throw fail('Type', `${op}: state.${k} must be a non-negative integer, got ${describe(v)}`);
      }
    }
    if (state.seed !== this.seed) {
      throw fail('Value', `${op}: the state is of a loader with seed ${state.seed}, this loader's seed is ${this.seed}`);
    }
    const length = this.length;
    if (state.batch > length) {
      throw fail('Value', `${op}: state.batch is ${state.batch} but an epoch has ${length} batches`);
    }
    this._next = { epoch: state.epoch, batch: state.batch };
  }

  /** The dataset indices of epoch `epoch`, in visiting order. @internal */
  _order(epoch: number, n: number): Uint32Array {
    if (!this.shuffle) {
      const order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      return order;
    }
    return this._e.raw.dataPermutation(n, this.seed, epoch);
  }

  /** Claims the next epoch for a new iteration. @internal */
  _begin(): { token: object; epoch: number; first: number; order: Uint32Array; numBatches: number; n: number } {
    const n = checkedLength(this.dataset, 'DataLoader', 'dataset');
    const numBatches = this.dropLast ? Math.floor(n / this.batchSize) : Math.ceil(n / this.batchSize);
    const { epoch, batch } = this._next;
    const first = Math.min(batch, numBatches);
    const order = this._order(epoch, n);
    const token = {};
    this._running = { token, epoch, batch: first };
    // A stopped iteration ends its epoch: the next one starts the following epoch.
    this._next = { epoch: epoch + 1, batch: 0 };
    return { token, epoch, first, order, numBatches, n };
  }

  /** @internal */
  _advance(token: object, batch: number): void {
    if (this._running?.token === token) this._running.batch = batch;
  }

  /** @internal */
  _end(token: object): void {
    if (this._running?.token === token) this._running = null;
  }

  /** The dataset indices of batch j. @internal */
  _indices(order: Uint32Array, n: number, j: number): number[] {
    const begin = j * this.batchSize;
    const end = Math.min(begin + this.batchSize, n);
    return Array.from(order.subarray(begin, end));
  }

  /** The batcher on batch j's items; what it throws as wrapBatcherError. @internal */
  _runBatcher(items: I[], j: number, epoch: number): B {
    try {
      return this._batch(items);
    } catch (err) {
      throw wrapBatcherError(err, j, epoch);
    }
  }

  /** As _runBatcher, awaiting an async batcher. @internal */
  async _runBatcherAsync(items: I[], j: number, epoch: number): Promise<B> {
    try {
      return await this._batch(items);
    } catch (err) {
      throw wrapBatcherError(err, j, epoch);
    }
  }

  /** The items at `indices`, each get() error a KilnError naming its index. @internal */
  _items(indices: number[]): I[] {
    return indices.map((i) => getWrapped(this.dataset, i, 'DataLoader'));
  }

  /**
   * One epoch, synchronously (numWorkers 0 only).
   * @throws KilnError `State` when numWorkers > 0 (use `for await`); while iterating, the
   *   dataset's and batcher's errors (see the class comment).
   */
  *[Symbol.iterator](): Generator<B, void, undefined> {
    if (this.numWorkers > 0) {
      throw fail('State', `DataLoader: a loader with numWorkers ${this.numWorkers} loads asynchronously: iterate it with for await`);
    }
    const it = this._begin();
    try {
      for (let j = it.first; j < it.numBatches; j++) {
        const items = this._items(this._indices(it.order, it.n, j));
        const batch = this._runBatcher(items, j, it.epoch);
        checkBatch(this._e, batch, 'DataLoader', `batch ${j} of epoch ${it.epoch}`);
        this._advance(it.token, j + 1);
        yield batch;
      }
    } finally {
      this._end(it.token);
    }
  }

  /**
   * One epoch, asynchronously (any numWorkers; an async batcher is awaited). With workers:
   * they start here, each rebuilds the dataset, batch j is loaded by worker j mod k with
   * up to prefetchFactor·k batches in flight, and every worker is terminated when the
   * iteration ends, breaks or fails.
   * @throws KilnError `Type` (before any worker starts) for a dataset a worker cannot
   *   rebuild, naming the part; a worker's item error as a KilnError naming the index
   *   (`DataLoader: the dataset's get(17) threw Error: ... (in worker 1, batch 4)`), its
   *   error as `cause`.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<B, void, undefined> {
    if (this.numWorkers === 0) {
      const it = this._begin();
      try {
        for (let j = it.first; j < it.numBatches; j++) {
          const items = this._items(this._indices(it.order, it.n, j));
          const batch = await this._runBatcherAsync(items, j, it.epoch);
          checkBatch(this._e, batch, 'DataLoader', `batch ${j} of epoch ${it.epoch}`);
          this._advance(it.token, j + 1);
          yield batch;
        }
      } finally {
        this._end(it.token);
      }
      return;
    }
    const desc = describeDataset(this.dataset, 'the dataset');
    const collate = defaultBatcherOptions(this._batcher);
    const it = this._begin();
    const remaining = it.numBatches - it.first;
    if (remaining <= 0) {
      this._end(it.token);
      return;
    }
    const k = Math.min(this.numWorkers, remaining);
    let pool: WorkerPool | null = null;
    try {
      // The workers' half loads on first use (workers.ts; a chunk of its own in the bundled entry).
      const { WorkerPool } = await import('./workers.js');
      pool = await WorkerPool.start(k, desc, collate, it.n);
      const window = this.prefetchFactor * k;
      let started = it.first;
      const startUpTo = (limit: number) => {
        for (; started < Math.min(limit, it.numBatches); started++) {
          (pool as WorkerPool).load(started, this._indices(it.order, it.n, started));
        }
      };
      startUpTo(it.first + window);
      for (let j = it.first; j < it.numBatches; j++) {
        const result = await pool.result(j);
        startUpTo(j + 1 + window);
        let batch: B;
        if (collate !== null) {
          batch = toTensors(this._e, result.batch, 'DataLoader') as B;
        } else {
          batch = await this._runBatcherAsync(result.items as I[], j, it.epoch);
          checkBatch(this._e, batch, 'DataLoader', `batch ${j} of epoch ${it.epoch}`);
        }
        this._advance(it.token, j + 1);
        yield batch;
      }
    } finally {
      // Awaited: when the iteration's return()/next() settles, every worker has exited
      // (liveWorkers() is 0 right after a for await ends, breaks or throws).
      await pool?.close();
      this._end(it.token);
    }
  }
}
