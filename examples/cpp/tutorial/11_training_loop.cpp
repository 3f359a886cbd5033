// Step 11 of the tutorial (web/tutorial/content/11-training-loop.md shows the regions): the
// whole training loop written out — XOR learned by a 2-16-16-2 MLP. Exit status 1 unless the
// inference model predicts 0 1 1 0 (accuracy 1).
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <vector>

#include "kiln/kiln.hpp"

using namespace kiln;

// [model]
template <Backend B>
struct XorModel {
  nn::Linear<B> fc1, fc2, fc3;
  nn::Relu relu;
  KILN_MODULE(XorModel, fc1, fc2, fc3, relu)

  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {  // [batch, 2] -> logits [batch, 2]
    const auto h1 = relu.forward(fc1.forward(x));
    const auto h2 = relu.forward(fc2.forward(h1));
    return fc3.forward(h2);
  }
};

struct XorModelConfig {
  std::int64_t input = 2, hidden = 16, output = 2;
  KILN_CONFIG(XorModelConfig, (), (input, hidden, output))

  template <Backend B>
  XorModel<B> init(const Device<B>& device = {}) const {
    return {nn::LinearConfig(input, hidden).init<B>(device),
            nn::LinearConfig(hidden, hidden).init<B>(device),
            nn::LinearConfig(hidden, output).init<B>(device), nn::Relu{}};
  }
};
// [/model]

// [data]
struct XorSample {
  float x[2];
  std::int32_t y;
};

template <Backend B>
struct XorBatcher {
  std::pair<Tensor<B, 2>, Tensor<B, 1, Int>> batch(std::vector<XorSample> items,
                                                   const Device<B>& device) const {
    const auto n = static_cast<std::int64_t>(items.size());
    std::vector<float> xs;
    std::vector<std::int32_t> ys;
    for (const auto& s : items) {
      xs.insert(xs.end(), {s.x[0], s.x[1]});
      ys.push_back(s.y);
    }
    return {Tensor<B, 2>::from_data(TensorData(Shape{n, 2}, std::move(xs)), device),
            Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, std::move(ys)), device)};
  }
};

data::InMemDataset<XorSample> make_xor_dataset() {
  std::vector<XorSample> samples;
  for (int i = 0; i < 200; ++i) {  // the four patterns, 200 times each
    samples.push_back({{0, 0}, 0});
    samples.push_back({{0, 1}, 1});
    samples.push_back({{1, 0}, 1});
    samples.push_back({{1, 1}, 0});
  }
  return data::InMemDataset(std::move(samples));
}
// [/data]

int main() {
  using TrainB = Autodiff<Cpu>;
  using InferB = Cpu;
  const Device<TrainB> device;
  TrainB::seed(42);

  // [train]
  const double lr = 1e-2;
  const int num_epochs = 50;
  auto model = XorModelConfig().init<TrainB>(device);
  auto optim = optim::AdamConfig().init<TrainB>();
  const auto loader = data::DataLoaderBuilder<TrainB, XorSample,
                                              std::pair<Tensor<TrainB, 2>, Tensor<TrainB, 1, Int>>>(
                          XorBatcher<TrainB>{})
                          .batch_size(32)
                          .shuffle(42)
                          .build(make_xor_dataset());
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<TrainB>(device);

  for (int epoch = 1; epoch <= num_epochs; ++epoch) {
    double epoch_loss = 0;
    int n_batches = 0;
    for (const auto& [inputs, targets] : *loader) {
      const auto logits = model.forward(inputs);           // forward
      const auto loss = loss_fn.forward(logits, targets);  // loss
      auto grads = optim::GradientsParams<TrainB>::from_grads(loss.backward(), model);
      model = optim.step(lr, model, std::move(grads));  // update
      epoch_loss += loss.into_scalar();
      ++n_batches;
    }
    if (epoch == 1 || epoch % 10 == 0) {
      std::cout << "epoch " << std::setw(3) << epoch << " | loss " << std::fixed
                << std::setprecision(4) << epoch_loss / n_batches << "\n";
    }
  }
  // [/train]

  // [valid]
  const XorModel<InferB> model_valid = model.valid();  // no autodiff: runs on Cpu
  const auto test_input =
      Tensor<InferB, 2>::from_data({{0.f, 0.f}, {0.f, 1.f}, {1.f, 0.f}, {1.f, 1.f}});
  const auto classes = model_valid.forward(test_input).argmax(1).squeeze_dim<1>(1);
  std::cout << "predictions (should be 0 1 1 0): " << classes.to_data() << "\n";
  // [/valid]
  const auto predicted = classes.to_data().to_vec<std::int32_t>();
  return predicted == std::vector<std::int32_t>{0, 1, 1, 0} ? 0 : 1;
}
