// Step 13's cells: what each must print. Sizes and names by hand; MNIST's labels read from
// the IDX file with Python (noted); training results by threshold (test accuracy > 97 %);
// the "Weights from PyTorch" cells against what PyTorch wrote and computed
// (web/tutorial/assets/xor.json, by make_xor_pt.py: keys, shapes, logits).
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { field, num } from '../support/lines.mjs';

const ASSETS = fileURLToPath(new URL('../../../web/tutorial/assets/', import.meta.url));
const TORCH = JSON.parse(readFileSync(`${ASSETS}xor.json`, 'utf8'));
const XOR_PT_BYTES = statSync(`${ASSETS}xor.pt`).size;
/** The Kiln Sequential's keys: PyTorch's without the `net.` of the attribute. */
const KILN_KEYS = ['0.weight', '0.bias', '2.weight', '2.bias'];

const NUM_PARAMS = 101770; // 784·128 + 128 + 128·10 + 10
// t10k-labels-idx1-ubyte[0:10] (Python)
const FIRST_TEST_LABELS = '7 2 1 0 4 1 4 9 5 9';

export default {
  's13-setup': (out) => {
    // Step 12 trains and checkpoints 4 epochs; each run of the resume cell adds one.
    const epoch = num(out, 'weights from checkpoint epoch');
    assert.ok(Number.isInteger(epoch) && epoch >= 4, `checkpoint epoch ${epoch}`);
    // whichever epoch it is, the Learner measured it above 97 % (Step 12's threshold)
    assert.ok(num(out, 'test accuracy recorded there') > 0.97, field(out, 'test accuracy recorded there'));
    assert.equal(num(out, 'test images'), 10000);
  },
  's13-save': (out) => {
    assert.equal(field(out, 'stored'), 'true');
    const bytes = num(out, 'bytes');
    assert.ok(bytes > 4 * NUM_PARAMS && bytes < 4 * NUM_PARAMS + 1024, `bytes ${bytes}`);
    const tensors = field(out, 'tensors').split(', ').sort();
    assert.deepEqual(tensors, ['0.bias F32 [128]', '0.weight F32 [128,784]', '2.bias F32 [10]', '2.weight F32 [10,128]']);
    const config = JSON.parse(field(out, 'config'));
    assert.deepEqual(config.layers.map((l) => l.type), ['linear', 'relu', 'linear']);
  },
  's13-load': (out) => {
    // random weights: about chance (1 in 10) on 1,000 digits
    const before = num(out, 'accuracy before loading');
    assert.ok(before < 0.3, `an untrained model should be near chance, got ${before}`);
    assert.ok(num(out, 'accuracy after loading') > 0.95, field(out, 'accuracy after loading'));
    assert.equal(field(out, 'same predictions as the trained model'), 'true');
    assert.equal(num(out, 'max logit difference'), 0);
    assert.equal(field(out, 'other model'), 'Format');
    // [128, 784] stored, [64, 784] expected: the message names the key and both shapes
    assert.match(field(out, 'message'), /"0\.weight" has shape \[128, 784\], module expects \[64, 784\]/);
  },
  's13-infer': (out) => {
    assert.equal(field(out, 'labels'), FIRST_TEST_LABELS);
    const predicted = field(out, 'predicted').split(' ');
    const right = predicted.filter((p, i) => p === FIRST_TEST_LABELS.split(' ')[i]).length;
    assert.ok(right >= 9, `${right} of the first 10 test digits`);
    // test item 42 is a 4 (Python: t10k-labels-idx1-ubyte[42])
    const m = /^item 42: predicted (\d), label (\d), probability ([\d.]+)$/m.exec(out);
    assert.ok(m, out);
    assert.equal(m[2], '4');
    assert.ok(num(out, 'test accuracy') > 0.97, field(out, 'test accuracy'));
    // the loaded model scores on the 10,000 test images exactly what the Learner recorded for
    // the checkpoint it came from (Step 12's epoch 4, or a later one after the resume cell)
    assert.equal(field(out, 'test accuracy'), field(out, 'recorded in the checkpoint'));
    assert.match(out, /@/); // the digit drawn in text
  },
  's13-playground': (out) => {
    assert.equal(field(out, 'link'), '../#data=mnist&layers=d128-relu&weights=idb:tutorial-mnist-mlp');
  },
  's13-pt-read': (out) => {
    assert.equal(num(out, 'bytes'), XOR_PT_BYTES);
    for (const [key, shape] of Object.entries(TORCH.keys)) {
      assert.equal(field(out, key), `[${shape.join(', ')}] float32`, key);
    }
    assert.equal(out.split('\n').filter((l) => l.startsWith('net.')).length, 4);
  },
  's13-pt-load': (out) => {
    // as saved: every key refused (missing 0.*, 2.*; unexpected net.*), nothing loaded
    assert.equal(field(out, 'as saved'), 'Value');
    assert.match(field(out, 'message'), /missing "0\.weight"/);
    assert.match(field(out, 'message'), /unexpected "net\.0\.weight"/);
    assert.equal(field(out, 'applied'), KILN_KEYS.join(' '));
    assert.equal(field(out, 'missing'), '0 unexpected: 0');
    assert.deepEqual(field(out, 'remapped').split(', ').sort(), KILN_KEYS.map((k) => `net.${k} -> ${k}`).sort());
    const logits = field(out, 'logits').split(' ').map(Number);
    assert.equal(logits.length, 4);
    logits.forEach((v, i) => assert.ok(Math.abs(v - TORCH.logits[i]) <= 1e-5, `logit ${i}: Kiln ${v}, PyTorch ${TORCH.logits[i]}`));
    assert.equal(field(out, 'predictions'), TORCH.targets.join(' '));
    assert.equal(field(out, 'predictions'), '0 1 1 0');
  },
  's13-pt-partial': (out) => {
    // the file's output layer [1, 8] does not fit the new [3, 8]: refused even when partial
    assert.equal(field(out, 'whole file'), 'Shape');
    // the module's shape [3, 8], the file's [1, 8], named by both keys
    assert.match(field(out, 'message'), /"2\.weight" \(from "net\.2\.weight"\) has shape \[3, 8\], got \[1, 8\]/);
    assert.match(field(out, 'message'), /"2\.bias" \(from "net\.2\.bias"\) has shape \[3\], got \[1\]/);
    assert.match(field(out, 'message'), /nothing was loaded/);
    assert.equal(field(out, 'applied'), '0.weight 0.bias');
    assert.equal(field(out, 'missing'), '2.weight 2.bias');
    assert.equal(num(out, 'mismatched'), 0);
    assert.equal(field(out, 'first layer from the file'), 'true');
    assert.equal(field(out, 'new head unchanged'), 'true');
  },
  's13-exercise': (out) => {
    const dtype = field(out, 'dtype');
    const [bytes, , full] = field(out, 'bytes').split(' ').map(Number);
    const [acc, , acc32] = field(out, 'test accuracy').split(' ');
    const changed = num(out, 'predictions that changed');
    if (dtype === 'float32') {
      assert.equal(bytes, full);
      assert.equal(acc, acc32);
      assert.equal(changed, 0);
    } else {
      assert.equal(dtype, 'float16');
      // 2 bytes per weight instead of 4, plus the header
      assert.ok(bytes > 2 * NUM_PARAMS && bytes < 2 * NUM_PARAMS + 1024, `bytes ${bytes}`);
      assert.ok(Math.abs(Number(acc) - Number(acc32)) < 0.005);
      assert.ok(changed < 50, `${changed} of 10,000 predictions changed`);
    }
  },
  's13-resume': (out) => {
    const saved = num(out, 'checkpoint epoch');
    assert.ok(Number.isInteger(saved) && saved >= 4, `Step 12 checkpoints 4 epochs, got ${saved}`);
    // continues after the checkpoint: not from epoch 1
    assert.equal(num(out, 'resumed at epoch'), saved + 1);
    assert.ok(num(out, 'resumed at epoch') > 1);
    const epochs = field(out, 'epochs in history').split(' ').map(Number);
    assert.deepEqual(epochs, Array.from({ length: saved + 1 }, (_, i) => i + 1));
    // the checkpoint's weights (already above 97 %), not random ones (about 10 %)
    assert.ok(num(out, 'test accuracy at resume') > 0.97, field(out, 'test accuracy at resume'));
    assert.ok(num(out, 'test accuracy after') > 0.97, field(out, 'test accuracy after'));
  },
};
