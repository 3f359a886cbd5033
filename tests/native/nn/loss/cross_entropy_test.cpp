// CrossEntropyLoss: values and gradients against a double-precision reference written out
// below from PyTorch's formula (the numbers PyTorch 1.13 prints for the same inputs are
// quoted beside the tests), stability for huge logits, ignore_index, probabilities input,
// config JSON and printing, gradcheck, and every error message.
// The reference cases of category softmax_ce run through this loss in loss_cases_test.cpp.
#include "kiln/nn/loss/cross_entropy.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using nn::loss::CrossEntropyLoss;
using nn::loss::CrossEntropyLossConfig;
using nn::loss::Reduction;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;
using Rows = std::vector<std::vector<double>>;

constexpr Tolerance kTol = Tolerance::rel_abs(1e-5, 1e-6);

// ------------------------------------------------------------------ reference

/// PyTorch's cross-entropy in double, with its gradient written out by hand:
///   loss_i = -(1-ε)·w[t]·lp[t] - (ε/C)·Σ_c w[c]·lp[c]
///   d loss_i / d z_j = (1-ε)·w[t]·(s_j - [j = t]) + (ε/C)·(W·s_j - w[j]),  W = Σ_c w[c]
/// (s = softmax(z_i), lp = log s), ignored rows 0; mean divides by Σ w[t_i] of kept rows.
struct Reference {
  std::vector<double> rows;
  double sum = 0, mean = 0;
  Rows grad_sum, grad_mean;  // d sum / d z, d mean / d z
};

Reference reference(const Rows& z, const std::vector<int>& t, std::vector<double> w = {},
                    double eps = 0.0, std::optional<int> ignore = std::nullopt) {
  const std::size_t n = z.size(), c = z.empty() ? 0 : z[0].size();
  if (w.empty()) w.assign(c, 1.0);
  double total_w = 0;
  for (double x : w) total_w += x;
  Reference r;
  double denominator = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> grad(c, 0.0);
    if (ignore && t[i] == *ignore) {
      r.rows.push_back(0.0);
      r.grad_sum.push_back(grad);
      continue;
    }
    double m = -std::numeric_limits<double>::infinity();
    for (double x : z[i]) m = std::max(m, x);
    double s = 0;
    for (double x : z[i]) s += std::exp(x - m);
    const double lse = m + std::log(s);
    double loss = 0, smooth = 0;
    for (std::size_t j = 0; j < c; ++j) {
      const double lp = z[i][j] - lse, p = std::exp(lp);
      smooth += w[j] * lp;
      grad[j] = (1 - eps) * w[t[i]] * (p - (static_cast<int>(j) == t[i] ? 1.0 : 0.0)) +
                eps / c * (total_w * p - w[j]);
      if (static_cast<int>(j) == t[i]) loss -= (1 - eps) * w[j] * lp;
    }
    loss -= eps / c * smooth;
    r.rows.push_back(loss);
    r.grad_sum.push_back(grad);
    r.sum += loss;
    denominator += w[t[i]];
  }
  r.mean = r.sum / denominator;
  for (const auto& g : r.grad_sum) {
    std::vector<double> row;
    for (double x : g) row.push_back(x / denominator);
    r.grad_mean.push_back(row);
  }
  return r;
}

TensorData data(const Rows& rows) {
  std::vector<float> flat;
  for (const auto& row : rows) {
    for (double x : row) flat.push_back(static_cast<float>(x));
  }
  const auto cols = rows.empty() ? 0 : static_cast<std::int64_t>(rows[0].size());
  return TensorData(Shape{static_cast<std::int64_t>(rows.size()), cols}, std::move(flat));
}
TensorData data(const std::vector<double>& values) {
  std::vector<float> flat(values.begin(), values.end());
  return TensorData(Shape{static_cast<std::int64_t>(values.size())}, std::move(flat));
}
/// A double-precision reference against a number PyTorch 1.13 printed for the same float32
/// inputs: equal to float32 accuracy.
void expect_pytorch_f32(double reference, double pytorch) {
  EXPECT_NEAR(reference, pytorch, 1e-6 * std::abs(pytorch) + 1e-8);
}

