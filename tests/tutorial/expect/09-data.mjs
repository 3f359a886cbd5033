// Step 9's cells: what each must print. Values by hand (counts, shapes) or recomputed here.
import assert from 'node:assert/strict';
import { field, num } from '../support/lines.mjs';

/** The cell's 200 XOR samples, recomputed with exact BigInt arithmetic (x_{k+1} = a·x_k + c mod 2^32). */
function xorSamples() {
  let s = 12345n;
  const bit = () => {
    s = (s * 1103515245n + 12345n) % 2n ** 32n;
    return Number((s >> 16n) & 1n);
  };
  return Array.from({ length: 200 }, () => {
    const x1 = bit();
    const x2 = bit();
    return { x: [x1, x2], y: x1 ^ x2 };
  });
}

export default {
  's09-dataset': (out) => {
    assert.equal(num(out, 'length'), 3);
    assert.deepEqual(JSON.parse(field(out, 'get(1)')), { features: [5, 6, 7, 8], label: 1 });
    assert.deepEqual(JSON.parse(field(out, 'doubled.get(0).features')), [2, 4, 6, 8]);
    assert.equal(num(out, 'firstTwo.length'), 2);
    assert.deepEqual(field(out, 'shuffled labels').split(' ').sort(), ['0', '1', '2']);
  },
  's09-batcher': (out) => {
    assert.deepEqual(JSON.parse(field(out, 'inputs.shape')), [2, 4]);
    assert.equal(field(out, 'targets'), '[0,2] int32');
  },
  's09-loader': (out) => {
    const samples = xorSamples();
    assert.equal(num(out, 'batchesPerEpoch'), 13); // ceil(200 / 16)
    assert.match(out, /^batch 0: x \[16,2\] y \[16\]$/m);
    assert.match(out, /^batch 12: x \[8,2\] y \[8\]$/m); // 200 - 12·16 = 8
    assert.equal(num(out, 'itemsSeen'), 200);
    assert.equal(field(out, 'labelsAreXor'), 'true');
    assert.equal(num(out, 'ones'), samples.filter((s) => s.y === 1).length);
    assert.deepEqual(JSON.parse(field(out, 'firstItems')), samples.slice(0, 4).map((s) => s.x));
  },
  's09-state': (out) => {
    assert.equal(field(out, 'dtypes'), 'float32 int32');
    // After a whole epoch (ceil(200 / 64) = 4 batches) the next one starts: epoch 1, batch 0.
    assert.deepEqual(JSON.parse(field(out, 'state after one epoch')), { epoch: 1, batch: 0, seed: 7 });
    assert.equal(num(out, 'replayed batches'), 2); // batches 2 and 3 of 4
    assert.equal(field(out, 'same as before'), 'true');
  },
  's09-exercise': (out) => {
    const bs = num(out, 'batchSize');
    const dropLast = field(out, 'dropLast') === 'true';
    const batches = dropLast ? Math.floor(200 / bs) : Math.ceil(200 / bs);
    assert.equal(num(out, 'batches'), batches);
    assert.equal(num(out, 'items'), dropLast ? batches * bs : 200);
  },
};
