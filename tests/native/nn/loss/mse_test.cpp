// MseLoss: values by hand, both reductions, gradients by hand and by gradcheck, the shape
// error, printing.
#include "kiln/nn/loss/mse.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using nn::loss::MseLoss;
using nn::loss::Reduction;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

template <class B>
class MseLossTest : public ::testing::Test {};
TYPED_TEST_SUITE(MseLossTest, test::AllBackends);

TYPED_TEST(MseLossTest, ByHand) {
  // Burn's test: differences [[-1, 1], [0, 2]] -> squares [[1, 1], [0, 4]], mean 1.5, sum 6.
  const auto logits = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}});
  const auto targets = Tensor<TypeParam, 2>::from_data({{2.f, 1.f}, {3.f, 2.f}});
  const MseLoss mse;
  mse.forward_no_reduction(logits, targets)
      .into_data()
      .assert_eq(TensorData::from({{1.f, 1.f}, {0.f, 4.f}}));
  mse.forward(logits, targets, Reduction::Mean).into_data().assert_eq(TensorData::from({1.5f}));
  mse.forward(logits, targets, Reduction::Sum).into_data().assert_eq(TensorData::from({6.f}));
  mse.forward(logits, targets).into_data().assert_eq(TensorData::from({1.5f}));  // Mean
}

TYPED_TEST(MseLossTest, RankOneAndRankThree) {
  const MseLoss mse;
  const auto a = Tensor<TypeParam, 1>::from_data({0.5f, -1.5f, 3.f});
  const auto b = Tensor<TypeParam, 1>::from_data({0.f, 0.5f, 3.f});
  // (0.25 + 4 + 0) / 3
  mse.forward(a, b).into_data().assert_approx_eq(TensorData::from({4.25f / 3.f}),
                                                 Tolerance::rel_abs(1e-6, 0));
  const auto c = Tensor<TypeParam, 3>::full(Shape{2, 1, 2}, 2.f);
  const auto d = Tensor<TypeParam, 3>::zeros(Shape{2, 1, 2});
  mse.forward(c, d, Reduction::Sum).into_data().assert_eq(TensorData::from({16.f}));
}

TYPED_TEST(MseLossTest, EmptyMeanIsNan) {
  const auto e = Tensor<TypeParam, 2>::zeros(Shape{0, 3});
  EXPECT_TRUE(std::isnan(MseLoss().forward(e, e).into_scalar()));
  EXPECT_EQ(MseLoss().forward(e, e, Reduction::Sum).into_scalar(), 0.f);
}

TEST(MseLossGradTest, GradientIsTwiceTheDifferenceOverTheCount) {
  const auto logits = Tensor<AD, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}).require_grad();
  const auto targets = Tensor<AD, 2>::from_data({{2.f, 1.f}, {3.f, 2.f}}).require_grad();
  const auto grads = MseLoss().forward(logits, targets).backward();
  // 2·(x - y)/4
  logits.grad(grads)->to_data().assert_eq(TensorData::from({{-0.5f, 0.5f}, {0.f, 1.f}}));
  targets.grad(grads)->to_data().assert_eq(TensorData::from({{0.5f, -0.5f}, {0.f, -1.f}}));
  const auto sum_grads = MseLoss().forward(logits, targets, Reduction::Sum).backward();
  logits.grad(sum_grads)->to_data().assert_eq(TensorData::from({{-2.f, 2.f}, {0.f, 4.f}}));
}

TEST(MseLossGradcheck, BothInputsAndReductions) {
  test::Sampler rng(11);
  const auto x = rng.uniform<2>(Shape{3, 4}, -2, 2);
  const auto y = rng.uniform<2>(Shape{3, 4}, -2, 2);
  EXPECT_TRUE(test::gradcheck(
      "mse mean", [](Tensor<AD, 2> a, Tensor<AD, 2> b) { return MseLoss().forward(a, b); }, x, y));
  EXPECT_TRUE(test::gradcheck(
      "mse sum",
      [](Tensor<AD, 2> a, Tensor<AD, 2> b) { return MseLoss().forward(a, b, Reduction::Sum); }, x,
      y));
  EXPECT_TRUE(test::gradcheck(
      "mse none",
      [](Tensor<AD, 2> a, Tensor<AD, 2> b) { return MseLoss().forward_no_reduction(a, b); }, x, y));
}

TEST(MseLossErrors, ShapesMustBeEqual) {
  const auto a = Tensor<Cpu, 2>::zeros(Shape{4, 1});
  const auto b = Tensor<Cpu, 2>::zeros(Shape{4, 3});
  EXPECT_THAT([&] { MseLoss().forward(a, b); },
              ThrowsMessage<ShapeError>(
                  "MseLoss::forward: logits [4, 1] and targets [4, 3] differ in shape"));
  EXPECT_THAT([&] { MseLoss().forward_no_reduction(b, a); },
              ThrowsMessage<ShapeError>(
                  "MseLoss::forward: logits [4, 3] and targets [4, 1] differ in shape"));
}

TEST(MseLossTest, Prints) {
  std::ostringstream out;
  out << MseLoss();
  EXPECT_EQ(out.str(), "MseLoss");
}

}  // namespace
}  // namespace kiln