TensorData scalar(double value) { return TensorData(Shape{1}, std::vector<float>{float(value)}); }

// Four rows, three classes: targets 2, 0, 1, 0.
const Rows kLogits = {{1, 2, 3}, {1, 1, 1}, {0.5, -1, 2}, {3, 0, -2}};
const std::vector<int> kTargets = {2, 0, 1, 0};

template <class B>
Tensor<B, 2> logits_of(const Rows& z) {
  return Tensor<B, 2>::from_data(data(z));
}
template <class B>
Tensor<B, 1, Int> targets_of(const std::vector<int>& t) {
  return Tensor<B, 1, Int>::from_data(TensorData(Shape{static_cast<std::int64_t>(t.size())},
                                                 std::vector<std::int32_t>(t.begin(), t.end())));
}

// ------------------------------------------------------------------ values, every backend

template <class B>
class CrossEntropyLossTest : public ::testing::Test {};
TYPED_TEST_SUITE(CrossEntropyLossTest, test::AllBackends);

TYPED_TEST(CrossEntropyLossTest, PlainMeanByHand) {
  // Row 0: log(e + e² + e³) - 3 = 0.40760596; row 1: log 3 = 1.09861229.
  const auto z = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f}, {1.f, 1.f, 1.f}});
  const auto t = Tensor<TypeParam, 1, Int>::from_data({2, 0});
  const auto loss = CrossEntropyLossConfig().init<TypeParam>();
  loss.forward(z, t).into_data().assert_approx_eq(
      scalar((std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0 + std::log(3.0)) / 2),
      kTol);
}

TYPED_TEST(CrossEntropyLossTest, MeanSumAndNoReductionMatchTheReference) {
  // PyTorch 1.13: mean 1.20062876, sum 4.80251503.
  const auto ref = reference(kLogits, kTargets);
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>(kTargets);
  CrossEntropyLossConfig().init<TypeParam>().forward(z, t).into_data().assert_approx_eq(
      scalar(ref.mean), kTol);
  CrossEntropyLossConfig()
      .with_reduction(Reduction::Sum)
      .init<TypeParam>()
      .forward(z, t)
      .into_data()
      .assert_approx_eq(scalar(ref.sum), kTol);
  CrossEntropyLossConfig()
      .init<TypeParam>()
      .forward_no_reduction(z, t)
      .into_data()
      .assert_approx_eq(data(ref.rows), kTol);
  expect_pytorch_f32(ref.mean, 1.20062876);
}

TYPED_TEST(CrossEntropyLossTest, WeightedMeanDividesByTheTargetsWeights) {
  // Weights 1, 2, 3 for targets 2, 0, 1, 0: the mean divides by 3 + 1 + 2 + 1 = 7, not 4.
  // PyTorch 1.13: 1.26557672.
  const auto ref = reference(kLogits, kTargets, {1, 2, 3});
  const auto loss =
      CrossEntropyLossConfig().with_weights(std::vector<float>{1, 2, 3}).init<TypeParam>();
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>(kTargets);
  loss.forward(z, t).into_data().assert_approx_eq(scalar(ref.mean), kTol);
  loss.forward_no_reduction(z, t).into_data().assert_approx_eq(data(ref.rows), kTol);
  expect_pytorch_f32(ref.mean, 1.26557672);
  // By hand for row 1 (target 0, weight 1): log 3.
  EXPECT_NEAR(ref.rows[1], std::log(3.0), 1e-12);
}

TYPED_TEST(CrossEntropyLossTest, LabelSmoothingIsPyTorchsFormula) {
  // ε = 0.2, C = 3: loss_i = 0.8·nll_i + (0.2/3)·(-Σ_c lp_c). PyTorch 1.13: 1.30896211.
  const auto ref = reference(kLogits, kTargets, {}, 0.2);
  const auto loss = CrossEntropyLossConfig().with_smoothing(0.2).init<TypeParam>();
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>(kTargets);
  loss.forward(z, t).into_data().assert_approx_eq(scalar(ref.mean), kTol);
  expect_pytorch_f32(ref.mean, 1.30896211);
  // Row 1 has equal logits: every lp is -log 3, so the loss is log 3 whatever ε.
  EXPECT_NEAR(ref.rows[1], std::log(3.0), 1e-12);
}

