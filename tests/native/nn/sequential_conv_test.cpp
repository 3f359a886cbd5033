// nn::Sequential beyond rank 2: reshape, flatten, conv2d/conv1d, pools, batch_norm and
// layer_norm in the JSON spec; the run-time rank between layers; shape errors naming the
// layer; spec validation that follows the per-item shape; PyTorch's record keys; JSON
// round trips; gradients through a CNN against finite differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/sequential.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using nn::Sequential;
using nn::SequentialConfig;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

std::vector<float> values(const auto& t) { return t.to_data().template to_vec<float>(); }

// [b, 36] -> [b, 1, 6, 6] -> conv 1->2 3x3 same -> bn -> relu -> max pool 2 -> [b, 2, 3, 3]
// -> flatten [b, 18] -> linear 3.
const char* kCnn = R"({"layers": [
    {"type": "reshape", "shape": [1, 6, 6]},
    {"type": "conv2d", "channels": [1, 2], "kernel_size": [3, 3], "padding": "same"},
    {"type": "batch_norm", "num_features": 2},
    {"type": "relu"},
    {"type": "max_pool2d", "kernel_size": 2},
    {"type": "flatten"},
    {"type": "linear", "d_input": 18, "d_output": 3}]})";

template <class B>
class SequentialConvTest : public ::testing::Test {};
TYPED_TEST_SUITE(SequentialConvTest, test::AllBackends);

TYPED_TEST(SequentialConvTest, CnnSpecRunsFromFlatPixelsToLogits) {
  const auto model = SequentialConfig::from_json_string(kCnn).template init<TypeParam>();
  const auto y = model.forward(Tensor<TypeParam, 2>::ones(Shape{4, 36}));
  EXPECT_EQ(y.shape(), (Shape{4, 3}));
  // The generic entry: a rank-4 input (no reshape needed after the first layer) also works.
  const auto images = Tensor<TypeParam, 4>::ones(Shape{2, 1, 6, 6});
  const auto rest = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv2d", "channels": [1, 2], "kernel_size": 3},
      {"type": "adaptive_avg_pool2d", "output_size": 1},
      {"type": "flatten"}]})")
                        .template init<TypeParam>();
  EXPECT_EQ((rest.template forward_as<2>(images).shape()), (Shape{2, 2}));
}

TEST(SequentialConvBuildTest, RecordKeysAreTorchSequentials) {
  const auto model = SequentialConfig::from_json_string(kCnn).init<Cpu>();
  EXPECT_EQ(model.param_paths(),
            (std::vector<std::string>{"1.weight", "1.bias", "2.weight", "2.bias",
                                      "2.running_mean", "2.running_var", "2.num_batches_tracked",
                                      "6.weight", "6.bias"}));
  EXPECT_EQ(model.num_params(), (18 + 2) + (2 * 4 + 1) + (18 * 3 + 3));
}

TEST(SequentialConvForwardTest, ConvPoolFlattenValuesByHand) {
  // conv 1->1, 2x2 kernel of ones, bias 1, on a 3x3 image 1..9: window sums + 1 =
  // [[1+2+4+5, 2+3+5+6], [4+5+7+8, 5+6+8+9]] + 1 = [[13, 17], [25, 29]]; max pool 2 -> 29;
  // then avg pool is not needed: flatten -> [29].
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 3, 3]},
      {"type": "conv2d", "channels": [1, 1], "kernel_size": 2, "initializer": "Ones"},
      {"type": "max_pool2d", "kernel_size": 2},
      {"type": "flatten"}]})")
                         .init<Cpu>();
  const auto x = Tensor<Cpu, 2>::from_floats({{1, 2, 3, 4, 5, 6, 7, 8, 9}, {0, 0, 0, 0, 0, 0, 0, 0, -1}});
  const auto y = model.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 1}));
  // Second image: windows sum to 0, 0, 0, -1 -> +1 -> max 1.
  EXPECT_EQ(values(y), (std::vector<float>{29.f, 1.f}));

  // avg pool 2 with stride 1 over the same conv output: means of [[13, 17], [25, 29]] -> 21.
  const auto avg = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 3, 3]},
      {"type": "conv2d", "channels": [1, 1], "kernel_size": [2, 2], "initializer": "Ones"},
      {"type": "avg_pool2d", "kernel_size": 2, "stride": 1},
      {"type": "reshape", "shape": [1]}]})")
                       .init<Cpu>();
  EXPECT_EQ(values(avg.forward(x)), (std::vector<float>{21.f, 0.75f}));
}

