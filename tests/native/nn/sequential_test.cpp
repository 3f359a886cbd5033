// nn::Sequential and SequentialConfig: built in code and from a JSON spec, forward values by
// hand, PyTorch nn.Sequential's keys, every bad spec, printing, num_params, valid() and the
// module interface (visit_mut, nesting, gradients).
#include "kiln/nn/sequential.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>


#include "kiln/kiln.hpp"
#include "support/temp_dir.hpp"
#include "support/backends.hpp"

namespace kiln {
namespace {

using module::Param;
using nn::Sequential;
using nn::SequentialConfig;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

template <class B>
nn::Linear<B> linear(NestedList<float, 2> w, std::optional<NestedList<float, 1>> b) {
  nn::Linear<B> lin;
  lin.weight = Param<Tensor<B, 2>>(Tensor<B, 2>::from_floats(w));
  if (b) lin.bias = Param<Tensor<B, 1>>(Tensor<B, 1>::from_floats(*b));
  return lin;
}

// 2 -> 3 (W1 = [[1, -1], [0, 2], [-1, 1]], b1 = [0, -1, 0.5]), relu, 3 -> 1 (W2 = [[1, 2, -1]],
// b2 = [0.25]).
template <class B>
Sequential<B> small_model() {
  return Sequential<B>()
      .add(linear<B>({{1.f, -1.f}, {0.f, 2.f}, {-1.f, 1.f}}, NestedList<float, 1>{0.f, -1.f, 0.5f}))
      .add(nn::Relu{})
      .add(linear<B>({{1.f, 2.f, -1.f}}, NestedList<float, 1>{0.25f}));
}

std::vector<float> values(const auto& t) { return t.to_data().template to_vec<float>(); }

template <class B>
class SequentialTest : public ::testing::Test {};
TYPED_TEST_SUITE(SequentialTest, test::AllBackends);

TYPED_TEST(SequentialTest, FromCodeForwardByHand) {
  const auto model = small_model<TypeParam>();
  EXPECT_EQ(model.len(), 3u);
  // [1, 2]:  W1·x + b1 = [-1, 4, 1] + b1 = [-1, 3, 1.5] -> relu [0, 3, 1.5] -> 6 - 1.5 + 0.25.
  // [3, -1]: [4, -2, -4] + b1 = [4, -3, -3.5] -> relu [4, 0, 0] -> 4 + 0.25.
  const auto y = model.forward(Tensor<TypeParam, 2>::from_floats({{1.f, 2.f}, {3.f, -1.f}}));
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  EXPECT_EQ(values(y), (std::vector<float>{4.75f, 4.25f}));
}

TYPED_TEST(SequentialTest, FromJsonSpecForwardByHand) {
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 2, "d_output": 3, "initializer": {"Constant": {"value": 0.5}}},
      {"type": "relu"},
      {"type": "dropout", "prob": 0.1},
      {"type": "linear", "d_input": 3, "d_output": 1, "bias": false, "initializer": "Ones"}
  ]})")
                         .template init<TypeParam>();
  EXPECT_EQ(model.param_paths(), (std::vector<std::string>{"0.weight", "0.bias", "3.weight"}));
  EXPECT_EQ(model.num_params(), 6 + 3 + 3);
  // Inference (Cpu) is deterministic; on Autodiff dropout is active, so check on valid() there.
  const auto x = Tensor<Cpu, 2>::from_floats({{1.f, 2.f}, {-4.f, 1.f}});
  // [1, 2]: 0.5·3 + 0.5 = 2 per unit -> 6.  [-4, 1]: 0.5·(-3) + 0.5 = -1 -> relu 0 -> 0.
  if constexpr (AutodiffBackend<TypeParam>) {
    EXPECT_EQ(values(model.valid().forward(x)), (std::vector<float>{6.f, 0.f}));
  } else {
    EXPECT_EQ(values(model.forward(x)), (std::vector<float>{6.f, 0.f}));
  }
}

