// The PyTorch reference cases of categories losses and softmax_ce
// (tests/native/cases/cases.jsonl) through the loss API: forward values on every backend,
// gradients on Autodiff<Cpu>, every expected key checked. The cross-entropy cases are the
// ones tests/native/autodiff/cases_grad_test.cpp checks on a composition of tensor ops;
// CrossEntropyLoss must give those values and gradients, bit for bit the composition's.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/case_records.hpp"
#include "support/cases.hpp"

namespace kiln {
namespace {

using nlohmann::json;
using nn::loss::BinaryCrossEntropyLossConfig;
using nn::loss::CrossEntropyLossConfig;
using nn::loss::Reduction;
using AD = Autodiff<Cpu>;

/// The expected keys of a case.
std::set<std::string> expected_keys(const std::string& id) {
  for (const auto& r : test::case_records()) {
    if (r.at("id") != id) continue;
    std::set<std::string> keys;
    for (const auto& [key, value] : r.at("expected").items()) keys.insert(key);
    return keys;
  }
  throw std::runtime_error("case not found: " + id);
}

/// Compares results with a case's expected values and, at the end of the test, that every
/// expected key was compared.
class Check {
 public:
  explicit Check(const std::string& id) : case_(test::load_case(id)), keys_(expected_keys(id)) {}
  ~Check() { EXPECT_EQ(checked_, keys_) << case_.id << ": expected keys compared vs present"; }
  const test::Case& c() const { return case_; }
  /// A key another test of this file compares (a gradient, on Autodiff<Cpu> only).
  void elsewhere(const std::string& key) { checked_.insert(key); }
  void compare(const std::string& key, const TensorData& got) {
    checked_.insert(key);
    try {
      got.assert_approx_eq(case_.expected(key), case_.tolerance());
    } catch (const std::exception& e) {
      ADD_FAILURE() << case_.id << ": " << key << ": " << e.what();
    }
  }

