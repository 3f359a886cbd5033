// Step 5's cells (web/tutorial/content/05-config.md): configs filled with their defaults,
// JSON round trips, Config errors naming the field; counts of parameters by hand.
import assert from 'node:assert/strict';
import { get } from '../support/lines.mjs';

export default {
  's05-layer': (out) => {
    assert.equal(get(out, 'bias'), true);
    // Kaiming-uniform with gain 1/sqrt(3): PyTorch's nn.Linear default, U(-1/sqrt(fan_in), ...)
    const init = get(out, 'initializer');
    assert.ok(Math.abs(init.KaimingUniform.gain - 1 / Math.sqrt(3)) < 1e-12, JSON.stringify(init));
    assert.equal(get(out, 'numParams'), 784 * 128 + 128);
  },
  's05-json': (out) => {
    assert.equal(get(out, 'roundTrip'), true);
    assert.deepEqual(get(out, 'layers'), ['linear', 'relu', 'dropout', 'linear']);
    assert.equal(get(out, 'numParams'), (4 * 8 + 8) + (8 * 3 + 3));
    // The summary: one row per layer with its output shape.
    assert.match(out, /linear\s+\[batch_size, 8\]\s+40/);
    assert.match(out, /linear\s+\[batch_size, 3\]\s+27/);
  },
  's05-errors': (out) => {
    const lines = out.split('\n').filter((l) => l.startsWith('Config: '));
    assert.equal(lines.length, 4, out);
    assert.match(lines[0], /missing required field "dOutput"/);
    assert.match(lines[1], /unknown field "bais"/);
    assert.match(lines[2], /prob must be in \[0, 1\], got 1\.5/);
    assert.match(lines[3], /dInput is 3 but the previous layer outputs 8/);
    assert.doesNotMatch(out, /^accepted:/m);
  },
  's05-own': (out) => {
    assert.deepEqual(get(out, 'defaults'), { hiddenSize: 64, dropout: 0.5, activation: 'relu', lr: 1e-4 });
    assert.match(out, /^Config: experimentConfig: hiddenSize must be an integer >= 1, got undefined$/m);
  },
  's05-exercise': (out) => {
    const loaded = get(out, 'loaded');
    // As written the dropout is the default 0.5; solved, 0.3.
    assert.ok(loaded.dropout === 0.5 || loaded.dropout === 0.3, `dropout ${loaded.dropout}`);
    assert.deepEqual(loaded, { hiddenSize: 64, dropout: loaded.dropout, activation: 'relu', lr: 1e-4 });
    assert.equal(get(out, 'matches'), true);
    // the change makes a new object: the base config keeps the default 0.5
    assert.equal(get(out, 'base.dropout'), 0.5);
    assert.equal(get(out, 'dropoutLayer'), loaded.dropout);
    assert.equal(get(out, 'numParams'), (2 * 64 + 64) + (64 * 1 + 1));
  },
};