TEST(SequentialBuildTest, RecordKeysArePyTorchsIndices) {
  const auto model = small_model<Cpu>();
  EXPECT_EQ(model.param_paths(),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(model.num_params(), 6 + 3 + 3 + 1);
  std::vector<std::pair<std::string, Shape>> seen;
  auto visitor = [&](const std::string& path, const auto& p) {
    seen.emplace_back(path, p.shape());
  };
  model.visit(visitor, "model");
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], (std::pair<std::string, Shape>{"model.0.weight", Shape{3, 2}}));
  EXPECT_EQ(seen[3], (std::pair<std::string, Shape>{"model.2.bias", Shape{1}}));
}

TEST(SequentialBuildTest, AllLayerTypesFromJsonAndBack) {
  const auto c = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 4, "d_output": 8},
      {"type": "gelu", "approximate": true}, {"type": "sigmoid"}, {"type": "tanh"},
      {"type": "silu"}, {"type": "leaky_relu", "negative_slope": 0.2}, {"type": "leaky_relu"},
      {"type": "gelu"}, {"type": "dropout", "prob": 0.5}, {"type": "relu"},
      {"type": "linear", "d_input": 8, "d_output": 2, "bias": false}]})");
  ASSERT_EQ(c.layers.size(), 11u);
  EXPECT_EQ(c.layers[1].get<nn::Gelu>(), nn::Gelu{true});
  EXPECT_EQ(c.layers[5].get<nn::LeakyReluConfig>().negative_slope, 0.2);
  EXPECT_EQ(c.layers[6].get<nn::LeakyReluConfig>().negative_slope, 0.01);
  EXPECT_EQ(c.layers[7].get<nn::Gelu>(), nn::Gelu{false});
  EXPECT_EQ(nn::layer_type(c.layers[8]), "dropout");
  EXPECT_EQ(SequentialConfig::from_json_string(c.to_json_string()), c);
  const auto j = c.to_json();
  EXPECT_EQ(j["layers"][0]["type"], "linear");
  EXPECT_EQ(j["layers"][0]["bias"], true);
  EXPECT_EQ(j["layers"][1].dump(), R"({"approximate":true,"type":"gelu"})");
  EXPECT_EQ(j["layers"][2].dump(), R"({"type":"sigmoid"})");

  const auto model = c.init<Cpu>();
  EXPECT_EQ(model.param_paths(), (std::vector<std::string>{"0.weight", "0.bias", "10.weight"}));
  EXPECT_EQ(model.forward(Tensor<Cpu, 2>::zeros(Shape{5, 4})).shape(), (Shape{5, 2}));
  EXPECT_EQ(model.layers[5].get<nn::LeakyRelu>(), nn::LeakyRelu{0.2});
}

TEST(SequentialConfigTest, BuiltInCodeSavedAndLoaded) {
  const auto c =
      SequentialConfig()
          .add(nn::LinearConfig(2, 16))
          .add(nn::Relu{})
          .add(nn::DropoutConfig(0.25))
          .add(nn::LinearConfig(16, 2).with_initializer(nn::Initializer::xavier_uniform()));
  const auto path = test::temp_path("sequential_test.json").string();
  c.save(path);
  EXPECT_EQ(SequentialConfig::load(path), c);
  std::ofstream(path) << R"({"layers": [{"type": "lineer"}]})";
  EXPECT_THAT([&] { (void)SequentialConfig::load(path); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "\"" + path + "\": SequentialConfig: layers[0]: unknown layer type \"lineer\"")));
  std::filesystem::remove(path);

  std::ostringstream out;
  out << SequentialConfig().add(nn::Relu{});
  EXPECT_EQ(out.str(), R"(SequentialConfig {"layers":[{"type":"relu"}]})");
}

// ---- bad specs: each names the layer index and the field

void expect_spec_error(const std::string& layers, const std::string& message) {
  const std::string spec = R"({"layers": [)" + layers + "]}";
  EXPECT_THAT([&] { (void)SequentialConfig::from_json_string(spec); },
              ThrowsMessage<ConfigError>(HasSubstr(message)))
      << spec;
}

const char* kL0 = R"({"type": "linear", "d_input": 2, "d_output": 16})";

