// HuberLoss: each region by hand (inside, on the boundary, outside, both signs), both
// reductions, gradients by hand (r inside, ±delta outside, exactly r at |r| = delta, finite
// for an infinite residual), gradcheck, config checks and JSON, printing.
#include "kiln/nn/loss/huber.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using nn::loss::HuberLoss;
using nn::loss::HuberLossConfig;
using nn::loss::Reduction;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

template <class B>
class HuberLossTest : public ::testing::Test {};
TYPED_TEST_SUITE(HuberLossTest, test::AllBackends);

TYPED_TEST(HuberLossTest, EveryRegionByHand) {
  // delta = 0.5; residuals -2, -0.5, 0, 0.3, 1, 0.5:
  //   |r| > δ:  δ·(|r| - δ/2) = 0.5·1.75 = 0.875 and 0.5·0.75 = 0.375
  //   |r| <= δ: r²/2 = 0.125 (both boundaries), 0, 0.045
  // PyTorch 1.13 huber_loss(delta=0.5): [0.875, 0.125, 0, 0.045, 0.375, 0.125].
  const auto predictions = Tensor<TypeParam, 1>::from_data({-2.f, -0.5f, 0.f, 0.3f, 1.f, 0.5f});
  const auto targets = Tensor<TypeParam, 1>::zeros(Shape{6});
  const auto huber = HuberLossConfig(0.5).init();
  const auto expected = TensorData::from({0.875f, 0.125f, 0.f, 0.045f, 0.375f, 0.125f});
  huber.forward_no_reduction(predictions, targets)
      .into_data()
      .assert_approx_eq(expected, Tolerance::rel_abs(1e-6, 1e-7));
  huber.forward(predictions, targets, Reduction::Sum)
      .into_data()
      .assert_approx_eq(TensorData::from({1.545f}), Tolerance::rel_abs(1e-6, 0));
  huber.forward(predictions, targets)
      .into_data()
      .assert_approx_eq(TensorData::from({1.545f / 6.f}), Tolerance::rel_abs(1e-6, 0));
}

TYPED_TEST(HuberLossTest, ResidualIsPredictionMinusTargetAndLargeValuesStayLinear) {
  // r = 1e20 - (-1e20): the square would overflow, the linear branch is 1e20·2 - 0.5.
  const auto huber = HuberLossConfig(1.0).init();
  const auto p = Tensor<TypeParam, 2>::from_data({{3.f, 1e20f}});
  const auto t = Tensor<TypeParam, 2>::from_data({{3.5f, -1e20f}});
  huber.forward_no_reduction(p, t).into_data().assert_approx_eq(TensorData::from({{0.125f, 2e20f}}),
                                                                Tolerance::rel_abs(1e-6, 0));
}

TYPED_TEST(HuberLossTest, ForwardResiduals) {
  const auto r = Tensor<TypeParam, 1>::from_data({-3.f, 1.f});
  HuberLossConfig(2.0).init().forward_residuals(r).into_data().assert_eq(
      TensorData::from({4.f, 0.5f}));  // 2·(3 - 1), 1/2
}

TEST(HuberLossGradTest, GradientIsTheResidualInsideAndDeltaOutside) {
  // PyTorch 1.13 (delta 0.5, sum): [-0.5, -0.5, 0, 0.3, 0.5, 0.5, -0.5]; the last residual
  // is -0.7 - 0.2 = -0.9.
  const auto p =
      Tensor<AD, 1>::from_data({-2.f, -0.5f, 0.f, 0.3f, 1.f, 0.5f, -0.7f}).require_grad();
  const auto t = Tensor<AD, 1>::from_data({0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.2f}).require_grad();
  const auto grads = HuberLossConfig(0.5).init().forward(p, t, Reduction::Sum).backward();
  p.grad(grads)->to_data().assert_eq(
      TensorData::from({-0.5f, -0.5f, 0.f, 0.3f, 0.5f, 0.5f, -0.5f}));
  t.grad(grads)->to_data().assert_eq(
      TensorData::from({0.5f, 0.5f, 0.f, -0.3f, -0.5f, -0.5f, 0.5f}));
  const auto mean_grads = HuberLossConfig(0.5).init().forward(p, t).backward();
  p.grad(mean_grads)
      ->to_data()
      .assert_approx_eq(
          TensorData::from({-0.5f / 7, -0.5f / 7, 0.f, 0.3f / 7, 0.5f / 7, 0.5f / 7, -0.5f / 7}),
          Tolerance::rel_abs(1e-6, 0));
}

