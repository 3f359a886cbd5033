#pragma once
// What examples/cpp/mnist_mlp.cpp, mnist_cnn.cpp and mnist_infer.cpp share: the command line
// (CLI11), the training settings, the classification steps the Learner calls, and the run
// itself (Burn's MNIST example: `training.rs`' `train` function).
#include <CLI/CLI.hpp>

#include <charconv>
#include <cstdint>
#include <system_error>
#include <filesystem>
#include <iostream>
#include <string>

#include "kiln/kiln.hpp"

namespace mnist {

using kiln::AutodiffBackend;
using kiln::Backend;
using kiln::Tensor;
using kiln::data::vision::MnistBatch;
using kiln::train::ClassificationOutput;

/// A CLI11 check that the option is a decimal integer >= `min` (CLI11's PositiveNumber prints
/// its bound, DBL_MAX, with 300 digits, and CLI11 reads "-1" into an unsigned option as
/// 2^64 - 1). Rejects signs other than '-', other bases and trailing text with
/// "--name: must be an integer >= min, got <input>"; rewrites the accepted value in plain
/// decimal (so "010" is 10, not CLI11's octal 8).
inline CLI::Validator integer_at_least(std::int64_t min) {
  const std::string name = "INT>=" + std::to_string(min);
  return CLI::Validator(
      [min](std::string& input) -> std::string {
        long long value = 0;
        const char* end = input.data() + input.size();
        const auto [ptr, ec] = std::from_chars(input.data(), end, value, 10);
        if (ec != std::errc() || ptr != end || input.empty() || value < min) {
          return "must be an integer >= " + std::to_string(min) + ", got " + input;
        }
        input = std::to_string(value);
        return std::string();
      },
      name);
}

/// Options every MNIST example takes.
struct Options {
  std::string artifact_dir;
  std::string data_dir = kiln::data::vision::default_mnist_dir();
  std::int64_t num_epochs = 0;      ///< 0: the config's default
  std::size_t train_subset = 0;     ///< 0: all 60,000 training images
  std::size_t test_subset = 0;      ///< 0: all 10,000 test images
  double min_accuracy = 0;          ///< exit status 1 when the final test accuracy is lower
  bool quiet = false;
};

/// Adds the options to `app` (CLI11), defaulting the artifact directory to `default_dir`.
inline void add_options(CLI::App& app, Options& options, const std::string& default_dir) {
  options.artifact_dir = default_dir;
  app.add_option("--artifact-dir", options.artifact_dir,
                 "where config.json, model.safetensors, history.json and checkpoint/ go")
      ->capture_default_str();
  app.add_option("--data-dir", options.data_dir, "directory of MNIST's four IDX files")
      ->capture_default_str();
  app.add_option("--epochs", options.num_epochs, "epochs (default: the config's)")
      ->check(integer_at_least(1));
  app.add_option("--train-subset", options.train_subset,
                 "train on the first N training images only (0: all)")
      ->check(integer_at_least(0));
  app.add_option("--test-subset", options.test_subset,
                 "validate on the first N test images only (0: all)")
      ->check(integer_at_least(0));
  app.add_option("--min-accuracy", options.min_accuracy,
                 "exit with status 1 when the final test accuracy (a fraction) is below this")
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--quiet", options.quiet, "no progress bars");
}

/// The classification outputs of `model` (anything with `forward(images) -> logits`) on a
/// batch: logits [batch_size, 10], mean cross-entropy loss [1], targets [batch_size].
template <Backend B, class M>
ClassificationOutput<B> classify(const M& model, const MnistBatch<B>& batch) {
  auto logits = model.forward(batch.images);
  auto loss = kiln::nn::loss::CrossEntropyLossConfig().init<B>().forward(logits, batch.targets);
  return {std::move(loss), std::move(logits), batch.targets};
}

/// One training step of `model` on a batch (Burn's `TrainStep::step`).
template <AutodiffBackend B, class M>
kiln::train::TrainOutput<ClassificationOutput<B>> train_step(const M& model,
                                                             const MnistBatch<B>& batch) {
  auto item = classify(model, batch);
  auto grads = item.loss.backward();
  return {model, std::move(grads), std::move(item)};
}

/// The settings of a run (Burn's `TrainingConfig`), saved as artifact_dir/config.json with the
/// model's config under "model".
template <class ModelConfig>
struct TrainingConfig {
  std::string architecture;  ///< "mlp" or "cnn": which example's model (mnist_infer reads it)
  ModelConfig model;
  kiln::optim::AdamConfig optimizer;
  std::int64_t num_epochs = 5;
  std::int64_t batch_size = 64;
  std::int64_t num_workers = 2;
  std::uint64_t seed = 42;
  double learning_rate = 1e-3;

