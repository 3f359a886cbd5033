// BinaryCrossEntropyLoss: values by hand and from PyTorch 1.13 (quoted), the edges p = 0 or
// 1 and logits of ±100, Int and Float targets, weights and smoothing for rank 1 and 2,
// PyTorch's gradients at the edges, gradcheck, config JSON and printing, and every error.
// The reference cases of category losses run through this loss in loss_cases_test.cpp.
#include "kiln/nn/loss/binary_cross_entropy.hpp"

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

using nn::loss::BinaryCrossEntropyLoss;
using nn::loss::BinaryCrossEntropyLossConfig;
using nn::loss::Reduction;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

constexpr Tolerance kTol = Tolerance::rel_abs(1e-5, 1e-6);

TensorData scalar(double value) { return TensorData(Shape{1}, std::vector<float>{float(value)}); }

// Burn's test data: logits and targets, PyTorch's values quoted from PyTorch 1.13.
const std::vector<float> kLogits = {0.8271f, 0.9626f, 0.3796f, 0.2355f};
const std::vector<std::int32_t> kTargets = {0, 1, 0, 1};

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// -(t·log p + (1 - t)·log(1 - p)) over Burn's data, in double, with p = sigmoid(logit),
/// element weights w and targets smoothed by eps.
double reference_mean(std::vector<double> w = {1, 1, 1, 1}, double eps = 0.0) {
  double sum = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const double p = sigmoid(kLogits[i]);
    const double t = kTargets[i] * (1 - eps) + eps / 2;
    sum -= w[i] * (t * std::log(p) + (1 - t) * std::log(1 - p));
  }
  return sum / 4;
}

template <class B>
class BinaryCrossEntropyLossTest : public ::testing::Test {
 protected:
  using Float1 = Tensor<B, 1>;
  Float1 logits() const { return Float1::from_data(TensorData(Shape{4}, kLogits)); }
  Float1 probabilities() const { return activation::sigmoid(logits()); }
  Tensor<B, 1, Int> int_targets() const {
    return Tensor<B, 1, Int>::from_data(TensorData(Shape{4}, kTargets));
  }
  Float1 float_targets() const { return int_targets().float_(); }
};
TYPED_TEST_SUITE(BinaryCrossEntropyLossTest, test::AllBackends);

TYPED_TEST(BinaryCrossEntropyLossTest, ProbabilitiesByHand) {
  // -log 0.25 = log 4; -log(1 - 0.5) = log 2; -log 0.9.
  const auto p = Tensor<TypeParam, 1>::from_data({0.25f, 0.5f, 0.9f});
  const auto t = Tensor<TypeParam, 1, Int>::from_data({1, 0, 1});
  const auto bce = BinaryCrossEntropyLossConfig().init<TypeParam>();
  bce.forward_no_reduction(p, t).into_data().assert_approx_eq(
      TensorData::from({float(std::log(4.0)), float(std::log(2.0)), float(-std::log(0.9))}), kTol);
  bce.forward(p, t).into_data().assert_approx_eq(
      scalar((std::log(4.0) + std::log(2.0) - std::log(0.9)) / 3), kTol);
  BinaryCrossEntropyLossConfig()
      .with_reduction(Reduction::Sum)
      .init<TypeParam>()
      .forward(p, t)
      .into_data()
      .assert_approx_eq(scalar(std::log(4.0) + std::log(2.0) - std::log(0.9)), kTol);
}

TYPED_TEST(BinaryCrossEntropyLossTest, ProbabilitiesZeroAndOne) {
  // Right and certain: 0. Wrong and certain: log clamped at -100, so 100. A soft target 0.3
  // at p = 0: 0.3·100 + 0.7·0 = 30.
  const auto p = Tensor<TypeParam, 1>::from_data({0.f, 1.f, 0.f, 1.f, 0.f});
  const auto t = Tensor<TypeParam, 1>::from_data({0.f, 1.f, 1.f, 0.f, 0.3f});
  BinaryCrossEntropyLossConfig()
      .init<TypeParam>()
      .forward_no_reduction(p, t)
      .into_data()
      .assert_approx_eq(TensorData::from({0.f, 0.f, 100.f, 100.f, 30.f}), kTol);
}