 private:
  test::Case case_;
  std::set<std::string> keys_, checked_;
};

/// The cases this file tests, and those of the two categories that involve no loss (softmax
/// alone), tested in tests/native/tensor/activation_test.cpp (every backend) and
/// tests/native/autodiff/cases_grad_test.cpp (gradients).
const std::set<std::string> kTested = {"cross_entropy_ignore_index_partial",
                                       "cross_entropy_ignore_index_all", "bce_with_logits_extreme",
                                       "bce_probabilities_clamped_log"};
const std::set<std::string> kSoftmaxOnly = {"softmax_partial_mask", "softmax_nonfinite_rows"};

TEST(LossCasesTest, EveryCaseOfTheTwoCategoriesIsTested) {
  std::set<std::string> in_scope, covered = kTested;
  covered.insert(kSoftmaxOnly.begin(), kSoftmaxOnly.end());
  for (const auto& r : test::case_records()) {
    const auto category = r.at("category").get<std::string>();
    if (category == "losses" || category == "softmax_ce") in_scope.insert(r.at("id"));
  }
  EXPECT_EQ(in_scope, covered);
}

// ------------------------------------------------------------------ forward, every backend

template <class B>
class LossCasesTest : public ::testing::Test {};
TYPED_TEST_SUITE(LossCasesTest, test::AllBackends);

TYPED_TEST(LossCasesTest, CrossEntropyIgnoreIndexPartial) {
  Check check("cross_entropy_ignore_index_partial");
  const auto logits = Tensor<TypeParam, 2>::from_data(check.c().input("logits"));
  const auto target = Tensor<TypeParam, 1, Int>::from_data(check.c().input("target"));
  const auto loss = CrossEntropyLossConfig().with_ignore_index(-100).init<TypeParam>();
  check.compare("out", loss.forward(logits, target).to_data());
  check.elsewhere("grad_logits");  // LossCasesGradTest.CrossEntropyIgnoreIndexPartial
}

TYPED_TEST(LossCasesTest, CrossEntropyIgnoreIndexAll) {
  Check check("cross_entropy_ignore_index_all");
  const auto logits = Tensor<TypeParam, 2>::from_data(check.c().input("logits"));
  const auto target = Tensor<TypeParam, 1, Int>::from_data(check.c().input("target"));
  const auto config = CrossEntropyLossConfig().with_ignore_index(-100);
  check.compare("loss_mean", config.init<TypeParam>().forward(logits, target).to_data());
  check.compare(
      "loss_sum",
      config.with_reduction(Reduction::Sum).init<TypeParam>().forward(logits, target).to_data());
}

TYPED_TEST(LossCasesTest, BceWithLogitsExtreme) {
  Check check("bce_with_logits_extreme");
  const auto logits = Tensor<TypeParam, 1>::from_data(check.c().input("logits"));
  const auto target = Tensor<TypeParam, 1>::from_data(check.c().input("target"));
  const auto bce = BinaryCrossEntropyLossConfig().with_logits(true).init<TypeParam>();
  check.compare("out", bce.forward_no_reduction(logits, target).to_data());
  check.elsewhere("grad_logits");  // LossCasesGradTest.BceWithLogitsExtreme
}

TYPED_TEST(LossCasesTest, BceProbabilitiesClampedLog) {
  Check check("bce_probabilities_clamped_log");
  const auto p = Tensor<TypeParam, 1>::from_data(check.c().input("p"));
  const auto target = Tensor<TypeParam, 1>::from_data(check.c().input("target"));
  check.compare(
      "out",
      BinaryCrossEntropyLossConfig().init<TypeParam>().forward_no_reduction(p, target).to_data());
}

// ------------------------------------------------------------------ gradients, Autodiff<Cpu>

TEST(LossCasesGradTest, CrossEntropyIgnoreIndexPartial) {
  Check check("cross_entropy_ignore_index_partial");
  const auto logits = Tensor<AD, 2>::from_data(check.c().input("logits")).require_grad();
  const auto target = Tensor<AD, 1, Int>::from_data(check.c().input("target"));
  const auto out =
      CrossEntropyLossConfig().with_ignore_index(-100).init<AD>().forward(logits, target);
  check.compare("out", out.to_data());
  check.compare("grad_logits", logits.grad(out.backward()).value().to_data());  // d[out]
}

// No gradient in the case (all rows ignored). With the logits tracked the values are the
// same, and the gradient is exactly 0 for the nan mean as for the sum (PyTorch 1.13: zeros
// for both): the masks of the ignored rows stop the infinite 1/0 of the mean.
TEST(LossCasesGradTest, CrossEntropyIgnoreIndexAllTracked) {
  Check check("cross_entropy_ignore_index_all");
  const auto logits = Tensor<AD, 2>::from_data(check.c().input("logits")).require_grad();
  const auto target = Tensor<AD, 1, Int>::from_data(check.c().input("target"));
  const auto config = CrossEntropyLossConfig().with_ignore_index(-100);
  const auto mean = config.init<AD>().forward(logits, target);
  const auto sum = config.with_reduction(Reduction::Sum).init<AD>().forward(logits, target);
  check.compare("loss_mean", mean.to_data());
  check.compare("loss_sum", sum.to_data());
  const auto zeros = TensorData::from({{0.f, 0.f}, {0.f, 0.f}});
  logits.grad(mean.backward())->to_data().assert_eq(zeros);
  logits.grad(sum.backward())->to_data().assert_eq(zeros);
  const auto smoothed = config.with_smoothing(0.1).init<AD>().forward(logits, target);
  logits.grad(smoothed.backward())->to_data().assert_eq(zeros);
}

TEST(LossCasesGradTest, BceWithLogitsExtreme) {
  Check check("bce_with_logits_extreme");
  const auto logits = Tensor<AD, 1>::from_data(check.c().input("logits")).require_grad();
  const auto target = Tensor<AD, 1>::from_data(check.c().input("target"));
  const auto dy = Tensor<AD, 1>::from_data(check.c().input("dy_out"));
  const auto out = BinaryCrossEntropyLossConfig().with_logits(true).init<AD>().forward_no_reduction(
      logits, target);
  check.compare("out", out.to_data());
  check.compare("grad_logits", logits.grad((out * dy).sum().backward()).value().to_data());
}

// No gradient in the case; with p tracked the forward values must not change (the term
// that carries PyTorch's gradient is exactly 0), and the gradient is PyTorch's
// (p - t) / max(p(1 - p), 1e-12): 0, 0, -1e12, 1e12, -0.75/0.1875, 0.5/0.25.
TEST(LossCasesGradTest, BceProbabilitiesClampedLogTracked) {
  Check check("bce_probabilities_clamped_log");
  const auto p = Tensor<AD, 1>::from_data(check.c().input("p")).require_grad();
  const auto target = Tensor<AD, 1>::from_data(check.c().input("target"));
  const auto out = BinaryCrossEntropyLossConfig().init<AD>().forward_no_reduction(p, target);
  check.compare("out", out.to_data());
  p.grad(out.sum().backward())
      ->to_data()
      .assert_approx_eq(TensorData::from({0.f, 0.f, -1e12f, 1e12f, -4.f, 2.f}),
                        Tolerance::rel_abs(1e-6, 0));
}

// The composition of tests/native/autodiff/cases_grad_test.cpp (log_softmax, gather, masks,
// sum / count): the loss builds the same graph, so values and gradients are identical.
TEST(LossCasesGradTest, CrossEntropyIsTheCompositionBitForBit) {
  const auto c = test::load_case("cross_entropy_ignore_index_partial");
  const auto targets = Tensor<AD, 1, Int>::from_data(c.input("target"));
  const auto composed_logits = Tensor<AD, 2>::from_data(c.input("logits")).require_grad();
  const auto ignored = targets.equal_elem(-100);
  const auto picked = activation::log_softmax(composed_logits, 1)
                          .gather(1, targets.mask_fill(ignored, 0).unsqueeze_dim<2>(1))
                          .squeeze_dim<1>(1);
  const auto composed = (-picked).mask_fill(ignored, 0.f).sum() / ignored.bool_not().float_().sum();
  const auto loss_logits = Tensor<AD, 2>::from_data(c.input("logits")).require_grad();
  const auto loss =
      CrossEntropyLossConfig().with_ignore_index(-100).init<AD>().forward(loss_logits, targets);
  loss.to_data().assert_eq(composed.to_data());
  loss_logits.grad(loss.backward())
      ->to_data()
      .assert_eq(composed_logits.grad(composed.backward())->to_data());
}

}  // namespace
}  // namespace kiln