TEST(SequentialConvForwardTest, Conv1dAndLayerNormByHand) {
  // [b, 4] -> [b, 1, 4] -> conv1d kernel 2 of ones, no bias: [x0+x1, x1+x2, x2+x3] -> rank 3
  // -> layer norm over the last dim (3): (v - mean) / sqrt(var + eps).
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, -1]},
      {"type": "conv1d", "channels": [1, 1], "kernel_size": 2, "bias": false, "initializer": "Ones"},
      {"type": "layer_norm", "d_model": 3, "epsilon": 0.0},
      {"type": "flatten"}]})")
                         .init<Cpu>();
  const auto y = model.forward(Tensor<Cpu, 2>::from_floats({{0.f, 1.f, 2.f, 3.f}}));
  // conv: [1, 3, 5]; mean 3, var (4 + 0 + 4) / 3 = 8/3 -> [-2, 0, 2] / sqrt(8/3).
  const float s = std::sqrt(8.f / 3.f);
  y.to_data().assert_approx_eq(TensorData::from<float>({{-2.f / s, 0.f, 2.f / s}}),
                               Tolerance::rel_abs(1e-5, 1e-6));
}

TEST(SequentialConvForwardTest, BatchNormTrainsOnAutodiffAndUsesRunningStatsInValid) {
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "batch_norm", "num_features": 2, "momentum": 0.5}]})")
                         .init<AD>();
  // Channel 0: [1, 3] (mean 2, biased var 1, unbiased 2); channel 1: [-2, 2] (mean 0, var 4,
  // unbiased 8).
  const auto x = Tensor<AD, 2>::from_floats({{1.f, -2.f}, {3.f, 2.f}});
  const auto y = model.forward(x);
  y.to_data().assert_approx_eq(TensorData::from<float>({{-1.f, -1.f}, {1.f, 1.f}}),
                               Tolerance::rel_abs(1e-4, 1e-4));
  const auto& bn = model.layers[0].get<nn::BatchNorm<AD>>();
  // running = 0.5·initial + 0.5·batch (unbiased var).
  EXPECT_EQ(values(bn.running_mean.val()), (std::vector<float>{1.f, 0.f}));
  EXPECT_EQ(values(bn.running_var.val()), (std::vector<float>{1.5f, 4.5f}));
  EXPECT_EQ(bn.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{1});
  // valid(): (x - running_mean) / sqrt(running_var + eps).
  const auto inference = model.valid();
  inference.forward(Tensor<Cpu, 2>::from_floats({{1.f, 4.5f}}))
      .to_data()
      .assert_approx_eq(TensorData::from<float>({{0.f, std::sqrt(4.5f)}}),
                        Tolerance::rel_abs(1e-4, 1e-4));
  // Rank 4 ([b, C, h, w]) works too.
  EXPECT_EQ(model.forward(Tensor<AD, 4>::ones(Shape{2, 2, 3, 3})).shape(), (Shape{2, 2, 3, 3}));
}

TEST(SequentialConvForwardTest, RankErrorsNameTheLayer) {
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "relu"}, {"type": "conv2d", "channels": [1, 2], "kernel_size": 3}]})")
                         .init<Cpu>();
  EXPECT_THAT([&] { (void)model.forward(Tensor<Cpu, 2>::zeros(Shape{2, 36})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Sequential::forward: layer 1 (conv2d): expected input [batch_size, channels, "
                  "height, width] (rank 4), got [2, 36]; add a reshape layer before it")));
  // Channels that do not fit: the conv's own message, prefixed by the layer.
  EXPECT_THAT([&] { (void)model.forward(Tensor<Cpu, 4>::zeros(Shape{2, 3, 8, 8})); },
              ThrowsMessage<ShapeError>(HasSubstr("Sequential::forward: layer 1 (conv2d): ")));
}

