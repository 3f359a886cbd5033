// Step 3's cells (web/tutorial/content/03-ops.md): what each must print, worked out by
// hand from the inputs in the cell (float32 results within float32 rounding).
import assert from 'node:assert/strict';
import { assertClose, get } from '../support/lines.mjs';

const F32 = 1e-6;
const softmax = (row) => { const e = row.map(Math.exp); const s = e.reduce((p, q) => p + q); return e.map((v) => v / s); };

export default {
  's03-arithmetic': (out) => {
    assert.deepEqual(get(out, 'sum'), [[11, 22], [33, 44]]);
    assert.deepEqual(get(out, 'diff'), [[-9, -18], [-27, -36]]);
    assert.deepEqual(get(out, 'prod'), [[10, 40], [90, 160]]);
    assertClose(get(out, 'quot'), [[0.1, 0.1], [0.1, 0.1]], F32);
    assert.deepEqual(get(out, 'scaled'), [[3, 5], [7, 9]]);
    assert.deepEqual(get(out, 'neg'), [[-1, -2], [-3, -4]]);
    assert.deepEqual(get(out, 'broadcast'), [[101, 202], [103, 204]]);
  },
  's03-math': (out) => {
    assertClose(get(out, 'exp'), [1, Math.E, Math.E ** 2], F32);
    assertClose(get(out, 'sqrt'), [0, 1, Math.SQRT2], F32);
    assertClose(get(out, 'tanh'), [0, Math.tanh(1), Math.tanh(2)], F32);
    assert.deepEqual(get(out, 'squared'), [0, 1, 4]);
    assert.deepEqual(get(out, 'recip').map(Number), [Infinity, 1, 0.5]);
    assert.deepEqual(get(out, 'floor'), [-2, 2]);
  },
  's03-matmul': (out) => {
    // [[1·5 + 2·7, 1·6 + 2·8], [3·5 + 4·7, 3·6 + 4·8]]
    assert.deepEqual(get(out, 'product'), [[19, 22], [43, 50]]);
    assert.deepEqual(get(out, 'batched.shape'), [4, 2, 5]);
  },
  's03-reductions': (out) => {
    const sum = /^sum: (\S+) (.*)$/m.exec(out);
    assert.ok(sum, out);
    assert.equal(Number(sum[1]), 21);
    assert.deepEqual(JSON.parse(sum[2].replace(/\s+/g, '')), []);   // rank 0
    assert.deepEqual(get(out, 'sumDim0'), [[5, 7, 9]]);
    assert.deepEqual(get(out, 'sumDim1'), [[6], [15]]);
    assert.equal(get(out, 'mean'), 3.5);
    assert.equal(get(out, 'max'), 6);
    const arg = /^argmax1: (.*) (int32)$/m.exec(out);
    assert.ok(arg, out);
    assert.deepEqual(JSON.parse(arg[1].replace(/\s+/g, '')), [[2], [2]]);
  },
  's03-shapes': (out) => {
    assert.deepEqual(get(out, 'reshape'), [[1, 2, 3], [4, 5, 6]]);
    assert.deepEqual(get(out, 'flatten'), [6]);
    assert.deepEqual(get(out, 'unsqueeze'), [1, 2, 3]);
    assert.deepEqual(get(out, 'squeeze'), [2, 3]);
    assert.deepEqual(get(out, 'swapDims'), [[1, 4], [2, 5], [3, 6]]);
    assert.deepEqual(get(out, 'inferred'), [3, 2]);
  },
  's03-cat': (out) => {
    assert.deepEqual(get(out, 'cat'), [[1, 2], [3, 4]]);
    assert.deepEqual(get(out, 'stack'), [2, 1, 2]);
  },
  's03-slice': (out) => {
    assert.deepEqual(get(out, 'row0'), [[1, 2, 3]]);
    assert.deepEqual(get(out, 'col01'), [[1, 2], [4, 5], [7, 8]]);
    assert.deepEqual(get(out, 'single'), [[5]]);
    assert.deepEqual(get(out, 'lastCol'), [[3], [6], [9]]);
  },
  's03-compare': (out) => {
    assert.deepEqual(get(out, 'gt3'), [false, true, false]);
    assert.deepEqual(get(out, 'eq5'), [false, true, false]);
    assert.equal(get(out, 'countAbove3'), 1);
    assert.deepEqual(get(out, 'clipped'), [1, 3, 3]);
  },
  's03-exercise': (out) => {
    // As written: t - min and exp(t); solved: the normalisation and the softmax.
    const normalized = get(out, 'normalized');
    if (normalized[4] === 8) assert.deepEqual(normalized, [0, 2, 4, 6, 8]);
    else assertClose(normalized, [0, 0.25, 0.5, 0.75, 1], F32);
    const logits = [[1, 2, 3], [1, 1, 1]];
    const probs = logits.map(softmax);
    const byHand = get(out, 'byHand');
    if (Math.abs(byHand[1][0] - Math.E) < 1e-4) assertClose(byHand, logits.map((r) => r.map(Math.exp)), F32);
    else assertClose(byHand, probs, F32);
    assertClose(get(out, 'builtin'), probs, F32);
  },
};
