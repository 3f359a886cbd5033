// Step 11's cells: what each must print. Counts by hand; training results by threshold
// (XOR learned: accuracy exactly 1).
import assert from 'node:assert/strict';
import { field, num } from '../support/lines.mjs';

export default {
  's11-model': (out) => {
    // (2·16 + 16) + (16·16 + 16) + (16·2 + 2) = 48 + 272 + 34
    assert.equal(num(out, 'numParams'), 354);
    assert.equal(field(out, 'parameters'), 'fc1.weight fc1.bias fc2.weight fc2.bias fc3.weight fc3.bias');
  },
  's11-data': (out) => {
    assert.equal(num(out, 'items'), 800); // 4 patterns × 200
    assert.equal(num(out, 'batchesPerEpoch'), 25); // 800 / 32
  },
  's11-train': (out) => {
    const first = num(out, 'firstLoss');
    const last = num(out, 'lastLoss');
    assert.ok(first > 0 && first < 0.8, `first epoch's loss ${first}`); // starts below ln 2 + a margin
    assert.ok(last < 0.01, `the loss should be near 0 after 50 epochs, got ${last}`);
    assert.equal(num(out, 'steps'), 50 * 25);
    assert.match(out, /^epoch 50: loss /m);
  },
  's11-valid': (out) => {
    assert.equal(field(out, 'predictions'), '0 1 1 0'); // XOR of the four patterns
    assert.equal(num(out, 'accuracy'), 1);
    const probs = JSON.parse(field(out, 'probabilities')).map((r) => r.map(Number));
    [0, 1, 1, 0].forEach((cls, i) => {
      assert.ok(Math.abs(probs[i][0] + probs[i][1] - 1) < 2e-3, 'rows sum to 1');
      assert.ok(probs[i][cls] > 0.9, `pattern ${i}: p(${cls}) = ${probs[i][cls]}`);
    });
  },
  's11-exercise': (out) => {
    const lines = out.split('\n').filter((l) => l.startsWith('hidden '));
    assert.ok(lines.length >= 1, out);
    for (const l of lines) {
      const m = /^hidden (\d+): stoppedAt (\d+), accuracy ([\d.]+)$/.exec(l);
      assert.ok(m, l);
      const [stoppedAt, accuracy] = [Number(m[2]), Number(m[3])];
      assert.ok(stoppedAt >= 1 && stoppedAt <= 50);
      assert.ok([0, 0.25, 0.5, 0.75, 1].includes(accuracy), `accuracy of 4 points: ${accuracy}`);
      if (stoppedAt < 50) assert.equal(accuracy, 1, 'early stopping only at 100 %');
    }
  },
};