TYPED_TEST(CrossEntropyLossTest, LabelSmoothingWithWeights) {
  // The smoothing term is weighted per class, and both terms divide by Σ w[t_i] = 7.
  // PyTorch 1.13: mean 1.42498612; per row 1.40796340, 1.31833482, 5.78262281, 1.46598232.
  const auto ref = reference(kLogits, kTargets, {1, 2, 3}, 0.2);
  const auto config =
      CrossEntropyLossConfig().with_weights(std::vector<float>{1, 2, 3}).with_smoothing(0.2);
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>(kTargets);
  config.init<TypeParam>().forward(z, t).into_data().assert_approx_eq(scalar(ref.mean), kTol);
  config.init<TypeParam>().forward_no_reduction(z, t).into_data().assert_approx_eq(
      TensorData::from({1.40796340f, 1.31833482f, 5.78262281f, 1.46598232f}), kTol);
  expect_pytorch_f32(ref.mean, 1.42498612);
}

TYPED_TEST(CrossEntropyLossTest, SmoothingZeroIsThePlainLossAndOneTheUniformTarget) {
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>(kTargets);
  CrossEntropyLossConfig()
      .with_smoothing(0.0)
      .init<TypeParam>()
      .forward(z, t)
      .into_data()
      .assert_approx_eq(scalar(reference(kLogits, kTargets).mean), kTol);
  // ε = 1: -(1/3)·Σ_c lp_c, the targets do not matter. Row 1: log 3.
  const auto rows =
      CrossEntropyLossConfig().with_smoothing(1.0).init<TypeParam>().forward_no_reduction(
          z, targets_of<TypeParam>({0, 1, 2, 2}));
  rows.into_data().assert_approx_eq(data(reference(kLogits, kTargets, {}, 1.0).rows), kTol);
  EXPECT_NEAR(rows.to_data().template to_vec<float>()[1], std::log(3.0), 1e-6);
}

TYPED_TEST(CrossEntropyLossTest, HugeLogitsStayFinite) {
  // log_softmax subtracts the row max: exp(1000) would overflow. PyTorch: [1000, 0].
  const auto z = Tensor<TypeParam, 2>::from_data({{1000.f, 0.f, -1000.f}, {-1e4f, 1e4f, 0.f}});
  const auto t = Tensor<TypeParam, 1, Int>::from_data({1, 1});
  const auto loss = CrossEntropyLossConfig().init<TypeParam>();
  loss.forward_no_reduction(z, t).into_data().assert_approx_eq(TensorData::from({1000.f, 0.f}),
                                                               kTol);
  loss.forward(z, t).into_data().assert_approx_eq(TensorData::from({500.f}), kTol);
  // With smoothing the -1e4 and -2e4 log-probabilities enter the sum, still finite:
  // row 1: lp = [-2e4, 0, -1e4], loss = 0.9·0 + (0.1/3)·3e4 = 1000.
  CrossEntropyLossConfig()
      .with_smoothing(0.1)
      .init<TypeParam>()
      .forward_no_reduction(z, t)
      .into_data()
      .assert_approx_eq(TensorData::from({0.9f * 1000.f + 0.1f / 3.f * (1000.f + 2000.f), 1000.f}),
                        kTol);
}

TYPED_TEST(CrossEntropyLossTest, MinusInfinityLogitOfAnotherClassIsFineWithoutSmoothing) {
  // lp of the -inf class is -inf, but only lp[target] enters: log(1 + e^-1) = 0.31326169.
  const float inf = std::numeric_limits<float>::infinity();
  const auto z = Tensor<TypeParam, 2>::from_data({{-inf, 1.f, 0.f}});
  const auto t = Tensor<TypeParam, 1, Int>::from_data({1});
  CrossEntropyLossConfig().init<TypeParam>().forward(z, t).into_data().assert_approx_eq(
      scalar(std::log1p(std::exp(-1.0))), kTol);
}

