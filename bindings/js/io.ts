// kiln.io: where JS users keep models. SafeTensors bytes read by the engine's reader
// (kiln/record/safetensors.hpp) into named tensors; Burn's named MessagePack records read
// and written by the engine (kiln/record/named_mpk.hpp); files in Node written atomically;
// IndexedDB in browsers and workers; a browser download. Models are duck-typed: anything
// with `saveSafetensors(options?)` -> Uint8Array and `loadSafetensors(bytes)` (Sequential,
// kiln.Module) works, and every function also takes the raw bytes.
// The file and IndexedDB code is io_store.ts, imported on the first call that needs it.
import { checkOptions, describe, fail } from './tensor/checks.js';
import type { Engine } from './tensor/engine.js';
import type { Tensor } from './tensor/tensor.js';
import { loadPytorch, type LoadPytorchOptions } from './io_pytorch.js';

/** What kiln.io saves: a model with saveSafetensors(), or the bytes of a SafeTensors file. */
export interface Saveable {
  saveSafetensors(options?: unknown): Uint8Array;
}
/** What kiln.io loads into: a model with loadSafetensors(bytes). */
export interface Loadable<R = unknown> {
  loadSafetensors(bytes: Uint8Array): R;
}

/** The element type of a stored tensor, as the file names it. */
export type SafetensorsDType = 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'U8' | 'BOOL';

/** A stored tensor's values as the engine decoded them (I64 exactly, as BigInt64Array). */
export interface SafetensorsArray {
  dtype: SafetensorsDType;
  shape: number[];
  /** F32/F16/BF16: Float32Array; I32/U8: Int32Array; BOOL: Uint8Array of 0/1; I64: BigInt64Array. */
  data: Float32Array | Int32Array | Uint8Array | BigInt64Array;
}

/** Options of kiln.io.save / saveToIndexedDB / download, passed to the model's saveSafetensors. */
export interface SaveOptions {
  /** The stored float dtype, if the model supports it (`{dtype: 'float16'}`; see the model's saveSafetensors). */
  dtype?: string;
  [option: string]: unknown;
}

