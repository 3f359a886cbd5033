// Step 10 of the tutorial: the full training loop, written out (no Learner) — XOR.
//
//   node examples/js/tutorial/10_training_loop.mjs
//
// Burn's loop: for each batch, forward, loss, `loss.backward()`,
// `GradientsParams::from_grads(grads, &model)`, `model = optim.step(lr, model, grads)`.
// Kiln's C++ loop is the same code; in kiln-dl the optimizer updates the module in place:
// `optimizer.step(model, grads)`. Wrap each step in kiln.tidy so its tensors are freed.
//
//   for (auto [inputs, targets] : loader) {                        // Kiln C++
//     auto loss = loss_fn.forward(model.forward(inputs), targets);
//     auto grads = GradientsParams<TB>::from_grads(loss.backward(), model);
//     model = optim.step(lr, model, std::move(grads));
//   }
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

// ---- Model ----
class XorModel extends kiln.Module {
  constructor({ input = 2, hidden = 16, output = 2 } = {}) {
    super();
    this.fc1 = kiln.nn.linear({ dInput: input, dOutput: hidden });
    this.fc2 = kiln.nn.linear({ dInput: hidden, dOutput: hidden });
    this.fc3 = kiln.nn.linear({ dInput: hidden, dOutput: output });
  }
  forward(x) {
    return this.fc3.forward(this.fc2.forward(this.fc1.forward(x).relu()).relu());
  }
}

// ---- Data: the four XOR points, repeated 200 times ----
const patterns = [[[0, 0], 0], [[0, 1], 1], [[1, 0], 1], [[1, 1], 0]];
const samples = [];
for (let i = 0; i < 200; i++) for (const [x, y] of patterns) samples.push({ x, y });
const dataset = new kiln.data.InMemDataset(samples);
const batcher = (items) => ({
  inputs: Tensor.fromData(items.map((s) => s.x)),
  targets: Tensor.fromData(items.map((s) => s.y), { dtype: 'int32' }),
});

function train({ hidden = 16, epochs = 50, lr = 1e-2, earlyStop = true } = {}) {
  kiln.seed(42);
  const model = new XorModel({ hidden });
  const optimizer = kiln.optim.adam({ lr });
  const lossFn = kiln.loss.crossEntropy();
  const loader = new kiln.data.DataLoader(dataset, { batchSize: 32, shuffle: true, seed: 42, batcher });
  const testInput = Tensor.fromData(patterns.map(([x]) => x));
  const log = [];
  let stoppedAt = epochs;
  for (let epoch = 1; epoch <= epochs; epoch++) {
    let epochLoss = 0;
    let batches = 0;
    for (const { inputs, targets } of loader) {
      epochLoss += kiln.tidy(() => {
        const logits = model.forward(inputs);            // forward
        const loss = lossFn.forward(logits, targets);     // loss
        const grads = loss.backward();                    // backward
        optimizer.step(model, grads);                     // update the parameters
        return loss.item();
      });
      batches++;
      kiln.dispose([inputs, targets]);
    }
    // ---- Exercise 10: validation accuracy after each epoch, early stopping at 100 % ----
    model.eval();
    const predictions = kiln.noGrad(() => kiln.tidy(() => Array.from(model.forward(testInput).argmax(1).dataSync())));
    model.train();
    const accuracy = predictions.filter((p, i) => p === patterns[i][1]).length / patterns.length;
    if (epoch === 1 || epoch % 10 === 0) console.log(`epoch ${String(epoch).padStart(3)} | loss ${(epochLoss / batches).toFixed(4)} | valid accuracy ${(100 * accuracy).toFixed(0)} %`);
    log.push({ epoch, loss: epochLoss / batches, accuracy, predictions });
    if (earlyStop && accuracy === 1) {
      stoppedAt = epoch;
      break;
    }
  }
  testInput.dispose();
  return { model, log, stoppedAt };
}

const { model, log, stoppedAt } = train({ epochs: 50, earlyStop: false });
show('loss.first', Number(log[0].loss.toFixed(4)));
show('loss.last', Number(log[log.length - 1].loss.toFixed(4)));
show('predictions', log[log.length - 1].predictions);        // should be 0 1 1 0
show('finalAccuracy', log[log.length - 1].accuracy);
model.dispose();

// Exercise 10: early stopping, and hidden sizes 4 and 64.
for (const hidden of [4, 16, 64]) {
  const r = train({ hidden, epochs: 50 });
  show(`earlyStop.hidden${hidden}`, { stoppedAt: r.stoppedAt, accuracy: r.log[r.log.length - 1].accuracy });
  r.model.dispose();
}
show('liveTensors', kiln.memory().tensors);
