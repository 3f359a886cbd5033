// The forward values of the softmax_ce reference cases on cross-entropy, computed with
// tensor-core ops (log_softmax, gather, masks, sums) as the loss of issue 4 will: this pins
// the composition (the mean divides by the count of non-ignored rows; all ignored -> nan).
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/cases.hpp"

using namespace kiln;

template <class B>
class CrossEntropyCasesTest : public ::testing::Test {};
TYPED_TEST_SUITE(CrossEntropyCasesTest, test::AllBackends);

namespace {
constexpr std::int32_t kIgnoreIndex = -100;  // torch.nn.CrossEntropyLoss's default

/// Per-row losses -log_softmax(logits)[i, target_i], 0 on ignored rows, and the count of
/// rows that are not ignored.
template <class B>
std::pair<Tensor<B, 1>, Tensor<B, 1>> losses_and_count(const Tensor<B, 2>& logits,
                                                       const Tensor<B, 1, Int>& targets) {
  const auto ignored = targets.equal_elem(kIgnoreIndex);
  const auto safe_targets = targets.mask_fill(ignored, 0);
  const auto log_probs = activation::log_softmax(logits, 1);
  const auto picked =
      log_probs.gather(1, safe_targets.template unsqueeze_dim<2>(1)).template squeeze_dim<1>(1);
  const auto losses = (-picked).mask_fill(ignored, 0.f);
  const auto count = ignored.bool_not().float_().sum();
  return {losses, count};
}
}  // namespace

TYPED_TEST(CrossEntropyCasesTest, IgnoreIndexPartialMeanMatchesPyTorch) {
  const auto c = test::load_case("cross_entropy_ignore_index_partial");
  const auto logits = Tensor<TypeParam, 2>::from_data(c.input("logits"));
  const auto targets = Tensor<TypeParam, 1, Int>::from_data(c.input("target"));
  const auto [losses, count] = losses_and_count(logits, targets);
  EXPECT_EQ(count.into_scalar(), 2.f);
  (losses.sum() / count).to_data().assert_approx_eq(c.expected("out"), c.tolerance());
}

TYPED_TEST(CrossEntropyCasesTest, AllIgnoredGivesNanMeanAndZeroSum) {
  const auto c = test::load_case("cross_entropy_ignore_index_all");
  const auto logits = Tensor<TypeParam, 2>::from_data(c.input("logits"));
  const auto targets = Tensor<TypeParam, 1, Int>::from_data(c.input("target"));
  const auto [losses, count] = losses_and_count(logits, targets);
  (losses.sum() / count).to_data().assert_approx_eq(c.expected("loss_mean"), c.tolerance());
  losses.sum().to_data().assert_approx_eq(c.expected("loss_sum"), c.tolerance());
}
