// Records against real PyTorch (Debian's python3-torch at /usr/bin/python3): Kiln saves
// torch.nn.Sequential(Linear(3, 4), ReLU(), Linear(4, 2)) and a BatchNorm1d state, and
// tests/native/record/torch_interop.py loads them with load_state_dict(strict=True) and
// compares logits, F16 bits and values; the script writes torch's own model and BatchNorm
// state, which Kiln loads and must reproduce (logits to 1e-5, values exactly). Skipped
// when /usr/bin/python3 cannot import torch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/paths.hpp"
#include "support/temp_dir.hpp"
#include "support/xor.hpp"

#if defined(__unix__)
#include <sys/wait.h>
#endif

#ifndef KILN_PYTHON
#define KILN_PYTHON "/usr/bin/python3"
#endif

namespace kiln::record {
namespace {

using module::Param;
using AD = Autodiff<Cpu>;
using Json = nlohmann::json;

/// torch.nn.Linear: y = x·Wᵀ + b, weight [d_output, d_input].
template <Backend B>
struct TorchLinear {
  Param<Tensor<B, 2>> weight;
  Param<Tensor<B, 1>> bias;
  KILN_MODULE(TorchLinear, weight, bias)

  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return x.matmul(weight.val().transpose()) + bias.val().template unsqueeze<2>();
  }
};

/// torch.nn.Sequential(Linear(3, 4), ReLU(), Linear(4, 2)): the hand-written visit names
/// the layers by their index, so the keys are "0.weight", "0.bias", "2.weight", "2.bias".
template <Backend B>
struct TorchMlp {
  TorchLinear<B> layer0;  // Linear(3, 4)
  TorchLinear<B> layer2;  // Linear(4, 2); index 1 is the ReLU, which has no parameters

  template <class V>
  void visit(V& visitor, const std::string& prefix = "") const {
    layer0.visit(visitor, module::join_path(prefix, "0"));
    layer2.visit(visitor, module::join_path(prefix, "2"));
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& prefix = "") {
    layer0.visit_mut(visitor, module::join_path(prefix, "0"));
    layer2.visit_mut(visitor, module::join_path(prefix, "2"));
  }
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return layer2.forward(activation::relu(layer0.forward(x)));
  }
};

/// The state of torch.nn.BatchNorm1d(num_features) under PyTorch's key names.
template <Backend B>
struct TorchBatchNorm {
  Param<Tensor<B, 1>> weight, bias, running_mean, running_var;
  Param<Tensor<B, 1, Int>> num_batches_tracked;  // 0-dim int64 in PyTorch, [1] i32 here
  KILN_MODULE(TorchBatchNorm, weight, bias, running_mean, running_var, num_batches_tracked)
};

template <Backend B>
TorchLinear<B> linear(std::int64_t d_input, std::int64_t d_output, std::vector<float> weight,
                      std::vector<float> bias) {
  TorchLinear<B> l;
  l.weight = Param<Tensor<B, 2>>(
      Tensor<B, 2>::from_data(TensorData(Shape{d_output, d_input}, std::move(weight))));
  l.bias =
      Param<Tensor<B, 1>>(Tensor<B, 1>::from_data(TensorData(Shape{d_output}, std::move(bias))));
  return l;
}

template <Backend B>
TorchMlp<B> zero_mlp() {
  return {linear<B>(3, 4, std::vector<float>(12, 0.f), std::vector<float>(4, 0.f)),
          linear<B>(4, 2, std::vector<float>(8, 0.f), std::vector<float>(2, 0.f))};
}

Tensor<Cpu, 2> tensor_from_json(const Json& rows) {
  std::vector<float> values;
  for (const auto& row : rows) {
    for (const auto& v : row) values.push_back(v.get<float>());
  }
  return Tensor<Cpu, 2>::from_data(TensorData(
      Shape{static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())},
      std::move(values)));
}

Json rows_to_json(const TensorData& data) {
  const auto values = data.to_vec<float>();
  Json rows = Json::array();
  for (std::int64_t r = 0; r < data.shape[0]; ++r) {
    Json row = Json::array();
    for (std::int64_t c = 0; c < data.shape[1]; ++c) row.push_back(values[r * data.shape[1] + c]);
    rows.push_back(row);
  }
  return rows;
}

void write_json(const std::filesystem::path& path, const Json& json) {
  std::ofstream(path) << json.dump();
}
Json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

