// kiln-dl, Node entry: `import { init } from "kiln-dl"; const kiln = await init();`
// The engine is built for web and worker environments (Emscripten 3.1.6 emits CommonJS-only
// Node code into ES modules), and Node's fetch cannot read file: URLs, so this entry reads
// kiln.wasm next to itself and hands the bytes to the module (TOOLCHAIN.md). Node always
// gets the single-threaded build: Emscripten 3.1.6's pthreads need CommonJS shims in Node
// (TOOLCHAIN.md "Threads"); init({threads: true}) says so in a KilnError. Where V8 accepts
// relaxed SIMD (Node 20 with --experimental-wasm-relaxed-simd) it reads kiln-relaxed.wasm
// (kiln-core-relaxed.wasm for the core engine).
// The engine profile: kiln-core.{mjs,wasm} by default, kiln.{mjs,wasm} for engine: 'full'.
import { readFile } from 'node:fs/promises';
import type { InitOptions, Kiln } from './api.js';
import { finishModule } from './module.js';
import { chooseEngineBuild, detectEnvironment } from './select.js';
import { checkBackendOption } from './webgpu_init.js';
import { KilnError } from './errors.js';
import { chooseRelaxed, detectRelaxedSimd, finishReason, relaxedWasmFile } from './select.js';
import { deferredLoader, type LoaderModuleOptions } from './deferred.js';
import { fileSource } from './deferred_node.js';

export * from './types.js';

/**
 * Loads and instantiates the WebAssembly engine.
 * `engine` ('core' | 'full', default 'core'), `threads` ('auto' or false here),
 * `autoDispose` (see InitOptions) and Emscripten module options; `wasmBinary` defaults to
 * the bytes of kiln-core.wasm (kiln.wasm for the full engine) next to this file. Each call
 * returns an independent instance.
 * @throws KilnError `Type` / `Config` for bad options (see InitOptions).
 */
export async function init(opts: InitOptions = {}): Promise<Kiln> {
  // Node has no WebGPU: backend 'webgpu' is an error, 'auto' is the cpu backend.
  const backend = checkBackendOption(opts);
  if (backend === 'webgpu') {
    throw new KilnError('Device', "init: backend 'webgpu': Node has no WebGPU (navigator.gpu); the webgpu backend runs in browsers");
  }
  const backendReason = backend === 'auto' ? "cpu backend (backend 'auto': Node has no WebGPU); " : '';
  // Validates the options; always the single-threaded build in Node.
  const { engine } = chooseEngineBuild(opts, detectEnvironment());
  // The relaxed-SIMD build where V8 accepts it (Node 20: --experimental-wasm-relaxed-simd).
  const relaxed = chooseRelaxed(opts, 'simd', detectRelaxedSimd());
  const { threads: _threads, numThreads: _numThreads, relaxedSimd: _relaxedSimd, engine: _engine, backend: _backend, ...moduleOpts } = opts;
  const core = engine === 'core';
  const base = core ? 'kiln-core' : 'kiln';
  const file = relaxed.relaxed ? relaxedWasmFile(base) : `${base}.wasm`;
  const wasmBinary = opts.wasmBinary ?? (await readFile(new URL(`./${file}`, import.meta.url)));
  // The deferred half of the split engine (deferred.ts), read on first use only.
  const deferred = deferredLoader(fileSource(new URL(`./${file.replace(/(-relaxed)?\.wasm$/, '.deferred.wasm')}`, import.meta.url)), moduleOpts as LoaderModuleOptions);
  const { default: createModule } = core ? await import('./kiln-core.mjs') : await import('./kiln.mjs');
  const module = await createModule({ ...moduleOpts, wasmBinary, ...deferred.options });
  return finishModule(module, opts, { maxThreads: 1, reason: backendReason + finishReason(module, relaxed), engine, deferred: deferred.control });
}
