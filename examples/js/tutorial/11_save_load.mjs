// Step 11 of the tutorial: saving and loading a trained model.
//
//   node examples/js/tutorial/11_save_load.mjs
//
// Burn saves a module's record with a recorder (`model.save_file("m", &CompactRecorder::new())`,
// `load_file`); the architecture must match. Kiln saves records as SafeTensors with PyTorch's
// keys, so the same file loads in Kiln C++ (`model.load_file("m", SafetensorsRecorder{})`),
// in kiln-dl and in PyTorch (`model.load_state_dict(load_file("m.safetensors"))`):
//
//   model.save_file("xor_trained", kiln::record::SafetensorsRecorder{});      // Kiln C++
//
// In kiln-dl: `model.saveSafetensors()` gives the bytes; `kiln.io.save(path, model)` writes them
// atomically (Node); `kiln.io.saveToIndexedDB(name, model)` keeps them in a browser.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

class XorModel extends kiln.Module {
  constructor(hidden = 16) {
    super();
    this.fc1 = kiln.nn.linear({ dInput: 2, dOutput: hidden });
    this.fc2 = kiln.nn.linear({ dInput: hidden, dOutput: 2 });
  }
  forward(x) {
    return this.fc2.forward(this.fc1.forward(x).relu());
  }
}
const inputs = [[0, 0], [0, 1], [1, 0], [1, 1]];

// 1. Train until it converges.
function trainXor() {
  kiln.seed(3);
  const model = new XorModel();
  const optimizer = kiln.optim.adam({ lr: 0.05 });
  const lossFn = kiln.loss.crossEntropy();
  kiln.tidy(() => {
    const x = Tensor.fromData(inputs);
    const y = Tensor.fromData([0, 1, 1, 0], { dtype: 'int32' });
    for (let step = 0; step < 200; step++) {
      kiln.tidy(() => optimizer.step(model, lossFn.forward(model.forward(x), y).backward()));
    }
  });
  return model;
}
const predict = (model) => kiln.noGrad(() => kiln.tidy(() => {
  const logits = model.forward(Tensor.fromData(inputs));
  return { classes: Array.from(logits.argmax(1).dataSync()), logits: Array.from(logits.dataSync()) };
}));

const trained = trainXor().eval();
const atEnd = predict(trained);
show('trained.predictions', atEnd.classes);

// 2. Save.
const dir = mkdtempSync(join(tmpdir(), 'kiln-tutorial-'));
const path = join(dir, 'xor_trained.safetensors');
await kiln.io.save(path, trained);
show('file.bytes', statSync(path).size);

// 3. "A new program run": a fresh model of the same architecture, weights loaded from the file.
async function loadModel(file) {
  const model = new XorModel();              // random weights ...
  model.loadSafetensors(await kiln.io.load(file));   // ... replaced by the saved ones
  return model.eval();
}
const loaded = await loadModel(path);
const afterLoad = predict(loaded);
// 4. The loaded model predicts exactly what the trained one did.
show('loaded.predictions', afterLoad.classes);
show('loaded.sameLogits', afterLoad.logits.every((v, i) => v === atEnd.logits[i]));

// The state dict: the same names as PyTorch's state_dict() of the equivalent nn.Module.
const names = kiln.tidy(() => Object.keys(loaded.stateDict()));
show('stateDict.names', names);

// A file for another architecture is refused, naming what does not match; the model is unchanged.
const other = new XorModel(8);
try {
  other.loadSafetensors(await kiln.io.load(path));
  show('otherModel', 'loaded');
} catch (e) {
  show('otherModel.code', e.code);
  console.log(`otherModel.message: ${e.message.split('\n')[0]}`);
}

// Bonus: half precision halves the file (values rounded to float16, loaded back as float32).
const half = join(dir, 'xor_half.safetensors');
await kiln.io.save(half, trained, { dtype: 'float16' });
show('half.bytes', statSync(half).size);
const halfModel = await loadModel(half);
const halfPred = predict(halfModel);
show('half.predictions', halfPred.classes);
show('half.maxLogitDiff', Number(Math.max(...halfPred.logits.map((v, i) => Math.abs(v - atEnd.logits[i]))).toPrecision(2)));

for (const m of [trained, loaded, other, halfModel]) m.dispose();
rmSync(dir, { recursive: true });
show('liveTensors', kiln.memory().tensors);
