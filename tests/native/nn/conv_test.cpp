// nn::Conv1d, nn::Conv2d, nn::ConvTranspose2d and their configs: output shapes, padding
// Valid / Same (even kernels as PyTorch) / Explicit, PyTorch's default init bounds, record
// keys, config JSON, printing and config errors. The convolution values themselves are
// tested in tests/native/tensor/conv_test.cpp and tests/native/autodiff/conv_grad_test.cpp.
#include "kiln/nn/conv2d.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "kiln/nn/conv1d.hpp"
#include "kiln/nn/conv_transpose2d.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"

namespace kiln {
namespace {

using nn::Conv1dConfig;
using nn::Conv2dConfig;
using nn::ConvTranspose2dConfig;
using nn::PaddingConfig1d;
using nn::PaddingConfig2d;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

template <class B>
class ConvLayerTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConvLayerTest, test::AllBackends);

TYPED_TEST(ConvLayerTest, Conv2dShapesOfTheAnchorCnn) {
  auto conv1 = Conv2dConfig({1, 8}, {3, 3}).init<TypeParam>();
  auto conv2 = Conv2dConfig({8, 16}, {3, 3}).init<TypeParam>();
  auto x = Tensor<TypeParam, 4>::zeros(Shape{2, 1, 28, 28});
  auto y = conv1.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 8, 26, 26}));
  EXPECT_EQ(conv2.forward(Tensor<TypeParam, 4>::zeros(Shape{2, 8, 13, 13})).shape(),
            (Shape{2, 16, 11, 11}));
  EXPECT_EQ(conv1.num_params(), 8 * 9 + 8);
}

TYPED_TEST(ConvLayerTest, Conv2dStrideDilationExplicitPaddingShapes) {
  auto conv = Conv2dConfig({2, 4}, {3, 2})
                  .with_stride({2, 1})
                  .with_dilation({1, 2})
                  .with_padding(PaddingConfig2d::explicit_({1, 2}))
                  .init<TypeParam>();
  // height: (9 + 2 - 3) / 2 + 1 = 5; width: (7 + 4 - 3) / 1 + 1 = 9
  EXPECT_EQ(conv.forward(Tensor<TypeParam, 4>::zeros(Shape{1, 2, 9, 7})).shape(),
            (Shape{1, 4, 5, 9}));
}

// Same with an even kernel: total padding k - 1 = 3 (width) and 1 (height), the extra
// element after the input, as PyTorch's padding='same'; the values equal conv2d with that
// explicit per-side padding.
TYPED_TEST(ConvLayerTest, Conv2dSamePaddingEvenKernelPadsTheEndSide) {
  auto conv = Conv2dConfig({1, 2}, {2, 4}).with_padding(PaddingConfig2d::same()).init<TypeParam>();
  auto x = Tensor<TypeParam, 4>::from_data(test::iota(Shape{1, 1, 5, 6}));
  auto y = conv.forward(x);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 5, 6}));
  const ConvOptions<2> expected_options({1, 1}, {0, 1}, {1, 2}, {1, 1}, 1);
  EXPECT_EQ(conv.options(), expected_options);
  auto reference = conv2d(x, conv.weight.val(), std::optional(conv.bias->val()), expected_options);
  y.into_data().assert_eq(reference.into_data());
  // Dilation 2 doubles the total: 2·(4 - 1) = 6 -> 3 and 3.
  auto dilated = Conv2dConfig({1, 1}, {1, 4})
                     .with_dilation({1, 2})
                     .with_padding(PaddingConfig2d::same())
                     .init<TypeParam>();
  EXPECT_EQ(dilated.options().padding, (std::array<std::int64_t, 2>{0, 3}));
  EXPECT_EQ(dilated.options().padding_end, (std::array<std::int64_t, 2>{0, 3}));
  EXPECT_EQ(dilated.forward(x).shape(), (Shape{1, 1, 5, 6}));
}