/** kiln.io. */
export interface Io {
  /**
   * The tensors of a SafeTensors file's bytes, by name, decoded by the engine's reader:
   * F32, F16, BF16 -> float32 (exact); I32, U8 -> int32; I64 -> int32 (range-checked); BOOL ->
   * bool. Rank 0 entries are rank-0 tensors; data need not be aligned. The caller owns
   * (disposes) the tensors. Nothing is returned unless the whole file reads.
   * @throws KilnError `Format` naming the problem (`read_safetensors: bytes: ...`) for a
   *   malformed file (header, offsets, sizes, dtypes: kiln/record/safetensors.hpp);
   *   `Value` naming the tensor for an I64 value outside int32 (use readSafetensorsArrays);
   *   `Type` unless bytes is a Uint8Array or ArrayBuffer.
   */
  readSafetensors(bytes: Uint8Array | ArrayBuffer): Record<string, Tensor>;
  /**
   * The same file as typed arrays (no tensors): every dtype's values as the engine decodes
   * them, I64 exactly as a BigInt64Array, and the `__metadata__` strings.
   * @throws as readSafetensors (but never for an I64 range).
   */
  readSafetensorsArrays(bytes: Uint8Array | ArrayBuffer): { tensors: Record<string, SafetensorsArray>; metadata: Record<string, string> };
  /**
   * The tensors of a PyTorch checkpoint (torch.save's zip format) by state_dict key, read
   * by the engine's restricted reader; load them with `model.loadStateDict(dict)`. See
   * io_pytorch.ts for dtypes, options ({topLevelKey}) and errors (`Format`, `Limit`,
   * `Value`, `Type`). Synchronous; the caller owns the tensors.
   */
  loadPytorch(bytes: Uint8Array | ArrayBuffer, options?: LoadPytorchOptions): Record<string, Tensor>;
  /**
   * The tensors of a Burn named MessagePack record (a `.mpk` file of Burn's
   * NamedMpkFileRecorder, DefaultRecorder or CompactRecorder; or writeNamedMpk's bytes), by
   * field path ("fc1.weight", "layers.0.bias": the record's field names and Vec indices
   * joined with dots), read by the engine's reader (kiln/record/named_mpk.hpp): Burn's
   * float dtypes (F32, F16, BF16, F64, Flex32) -> float32; its integers -> int32 (64-bit
   * ones range-checked); Bool -> bool. Burn's names are kept (a norm's `gamma`/`beta`, a
   * Linear's weight as [d_input, d_output]): load them with module.loadStateDict. The caller
   * owns (disposes) the tensors. Nothing is returned unless the whole record reads.
   * @throws KilnError `Format` naming the problem and field path (`read_named_mpk: bytes:
   *   "fc1.weight": holds 20 bytes, but shape [2, 3] of F32 needs 24`) for malformed or
   *   truncated bytes; `Limit` naming the NamedMpkLimits field for input nested too deep
   *   or too large; `Value` naming the tensor for a 64-bit integer outside int32; `Type`
   *   unless bytes is a Uint8Array or ArrayBuffer.
   */
  readNamedMpk(bytes: Uint8Array | ArrayBuffer): Record<string, Tensor>;
  /**
   * Burn's named MessagePack bytes of named tensors (a plain object or a Map from field path
   * to Tensor) or of a model (its stateDict(): a kiln.Module or Sequential), in Burn v0.21's
   * NamedMpkFileRecorder layout, so Burn loads them with `NamedMpkFileRecorder` into a
   * module with the same field paths. `precision` 'full' (default: float32 as f32, int32 as
   * i32, Burn's FullPrecisionSettings) or 'half' (f16 rounded to nearest even, i16: Burn's
   * HalfPrecisionSettings). The same tensors give the same bytes.
   * @throws KilnError `Value` for a name that is empty, has an empty component ("a..b") or
   *   is both a tensor and a module ("fc" and "fc.weight"), for an int32 value outside i16
   *   at half precision, or an unknown precision; `Type` for a value that is not a Tensor,
   *   an unknown option, or a source that is none of the above; `Disposed`.
   */
  writeNamedMpk(source: Record<string, Tensor> | Map<string, Tensor> | { stateDict(): Record<string, Tensor> },
    options?: NamedMpkOptions): Uint8Array;
  /**
   * writeNamedMpk on every backend: the same bytes, resolved once each tensor has been read
   * (`await tensor.data()`: on the webgpu backend tensors live on the GPU, and writeNamedMpk,
   * which reads them at once, throws `State` naming this function for a computed one). The
   * tensors (a model's stateDict()) are taken at the call.
   * @throws (rejects with) as writeNamedMpk; `Device` or `OutOfMemory` when a GPU read fails.
   */
  writeNamedMpkAsync(source: Record<string, Tensor> | Map<string, Tensor> | { stateDict(): Record<string, Tensor> },
    options?: NamedMpkOptions): Promise<Uint8Array>;
  /**
   * Node: writes model.saveSafetensors(options) (kiln's modules: saveSafetensorsAsync, which
   * also saves a model on the webgpu backend) or bytes to `path` atomically: a temporary
   * file beside it, flushed, then renamed over `path`; on any error the temporary file is
   * removed and an existing file at `path` is untouched.
   * @throws KilnError `Io` naming the path (with the system error as cause); `Type` for a
   *   model without saveSafetensors; `State` outside Node.
   */
  save(path: string, model: Saveable | Uint8Array, options?: SaveOptions): Promise<void>;
  /**
   * Node: reads `path` and loads it into `model` (model.loadSafetensors(bytes), whose
   * result is returned), or returns the bytes when no model is given.
   * @throws KilnError `Io` naming the path; what model.loadSafetensors throws.
   */
  load<R>(path: string, model: Loadable<R>): Promise<R>;
  load(path: string): Promise<Uint8Array>;
  /**
   * Browsers and workers: stores the model's SafeTensors bytes (or bytes) in IndexedDB
   * (database "kiln-dl", store "safetensors") under `name`, replacing any previous entry in
   * one transaction.
   * @throws KilnError `State` without IndexedDB; `Io` if the database fails; `Type`.
   */
  saveToIndexedDB(name: string, model: Saveable | Uint8Array, options?: SaveOptions): Promise<void>;
  /**
   * Loads the bytes stored under `name` into `model` (its loadSafetensors result is returned).
   * @throws KilnError `Io` if nothing is stored under name (naming it); `State` without IndexedDB.
   */
  loadFromIndexedDB<R>(name: string, model: Loadable<R>): Promise<R>;
  /** The bytes stored under `name`. @throws KilnError `Io` if nothing is stored under it. */
  loadBytesFromIndexedDB(name: string): Promise<Uint8Array>;
  /** The names stored in IndexedDB, sorted. */
  listIndexedDB(): Promise<string[]>;
  /** Removes `name` from IndexedDB (no error if absent). */
  deleteFromIndexedDB(name: string): Promise<void>;
  /**
   * A checkpoint store in IndexedDB for the Learner (`checkpointer: {store:
   * kiln.io.indexedDBStore('mnist/')}`), the browser's counterpart of `{directory}` in Node:
   * each file the checkpointer writes (SafeTensors bytes, JSON strings) is one entry of the
   * database "kiln-dl" (store "safetensors") under `prefix + name`, written in one transaction
   * (a reload never sees half an entry), and read back as stored (a Uint8Array or a string;
   * `undefined` when absent). `list()` gives the names under the prefix (without it), sorted;
   * `clear()` removes them all. Entries holding bytes also load with loadFromIndexedDB.
   * TF.js's counterpart: `model.save('indexeddb://name')`.
   * @throws KilnError `Type` unless prefix is a string (it may be empty); the methods reject
   *   with `State` without IndexedDB and `Io` when the database fails.
   */
  indexedDBStore(prefix: string): IndexedDBStore;
  /**
   * Browsers: offers the model's SafeTensors bytes (or bytes) as a file download named
   * `fileName` (an `<a download>` click on a Blob URL).
   * @throws KilnError `State` outside a page with a document (in Node use kiln.io.save).
   */
  download(fileName: string, model: Saveable | Uint8Array, options?: SaveOptions): void;
}