TEST(HuberLossGradTest, InfiniteResidualHasGradientDelta) {
  const float inf = std::numeric_limits<float>::infinity();
  const auto p = Tensor<AD, 1>::from_data({inf, -inf}).require_grad();
  const auto t = Tensor<AD, 1>::zeros(Shape{2});
  const auto loss = HuberLossConfig(2.0).init().forward_no_reduction(p, t);
  loss.to_data().assert_eq(TensorData::from({inf, inf}));
  p.grad(loss.sum().backward())->to_data().assert_eq(TensorData::from({2.f, -2.f}));
}

TEST(HuberLossGradcheck, BothRegionsBothInputs) {
  // Residuals in [-3, 3], kept 0.1 away from ±delta: there the second derivative jumps,
  // which a central difference straddling it would misread.
  test::Sampler rng(5);
  const Shape shape{4, 5};
  const auto y = Tensor<AD, 2>::from_data(rng.uniform_data(shape, -1.5, 1.5));
  const auto r = Tensor<AD, 2>::from_data(rng.uniform_away(shape, -3, 3, {-0.8, 0.8}, 0.1));
  const auto x = Tensor<AD, 2>::from_data((y + r).to_data());
  const auto huber = HuberLossConfig(0.8).init();
  EXPECT_TRUE(test::gradcheck(
      "huber mean", [&](Tensor<AD, 2> a, Tensor<AD, 2> b) { return huber.forward(a, b); }, x, y));
  EXPECT_TRUE(test::gradcheck(
      "huber none",
      [&](Tensor<AD, 2> a, Tensor<AD, 2> b) { return huber.forward_no_reduction(a, b); }, x, y));
}

TEST(HuberLossErrors, DeltaMustBePositiveAndFinite) {
  EXPECT_THAT([] { HuberLossConfig(0.0).init(); },
              ThrowsMessage<ConfigError>(
                  "HuberLossConfig::init: delta must be positive and finite, got 0"));
  EXPECT_THAT([] { HuberLossConfig(-1.0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("delta must be positive and finite, got -1")));
  EXPECT_THAT([] { HuberLossConfig(std::nan("")).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("got nan")));
  EXPECT_THAT([] { HuberLossConfig(std::numeric_limits<double>::infinity()).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("got inf")));
}

TEST(HuberLossErrors, ShapesMustBeEqual) {
  const auto a = Tensor<Cpu, 1>::zeros(Shape{3});
  const auto b = Tensor<Cpu, 1>::zeros(Shape{1});
  EXPECT_THAT([&] { HuberLossConfig(1.0).init().forward(a, b); },
              ThrowsMessage<ShapeError>(
                  "HuberLoss::forward: predictions [3] and targets [1] differ in shape"));
}

TEST(HuberLossConfigTest, JsonAndPrinting) {
  const auto c = HuberLossConfig(0.25);
  EXPECT_EQ(c.to_json_string(-1), R"({"delta":0.25})");
  EXPECT_EQ(HuberLossConfig::from_json_string(R"({"delta": 2})").delta, 2.0);
  EXPECT_THAT([] { HuberLossConfig::from_json_string("{}"); },
              ThrowsMessage<ConfigError>("HuberLossConfig: missing required field \"delta\""));
  std::ostringstream out;
  out << c.init();
  EXPECT_EQ(out.str(), "HuberLoss {delta: 0.25}");
}

}  // namespace
}  // namespace kiln
