// Step 10's cells: what each must print. Values by hand (noted).
import assert from 'node:assert/strict';
import { field, num } from '../support/lines.mjs';

export default {
  's10-create': (out) => {
    const adam = JSON.parse(field(out, 'adam'));
    assert.equal(adam.lr, 1e-3);
    assert.equal(adam.beta1, 0.9);
    assert.equal(adam.beta2, 0.999);
    assert.equal(adam.epsilon, 1e-8);
    const sgd = JSON.parse(field(out, 'sgd'));
    assert.equal(sgd.lr, 0.1);
    assert.equal(sgd.momentum, 0.9);
    assert.equal(sgd.nesterov, false);
    assert.equal(num(out, 'adam.steps'), 0);
  },
  's10-one-step': (out) => {
    // loss (w·x - 2.5)², w·x = 0.5 - 0.6 + 2.4 = 2.3: grad 2·(-0.2)·[1, 2, 3]
    assert.equal(field(out, 'grad'), '-0.4000 -0.8000 -1.2000');
    // SGD: w - 0.1·g = [0.54, -0.22, 0.92]
    assert.equal(field(out, 'sgd step'), '0.5400 -0.2200 0.9200');
    // Adam's first step: w - 0.1·g/(|g| + 1e-8) = w + 0.1
    assert.equal(field(out, 'adam step'), '0.6000 -0.2000 0.9000');
  },
  's10-model-step': (out) => {
    const before = num(out, 'lossBefore');
    const after = num(out, 'lossAfter');
    // A freshly initialised 2-class classifier starts near ln 2 = 0.693.
    assert.ok(before > 0.5 && before < 1, `lossBefore ${before}`);
    assert.ok(after < before, `one step should lower the loss: ${before} -> ${after}`);
    assert.equal(num(out, 'steps'), 1);
  },
  's10-accumulate': (out) => {
    assert.equal(num(out, 'accumulated backward passes'), 2);
    assert.ok(num(out, 'maxDiff') < 1e-6, `maxDiff ${field(out, 'maxDiff')}`);
    assert.equal(num(out, 'steps'), 2);
  },
  's10-exercise': (out) => {
    assert.ok(['adam', 'sgd', 'adamW', 'rmsProp'].includes(field(out, 'optimizer')));
    assert.ok(num(out, 'lastLoss') < num(out, 'firstLoss'), 'the loss should fall over 20 steps');
    assert.equal(num(out, 'steps'), 20);
  },
};
