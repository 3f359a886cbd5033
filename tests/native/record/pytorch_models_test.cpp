// PytorchRecorder (kiln/record/pytorch.hpp): checkpoints written by Debian's PyTorch 1.13
// (make_pt_fixtures.py) load into Kiln modules through SafetensorsRecorder::from_record and
// give PyTorch's outputs to 1e-5: an MLP (fc1/fc2, a module with named fields), the CNN
// (conv2d + batch_norm + max_pool2d + conv2d + linear, PyTorch layouts, from a Sequential
// JSON spec), a Linear/BatchNorm1d model with num_batches_tracked, and the MLP in float16
// and bfloat16; a nested checkpoint through the top-level key; a failed load changes
// nothing and lists every problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/record/pytorch.hpp"
#include "support/paths.hpp"

namespace kiln::record {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
using AD = Autodiff<Cpu>;

const std::string kDir = KILN_RECORD_TEST_DIR + "/pytorch/";

const Json& expected() {
  static const Json json = [] {
    std::ifstream in(kDir + "expected.json");
    return Json::parse(in);
  }();
  return json;
}

Tensor<Cpu, 2> rows(const Json& json) {
  std::vector<float> values;
  for (const auto& row : json) {
    for (const auto& v : row) values.push_back(v.get<float>());
  }
  return Tensor<Cpu, 2>::from_data(TensorData(
      Shape{static_cast<std::int64_t>(json.size()), static_cast<std::int64_t>(json[0].size())},
      std::move(values)));
}

/// The generator's Mlp: fc1 = Linear(3, 4), ReLU, fc2 = Linear(4, 2); keys "fc1.weight"...
template <Backend B>
struct Mlp {
  nn::Linear<B> fc1;
  nn::Linear<B> fc2;
  KILN_MODULE(Mlp, fc1, fc2)

  static Mlp init() { return {nn::LinearConfig(3, 4).init<B>({}), nn::LinearConfig(4, 2).init<B>({})}; }
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return fc2.forward(activation::relu(fc1.forward(x)));
  }
};

void expect_logits(const Tensor<Cpu, 2>& got, const Json& case_json) {
  got.to_data().assert_approx_eq(rows(case_json["logits"]).to_data(), Tolerance::absolute(1e-5));
}

TEST(PytorchRecorder, MlpGivesPytorchLogits) {
  const auto model = Mlp<Cpu>::init().load_file(kDir + "mlp.pt", PytorchRecorder{}, Cpu::Device{});
  expect_logits(model.forward(rows(expected()["mlp"]["inputs"])), expected()["mlp"]);
  // from_bytes and an autodiff module: the same weights, tracked leaves.
  std::ifstream in(kDir + "mlp.pt", std::ios::binary);
  const std::vector<std::uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
  const auto tracked = PytorchRecorder{}.from_bytes(Mlp<AD>::init(), bytes, AD::Device{});
  EXPECT_TRUE(tracked.fc1.weight.is_require_grad());
  expect_logits(tracked.valid().forward(rows(expected()["mlp"]["inputs"])), expected()["mlp"]);
}

TEST(PytorchRecorder, HalfAndBfloat16CheckpointsGiveTheLogitsOfTheirWeights) {
  for (const char* name : {"half", "bf16"}) {
    SCOPED_TRACE(name);
    const auto model = Mlp<Cpu>::init().load_file(kDir + name + ".pt", PytorchRecorder{}, Cpu::Device{});
    expect_logits(model.forward(rows(expected()[name]["inputs"])), expected()[name]);
  }
}

TEST(PytorchRecorder, CnnWithBatchNormGivesPytorchEvalLogits) {
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 6, 6]},
      {"type": "conv2d", "channels": [1, 4], "kernel_size": [3, 3], "padding": "same"},
      {"type": "batch_norm", "num_features": 4},
      {"type": "relu"},
      {"type": "max_pool2d", "kernel_size": [2, 2]},
      {"type": "conv2d", "channels": [4, 6], "kernel_size": 2},
      {"type": "flatten"},
      {"type": "linear", "d_input": 24, "d_output": 3}]})");
  const auto model = spec.init<Cpu>().load_file(kDir + "cnn.pt", PytorchRecorder{}, Cpu::Device{});
  expect_logits(model.forward(rows(expected()["cnn"]["inputs"])), expected()["cnn"]);
  EXPECT_EQ(model.layers[2].get<nn::BatchNorm<Cpu>>().num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{5});
}

TEST(PytorchRecorder, BatchNormModelGivesPytorchEvalLogitsAndItsBatchCount) {
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 4, "d_output": 5},
      {"type": "batch_norm", "num_features": 5},
      {"type": "relu"},
      {"type": "linear", "d_input": 5, "d_output": 3}]})");
  const auto model = spec.init<Cpu>().load_file(kDir + "bn.pt", PytorchRecorder{}, Cpu::Device{});
  expect_logits(model.forward(rows(expected()["bn"]["inputs"])), expected()["bn"]);
  EXPECT_EQ(model.layers[1].get<nn::BatchNorm<Cpu>>().num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{expected()["bn"]["num_batches_tracked"].get<std::int32_t>()});
}

