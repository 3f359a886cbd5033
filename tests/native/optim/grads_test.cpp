// GradientsParams (from_grads / from_module keyed by ParamId, get / remove / insert, rank
// checks) and GradientsAccumulator (sums over several backward passes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"
#include "optim/models.hpp"

namespace kiln {
namespace {

using namespace optim;
using test::AD;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::ThrowsMessage;
using testing::UnorderedElementsAre;

test::Pair<AD> make_pair() {
  test::Pair<AD> m;
  m.weight = Param<Tensor<AD, 2>>(test::mat(2, 3, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  m.bias = Param<Tensor<AD, 1>>(test::vec({0.f, 0.f, 0.f}));
  return m;
}

TEST(GradientsParams, FromGradsKeysEveryGradientByParamId) {
  const auto m = make_pair();
  auto grads = test::grads_for(m, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {-1.f, 0.f, 1.f});
  EXPECT_EQ(grads.len(), 2u);
  EXPECT_FALSE(grads.is_empty());
  EXPECT_THAT(grads.ids(), UnorderedElementsAre(m.weight.id(), m.bias.id()));
  const auto w = grads.get<2>(m.weight.id());
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->shape(), (Shape{2, 3}));
  EXPECT_THAT(w->to_data().to_vec<float>(), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
  EXPECT_EQ(grads.len(), 2u) << "get keeps the gradient";
  const auto b = grads.remove<1>(m.bias.id());
  EXPECT_THAT(b->to_data().to_vec<float>(), ElementsAre(-1.f, 0.f, 1.f));
  EXPECT_EQ(grads.len(), 1u);
  EXPECT_FALSE(grads.contains(m.bias.id()));
  EXPECT_FALSE(grads.remove<1>(m.bias.id()).has_value());
}

TEST(GradientsParams, ParametersOffTheLossPathOrFrozenGetNoEntry) {
  auto m = make_pair();
  // The loss does not use the bias.
  auto only_weight = GradientsParams<AD>::from_grads(
      test::dot(m.weight, test::mat(2, 3, std::vector<float>(6, 1.f))).backward(), m);
  EXPECT_EQ(only_weight.len(), 1u);
  EXPECT_FALSE(only_weight.contains(m.bias.id()));

  m.weight.set_require_grad(false);
  auto only_bias = test::grads_for(m, std::vector<float>(6, 1.f), {1.f, 1.f, 1.f});
  EXPECT_THAT(only_bias.ids(), ElementsAre(m.bias.id()));
}

TEST(GradientsParams, FromModuleTakesOnlyThatModulesGradients) {
  const auto first = test::make_vec1({1.f, 2.f});
  const auto second = test::make_vec1({3.f});
  auto grads = (test::dot(first.p, test::vec({5.f, 6.f})) + test::dot(second.p, test::vec({7.f})))
                   .backward();
  auto g1 = GradientsParams<AD>::from_module(grads, first);
  auto g2 = GradientsParams<AD>::from_module(grads, second);
  EXPECT_THAT(g1.ids(), ElementsAre(first.p.id()));
  EXPECT_THAT(g2.get<1>(second.p.id())->to_data().to_vec<float>(), ElementsAre(7.f));
  EXPECT_TRUE(grads.empty()) << "both gradients were taken out of B::Gradients";
}

TEST(GradientsParams, InsertReplaces) {
  GradientsParams<AD> grads;
  const auto id = ParamId::next();
  grads.insert(id, Tensor<Cpu, 1>::ones(Shape{2}));
  grads.insert(id, Tensor<Cpu, 1>::zeros(Shape{2}));
  EXPECT_EQ(grads.len(), 1u);
  EXPECT_THAT(grads.get<1>(id)->to_data().to_vec<float>(), ElementsAre(0.f, 0.f));
}

TEST(GradientsParams, WrongRankThrowsAndKeepsTheEntry) {
  GradientsParams<AD> grads;
  const auto id = ParamId::next();
  grads.insert(id, Tensor<Cpu, 2>::ones(Shape{2, 3}));
  EXPECT_THAT(
      [&] { (void)grads.get<1>(id); },
      ThrowsMessage<RankError>(HasSubstr("GradientsParams::get: the gradient of parameter")));
  EXPECT_THAT([&] { (void)grads.remove<3>(id); },
              ThrowsMessage<RankError>(HasSubstr("has rank 2 (shape [2, 3]), asked for rank 3")));
  EXPECT_TRUE(grads.contains(id));
}

TEST(GradientsAccumulator, SumsSeveralBackwardPasses) {
  const auto m = make_pair();
  GradientsAccumulator<AD> accumulator;
  accumulator.accumulate(m, test::grads_for(m, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {1.f, 1.f, 1.f}));
  accumulator.accumulate(
      m, test::grads_for(m, {10.f, 20.f, 30.f, 40.f, 50.f, 60.f}, {0.5f, 0.f, -1.f}));
  // A pass where only the weight has a gradient.
  accumulator.accumulate(
      m, GradientsParams<AD>::from_grads(
             test::dot(m.weight, test::mat(2, 3, std::vector<float>(6, 100.f))).backward(), m));
  auto sums = accumulator.grads();
  EXPECT_THAT(sums.get<2>(m.weight.id())->to_data().to_vec<float>(),
              ElementsAre(111.f, 122.f, 133.f, 144.f, 155.f, 166.f));
  EXPECT_THAT(sums.get<1>(m.bias.id())->to_data().to_vec<float>(), ElementsAre(1.5f, 1.f, 0.f));
  EXPECT_TRUE(accumulator.grads().is_empty()) << "grads() resets the accumulator";
}

TEST(GradientsAccumulator, DropsGradientsOfOtherModules) {
  const auto m = test::make_vec1({1.f});
  GradientsParams<AD> grads = test::grads_for(m, {2.f});
  grads.insert(ParamId::next(), Tensor<Cpu, 1>::ones(Shape{4}));
  GradientsAccumulator<AD> accumulator;
  accumulator.accumulate(m, std::move(grads));
  EXPECT_EQ(accumulator.grads().len(), 1u);
}

TEST(GradientsAccumulator, ShapeMismatchThrows) {
  const auto m = test::make_vec1({1.f, 2.f});
  GradientsAccumulator<AD> accumulator;
  accumulator.accumulate(m, test::grads_for(m, {1.f, 1.f}));
  GradientsParams<AD> odd;
  odd.insert(m.p.id(), Tensor<Cpu, 1>::ones(Shape{3}));
  EXPECT_THAT([&] { accumulator.accumulate(m, std::move(odd)); },
              ThrowsMessage<ShapeError>(HasSubstr("has shape [3], the accumulated one [2]")));
}

}  // namespace
}  // namespace kiln
