// Internal: the deferred half of a split engine (issue 17). scripts/split_wasm.mjs splits each
// single-thread engine with binaryen's wasm-split into the module init() instantiates and
// <name>.deferred.wasm, which holds every function the profile workload (scripts/
// split_profile.mjs: what a page that trains an MLP does) never ran. Until the deferred module
// is instantiated, the table slots of its functions hold trampolines made here at init()
// (installPlaceholders, before the engine's constructors run) from the stubs
// scripts/split_stubs.mjs leaves in those slots: a call of one instantiates the deferred module
// with the primary's exports as imports ({primary: Module.asm}: memory, table, stack pointer,
// exception tag, functions; the functions only it calls are in table slots, which it imports
// as "#<slot>": scripts/split_slots.mjs), which writes its functions into the shared table, and
// calls the slot again. It is done once per instance; later calls of cached slots find it loaded and go on.
//
// Where the bytes come from: in Node, the file beside the engine (read synchronously); in a
// browser, a synchronous request (a worker reads an ArrayBuffer; a page's main thread, where
// synchronous requests cannot set responseType, reads the bytes as x-user-defined text). A
// page can avoid the synchronous request by `await kiln.loadDeferred()` (an asynchronous fetch
// and compile) before it calls beyond the primary module.
import { KilnError } from './errors.js';

/** Where a split engine's deferred module comes from. */
export interface DeferredSource {
  /** The deferred module's file name, for messages (e.g. "kiln-core.deferred.wasm"). */
  file: string;
  /** Its bytes, synchronously (Node: readFileSync; browsers: a synchronous XMLHttpRequest). */
  readSync(): Uint8Array;
  /** Its bytes, asynchronously (fetch, or a file read). */
  read(): Promise<Uint8Array>;
}

/** State of the deferred module of one instance: 'none' (the build is not split), 'pending', 'loaded'. */
export type DeferredState = 'none' | 'pending' | 'loaded';

/** The part of the Emscripten module the loader reads: the primary's exports. */
export interface SplitModule {
  asm?: Record<string, unknown>;
}

/** What finishModule needs of a loader: backendInfo().deferred and kiln.loadDeferred(). */
export interface DeferredControl {
  state(): DeferredState;
  load(module: SplitModule): Promise<void>;
}

/** The Emscripten module options a loader reads: a caller's `preRun` runs after the trampolines are in. */
export interface LoaderModuleOptions {
  preRun?: ((module: SplitModule) => void) | ((module: SplitModule) => void)[];
}

/**
 * The loader of one engine instance: `options` go into the Emscripten module options (`preRun`:
 * installPlaceholders, then the caller's `moduleOpts.preRun`); `state()` and `load()` back
 * backendInfo().deferred and kiln.loadDeferred().
 */
export function deferredLoader(source: DeferredSource | null, moduleOpts: LoaderModuleOptions = {}) {
  let loaded = false;
  let loading: Promise<void> | null = null;
  const fail = (err: unknown): KilnError => new KilnError('Io',
    `engine: cannot load ${source?.file ?? 'the deferred module'}, the part of the engine that holds the ` +
    `function just called (what the init()-time module leaves out to keep a page's download small): ${String((err as Error)?.message ?? err)}`);
  /** Instantiates the deferred module now, synchronously (a trampoline was called). */
  const loadSync = (module: SplitModule): void => {
    if (loaded) return;
    if (!source) throw fail('this engine has no deferred module');
    try {
      new WebAssembly.Instance(new WebAssembly.Module(source.readSync() as BufferSource), { primary: primaryImports(module.asm) });
    } catch (err) {
      throw fail(err);
    }
    loaded = true;
  };
  const user = moduleOpts.preRun;
  const options = {
    preRun: [
      (module: SplitModule): void => {
        if (module.asm) installPlaceholders(module.asm, () => loadSync(module));
      },
      ...(user === undefined ? [] : Array.isArray(user) ? user : [user]),
    ],
  };
  const control: DeferredControl = {
    /** 'none' for a build without a deferred module, else 'pending' or 'loaded'. */
    state(): DeferredState {
      return source === null ? 'none' : loaded ? 'loaded' : 'pending';
    },
    /** Fetches, compiles and instantiates the deferred module now (once). */
    load(module: SplitModule): Promise<void> {
      if (loaded || source === null) return Promise.resolve();
      loading ??= (async () => {
        const bytes = await source.read();
        const compiled = await WebAssembly.compile(bytes as BufferSource);
        if (loaded) return;
        if (!module.asm) throw new KilnError('State', 'loadDeferred: the engine is not initialized');
        // Compiled asynchronously (the slow part), instantiated at once: no await between the
        // `loaded` check and its setting, so a trampoline call cannot load it a second time.
        new WebAssembly.Instance(compiled, { primary: primaryImports(module.asm) });
        loaded = true;
      })().catch((err) => {
        loading = null;
        throw err instanceof KilnError ? err : fail(err);
      });
      return loading;
    },
  };
  return { options, control };
}

