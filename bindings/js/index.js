// kiln-dl, browser and bundler entry: `const kiln = await init();`
// The engine is dist/kiln.wasm next to this file; bundlers (Vite) see the
// `new URL('kiln.wasm', import.meta.url)` below and ship the file with the app.
import createKilnModule from './kiln.mjs';
import { finishModule } from './module.js';

export { KilnError } from './errors.js';

/**
 * Loads and instantiates the WebAssembly engine.
 * @param {object} [opts] `autoDispose` (see index.d.ts) and Emscripten module options
 *   (`wasmBinary`, `locateFile`, ...).
 * @returns {Promise<import('./index.d.ts').Kiln>}
 */
export async function init(opts = {}) {
  const wasmUrl = new URL('kiln.wasm', import.meta.url);
  const module = await createKilnModule({
    locateFile: (path) => (path.endsWith('.wasm') ? wasmUrl.href : path),
    ...opts,
  });
  return finishModule(module, opts);
}
