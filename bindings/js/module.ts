// Internal: turns the Emscripten module into the public `kiln` object, for both entry
// points (index.ts, node.ts). Each part of the API installs itself onto `kiln`:
//   installTensor(kiln, raw, options) -> internals (tensor/install.ts: Tensor, tidy, memory, ...)
// Further parts (nn, optim, data, Learner) are installed after it with
//   installX(kiln, raw, internals)
// where internals = { raw, engine, Tensor, Gradients, wrap, unwrap, wrapGradients,
// unwrapGradients, fail, checks } (see tensor/install.ts).
import type { Kiln } from './api.js';
import { installBoundary } from './boundary.js';
import { KilnError } from './errors.js';
import type { RawModule } from './raw.js';
import { installTensor } from './tensor/install.js';
// Models, losses, optimizers, data, Learner (H-train).
import { installNn } from './nn.js';
// kiln.Module, kiln.Param (module_class.ts): before installNn (Sequential is a Module).
import { installModule } from './module_class.js';
import { installParam } from './module_param.js';
import { installTrain } from './train.js';
// Datasets, batchers, DataLoader, kiln.io (H-data).
import { installDataPipeline } from './data/install.js';
import { installIo } from './io.js';
// What the loaded engine profile lacks (engine_profile.ts: State errors naming it).
import { installEngineGaps, installEngineNames, type LoadedEngine } from './engine_profile.js';
// The deferred half of a split engine (deferred.ts): kiln.loadDeferred, backendInfo().deferred.
import { installDeferred, type DeferredControl } from './deferred.js';

/**
 * @param raw the instantiated Emscripten module
 * @param options init()'s options (autoDispose)
 * @param build the most threads the loaded build can run (1 for the single-threaded build;
 *   the Web Workers started + 1 for the threaded one), and why that build was loaded
 *   (backendInfo().buildReason; select.ts chooseRelaxed)
 */
export function finishModule(
  raw: RawModule, options: { autoDispose?: boolean } = {},
  build: { maxThreads: number; reason?: string; engine?: LoadedEngine; deferred?: DeferredControl; adapter?: string } = { maxThreads: 1 },
): Kiln {
  // Every engine entry point reports its errors as KilnErrors thrown from JS, and no error
  // costs the instance stack or heap (boundary.ts; C++ half: `guarded`, js_tensor.hpp).
  installBoundary(raw);
  const engine = build.engine ?? 'full';
  // The core engine: a stub throwing KilnError `State` for each full-engine entry point it
  // lacks, and layer types of the full engine refused by name.
  installEngineGaps(raw, engine);
  raw.KilnError = KilnError;
  const kiln: Record<string, unknown> = { KilnError };
  const internals = installTensor(kiln, raw, options);
  const { maxThreads } = build;
  const buildReason = build.reason ?? '';
  const adapter = build.adapter ?? null;
  kiln.backendInfo = () => ({ ...raw.backendInfo(), maxThreads, buildReason, engine, adapter });
  installDeferred(kiln, raw, build.deferred);
  kiln.setNumThreads = (n: unknown) => {
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      throw new KilnError('Type', `setNumThreads: expected an integer, got ${typeof n} ${String(n)}`);
    }
    if (n < 1 || n > maxThreads) {
      throw new KilnError('Config', `setNumThreads: this build (${raw.backendInfo().build}) runs 1 to ${maxThreads} threads, got ${n}`);
    }
    raw.setNumThreads(n);
  };
  // Models and training (H-train): kiln.nn, kiln.loss, kiln.optim, kiln.data, kiln.Learner.
  installModule(kiln, internals.engine);
  installParam(kiln, internals.engine);
  installNn(kiln, raw, internals.engine);
  installTrain(kiln, internals.engine);
  installDataPipeline(kiln, internals.engine);
  installIo(kiln, internals.engine);
  // The core engine: kiln.nn's factories of full-engine layer types, and the public names
  // of functions whose engine half is missing.
  installEngineNames(kiln, raw, engine);
  Object.defineProperty(kiln, '_internals', { value: internals, enumerable: false });
  return kiln as unknown as Kiln;
}
