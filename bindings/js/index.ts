// kiln-dl, browser and bundler entry: `const kiln = await init();`
// Three engine builds sit next to this file (select.ts): kiln-core.mjs + kiln-core.wasm
// (the core engine, the default: SIMD, one thread), kiln.mjs + kiln.wasm (the full engine,
// SIMD, one thread) and kiln-mt.mjs + kiln-mt.wasm (full, SIMD + threads, for cross-origin
// isolated pages and workers); kiln-core-relaxed.wasm, kiln-relaxed.wasm and kiln-mt-relaxed.wasm
// (FMA via relaxed SIMD, loaded by kiln-core.mjs / kiln.mjs / kiln-mt.mjs) replace kiln-core.wasm /
// kiln.wasm / kiln-mt.wasm where the engine validates relaxed SIMD. Bundlers (Vite) see the `new URL('…', import.meta.url)` below and ship
// every file with the app. The threaded build is loaded by URL, not bundled: its pthread
// workers import kiln-mt.mjs again by URL (mainScriptUrlOrBlob), so it must stay a file of
// its own.
// The engine profile (DESIGN.md "Engines"): init() loads kiln-core.{mjs,wasm} by default
// and kiln.{mjs,wasm} for `engine: 'full'`, each by a dynamic import, so that a page fetches
// only the engine it asked for.
import type { InitOptions, Kiln } from './api.js';
import { finishModule } from './module.js';
import type { CreateModule, RawModule } from './raw.js';
import { chooseEngineBuild, detectEnvironment } from './select.js';
import { chooseRelaxed, detectRelaxedSimd, finishReason } from './select.js';
import { KilnError } from './errors.js';
import { deferredLoader, urlSource, type LoaderModuleOptions } from './deferred.js';

export * from './types.js';

/**
 * Loads the WebAssembly engine: `const kiln = await init();` (Node 20, browsers, workers).
 * `engine` ('core' | 'full', default 'core'), `threads` (false | true | 'auto'),
 * `numThreads`, `autoDispose` (see InitOptions) and Emscripten module options
 * (`wasmBinary`, `locateFile`, ...). Each call returns an independent instance.
 * @throws KilnError `Type` / `Config` for bad options (see InitOptions).
 */
export async function init(opts: InitOptions = {}): Promise<Kiln> {
  // The backend (issue 21): 'webgpu' loads the webgpu engine on the browser's GPU; 'auto' does
  // where a GPU adapter exists and falls back to the cpu backend, saying why.
  let backendReason = '';
  if (opts.backend !== undefined && opts.backend !== 'cpu') {
    // The webgpu parts load only here (a chunk of their own: the cpu pages' size budget).
    const { checkBackendOption, requestGpu, initWebgpu } = await import('./webgpu_init.js');
    const backend = checkBackendOption(opts);
    const gpu = await requestGpu();
    if (gpu.device) return initWebgpu(opts, gpu.device, gpu.adapter);
    if (backend === 'webgpu') throw new KilnError('Device', `init: backend 'webgpu': ${gpu.reason}`);
    backendReason = `cpu backend (backend 'auto': ${gpu.reason}); `;
  }
  const choice = chooseEngineBuild(opts, detectEnvironment());
  const relaxed = chooseRelaxed(opts, choice.build, detectRelaxedSimd());
  const { threads: _threads, numThreads: _numThreads, relaxedSimd: _relaxedSimd, engine: _engine, backend: _backend, ...moduleOpts } = opts;
  if (choice.build === 'simd-threads') {
    const jsUrl = new URL('./kiln-mt.mjs', import.meta.url);
    // One glue loads either module; its workers receive the module the page compiled.
    const wasmUrl = relaxed.relaxed ? new URL('./kiln-mt-relaxed.wasm', import.meta.url) : new URL('./kiln-mt.wasm', import.meta.url);
    // The pthread workers run Emscripten's kiln-mt.worker.js, a classic script. It is not
    // loaded by URL: Vite's dev server rewrites it as a module (a classic worker then fails
    // with "Cannot use import statement outside a module") and `vite build` inlines it as
    // a data: URL (under 4 KiB), whose opaque origin can neither share the page's memory
    // nor import kiln-mt.mjs. Its text ships as a module (kiln-mt-worker-source.js,
    // written by scripts/build.sh) and starts from a blob: URL, which has the page's origin.
    const { default: workerSource } = await import('./kiln-mt-worker-source.js');
    const workerHref = URL.createObjectURL(new Blob([workerSource], { type: 'text/javascript' }));
    const { default: createThreaded } = (await import(/* @vite-ignore */ jsUrl.href)) as { default: CreateModule };
    let module: RawModule;
    try {
      module = await createThreaded({
        locateFile: (path: string) => {
          if (path.endsWith('.wasm')) return wasmUrl.href;
          if (path.endsWith('.worker.js')) return workerHref;
          return path;
        },
        // The workers import kiln-mt.mjs from here (a blob: worker has no base URL).
        mainScriptUrlOrBlob: jsUrl.href,
        ...moduleOpts,
        // Emscripten starts kilnThreads - 1 Web Workers before the module runs
        // (bindings/threads.pre.js); the engine then uses them all.
        kilnThreads: choice.threads,
      });
    } finally {
      // Every worker is started before the module resolves (its pool is never extended).
      URL.revokeObjectURL(workerHref);
    }
    module.setNumThreads(choice.threads);
    return finishModule(module, opts, { maxThreads: choice.threads, reason: backendReason + finishReason(module, relaxed), engine: choice.engine });
  }
  const core = choice.engine === 'core';
  // Literal URLs, so that bundlers ship every file.
  const wasmUrl = core
    ? (relaxed.relaxed ? new URL('kiln-core-relaxed.wasm', import.meta.url) : new URL('kiln-core.wasm', import.meta.url))
    : (relaxed.relaxed ? new URL('kiln-relaxed.wasm', import.meta.url) : new URL('kiln.wasm', import.meta.url));
  // The deferred half of the split engine (deferred.ts), fetched on first use only; the relaxed
  // engine's is the same file (scripts/split_wasm.mjs keeps every FMA in the primary half).
  const deferredUrl = core ? new URL('kiln-core.deferred.wasm', import.meta.url) : new URL('kiln.deferred.wasm', import.meta.url);
  const deferred = deferredLoader(urlSource(deferredUrl), moduleOpts as LoaderModuleOptions);
  const { default: createModule } = core ? await import('./kiln-core.mjs') : await import('./kiln.mjs');
  const module = await createModule({
    locateFile: (path: string) => (path.endsWith('.wasm') ? wasmUrl.href : path),
    ...moduleOpts,
    ...deferred.options,
  });
  return finishModule(module, opts, {
    maxThreads: 1, reason: backendReason + finishReason(module, relaxed), engine: choice.engine, deferred: deferred.control,
  });
}