/** Options of kiln.io.writeNamedMpk. */
export interface NamedMpkOptions {
  /** 'full' (f32 / i32, default) or 'half' (f16 / i16), Burn's precision settings. */
  precision?: 'full' | 'half';
}

/** kiln.io.indexedDBStore(prefix): a Learner checkpoint store (save/load) in IndexedDB. */
export interface IndexedDBStore {
  /** The prefix of every entry's key. */
  readonly prefix: string;
  /** Stores `data` under prefix + name, replacing any previous entry. */
  save(name: string, data: Uint8Array | string): Promise<void>;
  /** The data stored under prefix + name, or undefined. */
  load(name: string): Promise<Uint8Array | string | undefined>;
  /** The names stored under the prefix (the prefix removed), sorted. */
  list(): Promise<string[]>;
  /** Removes every entry under the prefix (in one transaction). */
  clear(): Promise<void>;
}

function checkName(name: unknown, op: string, what: string): string {
  if (typeof name !== 'string' || name.length === 0) throw fail('Type', `${op}: ${what} must be a non-empty string, got ${describe(name)}`);
  return name;
}

function asBytes(bytes: unknown, op: string): Uint8Array {
  if (bytes instanceof Uint8Array) return bytes;
  if (bytes instanceof ArrayBuffer) return new Uint8Array(bytes);
  throw fail('Type', `${op}: bytes must be a Uint8Array or an ArrayBuffer, got ${describe(bytes)}`);
}

