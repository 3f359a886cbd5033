// The gradcheck helper itself: it passes on exact gradients and, more to the point, it
// fails (naming op, input, element, analytic and numeric) when the analytic gradient is
// wrong. A wrong gradient is built honestly through the public API with detach(): in
// x·detach(x) the graph sees only one factor, so backward gives x where d/dx is 2x.
#include "support/gradcheck.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using testing::Not;
using AD = Autodiff<Cpu>;

std::string message(const ::testing::AssertionResult& r) { return r.message(); }

TEST(GradcheckHelper, PassesOnExactGradientsOfSeveralInputs) {
  test::Sampler rng(1);
  auto a = rng.uniform<2>(Shape{3, 1}, -1, 1);
  auto b = rng.uniform<2>(Shape{1, 4}, -1, 1);
  auto c = rng.uniform<1>(Shape{4}, 0.5, 2);
  EXPECT_TRUE(test::gradcheck(
      "a*b/c",
      [](Tensor<AD, 2> a, Tensor<AD, 2> b, Tensor<AD, 1> c) { return a * b / c.unsqueeze<2>(); }, a,
      b, c));
}

TEST(GradcheckHelper, ReportsADetachedFactorWithOpInputElementAndValues) {
  auto x = Tensor<AD, 2>::from_floats({{0.5f, -1.f}, {2.f, 1.5f}});
  auto y = Tensor<AD, 1>::from_floats({3.f});
  // d/dx (x·x·y) = 2xy, but the graph sees x·detach(x)·y: analytic x·y, half the truth.
  // The input y is correct (x²), so only input 0 is reported, on all 4 elements.
  const auto r = test::gradcheck(
      "square-detached",
      [](Tensor<AD, 2> x, Tensor<AD, 1> y) { return x * x.detach() * y.unsqueeze<2>(); }, x, y);
  ASSERT_FALSE(r);
  const std::string m = message(r);
  EXPECT_THAT(m, HasSubstr("gradcheck \"square-detached\": 4 of 5 gradient elements differ"));
  EXPECT_THAT(m, HasSubstr("input 0 [2, 2], element 1 [0, 1]"));
  EXPECT_THAT(m, Not(HasSubstr("input 1")));
  // The weights w are random, so analytic and numeric differ by the same factor 2 whatever
  // w_k is: element [1, 0] has x = 2, y = 3 -> analytic 6·w, numeric 12·w.
  const auto at = m.find("element 2 [1, 0]: analytic ");
  ASSERT_NE(at, std::string::npos) << m;
  const double analytic = std::stod(m.substr(m.find("analytic ", at) + 9));
  const auto vs = m.find("vs numeric ", at);
  const double numeric = std::stod(m.substr(vs + 11));
  EXPECT_NEAR(numeric / analytic, 2.0, 1e-3) << m;
  EXPECT_GE(std::abs(analytic), 6.0 * 0.5 - 1e-3);  // |w| >= 0.5
  EXPECT_LE(std::abs(analytic), 6.0 * 1.5 + 1e-3);  // |w| <  1.5
}

TEST(GradcheckHelper, CatchesATenthOfAPercentError) {
  // f = x + 0.0005·detach(x)²: analytic 1, true derivative 1 + 0.001·x. At x in [1, 2] the
  // relative error is 0.1% to 0.2%, above the stated tolerance (about 1e-4 + 3e-4 here).
  auto x = Tensor<AD, 1>::from_floats({1.f, 1.25f, 1.5f, 2.f});
  const auto r = test::gradcheck(
      "slightly-off", [](Tensor<AD, 1> x) { return x + x.detach() * x.detach() * 0.0005f; }, x);
  ASSERT_FALSE(r);
  EXPECT_THAT(message(r), HasSubstr("4 of 4 gradient elements differ"));
  // An error 25 times smaller (0.004% to 0.008%) is below float32 resolution and passes:
  // the check's resolution, stated in gradcheck.hpp.
  EXPECT_TRUE(test::gradcheck(
      "within-tolerance", [](Tensor<AD, 1> x) { return x + x.detach() * x.detach() * 0.00002f; },
      x));
}

TEST(GradcheckHelper, ReportsAMissingGradientAndAKink) {
  // Nothing reaches the graph: the analytic gradient is taken as 0, numeric is 2.
  auto x = Tensor<AD, 1>::from_floats({0.5f, -0.5f});
  const auto none = test::gradcheck(
      "detached", [](Tensor<AD, 1> x) { return x.detach() * 2.f; }, x);
  ASSERT_FALSE(none);
  EXPECT_THAT(message(none), HasSubstr("2 of 2 gradient elements differ"));
  // relu at exactly 0: PyTorch's convention gives 0, the central difference (h - 0)/2h gives
  // 0.5 per unit weight; gradcheck must not be used at a kink, and it says so.
  auto kink = Tensor<AD, 1>::from_floats({0.f, 1.f});
  const auto r = test::gradcheck(
      "relu-at-0", [](Tensor<AD, 1> x) { return activation::relu(x); }, kink);
  ASSERT_FALSE(r);
  EXPECT_THAT(message(r), HasSubstr("1 of 2 gradient elements differ"));
  EXPECT_THAT(message(r), HasSubstr("input 0 [2], element 0 [0]: analytic 0 vs numeric"));
}

TEST(GradcheckHelper, ReportsATrackedForwardThatDiffers) {
  // The analytic pass must compute the same function: one that branches on tracking does not.
  auto x = Tensor<AD, 1>::from_floats({0.5f, 2.f});
  const auto r = test::gradcheck(
      "branchy", [](Tensor<AD, 1> x) { return x.is_require_grad() ? x * 2.f : x; }, x);
  ASSERT_FALSE(r);
  EXPECT_THAT(message(r), HasSubstr("gradcheck \"branchy\": the tracked forward differs from "
                                    "the untracked one: shapes [2] vs [2], first at element 0: "
                                    "1 vs 0.5"));
}

}  // namespace
}  // namespace kiln
