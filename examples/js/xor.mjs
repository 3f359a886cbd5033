// XOR in JS: the Burn tutorial's training loop (Step 10) with kiln-dl, written out step by
// step: forward, loss, backward, optimizer step, in a loop over epochs.
//
//   node examples/js/xor.mjs [--epochs 200] [--quiet]
//
// Model 2 -> 16 -> ReLU -> 2 (logits of the classes 0 and 1), Adam (lr 0.03), cross-entropy
// on the four XOR points, one batch of 4 per epoch; the loss is printed at epoch 1 and every
// 20th. Then the same model is trained again with kiln.Learner (one call into WebAssembly per
// batch) to show the short form. Exit status 0 when both predict 0 1 1 0, 1 otherwise.
import { init } from 'kiln-dl';

const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : dflt;
};
const epochs = flag('--epochs', 200);
const quiet = args.includes('--quiet');
const log = (...a) => {
  if (!quiet) console.log(...a);
};

const kiln = await init();
const spec = {
  layers: [
    { type: 'linear', dInput: 2, dOutput: 16 },
    { type: 'relu' },
    { type: 'linear', dInput: 16, dOutput: 2 },
  ],
};

// ---- the tutorial's loop, by hand
const model = kiln.nn.sequential(spec, { seed: 42 });
const optimizer = kiln.optim.adam({ lr: 0.03 });
const lossFn = kiln.loss.crossEntropy();
const inputs = kiln.Tensor.fromData([[0, 0], [0, 1], [1, 0], [1, 1]]);
const targets = kiln.Tensor.fromData([0, 1, 1, 0], { dtype: 'int32' });

for (let epoch = 1; epoch <= epochs; epoch++) {
  const loss = kiln.tidy(() => {
    const logits = model.forward(inputs);           // [4, 2]
    const l = lossFn.forward(logits, targets);      // [1]
    const grads = l.backward();                     // gradients of every parameter
    optimizer.step(model, grads);                   // model's parameters updated in place
    return l.item();
  });
  if (epoch === 1 || epoch % 20 === 0) log(`epoch ${String(epoch).padStart(3)}  loss ${loss.toFixed(4)}`);
}

model.eval();
const predicted = kiln.tidy(() => Array.from(model.forward(inputs).argmax(1).dataSync()));
log(`predictions (manual loop): ${predicted.join(' ')}`);

// ---- the same with kiln.Learner: one WebAssembly call per batch
const model2 = kiln.nn.sequential(spec, { seed: 42 });
const learner = new kiln.Learner(model2, { optimizer: kiln.optim.adam({ lr: 0.03 }) });
const data = kiln.data.fromArrays(Float32Array.from([0, 0, 0, 1, 1, 0, 1, 1]), Int32Array.from([0, 1, 1, 0]), { itemShape: [2] });
const history = await learner.fit(data, { epochs, batchSize: 4 });
const probs = learner.predict(Float32Array.from([0, 0, 0, 1, 1, 0, 1, 1]));
const predicted2 = [0, 1, 2, 3].map((i) => (probs[2 * i + 1] > probs[2 * i] ? 1 : 0));
log(`Learner: final loss ${history.loss.at(-1).toFixed(4)}, accuracy ${(100 * history.accuracy.at(-1)).toFixed(0)} %, predictions ${predicted2.join(' ')}`);

kiln.dispose([inputs, targets]);
for (const o of [model, optimizer, learner, model2, data, learner.optimizer]) o.dispose();

const ok = predicted.join(' ') === '0 1 1 0' && predicted2.join(' ') === '0 1 1 0';
if (!ok) console.error('xor: expected predictions 0 1 1 0');
process.exit(ok ? 0 : 1);
