// kiln-dl, Node entry: `import { init } from "kiln-dl"; const kiln = await init();`
// The engine is built for web and worker environments (Emscripten 3.1.6 emits CommonJS-only
// Node code into ES modules), and Node's fetch cannot read file: URLs, so this entry reads
// kiln.wasm next to itself and hands the bytes to the module (TOOLCHAIN.md). Node always
// gets the single-threaded build: Emscripten 3.1.6's pthreads need CommonJS shims in Node
// (TOOLCHAIN.md "Threads"); init({threads: true}) says so in a KilnError. Where V8 accepts
// relaxed SIMD (Node 20 with --experimental-wasm-relaxed-simd) it reads kiln-relaxed.wasm.
import { readFile } from 'node:fs/promises';
import type { InitOptions, Kiln } from './api.js';
import createKilnModule from './kiln.mjs';
import { finishModule } from './module.js';
import { chooseBuild, detectEnvironment } from './select.js';
import { chooseRelaxed, detectRelaxedSimd, finishReason, relaxedWasmFile } from './select.js';

export * from './types.js';

/**
 * Loads and instantiates the WebAssembly engine.
 * `threads` ('auto' or false here), `autoDispose` (see InitOptions) and Emscripten module
 * options; `wasmBinary` defaults to the bytes of kiln.wasm next to this file.
 */
export async function init(opts: InitOptions = {}): Promise<Kiln> {
  chooseBuild(opts, detectEnvironment()); // validates the options; always 'simd' in Node
  // The relaxed-SIMD build where V8 accepts it (Node 20: --experimental-wasm-relaxed-simd).
  const relaxed = chooseRelaxed(opts, 'simd', detectRelaxedSimd());
  const { threads: _threads, numThreads: _numThreads, relaxedSimd: _relaxedSimd, ...moduleOpts } = opts;
  const file = relaxed.relaxed ? relaxedWasmFile('kiln') : 'kiln.wasm';
  const wasmBinary = opts.wasmBinary ?? (await readFile(new URL(`./${file}`, import.meta.url)));
  const module = await createKilnModule({ ...moduleOpts, wasmBinary });
  return finishModule(module, opts, { maxThreads: 1, reason: finishReason(module, relaxed) });
}
