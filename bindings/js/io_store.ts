// Internal: the file and IndexedDB half of kiln.io (io.ts), imported on the first call that
// needs it (kiln.io.save / load / saveToIndexedDB / loadFromIndexedDB /
// loadBytesFromIndexedDB / listIndexedDB / deleteFromIndexedDB and the methods of an
// indexedDBStore), so a page that never stores a model does not fetch it (the bundled browser
// entry ships it as a chunk of its own). io.ts checks the arguments and takes the model's bytes
// before the import, exactly when it did before the split; what is here does the I/O.
import { KilnError } from './errors.js';
import { describe, fail } from './tensor/checks.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';

function ioError(op: string, what: string, err: unknown): KilnError {
  const e = new KilnError('Io', `${op}: ${what}: ${(err as Error)?.message ?? String(err)}`);
  (e as { cause?: unknown }).cause = err;
  return e;
}

// ---------------------------------------------------------------- Node files

interface NodeFs {
  readFile(path: string): Promise<Uint8Array>;
  open(path: string, flags: string): Promise<{ write(b: Uint8Array): Promise<unknown>; sync(): Promise<void>; close(): Promise<void> }>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
}

async function nodeFs(op: string): Promise<NodeFs> {
  const g = globalThis as { process?: { versions?: { node?: unknown } } };
  if (typeof g.process?.versions?.node !== 'string') {
    throw fail('State', `${op}: files need Node (in browsers use kiln.io.saveToIndexedDB or kiln.io.download)`);
  }
  const specifier = 'node:fs/promises';
  return (await import(/* @vite-ignore */ specifier)) as NodeFs;
}

let tempCounter = 0;

/**
 * kiln.io.save after its checks: writes `bytes` to path `p` atomically (a temporary file
 * beside it, flushed, then renamed over `p`; on any error the temporary file is removed).
 * @throws KilnError `State` outside Node, `Io` naming the path (the system error as cause).
 */
export async function saveFile(op: string, p: string, bytes: Uint8Array): Promise<void> {
  const fs = await nodeFs(op);
  const g = globalThis as { process?: { pid?: number } };
  const temp = `${p}.tmp-${g.process?.pid ?? 0}-${++tempCounter}`;
  let created = false;
  try {
    const handle = await fs.open(temp, 'wx');
    created = true;
    try {
      await handle.write(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, p);
    created = false;
  } catch (err) {
    if (created) await fs.unlink(temp).catch(() => {});
    throw ioError(op, `cannot write ${JSON.stringify(p)}`, err);
  }
}

/**
 * kiln.io.load after its checks: the bytes of the file at path `p`.
 * @throws KilnError `State` outside Node, `Io` naming the path (the system error as cause).
 */
export async function loadFile(op: string, p: string): Promise<Uint8Array> {
  const fs = await nodeFs(op);
  try {
    const b = await fs.readFile(p);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (err) {
    throw ioError(op, `cannot read ${JSON.stringify(p)}`, err);
  }
}

// ---------------------------------------------------------------- IndexedDB

const DB_NAME = 'kiln-dl';
const STORE = 'safetensors';

function request<T>(r: IDBRequest<T>, op: string, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(ioError(op, what, r.error));
  });
}

async function openDb(op: string): Promise<IDBDatabase> {
  const idb = (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  if (idb === undefined || idb === null) throw fail('State', `${op}: IndexedDB is not available here (in Node use kiln.io.save)`);
  const r = idb.open(DB_NAME, 1);
  r.onupgradeneeded = () => {
    if (!r.result.objectStoreNames.contains(STORE)) r.result.createObjectStore(STORE);
  };
  return request(r, op, `cannot open the IndexedDB database "${DB_NAME}"`);
}

/** Runs fn on the store in one transaction and resolves when the transaction completes. */
export async function withStore<T>(op: string, mode: IDBTransactionMode, fn: (store: IDBObjectStore) => IDBRequest<T>, what: string): Promise<T> {
  const db = await openDb(op);
  try {
    return await new Promise<T>((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const r = fn(tx.objectStore(STORE));
      let result: T;
      r.onsuccess = () => (result = r.result);
      tx.oncomplete = () => resolve(result);
      tx.onerror = () => reject(ioError(op, what, tx.error ?? r.error));
      tx.onabort = () => reject(ioError(op, what, tx.error ?? new Error('transaction aborted')));
    });
  } finally {
    db.close();
  }
}

/** The bytes stored under name `n` (checked by io.ts). @throws KilnError `Io`, `Format`, `State`. */
export async function loadBytesIdb(n: string, op: string): Promise<Uint8Array> {
  const v = await withStore(op, 'readonly', (s) => s.get(n) as IDBRequest<unknown>, `cannot read "${n}"`);
  if (v === undefined) throw fail('Io', `${op}: nothing is stored under "${n}" in IndexedDB (database "${DB_NAME}")`);
  if (v instanceof Uint8Array) return v;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  throw fail('Format', `${op}: the entry "${n}" is ${describe(v)}, not SafeTensors bytes`);
}

/**
 * Host copies of the values of `pairs` (name -> Tensor), read with `await data()` one after
 * the other (the engine is not re-entrant), in order: tensors made from host data, which the
 * webgpu backend's synchronous writers can read. Checks every name and tensor first (`Type`,
 * `Disposed` naming `op`). On a failure the copies made so far are disposed.
 */
export async function hostCopies(e: Engine, pairs: [unknown, unknown][], op: string): Promise<Map<string, Tensor>> {
  for (const [k, t] of pairs) {
    if (typeof k !== 'string') throw fail('Type', `${op}: names must be strings, got ${describe(k)}`);
    e.unwrap(t, op, JSON.stringify(k));
  }
  const host = new Map<string, Tensor>();
  const T = e.Tensor as unknown as { fromData(d: unknown, o: { shape: readonly number[]; dtype: string }): Tensor };
  try {
    for (const [k, t] of pairs) {
      const x = t as Tensor;
      host.set(k as string, T.fromData(await x.data(), { shape: x.shape, dtype: x.dtype }));
    }
  } catch (err) {
    for (const h of host.values()) h.dispose();
    throw err;
  }
  return host;
}

/**
 * kiln.io.writeNamedMpkAsync on the webgpu backend: the tensors at the call (a model's
 * stateDict() now; an object's or a Map's entries), their host copies (hostCopies), then
 * `write` (kiln.io.writeNamedMpk) of those copies in the same order. Every tensor made here
 * is disposed.
 */
export async function writeNamedMpkAsync<O>(write: (src: Map<string, Tensor>, options?: O) => Uint8Array,
  e: Engine, source: object, options: O | undefined): Promise<Uint8Array> {
  const owned = !(source instanceof Map) && typeof (source as { stateDict?: unknown }).stateDict === 'function'
    ? (source as { stateDict(): Record<string, Tensor> }).stateDict() : null;
  const pairs: [unknown, unknown][] = owned !== null ? Object.entries(owned)
    : source instanceof Map ? [...source.entries()] : Object.entries(source);
  let host: Map<string, Tensor> | null = null;
  try {
    host = await hostCopies(e, pairs, 'writeNamedMpkAsync');
    return write(host, options);
  } finally {
    if (host !== null) for (const t of host.values()) t.dispose();
    if (owned !== null) for (const t of Object.values(owned)) t.dispose();
  }
}
