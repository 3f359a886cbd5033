#pragma once
// XOR training for the tests (the tutorial's Step 10 loop, as examples/cpp/xor.cpp): the
// four corners with labels x0 XOR x1, one full batch per step, cross-entropy, Adam.
#include <cstdint>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test {

/// The four XOR inputs [4, 2]: (0,0) (0,1) (1,0) (1,1).
template <Backend B>
Tensor<B, 2> xor_inputs() {
  return Tensor<B, 2>::from_floats({{0.f, 0.f}, {0.f, 1.f}, {1.f, 0.f}, {1.f, 1.f}});
}

/// Their labels [4]: 0 1 1 0.
template <Backend B>
Tensor<B, 1, Int> xor_targets() {
  return Tensor<B, 1, Int>::from_ints({0, 1, 1, 0});
}

/// Class predicted for each row of logits [n, classes] -> n labels (first max on ties).
template <Backend B>
std::vector<std::int32_t> predictions(const Tensor<B, 2>& logits) {
  return logits.argmax(1).template squeeze_dim<1>(1).to_data().template to_vec<std::int32_t>();
}

/// Trains `model` (any module with `Tensor<AD, 2> forward(Tensor<AD, 2>)`, [4, 2] -> [4, 2])
/// for `steps` Adam steps of full-batch cross-entropy at learning rate `lr`.
template <AutodiffBackend AD, class M>
M train_xor(M model, int steps, double lr = 0.03) {
  auto optimizer = optim::AdamConfig().init<AD>();
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<AD>();
  const auto inputs = xor_inputs<AD>();
  const auto targets = xor_targets<AD>();
  for (int step = 0; step < steps; ++step) {
    const auto loss = loss_fn.forward(model.forward(inputs), targets);
    auto grads = optim::GradientsParams<AD>::from_grads(loss.backward(), model);
    model = optimizer.step(lr, model, std::move(grads));
  }
  return model;
}

}  // namespace kiln::test
