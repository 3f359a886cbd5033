// Internal: turns the Emscripten module into the public `kiln` object, for both entry
// points (index.js, node.js). Each part of the API installs itself onto `kiln`:
//   installTensor(kiln, raw, options) -> internals (tensor.js: Tensor, tidy, memory, ...)
// Further parts (nn, optim, data, Learner) are installed after it with
//   installX(kiln, raw, internals)
// where internals = { raw, Tensor, Gradients, wrap, unwrap, wrapGradients,
// unwrapGradients, fail, checks } (see tensor.js).
import { KilnError } from './errors.js';
import { installTensor } from './tensor.js';
// Models, losses, optimizers, data, Learner (H-train).
import { installNn } from './nn.js';
import { installTrain } from './train.js';

/**
 * @param {object} raw the instantiated Emscripten module
 * @param {object} [options] init()'s options (autoDispose)
 * @param {{maxThreads: number}} [build] the most threads the loaded build can run (1 for
 *   the single-threaded build; the Web Workers started + 1 for the threaded one)
 * @returns {import('./index.d.ts').Kiln}
 */
export function finishModule(raw, options = {}, build = { maxThreads: 1 }) {
  // C++ errors are thrown as `new Module.KilnError(code, message)` (js_tensor.cpp).
  raw.KilnError = KilnError;
  const kiln = { KilnError };
  const internals = installTensor(kiln, raw, options);
  const { maxThreads } = build;
  kiln.backendInfo = () => ({ ...raw.backendInfo(), maxThreads });
  kiln.setNumThreads = (n) => {
    if (typeof n !== 'number' || !Number.isInteger(n)) {
      throw new KilnError('Type', `setNumThreads: expected an integer, got ${typeof n} ${String(n)}`);
    }
    if (n < 1 || n > maxThreads) {
      throw new KilnError('Config', `setNumThreads: this build (${raw.backendInfo().build}) runs 1 to ${maxThreads} threads, got ${n}`);
    }
    raw.setNumThreads(n);
  };
  // Models and training (H-train): kiln.nn, kiln.loss, kiln.optim, kiln.data, kiln.Learner.
  installTrain(kiln, raw, internals, installNn(kiln, raw, internals));
  Object.defineProperty(kiln, '_internals', { value: internals, enumerable: false });
  return kiln;
}
