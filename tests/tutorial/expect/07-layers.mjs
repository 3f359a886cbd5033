// Step 7's cells (web/tutorial/content/07-layers.md): output shapes from the layer
// formulas, values by hand (batch norm, pooling, dropout) and activations from their
// definitions (gelu from PyTorch 1.13, written in below).
import assert from 'node:assert/strict';
import { assertClose, get } from '../support/lines.mjs';

const F32 = 1e-6;

export default {
  's07-linear': (out) => {
    assert.deepEqual(get(out, 'linear.out'), [2, 128]);
    assert.deepEqual(get(out, 'linear.weight'), [128, 784]);   // [dOutput, dInput], PyTorch's layout
  },
  's07-conv': (out) => {
    assert.deepEqual(get(out, 'conv.same'), [2, 32, 28, 28]);
    assert.deepEqual(get(out, 'conv.stride2'), [2, 4, 13, 13]);  // floor((28 - 3) / 2) + 1
    assert.equal(get(out, 'conv.numParams'), 32 * 1 * 3 * 3 + 32);
  },
  's07-batchnorm': (out) => {
    // batch mean 4, biased variance (9 + 1 + 1 + 9) / 4 = 5, epsilon 1e-5
    const sd = Math.sqrt(5 + 1e-5);
    assertClose(get(out, 'normalized'), [1, 3, 5, 7].map((v) => (v - 4) / sd), 1e-5);
    assertClose(get(out, 'runningMean'), [0.1 * 4], F32);
    assertClose(get(out, 'runningVar'), [0.9 * 1 + 0.1 * (20 / 3)], F32);  // unbiased 20/3
    const rv = 0.9 + 0.1 * (20 / 3);
    assertClose(get(out, 'evalOutput'), [1, 3, 5, 7].map((v) => (v - 0.4) / Math.sqrt(rv + 1e-5)), 1e-5);
  },
  's07-dropout': (out) => {
    assert.deepEqual(get(out, 'dropout.values'), [0, 2]);     // dropped, or scaled by 1 / (1 - 0.5)
    // 1000 Bernoulli(0.5) draws: the zero fraction lies in 0.5 ± 0.08 (5 standard deviations).
    const z = get(out, 'dropout.zeroFraction');
    assert.ok(Math.abs(z - 0.5) < 0.08, `zero fraction ${z}`);
    assert.deepEqual(get(out, 'dropout.eval'), [[1, 1, 1, 1]]);
  },
  's07-pool': (out) => {
    // 1..16 in a 4x4 grid: the 2x2 blocks' maxima and the mean (1 + 16) / 2
    assert.deepEqual(get(out, 'maxPool'), [[[[6, 8], [14, 16]]]]);
    assert.deepEqual(get(out, 'adaptive'), [[[[8.5]]]]);
    assert.deepEqual(get(out, 'maxPool.shape'), [2, 32, 14, 14]);
  },
  's07-embedding': (out) => {
    assert.deepEqual(get(out, 'embedding.out'), [2, 3, 256]);
    assert.equal(get(out, 'embedding.isLookup'), true);
  },
  's07-activations': (out) => {
    const x = [-2, -0.5, 0, 0.5, 2];
    assert.deepEqual(get(out, 'relu'), [0, 0, 0, 0.5, 2]);
    assertClose(get(out, 'sigmoid'), x.map((v) => 1 / (1 + Math.exp(-v))), F32);
    // torch.nn.functional.gelu(torch.tensor([-2, -0.5, 0, 0.5, 2.])) with /usr/bin/python3 (torch 1.13)
    assertClose(get(out, 'gelu'), [-0.045500099658966064, -0.1542687863111496, 0, 0.3457311987876892, 1.9544999599456787], 1e-5);
    const z = x.reduce((s, v) => s + Math.exp(v), 0);
    assertClose(get(out, 'softmax'), x.map((v) => Math.exp(v) / z), F32);
    assertClose(get(out, 'logSoftmax'), x.map((v) => v - Math.log(z)), 1e-5);
    assert.deepEqual(get(out, 'reluLayer'), [0, 0, 0, 0.5, 2]);
  },
  's07-exercise': (out) => {
    assert.deepEqual(get(out, 'cnn.out'), [4, 10]);
    const n = get(out, 'cnn.numParams');
    const asWritten = (16 * 9 + 16) + (16 * 10 + 10);
    const solved = (16 * 9 + 16) + (32 * 16 * 9 + 32) + (32 * 10 + 10);
    assert.ok(n === asWritten || n === solved, `numParams ${n}`);
    // The summary's first row: conv2d to [batch_size, 16, 28, 28] with 160 parameters.
    assert.match(out, /conv2d\s+\[batch_size, 16, 28, 28\]\s+160/);
    if (n === solved) assert.match(out, /conv2d\s+\[batch_size, 32, 14, 14\]\s+4,?640/);
  },
};
