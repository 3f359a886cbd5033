// Internal: the object of the inference entry (kiln-dl/inference: inference.ts for browsers
// and bundlers, inference_node.ts for Node): the same parts as finishModule (module.ts)
// builds for kiln-dl, minus training, data and io, so a page that only runs a model fetches
// only the JS modules of tensors, modules and layers (kiln.nn: layers, Sequential, forward,
// SafeTensors records through model.loadSafetensors / saveSafetensors, kiln.nn.functional).
import { installDeferred, type DeferredControl } from './deferred.js';
import type { Kiln } from './api.js';
import { installBoundary } from './boundary.js';
import { installEngineGaps, installEngineNames, installInferenceGaps } from './engine_profile.js';
import { KilnError } from './errors.js';
import { installModule } from './module_class.js';
import { installParam } from './module_param.js';
import { installNn } from './nn.js';
import { bindLoss } from './train/loss.js';
import type { InitOptions } from './api.js';
import type { RawModule } from './raw.js';
import { describe } from './tensor/checks.js';
import { installTensor } from './tensor/install.js';

/**
 * The loaded engine of kiln-dl/inference (`const kiln = await init()`): kiln-dl's `Kiln`
 * without kiln.loss, kiln.optim, kiln.data, kiln.metrics, kiln.Learner and kiln.io
 * (those are in kiln-dl's init()), on the inner backend: as Burn runs inference on `B`
 * rather than `Autodiff<B>` (`model.valid()`), its tensors record no graph
 * (`backendInfo().backend` is 'cpu'; `requireGrad()` and `backward()` throw `State` naming
 * kiln-dl; `noGrad(fn)` just runs fn; kiln.Gradients throws `State`), and a model's dropout is
 * the identity in train() mode as in eval(). Otherwise members behave as kiln-dl's.
 */
export type KilnInference = Pick<Kiln,
  'Tensor' | 'KilnError' | 'Module' | 'Param' | 'activation' | 'tidy' | 'keep' | 'dispose' |
  'noGrad' | 'memory' | 'seed' | 'backendInfo' | 'setNumThreads' | 'loadDeferred' | 'nn'>;

/** kiln-dl's members that kiln-dl/inference leaves out (KilnInference above). */
export const TRAINING_ONLY = ['loss', 'optim', 'data', 'metrics', 'Learner', 'io', 'Gradients'] as const;

/**
 * Makes each member of TRAINING_ONLY a non-enumerable getter that throws KilnError `State`
 * naming kiln-dl: a page that follows kiln-dl's examples under kiln-dl/inference
 * (`new kiln.Learner(...)`, `kiln.optim.adam()`) gets the package's error, not a TypeError on
 * `undefined`. Non-enumerable, so that Object.keys, spreading and logging `kiln` do not throw.
 */
function installTrainingGaps(kiln: Record<string, unknown>): void {
  for (const name of TRAINING_ONLY) {
    Object.defineProperty(kiln, name, {
      enumerable: false,
      get() {
        throw new KilnError('State', `kiln.${name}: not part of kiln-dl/inference, which runs trained models; ` +
          `training (kiln.loss, kiln.optim, kiln.data, kiln.metrics, kiln.Learner, gradients) and kiln.io are in kiln-dl: ` +
          `import { init } from 'kiln-dl'`);
      },
    });
  }
}

/** init()'s options of kiln-dl/inference: kiln-dl's InitOptions; only the single-thread core engine loads. */
export type InferenceInitOptions = InitOptions;

/**
 * Checks the options of kiln-dl/inference's init(): it loads the single-thread core engine.
 * @throws KilnError `Type` for a threads, numThreads or engine of the wrong type; `Config`
 *   for threads: true, numThreads > 1 or an engine other than 'core'.
 */
export function checkInferenceOptions(opts: unknown): void {
  const op = 'init (kiln-dl/inference)';
  if (opts === null || typeof opts !== 'object') throw new KilnError('Type', `${op}: options must be an object, got ${describe(opts)}`);
  const { threads, numThreads, engine, backend } = opts as Record<string, unknown>;
  if (backend !== undefined && backend !== 'cpu') {
    if (backend !== 'webgpu' && backend !== 'auto') throw new KilnError('Type', `${op}: backend must be 'cpu', got ${describe(backend)}`);
    throw new KilnError('Config', `${op}: this entry loads the cpu backend's core engine; the webgpu backend is kiln-dl's: \`import { init } from 'kiln-dl'; await init({ backend: 'webgpu' })\``);
  }
  if (threads !== undefined && typeof threads !== 'boolean' && threads !== 'auto') {
    throw new KilnError('Type', `${op}: threads must be true, false or 'auto', got ${describe(threads)}`);
  }
  if (threads === true) {
    throw new KilnError('Config', `${op}: this entry loads the single-thread core engine; for threads use kiln-dl: \`await init({ engine: 'full', threads: true })\``);
  }
  if (numThreads !== undefined) {
    if (typeof numThreads !== 'number' || !Number.isInteger(numThreads)) {
      throw new KilnError('Type', `${op}: numThreads must be an integer, got ${describe(numThreads)}`);
    }
    if (numThreads !== 1) throw new KilnError('Config', `${op}: this entry runs 1 thread, got numThreads ${numThreads}`);
  }
  if (engine !== undefined) {
    if (typeof engine !== 'string') throw new KilnError('Type', `${op}: engine must be 'core', got ${describe(engine)}`);
    if (engine !== 'core') {
      throw new KilnError('Config', `${op}: this entry loads the core engine, got engine ${JSON.stringify(engine)}; for the full engine use kiln-dl: \`await init({ engine: 'full' })\``);
    }
  }
}

/**
 * @param raw the instantiated Emscripten module (the single-thread core engine)
 * @param options init()'s options (autoDispose)
 * @param buildReason why this build was loaded (backendInfo().buildReason; select.ts chooseRelaxed)
 */
export function finishInference(
  raw: RawModule, options: { autoDispose?: boolean } = {}, buildReason = '', deferred?: DeferredControl,
): KilnInference {
  installBoundary(raw);
  // What the core engine lacks throws KilnError `State` naming it (engine_profile.ts).
  installEngineGaps(raw, 'inference');
  installInferenceGaps(raw);
  raw.KilnError = KilnError;
  const kiln: Record<string, unknown> = { KilnError };
  const internals = installTensor(kiln, raw, options);
  kiln.backendInfo = () => ({ ...raw.backendInfo(), maxThreads: 1, buildReason, engine: 'core', adapter: null });
  installDeferred(kiln, raw, deferred);
  kiln.setNumThreads = (n: unknown) => {
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      throw new KilnError('Type', `setNumThreads: expected an integer, got ${typeof n} ${String(n)}`);
    }
    if (n !== 1) throw new KilnError('Config', `setNumThreads: this build (${raw.backendInfo().build}) runs 1 to 1 threads, got ${n}`);
    raw.setNumThreads(n);
  };
  installModule(kiln, internals.engine);
  installParam(kiln, internals.engine);
  installNn(kiln, raw, internals.engine);
  bindLoss(internals.engine); // kiln.nn.functional's losses (no kiln.loss here)
  installEngineNames(kiln, raw, 'inference');
  installTrainingGaps(kiln);
  Object.defineProperty(kiln, '_internals', { value: internals, enumerable: false });
  return kiln as unknown as KilnInference;
}