TYPED_TEST(BinaryCrossEntropyLossTest, LogitsByHandAndAtPlusMinusHundred) {
  // log(1 + e^-x) - ... : x = 0 -> log 2 for any target; x = 2, t = 1 -> log(1 + e^-2);
  // x = ±100: 0 when right, 100 when wrong (sigmoid saturates, the stable form does not).
  const auto x = Tensor<TypeParam, 1>::from_data({0.f, 0.f, 2.f, 100.f, -100.f, 100.f, -100.f});
  const auto t = Tensor<TypeParam, 1, Int>::from_data({0, 1, 1, 1, 0, 0, 1});
  BinaryCrossEntropyLossConfig()
      .with_logits(true)
      .init<TypeParam>()
      .forward_no_reduction(x, t)
      .into_data()
      .assert_approx_eq(
          TensorData::from({float(std::log(2.0)), float(std::log(2.0)),
                            float(std::log1p(std::exp(-2.0))), 0.f, 0.f, 100.f, 100.f}),
          kTol);
}

TYPED_TEST(BinaryCrossEntropyLossTest, BothFormsAgreeWithPyTorch) {
  // PyTorch 1.13: BCELoss(sigmoid(x), t) = BCEWithLogitsLoss(x, t) = 0.74912536.
  const double expected = reference_mean();
  EXPECT_NEAR(expected, 0.74912536, 1e-7);
  BinaryCrossEntropyLossConfig()
      .init<TypeParam>()
      .forward(this->probabilities(), this->int_targets())
      .into_data()
      .assert_approx_eq(scalar(expected), kTol);
  BinaryCrossEntropyLossConfig()
      .with_logits(true)
      .init<TypeParam>()
      .forward(this->logits(), this->int_targets())
      .into_data()
      .assert_approx_eq(scalar(expected), kTol);
}

TYPED_TEST(BinaryCrossEntropyLossTest, IntAndFloatTargetsGiveTheSameLoss) {
  for (const bool logits : {false, true}) {
    const auto bce = BinaryCrossEntropyLossConfig().with_logits(logits).init<TypeParam>();
    const auto input = logits ? this->logits() : this->probabilities();
    bce.forward_no_reduction(input, this->float_targets())
        .into_data()
        .assert_eq(bce.forward_no_reduction(input, this->int_targets()).into_data());
  }
}

TYPED_TEST(BinaryCrossEntropyLossTest, RankOneWeightsPickTheTargetsWeight) {
  // weights [3, 7]: elements with target 0 count 3 times, target 1 seven times; the mean
  // still divides by 4. PyTorch 1.13 (weight = [3, 7].gather(targets)): 3.15314817.
  const double expected = reference_mean({3, 7, 3, 7});
  EXPECT_NEAR(expected, 3.15314817, 1e-6);
  const auto config = BinaryCrossEntropyLossConfig().with_weights(std::vector<float>{3, 7});
  config.init<TypeParam>()
      .forward(this->probabilities(), this->int_targets())
      .into_data()
      .assert_approx_eq(scalar(expected), kTol);
  config.with_logits(true)
      .init<TypeParam>()
      .forward(this->logits(), this->float_targets())
      .into_data()
      .assert_approx_eq(scalar(expected), kTol);
}

TYPED_TEST(BinaryCrossEntropyLossTest, RankOneSmoothingMovesTargetsTowardsOneHalf) {
  // ε = 0.1: targets 0.05 and 0.95. PyTorch 1.13 BCELoss(sigmoid(x), t·0.9 + 0.05):
  // 0.74901789.
  const double expected = reference_mean({1, 1, 1, 1}, 0.1);
  EXPECT_NEAR(expected, 0.74901789, 1e-7);
  BinaryCrossEntropyLossConfig()
      .with_smoothing(0.1)
      .init<TypeParam>()
      .forward(this->probabilities(), this->int_targets())
      .into_data()
      .assert_approx_eq(scalar(expected), kTol);
}