/** The SafeTensors bytes of a model (saveSafetensors(options)) or the bytes themselves. */
function bytesOf(model: unknown, options: SaveOptions | undefined, op: string): Uint8Array {
  if (model instanceof Uint8Array) {
    if (options !== undefined) throw fail('Type', `${op}: options apply to a model, not to bytes`);
    return model;
  }
  const m = model as Partial<Saveable> | null;
  if (m === null || typeof m !== 'object' || typeof m.saveSafetensors !== 'function') {
    throw fail('Type', `${op}: model must have saveSafetensors() (a Sequential or kiln.Module) or be a Uint8Array, got ${describe(model)}`);
  }
  const bytes = options === undefined ? m.saveSafetensors() : m.saveSafetensors(options);
  if (!(bytes instanceof Uint8Array)) throw fail('Type', `${op}: model.saveSafetensors() returned ${describe(bytes)}, expected a Uint8Array`);
  return bytes;
}

/**
 * bytesOf for the async savers: a model with saveSafetensorsAsync (kiln's modules) is saved
 * through it, so that a model on the webgpu backend, whose tensors are read asynchronously,
 * can be saved; it takes its state at the call, before any await (on the cpu backend it is
 * saveSafetensors).
 */
async function bytesOfAsync(model: unknown, options: SaveOptions | undefined, op: string): Promise<Uint8Array> {
  const m = model as { saveSafetensorsAsync?: (o?: SaveOptions) => Promise<Uint8Array> } | null;
  if (m !== null && typeof m === 'object' && !(model instanceof Uint8Array) && typeof m.saveSafetensorsAsync === 'function') {
    const bytes = await (options === undefined ? m.saveSafetensorsAsync() : m.saveSafetensorsAsync(options));
    if (!(bytes instanceof Uint8Array)) throw fail('Type', `${op}: model.saveSafetensorsAsync() resolved to ${describe(bytes)}, expected a Uint8Array`);
    return bytes;
  }
  return bytesOf(model, options, op);
}

function checkLoadable(model: unknown, op: string): Loadable {
  const m = model as Partial<Loadable> | null;
  if (m === null || typeof m !== 'object' || typeof m.loadSafetensors !== 'function') {
    throw fail('Type', `${op}: model must have loadSafetensors(bytes) (a Sequential or kiln.Module), got ${describe(model)}`);
  }
  return m as Loadable;
}

/** The file and IndexedDB half of kiln.io (io_store.ts), imported on first use. */
function ioStore(): Promise<typeof import('./io_store.js')> {
  return import('./io_store.js');
}

// The async functions check their arguments and take the model's bytes before that import,
// as they did before the split (the bytes are the model's at the call: saveSafetensorsAsync
// takes the model's state before it awaits anything).
async function saveFile(path: unknown, model: unknown, options: SaveOptions | undefined): Promise<void> {
  const op = 'io.save';
  const p = checkName(path, op, 'path');
  const bytes = await bytesOfAsync(model, options, op);
  await (await ioStore()).saveFile(op, p, bytes);
}

async function loadFile(path: unknown, model?: unknown): Promise<unknown> {
  const op = 'io.load';
  const p = checkName(path, op, 'path');
  const m = model === undefined ? null : checkLoadable(model, op);
  const bytes = await (await ioStore()).loadFile(op, p);
  return m === null ? bytes : m.loadSafetensors(bytes);
}

async function loadBytesIdb(name: unknown, op = 'io.loadBytesFromIndexedDB'): Promise<Uint8Array> {
  const n = checkName(name, op, 'name');
  return (await ioStore()).loadBytesIdb(n, op);
}

