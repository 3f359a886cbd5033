// Sequence reversal in JS: a task only a model that reads the whole sequence can learn.
// Each item is 8 random digits; the target is the same digits in reverse order. A
// bidirectional LSTM reads the sequence both ways, so at position t it knows digit 7 - t:
//
//   digits [batch, 8] (int32)
//     -> embedding(10, 32)            [batch, 8, 32]
//     -> lstm(32, 64, bidirectional)  [batch, 8, 128]   (the output sequence)
//     -> linear(128, 10)              [batch, 8, 10]    (logits of each position's digit)
//
// trained with Adam on cross-entropy over every position (logits reshaped to [batch·8, 10]),
// then scored on 2000 held-out sequences: a sequence counts as right only when all 8 digits
// are. The same model with a transformer encoder (attention instead of recurrence) is
// `--model transformer`.
//
//   node examples/js/sequence.mjs [--model lstm|transformer] [--steps 1500 (lstm) | 500 (transformer)] [--min-accuracy 0.95] [--quiet]
//
// Exit status 0 when the exact-sequence accuracy on held-out sequences reaches --min-accuracy.
import { init } from 'kiln-dl';

const args = process.argv.slice(2);
const option = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const kind = option('--model', 'lstm');
const steps = Number(option('--steps', kind === 'lstm' ? 1500 : 500));
const minAccuracy = Number(option('--min-accuracy', 0.95));
const quiet = args.includes('--quiet');
const log = (...a) => {
  if (!quiet) console.log(...a);
};

const SEQ = 8;
const DIGITS = 10;
const BATCH = 64;

/** A small seeded generator (mulberry32), so that runs repeat. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n sequences: inputs and their reversals, Int32Array [n·8] each. */
function sequences(n, random) {
  const x = new Int32Array(n * SEQ);
  const y = new Int32Array(n * SEQ);
  for (let i = 0; i < n; i++) {
    for (let t = 0; t < SEQ; t++) x[i * SEQ + t] = Math.floor(random() * DIGITS);
    for (let t = 0; t < SEQ; t++) y[i * SEQ + t] = x[i * SEQ + SEQ - 1 - t];
  }
  return { x, y };
}

// LSTM, embedding and transformer layers are in the full engine (README "Core and full engine").
const kiln = await init({ engine: 'full' });

const layers = kind === 'lstm'
  ? [
      { type: 'embedding', nEmbedding: DIGITS, dModel: 32 },
      { type: 'lstm', dInput: 32, dHidden: 64, bias: true, bidirectional: true },
      { type: 'linear', dInput: 128, dOutput: DIGITS },
    ]
  : [
      { type: 'embedding', nEmbedding: DIGITS, dModel: 64 },
      { type: 'positionalEncoding', dModel: 64 },
      { type: 'transformerEncoder', dModel: 64, dFf: 128, nHeads: 4, nLayers: 2, dropout: 0 },
      { type: 'linear', dInput: 64, dOutput: DIGITS },
    ];
const model = kiln.nn.sequential({ layers }, { seed: 7 });
log(model.summary({ inputShape: [SEQ] }));

const optimizer = kiln.optim.adam({ lr: 3e-3 });
const lossFn = kiln.loss.crossEntropy();
const random = rng(1);

for (let step = 1; step <= steps; step++) {
  const { x, y } = sequences(BATCH, random);
  const loss = kiln.tidy(() => {
    const inputs = kiln.Tensor.fromData(x, { shape: [BATCH, SEQ], dtype: 'int32' });
    const targets = kiln.Tensor.fromData(y, { shape: [BATCH * SEQ], dtype: 'int32' });
    const logits = model.forward(inputs).reshape([BATCH * SEQ, DIGITS]);  // [batch·8, 10]
    const l = lossFn.forward(logits, targets);
    optimizer.step(model, l.backward());
    return l.item();
  });
  if (step === 1 || step % 250 === 0) log(`step ${String(step).padStart(4)}  loss ${loss.toFixed(4)}`);
}

// Held-out sequences (another seed): exact-sequence and per-digit accuracy.
model.eval();
const test = sequences(2000, rng(2));
const predicted = kiln.tidy(() => {
  const inputs = kiln.Tensor.fromData(test.x, { shape: [2000, SEQ], dtype: 'int32' });
  return model.forward(inputs).argmax(2).dataSync();  // [2000, 8]
});
let exact = 0;
let digits = 0;
for (let i = 0; i < 2000; i++) {
  let all = true;
  for (let t = 0; t < SEQ; t++) {
    const ok = predicted[i * SEQ + t] === test.y[i * SEQ + t];
    digits += ok ? 1 : 0;
    all &&= ok;
  }
  exact += all ? 1 : 0;
}
const accuracy = exact / 2000;
console.log(`${kind}: exact-sequence accuracy ${(100 * accuracy).toFixed(2)} % ` +
            `(${(100 * digits / (2000 * SEQ)).toFixed(2)} % of digits) on 2000 held-out sequences`);
const first = Array.from(test.x.subarray(0, SEQ)).join('');
const out = Array.from(predicted.subarray(0, SEQ)).join('');
console.log(`e.g. ${first} -> ${out}`);
model.dispose();
optimizer.dispose?.();
if (kiln.memory().tensors !== 0) {
  console.error(`leaked ${kiln.memory().tensors} tensors`);
  process.exit(1);
}
process.exit(accuracy >= minAccuracy ? 0 : 1);
