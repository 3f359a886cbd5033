// Tensor::matmul_transposed: forward by hand, the same values as an explicit transpose, and
// its Autodiff backward (all four transpose flags, broadcast batch dims) by gradcheck.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;

template <class B>
class MatmulTransposedTest : public ::testing::Test {};
TYPED_TEST_SUITE(MatmulTransposedTest, test::AllBackends);

TYPED_TEST(MatmulTransposedTest, ByHand) {
  using T = Tensor<TypeParam, 2>;
  const auto x = T::from_floats({{1.f, 2.f}});                          // [1, 2]
  const auto w = T::from_floats({{1.f, 0.f}, {1.f, 1.f}, {0.f, 2.f}});  // [3, 2]
  // x·wᵀ = [1, 3, 4].
  EXPECT_EQ(x.matmul_transposed(w, false, true).to_data().template to_vec<float>(),
            (std::vector<float>{1.f, 3.f, 4.f}));
  // wᵀ·w = [[2, 1], [1, 5]].
  EXPECT_EQ(w.matmul_transposed(w, true, false).to_data().template to_vec<float>(),
            (std::vector<float>{2.f, 1.f, 1.f, 5.f}));
  // Both flags: lhs x [1, 2] read as xᵀ [2, 1], rhs xᵀ [2, 1] read as x [1, 2]:
  // xᵀ·x = [[1, 2], [2, 4]].
  EXPECT_EQ(x.matmul_transposed(x.transpose(), true, true).to_data().template to_vec<float>(),
            (std::vector<float>{1.f, 2.f, 2.f, 4.f}));
  EXPECT_THAT(
      [&] { (void)x.matmul_transposed(w, false, false); },
      testing::ThrowsMessage<ShapeError>(testing::HasSubstr("matmul: inner dimensions differ")));
}

TYPED_TEST(MatmulTransposedTest, EqualsAnExplicitTransposeWithBroadcastBatches) {
  test::Sampler rng(3);
  const auto a = Tensor<TypeParam, 3>::from_data(rng.uniform_data(Shape{2, 4, 3}, -1, 1));
  const auto b = Tensor<TypeParam, 3>::from_data(rng.uniform_data(Shape{1, 5, 4}, -1, 1));
  // aᵀ [2, 3, 4] · bᵀ [1, 4, 5] -> [2, 3, 5].
  const auto fused = a.matmul_transposed(b, true, true);
  const auto plain = a.transpose().matmul(b.transpose());
  EXPECT_EQ(fused.shape(), (Shape{2, 3, 5}));
  fused.to_data().assert_approx_eq(plain.to_data(), Tolerance::rel_abs(1e-6, 1e-6));
}

TEST(MatmulTransposedGradTest, AllFlagCombinationsRank2) {
  test::Sampler rng(41);
  // op(A) [3, 4] · op(B) [4, 2]: A stored [4, 3] when transposed, B stored [2, 4].
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = rng.uniform<2>(ta ? Shape{4, 3} : Shape{3, 4}, -1, 1);
      const auto b = rng.uniform<2>(tb ? Shape{2, 4} : Shape{4, 2}, -1, 1);
      EXPECT_TRUE(test::gradcheck(
          "matmul_transposed",
          [ta, tb](Tensor<AD, 2> x, Tensor<AD, 2> y) { return x.matmul_transposed(y, ta, tb); }, a,
          b))
          << "transpose_lhs " << ta << ", transpose_rhs " << tb;
    }
  }
}

TEST(MatmulTransposedGradTest, AllFlagCombinationsWithBroadcastBatchDims) {
  test::Sampler rng(43);
  // lhs batch [2, 1], rhs batch [1, 3]: each operand's gradient sums over the other's batch.
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      const auto a = rng.uniform<4>(ta ? Shape{2, 1, 4, 3} : Shape{2, 1, 3, 4}, -1, 1);
      const auto b = rng.uniform<4>(tb ? Shape{1, 3, 2, 4} : Shape{1, 3, 4, 2}, -1, 1);
      EXPECT_TRUE(test::gradcheck(
          "matmul_transposed (batched)",
          [ta, tb](Tensor<AD, 4> x, Tensor<AD, 4> y) { return x.matmul_transposed(y, ta, tb); }, a,
          b))
          << "transpose_lhs " << ta << ", transpose_rhs " << tb;
    }
  }
}

TEST(MatmulTransposedGradTest, OnlyTheTrackedOperandGetsAGradient) {
  const auto a = Tensor<AD, 2>::from_floats({{1.f, 2.f}}).require_grad();  // [1, 2]
  const auto w = Tensor<AD, 2>::from_floats({{1.f, 0.f}, {1.f, 1.f}});     // [2, 2], untracked
  auto grads = a.matmul_transposed(w, false, true).sum().backward();
  // d sum(a·wᵀ)/da = Σ_rows w = [2, 1].
  EXPECT_EQ(a.grad(grads)->to_data().to_vec<float>(), (std::vector<float>{2.f, 1.f}));
  EXPECT_FALSE(w.grad(grads).has_value());
}

}  // namespace
}  // namespace kiln
