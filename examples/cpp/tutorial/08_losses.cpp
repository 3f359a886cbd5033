// Step 8 of the tutorial (web/tutorial/content/08-losses.md shows the regions): the built-in
// losses and a custom one written with tensor ops, checked against the built-in.
// Expected values by hand and with PyTorch 1.13 (torch.nn.functional.cross_entropy,
// binary_cross_entropy_with_logits). Exit status 1 when a value is wrong.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Autodiff<Cpu>;

namespace {
bool near(double got, double want, double tol, const char* what) {
  const bool ok = std::abs(got - want) <= tol;
  std::cout << what << ": " << got;
  if (!ok) std::cout << "  WRONG, expected " << want;
  std::cout << "\n";
  return ok;
}
}  // namespace

// [custom_loss]
/// Binary cross-entropy from logits, written with tensor ops:
/// max(z, 0) - z·t + log(1 + exp(-|z|)), averaged over every element.
template <Backend BB, std::size_t D>
Tensor<BB, 1> bce_with_logits(const Tensor<BB, D>& logits, const Tensor<BB, D>& targets) {
  const auto max_val = logits.max_pair(zeros_like(logits));
  const auto loss = max_val - logits * targets + ((-logits.abs()).exp() + 1.f).log();
  return loss.mean();
}
// [/custom_loss]

int main() {
  bool ok = true;
  const Device<B> device;

  // [cross_entropy]
  // logits [batch_size, num_classes] (raw scores), targets [batch_size] (class indices)
  const auto logits = Tensor<B, 2>::from_data({{2.f, 1.f, 0.1f}, {0.5f, 2.5f, 0.3f}}, device);
  const auto targets = Tensor<B, 1, Int>::from_ints({0, 1}, device);
  const auto ce = nn::loss::CrossEntropyLossConfig().init<B>(device);
  const auto loss = ce.forward(logits, targets);  // [1]: log-softmax inside, then the mean
  std::cout << "crossEntropy: " << loss.into_scalar() << "\n";
  // [/cross_entropy]
  ok &= near(loss.into_scalar(), 0.31853974, 1e-6, "crossEntropy (torch: 0.31853974)");

  // [mse]
  const auto pred = Tensor<B, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, device);
  const auto target = ones_like(pred);
  const auto mse = nn::loss::MseLoss().forward(pred, target, nn::loss::Reduction::Mean);
  const auto mse_sum = nn::loss::MseLoss().forward(pred, target, nn::loss::Reduction::Sum);
  // [/mse]
  ok &= near(mse.into_scalar(), 3.5, 0, "mse (0 + 1 + 4 + 9) / 4");
  ok &= near(mse_sum.into_scalar(), 14, 0, "mseSum");

  // [custom_check]
  const auto z = Tensor<B, 2>::from_data({{3.f, -2.f}, {0.f, 40.f}}, device).require_grad();
  const auto t = Tensor<B, 2>::from_data({{1.f, 0.f}, {1.f, 0.f}}, device);
  const auto custom = bce_with_logits(z, t);
  const auto builtin =
      nn::loss::BinaryCrossEntropyLossConfig().with_logits(true).init<B>(device).forward(z, t);
  const auto grads = custom.backward();  // d/dz = (sigmoid(z) - t) / 4
  const Tensor<Cpu, 2> dz = *z.grad(grads);
  // [/custom_check]
  ok &= near(custom.into_scalar(), 10.217166, 1e-5, "customBce (torch: 10.217166)");
  ok &= near(builtin.into_scalar(), 10.217166, 1e-5, "builtinBce");
  const auto g = dz.to_data().to_vec<float>();
  const std::vector<double> want{-0.011856467, 0.02980073, -0.125, 0.25};  // torch
  for (std::size_t i = 0; i < want.size(); ++i) ok &= near(g[i], want[i], 1e-6, "customBce.grad");

  // [exercise]
  // Exercise: cross-entropy by hand (log-softmax, pick each row's target, negative mean).
  B::seed(11);
  const auto l = Tensor<B, 2>::random({8, 5}, Distribution::normal(0, 1), device);
  const auto y = Tensor<B, 1, Int>::random({8}, Distribution::uniform(0, 5), device);
  const auto by_hand = -activation::log_softmax(l, 1).gather(1, y.reshape<2>({8, 1})).mean();
  const auto built_in = ce.forward(l, y);
  // [/exercise]
  ok &= near(by_hand.into_scalar(), built_in.into_scalar(), 1e-6, "exercise.manual vs builtin");
  return ok ? 0 : 1;
}
