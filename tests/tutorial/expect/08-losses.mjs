// Step 8's cells: what each must print. Values by hand or from PyTorch 1.13 (noted).
import assert from 'node:assert/strict';
import { field, num } from '../support/lines.mjs';

/** The value of the first `name: value` line, as text. */
const near = (got, want, tol, what) => assert.ok(Math.abs(got - want) <= tol, `${what}: ${got}, expected ${want} ± ${tol}`);

export default {
  's08-cross-entropy': (out) => {
    // torch.nn.functional.cross_entropy([[2,1,.1],[.5,2.5,.3]], [0,1]) = 0.31853974
    // (by hand: ln(e^2+e+e^.1) - 2 = 0.41703, ln(e^.5+e^2.5+e^.3) - 2.5 = 0.22005, mean 0.31854)
    near(num(out, 'crossEntropy'), 0.31853974, 2e-6, 'crossEntropy');
    assert.equal(field(out, 'shape'), '[]');
    assert.equal(field(out, 'perRow'), '0.4170 0.2200');
    // torch ... label_smoothing=0.1 -> 0.43687308
    near(num(out, 'smoothed'), 0.43687308, 2e-6, 'label smoothing');
  },
  's08-mse': (out) => {
    // squared errors 0, 1, 4, 9 against ones
    assert.equal(num(out, 'mse'), 3.5);
    assert.equal(num(out, 'mseSum'), 14);
    assert.deepEqual(JSON.parse(field(out, 'mseNone')), [[0, 1], [4, 9]]);
    // Huber (delta 1): 0, 0.5, 1.5, 2.5 -> mean 1.125 (torch.nn.functional.huber_loss)
    assert.equal(num(out, 'huber'), 1.125);
  },
  's08-custom-loss': (out) => {
    // torch.nn.functional.binary_cross_entropy_with_logits([[3,-2],[0,40]], [[1,0],[1,0]]) = 10.217166
    near(num(out, 'customBce'), 10.217166, 1e-5, 'custom');
    near(num(out, 'builtinBce'), 10.217166, 1e-5, 'builtin');
    assert.equal(field(out, 'same'), 'true');
    // (sigmoid(z) - t) / 4, torch: [-0.0118565, 0.0298007, -0.125, 0.25]
    const g = field(out, 'grad').split(' ').map(Number);
    [-0.01185647, 0.02980073, -0.125, 0.25].forEach((w, i) => near(g[i], w, 2e-6, `grad[${i}]`));
  },
  's08-exercise': (out) => {
    // Recompute the cross-entropy of the printed logits and targets here, in float64.
    const logits = JSON.parse(field(out, 'logits'));
    const targets = JSON.parse(field(out, 'targets'));
    assert.equal(logits.length, 40);
    assert.equal(targets.length, 8);
    let sum = 0;
    for (let r = 0; r < 8; r++) {
      assert.ok(Number.isInteger(targets[r]) && targets[r] >= 0 && targets[r] < 5, `target ${targets[r]}`);
      const row = logits.slice(5 * r, 5 * r + 5);
      const m = Math.max(...row);
      const lse = m + Math.log(row.reduce((a, v) => a + Math.exp(v - m), 0));
      sum += lse - row[targets[r]];
    }
    near(num(out, 'builtin'), sum / 8, 1e-5, 'builtin vs float64');
    if (num(out, 'manual') === 0) {
      // as written: the placeholder 0, so the difference is the whole loss
      near(num(out, 'difference'), sum / 8, 1e-5, 'difference (placeholder)');
    } else {
      // solved: the loss by hand
      near(num(out, 'manual'), sum / 8, 1e-5, 'manual vs float64');
      assert.ok(num(out, 'difference') < 1e-6, `difference ${num(out, 'difference')}`);
    }
  },
};
