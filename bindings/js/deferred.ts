// Internal: the deferred half of a split engine (issue 17). scripts/split_wasm.mjs splits each
// single-thread engine with binaryen's wasm-split into the module init() instantiates and
// <name>.deferred.wasm, which holds every function the profile workload (scripts/
// split_profile.mjs: what a page that trains an MLP does) never ran. Until the deferred module
// is instantiated, the table slots of its functions hold placeholder imports; Emscripten's glue
// (linked with -sSPLIT_MODULE) answers a call of one with `Module.loadSplitModule(file,
// imports, index)` and then calls the real function from the table. Instantiating the deferred
// module with the primary's exports as imports ({primary: Module.asm}: memory, table, stack
// pointer, exception tag, functions) writes its functions into the shared table, so it is
// done once per instance; later calls of cached placeholders find it loaded and go on.
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

/**
 * The loader of one engine instance: `options` go into the Emscripten module options
 * (`loadSplitModule`, and `printErr` without the glue's two lines per placeholder call);
 * `state()` and `load()` back backendInfo().deferred and kiln.loadDeferred().
 */
export function deferredLoader(source: DeferredSource | null, printErr?: (text: string) => void) {
  let loaded = false;
  let loading: Promise<void> | null = null;
  const instantiate = (bytes: Uint8Array, imports: WebAssembly.Imports): void => {
    const compiled = new WebAssembly.Module(bytes as BufferSource);
    new WebAssembly.Instance(compiled, imports);
    loaded = true;
  };
  const fail = (err: unknown): KilnError => new KilnError('Io',
    `engine: cannot load ${source?.file ?? 'the deferred module'}, the part of the engine that holds the ` +
    `function just called (what the init()-time module leaves out to keep a page's download small): ${String((err as Error)?.message ?? err)}`);
  const options = {
    loadSplitModule(_file: string, imports: WebAssembly.Imports): void {
      if (loaded) return;
      if (!source) throw fail('this engine has no deferred module');
      try {
        instantiate(source.readSync(), imports);
      } catch (err) {
        throw fail(err);
      }
    },
    // Emscripten 3.1.6's placeholder handler prints two lines on every call; keep the console clean.
    printErr(text: string): void {
      if (/^placeholder function called: |^instantiated deferred module, continuing$/.test(text)) return;
      (printErr ?? console.error)(text);
    },
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
        // `loaded` check and its setting, so a placeholder call cannot load it a second time.
        new WebAssembly.Instance(compiled, { primary: module.asm as WebAssembly.ModuleImports });
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
 * Without a loader (the threaded build), the state is 'none' and loadDeferred resolves at once.
 */
export function installDeferred(kiln: Record<string, unknown>, raw: object, control?: DeferredControl): void {
  const info = kiln.backendInfo as () => Record<string, unknown>;
  kiln.backendInfo = () => ({ ...info(), deferred: control ? control.state() : 'none' });
  kiln.loadDeferred = () => (control ? control.load(raw as SplitModule) : Promise.resolve());
}
