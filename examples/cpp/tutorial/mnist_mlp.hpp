// The MNIST MLP of the tutorial's Steps 12 and 13 (784 -> 128 -> ReLU -> 10) with the
// methods the Learner calls (Burn's TrainStep / InferenceStep); Step 12's page shows the
// region below. Included by 12_learner.cpp and 13_save_load.cpp.
#pragma once
#include <array>
#include <cstdint>

#include "kiln/kiln.hpp"

namespace tutorial {
using namespace kiln;
using data::vision::MnistBatch;

// [model]
template <Backend B>
struct Mlp {
  nn::Linear<B> fc1;  // 784 -> 128
  nn::Relu activation;
  nn::Linear<B> fc2;  // 128 -> 10
  KILN_MODULE(Mlp, fc1, activation, fc2)

  Tensor<B, 2> forward(const Tensor<B, 3>& images) const {  // [batch, 28, 28] -> [batch, 10]
    const auto [batch_size, height, width] = images.dims();
    const auto x =
        images.template reshape<2>(std::array<std::int64_t, 2>{batch_size, height * width});
    return fc2.forward(activation.forward(fc1.forward(x)));
  }

  // What the Learner calls (Burn's TrainStep / InferenceStep).
  train::ClassificationOutput<B> inference_step(const MnistBatch<B>& batch) const {
    auto logits = forward(batch.images);
    auto loss = nn::loss::CrossEntropyLossConfig().init<B>().forward(logits, batch.targets);
    return {std::move(loss), std::move(logits), batch.targets};
  }
  train::TrainOutput<train::ClassificationOutput<B>> train_step(
      const MnistBatch<B>& batch) const requires AutodiffBackend<B> {
    auto item = inference_step(batch);
    auto grads = item.loss.backward();
    return {*this, std::move(grads), std::move(item)};
  }
};
// [/model]

}  // namespace tutorial
