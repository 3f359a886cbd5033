// Step 4 of the tutorial: configs — describe a layer or model, then build it.
//
//   node examples/js/tutorial/04_config.mjs
//
// Burn separates what you want (a `#[derive(Config)]` struct with defaults and with_*
// builders, serializable to JSON) from building it (`config.init(&device)`). Kiln's C++ API
// keeps that pattern:
//
//   auto fc = kiln::nn::LinearConfig(784, 128).with_bias(true).init<B>(device);
//   config.save("model.json");  auto c = kiln::nn::SequentialConfig::load("model.json");
//
// In kiln-dl a config is a plain object, checked by the engine when the layer is built;
// `layer.config` gives it back with every default filled in, and JSON carries it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { init } from 'kiln-dl';

const kiln = await init();
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

// ---- A layer from its config ----
const fc = kiln.nn.linear({ dInput: 784, dOutput: 128 });   // Burn: LinearConfig::new(784, 128).init(&device)
show('linear.config', fc.config);                            // defaults filled in: bias, initializer
show('linear.numParams', fc.numParams);                      // 784 * 128 + 128
fc.dispose();

// ---- A model's config, saved and loaded ----
const spec = {
  layers: [
    { type: 'linear', dInput: 4, dOutput: 8 },
    { type: 'relu' },
    { type: 'dropout', prob: 0.3 },
    { type: 'linear', dInput: 8, dOutput: 3 },
  ],
};
const model = kiln.nn.sequential(spec);
const dir = mkdtempSync(join(tmpdir(), 'kiln-tutorial-'));
const file = join(dir, 'model.json');
writeFileSync(file, JSON.stringify(model.config, null, 2));  // Burn: config.save("model.json")
const rebuilt = kiln.nn.sequential(JSON.parse(readFileSync(file, 'utf8')));  // Config::load + init
show('config.roundTrip', JSON.stringify(rebuilt.config) === JSON.stringify(model.config));
show('config.layerTypes', rebuilt.config.layers.map((l) => l.type));
show('config.numParams', rebuilt.numParams);                  // (4*8 + 8) + (8*3 + 3)
model.dispose();
rebuilt.dispose();
rmSync(dir, { recursive: true });

// ---- A wrong config is an error that says what is wrong ----
for (const bad of [{ dInput: 4 }, { dInput: 4, dOutput: 2, bais: true }, { dInput: -1, dOutput: 2 }]) {
  try {
    kiln.nn.linear(bad).dispose();
    show('badConfig', 'accepted');
  } catch (e) {
    show('badConfig', { code: e.code, message: e.message });
  }
}

// ---- Exercise 4 ----
// An ExperimentConfig: hiddenSize required; dropout 0.5, activation 'relu', lr 1e-4 by
// default. In JS a function with defaults plays Burn's `new` + `with_*`; JSON saves it.
function experimentConfig({ hiddenSize, dropout = 0.5, activation = 'relu', lr = 1e-4 } = {}) {
  if (!Number.isInteger(hiddenSize) || hiddenSize < 1) {
    throw new kiln.KilnError('Config', `experimentConfig: hiddenSize must be an integer >= 1, got ${hiddenSize}`);
  }
  return { hiddenSize, dropout, activation, lr };
}
const config = { ...experimentConfig({ hiddenSize: 64 }), dropout: 0.3 };  // with_dropout(0.3)
const text = JSON.stringify(config);
const loaded = experimentConfig(JSON.parse(text));
show('exercise4.config', loaded);
show('exercise4.matches', JSON.stringify(loaded) === JSON.stringify(config));
// The config builds a model: hidden layer, activation, dropout, output.
const net = kiln.nn.sequential([
  { type: 'linear', dInput: 2, dOutput: loaded.hiddenSize },
  { type: loaded.activation },
  { type: 'dropout', prob: loaded.dropout },
  { type: 'linear', dInput: loaded.hiddenSize, dOutput: 1 },
]);
show('exercise4.numParams', net.numParams);                   // (2*64 + 64) + (64 + 1)
net.dispose();
