// Step 7 of the tutorial: loss functions — built-in ones and your own.
//
//   node examples/js/tutorial/07_losses.mjs
//
// Burn: CrossEntropyLossConfig::new().init(&device) (takes logits, applies log-softmax
// itself, as PyTorch's nn.CrossEntropyLoss), MseLoss::new(). Kiln's C++ API has the same
// names (nn::loss::CrossEntropyLossConfig().init<B>(device), nn::loss::MseLoss()); in kiln-dl
// they are kiln.loss.crossEntropy(), kiln.loss.mse(), ... with `forward(output, target)`.
// A custom loss is just a function of tensors returning a scalar tensor.
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);
const r6 = (v) => Number(v.toFixed(6));

kiln.tidy(() => {
  // ---- Cross-entropy: logits [batch, classes], int32 targets [batch] ----
  const logits = Tensor.fromData([[2, 1, 0.1], [0.5, 2.5, 0.3]]);
  const targets = Tensor.fromData([0, 1], { dtype: 'int32' });
  const ce = kiln.loss.crossEntropy();
  show('crossEntropy', r6(ce.forward(logits, targets).item()));

  // ---- MSE: same shapes ----
  const pred = Tensor.fromData([[1, 2], [3, 4]]);
  const target = Tensor.fromData([[1, 1], [1, 1]]);
  show('mse', kiln.loss.mse().forward(pred, target).item());              // (0 + 1 + 4 + 9) / 4
  show('mseSum', kiln.loss.mse({ reduction: 'sum' }).forward(pred, target).item());

  // ---- A custom loss: binary cross-entropy from logits, numerically stable ----
  // loss = max(z, 0) - z * t + log(1 + exp(-|z|)), averaged (Burn's chapter writes the same).
  function bceWithLogits(z, t) {
    const maxVal = z.maxPair(Tensor.zerosLike(z));
    return maxVal.sub(z.mul(t)).add(z.abs().neg().exp().add(1).log()).mean();
  }
  const z = Tensor.fromData([[3, -2], [0, 40]]).requireGrad();
  const t = Tensor.fromData([[1, 0], [1, 0]]);
  const custom = bceWithLogits(z, t);
  show('customBce', r6(custom.item()));
  show('builtinBce', r6(kiln.loss.binaryCrossEntropy({ logits: true }).forward(z, t).item()));
  // Its gradient is (sigmoid(z) - t) / n, autodiff gives it without any extra code.
  const g = custom.backward();
  show('customBce.grad', Array.from(z.grad(g).dataSync()).map(r6));
  g.dispose();

  // ---- Exercise 7 ----
  // Random logits [8, 5] and int32 targets [8] in 0..5; cross-entropy two ways: the built-in
  // loss, and by hand: log-softmax, pick each row's target column (gather), negative mean.
  kiln.seed(11);
  const l = Tensor.random([8, 5], { normal: [0, 1] });
  const y = Tensor.random([8], { uniform: [0, 5] }).floor().int();
  const builtin = ce.forward(l, y).item();
  const manualCrossEntropy = (x, labels) =>
    x.logSoftmax(1).gather(1, labels.reshape([8, 1])).mean().neg();
  const manual = manualCrossEntropy(l, y).item();
  show('exercise7.builtin', r6(builtin));
  show('exercise7.manual', r6(manual));
  show('exercise7.logits', Array.from(l.dataSync()));
  show('exercise7.targets', Array.from(y.dataSync()));
});
show('liveTensors', kiln.memory().tensors);
