// The worker's half of an export: the model's weights and its outputs on the first test
// items, taken together between two training slices so they describe the same model.
import { CHECK_LIMIT } from './setup.js';

/**
 * The trained weights and the page's outputs on the first test items.
 * @param {{save(): Uint8Array, predict(x: Float32Array): Float32Array}} session engine.js's Session
 * @param {{data: {test: {n: number, itemSize: number, fill: Function}}, step: number, progress: number}} trainer
 * @param {boolean} mnist whether the data are MNIST (fewer items are checked: CHECK_LIMIT)
 * @returns {{weights: Uint8Array, check: {count: number, values: Float32Array}, step: number, epoch: number}}
 */
export function exportSnapshot(session, trainer, mnist) {
  const { test } = trainer.data;
  const count = Math.min(test.n, mnist ? CHECK_LIMIT.mnist : CHECK_LIMIT.toy);
  const x = new Float32Array(count * test.itemSize);
  test.fill(x, null, 0, count);
  const values = Float32Array.from(session.predict(x));
  return { weights: session.save(), check: { count, values }, step: trainer.step, epoch: trainer.progress };
}
