// Forward values of conv1d, conv2d and conv_transpose2d (kiln/tensor/conv.hpp) on every
// backend: small examples computed by hand, the PyTorch cases of category conv, and the
// errors of bad arguments. Gradients: tests/native/autodiff/conv_grad_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/cases.hpp"
#include "support/tensors.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

template <class B>
class ConvTest : public ::testing::Test {};
TYPED_TEST_SUITE(ConvTest, test::AllBackends);

template <class B, std::size_t D>
Tensor<B, D> iota(const Shape& shape) {
  return Tensor<B, D>::from_data(test::iota(shape), test::device<B>());
}

// x = [[0, 1, 2], [3, 4, 5], [6, 7, 8]], w = 2x2 ones: each output sums a 2x2 window.
TYPED_TEST(ConvTest, Conv2dValidWindowSumsByHand) {
  auto x = iota<TypeParam, 4>(Shape{1, 1, 3, 3});
  auto w = Tensor<TypeParam, 4>::ones(Shape{1, 1, 2, 2});
  conv2d(x, w).into_data().assert_eq(
      TensorData(Shape{1, 1, 2, 2}, std::vector<float>{8, 12, 20, 24}));
}

// Padding 1, stride 2 on the same x: windows at rows/cols {-1, 0} and {1, 2}; bias 1.
TYPED_TEST(ConvTest, Conv2dPaddingStrideBiasByHand) {
  auto x = iota<TypeParam, 4>(Shape{1, 1, 3, 3});
  auto w = Tensor<TypeParam, 4>::ones(Shape{1, 1, 2, 2});
  auto b = test::vec<TypeParam>({1.f});
  const ConvOptions<2> options({2, 2}, {1, 1}, {1, 1}, 1);
  conv2d(x, w, std::optional(b), options)
      .into_data()
      .assert_eq(TensorData(Shape{1, 1, 2, 2}, std::vector<float>{1, 4, 10, 25}));
}

// Padding only on the end side (PyTorch's padding='same' for a 2x2 kernel): output 3x3.
TYPED_TEST(ConvTest, Conv2dEndSidePaddingByHand) {
  auto x = iota<TypeParam, 4>(Shape{1, 1, 3, 3});
  auto w = Tensor<TypeParam, 4>::ones(Shape{1, 1, 2, 2});
  const ConvOptions<2> options({1, 1}, {0, 0}, {1, 1}, {1, 1}, 1);
  conv2d(x, w, std::nullopt, options)
      .into_data()
      .assert_eq(TensorData(Shape{1, 1, 3, 3}, std::vector<float>{8, 12, 7, 20, 24, 13, 13, 15, 8}));
}

// Groups 2: channel 0 (all 1) meets weight 3, channel 1 (all 2) meets weight 5.
TYPED_TEST(ConvTest, Conv2dGroupsKeepChannelsApartByHand) {
  auto x = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{1, 2, 1, 2}, std::vector<float>{1, 1, 2, 2}), test::device<TypeParam>());
  auto w = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{2, 1, 1, 1}, std::vector<float>{3, 5}), test::device<TypeParam>());
  conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {0, 0}, {1, 1}, 2))
      .into_data()
      .assert_eq(TensorData(Shape{1, 2, 1, 2}, std::vector<float>{3, 3, 10, 10}));
}

// Two images of the batch, two output channels: each image independent.
TYPED_TEST(ConvTest, Conv2dBatchAndOutputChannelsByHand) {
  auto x = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{2, 1, 1, 3}, std::vector<float>{1, 2, 3, -1, 0, 1}),
      test::device<TypeParam>());
  auto w = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{2, 1, 1, 2}, std::vector<float>{1, 1, 1, -1}), test::device<TypeParam>());
  // image 0: sums [3, 5], differences [-1, -1]; image 1: sums [-1, 1], differences [-1, -1]
  conv2d(x, w).into_data().assert_eq(
      TensorData(Shape{2, 2, 1, 2}, std::vector<float>{3, 5, -1, -1, -1, 1, -1, -1}));
}

// x = [0, 1, 2, 3, 4], w = [1, -1]: dilation 2 gives x[i] - x[i + 2]; stride 2 with
// padding 1 reads [0 | 0, 1, 2, 3, 4 | 0] at 0, 2, 4.
TYPED_TEST(ConvTest, Conv1dDilationStridePaddingByHand) {
  auto x = iota<TypeParam, 3>(Shape{1, 1, 5});
  auto w = Tensor<TypeParam, 3>::from_data(
      TensorData(Shape{1, 1, 2}, std::vector<float>{1, -1}), test::device<TypeParam>());
  conv1d(x, w, std::nullopt, ConvOptions<1>({1}, {0}, {2}, 1))
      .into_data()
      .assert_eq(TensorData(Shape{1, 1, 3}, std::vector<float>{-2, -2, -2}));
  conv1d(x, w, std::nullopt, ConvOptions<1>({2}, {1}, {1}, 1))
      .into_data()
      .assert_eq(TensorData(Shape{1, 1, 3}, std::vector<float>{0, -1, -1}));
}