TYPED_TEST(BinaryCrossEntropyLossTest, MultiLabelWeightsPerColumnAndSmoothing) {
  // [2, 3] logits, weights [3, 7, 0.9] per label (PyTorch's weight of shape [3]).
  // PyTorch 1.13 BCEWithLogitsLoss: 0.71122473 unweighted, 3.17076969 weighted (mean over
  // 6 elements), and 18.74927711 weighted, summed, with targets t·0.9 + 0.05 (ε = 0.1).
  const auto x =
      Tensor<TypeParam, 2>::from_data({{0.5150f, 0.3097f, 0.7556f}, {0.4974f, 0.9879f, 0.1564f}});
  const auto t = Tensor<TypeParam, 2, Int>::from_data({{1, 0, 1}, {1, 0, 0}});
  const auto config = BinaryCrossEntropyLossConfig().with_logits(true);
  config.init<TypeParam>().forward(x, t).into_data().assert_approx_eq(
      TensorData::from({0.71122473f}), kTol);
  const auto weighted = config.with_weights(std::vector<float>{3, 7, 0.9f});
  weighted.init<TypeParam>().forward(x, t).into_data().assert_approx_eq(
      TensorData::from({3.17076969f}), kTol);
  weighted.with_smoothing(0.1)
      .with_reduction(Reduction::Sum)
      .init<TypeParam>()
      .forward(x, t)
      .into_data()
      .assert_approx_eq(TensorData::from({18.74927711f}), kTol);
  // The same on probabilities.
  weighted.with_logits(false)
      .init<TypeParam>()
      .forward(activation::sigmoid(x), t)
      .into_data()
      .assert_approx_eq(TensorData::from({3.17076969f}), kTol);
}

// ------------------------------------------------------------------ gradients

TEST(BinaryCrossEntropyLossGradTest, ProbabilityGradientIsPyTorchsAlsoAtZeroAndOne) {
  // (p - t) / max(p·(1 - p), 1e-12): 0 at p = t ∈ {0, 1}, ∓1e12 when certain and wrong
  // (the derivative of the clamped logs would be nan there), -4 and 2 inside.
  // PyTorch 1.13: [0, 0, -1e12, 1e12, -4, 2].
  const auto p = Tensor<AD, 1>::from_data({0.f, 1.f, 0.f, 1.f, 0.25f, 0.5f}).require_grad();
  const auto t = Tensor<AD, 1>::from_data({0.f, 1.f, 1.f, 0.f, 1.f, 0.f});
  const auto bce = BinaryCrossEntropyLossConfig().with_reduction(Reduction::Sum).init<AD>();
  const auto loss = bce.forward(p, t);
  loss.to_data().assert_approx_eq(scalar(200 + std::log(4.0) + std::log(2.0)), kTol);
  p.grad(loss.backward())
      ->to_data()
      .assert_approx_eq(TensorData::from({0.f, 0.f, -1e12f, 1e12f, -4.f, 2.f}), kTol);
}

TEST(BinaryCrossEntropyLossGradTest, LogitGradientIsSigmoidMinusTarget) {
  // At ±100 the gradient is 0 when right and ±1 when wrong, never nan; at 0 it is
  // sigmoid(0) - t = ∓1/2. Mean over 6: divided by 6; weights [2, 4] scale it by the target's.
  const auto x = Tensor<AD, 1>::from_data({100.f, -100.f, 100.f, -100.f, 0.f, 0.f}).require_grad();
  const auto t = Tensor<AD, 1, Int>::from_data({1, 0, 0, 1, 1, 0});
  const auto bce =
      BinaryCrossEntropyLossConfig().with_logits(true).with_weights(std::vector<float>{2, 4});
  x.grad(bce.init<AD>().forward(x, t).backward())
      ->to_data()
      .assert_approx_eq(TensorData::from({0.f, 0.f, 2.f / 6, -4.f / 6, -2.f / 6, 1.f / 6}), kTol);
}

TEST(BinaryCrossEntropyLossGradTest, FloatTargetsGetAGradientToo) {
  // Logit form: d/dt = -x (PyTorch). Probability form: log(1 - p) - log p, each log clamped
  // at -100 (PyTorch leaves them unclamped: ±inf at p ∈ {0, 1}); p = 0: 0 - (-100) = 100.
  const auto x = Tensor<AD, 1>::from_data({1.5f, -2.f});
  const auto t = Tensor<AD, 1>::from_data({0.25f, 1.f}).require_grad();
  const auto logit_bce =
      BinaryCrossEntropyLossConfig().with_logits(true).with_reduction(Reduction::Sum).init<AD>();
  t.grad(logit_bce.forward(x, t).backward())
      ->to_data()
      .assert_approx_eq(TensorData::from({-1.5f, 2.f}), kTol);
  const auto p = Tensor<AD, 1>::from_data({0.f, 0.25f}).require_grad();
  const auto prob_bce = BinaryCrossEntropyLossConfig().with_reduction(Reduction::Sum).init<AD>();
  const auto grads = prob_bce.forward(p, t).backward();
  t.grad(grads)->to_data().assert_approx_eq(
      TensorData::from({100.f, float(std::log(0.75) - std::log(0.25))}), kTol);
  // p: (p - t) / max(p(1 - p), 1e-12) = -0.25e12 and -0.75 / 0.1875 = -4.
  p.grad(grads)->to_data().assert_approx_eq(TensorData::from({-0.25e12f, -4.f}), kTol);
}

