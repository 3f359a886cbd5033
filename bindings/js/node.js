// kiln-dl, Node entry: `import { init } from "kiln-dl"; const kiln = await init();`
// The engine is built for web and worker environments (Emscripten 3.1.6 emits CommonJS-only
// Node code into ES modules), and Node's fetch cannot read file: URLs, so this entry reads
// kiln.wasm next to itself and hands the bytes to the module (TOOLCHAIN.md).
import { readFile } from 'node:fs/promises';
import createKilnModule from './kiln.mjs';
import { finishModule } from './module.js';

export { KilnError } from './errors.js';

/**
 * Loads and instantiates the WebAssembly engine.
 * @param {object} [opts] `autoDispose` (see index.d.ts) and Emscripten module options;
 *   `wasmBinary` defaults to the bytes of kiln.wasm next to this file.
 * @returns {Promise<import('./index.d.ts').Kiln>}
 */
export async function init(opts = {}) {
  const wasmBinary = opts.wasmBinary ?? (await readFile(new URL('./kiln.wasm', import.meta.url)));
  const module = await createKilnModule({ ...opts, wasmBinary });
  return finishModule(module, opts);
}