class TorchInterop : public ::testing::Test {
 protected:
  /// Runs `torch_interop.py work_ mode`: its exit status (77: python cannot import torch;
  /// 127: no python) and output.
  std::pair<int, std::string> run_script(const std::string& mode) const {
    const auto log = work_ / "python.log";
    const std::string command = std::string(KILN_PYTHON " ") + KILN_RECORD_TEST_DIR +
                                "/torch_interop.py " + "'" + work_.string() + "' " + mode + " > '" +
                                log.string() + "' 2>&1";
    const int status = std::system(command.c_str());
    std::stringstream output;
    output << std::ifstream(log).rdbuf();
    return {status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, output.str()};
  }

  test::TempDir dir_{"torch_interop"};
  const std::filesystem::path& work_ = dir_.path();
};

TEST_F(TorchInterop, KilnAndPyTorchLoadEachOthersFiles) {
  // ---- Kiln writes: an MLP with known weights (inexact in f16), its logits, ...
  const auto model = TorchMlp<Cpu>{
      linear<Cpu>(3, 4,
                  {0.1f, -0.2f, 0.3f, 0.7f, 0.05f, -0.6f, -0.33f, 0.25f, 0.9f, 0.45f, -0.8f, 0.15f},
                  {0.01f, -0.1f, 0.2f, 0.3f}),
      linear<Cpu>(4, 2, {0.5f, -0.4f, 0.3f, 0.2f, -0.7f, 0.6f, 0.11f, -0.9f}, {0.05f, -0.05f})};
  const auto inputs = Tensor<Cpu, 2>::from_floats(
      {{1.f, -2.f, 0.5f}, {0.3f, 0.7f, -1.1f}, {-0.25f, 2.f, 3.f}, {0.f, 0.f, 0.f}});
  EXPECT_EQ(model.layer0.bias.val().shape(), Shape{4});
  SafetensorsRecorder{}.save_file(model, (work_ / "kiln_mlp.safetensors").string());
  CompactRecorder{}.save_file(model, (work_ / "kiln_mlp_half.safetensors").string());
  const auto half_model = CompactRecorder{}.load_file(
      zero_mlp<Cpu>(), (work_ / "kiln_mlp_half.safetensors").string(), Cpu::Device{});
  write_json(work_ / "kiln_mlp.json",
             {{"inputs", rows_to_json(inputs.to_data())},
              {"logits", rows_to_json(model.forward(inputs).to_data())},
              {"half_logits", rows_to_json(half_model.forward(inputs).to_data())}});

  // ... f32 values and Kiln's f16 conversion of them: ties, subnormals, overflow, inf, nan,
  // and random values over half's range,
  std::vector<float> values = {0.f,
                               -0.f,
                               1.f,
                               0.1f,
                               65504.f,
                               65519.f,
                               65520.f,
                               1e6f,
                               -1e6f,
                               1.f + std::ldexp(1.f, -11),
                               1.f + 3 * std::ldexp(1.f, -11),
                               2047.5f,
                               std::ldexp(1.f, -14),
                               std::ldexp(1.f, -24),
                               std::ldexp(1.f, -25),
                               3 * std::ldexp(1.f, -25),
                               1e-30f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               -std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-27.f, 17.f);
  for (int i = 0; i < 4000; ++i) {
    values.push_back((i % 2 ? -1.f : 1.f) * std::exp2(exponent(rng)));
  }
  const TensorData f32(Shape{static_cast<std::int64_t>(values.size())}, values);
  SafetensorsFile conversions;
  conversions.tensors["f32"] = SafetensorsTensor::from_data(f32, SafetensorsDType::F32);
  conversions.tensors["f16"] = SafetensorsTensor::from_data(f32, SafetensorsDType::F16);
  save_safetensors(conversions, (work_ / "kiln_f16_values.safetensors").string());

  // ... and a BatchNorm1d(3) state with num_batches_tracked = 5 (stored as I64).
  TorchBatchNorm<Cpu> bn;
  bn.weight = Param<Tensor<Cpu, 1>>(Tensor<Cpu, 1>::from_floats({1.5f, -0.5f, 2.f}));
  bn.bias = Param<Tensor<Cpu, 1>>(Tensor<Cpu, 1>::from_floats({0.1f, 0.2f, -0.3f}));
  bn.running_mean = Param<Tensor<Cpu, 1>>(Tensor<Cpu, 1>::from_floats({0.25f, -1.f, 3.f}), false);
  bn.running_var = Param<Tensor<Cpu, 1>>(Tensor<Cpu, 1>::from_floats({1.f, 0.5f, 2.f}), false);
  bn.num_batches_tracked = Param<Tensor<Cpu, 1, Int>>(Tensor<Cpu, 1, Int>::from_ints({5}), false);
  bn.save_file((work_ / "kiln_bn.safetensors").string(), SafetensorsRecorder{});
  write_json(work_ / "kiln_bn.json", {{"weight", {1.5f, -0.5f, 2.f}},
                                      {"bias", {0.1f, 0.2f, -0.3f}},
                                      {"running_mean", {0.25f, -1.f, 3.f}},
                                      {"running_var", {1.f, 0.5f, 2.f}},
                                      {"num_batches_tracked", {5}}});

  // ---- PyTorch checks Kiln's files and writes its own.
  const auto [exit_code, output] = run_script("basic");
  if (exit_code == 77 || exit_code == 127) {  // no torch, or no python at all
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON
                    " cannot import torch (install Debian's python3-torch):\n"
                 << output;
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop.py failed:\n" << output;
  EXPECT_THAT(output, ::testing::HasSubstr("equal torch's .half()"));

  // ---- Kiln loads torch's MLP (into Cpu and Autodiff<Cpu>) and reproduces its logits.
  const Json expected = read_json(work_ / "torch_mlp.json");
  const auto x = tensor_from_json(expected["inputs"]);
  const TensorData torch_logits = tensor_from_json(expected["logits"]).to_data();
  const auto path = (work_ / "torch_mlp.safetensors").string();
  const auto loaded = SafetensorsRecorder{}.load_file(zero_mlp<Cpu>(), path, Cpu::Device{});
  loaded.forward(x).to_data().assert_approx_eq(torch_logits, Tolerance::absolute(1e-5));
  const auto tracked = SafetensorsRecorder{}.load_file(zero_mlp<AD>(), path, AD::Device{});
  EXPECT_TRUE(tracked.layer0.weight.val().is_require_grad());
  tracked.forward(Tensor<AD, 2>::from_inner(x))
      .to_data()
      .assert_approx_eq(torch_logits, Tolerance::absolute(1e-5));

  // ---- Kiln loads torch's BatchNorm state: a 0-dim int64 num_batches_tracked into [1] i32.
  const Json bn_expected = read_json(work_ / "torch_bn.json");
  const auto bn_loaded = TorchBatchNorm<Cpu>{}.load_file((work_ / "torch_bn.safetensors").string(),
                                                         SafetensorsRecorder{}, Cpu::Device{});
  EXPECT_EQ(bn_loaded.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{3});
  for (const char* key : {"weight", "bias", "running_mean", "running_var"}) {
    std::vector<float> want;
    for (const auto& v : bn_expected[key]) want.push_back(v.get<float>());
    const auto& param = std::string(key) == "weight"         ? bn_loaded.weight
                        : std::string(key) == "bias"         ? bn_loaded.bias
                        : std::string(key) == "running_mean" ? bn_loaded.running_mean
                                                             : bn_loaded.running_var;
    EXPECT_EQ(param.val().to_data().to_vec<float>(), want) << key;
  }
}

/// XOR trained in Kiln loads into torch.nn.Sequential(Linear(2, 16), ReLU(), Linear(16, 2))
/// with the same logits; XOR trained in PyTorch loads into Kiln's nn::Sequential of the same
/// JSON spec with the same logits (both to 1e-5) and predictions 0 1 1 0.
TEST_F(TorchInterop, XorTrainedInEitherPredictsTheSameInTheOther) {
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 2, "d_output": 16},
      {"type": "relu"},
      {"type": "linear", "d_input": 16, "d_output": 2}]})");
  AD::seed(42);
  const auto trained = test::train_xor<AD>(spec.init<AD>(), 200).valid();
  // The four corners and points between them, where the logits are not at the corners' scale.
  const auto inputs = Tensor<Cpu, 2>::from_floats(
      {{0.f, 0.f}, {0.f, 1.f}, {1.f, 0.f}, {1.f, 1.f}, {0.5f, 0.5f}, {0.25f, 0.9f}, {-1.f, 2.f}});
  const auto logits = trained.forward(inputs);
  ASSERT_EQ(test::predictions(trained.forward(test::xor_inputs<Cpu>())),
            (std::vector<std::int32_t>{0, 1, 1, 0}));
  trained.save_file((work_ / "kiln_xor.safetensors").string(), SafetensorsRecorder{});
  write_json(work_ / "kiln_xor.json", {{"inputs", rows_to_json(inputs.to_data())},
                                       {"logits", rows_to_json(logits.to_data())}});

  const auto [exit_code, output] = run_script("xor");
  if (exit_code == 77 || exit_code == 127) {  // no torch, or no python at all
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON
                    " cannot import torch (install Debian's python3-torch):\n"
                 << output;
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop.py failed:\n" << output;
  EXPECT_THAT(output, ::testing::HasSubstr("Kiln XOR in torch"));

  const Json expected = read_json(work_ / "torch_xor.json");
  const auto x = tensor_from_json(expected["inputs"]);
  const auto loaded = SafetensorsRecorder{}.load_file(
      spec.init<Cpu>(), (work_ / "torch_xor.safetensors").string(), Cpu::Device{});
  const auto kiln_logits = loaded.forward(x);
  kiln_logits.to_data().assert_approx_eq(tensor_from_json(expected["logits"]).to_data(),
                                         Tolerance::absolute(1e-5));
  EXPECT_EQ(test::predictions(loaded.forward(test::xor_inputs<Cpu>())),
            (std::vector<std::int32_t>{0, 1, 1, 0}));
}

