// Gradients at the points where an op is not differentiable and PyTorch fixes a convention
// (torch 1.13, tools/autograd/derivatives.yaml), written by hand. Finite differences cannot
// check these (gradcheck_test.cpp keeps its samples away from them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using testing::ElementsAre;
using testing::ElementsAreArray;
using testing::FloatEq;
using testing::IsNan;
constexpr float kInf = std::numeric_limits<float>::infinity();

template <std::size_t D>
using T = Tensor<AD, D>;

/// d loss / d x, flattened; fails the test if x got no gradient.
template <std::size_t D>
std::vector<float> grad_of(const T<D>& x, const T<1>& loss) {
  auto grads = loss.backward();
  auto g = x.grad(grads);
  EXPECT_TRUE(g.has_value());
  if (!g) return {};
  EXPECT_EQ(g->shape(), x.shape());
  return g->to_data().template to_vec<float>();
}

TEST(AutodiffKinks, ReluAndAbsAtZeroGiveZero) {
  auto x = T<1>::from_floats({-1.5f, 0.f, -0.f, 2.f}).require_grad();
  EXPECT_THAT(grad_of(x, activation::relu(x).sum()), ElementsAre(0.f, 0.f, 0.f, 1.f));
  EXPECT_THAT(grad_of(x, x.abs().sum()), ElementsAre(-1.f, 0.f, 0.f, 1.f));
  // Upstream gradients other than 1 are scaled, not replaced.
  EXPECT_THAT(grad_of(x, (activation::relu(x) * 3.f).sum()), ElementsAre(0.f, 0.f, 0.f, 3.f));
}

TEST(AutodiffKinks, LeakyReluAtZeroGivesTheSlope) {
  auto x = T<1>::from_floats({-1.f, 0.f, -0.f, 3.f}).require_grad();
  EXPECT_THAT(grad_of(x, activation::leaky_relu(x, 0.2).sum()),
              ElementsAre(FloatEq(0.2f), FloatEq(0.2f), FloatEq(0.2f), 1.f));
  EXPECT_THAT(grad_of(x, activation::leaky_relu(x).sum()),
              ElementsAre(FloatEq(0.01f), FloatEq(0.01f), FloatEq(0.01f), 1.f));
}

TEST(AutodiffKinks, SqrtAtZeroIsInfinite) {
  auto x = T<1>::from_floats({0.f, 4.f, 0.25f}).require_grad();
  EXPECT_THAT(grad_of(x, x.sqrt().sum()), ElementsAre(kInf, 0.25f, 1.f));
  // g / (2·sqrt(0)) with g = 0 is 0/0 = nan, as PyTorch (it does not special-case it).
  auto w = T<1>::from_floats({0.f, 1.f, 1.f});
  EXPECT_THAT(grad_of(x, (x.sqrt() * w).sum()), ElementsAre(IsNan(), 0.25f, 1.f));
}

TEST(AutodiffKinks, ClampAtItsBoundsPassesTheGradient) {
  // Inclusive on both sides: min <= x <= max gets the gradient; nan gets 0.
  auto x = T<1>::from_floats({-1.f, 1.f, 0.f, 2.f, -2.f, std::nanf("")}).require_grad();
  EXPECT_THAT(grad_of(x, x.clamp(-1.f, 1.f).sum()), ElementsAre(1.f, 1.f, 1.f, 0.f, 0.f, 0.f));
  auto y = T<1>::from_floats({0.5f, 0.4f, 0.6f}).require_grad();
  EXPECT_THAT(grad_of(y, y.clamp_min(0.5f).sum()), ElementsAre(1.f, 0.f, 1.f));
  EXPECT_THAT(grad_of(y, y.clamp_max(0.5f).sum()), ElementsAre(1.f, 1.f, 0.f));
  EXPECT_THAT(grad_of(y, y.clamp(0.5f, 0.5f).sum()), ElementsAre(1.f, 0.f, 0.f));
}

