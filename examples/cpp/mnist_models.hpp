#pragma once
// The models of the MNIST examples (Burn's MNIST example `model.rs`): each takes images
// [batch_size, 28, 28] and returns logits [batch_size, 10], and has the train/inference steps
// the Learner calls.
#include "mnist_common.hpp"

namespace mnist {

using kiln::Device;
using kiln::Tensor;
namespace nn = kiln::nn;

/// images [batch_size, 28, 28] -> flatten [batch_size, 784] -> Linear -> ReLU -> Linear ->
/// logits [batch_size, 10].
template <Backend B>
struct Mlp {
  nn::Linear<B> fc1;  // 784 -> d_hidden
  nn::Relu activation;
  nn::Linear<B> fc2;  // d_hidden -> 10
  KILN_MODULE(Mlp, fc1, activation, fc2)

  Tensor<B, 2> forward(const Tensor<B, 3>& images) const {
    const auto [batch_size, height, width] = images.dims();
    const auto x = images.template reshape<2>(std::array<std::int64_t, 2>{batch_size, height * width});
    return fc2.forward(activation.forward(fc1.forward(x)));
  }
  kiln::train::TrainOutput<ClassificationOutput<B>> train_step(
      const MnistBatch<B>& batch) const requires kiln::AutodiffBackend<B> {
    return mnist::train_step(*this, batch);
  }
  ClassificationOutput<B> inference_step(const MnistBatch<B>& batch) const {
    return mnist::classify(*this, batch);
  }
};

struct MlpConfig {
  std::int64_t d_hidden = 128;
  KILN_CONFIG(MlpConfig, (), (d_hidden))

  template <Backend B>
  Mlp<B> init(const Device<B>& device = {}) const {
    return {nn::LinearConfig(784, d_hidden).init<B>(device), nn::Relu{},
            nn::LinearConfig(d_hidden, 10).init<B>(device)};
  }
};

}  // namespace mnist