TEST(SequentialConvForwardTest, OutputRankAndReshapeErrors) {
  const auto flat = SequentialConfig::from_json_string(R"({"layers": [{"type": "flatten"}]})")
                        .init<Cpu>();
  EXPECT_THAT([&] { (void)flat.forward(Tensor<Cpu, 4>::zeros(Shape{2, 1, 2, 2})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Sequential::forward: the model outputs [2, 4] (rank 2), expected rank 4")));
  EXPECT_EQ((flat.forward_as<2>(Tensor<Cpu, 4>::zeros(Shape{2, 1, 2, 2})).shape()),
            (Shape{2, 4}));
  const auto reshape = SequentialConfig::from_json_string(
                           R"({"layers": [{"type": "reshape", "shape": [2, 5]}]})")
                           .init<Cpu>();
  EXPECT_THAT([&] { (void)reshape.forward_as<3>(Tensor<Cpu, 2>::zeros(Shape{3, 9})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Sequential::forward: layer 0 (reshape): Reshape::forward: cannot reshape "
                  "items of [3, 9] (9 elements each) to [2, 5] (10 elements)")));
}

// forward<D> with the same rank in and out, for models that keep it.
TEST(SequentialConvForwardTest, SameRankForwardKeepsWorking) {
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv2d", "channels": [1, 2], "kernel_size": 3, "padding": [1, 1]}]})")
                         .init<Cpu>();
  EXPECT_EQ(model.forward(Tensor<Cpu, 4>::zeros(Shape{2, 1, 8, 8})).shape(), (Shape{2, 2, 8, 8}));
}

// ---- the spec: validation follows the item shape

void expect_spec_error(const std::string& layers, const std::string& message) {
  const std::string spec = R"({"layers": [)" + layers + "]}";
  EXPECT_THAT([&] { (void)SequentialConfig::from_json_string(spec); },
              ThrowsMessage<ConfigError>(HasSubstr(message)))
      << spec;
}

TEST(SequentialConvSpecTest, ShapesBetweenLayersAreChecked) {
  expect_spec_error(R"({"type": "reshape", "shape": [1, 28, 28]},
                       {"type": "conv2d", "channels": [3, 8], "kernel_size": 3})",
                    "SequentialConfig: layers[1] (conv2d): channels[0] is 3 but the previous "
                    "layer outputs items [1, 28, 28] (1 channels)");
  expect_spec_error(R"({"type": "reshape", "shape": [1, 28, 28]},
                       {"type": "conv2d", "channels": [1, 8], "kernel_size": 3},
                       {"type": "max_pool2d", "kernel_size": [2, 2]},
                       {"type": "flatten"},
                       {"type": "linear", "d_input": 100, "d_output": 10})",
                    "SequentialConfig: layers[4] (linear): d_input is 100 but the previous layer "
                    "outputs 1352");
  expect_spec_error(R"({"type": "reshape", "shape": [1, 2, 2]},
                       {"type": "conv2d", "channels": [1, 1], "kernel_size": 3})",
                    "layers[1] (conv2d): the kernel (3 with dilation) is larger than the height "
                    "of the padded input (2)");
  expect_spec_error(R"({"type": "reshape", "shape": [4]},
                       {"type": "linear", "d_input": 4, "d_output": 16},
                       {"type": "reshape", "shape": [4, 5]})",
                    "layers[2] (reshape): shape [4, 5] has 20 elements but the previous layer "
                    "outputs items [16] (16 elements)");
  // A linear first fixes only the last dim (it accepts items of any rank), so a reshape
  // after it is checked at run time.
  EXPECT_NO_THROW((void)SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 4, "d_output": 16}, {"type": "reshape", "shape": [4, 5]}]})"));
  expect_spec_error(R"({"type": "reshape", "shape": [4]},
                       {"type": "conv2d", "channels": [1, 1], "kernel_size": 3})",
                    "layers[1] (conv2d): expects input [batch_size, channels, height, width] "
                    "(items of rank 3) but the previous layer outputs items [4]; add a reshape "
                    "layer before it");
  expect_spec_error(R"({"type": "reshape", "shape": [2, 3, 3]},
                       {"type": "batch_norm", "num_features": 3})",
                    "layers[1] (batch_norm): num_features is 3 but the previous layer outputs "
                    "items [2, 3, 3] (2 features in dim 1)");
  expect_spec_error(R"({"type": "reshape", "shape": [2, 3]},
                       {"type": "layer_norm", "d_model": 2})",
                    "layers[1] (layer_norm): d_model is 2 but the previous layer outputs items "
                    "[2, 3]");
  expect_spec_error(R"({"type": "reshape", "shape": [2, 3]}, {"type": "flatten", "start_dim": 3})",
                    "layers[1] (flatten): start_dim 3 and end_dim -1 do not fit the previous "
                    "layer's items [2, 3] (input rank 3)");
  expect_spec_error(R"({"type": "reshape", "shape": [1, 4, 4]},
                       {"type": "max_pool2d", "kernel_size": 5})",
                    "layers[1] (max_pool2d): the window (5) is larger than the height of the "
                    "padded input (4)");
}