TEST(AutodiffKinks, MaxPairAndMinPairSplitTiesInHalf) {
  auto a = T<1>::from_floats({1.f, 2.f, 3.f}).require_grad();
  auto b = T<1>::from_floats({1.f, 3.f, 2.f}).require_grad();
  {
    auto grads = a.max_pair(b).sum().backward();
    EXPECT_THAT(a.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.5f, 0.f, 1.f));
    EXPECT_THAT(b.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.5f, 1.f, 0.f));
  }
  {
    auto grads = a.min_pair(b).sum().backward();
    EXPECT_THAT(a.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.5f, 1.f, 0.f));
    EXPECT_THAT(b.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.5f, 0.f, 1.f));
  }
  // Broadcast [2, 1] with [1, 2], by hand:
  //   out[0][0] = max(1, 1) tie  -> c0 += 0.5, r0 += 0.5
  //   out[0][1] = max(1, 2) = r1 -> r1 += 1
  //   out[1][0] = max(2, 1) = c1 -> c1 += 1
  //   out[1][1] = max(2, 2) tie  -> c1 += 0.5, r1 += 0.5
  auto c = T<2>::from_floats({{1.f}, {2.f}}).require_grad();
  auto r = T<2>::from_floats({{1.f, 2.f}}).require_grad();
  auto grads = c.max_pair(r).sum().backward();
  EXPECT_THAT(c.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.5f, 1.5f));
  EXPECT_THAT(r.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.5f, 1.5f));
}

TEST(AutodiffKinks, WholeMaxAndMinSplitTiesEvenly) {
  auto x = T<1>::from_floats({3.f, 1.f, 3.f, 3.f, -2.f}).require_grad();
  EXPECT_THAT(grad_of(x, x.max() * 6.f), ElementsAre(2.f, 0.f, 2.f, 2.f, 0.f));
  auto y = T<2>::from_floats({{0.f, 5.f}, {0.f, 2.f}}).require_grad();
  EXPECT_THAT(grad_of(y, y.min()), ElementsAre(0.5f, 0.f, 0.5f, 0.f));
  // No tie: the one extreme gets everything.
  EXPECT_THAT(grad_of(y, y.max()), ElementsAre(0.f, 1.f, 0.f, 0.f));
}

TEST(AutodiffKinks, MaxDimAndMinDimSendTiesToTheFirstIndex) {
  auto x = T<2>::from_floats({{1.f, 3.f, 3.f}, {2.f, 2.f, 0.f}, {5.f, 5.f, 5.f}}).require_grad();
  EXPECT_THAT(grad_of(x, x.max_dim(1).sum()), ElementsAre(0, 1, 0, 1, 0, 0, 1, 0, 0));
  EXPECT_THAT(grad_of(x, x.min_dim(1).sum()), ElementsAre(1, 0, 0, 0, 0, 1, 1, 0, 0));
  // Along dim 0 the columns are [1, 2, 5], [3, 2, 5], [3, 0, 5]: max at row 2 in each; min
  // at rows 0, 1, 1.
  EXPECT_THAT(grad_of(x, x.max_dim(0).sum()), ElementsAre(0, 0, 0, 0, 0, 0, 1, 1, 1));
  EXPECT_THAT(grad_of(x, x.min_dim(0).sum()), ElementsAre(1, 0, 0, 0, 1, 1, 0, 0, 0));
  auto t = T<2>::from_floats({{1.f, 2.f}, {1.f, 2.f}, {0.f, 3.f}}).require_grad();
  // Column 0: rows 0 and 1 tie at 1 -> row 0. Column 1: 3 at row 2.
  auto [values, indices] = t.max_dim_with_indices(0);
  EXPECT_THAT(indices.to_data().to_vec<std::int32_t>(), ElementsAre(0, 2));
  EXPECT_THAT(grad_of(t, values.sum()), ElementsAre(1, 0, 0, 0, 0, 1));
  auto u = T<2>::from_floats({{4.f, 4.f}, {7.f, 7.f}}).require_grad();
  auto [uv, ui] = u.min_dim_with_indices(1);  // both rows tie -> column 0
  EXPECT_THAT(ui.to_data().to_vec<std::int32_t>(), ElementsAre(0, 0));
  EXPECT_THAT(grad_of(u, uv.sum()), ElementsAre(1, 0, 1, 0));
}

