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


/// The Burn book's guide ConvNet: images [batch_size, 28, 28] -> [batch_size, 1, 28, 28] ->
/// conv 1→8 3×3 -> dropout -> ReLU -> conv 8→16 3×3 -> dropout -> ReLU ->
/// adaptive average pool to 8×8 -> [batch_size, 1024] -> Linear 1024→hidden_size -> dropout
/// -> ReLU -> Linear hidden_size→10 -> logits [batch_size, 10].
template <Backend B>
struct ConvNet {
  nn::Conv2d<B> conv1;  // [b, 1, 28, 28] -> [b, 8, 26, 26]
  nn::Conv2d<B> conv2;  // [b, 8, 26, 26] -> [b, 16, 24, 24]
  nn::AdaptiveAvgPool2d pool;  // -> [b, 16, 8, 8]
  nn::Dropout dropout;
  nn::Linear<B> linear1;  // 1024 -> hidden_size
  nn::Linear<B> linear2;  // hidden_size -> 10
  nn::Relu activation;
  KILN_MODULE(ConvNet, conv1, conv2, pool, dropout, linear1, linear2, activation)

  Tensor<B, 2> forward(const Tensor<B, 3>& images) const {
    const auto [batch_size, height, width] = images.dims();
    auto x = images.template reshape<4>(std::array<std::int64_t, 4>{batch_size, 1, height, width});
    x = activation.forward(dropout.forward(conv1.forward(x)));
    x = activation.forward(dropout.forward(conv2.forward(x)));
    x = pool.forward(x);
    auto flat = x.template reshape<2>(std::array<std::int64_t, 2>{batch_size, 16 * 8 * 8});
    flat = activation.forward(dropout.forward(linear1.forward(flat)));
    return linear2.forward(flat);
  }
  kiln::train::TrainOutput<ClassificationOutput<B>> train_step(const MnistBatch<B>& batch) const
      requires kiln::AutodiffBackend<B> {
    return mnist::train_step(*this, batch);
  }
  ClassificationOutput<B> inference_step(const MnistBatch<B>& batch) const {
    return mnist::classify(*this, batch);
  }
};

struct ConvNetConfig {
  std::int64_t num_classes = 10;
  std::int64_t hidden_size = 512;
  double dropout = 0.5;
  KILN_CONFIG(ConvNetConfig, (), (num_classes, hidden_size, dropout))

  template <Backend B>
  ConvNet<B> init(const Device<B>& device = {}) const {
    return {nn::Conv2dConfig({1, 8}, {3, 3}).init<B>(device),
            nn::Conv2dConfig({8, 16}, {3, 3}).init<B>(device),
            nn::AdaptiveAvgPool2dConfig({8, 8}).init(),
            nn::DropoutConfig(dropout).init(),
            nn::LinearConfig(16 * 8 * 8, hidden_size).init<B>(device),
            nn::LinearConfig(hidden_size, num_classes).init<B>(device),
            nn::Relu{}};
  }
};

}  // namespace mnist