/// A Sequential with conv2d, batch_norm (trained statistics), max_pool2d, flatten and linear,
/// built from the JSON spec, loads into torch.nn.Sequential(Unflatten(1, (1, 6, 6)),
/// Conv2d(1, 4, 3, padding='same'), BatchNorm2d(4), ReLU(), MaxPool2d(2), Conv2d(4, 6, 2),
/// Flatten(), Linear(24, 3)) with load_state_dict(strict=True) and gives the same logits in
/// eval mode; the same model trained by PyTorch loads into Kiln's Sequential with its logits.
TEST_F(TorchInterop, SequentialCnnLoadsBothWays) {
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 6, 6]},
      {"type": "conv2d", "channels": [1, 4], "kernel_size": [3, 3], "padding": "same"},
      {"type": "batch_norm", "num_features": 4},
      {"type": "relu"},
      {"type": "max_pool2d", "kernel_size": [2, 2]},
      {"type": "conv2d", "channels": [4, 6], "kernel_size": 2},
      {"type": "flatten"},
      {"type": "linear", "d_input": 24, "d_output": 3}]})");
  AD::seed(7);
  const auto model = spec.init<AD>();
  for (int step = 0; step < 3; ++step) {  // training-mode forwards move the running statistics
    (void)model.forward(Tensor<AD, 2>::random(Shape{8, 36}, Distribution::normal(0.5, 2.0)));
  }
  const auto trained = model.valid();
  const auto inputs = Tensor<Cpu, 2>::random(Shape{5, 36}, Distribution::normal(0, 1));
  trained.save_file((work_ / "kiln_cnn.safetensors").string(), SafetensorsRecorder{});
  write_json(work_ / "kiln_cnn.json", {{"inputs", rows_to_json(inputs.to_data())},
                                       {"logits", rows_to_json(trained.forward(inputs).to_data())}});

  const auto [exit_code, output] = run_script("cnn");
  if (exit_code == 77 || exit_code == 127) {
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON
                    " cannot import torch (install Debian's python3-torch):\n"
                 << output;
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop.py failed:\n" << output;
  EXPECT_THAT(output, ::testing::HasSubstr("Kiln CNN in torch"));

  const Json expected = read_json(work_ / "torch_cnn.json");
  const auto loaded = SafetensorsRecorder{}.load_file(
      spec.init<Cpu>(), (work_ / "torch_cnn.safetensors").string(), Cpu::Device{});
  loaded.forward(tensor_from_json(expected["inputs"]))
      .to_data()
      .assert_approx_eq(tensor_from_json(expected["logits"]).to_data(), Tolerance::absolute(1e-4));
  const auto& bn = loaded.layers[2].get<nn::BatchNorm<Cpu>>();
  EXPECT_EQ(bn.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{expected["num_batches_tracked"].get<std::int32_t>()});
}

}  // namespace
}  // namespace kiln::record