TYPED_TEST(CrossEntropyLossTest, IgnoreIndexWithWeightsAndSmoothing) {
  // Row 1 ignored: it adds nothing and its weight leaves the denominator (3 + 2 + 1 = 6).
  // PyTorch 1.13: mean 1.44276130, sum 8.65656853.
  const std::vector<int> targets = {2, -100, 1, 0};
  const auto ref = reference(kLogits, targets, {1, 2, 3}, 0.2, -100);
  const auto config = CrossEntropyLossConfig()
                          .with_weights(std::vector<float>{1, 2, 3})
                          .with_smoothing(0.2)
                          .with_ignore_index(-100);
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>(targets);
  config.init<TypeParam>().forward(z, t).into_data().assert_approx_eq(scalar(ref.mean), kTol);
  config.with_reduction(Reduction::Sum)
      .init<TypeParam>()
      .forward(z, t)
      .into_data()
      .assert_approx_eq(scalar(ref.sum), kTol);
  config.init<TypeParam>().forward_no_reduction(z, t).into_data().assert_approx_eq(data(ref.rows),
                                                                                   kTol);
  expect_pytorch_f32(ref.mean, 1.44276130);
  expect_pytorch_f32(ref.sum, 8.65656853);
}

TYPED_TEST(CrossEntropyLossTest, IgnoreIndexMayBeAClass) {
  // ignore_index 0 (a padding class): rows with target 0 are dropped, others are as usual.
  const auto ref = reference(kLogits, kTargets, {}, 0.0, 0);
  const auto loss = CrossEntropyLossConfig().with_ignore_index(0).init<TypeParam>();
  loss.forward(logits_of<TypeParam>(kLogits), targets_of<TypeParam>(kTargets))
      .into_data()
      .assert_approx_eq(scalar(ref.mean), kTol);
  EXPECT_NEAR(ref.mean, (ref.rows[0] + ref.rows[2]) / 2, 1e-12);
}

TYPED_TEST(CrossEntropyLossTest, EveryRowIgnoredGivesNanMeanAndZeroSum) {
  // PyTorch >= 1.11: mean over no rows is 0/0 = nan; with weights too (0/0).
  const auto z = logits_of<TypeParam>(kLogits);
  const auto t = targets_of<TypeParam>({-1, -1, -1, -1});
  const auto config = CrossEntropyLossConfig().with_ignore_index(-1);
  EXPECT_TRUE(std::isnan(config.init<TypeParam>().forward(z, t).into_scalar()));
  EXPECT_TRUE(std::isnan(config.with_weights(std::vector<float>{1, 2, 3})
                             .init<TypeParam>()
                             .forward(z, t)
                             .into_scalar()));
  EXPECT_EQ(config.with_reduction(Reduction::Sum).init<TypeParam>().forward(z, t).into_scalar(),
            0.f);
}

TYPED_TEST(CrossEntropyLossTest, EmptyBatchGivesNanMeanAndZeroSum) {
  // As PyTorch: cross_entropy of a [0, 3] batch is nan (mean) and 0 (sum).
  const auto z = Tensor<TypeParam, 2>::zeros(Shape{0, 3});
  const auto t = Tensor<TypeParam, 1, Int>::zeros(Shape{0});
  EXPECT_TRUE(std::isnan(CrossEntropyLossConfig().init<TypeParam>().forward(z, t).into_scalar()));
  EXPECT_EQ(CrossEntropyLossConfig()
                .with_reduction(Reduction::Sum)
                .init<TypeParam>()
                .forward(z, t)
                .into_scalar(),
            0.f);
}

TYPED_TEST(CrossEntropyLossTest, ProbabilitiesInputTakesTheLogClampedAtSqrtFltMin) {
  // logits = false: -log p[target]; p = 0 is clamped to sqrt(FLT_MIN) = 2^-63, so the loss
  // is 63·log 2 = 43.668 rather than inf (Burn's rule).
  const auto p = Tensor<TypeParam, 2>::from_data({{0.25f, 0.75f}, {1.f, 0.f}, {0.5f, 0.5f}});
  const auto t = Tensor<TypeParam, 1, Int>::from_data({0, 1, 1});
  const auto loss = CrossEntropyLossConfig().with_logits(false).init<TypeParam>();
  loss.forward_no_reduction(p, t).into_data().assert_approx_eq(
      data(std::vector<double>{std::log(4.0), 63 * std::log(2.0), std::log(2.0)}), kTol);
}