function indexedDBStore(prefix: unknown): IndexedDBStore {
  const op = 'io.indexedDBStore';
  if (typeof prefix !== 'string') throw fail('Type', `${op}: prefix must be a string, got ${describe(prefix)}`);
  const names = async (what: string) => {
    const keys = await (await ioStore()).withStore(`${op}: ${what}`, 'readonly', (s) => s.getAllKeys(), 'cannot list the entries');
    return keys.map(String).filter((k) => k.startsWith(prefix));
  };
  return Object.freeze({
    prefix,
    async save(name: string, data: Uint8Array | string) {
      const n = prefix + checkName(name, `${op}: save`, 'name');
      if (!(data instanceof Uint8Array) && typeof data !== 'string') {
        throw fail('Type', `${op}: save: data must be a Uint8Array or a string, got ${describe(data)}`);
      }
      const value = typeof data === 'string' ? data : data.slice();
      await (await ioStore()).withStore(`${op}: save`, 'readwrite', (s) => s.put(value, n), `cannot store "${n}"`);
    },
    async load(name: string) {
      const n = prefix + checkName(name, `${op}: load`, 'name');
      const v = await (await ioStore()).withStore(`${op}: load`, 'readonly', (s) => s.get(n) as IDBRequest<unknown>, `cannot read "${n}"`);
      if (v === undefined || typeof v === 'string' || v instanceof Uint8Array) return v;
      if (v instanceof ArrayBuffer) return new Uint8Array(v);
      throw fail('Format', `${op}: load: the entry "${n}" is ${describe(v)}, not bytes or a string`);
    },
    async list() {
      return (await names('list')).map((k) => k.slice(prefix.length)).sort();
    },
    async clear() {
      const keys = await names('clear');
      if (keys.length === 0) return;
      await (await ioStore()).withStore(`${op}: clear`, 'readwrite', (s) => {
        let last: IDBRequest<undefined> | null = null;
        for (const k of keys) last = s.delete(k);
        return last as IDBRequest<undefined>;
      }, `cannot delete the entries under "${prefix}"`);
    },
  });
}

// ---------------------------------------------------------------- install