TEST(SequentialSpecErrorsTest, UnknownOrMissingType) {
  expect_spec_error(std::string(kL0) + R"(, {"type": "relu"}, {"type": "lineer"})",
                    "SequentialConfig: layers[2]: unknown layer type \"lineer\" (types: linear, "
                    "dropout, relu, gelu, sigmoid, tanh, leaky_relu, silu, reshape, flatten, "
                    "conv2d, conv1d, max_pool2d, max_pool1d, avg_pool2d, avg_pool1d, "
                    "adaptive_avg_pool2d, adaptive_avg_pool1d, batch_norm, layer_norm, "
                    "conv_transpose2d, embedding, group_norm, instance_norm, rms_norm, lstm, gru, "
                    "multi_head_attention, position_wise_feed_forward, transformer_encoder, "
                    "transformer_decoder, positional_encoding, rotary_encoding, conv3d, "
                    "conv_transpose3d, conv_transpose1d, "
                    "max_pool3d, avg_pool3d, adaptive_avg_pool3d, upsample, "
                    "selu, mish, hard_sigmoid, hard_swish, elu, celu, glu, prelu, swi_glu)");
  expect_spec_error(R"({"d_input": 2, "d_output": 3})",
                    "SequentialConfig: layers[0]: missing required field \"type\"");
  expect_spec_error(R"({"type": 3})",
                    "SequentialConfig: layers[0].type: expected a string, got the integer 3");
  expect_spec_error(R"({"type": "relu"}, "relu")",
                    "SequentialConfig: layers[1]: expected an object such as {\"type\": \"relu\"}, "
                    "got the string \"relu\"");
}

TEST(SequentialSpecErrorsTest, MismatchedSizesBetweenLayers) {
  expect_spec_error(
      std::string(kL0) + R"(, {"type": "relu"}, {"type": "linear", "d_input": 32, "d_output": 2})",
      "SequentialConfig: layers[2] (linear): d_input is 32 but the previous layer "
      "outputs 16");
  // Activations and dropout in between keep the size; the check spans them.
  expect_spec_error(std::string(kL0) + R"(, {"type": "dropout", "prob": 0.5}, {"type": "tanh"},
                        {"type": "linear", "d_input": 15, "d_output": 2})",
                    "layers[3] (linear): d_input is 15 but the previous layer outputs 16");
  expect_spec_error(R"({"type": "linear", "d_input": 0, "d_output": 2})",
                    "SequentialConfig: layers[0] (linear): d_input must be >= 1, got 0");
  expect_spec_error(R"({"type": "relu"}, {"type": "linear", "d_input": 2, "d_output": -1})",
                    "layers[1] (linear): d_output must be >= 1, got -1");
}

TEST(SequentialSpecErrorsTest, MissingWrongOrUnknownFields) {
  expect_spec_error(R"({"type": "linear", "d_input": 2})",
                    "SequentialConfig: layers[0] (linear): missing required field \"d_output\"");
  expect_spec_error(std::string(kL0) + R"(, {"type": "dropout"})",
                    "SequentialConfig: layers[1] (dropout): missing required field \"prob\"");
  expect_spec_error(R"({"type": "linear", "d_input": "2", "d_output": 3})",
                    "layers[0] (linear): d_input: expected an integer, got the string \"2\"");
  expect_spec_error(R"({"type": "linear", "d_input": 2, "d_output": 3, "in_features": 2})",
                    "layers[0] (linear): unknown field \"in_features\"");
  expect_spec_error(R"({"type": "linear", "d_input": 2, "d_output": 3, "bias": 1})",
                    "layers[0] (linear): bias: expected a boolean, got the integer 1");
  expect_spec_error(std::string(kL0) + R"(, {"type": "relu", "inplace": true})",
                    "layers[1] (relu): unknown field \"inplace\" (relu takes no fields)");
  expect_spec_error(R"({"type": "gelu", "approximate": "tanh"})",
                    "layers[0] (gelu): approximate: expected a boolean, got the string \"tanh\"");
  expect_spec_error(R"({"type": "gelu", "approx": true})",
                    "layers[0] (gelu): unknown field \"approx\"");
  expect_spec_error(R"({"type": "leaky_relu", "negative_slope": "0.1"})",
                    "layers[0] (leaky_relu): negative_slope: expected a number");
}

