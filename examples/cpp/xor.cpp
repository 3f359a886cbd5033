// XOR: the Burn tutorial's Step 10 training loop written with Kiln, with Exercise 10's
// validation accuracy and early stop.
//
//   build/native/examples/xor
//
// Model 2 -> 16 -> ReLU -> 2 (logits for the classes 0 and 1), Adam, cross-entropy on the
// four XOR points, one batch of 4 per epoch. The loss is printed at epoch 1 and every 10th.
// Exercise 10: after each epoch the model (through valid(), without autodiff) is scored on a
// validation set of 64 noisy copies of the four points (each coordinate moved by up to
// ±0.15); training stops early once validation accuracy has been 100 % for `patience`
// epochs in a row. Finally the valid() model predicts the four points.
//
// Exit status: 0 when the predictions are 0 1 1 0 (so `ctest` runs this program as a test),
// 1 otherwise.
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

using kiln::Autodiff;
using kiln::Backend;
using kiln::Cpu;
using kiln::Device;
using kiln::Int;
using kiln::Shape;
using kiln::Tensor;
using kiln::TensorData;
namespace data = kiln::data;
namespace nn = kiln::nn;
namespace optim = kiln::optim;

// ---------------------------------------------------------------- model (Steps 4-5)

template <Backend B>
struct XorModel {
  nn::Linear<B> fc1;      // [batch, 2] -> [batch, hidden_size]
  nn::Relu activation;
  nn::Linear<B> fc2;      // [batch, hidden_size] -> [batch, 2]

  KILN_MODULE(XorModel, fc1, activation, fc2)

  /// inputs [batch, 2] -> logits [batch, 2].
  Tensor<B, 2> forward(const Tensor<B, 2>& inputs) const {
    return fc2.forward(activation.forward(fc1.forward(inputs)));
  }
};

struct XorModelConfig {
  std::int64_t hidden_size = 16;
  KILN_CONFIG(XorModelConfig, (), (hidden_size))

  template <Backend B>
  XorModel<B> init(const Device<B>& device = {}) const {
    return XorModel<B>{nn::LinearConfig(2, hidden_size).init<B>(device), nn::Relu{},
                       nn::LinearConfig(hidden_size, 2).init<B>(device)};
  }
};

/// Training settings (Burn's `TrainingConfig`), saved next to the model as JSON.
struct TrainingConfig {
  XorModelConfig model;
  optim::AdamConfig optimizer;
  std::int64_t num_epochs = 300;
  std::int64_t batch_size = 4;
  std::int64_t patience = 10;  ///< epochs at 100 % validation accuracy before stopping
  std::uint64_t seed = 42;
  double learning_rate = 0.03;

  TrainingConfig(XorModelConfig model, optim::AdamConfig optimizer)
      : model(std::move(model)), optimizer(std::move(optimizer)) {}
  KILN_CONFIG(TrainingConfig, (model, optimizer),
              (num_epochs, batch_size, patience, seed, learning_rate))
};

// ---------------------------------------------------------------- data (Step 8)

struct XorItem {
  float x0, x1;
  std::int32_t label;  // x0 XOR x1 for the clean corner the item comes from
};

template <Backend B>
struct XorBatch {
  Tensor<B, 2> inputs;        // [batch, 2]
  Tensor<B, 1, Int> targets;  // [batch]
};

template <Backend B>
struct XorBatcher {
  XorBatch<B> batch(std::vector<XorItem> items, const Device<B>& device) const {
    const auto n = static_cast<std::int64_t>(items.size());
    std::vector<float> inputs;
    std::vector<std::int32_t> targets;
    for (const XorItem& item : items) {
      inputs.insert(inputs.end(), {item.x0, item.x1});
      targets.push_back(item.label);
    }
    return {Tensor<B, 2>::from_data(TensorData(Shape{n, 2}, std::move(inputs)), device),
            Tensor<B, 1, Int>::from_data(TensorData(Shape{n}, std::move(targets)), device)};
  }
};

std::vector<XorItem> xor_corners() {
  return {{0, 0, 0}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}};
}

/// 16 noisy copies of each corner, coordinates moved by U(-0.15, 0.15), reproducible.
std::vector<XorItem> xor_validation(std::uint64_t seed) {
  data::SplitMix64 rng(seed);
  std::vector<XorItem> items;
  for (int copy = 0; copy < 16; ++copy) {
    for (XorItem item : xor_corners()) {
      item.x0 += static_cast<float>(static_cast<double>(rng.below(30001)) * 1e-5 - 0.15);
      item.x1 += static_cast<float>(static_cast<double>(rng.below(30001)) * 1e-5 - 0.15);
      items.push_back(item);
    }
  }
  return items;
}

