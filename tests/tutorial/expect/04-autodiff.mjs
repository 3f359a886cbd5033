// Step 4's cells (web/tutorial/content/04-autodiff.md): gradients against the derivatives
// worked out by hand, and what noGrad / eval() switch off.
import assert from 'node:assert/strict';
import { assertClose, get } from '../support/lines.mjs';

export default {
  's04-first': (out) => {
    assert.equal(get(out, 'loss'), 14);                        // 1 + 4 + 9
    assert.deepEqual(get(out, 'dx'), [2, 4, 6]);               // 2x
  },
  's04-what': (out) => {
    assert.deepEqual(get(out, 'dx'), [5, 6, 7]);               // d(Σ x·data)/dx = data
    assert.equal(get(out, 'dataHasGrad'), false);
    assert.deepEqual(get(out, 'dxThroughDetach'), [1, 1, 1]);  // only the + x term
  },
  's04-check': (out) => {
    // d/dx (x·sin x) = sin x + x·cos x at x = 1, 2, 3
    const exact = [1, 2, 3].map((v) => Math.sin(v) + v * Math.cos(v));
    assertClose(get(out, 'autodiff'), exact, 1e-5);
    // Central differences with h = 0.01 in float32: error O(h²) plus rounding.
    assertClose(get(out, 'numeric'), exact, 2e-3);
  },
  's04-nograd': (out) => {
    assert.equal(get(out, 'noGrad.value'), 12);                // 2·(1 + 2 + 3)
    assert.equal(get(out, 'noGrad.requiresGrad'), false);
    assert.equal(get(out, 'backwardError'), 'State');
  },
  's04-eval': (out) => {
    assert.equal(get(out, 'train.requiresGrad'), true);
    const zeros = get(out, 'train.zeros');
    assert.ok(Number.isInteger(zeros) && zeros >= 0 && zeros <= 4, `train.zeros: ${zeros}`);
    assert.equal(get(out, 'eval.requiresGrad'), false);
    assert.equal(get(out, 'eval.repeatable'), true);
    assert.equal(get(out, 'training'), true);
  },
  's04-exercise': (out) => {
    const yHat = 0.5 * 1 - 0.3 * 2 + 0.8 * 3;                  // 2.3
    assertClose(get(out, 'yHat'), yHat, 1e-6);
    assertClose(get(out, 'loss'), (yHat - 2.5) ** 2, 1e-5);
    const dw = [1, 2, 3].map((xi) => 2 * (yHat - 2.5) * xi);  // [-0.4, -0.8, -1.2]
    assertClose(get(out, 'dw'), dw, 1e-5);
    // As written byHand is zeros (match false); solved, it equals dw (match true).
    const byHand = get(out, 'byHand');
    const solved = byHand.some((v) => v !== 0);
    if (solved) assertClose(byHand, dw, 1e-5);
    else assert.deepEqual(byHand, [0, 0, 0]);
    assert.equal(get(out, 'match'), solved);
  },
};
