// kiln-dl/inference in Node (package.json "exports" condition "node"): as inference.ts, but
// reads kiln-core-inference.wasm next to itself and hands the bytes to the module (TOOLCHAIN.md).
import { readFile } from 'node:fs/promises';
import createCoreModule from './kiln-core-inference.mjs';
import { chooseRelaxed, detectRelaxedSimd, finishReason, relaxedWasmFile } from './select.js';
import { deferredLoader, type LoaderModuleOptions } from './deferred.js';
import { fileSource } from './deferred_node.js';
import { checkInferenceOptions, finishInference, type InferenceInitOptions, type KilnInference } from './inference_module.js';

export * from './types.js';
export type { InferenceInitOptions, KilnInference } from './inference_module.js';

/**
 * Loads the core engine (single thread); `wasmBinary` defaults to the bytes of
 * kiln-core-inference.wasm next to this file.
 * @throws KilnError `Type` / `Config` for bad options (see inference.ts).
 */
export async function init(opts: InferenceInitOptions = {}): Promise<KilnInference> {
  checkInferenceOptions(opts);
  const relaxed = chooseRelaxed(opts, 'simd', detectRelaxedSimd());
  const { threads: _threads, numThreads: _numThreads, engine: _engine, relaxedSimd: _relaxedSimd, backend: _backend, ...moduleOpts } = opts;
  // The core engine split for inference (scripts/split_wasm.mjs).
  const file = relaxed.relaxed ? relaxedWasmFile('kiln-core-inference') : 'kiln-core-inference.wasm';
  const wasmBinary = opts.wasmBinary ?? (await readFile(new URL(`./${file}`, import.meta.url)));
  const deferred = deferredLoader(fileSource(new URL(`./${file.replace(/(-relaxed)?\.wasm$/, '.deferred.wasm')}`, import.meta.url)), moduleOpts as LoaderModuleOptions);
  const raw = await createCoreModule({ ...moduleOpts, wasmBinary, ...deferred.options });
  return finishInference(raw, opts, finishReason(raw, relaxed), deferred.control);
}