// ------------------------------------------------------------------ gradients

struct AdResult {
  TensorData value, grad;
};

AdResult run(const CrossEntropyLoss<AD>& loss, const Rows& z, const std::vector<int>& t) {
  const auto logits = logits_of<AD>(z).require_grad();
  const auto out = loss.forward(logits, targets_of<AD>(t));
  const auto grads = out.backward();
  return {out.to_data(), logits.grad(grads).value().to_data()};
}

TEST(CrossEntropyLossGradTest, MeanGradientIsSoftmaxMinusOneHotOverBatch) {
  // PyTorch 1.13, row 1 (equal logits, target 0): [-1/6, 1/12, 1/12].
  const auto ref = reference(kLogits, kTargets);
  const auto r = run(CrossEntropyLossConfig().init<AD>(), kLogits, kTargets);
  r.grad.assert_approx_eq(data(ref.grad_mean), kTol);
  EXPECT_NEAR(ref.grad_mean[1][0], -1.0 / 6, 1e-12);
  EXPECT_NEAR(ref.grad_mean[1][1], 1.0 / 12, 1e-12);
}

TEST(CrossEntropyLossGradTest, SumGradient) {
  const auto ref = reference(kLogits, kTargets);
  const auto r =
      run(CrossEntropyLossConfig().with_reduction(Reduction::Sum).init<AD>(), kLogits, kTargets);
  r.value.assert_approx_eq(scalar(ref.sum), kTol);
  r.grad.assert_approx_eq(data(ref.grad_sum), kTol);
}

TEST(CrossEntropyLossGradTest, WeightedSmoothedIgnoredGradient) {
  // PyTorch 1.13, row 0: [0.03090316, 0.09198441, -0.12288754]; row 1 (ignored): 0.
  const std::vector<int> targets = {2, -100, 1, 0};
  const auto ref = reference(kLogits, targets, {1, 2, 3}, 0.2, -100);
  const auto r = run(CrossEntropyLossConfig()
                         .with_weights(std::vector<float>{1, 2, 3})
                         .with_smoothing(0.2)
                         .with_ignore_index(-100)
                         .init<AD>(),
                     kLogits, targets);
  r.value.assert_approx_eq(scalar(ref.mean), kTol);
  r.grad.assert_approx_eq(data(ref.grad_mean), kTol);
  expect_pytorch_f32(ref.grad_mean[0][0], 0.03090316);
  expect_pytorch_f32(ref.grad_mean[0][2], -0.12288754);
  const auto g = r.grad.to_vec<float>();
  EXPECT_EQ(g[3], 0.f);
  EXPECT_EQ(g[4], 0.f);
  EXPECT_EQ(g[5], 0.f);
}

TEST(CrossEntropyLossGradTest, HugeLogitsGiveFiniteGradients) {
  // softmax is exactly one-hot here; the gradient of row 0 is [0, -1, 1] / 2 (target 1 has
  // probability 0, class 0 probability 1), row 1's is 0.
  const auto r =
      run(CrossEntropyLossConfig().init<AD>(), {{1000, 0, -1000}, {-1e4, 1e4, 0}}, {1, 1});
  r.grad.assert_approx_eq(TensorData::from({{0.5f, -0.5f, 0.f}, {0.f, 0.f, 0.f}}), kTol);
}

TEST(CrossEntropyLossGradTest, TrackedWeightsAreNotNeeded) {
  // The loss on Autodiff<Cpu> takes its weights from the config: nothing but the logits is
  // tracked, and an untracked input gives an untracked loss.
  const auto loss = CrossEntropyLossConfig().with_weights(std::vector<float>{1, 2, 3}).init<AD>();
  const auto out = loss.forward(logits_of<AD>(kLogits), targets_of<AD>(kTargets));
  EXPECT_FALSE(out.is_require_grad());
}

