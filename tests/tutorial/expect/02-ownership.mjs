// Step 2's cells (web/tutorial/content/02-ownership.md): what each must print. Counts of
// live tensors are worked out from the cell's code (one per factory or op result).
import assert from 'node:assert/strict';
import { assertClose, get } from '../support/lines.mjs';

export default {
  's02-count': (out) => {
    assert.deepEqual(get(out, 'x'), [1, 2, 3]);
    assert.equal(get(out, 'created'), 2);                   // x and x.exp()
  },
  's02-dispose': (out) => {
    assertClose(get(out, 'w'), [1, 2, 3].map((v) => v + Math.exp(v)), 1e-6);
    assert.equal(get(out, 'alive'), 0);                      // x, y, w all disposed
    assert.equal(get(out, 'error'), 'Disposed');
  },
  's02-tidy': (out) => {
    assert.deepEqual(get(out, 'kept'), [3, 5, 7]);           // [1, 2, 3] * 2 + 1
    assert.equal(get(out, 'alive'), 1);                      // only the returned tensor
  },
  's02-clone': (out) => {
    assert.equal(get(out, 'sharedBuffer'), true);
    assert.deepEqual(get(out, 'copyAfterDispose'), [4, 5, 6]);
  },
  's02-exercise': (out) => {
    // As written: 5 tensors per call (input, mean, difference, std, result) x 100 calls;
    // solved with tidy: 0.
    const leaked = get(out, 'leaked');
    assert.ok(leaked === 500 || leaked === 0, `leaked: ${leaked}`);
    // mean 2.5, unbiased std sqrt(((1.5² + 0.5²) · 2) / 3) = sqrt(5 / 3)
    const std = Math.sqrt(5 / 3);
    assertClose(get(out, 'standardized'), [-1.5, -0.5, 0.5, 1.5].map((v) => v / std), 1e-6);
  },
};
