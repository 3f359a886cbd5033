// Step 12's cells: what each must print. Counts and sizes by hand; MNIST's first labels and
// pixel range read from the IDX files with Python (noted); the training result by threshold
// (test accuracy above 97 %).
import assert from 'node:assert/strict';
import { field, num } from '../support/lines.mjs';

// 784·128 + 128 + 128·10 + 10
const NUM_PARAMS = 101770;

export default {
  's12-data': (out) => {
    assert.equal(num(out, 'train images'), 60000);
    assert.equal(num(out, 'test images'), 10000);
    assert.equal(num(out, 'batches per epoch'), 938); // ceil(60000 / 64)
    // train-labels-idx1-ubyte[0:10] and t10k-labels-idx1-ubyte[0:10] (Python)
    assert.equal(field(out, 'first train labels'), '5 0 4 1 9 2 1 3 1 4');
    assert.equal(field(out, 'first test labels'), '7 2 1 0 4 1 4 9 5 9');
    assert.equal(field(out, 'batch'), '[1,784] float32 [1] int32');
    // image 0 holds pixels 0 and 255 (Python): (0 - 0.1307) / 0.3081, (1 - 0.1307) / 0.3081
    assert.equal(field(out, 'normalised range'), '-0.4242 2.8215');
  },
  's12-model': (out) => {
    assert.equal(num(out, 'numParams'), NUM_PARAMS);
    // PyTorch nn.Sequential's state_dict keys (what the playground's model has)
    assert.equal(field(out, 'parameters'), '0.weight 0.bias 2.weight 2.bias');
    assert.match(out, /101,770/);
  },
  's12-store': (out) => {
    assert.deepEqual(JSON.parse(field(out, 'round trip')), { hello: 'IndexedDB' });
    assert.equal(field(out, 'missing'), 'undefined');
    assert.equal(field(out, 'entries'), 'hello.json'); // the one entry saved, the prefix removed
  },
  's12-fit': (out) => {
    const lines = out.split('\n').filter((l) => /^epoch \d+: /.test(l));
    assert.equal(lines.length, 4);
    const accuracies = lines.map((l) => Number(/test accuracy ([\d.]+)/.exec(l)[1]));
    const losses = lines.map((l) => Number(/train loss ([\d.]+)/.exec(l)[1]));
    assert.ok(losses[3] < losses[0], `the training loss should fall: ${losses}`);
    assert.equal(num(out, 'epochs'), 4);
    assert.ok(num(out, 'test accuracy') > 0.97, `test accuracy ${field(out, 'test accuracy')}`);
    assert.equal(num(out, 'test accuracy'), accuracies[3]);
    assert.ok(num(out, 'seconds') > 0);
  },
  's12-history': (out) => {
    assert.match(out, /0\.9[7-9]\d\d/); // the table holds the last epoch's test accuracy (> 97 %)
    // 3 files per epoch for 4 epochs, and latest.json
    assert.equal(num(out, 'checkpoint entries'), 13);
    assert.deepEqual(JSON.parse(field(out, 'latest')), { format: 'kiln learner checkpoint', epoch: 4 });
    assert.equal(field(out, 'epoch 4 files'), 'epoch-4/learner.json epoch-4/model.safetensors epoch-4/optimizer.safetensors');
    // float32 weights (4 bytes each) plus the SafeTensors header (8-byte length + JSON)
    const bytes = num(out, 'model bytes');
    assert.ok(bytes > 4 * NUM_PARAMS && bytes < 4 * NUM_PARAMS + 1024, `model bytes ${bytes}`);
  },
  's12-exercise': (out) => {
    const accuracies = field(out, 'test accuracies').split(' ').map(Number);
    const epochs = num(out, 'epochs run');
    assert.equal(accuracies.length, epochs);
    assert.ok(epochs >= 1 && epochs <= 10);
    const reason = field(out, 'stopReason');
    if (reason === 'earlyStopping') {
      // stopped at an epoch that did not beat the best before it
      assert.ok(accuracies[epochs - 1] <= Math.max(...accuracies.slice(0, epochs - 1)), `${accuracies}`);
    } else {
      assert.equal(reason, 'epochs');
      assert.equal(epochs, 10);
    }
    assert.equal(num(out, 'best test accuracy'), Math.max(...accuracies));
    assert.ok(Math.max(...accuracies) > 0.85, 'an MLP on 10,000 MNIST images passes 85 %');
  },
};