TEST(CrossEntropyLossGradcheck, EveryConfiguration) {
  test::Sampler rng(7);
  const auto z = rng.uniform<2>(Shape{5, 4}, -3, 3);
  const auto t = targets_of<AD>({3, 0, 2, 1, 3});
  const auto t_ignored = targets_of<AD>({3, -100, 2, -100, 0});
  const std::vector<float> w = {0.5f, 2.f, 1.f, 3.f};
  const auto check = [&](const char* name, const CrossEntropyLossConfig& config,
                         const Tensor<AD, 1, Int>& targets) {
    const auto loss = config.init<AD>();
    EXPECT_TRUE(test::gradcheck(
        name, [&](Tensor<AD, 2> x) { return loss.forward(x, targets); }, z));
    EXPECT_TRUE(test::gradcheck(
        name, [&](Tensor<AD, 2> x) { return loss.forward_no_reduction(x, targets); }, z));
  };
  check("cross_entropy", CrossEntropyLossConfig(), t);
  check("cross_entropy sum", CrossEntropyLossConfig().with_reduction(Reduction::Sum), t);
  check("cross_entropy weights", CrossEntropyLossConfig().with_weights(w), t);
  check("cross_entropy smoothing", CrossEntropyLossConfig().with_smoothing(0.3), t);
  check("cross_entropy all",
        CrossEntropyLossConfig().with_weights(w).with_smoothing(0.3).with_ignore_index(-100),
        t_ignored);
  // Probabilities input, kept inside (0.1, 1) so the clamp is far away.
  const auto p = rng.uniform<2>(Shape{5, 4}, 0.1, 1.0);
  const auto probs = CrossEntropyLossConfig().with_logits(false).with_weights(w).init<AD>();
  EXPECT_TRUE(test::gradcheck(
      "cross_entropy probabilities", [&](Tensor<AD, 2> x) { return probs.forward(x, t); }, p));
}

// ------------------------------------------------------------------ errors

TEST(CrossEntropyLossErrors, TargetOutOfRangeNamesTheTargetAndItsRow) {
  const auto z = logits_of<Cpu>(kLogits);
  const auto loss = CrossEntropyLossConfig().init<Cpu>();
  EXPECT_THAT(
      [&] {
        loss.forward(z, targets_of<Cpu>({2, 0, 3, 7}));
      },
      ThrowsMessage<IndexError>("CrossEntropyLoss::forward: targets must be class "
                                "indices in [0, 3): row 2 has target 3"));
  EXPECT_THAT(
      [&] {
        loss.forward_no_reduction(z, targets_of<Cpu>({-100, 0, 0, 0}));
      },
      ThrowsMessage<IndexError>("CrossEntropyLoss::forward: targets must be class "
                                "indices in [0, 3): row 0 has target -100"));
  const auto ignoring = CrossEntropyLossConfig().with_ignore_index(-100).init<Cpu>();
  EXPECT_THAT(
      [&] {
        ignoring.forward(z, targets_of<Cpu>({-100, 0, -1, 0}));
      },
      ThrowsMessage<IndexError>("CrossEntropyLoss::forward: targets must be class "
                                "indices in [0, 3) or ignore_index -100: row 2 has "
                                "target -1"));
}

TEST(CrossEntropyLossErrors, TargetsLengthMustBeTheBatchSize) {
  const auto loss = CrossEntropyLossConfig().init<AD>();
  EXPECT_THAT(
      [&] {
        loss.forward(logits_of<AD>(kLogits), targets_of<AD>({0, 1, 2}));
      },
      ThrowsMessage<ShapeError>("CrossEntropyLoss::forward: targets [3] do not match "
                                "the batch of logits [4, 3] (3 != 4)"));
}

TEST(CrossEntropyLossErrors, WeightsMustHaveOneEntryPerClass) {
  const auto loss = CrossEntropyLossConfig().with_weights(std::vector<float>{1, 2}).init<Cpu>();
  EXPECT_THAT([&] { loss.forward(logits_of<Cpu>(kLogits), targets_of<Cpu>(kTargets)); },
              ThrowsMessage<ShapeError>("CrossEntropyLoss::forward: weights has 2 entries but "
                                        "logits [4, 3] have 3 classes"));
}

TEST(CrossEntropyLossErrors, LogitsNeedAtLeastOneClass) {
  const auto loss = CrossEntropyLossConfig().with_ignore_index(-100).init<Cpu>();
  EXPECT_THAT(
      [&] {
        loss.forward(Tensor<Cpu, 2>::zeros(Shape{2, 0}), targets_of<Cpu>({-100, -100}));
      },
      ThrowsMessage<ShapeError>("CrossEntropyLoss::forward: logits [2, 0] have no "
                                "classes"));
}

