// Internal: the JS plumbing of kiln.Learner's general path (learner_loop.ts): checkpoint
// stores (a directory in Node, written atomically: directory_store.ts; a user store in the
// browser) and early stopping; the Node progress bar is learner_fit.ts's. No engine logic
// lives here.
import { describe, fail } from '../tensor/checks.js';
import { num, int, options, type Options } from './common.js';

// ---------------------------------------------------------------- environment

/** Whether this runs in Node (not a browser or a worker). */
export function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string' && typeof (globalThis as { window?: unknown }).window === 'undefined';
}

// ---------------------------------------------------------------- checkpoint stores

/**
 * Where checkpoints go: `save(name, data)` and `load(name)` (undefined when absent), sync or
 * async. In Node `{directory}` makes one over files (each written to a temporary file and
 * renamed into place, so a killed run never leaves half a file); in the browser pass your own
 * (IndexedDB, memory, a server).
 */
export interface CheckpointStore {
  save(name: string, data: Uint8Array | string): void | Promise<void>;
  load(name: string): Uint8Array | string | undefined | null | Promise<Uint8Array | string | undefined | null>;
}

/**
 * A store over the files of `directory` (Node). Every file-system error is a KilnError `Io`
 * naming op and the path, with the system error as `cause`. The file code is
 * directory_store.ts, imported here (made at once, as the store was; awaited by save and load).
 */
export function directoryStore(directory: string, op = 'Learner.fit: checkpointer'): CheckpointStore {
  const store = import('./directory_store.js').then((m) => m.directoryStore(directory, op));
  return {
    async save(name, data) {
      return (await store).save(name, data);
    },
    async load(name) {
      return (await store).load(name);
    },
  };
}

/** The checkpointer option: {directory} (Node) or {store}; `every` epochs (default 1). */
export interface CheckpointerOptions {
  directory?: string;
  store?: CheckpointStore;
  every?: number;
}

export function checkpointerOf(v: unknown, op: string): { store: CheckpointStore; every: number } | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') v = { directory: v };
  const c = options(v, `${op}: checkpointer`, ['directory', 'store', 'every']);
  const every = int(c.every, op, 'checkpointer.every', 1, 1);
  if ((c.directory === undefined) === (c.store === undefined)) {
    throw fail('Config', `${op}: checkpointer needs exactly one of directory (Node) or store ({save, load}), got ${describe(v)}`);
  }
  if (c.directory !== undefined) {
    if (typeof c.directory !== 'string' || c.directory === '') throw fail('Type', `${op}: checkpointer.directory must be a non-empty string, got ${describe(c.directory)}`);
    if (!isNode()) throw fail('Config', `${op}: checkpointer.directory needs Node; in the browser pass checkpointer.store ({save, load})`);
    return { store: directoryStore(c.directory), every };
  }
  const s = c.store as Partial<CheckpointStore> | null;
  if (s === null || typeof s !== 'object' || typeof s.save !== 'function' || typeof s.load !== 'function') {
    throw fail('Type', `${op}: checkpointer.store must have save(name, data) and load(name), got ${describe(c.store)}`);
  }
  return { store: s as CheckpointStore, every };
}

// ---------------------------------------------------------------- early stopping

/** earlyStopping: stop when `monitor` has not improved by minDelta for `patience` epochs. */
export interface EarlyStoppingOptions {
  /** "valid.loss" (default with a validLoader; "train.loss" without), "train.accuracy", ... */
  monitor?: string;
  /** Epochs without improvement tolerated (default 0: stop at the first). */
  patience?: number;
  /** The least change that counts as an improvement (default 0). */
  minDelta?: number;
  /** 'min' | 'max' (default: from the metric's higherIsBetter, 'min' for loss). */
  mode?: 'min' | 'max';
}

export class EarlyStopping {
  monitor: string;
  readonly patience: number;
  readonly minDelta: number;
  mode: 'min' | 'max' | null;
  best = NaN;
  bad = 0;

  constructor(v: unknown, op: string) {
    const c = options(v, `${op}: earlyStopping`, ['monitor', 'patience', 'minDelta', 'mode']);
    if (c.monitor !== undefined && (typeof c.monitor !== 'string' || !/^(train|valid)\.[^.]+$/.test(c.monitor))) {
      throw fail('Config', `${op}: earlyStopping.monitor must be "train.<metric>" or "valid.<metric>", got ${describe(c.monitor)}`);
    }
    this.monitor = c.monitor ?? '';
    this.patience = int(c.patience, op, 'earlyStopping.patience', 0, 0);
    this.minDelta = num(c.minDelta, op, 'earlyStopping.minDelta', 0);
    if (!(this.minDelta >= 0)) throw fail('Value', `${op}: earlyStopping.minDelta must be >= 0, got ${this.minDelta}`);
    if (c.mode !== undefined && c.mode !== 'min' && c.mode !== 'max') throw fail('Config', `${op}: earlyStopping.mode must be "min" or "max", got ${describe(c.mode)}`);
    this.mode = c.mode ?? null;
  }

  /** Feeds the epoch's value; true when training should stop. */
  update(value: number): boolean {
    const better = Number.isNaN(this.best)
      ? !Number.isNaN(value)
      : this.mode === 'max' ? value > this.best + this.minDelta : value < this.best - this.minDelta;
    if (better) {
      this.best = value;
      this.bad = 0;
      return false;
    }
    this.bad++;
    return this.bad > this.patience;
  }

  state(): Options {
    return { best: Number.isNaN(this.best) ? null : this.best, bad: this.bad };
  }

  loadState(s: Options): void {
    this.best = s.best === null || s.best === undefined ? NaN : s.best;
    this.bad = s.bad ?? 0;
  }
}