TEST(SequentialConvSpecTest, FieldErrorsNameLayerAndField) {
  expect_spec_error(R"({"type": "conv2d", "channels": [1, 8]})",
                    "SequentialConfig: layers[0] (conv2d): missing required field \"kernel_size\"");
  expect_spec_error(R"({"type": "conv2d", "channels": [1, 8], "kernel_size": 3, "padding": "full"})",
                    "layers[0] (conv2d): padding: expected \"valid\", \"same\" or [height, width] "
                    "(or one integer), got the string \"full\"");
  expect_spec_error(R"({"type": "conv2d", "channels": [3, 8], "kernel_size": 3, "groups": 2})",
                    "layers[0] (conv2d): channels {3, 8} must both be divisible by groups = 2");
  expect_spec_error(R"({"type": "conv2d", "channels": [1, 8], "kernel_size": 3, "stride": 2,
                        "padding": "same"})",
                    "layers[0] (conv2d): padding Same requires stride 1");
  expect_spec_error(R"({"type": "conv2d", "channels": [1, 8], "kernel_size": [0, 3]})",
                    "layers[0] (conv2d): kernel_size must be >= 1 in every dim, got 0 in dim 0");
  expect_spec_error(R"({"type": "max_pool2d", "kernel_size": 2, "strides": 2})",
                    "layers[0] (max_pool2d): unknown field \"strides\" (the spec's name is "
                    "\"stride\")");
  expect_spec_error(R"({"type": "max_pool2d", "kernel_size": 2, "padding": 2})",
                    "layers[0] (max_pool2d): padding must be in [0, kernel_size / 2]");
  expect_spec_error(R"({"type": "avg_pool2d", "kernel_size": 2, "stride": 0})",
                    "layers[0] (avg_pool2d): stride must be >= 1, got 0");
  expect_spec_error(R"({"type": "avg_pool2d", "kernel_size": 2, "dilation": 2})",
                    "layers[0] (avg_pool2d): unknown field \"dilation\"");
  expect_spec_error(R"({"type": "reshape"})",
                    "layers[0] (reshape): missing required field \"shape\"");
  expect_spec_error(R"({"type": "reshape", "shape": [1, -1, -1]})",
                    "layers[0] (reshape): at most one dim of shape may be -1, got [1, -1, -1]");
  expect_spec_error(R"({"type": "reshape", "shape": [1, 2, 3, 4, 5]})",
                    "layers[0] (reshape): shape must have 1 to 4 dims");
  expect_spec_error(R"({"type": "reshape", "shape": [2, "3"]})",
                    "layers[0] (reshape): shape[1]: expected an integer, got the string \"3\"");
  expect_spec_error(R"({"type": "flatten", "start_dim": 0})",
                    "layers[0] (flatten): start_dim must be >= 1 (the batch dim 0 is kept), got 0");
  expect_spec_error(R"({"type": "flatten", "dims": 2})",
                    "layers[0] (flatten): unknown field \"dims\" (fields: start_dim, end_dim)");
  expect_spec_error(R"({"type": "batch_norm"})",
                    "layers[0] (batch_norm): missing required field \"num_features\"");
  expect_spec_error(R"({"type": "batch_norm", "num_features": 4, "momentum": 2})",
                    "layers[0] (batch_norm): momentum must be in [0, 1], got 2");
  expect_spec_error(R"({"type": "layer_norm", "d_model": 0})",
                    "layers[0] (layer_norm): d_model must be >= 1, got 0");
  expect_spec_error(R"({"type": "adaptive_avg_pool2d", "output_size": [0, 1]})",
                    "layers[0] (adaptive_avg_pool2d): output_size must be >= 1, got 0");
  expect_spec_error(R"({"type": "conv1d", "channels": [1, 2], "kernel_size": [3]})",
                    "layers[0] (conv1d): kernel_size: expected an integer");
}