TEST(CrossEntropyLossErrors, ConfigValuesAreCheckedByInit) {
  EXPECT_THAT([] { CrossEntropyLossConfig().with_smoothing(1.5).init<Cpu>(); },
              ThrowsMessage<ConfigError>("CrossEntropyLossConfig::init: smoothing must be in "
                                         "[0, 1], got 1.5"));
  EXPECT_THAT([] { CrossEntropyLossConfig().with_smoothing(-0.1).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("smoothing must be in [0, 1], got -0.1")));
  EXPECT_THAT([] { CrossEntropyLossConfig().with_smoothing(std::nan("")).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("smoothing must be in [0, 1], got nan")));
  EXPECT_THAT(
      [] {
        CrossEntropyLossConfig().with_weights(std::vector<float>{1, -2}).init<Cpu>();
      },
      ThrowsMessage<ConfigError>("CrossEntropyLossConfig::init: weights[1] must be "
                                 "finite and non-negative, got -2"));
  EXPECT_THAT(
      [] {
        CrossEntropyLossConfig()
            .with_weights(std::vector<float>{std::numeric_limits<float>::infinity()})
            .init<Cpu>();
      },
      ThrowsMessage<ConfigError>(HasSubstr("weights[0] must be finite and non-negative, got inf")));
  EXPECT_THAT([] { CrossEntropyLossConfig().with_weights(std::vector<float>{}).init<Cpu>(); },
              ThrowsMessage<ConfigError>("CrossEntropyLossConfig::init: weights is empty"));
}

// ------------------------------------------------------------------ config and module

TEST(CrossEntropyLossConfigTest, DefaultsAndJson) {
  const CrossEntropyLossConfig c;
  EXPECT_TRUE(c.logits);
  EXPECT_EQ(c.weights, std::nullopt);
  EXPECT_EQ(c.smoothing, std::nullopt);
  EXPECT_EQ(c.ignore_index, std::nullopt);
  EXPECT_EQ(c.reduction, Reduction::Mean);
  EXPECT_EQ(
      c.to_json_string(-1),
      R"({"ignore_index":null,"logits":true,"reduction":"mean","smoothing":null,"weights":null})");
  const auto d = c.with_weights(std::vector<float>{1, 0.5f})
                     .with_smoothing(0.1)
                     .with_ignore_index(-100)
                     .with_reduction(Reduction::Sum);
  EXPECT_EQ(CrossEntropyLossConfig::from_json_string(d.to_json_string()), d);
  const auto e = CrossEntropyLossConfig::from_json_string(
      R"({"weights": [2, 1], "ignore_index": 0, "reduction": "sum"})");
  EXPECT_EQ(e.weights, (std::vector<float>{2, 1}));
  EXPECT_EQ(e.ignore_index, 0);
  EXPECT_EQ(e.reduction, Reduction::Sum);
  EXPECT_TRUE(e.logits);
  EXPECT_THAT([] { CrossEntropyLossConfig::from_json_string(R"({"pad_tokens": [0]})"); },
              ThrowsMessage<ConfigError>(HasSubstr("unknown field \"pad_tokens\"")));
}

TEST(CrossEntropyLossModuleTest, PrintsItsFieldsAndMapsToTheInnerBackend) {
  const auto loss = CrossEntropyLossConfig()
                        .with_weights(std::vector<float>{1, 2.5f})
                        .with_ignore_index(-100)
                        .init<AD>();
  std::ostringstream out;
  out << loss;
  EXPECT_EQ(out.str(),
            "CrossEntropyLoss {weights: [1, 2.5], smoothing: None, logits: true, ignore_index: "
            "-100, reduction: mean, params: 0}");
  const CrossEntropyLoss<Cpu> valid = loss.valid();
  EXPECT_EQ(valid.weights, loss.weights);
  EXPECT_EQ(valid.ignore_index, -100);
  EXPECT_EQ(loss.num_params(), 0);
}

}  // namespace
}  // namespace kiln