TEST(AutodiffKinks, PiecewiseConstantOpsGiveZeros) {
  // At the jumps too (integers for floor/ceil, halves for round, 0 for sign): PyTorch's
  // gradient is zeros_like(x), a tensor, not "no gradient".
  auto x = T<1>::from_floats({-1.5f, -1.f, 0.f, 0.5f, 2.5f, 3.f, 0.7f}).require_grad();
  const std::vector<float> zeros(7, 0.f);
  EXPECT_THAT(grad_of(x, x.floor().sum()), ElementsAreArray(zeros));
  EXPECT_THAT(grad_of(x, x.ceil().sum()), ElementsAreArray(zeros));
  EXPECT_THAT(grad_of(x, x.round().sum()), ElementsAreArray(zeros));
  EXPECT_THAT(grad_of(x, x.sign().sum()), ElementsAreArray(zeros));
  auto d = T<1>::full(Shape{7}, 0.5f);
  EXPECT_THAT(grad_of(x, x.div_trunc(d).sum()), ElementsAreArray(zeros));
  // A sum with a differentiable term: only that term counts.
  EXPECT_THAT(grad_of(x, (x.floor() * x).sum()), ElementsAre(-2.f, -1.f, 0.f, 0.f, 2.f, 3.f, 0.f));
}

TEST(AutodiffKinks, PowAtAZeroBase) {
  // pow_backward_self: b·a^(b-1), 0 where b == 0 (so 0^0 has no inf·0 = nan);
  // pow_backward_exponent: out·log(a), 0 where a == 0 and b >= 0 (not 0·-inf = nan).
  auto a = T<1>::from_floats({0.f, 0.f, 0.f, 2.f}).require_grad();
  auto b = T<1>::from_floats({2.f, 0.f, 0.5f, 3.f}).require_grad();
  auto grads = a.powf(b).sum().backward();
  EXPECT_THAT(a.grad(grads)->to_data().to_vec<float>(), ElementsAre(0.f, 0.f, kInf, 12.f));
  EXPECT_THAT(b.grad(grads)->to_data().to_vec<float>(),
              ElementsAre(0.f, 0.f, 0.f, FloatEq(8.f * std::log(2.f))));
  // The scalar forms: x^0 has gradient 0 everywhere, x^2 is 0 at 0.
  auto x = T<1>::from_floats({0.f, -1.5f}).require_grad();
  EXPECT_THAT(grad_of(x, x.powf_scalar(0).sum()), ElementsAre(0.f, 0.f));
  EXPECT_THAT(grad_of(x, x.powf_scalar(2).sum()), ElementsAre(0.f, -3.f));
}

TEST(AutodiffKinks, ProdWithZerosByHand) {
  // d prod / dx_i is the product of the others: only a lone zero gets a non-zero gradient.
  auto none = T<1>::from_floats({2.f, -1.f, 3.f, 4.f}).require_grad();
  EXPECT_THAT(grad_of(none, none.prod()), ElementsAre(-12.f, 24.f, -8.f, -6.f));
  auto one = T<1>::from_floats({2.f, 0.f, 3.f, 4.f}).require_grad();
  EXPECT_THAT(grad_of(one, one.prod()), ElementsAre(0.f, 24.f, 0.f, 0.f));
  auto two = T<1>::from_floats({2.f, 0.f, 3.f, 0.f}).require_grad();
  EXPECT_THAT(grad_of(two, two.prod()), ElementsAre(0.f, 0.f, 0.f, 0.f));
  // Along a dim, row by row: [2, 0, 3] one zero; [0, 5, 0] two; [1, 2, 3] none.
  auto m = T<2>::from_floats({{2.f, 0.f, 3.f}, {0.f, 5.f, 0.f}, {1.f, 2.f, 3.f}}).require_grad();
  EXPECT_THAT(grad_of(m, m.prod_dim(1).sum()), ElementsAre(0, 6, 0, 0, 0, 0, 6, 3, 2));
  // Columns [2, 0, 1], [0, 5, 2], [3, 0, 3]: one zero each.
  EXPECT_THAT(grad_of(m, m.prod_dim(0).sum()), ElementsAre(0, 10, 0, 2, 0, 9, 0, 0, 0));
  // The whole product of m has three zeros: all gradients 0.
  EXPECT_THAT(grad_of(m, m.prod()), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0));
}

}  // namespace
}  // namespace kiln