TEST(SequentialConvSpecTest, JsonRoundTripInTheSpecsForm) {
  const auto c = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 8, 8]},
      {"type": "conv2d", "channels": [1, 4], "kernel_size": 3, "padding": "same", "bias": false},
      {"type": "conv2d", "channels": [4, 4], "kernel_size": [3, 3], "padding": [1, 1], "groups": 2},
      {"type": "batch_norm", "num_features": 4, "epsilon": 0.001},
      {"type": "max_pool2d", "kernel_size": [2, 2], "stride": 2},
      {"type": "avg_pool2d", "kernel_size": 2, "stride": [1, 1], "count_include_pad": false},
      {"type": "adaptive_avg_pool2d", "output_size": [2, 2]},
      {"type": "flatten", "start_dim": 1, "end_dim": 2},
      {"type": "conv1d", "channels": [8, 2], "kernel_size": 2, "padding": 1},
      {"type": "layer_norm", "d_model": 3},
      {"type": "flatten"}]})");
  ASSERT_EQ(c.layers.size(), 11u);
  EXPECT_EQ(nn::layer_type(c.layers[6]), "adaptive_avg_pool2d");
  EXPECT_EQ(c.layers[1].get<nn::Conv2dConfig>().padding, nn::PaddingConfig2d::same());
  EXPECT_EQ(c.layers[2].get<nn::Conv2dConfig>().padding,
            nn::PaddingConfig2d::explicit_({1, 1}));
  EXPECT_EQ(c.layers[4].get<nn::MaxPool2dConfig>().strides,
            (std::array<std::int64_t, 2>{2, 2}));
  EXPECT_EQ(c.layers[7].get<nn::Flatten>(), (nn::Flatten{1, 2}));
  EXPECT_EQ(SequentialConfig::from_json_string(c.to_json_string()), c);
  const auto j = c.to_json();
  EXPECT_EQ(j["layers"][0].dump(), R"({"shape":[1,8,8],"type":"reshape"})");
  EXPECT_EQ(j["layers"][1]["padding"], "same");
  EXPECT_EQ(j["layers"][2]["padding"].dump(), "[1,1]");
  EXPECT_EQ(j["layers"][4]["stride"].dump(), "[2,2]");
  EXPECT_FALSE(j["layers"][4].contains("strides"));
  EXPECT_EQ(j["layers"][8]["padding"], 1);
  EXPECT_EQ(j["layers"][10].dump(), R"({"end_dim":-1,"start_dim":1,"type":"flatten"})");
  // Per-item shapes: [1, 8, 8] -> [4, 8, 8] -> pool [4, 4, 4] -> avg [4, 3, 3] -> adaptive
  // [4, 2, 2] -> flatten(1, 2) [8, 2] -> conv1d (k 2, pad 1) [2, 3] -> [2, 3] -> [6].
  EXPECT_EQ(c.output_item_shape({64}), (std::vector<std::int64_t>{6}));
  EXPECT_EQ(c.init<Cpu>().forward_as<2>(Tensor<Cpu, 2>::zeros(Shape{5, 64})).shape(),
            (Shape{5, 6}));
  EXPECT_EQ(c.input_item_size(), 64);
}