  TrainingConfig(std::string architecture, ModelConfig model, kiln::optim::AdamConfig optimizer)
      : architecture(std::move(architecture)), model(std::move(model)),
        optimizer(std::move(optimizer)) {}
  KILN_CONFIG(TrainingConfig, (architecture, model, optimizer),
              (num_epochs, batch_size, num_workers, seed, learning_rate))
};

/// Trains the model of `config` on MNIST as Burn's MNIST example does, saves config.json and
/// model.safetensors (F32) into the artifact directory, and returns the final test accuracy.
template <class ModelConfig>
double run(TrainingConfig<ModelConfig> config, const Options& options) {
  using B = kiln::Autodiff<kiln::Cpu>;
  using Inner = kiln::Cpu;
  namespace data = kiln::data;
  namespace vision = kiln::data::vision;
  namespace train = kiln::train;

  if (options.num_epochs > 0) config.num_epochs = options.num_epochs;
  // A clean run, as Burn's example, but only Kiln's own artifacts are removed: the directory
  // may hold other files.
  const std::filesystem::path artifacts(options.artifact_dir);
  for (const char* name : {"config.json", "model.safetensors", "history.json", "checkpoint"}) {
    std::filesystem::remove_all(artifacts / name);
  }
  std::filesystem::create_directories(artifacts);
  config.save((std::filesystem::path(options.artifact_dir) / "config.json").string());
  B::seed(config.seed);

  auto train_set = data::share(vision::MnistDataset::train(options.data_dir));
  auto test_set = data::share(vision::MnistDataset::test(options.data_dir));
  const std::size_t n_train = options.train_subset ? options.train_subset : train_set->len();
  const std::size_t n_test = options.test_subset ? options.test_subset : test_set->len();
  const auto workers = static_cast<std::size_t>(config.num_workers);
  const auto train_loader =
      data::DataLoaderBuilder<B, vision::MnistItem, MnistBatch<B>>(vision::MnistBatcher<B>{})
          .batch_size(static_cast<std::size_t>(config.batch_size))
          .shuffle(config.seed)
          .num_workers(workers)
          .build(data::PartialDataset<vision::MnistItem>(train_set, 0, n_train));
  const auto test_loader =
      data::DataLoaderBuilder<Inner, vision::MnistItem, MnistBatch<Inner>>(
          vision::MnistBatcher<Inner>{})
          .batch_size(static_cast<std::size_t>(config.batch_size))
          .num_workers(workers)
          .build(data::PartialDataset<vision::MnistItem>(test_set, 0, n_test));

  auto model = config.model.template init<B>();
  std::cout << model << std::endl;  // before the progress bars on stderr
  auto training = train::SupervisedTraining(options.artifact_dir, train_loader, test_loader)
                      .metrics({train::AccuracyMetric{}, train::LossMetric{}})
                      .with_file_checkpointer(kiln::record::CompactRecorder{})
                      .num_epochs(config.num_epochs)
                      .summary();
  if (options.quiet) training = training.quiet();
  auto result = training.launch(
      train::Learner(std::move(model), config.optimizer.template init<B>(), config.learning_rate));

  const auto trained = result.model.valid();
  trained.save_file((std::filesystem::path(options.artifact_dir) / "model.safetensors").string(),
                    kiln::record::SafetensorsRecorder{});
  double accuracy = 0;
  for (const auto& v : result.history.back().valid) {
    if (v.name == "Accuracy") accuracy = v.value;
  }
  const auto& last = result.history.back();
  std::cout << "test accuracy " << 100 * accuracy << " % on " << n_test << " images after "
            << last.epoch << " epochs (last epoch: " << last.train_seconds << " s, "
            << static_cast<long long>(last.train_items_per_second) << " items/s)\n"
            << "saved " << options.artifact_dir << "/config.json and model.safetensors\n";
  return accuracy;
}

}  // namespace mnist