TEST(BinaryCrossEntropyLossGradTest, UntrackedInputGivesAnUntrackedLoss) {
  const auto p = Tensor<AD, 1>::from_data({0.5f});
  const auto t = Tensor<AD, 1, Int>::from_data({1});
  EXPECT_FALSE(BinaryCrossEntropyLossConfig().init<AD>().forward(p, t).is_require_grad());
}

TEST(BinaryCrossEntropyLossGradcheck, BothFormsWeightsSmoothingAndTargets) {
  test::Sampler rng(3);
  const Shape shape{3, 4};
  const auto p = rng.uniform<2>(shape, 0.05, 0.95);
  const auto x = rng.uniform<2>(shape, -4, 4);
  const auto soft = rng.uniform<2>(shape, 0, 1);
  const auto hard = Tensor<AD, 2, Int>::from_data({{0, 1, 1, 0}, {1, 1, 0, 0}, {0, 0, 1, 1}});
  const std::vector<float> w = {0.5f, 2.f, 1.f, 3.f};
  for (const bool logits : {false, true}) {
    const auto& input = logits ? x : p;
    for (const auto& config : {BinaryCrossEntropyLossConfig(),
                               BinaryCrossEntropyLossConfig().with_weights(w).with_smoothing(0.2),
                               BinaryCrossEntropyLossConfig().with_reduction(Reduction::Sum)}) {
      const auto bce = config.with_logits(logits).init<AD>();
      EXPECT_TRUE(test::gradcheck(
          logits ? "bce logits" : "bce probabilities",
          [&](Tensor<AD, 2> a) { return bce.forward(a, hard); }, input));
      EXPECT_TRUE(test::gradcheck(
          logits ? "bce logits, soft targets" : "bce probabilities, soft targets",
          [&](Tensor<AD, 2> a, Tensor<AD, 2> b) { return bce.forward_no_reduction(a, b); }, input,
          soft));
    }
  }
  // Rank 1 with weights per target class, soft targets interpolating them.
  const auto p1 = rng.uniform<1>(Shape{5}, 0.05, 0.95);
  const auto t1 = rng.uniform<1>(Shape{5}, 0, 1);
  const auto bce1 =
      BinaryCrossEntropyLossConfig().with_weights(std::vector<float>{2, 0.5f}).init<AD>();
  EXPECT_TRUE(test::gradcheck(
      "bce rank 1 weights", [&](Tensor<AD, 1> a, Tensor<AD, 1> b) { return bce1.forward(a, b); },
      p1, t1));
}

// ------------------------------------------------------------------ errors

TEST(BinaryCrossEntropyLossErrors, ShapesMustBeEqual) {
  const auto bce = BinaryCrossEntropyLossConfig().init<Cpu>();
  EXPECT_THAT(
      [&] {
        bce.forward(Tensor<Cpu, 2>::full(Shape{2, 3}, 0.5f),
                    Tensor<Cpu, 2, Int>::zeros(Shape{2, 1}));
      },
      ThrowsMessage<ShapeError>("BinaryCrossEntropyLoss::forward: input [2, 3] and targets "
                                "[2, 1] differ in shape"));
}

TEST(BinaryCrossEntropyLossErrors, IntTargetsMustBeZeroOrOne) {
  const auto bce = BinaryCrossEntropyLossConfig().with_logits(true).init<Cpu>();
  EXPECT_THAT(
      [&] {
        bce.forward(Tensor<Cpu, 2>::zeros(Shape{2, 2}),
                    Tensor<Cpu, 2, Int>::from_data({{0, 1}, {2, 1}}));
      },
      ThrowsMessage<ValueError>("BinaryCrossEntropyLoss::forward: Int targets must be 0 or 1: "
                                "targets[1, 0] is 2"));
  EXPECT_THAT(
      [&] {
        bce.forward(Tensor<Cpu, 1>::zeros(Shape{2}), Tensor<Cpu, 1, Int>::from_data({0, -1}));
      },
      ThrowsMessage<ValueError>(HasSubstr("targets[1] is -1")));
}