/** Installs kiln.io onto `kiln`. */
export function installIo(kiln: Record<string, unknown>, e: Engine): void {
  function decode(bytes: unknown, int64Bytes: boolean, op: string) {
    return e.raw.ioReadSafetensors(asBytes(bytes, op), int64Bytes);
  }
  const define = (out: object, key: string, value: unknown) =>
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });

  const io: Io = {
    readSafetensors(bytes) {
      const { entries } = decode(bytes, false, 'readSafetensors');
      const tensors = e.wrapAll(entries.map((x) => x.tensor as NonNullable<typeof x.tensor>));
      const out: Record<string, Tensor> = {};
      entries.forEach((x, i) => define(out, x.name, tensors[i]));
      return out;
    },
    readSafetensorsArrays(bytes) {
      const { entries, metadata } = decode(bytes, true, 'readSafetensorsArrays');
      const tensors: Record<string, SafetensorsArray> = {};
      try {
        for (const x of entries) {
          let data: SafetensorsArray['data'];
          if (x.tensor !== undefined) {
            data = e.raw.tDataSync(x.tensor);
            x.tensor.delete();
            x.tensor = undefined;
          } else {
            const b = x.bytes as Uint8Array;
            data = new BigInt64Array(b.slice().buffer);
          }
          define(tensors, x.name, { dtype: x.dtype as SafetensorsDType, shape: x.shape, data });
        }
      } finally {
        for (const x of entries) if (x.tensor !== undefined && !x.tensor.isDeleted()) x.tensor.delete();
      }
      const meta: Record<string, string> = {};
      for (const [k, v] of Object.entries(metadata)) define(meta, k, v);
      return { tensors, metadata: meta };
    },
    loadPytorch: (bytes, options) => loadPytorch(e, bytes, options),
    readNamedMpk(bytes) {
      const { entries } = e.raw.ioReadNamedMpk(asBytes(bytes, 'readNamedMpk'));
      const tensors = e.wrapAll(entries.map((x) => x.tensor));
      const out: Record<string, Tensor> = {};
      entries.forEach((x, i) => define(out, x.name, tensors[i]));
      return out;
    },
    writeNamedMpk(source, options) {
      const op = 'writeNamedMpk';
      const opts = checkOptions<NamedMpkOptions>(options, op);
      for (const key of Object.keys(opts)) {
        if (key !== 'precision') throw fail('Type', `${op}: unknown option "${key}" (options: precision)`);
      }
      const precision = opts.precision === undefined ? 'full' : opts.precision;
      if (precision !== 'full' && precision !== 'half') {
        throw fail('Value', `${op}: precision must be 'full' or 'half', got ${describe(precision)}`);
      }
      let pairs: [string, unknown][];
      let owned: Record<string, Tensor> | null = null;
      if (source instanceof Map) {
        pairs = [...source.entries()];
      } else if (source !== null && typeof source === 'object' && typeof (source as { stateDict?: unknown }).stateDict === 'function') {
        owned = (source as { stateDict(): Record<string, Tensor> }).stateDict();
        pairs = Object.entries(owned);
      } else if (source !== null && typeof source === 'object' && !Array.isArray(source) && !(source instanceof Uint8Array)) {
        pairs = Object.entries(source);
      } else {
        throw fail('Type', `${op}: source must be an object or Map of name -> Tensor, or a model with stateDict(), got ${describe(source)}`);
      }
      try {
        const raw = pairs.map(([k, t]): [string, ReturnType<typeof e.unwrap>] => {
          if (typeof k !== 'string') throw fail('Type', `${op}: names must be strings, got ${describe(k)}`);
          return [k, e.unwrap(t, op, JSON.stringify(k))];
        });
        try {
          return e.raw.ioWriteNamedMpk(raw, precision);
        } catch (err) {
          // The webgpu backend: a computed tensor has no host copy to write at once.
          if ((err as { code?: unknown }).code === 'State' && /^into_data:/.test((err as Error).message)) {
            e.requireSyncReads(op, '`await kiln.io.writeNamedMpkAsync(...)`');
          }
          throw err;
        }
      } finally {
        if (owned !== null) for (const t of Object.values(owned)) t.dispose();
      }
    },
    async writeNamedMpkAsync(source, options) {
      const plainObject = source !== null && typeof source === 'object' && !Array.isArray(source) && !(source instanceof Uint8Array);
      // The cpu backend, and a source writeNamedMpk refuses (its Type error): writeNamedMpk.
      if (e.asyncRead === null || !plainObject) return io.writeNamedMpk(source, options);
      // The webgpu backend: io_store.ts (loaded on first use) reads the tensors first.
      return (await ioStore()).writeNamedMpkAsync(io.writeNamedMpk, e, source, options);
    },
    save: saveFile as Io['save'],
    load: loadFile as Io['load'],
    async saveToIndexedDB(name, model, options) {
      const op = 'io.saveToIndexedDB';
      const n = checkName(name, op, 'name');
      const bytes = (await bytesOfAsync(model, options, op)).slice();
      await (await ioStore()).withStore(op, 'readwrite', (s) => s.put(bytes, n), `cannot store "${n}"`);
    },
    async loadFromIndexedDB(name, model) {
      const op = 'io.loadFromIndexedDB';
      const m = checkLoadable(model, op);
      return m.loadSafetensors(await loadBytesIdb(name, op)) as never;
    },
    loadBytesFromIndexedDB: (name) => loadBytesIdb(name),
    async listIndexedDB() {
      const op = 'io.listIndexedDB';
      const keys = await (await ioStore()).withStore(op, 'readonly', (s) => s.getAllKeys(), 'cannot list the entries');
      return keys.map(String).sort();
    },
    async deleteFromIndexedDB(name) {
      const op = 'io.deleteFromIndexedDB';
      const n = checkName(name, op, 'name');
      await (await ioStore()).withStore(op, 'readwrite', (s) => s.delete(n), `cannot delete "${n}"`);
    },
    indexedDBStore,
    download(fileName, model, options) {
      const op = 'io.download';
      const n = checkName(fileName, op, 'fileName');
      const doc = (globalThis as { document?: Document }).document;
      if (doc === undefined || typeof URL.createObjectURL !== 'function') {
        throw fail('State', `${op}: downloads need a page with a document (in Node use kiln.io.save(path, model))`);
      }
      const bytes = bytesOf(model, options, op);
      const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: 'application/octet-stream' }));
      try {
        const a = doc.createElement('a');
        a.href = url;
        a.download = n;
        a.style.display = 'none';
        doc.body.appendChild(a);
        a.click();
        a.remove();
      } finally {
        // The click has started the download; revoking later lets slow browsers read it.
        setTimeout(() => URL.revokeObjectURL(url), 10_000);
      }
    },
  };
  kiln.io = Object.freeze(io);
}
