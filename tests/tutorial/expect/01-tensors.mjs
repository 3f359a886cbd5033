// Step 1's cells (web/tutorial/content/01-tensors.md): what each must print. Values are
// worked out by hand from the cell's code; float32 values compared within float32 rounding.
import assert from 'node:assert/strict';
import { assertClose, get } from '../support/lines.mjs';

export default {
  's01-create': (out) => {
    assert.deepEqual(get(out, 'a.shape'), [2, 2]);
    assert.equal(get(out, 'a.dtype'), 'float32');
    assert.deepEqual(get(out, 'b.shape'), [3]);
    // The printed tensor: its rows and its kind.
    assert.match(out, /\[\[1\.0, 2\.0\],\s*\[3\.0, 4\.0\]\]/);
    assert.match(out, /kind:\s+"Float"/);
  },
  's01-factories': (out) => {
    assert.deepEqual(get(out, 'zeros.shape'), [3, 4]);
    assert.deepEqual(get(out, 'ones'), [[1, 1], [1, 1]]);
    assertClose(get(out, 'full'), [3.14, 3.14, 3.14, 3.14, 3.14], 1e-7);
    assert.deepEqual(get(out, 'likeA'), [[1, 1], [1, 1]]);
    // U(0, 1): every value in [0, 1); 16 draws are not all equal.
    const lo = get(out, 'uniform.min');
    const hi = get(out, 'uniform.max');
    assert.ok(lo >= 0 && hi < 1 && lo < hi, `uniform in [0, 1): min ${lo}, max ${hi}`);
    assert.deepEqual(get(out, 'normal.shape'), [4, 4]);
  },
  's01-kinds': (out) => {
    assert.deepEqual(parseWithDtype(out, 'labels'), [[0, 1, 2, 1], 'int32']);
    assert.deepEqual(parseWithDtype(out, 'range'), [[0, 1, 2, 3, 4], 'int32']);
    // a = [[1, 2], [3, 4]] > 2
    assert.deepEqual(parseWithDtype(out, 'mask'), [[[false, false], [true, true]], 'bool']);
  },
  's01-read': (out) => {
    const flat = /^flat: (.*) (Float32Array)$/m.exec(out);
    assert.ok(flat, out);
    assert.deepEqual(JSON.parse(flat[1].replace(/\s+/g, '')), [1, 2, 3, 4]);
    assert.deepEqual(get(out, 'nested'), [[1, 2], [3, 4]]);
    assert.equal(get(out, 'scalar'), 42);
    assert.match(out, /\[\[1\.00, 2\.00\],\s*\[3\.00, 4\.00\]\]/);
  },
  's01-exercise': (out) => {
    const identity = get(out, 'identity');
    const n = identity.length;
    assert.deepEqual(identity, Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))));
    // As written the cell keeps a 2x2 identity (false); the solution's 3x3 one matches eye(3).
    assert.equal(get(out, 'matchesEye'), n === 3);
    if (/^ints:/m.test(out)) assert.deepEqual(get(out, 'ints'), [10, 20, 30]);
    if (/^positive:/m.test(out)) assert.deepEqual(get(out, 'positive'), identity.map((row) => row.map((v) => v > 0)));
  },
};

/** A line `name: <array> <dtype>`, as `print('labels:', t.toArray(), t.dtype)` writes it. */
function parseWithDtype(out, name) {
  const m = new RegExp(`^${name}: (.*) (float32|int32|bool)$`, 'm').exec(out);
  assert.ok(m, `no "${name}: <values> <dtype>" line in:\n${out}`);
  return [JSON.parse(m[1].replace(/\s+/g, '')), m[2]];
}