/**
 * The deferred module's imports from the initial module: its exports (`asm`), and for an import
 * named "#<slot>" (scripts/split_slots.mjs: a function only the deferred module calls), the
 * function in that slot of the engine's table.
 */
export function primaryImports(asm: Record<string, unknown> | undefined): WebAssembly.ModuleImports {
  const exports = asm ?? {};
  const table = Object.values(exports).find((v): v is WebAssembly.Table => v instanceof WebAssembly.Table);
  return new Proxy(exports, {
    get: (target, key) => (typeof key === 'string' && key.startsWith('#') && table ? table.get(Number(key.slice(1))) : target[key as string]),
  }) as WebAssembly.ModuleImports;
}

/** The bytes at `url`, synchronously, in a browser page or worker. */
export function fetchSync(url: string): Uint8Array {
  const xhr = new XMLHttpRequest();
  xhr.open('GET', url, false);
  const worker = typeof document === 'undefined';
  // A window's synchronous request cannot set responseType: read the bytes as x-user-defined text.
  if (worker) xhr.responseType = 'arraybuffer';
  else xhr.overrideMimeType('text/plain; charset=x-user-defined');
  xhr.send(null);
  if (xhr.status !== 200 && !(xhr.status === 0 && url.startsWith('file:'))) {
    throw new Error(`GET ${url}: HTTP ${xhr.status}`);
  }
  if (worker) return new Uint8Array(xhr.response as ArrayBuffer);
  const text = xhr.responseText;
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i) & 0xff;
  return bytes;
}

