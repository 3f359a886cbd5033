// group_norm in nn::Sequential's spec: registered by its own header (one registration line
// and its shape rule beside GroupNormConfig). Forward values in training mode against
// PyTorch, record keys round-tripped through SafeTensors bytes, and bad specs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/group_norm.hpp"
#include "kiln/nn/sequential.hpp"
#include "kiln/record/recorder.hpp"

namespace kiln {
namespace {

using nn::SequentialConfig;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

// [batch_size, 12] -> items [4, 3] -> GroupNorm(2 groups, 4 channels) -> [batch_size, 12].
const char* kSpec = R"({"layers": [
    {"type": "reshape", "shape": [4, 3]},
    {"type": "group_norm", "num_groups": 2, "num_channels": 4},
    {"type": "flatten"}]})";

/// Sets the group norm's weight and bias (layer 1) to values PyTorch is given too.
template <class B>
void set_affine(nn::Sequential<B>& model) {
  auto set = [](const std::string& path, auto& p) {
    using T = std::decay_t<decltype(p.val())>;
    if constexpr (std::is_same_v<T, Tensor<B, 1>>) {
      if (path == "1.weight") p.set(T::from_floats({0.5f, -1.f, 2.f, 1.5f}));
      if (path == "1.bias") p.set(T::from_floats({0.1f, 0.2f, -0.3f, 0.f}));
    }
  };
  model.visit_mut(set);
}

TEST(SequentialGroupNormTest, TrainingForwardMatchesPyTorch) {
  auto model = SequentialConfig::from_json_string(kSpec).init<AD>();
  set_affine(model);
  const auto x = Tensor<AD, 2>::from_floats(
      {{-2.f, 1.6f, -0.3f, 3.3f, 1.4f, -0.5f, 3.1f, 1.2f, -0.7f, 2.9f, 1.f, -0.9f},
       {-1.f, 0.5f, 2.f, -0.4f, 1.1f, 2.6f, 0.2f, 1.7f, -0.7f, 0.8f, 2.3f, -0.1f}});
  // PyTorch 1.13:
  //   gn = torch.nn.GroupNorm(2, 4, eps=1e-5); gn.train()
  //   gn.weight = [0.5, -1, 2, 1.5]; gn.bias = [0.1, 0.2, -0.3, 0]
  //   gn(x.reshape(2, 4, 3)).reshape(2, 12)
  const auto expected = TensorData::from<float>(
      {{-0.651859f, 0.395893f, -0.157087f, -1.381329f, -0.275369f, 0.830592f, 2.273065f,
        -0.171347f, -2.615758f, 1.736819f, -0.09649f, -1.929799f},
       {-0.613744f, -0.018957f, 0.57583f, 1.151659f, -0.037915f, -1.227488f, -1.266732f,
        1.633464f, -3.00685f, 0.14501f, 2.320157f, -1.160078f}});
  model.forward(x).to_data().assert_approx_eq(expected, Tolerance::rel_abs(1e-4, 1e-5));
  // Inference (valid()) is the same computation: GroupNorm has no running statistics.
  model.valid().forward(x.inner()).to_data().assert_approx_eq(expected,
                                                              Tolerance::rel_abs(1e-4, 1e-5));
}

TEST(SequentialGroupNormTest, RecordKeysRoundTrip) {
  auto model = SequentialConfig::from_json_string(kSpec).init<Cpu>();
  EXPECT_EQ(model.param_paths(), (std::vector<std::string>{"1.weight", "1.bias"}));
  set_affine(model);
  const auto bytes = record::SafetensorsRecorder{}.to_bytes(model);
  const auto fresh = SequentialConfig::from_json_string(kSpec).init<Cpu>();
  const auto loaded = record::SafetensorsRecorder{}.from_bytes(fresh, bytes, Cpu::Device{});
  EXPECT_EQ(loaded.param_paths(), (std::vector<std::string>{"1.weight", "1.bias"}));
  const auto& norm = loaded.layers[1].get<nn::GroupNorm<Cpu>>();
  EXPECT_EQ(norm.weight->val().to_data().to_vec<float>(),
            (std::vector<float>{0.5f, -1.f, 2.f, 1.5f}));
  EXPECT_EQ(norm.bias->val().to_data().to_vec<float>(),
            (std::vector<float>{0.1f, 0.2f, -0.3f, 0.f}));
  // The spec round-trips, with the config's defaults written out.
  const auto c = SequentialConfig::from_json_string(kSpec);
  EXPECT_EQ(c.to_json()["layers"][1].dump(),
            R"({"affine":true,"epsilon":1e-05,"num_channels":4,"num_groups":2,"type":"group_norm"})");
  EXPECT_EQ(SequentialConfig::from_json_string(c.to_json_string()), c);
}

void expect_spec_error(const std::string& layers, const std::string& message) {
  const std::string spec = R"({"layers": [)" + layers + "]}";
  EXPECT_THAT([&] { (void)SequentialConfig::from_json_string(spec); },
              ThrowsMessage<ConfigError>(HasSubstr(message)))
      << spec;
}

TEST(SequentialGroupNormTest, BadSpecsNameTheLayer) {
  expect_spec_error(R"({"type": "group_norm", "num_groups": 2})",
                    "SequentialConfig: layers[0] (group_norm): missing required field "
                    "\"num_channels\"");
  // The config's own check() (the message GroupNormConfig::init gives), prefixed by the layer.
  expect_spec_error(R"({"type": "group_norm", "num_groups": 3, "num_channels": 4})",
                    "SequentialConfig: layers[0] (group_norm): num_channels must be a positive "
                    "multiple of num_groups and epsilon >= 0, got num_groups = 3, num_channels = 4");
  expect_spec_error(R"({"type": "reshape", "shape": [6, 2]},
                       {"type": "group_norm", "num_groups": 2, "num_channels": 4})",
                    "SequentialConfig: layers[1] (group_norm): num_channels is 4 but the previous "
                    "layer outputs items [6, 2] (6 channels in dim 1)");
  EXPECT_THAT([] { (void)nn::GroupNormConfig(3, 4).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("GroupNormConfig::init: num_channels must be")));
}

}  // namespace
}  // namespace kiln
