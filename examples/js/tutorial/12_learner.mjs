// Step 12 of the tutorial: the Learner — the training loop with metrics, validation,
// checkpoints and resume (Burn's docs: SupervisedTraining + Learner, TrainStep / InferenceStep,
// AccuracyMetric / LossMetric, with_file_checkpointer).
//
//   node examples/js/tutorial/12_learner.mjs
//
// Burn:   SupervisedTraining::new(dir, train_loader, valid_loader)
//           .metrics((AccuracyMetric::new(), LossMetric::new()))
//           .with_file_checkpointer(CompactRecorder::new()).num_epochs(10)
//           .launch(Learner::new(model, optim, lr));
// Kiln C++: the same names (kiln::train::SupervisedTraining, Learner, AccuracyMetric, ...).
// kiln-dl: new kiln.Learner(model, {optimizer, trainStep, metrics, checkpointer, ...}) and
// await learner.fit(trainLoader, {epochs, validLoader}); each step is the engine's guarded
// training step (a step whose loss, gradients or update are not finite changes nothing).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

class XorModel extends kiln.Module {
  constructor() {
    super();
    this.fc1 = kiln.nn.linear({ dInput: 2, dOutput: 16 });
    this.fc2 = kiln.nn.linear({ dInput: 16, dOutput: 2 });
  }
  forward(x) {
    return this.fc2.forward(this.fc1.forward(x).relu());
  }
}

// Data: XOR points with a little noise, 512 for training and 128 for validation.
function xorItems(n, seed) {
  let s = seed;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: n }, (_, i) => {
    const a = i & 1;
    const b = (i >> 1) & 1;
    return { x: Float32Array.of(a + 0.1 * (rand() - 0.5), b + 0.1 * (rand() - 0.5)), y: a ^ b };
  });
}
const batcher = kiln.data.defaultBatcher({ dtype: { y: 'int32' } });
const trainLoader = () => new kiln.data.DataLoader(xorItems(512, 1), { batchSize: 32, shuffle: true, seed: 7, batcher });
const validLoader = new kiln.data.DataLoader(xorItems(128, 2), { batchSize: 64, batcher });

// TrainStep: forward and loss of one batch; the Learner does backward and the optimizer step.
const ce = kiln.loss.crossEntropy();
const trainStep = (model, { x, y }) => {
  const output = model.forward(x);
  return { loss: ce.forward(output, y), output, targets: y };
};

function makeLearner(dir) {
  kiln.seed(3);
  const model = new XorModel();
  const learner = new kiln.Learner(model, {
    optimizer: kiln.optim.adam({ lr: 0.02 }),
    trainStep,
    metrics: [new kiln.metrics.Accuracy(), new kiln.metrics.Loss()],
    checkpointer: { directory: dir },
    seed: 42,
  });
  return { model, learner };
}

const dir = mkdtempSync(join(tmpdir(), 'kiln-learner-'));
const straightDir = mkdtempSync(join(tmpdir(), 'kiln-learner-'));

// ---- Train 4 epochs in one go ----
const a = makeLearner(straightDir);
const history = await a.learner.fit(trainLoader(), {
  epochs: 4,
  validLoader,
  progress: false,
  onEpochEnd: (log) => console.log(`epoch ${log.epoch}: train ${JSON.stringify(log.train)} valid ${JSON.stringify(log.valid)}`),
});
const lastEpoch = history.epochs[history.epochs.length - 1];
show('history.epochs', history.epochs.length);
show('valid.accuracy', lastEpoch.valid.accuracy);
show('train.lossFalls', history.epochs[0].train.loss > lastEpoch.train.loss);
const straightWeights = a.model.saveSafetensors();

// ---- The same run interrupted after 2 epochs, then resumed from its checkpoint ----
const b = makeLearner(dir);
await b.learner.fit(trainLoader(), { epochs: 2, validLoader, progress: false });
show('checkpoint.files', readdirSync(dir).length > 0);
b.learner.dispose();
b.model.dispose();
// "A new program run": new model, optimizer, learner and loader; resume continues at epoch 3
// with the saved weights, optimizer moments, schedule and data-loader position.
const c = makeLearner(dir);
const resumed = await c.learner.fit(trainLoader(), { epochs: 4, validLoader, progress: false, resume: true });
show('resume.history', resumed.epochs.map((e) => e.epoch));   // the checkpoint's history, then epochs 3 and 4
const resumedWeights = c.model.saveSafetensors();
show('resume.identicalWeights', resumedWeights.length === straightWeights.length && resumedWeights.every((v, i) => v === straightWeights[i]));

// ---- Inference with the trained model ----
c.model.eval();
const predictions = kiln.noGrad(() => kiln.tidy(() =>
  Array.from(c.model.forward(Tensor.fromData([[0, 0], [0, 1], [1, 0], [1, 1]])).argmax(1).dataSync())));
show('predictions', predictions);

// ---- Early stopping: stop when the validation loss stops improving ----
const d = makeLearner(mkdtempSync(join(tmpdir(), 'kiln-learner-')));
const early = await new kiln.Learner(d.model, {
  optimizer: kiln.optim.adam({ lr: 0.02 }),
  trainStep,
  metrics: [new kiln.metrics.Accuracy()],
  earlyStopping: { monitor: 'valid.accuracy', mode: 'max', patience: 0 },
}).fit(trainLoader(), { epochs: 50, validLoader, progress: false });
show('earlyStopping.stoppedBefore50', early.epochs.length < 50);

for (const l of [a, c, d]) {
  l.learner.dispose();
  l.model.dispose();
}
for (const p of [dir, straightDir]) rmSync(p, { recursive: true });
show('liveTensors', kiln.memory().tensors);
