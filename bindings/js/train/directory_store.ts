// Internal: the checkpoint store over the files of a directory (Node), kiln.Learner's
// `checkpointer: {directory}` (learner_support.ts's directoryStore() imports this module when
// it makes such a store, so the browser bundle ships it as a chunk of its own that no page
// fetches: browsers refuse the option). Files are written to a temporary file and renamed
// into place, so a killed run never leaves half a file.
import { KilnError } from '../errors.js';
import { fail } from '../tensor/checks.js';
import type { CheckpointStore } from './learner_support.js';

/** A dynamic import bundlers leave alone (Node-only modules). */
async function nodeImport<T>(specifier: string): Promise<T> {
  return (await import(/* @vite-ignore */ specifier)) as T;
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
