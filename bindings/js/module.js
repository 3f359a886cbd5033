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
 * @returns {import('./index.d.ts').Kiln}
 */
export function finishModule(raw, options = {}) {
  // C++ errors are thrown as `new Module.KilnError(code, message)` (js_tensor.cpp).
  raw.KilnError = KilnError;
  const kiln = { KilnError };
  const internals = installTensor(kiln, raw, options);
  // Models and training (H-train): kiln.nn, kiln.loss, kiln.optim, kiln.data, kiln.Learner.
  installTrain(kiln, raw, internals, installNn(kiln, raw, internals));
  Object.defineProperty(kiln, '_internals', { value: internals, enumerable: false });
  return kiln;
}