TYPED_TEST(ConvLayerTest, Conv1dShapesAndSamePadding) {
  auto conv = Conv1dConfig({4, 6}, 4).with_groups(2).init<TypeParam>();
  EXPECT_EQ(conv.weight.shape(), (Shape{6, 2, 4}));
  EXPECT_EQ(conv.forward(Tensor<TypeParam, 3>::zeros(Shape{3, 4, 10})).shape(), (Shape{3, 6, 7}));
  auto same = Conv1dConfig({4, 6}, 4).with_padding(PaddingConfig1d::same()).init<TypeParam>();
  EXPECT_EQ(same.options().padding[0], 1);
  EXPECT_EQ(same.options().padding_end[0], 2);
  EXPECT_EQ(same.forward(Tensor<TypeParam, 3>::zeros(Shape{3, 4, 10})).shape(), (Shape{3, 6, 10}));
  auto strided = Conv1dConfig({4, 6}, 3).with_stride(2).with_bias(false).init<TypeParam>();
  EXPECT_FALSE(strided.bias.has_value());
  EXPECT_EQ(strided.forward(Tensor<TypeParam, 3>::zeros(Shape{1, 4, 10})).shape(), (Shape{1, 6, 4}));
}

TYPED_TEST(ConvLayerTest, ConvTranspose2dShapes) {
  auto up = ConvTranspose2dConfig({16, 8}, {3, 3})
                .with_stride({2, 2})
                .with_padding({1, 1})
                .with_padding_out({1, 1})
                .init<TypeParam>();
  EXPECT_EQ(up.weight.shape(), (Shape{16, 8, 3, 3}));
  // (7 - 1)·2 - 2 + 2 + 1 + 1 = 14
  EXPECT_EQ(up.forward(Tensor<TypeParam, 4>::zeros(Shape{2, 16, 7, 7})).shape(),
            (Shape{2, 8, 14, 14}));
  auto grouped = ConvTranspose2dConfig({4, 6}, {2, 2}).with_groups(2).init<TypeParam>();
  EXPECT_EQ(grouped.weight.shape(), (Shape{4, 3, 2, 2}));
  EXPECT_EQ(grouped.forward(Tensor<TypeParam, 4>::zeros(Shape{1, 4, 3, 3})).shape(),
            (Shape{1, 6, 4, 4}));
}

/// Largest |value| of a tensor.
template <class B, std::size_t D>
double max_abs(const Tensor<B, D>& t) {
  const auto v = t.to_data().template to_vec<float>();
  double m = 0;
  for (float x : v) m = std::max(m, static_cast<double>(std::fabs(x)));
  return m;
}

// PyTorch's default: weight and bias U(-k, k), k = 1/sqrt(fan_in), fan_in = in/groups·kh·kw.
// With thousands of samples the largest |w| lies within 1% of k (probability of failure
// below (0.99)^4608 ~ 1e-20), so a bound off by more than that is caught.
TEST(ConvLayerInit, Conv2dDefaultInitBoundsArePyTorchs) {
  Cpu::seed(3);
  auto conv = Conv2dConfig({8, 64}, {3, 3}).with_groups(2).init<Cpu>();  // fan_in 4·9 = 36
  const double k = 1.0 / std::sqrt(36.0);
  EXPECT_LE(max_abs(conv.weight.val()), k);
  EXPECT_GT(max_abs(conv.weight.val()), 0.99 * k);
  EXPECT_LE(max_abs(conv.bias->val()), k);
  EXPECT_GT(max_abs(conv.bias->val()), 0.5 * k);  // 64 samples: (0.5)^64
}

TEST(ConvLayerInit, ConvTranspose2dFanInIsOutPerGroupTimesKernel) {
  Cpu::seed(4);
  auto up = ConvTranspose2dConfig({64, 8}, {3, 3}).init<Cpu>();  // weight [64, 8, 3, 3]: fan_in 72
  const double k = 1.0 / std::sqrt(72.0);
  EXPECT_LE(max_abs(up.weight.val()), k);
  EXPECT_GT(max_abs(up.weight.val()), 0.99 * k);
  EXPECT_LE(max_abs(up.bias->val()), k);
}

TEST(ConvLayerInit, Conv1dDefaultInitBound) {
  Cpu::seed(5);
  auto conv = Conv1dConfig({16, 128}, 5).init<Cpu>();  // fan_in 80
  const double k = 1.0 / std::sqrt(80.0);
  EXPECT_LE(max_abs(conv.weight.val()), k);
  EXPECT_GT(max_abs(conv.weight.val()), 0.99 * k);
}

