// Step 13 of the tutorial (web/tutorial/content/13-save-load.md shows the regions): saving a
// trained model, loading it into a fresh one, inference on test digits, resuming an
// interrupted run from its checkpoint, and weights from PyTorch (xor.pt, written by
// web/tutorial/assets/make_xor_pt.py: key remapping, partial loading). Trains on the first
// 10,000 MNIST images (validating on 1,000) so the test stays short. Exit status 1 when a
// check fails.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "kiln/kiln.hpp"
#include "kiln/record/load_options.hpp"
#include "kiln/record/pytorch.hpp"
#include "mnist_mlp.hpp"

using namespace kiln;
using data::vision::MnistBatch;
using data::vision::MnistItem;

using tutorial::Mlp;

struct MlpConfig {
  std::int64_t d_hidden = 128;
  KILN_CONFIG(MlpConfig, (), (d_hidden))
  template <Backend B>
  Mlp<B> init(const Device<B>& device = {}) const {
    return {nn::LinearConfig(784, d_hidden).init<B>(device), nn::Relu{},
            nn::LinearConfig(d_hidden, 10).init<B>(device)};
  }
};

using B = Autodiff<Cpu>;
using Inner = Cpu;

#ifndef KILN_TUTORIAL_ASSETS
#define KILN_TUTORIAL_ASSETS "web/tutorial/assets"
#endif
/// PyTorch's logits for the XOR inputs (0,0) (0,1) (1,0) (1,1) with xor.pt's weights, as
/// make_xor_pt.py printed them (web/tutorial/assets/xor.json).
constexpr float kTorchXorLogits[4] = {-7.24458981f, 7.57535934f, 8.06463718f, -7.62034702f};

/// The PyTorch part of the step; true if every check passed.
bool weights_from_pytorch() {
  bool ok = true;
  auto check = [&ok](bool cond, const std::string& what) {
    std::cout << what << ": " << (cond ? "ok" : "WRONG") << "\n";
    ok &= cond;
  };
  const std::string assets = KILN_TUTORIAL_ASSETS;
  // [pytorch_read]
  // xor.pt: torch.save(model.state_dict()) of a PyTorch model whose layers sit in an
  // attribute `net` (an nn.Sequential): keys net.0.weight, net.0.bias, net.2.weight, ...
  const record::SafetensorsFile xor_pt = record::load_pytorch(assets + "/xor.pt");
  for (const auto& [key, tensor] : xor_pt.tensors) std::cout << key << ": " << tensor.shape << "\n";
  // [/pytorch_read]
  check(xor_pt.tensors.size() == 4 && xor_pt.tensors.at("net.0.weight").shape == Shape{8, 2} &&
            xor_pt.tensors.at("net.2.weight").shape == Shape{1, 8},
        "xor.pt holds net.0.* [8, 2] and net.2.* [1, 8]");

  // [pytorch_load]
  const auto xor_spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 2, "d_output": 8},
      {"type": "tanh"},
      {"type": "linear", "d_input": 8, "d_output": 1}]})");
  // A Sequential's keys are 0.weight, ...: the rule renames net.0.weight to 0.weight.
  const auto remap = record::LoadOptions().with_key_remapping(R"(^net\.)", "");
  record::LoadReport report;
  const auto xor_net = record::SafetensorsRecorder{}.with_load_options(remap).from_record(
      xor_spec.init<Inner>(), xor_pt, Device<Inner>{}, report);
  std::cout << report << "\n";
  const auto logits = xor_net.forward(
      Tensor<Inner, 2>::from_data({{0.f, 0.f}, {0.f, 1.f}, {1.f, 0.f}, {1.f, 1.f}}));
  const auto predicted = logits.greater_elem(0.f).int_().to_data().to_vec<std::int32_t>();
  // [/pytorch_load]
  check(report.applied == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"} &&
            report.missing.empty() && report.unexpected.empty() && report.remapped.size() == 4,
        "all four tensors applied after remapping");
  const auto got = logits.to_data().to_vec<float>();
  bool close = got.size() == 4;
  for (std::size_t i = 0; close && i < 4; ++i) {
    close = std::fabs(got[i] - kTorchXorLogits[i]) < 1e-5f;
  }
  check(close, "the logits are PyTorch's (to 1e-5)");
  check(predicted == std::vector<std::int32_t>{0, 1, 1, 0}, "it predicts XOR: 0 1 1 0");

  // [pytorch_partial]
  // Another output layer (three classes): its [3, 8] weight cannot take the file's [1, 8].
  const auto three_way_spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 2, "d_output": 8},
      {"type": "tanh"},
      {"type": "linear", "d_input": 8, "d_output": 3}]})");
  const auto three_way = three_way_spec.init<Inner>();
  const auto partial = record::SafetensorsRecorder{}.with_load_options(remap.allow_partial(true));
  record::LoadReport refused;
  try {
    partial.from_record(three_way, xor_pt, Device<Inner>{}, refused);
  } catch (const Error& e) {
    std::cout << e.what() << "\n";  // "2.weight" has shape [1, 8], module expects [3, 8]; ...
  }
  // Without the old output layer, the rest loads; the new layer keeps its values.
  record::SafetensorsFile body = xor_pt;
  body.tensors.erase("net.2.weight");
  body.tensors.erase("net.2.bias");
  record::LoadReport reused;
  const auto tuned = partial.from_record(three_way, body, Device<Inner>{}, reused);
  std::cout << reused << "\n";  // applied 0.weight 0.bias; missing 2.weight 2.bias
  // [/pytorch_partial]
  check(refused.applied.empty() && refused.mismatched.size() == 2,
        "the whole file is refused: 2.weight and 2.bias mismatched, nothing applied");
  check(reused.applied == std::vector<std::string>{"0.weight", "0.bias"} &&
            reused.missing == std::vector<std::string>{"2.weight", "2.bias"},
        "the body applied, the new head missing");
  const auto before = record::SafetensorsRecorder{}.to_record(three_way);
  const auto after = record::SafetensorsRecorder{}.to_record(tuned);
  check(after.tensors.at("0.weight").bytes == xor_pt.tensors.at("net.0.weight").bytes &&
            after.tensors.at("2.weight").bytes == before.tensors.at("2.weight").bytes,
        "the first layer is the file's, the new head unchanged");
  return ok;
}