TEST(SequentialConvSpecTest, OutputItemShapeAndInputSize) {
  const auto c = SequentialConfig::from_json_string(kCnn);
  EXPECT_EQ(c.output_item_shape({36}), (std::vector<std::int64_t>{3}));
  EXPECT_THAT([&] { (void)c.output_item_shape({35}); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "layers[0] (reshape): shape [1, 6, 6] has 36 elements but the previous layer "
                  "outputs items [35] (35 elements)")));
  EXPECT_EQ(c.input_item_size(), 36);
  EXPECT_EQ(SequentialConfig::from_json_string(
                R"({"layers": [{"type": "relu"}, {"type": "linear", "d_input": 7, "d_output": 1}]})")
                .input_item_size(),
            7);
  EXPECT_EQ(SequentialConfig::from_json_string(
                R"({"layers": [{"type": "conv2d", "channels": [1, 1], "kernel_size": 1}]})")
                .input_item_size(),
            std::nullopt);
}

TEST(SequentialConvBuildTest, Printing) {
  std::ostringstream out;
  out << SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 4, 4]},
      {"type": "conv2d", "channels": [1, 2], "kernel_size": 3},
      {"type": "max_pool2d", "kernel_size": 2}, {"type": "flatten"}]})")
             .init<Cpu>();
  EXPECT_EQ(out.str(),
            "Sequential {0: Reshape {shape: [1, 4, 4]}, 1: Conv2d {ch_in: 1, ch_out: 2, stride: "
            "[1, 1], kernel_size: [3, 3], dilation: [1, 1], groups: 1, padding: Valid, bias: true, "
            "params: 20}, 2: MaxPool2d {kernel_size: [2, 2], stride: [2, 2], padding: [0, 0], "
            "dilation: [1, 1], ceil_mode: false}, 3: Flatten {start_dim: 1, end_dim: -1}, params: "
            "20}");
}

TEST(SequentialConvGradTest, InputGradientMatchesFiniteDifferences) {
  AD::seed(3);
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [2, 4, 4]},
      {"type": "conv2d", "channels": [2, 3], "kernel_size": 3, "padding": "same"},
      {"type": "tanh"},
      {"type": "avg_pool2d", "kernel_size": 2},
      {"type": "flatten"},
      {"type": "linear", "d_input": 12, "d_output": 2}]})")
                         .init<AD>();
  test::Sampler rng(5);
  const auto x = Tensor<AD, 2>::from_data(rng.uniform_data(Shape{2, 32}, -1, 1));
  EXPECT_TRUE(test::gradcheck(
      "Sequential cnn", [&](Tensor<AD, 2> input) { return model.forward(input); }, x));
}

TEST(SequentialConvGradTest, EveryTrainableParameterGetsAGradient) {
  const auto model = SequentialConfig::from_json_string(kCnn).init<AD>();
  auto grads = model.forward(Tensor<AD, 2>::random(Shape{4, 36}, Distribution::normal(0, 1)))
                   .sum()
                   .backward();
  std::vector<std::string> with_grad;
  auto collect = [&](const std::string& path, const auto& p) {
    if constexpr (std::decay_t<decltype(p.val())>::is_float) {
      if (p.val().grad(grads)) with_grad.push_back(path);
    }
  };
  model.visit(collect);
  EXPECT_EQ(with_grad, (std::vector<std::string>{"1.weight", "1.bias", "2.weight", "2.bias",
                                                 "6.weight", "6.bias"}));
}

}  // namespace
}  // namespace kiln