TEST(PytorchRecorder, NestedCheckpointLoadsThroughTheTopLevelKey) {
  const auto model = Mlp<Cpu>::init().load_file(
      kDir + "nested.pt", PytorchRecorder{}.with_top_level_key("model"), Cpu::Device{});
  expect_logits(model.forward(rows(expected()["nested"]["inputs"])), expected()["nested"]);
  // Without the key the record's names are "model.fc1.weight", ...: every one is a problem,
  // listed in one error, and the module is untouched.
  const auto fresh = Mlp<Cpu>::init();
  const auto before = fresh.fc1.weight.val().to_data().to_vec<float>();
  try {
    (void)fresh.load_file(kDir + "nested.pt", PytorchRecorder{}, Cpu::Device{});
    ADD_FAILURE() << "loaded";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("PytorchRecorder::load_file: \"" + kDir + "nested.pt\": 12 problems: "
                                    "missing \"fc1.weight\"; missing \"fc1.bias\""));
    EXPECT_THAT(e.what(), HasSubstr("unexpected \"model.fc1.weight\""));
  }
  EXPECT_EQ(fresh.fc1.weight.val().to_data().to_vec<float>(), before);
}

TEST(PytorchRecorder, ShapeMismatchAndMalformedFilesAreFormatErrors) {
  const auto wrong = Mlp<Cpu>{nn::LinearConfig(3, 5).init<Cpu>({}), nn::LinearConfig(5, 2).init<Cpu>({})};
  EXPECT_THAT([&] { (void)wrong.load_file(kDir + "mlp.pt", PytorchRecorder{}, Cpu::Device{}); },
              ::testing::ThrowsMessage<FormatError>(
                  HasSubstr("\"fc1.weight\" has shape [4, 3], module expects [5, 3]")));
  EXPECT_THAT([&] { (void)Mlp<Cpu>::init().load_file(kDir + "malformed/legacy.pt", PytorchRecorder{}, Cpu::Device{}); },
              ::testing::ThrowsMessage<FormatError>(HasSubstr("re-save it with a newer PyTorch")));
}

}  // namespace
}  // namespace kiln::record

namespace kiln::record {
namespace {

/// The MLP with one more layer than the checkpoints have: fc3 = Linear(2, 2).
template <Backend B>
struct Mlp3 {
  nn::Linear<B> fc1;
  nn::Linear<B> fc2;
  nn::Linear<B> fc3;
  KILN_MODULE(Mlp3, fc1, fc2, fc3)
};

TEST(PytorchRecorder, KeyRemappingLoadsANestedCheckpointAndReportsWhatItDid) {
  // nested.pt is {"model": state_dict, "optimizer": {...}}: keys "model.fc1.weight", ...,
  // "optimizer.state.0.momentum_buffer" ... "optimizer.state.3.momentum_buffer" (SGD with
  // momentum, one buffer per parameter). Remapping "^model\." to "" leaves the optimizer's
  // entry unexpected: refused with strict, reported without it.
  const auto rec = PytorchRecorder{}.with_key_remapping(R"(^model\.)", "");
  try {
    (void)rec.load_file(Mlp<Cpu>::init(), kDir + "nested.pt", Cpu::Device{});
    FAIL() << "an unexpected key loaded strictly";
  } catch (const FormatError& e) {
    EXPECT_THAT(e.what(), HasSubstr("optimizer.state.0.momentum_buffer"));
  }
  LoadReport report;
  const auto model =
      rec.with_load_options(rec.load_options().strict(false))
          .load_file(Mlp<Cpu>::init(), kDir + "nested.pt", Cpu::Device{}, report);
  expect_logits(model.forward(rows(expected()["nested"]["inputs"])), expected()["nested"]);
  EXPECT_EQ(report.applied,
            (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}));
  EXPECT_EQ(report.unexpected,
            (std::vector<std::string>{
                "optimizer.state.0.momentum_buffer", "optimizer.state.1.momentum_buffer",
                "optimizer.state.2.momentum_buffer", "optimizer.state.3.momentum_buffer"}));
  EXPECT_TRUE(report.missing.empty());
  ASSERT_EQ(report.remapped.size(), 4u);
  EXPECT_EQ(report.remapped[0].second.rfind("fc", 0), 0u);
  EXPECT_THAT(report.to_string(), HasSubstr("optimizer.state.0.momentum_buffer"));
}

TEST(PytorchRecorder, AllowPartialKeepsTheLayersTheCheckpointLacks) {
  const Mlp3<Cpu> fresh{nn::LinearConfig(3, 4).init<Cpu>({}), nn::LinearConfig(4, 2).init<Cpu>({}),
                        nn::LinearConfig(2, 2).init<Cpu>({})};
  EXPECT_THROW((void)PytorchRecorder{}.load_file(fresh, kDir + "mlp.pt", Cpu::Device{}),
               FormatError);
  LoadReport report;
  const auto model =
      PytorchRecorder{}.allow_partial().load_file(fresh, kDir + "mlp.pt", Cpu::Device{}, report);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"fc3.weight", "fc3.bias"}));
  EXPECT_EQ(report.applied.size(), 4u);
  model.fc3.weight.val().to_data().assert_approx_eq(fresh.fc3.weight.val().to_data(),
                                                     Tolerance::absolute(0));
  // fc1/fc2 are PyTorch's: the first two layers give the MLP's logits.
  const auto x = rows(expected()["mlp"]["inputs"]);
  expect_logits(model.fc2.forward(activation::relu(model.fc1.forward(x))), expected()["mlp"]);
}

}  // namespace
}  // namespace kiln::record