// Stride 2 with a 2x2 ones kernel spreads each input value over its own 2x2 block; stride
// 1 overlaps the blocks and adds.
TYPED_TEST(ConvTest, ConvTranspose2dSpreadsInputByHand) {
  auto x = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4}), test::device<TypeParam>());
  auto w = Tensor<TypeParam, 4>::ones(Shape{1, 1, 2, 2});
  conv_transpose2d(x, w, std::nullopt, ConvTransposeOptions<2>({2, 2}, {0, 0}, {0, 0}, {1, 1}, 1))
      .into_data()
      .assert_eq(TensorData(Shape{1, 1, 4, 4}, std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2,  //
                                                                  3, 3, 4, 4, 3, 3, 4, 4}));
  conv_transpose2d(x, w)
      .into_data()
      .assert_eq(TensorData(Shape{1, 1, 3, 3}, std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4}));
}

// Groups 2 and a bias: out channel c = x channel c · w[c] + b[c]; weight [in, out/groups, 1, 1].
TYPED_TEST(ConvTest, ConvTranspose2dGroupsBiasByHand) {
  auto x = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{1, 2, 1, 1}, std::vector<float>{1, 2}), test::device<TypeParam>());
  auto w = Tensor<TypeParam, 4>::from_data(
      TensorData(Shape{2, 1, 1, 1}, std::vector<float>{3, 5}), test::device<TypeParam>());
  auto b = test::vec<TypeParam>({0.5f, -1.f});
  conv_transpose2d(x, w, std::optional(b),
                   ConvTransposeOptions<2>({1, 1}, {0, 0}, {0, 0}, {1, 1}, 2))
      .into_data()
      .assert_eq(TensorData(Shape{1, 2, 1, 1}, std::vector<float>{3.5f, 9.f}));
}

// ------------------------------------------------------------------ PyTorch cases

TYPED_TEST(ConvTest, DepthwiseStride2MatchesPyTorch) {
  const auto c = test::load_case("conv2d_depthwise_stride2_grads");
  auto x = Tensor<TypeParam, 4>::from_data(c.input("x"));
  auto w = Tensor<TypeParam, 4>::from_data(c.input("w"));
  auto b = Tensor<TypeParam, 1>::from_data(c.input("bias"));
  conv2d(x, w, std::optional(b), ConvOptions<2>({2, 2}, {1, 1}, {1, 1}, 4))
      .into_data()
      .assert_approx_eq(c.expected("out"), c.tolerance());
}

TYPED_TEST(ConvTest, Groups2Dilation2MatchesPyTorch) {
  const auto c = test::load_case("conv2d_groups2_dilation2");
  auto x = Tensor<TypeParam, 4>::from_data(c.input("x"));
  auto w = Tensor<TypeParam, 4>::from_data(c.input("w"));
  conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {1, 1}, {2, 2}, 2))
      .into_data()
      .assert_approx_eq(c.expected("out"), c.tolerance());
}

TYPED_TEST(ConvTest, TransposeOutputPaddingMatchesPyTorch) {
  const auto c = test::load_case("conv_transpose2d_output_padding");
  auto x = Tensor<TypeParam, 4>::from_data(c.input("x"));
  auto w = Tensor<TypeParam, 4>::from_data(c.input("w"));
  auto b = Tensor<TypeParam, 1>::from_data(c.input("bias"));
  conv_transpose2d(x, w, std::optional(b),
                   ConvTransposeOptions<2>({2, 2}, {1, 1}, {1, 1}, {1, 1}, 1))
      .into_data()
      .assert_approx_eq(c.expected("out"), c.tolerance());
}

// ------------------------------------------------------------------ errors

using C4 = Tensor<Cpu, 4>;

TEST(ConvErrors, WrongRankNamesTheLayout) {
  auto x = Tensor<Cpu, 3>::zeros(Shape{1, 1, 4});
  auto w = Tensor<Cpu, 3>::zeros(Shape{1, 1, 2});
  EXPECT_NO_THROW(conv1d(x, w));
  // A rank-4 primitive passed to conv1d (the typed API cannot express it; the backend checks).
  EXPECT_THAT([&] { CpuOps::conv1d(C4::zeros(Shape{1, 1, 4, 4}).primitive(), w.primitive(), {}, {}); },
              ThrowsMessage<RankError>(HasSubstr("conv1d: expected x of rank 3 [batch_size, "
                                                 "channels, length], got [1, 1, 4, 4]")));
}