// ---------------------------------------------------------------- metrics

/// Fraction of rows of logits [n, 2] whose argmax equals targets [n].
template <Backend B>
double accuracy(const Tensor<B, 2>& logits, const Tensor<B, 1, Int>& targets) {
  const auto predicted = logits.argmax(1).template squeeze_dim<1>(1);
  const auto correct = predicted.equal(targets).int_().sum().into_scalar();
  return static_cast<double>(correct) / static_cast<double>(targets.dims()[0]);
}

// ---------------------------------------------------------------- training (Steps 9-10)

template <kiln::AutodiffBackend B>
XorModel<typename B::Inner> train(const TrainingConfig& config, const Device<B>& device,
                                  bool quiet) {
  using Inner = typename B::Inner;
  B::seed(config.seed);

  auto model = config.model.init<B>(device);
  auto optimizer = config.optimizer.init<B>();
  const auto loss_fn = nn::loss::CrossEntropyLossConfig().init<B>(device);

  const auto train_loader =
      data::DataLoaderBuilder<B, XorItem, XorBatch<B>>(XorBatcher<B>{})
          .batch_size(static_cast<std::size_t>(config.batch_size))
          .shuffle(config.seed)
          .build(data::InMemDataset(xor_corners()));
  const auto valid_loader =
      data::DataLoaderBuilder<Inner, XorItem, XorBatch<Inner>>(XorBatcher<Inner>{})
          .batch_size(64)
          .build(data::InMemDataset(xor_validation(config.seed + 1)));

  std::int64_t epochs_at_full_accuracy = 0;
  for (std::int64_t epoch = 1; epoch <= config.num_epochs; ++epoch) {
    double train_loss = 0;
    for (const XorBatch<B>& batch : *train_loader) {
      const auto logits = model.forward(batch.inputs);
      const auto loss = loss_fn.forward(logits, batch.targets);
      train_loss = loss.into_scalar();
      auto grads = optim::GradientsParams<B>::from_grads(loss.backward(), model);
      model = optimizer.step(config.learning_rate, model, std::move(grads));
    }

    // Exercise 10: validation accuracy with the inference model (no graph is built).
    const auto valid_model = model.valid();
    double correct = 0, total = 0;
    for (const XorBatch<Inner>& batch : *valid_loader) {
      const double n = static_cast<double>(batch.targets.dims()[0]);
      correct += accuracy(valid_model.forward(batch.inputs), batch.targets) * n;
      total += n;
    }
    const double valid_accuracy = correct / total;

    if (!quiet && (epoch == 1 || epoch % 10 == 0)) {
      std::cout << "epoch " << std::setw(3) << epoch << "  loss " << std::fixed
                << std::setprecision(4) << train_loss << "  valid accuracy "
                << std::setprecision(1) << 100 * valid_accuracy << " %\n";
    }
    epochs_at_full_accuracy = valid_accuracy == 1.0 ? epochs_at_full_accuracy + 1 : 0;
    if (epochs_at_full_accuracy >= config.patience) {
      if (!quiet) {
        std::cout << "early stop at epoch " << epoch << ": valid accuracy 100 % for "
                  << config.patience << " epochs (loss " << std::setprecision(4) << train_loss
                  << ")\n";
      }
      break;
    }
  }
  return model.valid();
}

int main() {
  using B = Autodiff<Cpu>;
  const auto config = TrainingConfig(XorModelConfig(), optim::AdamConfig());
  const bool quiet = false;
  try {
    if (!quiet) std::cout << "Training config: " << config.to_json_string() << "\n";
    const auto model = train<B>(config, Device<B>{}, quiet);
    if (!quiet) std::cout << model << "\n";

    // Inference on the four points with the valid() model (Step 10's last lines).
    const auto inputs = XorBatcher<Cpu>{}.batch(xor_corners(), {});
    const auto predicted = model.forward(inputs.inputs).argmax(1).squeeze_dim<1>(1);
    const auto labels = predicted.to_data().to_vec<std::int32_t>();
    std::cout << "predictions:";
    for (const auto label : labels) std::cout << ' ' << label;
    std::cout << "  (expected 0 1 1 0)\n";
    return labels == std::vector<std::int32_t>{0, 1, 1, 0} ? 0 : 1;
  } catch (const kiln::Error& error) {
    std::cerr << "xor: " << error.what() << "\n";
    return 1;
  }
}
