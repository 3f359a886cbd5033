// kiln-dl/inference, browser and bundler entry: `const kiln = await init();` runs models
// (tensors, layers, Sequential, forward, SafeTensors records, kiln.nn.functional's losses) on the single-thread
// inference engine (kiln-core-inference.mjs + kiln-core-inference.wasm, or
// kiln-core-inference-relaxed.wasm where relaxed SIMD validates: the core engine without the
// Learner, optimizers and datasets, split for a page that runs a model) and loads none of the
// package's training, data or io modules (inference_module.ts): the smallest download that can
// run a trained model.
// Training, the full engine and threads are kiln-dl's (`import { init } from 'kiln-dl'`).
import createCoreModule from './kiln-core-inference.mjs';
import { chooseRelaxed, detectRelaxedSimd, finishReason } from './select.js';
import { deferredLoader, urlSource, type LoaderModuleOptions } from './deferred.js';
import { checkInferenceOptions, finishInference, type InferenceInitOptions, type KilnInference } from './inference_module.js';

export * from './types.js';
export type { InferenceInitOptions, KilnInference } from './inference_module.js';

/**
 * Loads the core engine: `const kiln = await init();` (browsers, workers; Node resolves
 * kiln-dl/inference to inference_node.js). Options: `autoDispose`, `threads` (false or
 * 'auto': always one thread here), Emscripten module options (`wasmBinary`, `locateFile`).
 * @throws KilnError `Type` / `Config` for bad options (threads: true, numThreads > 1, an
 *   engine other than 'core': those need kiln-dl's init()).
 */
export async function init(opts: InferenceInitOptions = {}): Promise<KilnInference> {
  checkInferenceOptions(opts);
  // kiln-core-inference-relaxed.wasm (FMA) where the engine validates relaxed SIMD (select.ts).
  const relaxed = chooseRelaxed(opts, 'simd', detectRelaxedSimd());
  const { threads: _threads, numThreads: _numThreads, engine: _engine, relaxedSimd: _relaxedSimd, backend: _backend, ...moduleOpts } = opts;
  // Two literal URLs, so that bundlers ship both files.
  // The core engine split for inference (scripts/split_wasm.mjs: the inference workload's functions
  // load at init, the rest on first use).
  const wasmUrl = relaxed.relaxed ? new URL('kiln-core-inference-relaxed.wasm', import.meta.url) : new URL('kiln-core-inference.wasm', import.meta.url);
  // One deferred half for both builds (scripts/split_wasm.mjs keeps every FMA in the primary half).
  const deferredUrl = new URL('kiln-core-inference.deferred.wasm', import.meta.url);
  const deferred = deferredLoader(urlSource(deferredUrl), moduleOpts as LoaderModuleOptions);
  const raw = await createCoreModule({
    locateFile: (path: string) => (path.endsWith('.wasm') ? wasmUrl.href : path),
    ...moduleOpts,
    ...deferred.options,
  });
  return finishInference(raw, opts, finishReason(raw, relaxed), deferred.control);
}