TEST(SequentialSpecErrorsTest, OutOfRangeValues) {
  expect_spec_error(std::string(kL0) + R"(, {"type": "dropout", "prob": 1.5})",
                    "SequentialConfig: layers[1] (dropout): prob must be in [0, 1], got 1.5");
  expect_spec_error(R"({"type": "linear", "d_input": 2, "d_output": 3,
                        "initializer": {"Uniform": {"min": 1, "max": 0}}})",
                    "layers[0] (linear): initializer: Initializer::Uniform: min must be <= max");
  expect_spec_error(R"({"type": "linear", "d_input": 2, "d_output": 3, "initializer": "Twos"})",
                    "layers[0] (linear): initializer: Initializer: unknown variant \"Twos\"");
}

TEST(SequentialSpecErrorsTest, TopLevelProblems) {
  const auto parse = [](const char* text) {
    return [text] { (void)SequentialConfig::from_json_string(text); };
  };
  EXPECT_THAT(parse("{}"), ThrowsMessage<ConfigError>(
                               HasSubstr("SequentialConfig: missing required field \"layers\"")));
  EXPECT_THAT(parse(R"({"layers": {"type": "relu"}})"),
              ThrowsMessage<ConfigError>(HasSubstr("SequentialConfig.layers: expected an array")));
  EXPECT_THAT(parse(R"({"layers": [], "name": "mlp"})"),
              ThrowsMessage<ConfigError>(HasSubstr("SequentialConfig: unknown field \"name\"")));
  EXPECT_THAT(parse(R"({"layers": [)"),
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON")));
  // A config built in code is checked at init.
  const auto bad = SequentialConfig().add(nn::LinearConfig(2, 4)).add(nn::LinearConfig(3, 1));
  EXPECT_THAT([&] { (void)bad.init<Cpu>(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("layers[1] (linear): d_input is 3 but the previous layer outputs 4")));
}

TEST(SequentialBuildTest, AddAndForwardCheckSizesNamingTheLayer) {
  auto model = Sequential<Cpu>().add(nn::LinearConfig(2, 16).init<Cpu>()).add(nn::Relu{});
  EXPECT_THAT(
      [&] { model.add(nn::LinearConfig(3, 2).init<Cpu>()); },
      ThrowsMessage<ConfigError>(HasSubstr(
          "Sequential::add: layer 2 (linear): d_input is 3 but the previous layer outputs 16")));
  EXPECT_EQ(model.len(), 2u) << "a rejected layer is not added";
  EXPECT_THAT(
      [&] {
        (void)model.forward(Tensor<Cpu, 2>::zeros(Shape{4, 3}));
      },
      ThrowsMessage<ShapeError>(HasSubstr(
          "Sequential::forward: layer 0 (linear): Linear::forward: expected input [..., 2]")));
  // No layers: the identity.
  const auto x = Tensor<Cpu, 2>::from_floats({{1.f, 2.f}});
  EXPECT_EQ(values(Sequential<Cpu>().forward(x)), (std::vector<float>{1.f, 2.f}));
}

TEST(SequentialBuildTest, Printing) {
  std::ostringstream out;
  out << small_model<Cpu>();
  EXPECT_EQ(out.str(),
            "Sequential {0: Linear {d_input: 2, d_output: 3, bias: true, params: 9}, 1: Relu, "
            "2: Linear {d_input: 3, d_output: 1, bias: true, params: 4}, params: 13}");
  std::ostringstream with_dropout;
  with_dropout << Sequential<Cpu>().add(nn::Dropout{0.1}).add(nn::LeakyRelu{});
  EXPECT_EQ(with_dropout.str(),
            "Sequential {0: Dropout {prob: 0.1}, 1: LeakyRelu {negative_slope: 0.01}, params: 0}");
  std::ostringstream empty;
  empty << Sequential<Cpu>();
  EXPECT_EQ(empty.str(), "Sequential {params: 0}");
}

TEST(SequentialModuleTest, ValidFromInnerNoGradKeepIdsAndValues) {
  const auto model = small_model<AD>().add(nn::Dropout{0.5});
  const Sequential<Cpu> inference = model.valid();
  EXPECT_EQ(inference.len(), 4u);
  EXPECT_EQ(inference.param_paths(), model.param_paths());
  EXPECT_EQ(inference.layers[0].get<nn::Linear<Cpu>>().weight.id(),
            model.layers[0].get<nn::Linear<AD>>().weight.id());
  EXPECT_EQ(inference.layers[3].get<nn::Dropout>(), nn::Dropout{0.5});
  // Dropout is the identity on Cpu: the values of the model without it.
  const auto x = Tensor<Cpu, 2>::from_floats({{1.f, 2.f}, {3.f, -1.f}});
  EXPECT_EQ(values(inference.forward(x)), (std::vector<float>{4.75f, 4.25f}));

  const Sequential<AD> back = inference.from_inner<AD>();
  EXPECT_TRUE(back.layers[2].get<nn::Linear<AD>>().weight.val().is_require_grad());
  const Sequential<AD> frozen = model.no_grad();
  EXPECT_FALSE(frozen.layers[0].get<nn::Linear<AD>>().weight.is_require_grad());
  EXPECT_EQ(model.clone().num_params(), 13);
}

TEST(SequentialModuleTest, GradientsReachEveryLinear) {
  const auto model = small_model<AD>();
  const auto x = Tensor<AD, 2>::from_floats({{1.f, 2.f}, {3.f, -1.f}});
  auto grads = model.forward(x).sum().backward();
  std::vector<std::string> with_grad;
  // A generic visitor sees every parameter type a Sequential can hold, BatchNorm's Int
  // num_batches_tracked included (it has no gradient).
  auto collect = [&](const std::string& path, const auto& p) {
    if constexpr (std::decay_t<decltype(p.val())>::is_float) {
      if (p.val().grad(grads)) with_grad.push_back(path);
    }
  };
  model.visit(collect);
  EXPECT_EQ(with_grad, model.param_paths());
  // d sum(y)/d b2 = number of rows; d/d W2 = Σ_rows relu(h) = [0 + 4, 3 + 0, 1.5 + 0].
  const auto& last = model.layers[2].get<nn::Linear<AD>>();
  EXPECT_EQ(values(*last.bias->val().grad(grads)), (std::vector<float>{2.f}));
  EXPECT_EQ(values(*last.weight.val().grad(grads)), (std::vector<float>{4.f, 3.f, 1.5f}));
}

TEST(SequentialModuleTest, VisitMutReplacesParametersInPlace) {
  auto model = small_model<Cpu>();
  std::vector<std::string> paths;
  auto zero = [&](const std::string& path, auto& p) {
    paths.push_back(path);
    p.set(p.val().zeros_like());
  };
  model.visit_mut(zero);
  EXPECT_EQ(paths, model.param_paths());
  EXPECT_EQ(values(model.forward(Tensor<Cpu, 2>::ones(Shape{1, 2}))), (std::vector<float>{0.f}));
}

template <Backend B>
struct Net {
  Sequential<B> body;
  nn::Linear<B> head;
  KILN_MODULE(Net, body, head)
};

TEST(SequentialModuleTest, NestsInsideAKilnModule) {
  Net<AD> net;
  net.body = small_model<AD>();
  net.head = nn::LinearConfig(1, 2).init<AD>();
  EXPECT_EQ(net.param_paths(),
            (std::vector<std::string>{"body.0.weight", "body.0.bias", "body.2.weight",
                                      "body.2.bias", "head.weight", "head.bias"}));
  const Net<Cpu> inference = net.valid();
  EXPECT_EQ(inference.num_params(), 13 + 4);
  EXPECT_EQ(values(inference.body.forward(Tensor<Cpu, 2>::from_floats({{1.f, 2.f}}))),
            (std::vector<float>{4.75f}));
}

}  // namespace
}  // namespace kiln