TEST(BinaryCrossEntropyLossErrors, ProbabilitiesMustBeInZeroOne) {
  const auto bce = BinaryCrossEntropyLossConfig().init<AD>();
  const auto t = Tensor<AD, 1, Int>::from_data({0, 1, 1});
  EXPECT_THAT(
      [&] {
        bce.forward(Tensor<AD, 1>::from_data({0.5f, 1.5f, -1.f}), t);
      },
      ThrowsMessage<ValueError>("BinaryCrossEntropyLoss::forward: probabilities must "
                                "be in [0, 1] (logits is false): input[1] is 1.5"));
  EXPECT_THAT(
      [&] {
        bce.forward(Tensor<AD, 1>::from_data({0.5f, 0.5f, -0.01f}), t);
      },
      ThrowsMessage<ValueError>(HasSubstr("input[2] is -0.01")));
  EXPECT_THAT(
      [&] {
        bce.forward(Tensor<AD, 1>::from_data({std::nanf(""), 0.5f, 0.5f}), t);
      },
      ThrowsMessage<ValueError>(HasSubstr("input[0] is nan")));
  // As logits, any value is fine.
  EXPECT_NO_THROW(BinaryCrossEntropyLossConfig().with_logits(true).init<AD>().forward(
      Tensor<AD, 1>::from_data({0.5f, 1.5f, -1.f}), t));
}

TEST(BinaryCrossEntropyLossErrors, WeightsMustFitTheInput) {
  const auto three = BinaryCrossEntropyLossConfig().with_weights(std::vector<float>{1, 2, 3});
  EXPECT_THAT(
      [&] {
        three.init<Cpu>().forward(Tensor<Cpu, 1>::full(Shape{4}, 0.5f),
                                  Tensor<Cpu, 1, Int>::zeros(Shape{4}));
      },
      ThrowsMessage<ShapeError>("BinaryCrossEntropyLoss::forward: weights has 3 entries but "
                                "input [4] has rank 1, which needs 2 (for targets 0 and 1)"));
  EXPECT_THAT(
      [&] {
        three.init<Cpu>().forward(Tensor<Cpu, 2>::full(Shape{4, 2}, 0.5f),
                                  Tensor<Cpu, 2, Int>::zeros(Shape{4, 2}));
      },
      ThrowsMessage<ShapeError>("BinaryCrossEntropyLoss::forward: weights has 3 entries but "
                                "input [4, 2] has 2 labels in its last dim"));
}

TEST(BinaryCrossEntropyLossErrors, ConfigValuesAreCheckedByInit) {
  EXPECT_THAT([] { BinaryCrossEntropyLossConfig().with_smoothing(2.0).init<Cpu>(); },
              ThrowsMessage<ConfigError>("BinaryCrossEntropyLossConfig::init: smoothing must be "
                                         "in [0, 1], got 2"));
  EXPECT_THAT(
      [] {
        BinaryCrossEntropyLossConfig().with_weights(std::vector<float>{0.5f, -1}).init<Cpu>();
      },
      ThrowsMessage<ConfigError>("BinaryCrossEntropyLossConfig::init: weights[1] must be finite "
                                 "and non-negative, got -1"));
  EXPECT_THAT(
      [] {
        BinaryCrossEntropyLossConfig().with_weights(std::vector<float>{std::nanf("")}).init<Cpu>();
      },
      ThrowsMessage<ConfigError>(HasSubstr("weights[0] must be finite and non-negative, got nan")));
}

// ------------------------------------------------------------------ config and module

TEST(BinaryCrossEntropyLossConfigTest, DefaultsJsonAndPrinting) {
  const BinaryCrossEntropyLossConfig c;
  EXPECT_FALSE(c.logits);  // Burn's default: probabilities
  EXPECT_EQ(c.to_json_string(-1),
            R"({"logits":false,"reduction":"mean","smoothing":null,"weights":null})");
  const auto d = c.with_logits(true).with_weights(std::vector<float>{3, 7}).with_smoothing(0.05);
  EXPECT_EQ(BinaryCrossEntropyLossConfig::from_json_string(d.to_json_string()), d);
  EXPECT_THAT([] { BinaryCrossEntropyLossConfig::from_json_string(R"({"logits": 1})"); },
              ThrowsMessage<ConfigError>("BinaryCrossEntropyLossConfig.logits: expected a "
                                         "boolean, got the integer 1"));
  std::ostringstream out;
  out << d.init<AD>();
  EXPECT_EQ(out.str(),
            "BinaryCrossEntropyLoss {weights: [3, 7], smoothing: 0.05, logits: true, "
            "reduction: mean, params: 0}");
  const BinaryCrossEntropyLoss<Cpu> valid = d.init<AD>().valid();
  EXPECT_TRUE(valid.logits);
}

}  // namespace
}  // namespace kiln