/// A run of `num_epochs` on the first 10,000 training images; `resume_from` > 0 continues
/// after that epoch's checkpoint instead of starting afresh.
auto run(const std::string& dir, std::int64_t num_epochs, std::int64_t resume_from) {
  B::seed(42);
  auto train_set =
      data::share(data::vision::MnistDataset::train(data::vision::default_mnist_dir()));
  auto test_set = data::share(data::vision::MnistDataset::test(data::vision::default_mnist_dir()));
  const auto train_loader =
      data::DataLoaderBuilder<B, MnistItem, MnistBatch<B>>(data::vision::MnistBatcher<B>{})
          .batch_size(64)
          .shuffle(42)
          .build(data::PartialDataset<MnistItem>(train_set, 0, 10000));
  const auto test_loader = data::DataLoaderBuilder<Inner, MnistItem, MnistBatch<Inner>>(
                               data::vision::MnistBatcher<Inner>{})
                               .batch_size(1000)
                               .build(data::PartialDataset<MnistItem>(test_set, 0, 1000));
  // [resume]
  auto training = train::SupervisedTraining(dir, train_loader, test_loader)
                      .metrics({train::AccuracyMetric{}, train::LossMetric{}})
                      .with_file_checkpointer(record::SafetensorsRecorder{})  // F32: exact resume
                      .num_epochs(num_epochs)
                      .quiet();
  if (resume_from > 0) training = training.checkpoint(resume_from);  // or .resume_latest()
  return training.launch(
      train::Learner(MlpConfig().init<B>(), optim::AdamConfig().init<B>(), 1e-3));
  // [/resume]
}

