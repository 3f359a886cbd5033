// Internal: the JS plumbing of kiln.Learner's general path (learner_loop.ts): checkpoint
// stores (a directory in Node, written atomically; a user store in the browser), the Node
// progress bar (cli-progress, the npm package; a one-line fallback when it cannot be
// loaded) and early stopping. No engine logic lives here.
import { KilnError } from '../errors.js';
import { describe, fail } from '../tensor/checks.js';
import { num, int, options, type Options } from './common.js';

// ---------------------------------------------------------------- environment

/** Whether this runs in Node (not a browser or a worker). */
export function isNode(): boolean {
  const p = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof p?.versions?.node === 'string' && typeof (globalThis as { window?: unknown }).window === 'undefined';
}

/** A dynamic import bundlers leave alone (Node-only modules). */
async function nodeImport<T>(specifier: string): Promise<T> {
  return (await import(/* @vite-ignore */ specifier)) as T;
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

interface NodeStats {
  isDirectory(): boolean;
}

interface NodeFs {
  mkdir(path: string): Promise<unknown>;
  stat(path: string): Promise<NodeStats>;
  writeFile(path: string, data: Uint8Array | string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readFile(path: string): Promise<Uint8Array>;
}

interface NodePath {
  resolve(...paths: string[]): string;
  dirname(path: string): string;
}

/** The KilnError `Io` of a failed file operation: op, what failed (naming the path), the system error as cause. */
function ioError(op: string, what: string, err: unknown): KilnError {
  const e = new KilnError('Io', `${op}: ${what}: ${(err as Error)?.message ?? String(err)}`);
  (e as { cause?: unknown }).cause = err;
  return e;
}

/** The code of a Node system error ('ENOENT', ...), or undefined. */
function codeOf(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/**
 * Creates `dir` and its missing ancestors one level at a time (not fs.mkdir's recursive
 * mode, which never settles on /proc paths): each existing ancestor must be a directory;
 * paths under /proc and /sys (kernel file systems, no checkpoints there) are refused.
 * @throws KilnError `Io` naming the path that is not a directory or could not be created.
 */
async function makeDirectories(fs: NodeFs, path: NodePath, dir: string, op: string): Promise<void> {
  const abs = path.resolve(dir);
  if (/^\/(proc|sys)(\/|$)/.test(abs)) {
    throw fail('Io', `${op}: cannot create the directory ${JSON.stringify(abs)}: it is under /${abs.split('/')[1]}, a kernel file system (choose a directory of an ordinary file system)`);
  }
  const chain: string[] = [];
  for (let d = abs; ; d = path.dirname(d)) {
    chain.unshift(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of chain) {
    let stats: NodeStats | null = null;
    try {
      stats = await fs.stat(d);
    } catch (err) {
      if (codeOf(err) !== 'ENOENT') throw ioError(op, `cannot create the directory ${JSON.stringify(abs)} (${JSON.stringify(d)} cannot be read)`, err);
    }
    if (stats !== null) {
      if (!stats.isDirectory()) throw fail('Io', `${op}: cannot create the directory ${JSON.stringify(abs)}: ${JSON.stringify(d)} exists and is not a directory`);
      continue;
    }
    try {
      await fs.mkdir(d);
    } catch (err) {
      // Made meanwhile by someone else: fine if it is a directory.
      const made = codeOf(err) === 'EEXIST' ? await fs.stat(d).then((st) => st.isDirectory(), () => false) : false;
      if (!made) throw ioError(op, `cannot create the directory ${JSON.stringify(d)}`, err);
    }
  }
}

/**
 * A store over the files of `directory` (Node). Every file-system error is a KilnError `Io`
 * naming op and the path, with the system error as `cause`.
 */
export function directoryStore(directory: string, op = 'Learner.fit: checkpointer'): CheckpointStore {
  const modules = Promise.all([nodeImport<NodeFs>('node:fs/promises'), nodeImport<NodePath>('node:path')]);
  const path = (name: string) => `${directory.replace(/\/+$/, '')}/${name}`;
  return {
    async save(name, data) {
      const [f, p] = await modules;
      const target = path(name);
      await makeDirectories(f, p, target.slice(0, target.lastIndexOf('/')), op);
      const tmp = `${target}.tmp-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
      try {
        await f.writeFile(tmp, data);
      } catch (err) {
        await f.unlink(tmp).catch(() => {});
        throw ioError(op, `cannot write ${JSON.stringify(target)}`, err);
      }
      try {
        await f.rename(tmp, target);
      } catch (err) {
        await f.unlink(tmp).catch(() => {});
        throw ioError(op, `cannot write ${JSON.stringify(target)} (renaming the temporary file into place)`, err);
      }
    },
    async load(name) {
      const [f] = await modules;
      const file = path(name);
      try {
        const bytes = await f.readFile(file);
        return name.endsWith('.json') ? new TextDecoder().decode(bytes) : new Uint8Array(bytes);
      } catch (err) {
        if (codeOf(err) === 'ENOENT') return undefined;
        throw ioError(op, `cannot read ${JSON.stringify(file)}`, err);
      }
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
