// Step 6's cells (web/tutorial/content/06-module.md): a user module's parameter names and
// counts (by hand from the layer sizes), its forward pass against the same maths, and
// the gradients of a hand-written Param layer.
import assert from 'node:assert/strict';
import { assertClose, get } from '../support/lines.mjs';

export default {
  's06-define': (out) => {
    assert.deepEqual(get(out, 'names'), ['linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias']);
    assert.equal(get(out, 'numParams'), 4 * 32 + 32 + 32 * 2 + 2);
    assert.match(out, /^Mlp\b/m);
    assert.match(out, /linear1/);
  },
  's06-forward': (out) => {
    assert.deepEqual(get(out, 'output.shape'), [8, 2]);
    const diff = get(out, 'maxDifference');
    assert.ok(diff >= 0 && diff < 1e-5, `maxDifference ${diff}`);
  },
  's06-param': (out) => {
    assert.deepEqual(get(out, 'names'), ['scale', 'shift']);
    // y = x·scale + shift summed: d/dscale = Σ_rows x = [1 + 4, 2 + 5, 3 + 6], d/dshift = rows = 2
    assert.deepEqual(get(out, 'dScale'), [5, 7, 9]);
    assert.deepEqual(get(out, 'dShift'), [2, 2, 2]);
  },
  's06-modes': (out) => {
    assert.match(out, /^evalMode: false false false$/m);
    assert.match(out, /^trainMode: true true true$/m);
  },
  's06-exercise': (out) => {
    assert.deepEqual(get(out, 'output.shape'), [16, 3]);
    const names = get(out, 'names');
    if (names.length === 4) {
      // as written: 10 -> 64 -> 3
      assert.deepEqual(names, ['fc1.weight', 'fc1.bias', 'fc3.weight', 'fc3.bias']);
      assert.equal(get(out, 'numParams'), (10 * 64 + 64) + (64 * 3 + 3));
    } else {
      assert.deepEqual(names, ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias', 'fc3.weight', 'fc3.bias']);
      assert.equal(get(out, 'numParams'), (10 * 64 + 64) + (64 * 32 + 32) + (32 * 3 + 3));
    }
  },
};