/** A DeferredSource for browsers: the file at `url`. */
export function urlSource(url: URL): DeferredSource {
  return {
    file: url.pathname.slice(url.pathname.lastIndexOf('/') + 1),
    readSync: () => fetchSync(url.href),
    read: async () => {
      const response = await fetch(url.href);
      if (!response.ok) throw new Error(`GET ${url.href}: HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}

/**
 * Installs `kiln.loadDeferred()` and `backendInfo().deferred` (after kiln.backendInfo is set).
 * Without a loader (the threaded build), the state is 'none' and loadDeferred loads only the
 * JS layer's deferred functions (a bundled browser entry's; none in Node's module tree).
 */
export function installDeferred(kiln: Record<string, unknown>, raw: object, control?: DeferredControl): void {
  const info = kiln.backendInfo as () => Record<string, unknown>;
  kiln.backendInfo = () => ({ ...info(), deferred: control ? control.state() : 'none' });
  kiln.loadDeferred = async (): Promise<void> => {
    // The JS layer's deferred functions too (scripts/split_js.mjs): each split chunk the page
    // loaded registers the asynchronous read of its <chunk>.deferred.txt under this symbol.
    const js = (globalThis as Record<symbol, (() => Promise<void>)[] | undefined>)[Symbol.for('kiln.deferredJs')] ?? [];
    await Promise.all([control ? control.load(raw as SplitModule) : undefined, ...js.map((load) => load())]);
  };
}

/** The value types of a stub's name (scripts/split_stubs.mjs): i i32, j i64, f f32, d f64, v v128. */
const VALTYPE: Record<string, number> = { i: 0x7f, j: 0x7e, f: 0x7d, d: 0x7c, v: 0x7b };

/** A wasm binary written into a buffer sized up front (installPlaceholders runs at every init()). */
class Writer {
  readonly bytes: Uint8Array<ArrayBuffer>;
  n = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(capacity);
  }
  byte(b: number): void {
    this.bytes[this.n++] = b;
  }
  /** `v` (unsigned, < 2^32) as LEB128. */
  leb(v: number): void {
    do {
      const b = v & 0x7f;
      v >>>= 7;
      this.bytes[this.n++] = v ? b | 0x80 : b;
    } while (v);
  }
  /** `v` (0 <= v < 2^31) as a signed LEB128 (i32.const). */
  sleb(v: number): void {
    for (;;) {
      const b = v & 0x7f;
      v >>= 7;
      if (v === 0 && !(b & 0x40)) {
        this.bytes[this.n++] = b;
        return;
      }
      this.bytes[this.n++] = b | 0x80;
    }
  }
  /** Starts section `id`; returns where its size goes (5 bytes, a padded LEB128, set by end()). */
  section(id: number): number {
    this.byte(id);
    this.n += 5;
    return this.n;
  }
  end(start: number): void {
    let size = this.n - start;
    for (let k = 5; k > 0; k--) {
      this.bytes[start - k] = (size & 0x7f) | (k > 1 ? 0x80 : 0);
      size >>>= 7;
    }
  }
}

/**
 * Puts a trampoline in every table slot of a split engine's initial module that holds a stub
 * (scripts/split_stubs.mjs: an exported function "~<params>_<results>" per signature, in the
 * slots of the deferred module's functions). The trampoline of slot s has the stub's signature;
 * it calls `load()` (which instantiates the deferred module, whose element segment writes the
 * real function into slot s) and then calls slot s with its own arguments, returning what that
 * returns. The trampolines are compiled here from about 12 bytes per slot, instead of shipping a
 * placeholder import per slot in the initial module (47 KB for the core engine).
 * Call before any engine function runs (Emscripten's preRun: after instantiation, before the
 * constructors).
 * @param asm the initial module's exports (Module.asm)
 * @param load instantiates the deferred module once (later calls return at once); may throw
 * @returns the number of slots that got a trampoline (0 when the module has no stubs)
 */
export function installPlaceholders(asm: Record<string, unknown>, load: () => void): number {
  let table: WebAssembly.Table | null = null;
  const stubs = new Map<unknown, number>();
  const sigs: string[][] = [];
  for (const key of Object.keys(asm)) {
    const value = asm[key];
    if (value instanceof WebAssembly.Table) table = value;
    else if (key.startsWith('~')) {
      stubs.set(value, sigs.length);
      sigs.push(key.slice(1).split('_'));
    }
  }
  if (table === null || sigs.length === 0) return 0;
  const slots: number[] = [];
  const types: number[] = [];
  for (let i = 0; i < table.length; i++) {
    const type = stubs.get(table.get(i));
    if (type !== undefined) {
      slots.push(i);
      types.push(type);
    }
  }
  let maxParams = 0;
  for (const [params] of sigs) maxParams = Math.max(maxParams, params.length);
  const w = new Writer(200 + 40 * sigs.length + slots.length * (30 + 2 * maxParams));
  w.bytes.set([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  w.n = 8;
  // types: one per signature, then load's (i32) -> ()
  let at = w.section(1);
  w.leb(sigs.length + 1);
  for (const sig of [...sigs, ['i', '']]) {
    w.byte(0x60);
    for (const part of sig) {
      w.leb(part.length);
      for (const c of part) w.byte(VALTYPE[c]);
    }
  }
  w.end(at);
  // imports: k.l, the loader (function 0); k.t, the engine's table
  at = w.section(2);
  for (const b of [2, 1, 0x6b, 1, 0x6c, 0x00]) w.byte(b);
  w.leb(sigs.length);
  for (const b of [1, 0x6b, 1, 0x74, 0x01, 0x70, 0x00, 0x00]) w.byte(b);
  w.end(at);
  at = w.section(3);
  w.leb(slots.length);
  for (const type of types) w.leb(type);
  w.end(at);
  // elements: one active segment per run of consecutive slots
  const runs: number[] = [];
  for (let k = 0; k < slots.length; k++) if (k === 0 || slots[k] !== slots[k - 1] + 1) runs.push(k);
  runs.push(slots.length);
  at = w.section(9);
  w.leb(runs.length - 1);
  for (let r = 0; r + 1 < runs.length; r++) {
    w.byte(0x00);
    w.byte(0x41);
    w.sleb(slots[runs[r]]);
    w.byte(0x0b);
    w.leb(runs[r + 1] - runs[r]);
    for (let k = runs[r]; k < runs[r + 1]; k++) w.leb(k + 1);
  }
  w.end(at);
  // code: i32.const s; call load; local.get 0..n-1; i32.const s; call_indirect (type t) table 0
  at = w.section(10);
  w.leb(slots.length);
  for (let k = 0; k < slots.length; k++) {
    const sizeAt = w.n++;
    const start = w.n;
    w.byte(0x00);
    w.byte(0x41);
    w.sleb(slots[k]);
    w.byte(0x10);
    w.byte(0x00);
    const params = sigs[types[k]][0].length;
    for (let p = 0; p < params; p++) {
      w.byte(0x20);
      w.leb(p);
    }
    w.byte(0x41);
    w.sleb(slots[k]);
    w.byte(0x11);
    w.leb(types[k]);
    w.byte(0x00);
    w.byte(0x0b);
    // a body is under 128 bytes (a signature of at most 40 parameters): its size is one byte
    if (w.n - start > 127) throw new KilnError('Internal', `engine: a trampoline of ${params} parameters is too long`);
    w.bytes[sizeAt] = w.n - start;
  }
  w.end(at);
  const module = new WebAssembly.Module(w.bytes.subarray(0, w.n));
  new WebAssembly.Instance(module, { k: { l: () => load(), t: table } });
  return slots.length;
}