TEST(ConvErrors, ChannelMismatchNamesBothShapes) {
  auto x = C4::zeros(Shape{1, 3, 5, 5});
  auto w = C4::zeros(Shape{8, 2, 3, 3});
  EXPECT_THAT([&] { conv2d(x, w); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "conv2d: x [1, 3, 5, 5] has 3 channels, weight [8, 2, 3, 3] with groups = 1 "
                  "expects 2")));
}

TEST(ConvErrors, OutputChannelsNotDivisibleByGroups) {
  auto x = C4::zeros(Shape{1, 4, 5, 5});
  auto w = C4::zeros(Shape{3, 2, 3, 3});
  EXPECT_THAT([&] { conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {0, 0}, {1, 1}, 2)); },
              ThrowsMessage<ShapeError>(HasSubstr("3 output channels, not divisible by groups = 2")));
}

TEST(ConvErrors, KernelLargerThanPaddedInput) {
  auto x = C4::zeros(Shape{1, 1, 2, 5});
  auto w = C4::zeros(Shape{1, 1, 3, 3});
  EXPECT_THAT([&] { conv2d(x, w); },
              ThrowsMessage<ShapeError>(HasSubstr("larger than the padded input (2 + padding 0 + 0 = 2)")));
  // Dilation 2 makes a 2-tap kernel span 3.
  auto w2 = C4::zeros(Shape{1, 1, 2, 2});
  EXPECT_THAT([&] { conv2d(x, w2, std::nullopt, ConvOptions<2>({1, 1}, {0, 0}, {2, 2}, 1)); },
              ThrowsMessage<ShapeError>(HasSubstr("spans 3 in spatial dim 0")));
  EXPECT_NO_THROW(conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {1, 1}, {1, 1}, 1)));
}

TEST(ConvErrors, BadOptionsAreConfigErrors) {
  auto x = C4::zeros(Shape{1, 1, 5, 5});
  auto w = C4::zeros(Shape{1, 1, 3, 3});
  EXPECT_THAT([&] { conv2d(x, w, std::nullopt, ConvOptions<2>({0, 1}, {0, 0}, {1, 1}, 1)); },
              ThrowsMessage<ConfigError>(HasSubstr("conv2d: stride must be >= 1 in every dim, got [0, 1]")));
  EXPECT_THAT([&] { conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {-1, 0}, {1, 1}, 1)); },
              ThrowsMessage<ConfigError>(HasSubstr("conv2d: padding must be >= 0")));
  EXPECT_THAT([&] { conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {0, 0}, {1, 0}, 1)); },
              ThrowsMessage<ConfigError>(HasSubstr("conv2d: dilation must be >= 1")));
  EXPECT_THAT([&] { conv2d(x, w, std::nullopt, ConvOptions<2>({1, 1}, {0, 0}, {1, 1}, 0)); },
              ThrowsMessage<ConfigError>(HasSubstr("conv2d: groups must be >= 1, got 0")));
}

TEST(ConvErrors, BiasMustHaveChannelsOut) {
  auto x = C4::zeros(Shape{1, 1, 5, 5});
  auto w = C4::zeros(Shape{2, 1, 3, 3});
  auto b = Tensor<Cpu, 1>::zeros(Shape{3});
  EXPECT_THAT([&] { conv2d(x, w, std::optional(b)); },
              ThrowsMessage<ShapeError>(HasSubstr("conv2d: expected bias [2] (channels_out), got [3]")));
}

TEST(ConvErrors, TransposeOutputPaddingMustBeBelowStrideOrDilation) {
  auto x = C4::zeros(Shape{1, 2, 3, 3});
  auto w = C4::zeros(Shape{2, 3, 3, 3});
  EXPECT_THAT(
      [&] {
        conv_transpose2d(x, w, std::nullopt,
                         ConvTransposeOptions<2>({2, 2}, {1, 1}, {2, 1}, {1, 1}, 1));
      },
      ThrowsMessage<ConfigError>(HasSubstr(
          "conv_transpose2d: padding_out [2, 1] must be smaller than stride [2, 2] or dilation [1, 1]")));
  auto w_bad = C4::zeros(Shape{3, 3, 3, 3});
  EXPECT_THAT([&] { conv_transpose2d(x, w_bad); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "conv_transpose2d: x [1, 2, 3, 3] has 2 channels, weight [3, 3, 3, 3] expects 3")));
  // padding 2 removes more than the 1x1 kernel adds: output (3 - 1) - 4 + 0 + 1 < 1.
  auto w1 = C4::zeros(Shape{2, 1, 1, 1});
  EXPECT_THAT(
      [&] {
        conv_transpose2d(x, w1, std::nullopt,
                         ConvTransposeOptions<2>({1, 1}, {2, 2}, {0, 0}, {1, 1}, 1));
      },
      ThrowsMessage<ShapeError>(HasSubstr("conv_transpose2d: output size -1 < 1")));
}

}  // namespace
}  // namespace kiln
