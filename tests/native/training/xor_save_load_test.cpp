// The tutorial's Step 10 and Exercise 11: XOR trains to 100 % accuracy with a fixed seed;
// the trained model is saved (config JSON + SafeTensors weights), loaded into a fresh model
// on the inference backend in a separate function, and predicts exactly as before.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/temp_dir.hpp"
#include "support/xor.hpp"


namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using test::predictions;
using test::xor_inputs;

/// The tutorial's model: 2 -> hidden_size -> ReLU -> 2.
template <Backend B>
struct XorModel {
  nn::Linear<B> fc1;
  nn::Relu activation;
  nn::Linear<B> fc2;
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
    return {nn::LinearConfig(2, hidden_size).init<B>(device), nn::Relu{},
            nn::LinearConfig(hidden_size, 2).init<B>(device)};
  }
};

class XorSaveLoad : public ::testing::Test {
 protected:
  std::string path(const char* name) const { return dir_.file(name); }
  test::TempDir dir_{"xor_save_load"};
};

/// Exercise 11's inference side: knows nothing of the training run but the two files.
/// Returns the logits [4, 2] of the loaded model for the four XOR inputs.
template <class Recorder>
Tensor<Cpu, 2> infer_from_files(const std::string& config_path, const std::string& weights_path,
                                const Recorder& recorder) {
  const auto config = XorModelConfig::load(config_path);
  const auto model = config.init<Cpu>().load_file(weights_path, recorder, Cpu::Device{});
  return model.forward(xor_inputs<Cpu>());
}

TEST_F(XorSaveLoad, TrainsTo100PercentThenSavedModelPredictsTheSame) {
  AD::seed(42);
  const auto config = XorModelConfig().with_hidden_size(16);
  const auto trained = test::train_xor<AD>(config.init<AD>(), 200).valid();
  const auto logits = trained.forward(xor_inputs<Cpu>());
  ASSERT_EQ(predictions(logits), (std::vector<std::int32_t>{0, 1, 1, 0}));

  config.save(path("config.json"));
  trained.save_file(path("model.safetensors"), record::SafetensorsRecorder{});
  const auto loaded_logits =
      infer_from_files(path("config.json"), path("model.safetensors"), record::SafetensorsRecorder{});
  // F32 on disk: the very same weights, so bit-identical logits.
  EXPECT_EQ(loaded_logits.to_data().to_vec<float>(), logits.to_data().to_vec<float>());

  // The half-precision record rounds each weight to f16 (relative error <= 2^-11): the logits
  // move by little and the predictions stay.
  trained.save_file(path("model_half.safetensors"), record::CompactRecorder{});
  const auto half_logits =
      infer_from_files(path("config.json"), path("model_half.safetensors"), record::CompactRecorder{});
  EXPECT_EQ(predictions(half_logits), (std::vector<std::int32_t>{0, 1, 1, 0}));
  half_logits.to_data().assert_approx_eq(logits.to_data(), Tolerance::absolute(2e-2));
  EXPECT_NE(half_logits.to_data().to_vec<float>(), logits.to_data().to_vec<float>());
}

TEST_F(XorSaveLoad, SequentialFromSpecRoundTripsThroughBytes) {
  // The bindings' path: a JSON spec, training, bytes out, bytes into a fresh model of the spec.
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 2, "d_output": 8},
      {"type": "tanh"},
      {"type": "linear", "d_input": 8, "d_output": 2}]})");
  AD::seed(7);
  const auto trained = test::train_xor<AD>(spec.init<AD>(), 300, 0.05).valid();
  const auto logits = trained.forward(xor_inputs<Cpu>());
  ASSERT_EQ(predictions(logits), (std::vector<std::int32_t>{0, 1, 1, 0}));

  const auto bytes = record::SafetensorsRecorder{}.to_bytes(trained);
  spec.save(path("spec.json"));
  // A fresh model with other random weights: it must not predict the same by chance.
  AD::seed(8);
  const auto fresh = nn::SequentialConfig::load(path("spec.json")).init<Cpu>();
  ASSERT_NE(fresh.forward(xor_inputs<Cpu>()).to_data().to_vec<float>(),
            logits.to_data().to_vec<float>());
  const auto loaded = record::SafetensorsRecorder{}.from_bytes(fresh, bytes, Cpu::Device{});
  EXPECT_EQ(loaded.forward(xor_inputs<Cpu>()).to_data().to_vec<float>(),
            logits.to_data().to_vec<float>());
  EXPECT_EQ(loaded.param_paths(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
}

}  // namespace
}  // namespace kiln
