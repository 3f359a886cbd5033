// Tutorial Step 4 (web/tutorial/content/04-autodiff.md): gradients with the Autodiff
// backend decorator, tensors that get none, detach(), and valid(): a module moved to the
// inner backend, where no graph is built and dropout is the identity. Gradients are
// checked against the derivatives worked out by hand; the program exits 1 if one differs.
#include <iostream>

#include "kiln/kiln.hpp"

using namespace kiln;
using TB = Autodiff<Cpu>;  // Cpu's ops, plus backward() (Burn: Autodiff<NdArray>)

// [net]
/// A linear layer followed by dropout: enough to see what valid() changes.
template <Backend B>  // KILN_MODULE expects the backend parameter to be named B
struct Net {
  nn::Linear<B> fc;
  nn::Dropout dropout;
  KILN_MODULE(Net, fc, dropout)

  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {  // [batch, 3] -> [batch, 2]
    return dropout.forward(fc.forward(x));
  }
};
// [/net]

int main() {
  try {
    const Device<TB> device;
    // [first]
    const auto x = Tensor<TB, 1>::from_floats({1.f, 2.f, 3.f}, device).require_grad();
    const auto loss = x.powf_scalar(2.0).sum();  // 1 + 4 + 9 = 14
    const auto grads = loss.backward();
    const Tensor<Cpu, 1> dx = *x.grad(grads);  // d(sum x²)/dx = 2x: [2, 4, 6]
    // [/first]
    if (loss.into_scalar() != 14.f) return 1;
    dx.to_data().assert_eq(TensorData::from<float>({2.f, 4.f, 6.f}));

    // [data]
    const auto data = Tensor<TB, 1>::from_floats({5.f, 6.f, 7.f}, device);  // not tracked
    const auto grads2 = (x * data).sum().backward();
    const auto dx2 = x.grad(grads2);                           // d(sum x·data)/dx = data
    const bool data_has_grad = data.grad(grads2).has_value();  // false
    const auto cut = (x.detach() * 3.f + x).sum().backward();
    const auto dx3 = x.grad(cut);  // only the `+ x` path: [1, 1, 1]
    // [/data]
    dx2->to_data().assert_eq(TensorData::from<float>({5.f, 6.f, 7.f}));
    if (data_has_grad) return 1;
    dx3->to_data().assert_eq(TensorData::from<float>({1.f, 1.f, 1.f}));

    // [valid]
    TB::seed(0);
    const Net<TB> net{nn::LinearConfig(3, 2).init<TB>(device), nn::DropoutConfig(0.5).init()};
    const Net<Cpu> inference = net.valid();  // the same weights on Cpu: no graph, no dropout
    const auto input = Tensor<Cpu, 2>::ones({1, 3});
    const auto out = inference.forward(input);  // = fc(input), every run
    // [/valid]
    out.to_data().assert_approx_eq(inference.fc.forward(input).to_data(), Tolerance::exact());
    net.fc.forward(Tensor<TB, 2>::from_inner(input))
        .inner()
        .to_data()
        .assert_approx_eq(out.to_data(), Tolerance::default_f32());

    // [exercise]
    const auto w = Tensor<TB, 1>::from_floats({0.5f, -0.3f, 0.8f}, device).require_grad();
    const auto features = Tensor<TB, 1>::from_floats({1.f, 2.f, 3.f}, device);
    const float target = 2.5f;
    const auto y_hat = (w * features).sum();             // 0.5 - 0.6 + 2.4 = 2.3
    const auto mse = (y_hat - target).powf_scalar(2.0);  // (2.3 - 2.5)² = 0.04
    const auto dw = *w.grad(mse.backward());             // 2·(ŷ - y)·x = [-0.4, -0.8, -1.2]
    // [/exercise]
    dw.to_data().assert_approx_eq(TensorData::from<float>({-0.4f, -0.8f, -1.2f}),
                                  Tolerance::default_f32());
  } catch (const Error& e) {
    std::cerr << "04_autodiff: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
