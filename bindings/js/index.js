// kiln-dl, browser and bundler entry: `const kiln = await init();`
// Two engine builds sit next to this file (select.js): kiln.mjs + kiln.wasm (SIMD, one
// thread) and kiln-mt.mjs + kiln-mt.wasm + kiln-mt.worker.js (SIMD + threads, for cross-
// origin isolated pages and workers). Bundlers (Vite) see the `new URL('…', import.meta.url)`
// below and ship every file with the app. The threaded build is loaded by URL, not bundled:
// its pthread workers import kiln-mt.mjs again by URL (mainScriptUrlOrBlob), so it must
// stay a file of its own, and its worker script a classic script.
import createKilnModule from './kiln.mjs';
import { finishModule } from './module.js';
import { chooseBuild, detectEnvironment } from './select.js';

export { KilnError } from './errors.js';

/**
 * Loads and instantiates the WebAssembly engine.
 * @param {object} [opts] `threads` (false | true | 'auto'), `numThreads`, `autoDispose`
 *   (see index.d.ts) and Emscripten module options (`wasmBinary`, `locateFile`, ...).
 * @returns {Promise<import('./index.d.ts').Kiln>}
 */
export async function init(opts = {}) {
  const choice = chooseBuild(opts, detectEnvironment());
  const { threads: _threads, numThreads: _numThreads, ...moduleOpts } = opts;
  if (choice.build === 'simd-threads') {
    const jsUrl = new URL('./kiln-mt.mjs', import.meta.url);
    const wasmUrl = new URL('./kiln-mt.wasm', import.meta.url);
    const workerUrl = new URL('./kiln-mt.worker.js', import.meta.url);
    const { default: createThreaded } = await import(/* @vite-ignore */ jsUrl.href);
    const module = await createThreaded({
      locateFile: (path) => {
        if (path.endsWith('.wasm')) return wasmUrl.href;
        if (path.endsWith('.worker.js')) return workerUrl.href;
        return path;
      },
      mainScriptUrlOrBlob: jsUrl.href,
      ...moduleOpts,
      // Emscripten starts kilnThreads - 1 Web Workers before the module runs
      // (bindings/threads.pre.js); the engine then uses them all.
      kilnThreads: choice.threads,
    });
    module.setNumThreads(choice.threads);
    return finishModule(module, opts, { maxThreads: choice.threads });
  }
  const wasmUrl = new URL('kiln.wasm', import.meta.url);
  const module = await createKilnModule({
    locateFile: (path) => (path.endsWith('.wasm') ? wasmUrl.href : path),
    ...moduleOpts,
  });
  return finishModule(module, opts, { maxThreads: 1 });
}
