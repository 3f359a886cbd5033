// Step 9 of the tutorial: optimizers, one step at a time, and gradient accumulation.
//
//   node examples/js/tutorial/09_optimizers.mjs
//
// Burn is functional: `let grads = GradientsParams::from_grads(loss.backward(), &model);
// model = optim.step(lr, model, grads);` — no zero_grad, the gradients are consumed. Kiln's C++
// API is the same code. kiln-dl keeps the two calls and updates the module in place:
// `optimizer.step(model, loss.backward())` (any kiln.Module, a Sequential, or a list of tensors).
//
//   auto optim = kiln::optim::AdamConfig().with_beta_1(0.9).with_epsilon(1e-8).init<TB>();  // C++
//   model = optim.step(1e-3, model, GradientsParams<TB>::from_grads(loss.backward(), model));
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);
const r6 = (v) => Number(v.toFixed(6));

// ---- Creating optimizers (defaults are PyTorch's; optimizer.config shows them filled in) ----
const adam = kiln.optim.adam({ lr: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8 });
show('adam.config', adam.config);
const sgd = kiln.optim.sgd({ lr: 0.1, momentum: 0.9, dampening: 0, nesterov: false });
show('sgd.config', sgd.config);

// ---- One step by hand: what Adam's first step does ----
// After one step Adam's bias-corrected moments are m = g, v = g², so every parameter moves
// by -lr · g / (|g| + eps): about -lr · sign(g).
const w = kiln.tidy(() => new kiln.Param(Tensor.fromData([0.5, -0.3, 0.8])));   // a Param copies its value
kiln.tidy(() => {
  const x = Tensor.fromData([1, 2, 3]);
  const loss = w.mul(x).sum().sub(2.5).powf(2);       // (w·x - 2.5)², w·x = 2.3
  const grads = loss.backward();
  show('step.grad', Array.from(w.grad(grads).dataSync()).map(r6));   // 2 (2.3 - 2.5) x
  kiln.optim.adam({ lr: 0.1 }).step([w], grads);
});
show('step.w', Array.from(w.dataSync()).map(r6));

// ---- Exercise 9: one batch, one step, the loss before and after ----
class Mlp extends kiln.Module {
  constructor() {
    super();
    this.fc1 = kiln.nn.linear({ dInput: 2, dOutput: 16 });
    this.fc2 = kiln.nn.linear({ dInput: 16, dOutput: 16 });
    this.fc3 = kiln.nn.linear({ dInput: 16, dOutput: 2 });
  }
  forward(x) {
    return this.fc3.forward(this.fc2.forward(this.fc1.forward(x).relu()).relu());
  }
}
kiln.seed(1);
const model = new Mlp();
const optimizer = kiln.optim.adam({ lr: 0.01 });
const ce = kiln.loss.crossEntropy();
const x = Tensor.fromData([[0, 0], [0, 1], [1, 0], [1, 1]]);
const y = Tensor.fromData([0, 1, 1, 0], { dtype: 'int32' });
const before = kiln.tidy(() => {
  const loss = ce.forward(model.forward(x), y);
  optimizer.step(model, loss.backward());               // backward -> step
  return loss.item();
});
const after = kiln.tidy(() => kiln.noGrad(() => ce.forward(model.forward(x), y).item()));
show('exercise9.lossBefore', r6(before));
show('exercise9.lossAfter', r6(after));
show('exercise9.changed', before !== after);
show('exercise9.steps', optimizer.steps);

// ---- Gradient accumulation: the gradients of two half batches, one step ----
// Accumulated gradients of the halves (each loss a mean over 2 items, so / 2 makes the
// mean over 4) equal the gradient of the whole batch.
const accumulator = new kiln.optim.GradientsAccumulator();
kiln.tidy(() => {
  for (const [lo, hi] of [[0, 2], [2, 4]]) {
    const xs = x.slice([[lo, hi]]);
    const ys = y.slice([[lo, hi]]);
    accumulator.accumulate(model, ce.forward(model.forward(xs), ys).div(2).backward());
  }
});
const accumulated = accumulator.grads();
const whole = kiln.tidy(() => ce.forward(model.forward(x), y).backward());
const diff = kiln.tidy(() => {
  let max = 0;
  for (const [name, p] of Object.entries(model.namedParameters())) {
    const a = p.grad(accumulated);
    const b = p.grad(whole);
    max = Math.max(max, a.sub(b).abs().max().item());
  }
  return max;
});
show('accumulation.maxDiff', diff < 1e-6);
optimizer.step(model, accumulated);
show('accumulation.steps', optimizer.steps);
accumulated.dispose();
whole.dispose();
for (const t of [w, x, y]) t.dispose();
model.dispose();
show('liveTensors', kiln.memory().tensors);
