// Step 3 of the tutorial: autodiff — requireGrad, backward, grad; and turning it off.
//
//   node examples/js/tutorial/03_autodiff.mjs
//
// Burn adds gradients by decorating a backend: Autodiff<NdArray>. Kiln's C++ API does the
// same (`using TB = kiln::Autodiff<kiln::Cpu>;`), and kiln-dl's float32 tensors live on
// that decorated backend, so every float tensor can be tracked:
//
//   auto x = Tensor<TB, 1>::from_floats({1.f, 2.f, 3.f}, device).require_grad();   // C++
//   auto grads = x.powf_scalar(2.f).sum().backward();
//   auto dx = x.grad(grads);                     // std::optional<Tensor<Cpu, 1>>
import { init } from 'kiln-dl';

const kiln = await init();
const { Tensor } = kiln;
const show = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);

kiln.tidy(() => {
  // ---- A first gradient ----
  const x = Tensor.fromData([1, 2, 3]).requireGrad();  // a tracked leaf
  const y = x.powf(2);                                  // [1, 4, 9]
  const loss = y.sum();                                 // 14
  const grads = loss.backward();                        // Burn: loss.backward()
  show('loss', loss.item());
  show('dx', Array.from(x.grad(grads).dataSync()));     // d(sum x^2)/dx = 2x = [2, 4, 6]
  grads.dispose();

  // A tensor that does not depend on a tracked leaf has no gradient:
  const data = Tensor.fromData([5, 6, 7]);
  const grads2 = x.mul(data).sum().backward();
  show('dxTimesData', Array.from(x.grad(grads2).dataSync())); // = data
  show('dataHasGrad', data.grad(grads2) !== undefined && data.grad(grads2) !== null);
  grads2.dispose();

  // ---- No graph: kiln.noGrad (Burn: model.valid(); PyTorch: torch.no_grad()) ----
  const untracked = kiln.noGrad(() => x.mul(2).sum());
  show('noGrad.value', untracked.item());
  let noGraphError = null;
  try {
    untracked.backward();
  } catch (e) {
    noGraphError = e instanceof kiln.KilnError ? e.code : String(e);
  }
  show('noGrad.backwardError', noGraphError);

  // detach(): the same values, cut from the graph.
  const cut = x.detach().mul(3).add(x).sum();
  const grads3 = cut.backward();
  show('dxThroughDetach', Array.from(x.grad(grads3).dataSync()));  // only the `+ x` path: [1, 1, 1]
  grads3.dispose();

  // ---- Exercise 3 ----
  // w = [0.5, -0.3, 0.8] tracked, x = [1, 2, 3] data, yHat = (w * x).sum(), target 2.5,
  // loss = (yHat - target)^2; check dloss/dw_i = 2 (yHat - target) x_i by hand.
  const w = Tensor.fromData([0.5, -0.3, 0.8]).requireGrad();
  const xs = Tensor.fromData([1, 2, 3]);
  const yHat = w.mul(xs).sum();
  const target = 2.5;
  const mse = yHat.sub(target).powf(2);
  const g = mse.backward();
  const dw = Array.from(w.grad(g).dataSync());
  const yHatValue = 0.5 * 1 - 0.3 * 2 + 0.8 * 3;        // 2.3
  const byHand = [1, 2, 3].map((xi) => 2 * (yHatValue - target) * xi);
  show('exercise3.yHat', Number(yHat.item().toFixed(5)));
  show('exercise3.loss', Number(mse.item().toFixed(5)));
  show('exercise3.dw', dw.map((v) => Number(v.toFixed(5))));
  show('exercise3.byHand', byHand.map((v) => Number(v.toFixed(5))));
  g.dispose();
});
show('liveTensors', kiln.memory().tensors);