TEST(ConvLayerRecord, ParamPathsArePyTorchs) {
  auto conv = Conv2dConfig({1, 8}, {3, 3}).init<Cpu>();
  EXPECT_EQ(conv.param_paths(), (std::vector<std::string>{"weight", "bias"}));
  auto no_bias = Conv2dConfig({1, 8}, {3, 3}).with_bias(false).init<Cpu>();
  EXPECT_EQ(no_bias.param_paths(), (std::vector<std::string>{"weight"}));
  EXPECT_EQ(ConvTranspose2dConfig({2, 3}, {3, 3}).init<Cpu>().param_paths(),
            (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(Conv1dConfig({2, 3}, 3).init<Cpu>().param_paths(),
            (std::vector<std::string>{"weight", "bias"}));
}

TEST(ConvLayerTraining, GradientsReachWeightAndBias) {
  auto conv = Conv2dConfig({1, 2}, {2, 2}).init<AD>();
  auto y = conv.forward(Tensor<AD, 4>::ones(Shape{1, 1, 3, 3}));
  auto grads = y.sum().backward();
  // d sum / d w = sum of the inputs each tap meets (4 windows of ones); d sum / d b = 4.
  conv.weight.val().grad(grads)->to_data().assert_eq(
      TensorData(Shape{2, 1, 2, 2}, std::vector<float>(8, 4.f)));
  conv.bias->val().grad(grads)->to_data().assert_eq(TensorData(Shape{2}, std::vector<float>{4, 4}));
}

TEST(ConvLayerConfig, JsonRoundTripKeepsPadding) {
  const auto c = Conv2dConfig({3, 8}, {5, 5})
                     .with_stride({1, 1})
                     .with_padding(PaddingConfig2d::explicit_({2, 1}))
                     .with_bias(false);
  const auto json = c.to_json();
  EXPECT_EQ(json.at("padding"), nlohmann::json::parse(R"({"Explicit": [2, 1]})"));
  EXPECT_EQ(Conv2dConfig::from_json(json), c);
  const auto same = Conv1dConfig({1, 1}, 3).with_padding(PaddingConfig1d::same());
  EXPECT_EQ(same.to_json().at("padding"), "Same");
  EXPECT_EQ(Conv1dConfig::from_json(same.to_json()), same);
  auto bad = json;
  bad["padding"] = "Full";
  EXPECT_THAT([&] { Conv2dConfig::from_json(bad); },
              ThrowsMessage<ConfigError>(HasSubstr("expected \"Valid\", \"Same\" or {\"Explicit\"")));
}

TEST(ConvLayerConfig, SamePaddingWithStrideIsRejectedAsPyTorchDoes) {
  EXPECT_THAT(
      [] {
        Conv2dConfig({1, 1}, {3, 3})
            .with_stride({2, 1})
            .with_padding(PaddingConfig2d::same())
            .init<Cpu>();
      },
      ThrowsMessage<ConfigError>(HasSubstr(
          "Conv2dConfig::init: padding Same requires stride 1, got stride 2 in spatial dim 0")));
}

TEST(ConvLayerConfig, ChannelsMustBeDivisibleByGroups) {
  EXPECT_THAT([] { Conv2dConfig({3, 8}, {3, 3}).with_groups(2).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "Conv2dConfig::init: channels {3, 8} must both be divisible by groups = 2")));
  EXPECT_THAT([] { Conv2dConfig({3, 8}, {0, 3}).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("kernel_size must be >= 1")));
  EXPECT_THAT([] { ConvTranspose2dConfig({2, 2}, {3, 3}).with_padding_out({1, 0}).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "ConvTranspose2dConfig::init: padding_out must be smaller than stride or dilation")));
}

TEST(ConvLayerForward, ChannelMismatchNamesConv2d) {
  auto conv = Conv2dConfig({3, 8}, {3, 3}).init<Cpu>();
  EXPECT_THAT([&] { conv.forward(Tensor<Cpu, 4>::zeros(Shape{1, 1, 5, 5})); },
              ThrowsMessage<ShapeError>(HasSubstr("conv2d: x [1, 1, 5, 5] has 1 channels")));
}

TEST(ConvLayerPrint, DescribesTheLayer) {
  auto conv = Conv2dConfig({1, 8}, {3, 3}).with_padding(PaddingConfig2d::same()).init<Cpu>();
  std::ostringstream out;
  out << conv;
  EXPECT_THAT(out.str(), HasSubstr("ch_in: 1, ch_out: 8, stride: [1, 1], kernel_size: [3, 3], "
                                   "dilation: [1, 1], groups: 1, padding: Same, bias: true"));
}

}  // namespace
}  // namespace kiln