int main() {
  bool ok = true;
  auto check = [&ok](bool cond, const std::string& what) {
    std::cout << what << ": " << (cond ? "ok" : "WRONG") << "\n";
    ok &= cond;
  };
  const auto dir = std::filesystem::temp_directory_path() / "kiln-tutorial-13";
  std::filesystem::remove_all(dir);

  // Two epochs in one go, and the same run stopped after epoch 1 then resumed.
  const auto straight = run((dir / "straight").string(), 2, 0);
  run((dir / "resumed").string(), 1, 0);
  const auto resumed = run((dir / "resumed").string(), 2, 1);
  check(resumed.history.size() == 2 && resumed.history.back().epoch == 2, "resumed at epoch 2");
  const auto a = straight.model.valid().fc1.weight.val().to_data().to_vec<float>();
  const auto b = resumed.model.valid().fc1.weight.val().to_data().to_vec<float>();
  check(a == b, "the resumed run ends with the uninterrupted run's weights");

  // [save]
  const Mlp<Inner> trained = straight.model.valid();
  MlpConfig().save((dir / "config.json").string());
  trained.save_file((dir / "model.safetensors").string(), record::SafetensorsRecorder{});
  // [/save]

  // [load]
  // "A new program": the config, a fresh model, the saved weights.
  const auto loaded = MlpConfig::load((dir / "config.json").string())
                          .init<Inner>()
                          .load_file((dir / "model.safetensors").string(),
                                     record::SafetensorsRecorder{}, Device<Inner>{});
  // [/load]

  // [infer]
  const auto test_set = data::vision::MnistDataset::test(data::vision::default_mnist_dir());
  const MnistItem item = *test_set.get(42);
  const auto batch = data::vision::MnistBatcher<Inner>{}.batch({item}, Device<Inner>{});
  const auto predicted = loaded.forward(batch.images).argmax(1).flatten<1>(0, 1).into_scalar();
  std::cout << "Predicted " << predicted << " Expected " << int(item.label) << "\n";
  // [/infer]
  check(item.label == 4, "test item 42 is a 4");
  check(predicted == item.label, "the loaded model reads it");
  const auto same =
      (loaded.forward(batch.images) - trained.forward(batch.images)).abs().max().into_scalar();
  check(same == 0.f, "the loaded model's logits equal the trained model's");

  // [sequential]
  // kiln-dl's model is a Sequential built from a layer list; nn::SequentialConfig builds the
  // same one in C++ (snake_case fields), with PyTorch nn.Sequential's parameter names:
  // 0.weight, 0.bias (the first linear), 2.weight, 2.bias (the second; relu is layer 1).
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 784, "d_output": 128},
      {"type": "relu"},
      {"type": "linear", "d_input": 128, "d_output": 10}]})");
  // The Mlp above names its layers fc1 and fc2, so its file's keys are fc1.weight, ...:
  // renamed fc1.* -> 0.* and fc2.* -> 2.*, the same weights load into the Sequential.
  const record::SafetensorsFile mlp_file =
      record::load_safetensors((dir / "model.safetensors").string());
  record::SafetensorsFile renamed;
  for (const auto& [key, tensor] : mlp_file.tensors) {
    const std::string layer = key.starts_with("fc1.") ? "0" : "2";
    renamed.tensors.emplace(layer + key.substr(key.find('.')), tensor);
  }
  record::save_safetensors(renamed, (dir / "sequential.safetensors").string());
  const auto sequential = spec.init<Inner>().load_file(
      (dir / "sequential.safetensors").string(), record::SafetensorsRecorder{}, Device<Inner>{});
  // [/sequential]
  check(sequential.param_paths() ==
            std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"},
        "the Sequential's parameters are 0.weight 0.bias 2.weight 2.bias, as kiln-dl's");
  check(renamed.tensors.at("0.weight").shape == Shape{128, 784} &&
            renamed.tensors.at("2.weight").shape == Shape{10, 128},
        "0.weight [128, 784] and 2.weight [10, 128], as in the JS model's file");
  const auto seq_same =
      (sequential.forward(batch.images.reshape<2>(std::array<std::int64_t, 2>{1, 784})) -
       trained.forward(batch.images))
          .abs()
          .max()
          .into_scalar();
  check(seq_same == 0.f, "the Sequential's logits equal the trained Mlp's");
  std::filesystem::remove_all(dir);
  ok &= weights_from_pytorch();
  return ok ? 0 : 1;
}
