// Step 10 of the tutorial (web/tutorial/content/10-optimizers.md shows the regions): creating
// optimizers, one Adam step checked by hand, and gradient accumulation checked against the
// gradient of the whole batch. Exit status 1 when a value is wrong.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Autodiff<Cpu>;

template <Backend BB>
struct Mlp {
  nn::Linear<BB> fc1, fc2, fc3;
  nn::Relu activation;
  KILN_MODULE(Mlp, fc1, fc2, fc3, activation)

  Tensor<BB, 2> forward(const Tensor<BB, 2>& x) const {  // [batch, 2] -> [batch, 2]
    return fc3.forward(activation.forward(fc2.forward(activation.forward(fc1.forward(x)))));
  }
};

int main() {
  bool ok = true;
  auto check = [&ok](bool cond, const char* what) {
    std::cout << what << ": " << (cond ? "ok" : "WRONG") << "\n";
    ok &= cond;
  };
  const Device<B> device;

  // [create]
  auto adam = optim::AdamConfig().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8).init<B>();
  auto sgd = optim::SgdConfig()
                 .with_momentum(optim::MomentumConfig().with_momentum(0.9).with_dampening(0.0))
                 .init<B>();
  // [/create]

  // [one_step]
  // One weight row w = [0.5, -0.3, 0.8], loss = (w·x - 2.5)² with x = [1, 2, 3]: w·x = 2.3,
  // dloss/dw = 2·(2.3 - 2.5)·x = [-0.4, -0.8, -1.2]. Adam's first step moves each weight by
  // lr·g/(|g| + eps) against its gradient: +0.1 for lr = 0.1.
  auto fc = nn::LinearConfig(3, 1).with_bias(false).init<B>(device);
  fc.weight = module::Param<Tensor<B, 2>>(Tensor<B, 2>::from_data({{0.5f, -0.3f, 0.8f}}, device));
  const auto x = Tensor<B, 2>::from_data({{1.f, 2.f, 3.f}}, device);
  const auto loss = (fc.forward(x) - 2.5f).powf_scalar(2.0).sum();
  auto grads = optim::GradientsParams<B>::from_grads(loss.backward(), fc);
  fc = adam.step(0.1, fc, std::move(grads));
  std::cout << "w after one Adam step: " << fc.weight.val() << "\n";  // [[0.6, -0.2, 0.9]]
  // [/one_step]
  fc.weight.val().inner().to_data().assert_approx_eq(TensorData::from<float>({{0.6f, -0.2f, 0.9f}}),
                                                     Tolerance{1e-6, 1e-6});

  // [accumulate]
  B::seed(1);
  auto model =
      Mlp<B>{nn::LinearConfig(2, 16).init<B>(device), nn::LinearConfig(16, 16).init<B>(device),
             nn::LinearConfig(16, 2).init<B>(device), nn::Relu{}};
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<B>(device);
  const auto inputs =
      Tensor<B, 2>::from_data({{0.f, 0.f}, {0.f, 1.f}, {1.f, 0.f}, {1.f, 1.f}}, device);
  const auto targets = Tensor<B, 1, Int>::from_ints({0, 1, 1, 0}, device);

  // Two half batches, each loss divided by 2: their summed gradients are the whole batch's.
  optim::GradientsAccumulator<B> accumulator;
  for (std::int64_t start : {0, 2}) {
    const auto xs = inputs.slice({{start, start + 2}});
    const auto ys = targets.slice({{start, start + 2}});
    const auto half = loss_fn.forward(model.forward(xs), ys) / 2.f;
    accumulator.accumulate(model, optim::GradientsParams<B>::from_grads(half.backward(), model));
  }
  auto accumulated = accumulator.grads();
  // [/accumulate]
  auto whole = optim::GradientsParams<B>::from_grads(
      loss_fn.forward(model.forward(inputs), targets).backward(), model);
  double max_diff = 0;
  for (const auto* layer : {&model.fc1, &model.fc2, &model.fc3}) {
    const auto aw = accumulated.get<2>(layer->weight.id()), bw = whole.get<2>(layer->weight.id());
    const auto ab = accumulated.get<1>(layer->bias->id()), bb = whole.get<1>(layer->bias->id());
    if (!aw || !bw || !ab || !bb) return 1;
    max_diff = std::max({max_diff, static_cast<double>((*aw - *bw).abs().max().into_scalar()),
                         static_cast<double>((*ab - *bb).abs().max().into_scalar())});
  }
  std::cout << "accumulated vs whole batch, max difference: " << max_diff << "\n";
  check(max_diff < 1e-6, "accumulated gradients equal the whole batch's");

  // [accumulate_step]
  const float before = loss_fn.forward(model.forward(inputs), targets).into_scalar();
  model = adam.step(0.01, model, std::move(accumulated));
  const float after = loss_fn.forward(model.forward(inputs), targets).into_scalar();
  std::cout << "loss before " << before << ", after one step " << after << "\n";
  // [/accumulate_step]
  check(after < before, "one step lowers the loss");
  (void)sgd;
  return ok ? 0 : 1;
}
