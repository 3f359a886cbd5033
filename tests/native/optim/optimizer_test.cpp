// OptimizerAdaptor::step on modules: which parameters it updates (trainable ones with a
// gradient) and which it leaves alone (no gradient, frozen, Int), what the updated parameters
// are (tracked leaves, same ids), where the state lives (by ParamId, across valid() /
// from_inner() and records), gradient clipping from the config, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kiln/kiln.hpp"
#include "optim/models.hpp"
#include "support/cases.hpp"

namespace kiln {
namespace {

using namespace optim;
using test::AD;
using test::values;
using testing::ElementsAre;
using testing::FloatEq;
using testing::FloatNear;
using testing::HasSubstr;
using testing::ThrowsMessage;

test::Mixed<AD> make_mixed() {
  test::Mixed<AD> m;
  m.a = Param<Tensor<AD, 1>>(test::vec({1.f, 2.f}));
  m.b = Param<Tensor<AD, 2>>(test::mat(2, 2, {1.f, 1.f, 1.f, 1.f}));
  m.inner.p = Param<Tensor<AD, 1>>(test::vec({0.f, 0.f, 0.f}));
  m.counts = Param<Tensor<AD, 1, Int>>(Tensor<AD, 1, Int>::from_ints({3, 4}));
  return m;
}

TEST(OptimizerStep, PlainSgdByHand) {
  auto optim = SgdConfig().init<AD>();
  auto model = test::make_vec1({1.f, 2.f, 3.f});
  model = optim.step(0.1, model, test::grads_for(model, {0.5f, -1.f, 2.f}));
  // p - lr·g = [1 - 0.05, 2 + 0.1, 3 - 0.2]
  EXPECT_THAT(values(model.p), ElementsAre(FloatEq(0.95f), FloatEq(2.1f), FloatEq(2.8f)));
}

TEST(OptimizerStep, ParametersWithoutGradientsAreUnchangedAndKeepTheirState) {
  // SGD with momentum 0.9, dampening 0.5, lr 0.1, so that the state is visible by hand.
  auto optim =
      SgdConfig().with_momentum(MomentumConfig().with_momentum(0.9).with_dampening(0.5)).init<AD>();
  auto model = make_mixed();
  const auto b_id = model.b->id();

  // Step 1: gradients for a ([1, 1]) and inner.p ([1, 2, 3]) only.
  auto loss = test::dot(model.a, test::vec({1.f, 1.f})) +
              test::dot(model.inner.p, test::vec({1.f, 2.f, 3.f}));
  model = optim.step(0.1, model, GradientsParams<AD>::from_grads(loss.backward(), model));
  EXPECT_THAT(values(model.a), ElementsAre(FloatEq(0.9f), FloatEq(1.9f)));
  EXPECT_THAT(values(*model.b), ElementsAre(1.f, 1.f, 1.f, 1.f));
  EXPECT_EQ(model.b->id(), b_id);
  EXPECT_TRUE(optim.has_state(model.a.id()));
  EXPECT_TRUE(optim.has_state(model.inner.p.id()));
  EXPECT_FALSE(optim.has_state(b_id));
  EXPECT_EQ(model.counts.val().to_data().to_vec<std::int32_t>(), (std::vector<std::int32_t>{3, 4}));

  // Step 2: a gradient for b only; a keeps its value and its momentum buffer (= [1, 1]).
  loss = test::dot(*model.b, test::mat(2, 2, {1.f, -1.f, 2.f, 0.f}));
  model = optim.step(0.1, model, GradientsParams<AD>::from_grads(loss.backward(), model));
  EXPECT_THAT(values(model.a), ElementsAre(FloatEq(0.9f), FloatEq(1.9f)));
  // b's first step: buf = g, b = 1 - 0.1·g.
  EXPECT_THAT(values(*model.b), ElementsAre(FloatEq(0.9f), FloatEq(1.1f), FloatEq(0.8f), 1.f));

  // Step 3: a again with g = [2, 0]: buf = 0.9·[1, 1] + 0.5·[2, 0] = [1.9, 0.9].
  loss = test::dot(model.a, test::vec({2.f, 0.f}));
  model = optim.step(0.1, model, GradientsParams<AD>::from_grads(loss.backward(), model));
  EXPECT_THAT(values(model.a),
              ElementsAre(FloatNear(0.9f - 0.19f, 1e-6f), FloatNear(1.9f - 0.09f, 1e-6f)));
}

TEST(OptimizerStep, FrozenParametersAreNotUpdatedEvenWithAGradient) {
  auto optim = AdamConfig().init<AD>();
  test::Pair<AD> model;
  model.weight = Param<Tensor<AD, 2>>(test::mat(2, 3, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  model.bias = Param<Tensor<AD, 1>>(test::vec({1.f, 1.f, 1.f}));
  model.bias.set_require_grad(false);
  auto grads = test::grads_for(model, std::vector<float>(6, 1.f), {1.f, 1.f, 1.f});
  EXPECT_EQ(grads.len(), 1u) << "backward computes no gradient for a frozen parameter";
  // A gradient supplied by hand for the frozen bias is ignored too.
  grads.insert(model.bias.id(), Tensor<Cpu, 1>::ones(Shape{3}));
  model = optim.step(0.1, model, std::move(grads));
  EXPECT_THAT(values(model.bias), ElementsAre(1.f, 1.f, 1.f));
  EXPECT_FALSE(model.bias.is_require_grad());
  EXPECT_FALSE(optim.has_state(model.bias.id()));
  EXPECT_NE(values(model.weight), (std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
}

TEST(OptimizerStep, UpdatedParametersAreTrackedLeavesWithTheSameIds) {
  auto optim = SgdConfig().init<AD>();
  auto model = test::make_vec1({1.f, 2.f});
  const auto id = model.p.id();
  model = optim.step(1.0, model, test::grads_for(model, {1.f, 1.f}));
  EXPECT_EQ(model.p.id(), id);
  EXPECT_TRUE(model.p.is_require_grad());
  EXPECT_TRUE(model.p.val().is_require_grad());
  // The new leaf takes part in the next backward.
  auto grads = test::grads_for(model, {3.f, 4.f});
  EXPECT_THAT(grads.get<1>(id)->to_data().to_vec<float>(), ElementsAre(3.f, 4.f));
}

TEST(OptimizerStep, StepDoesNotWriteIntoTheOldModel) {
  auto optim = SgdConfig().init<AD>();
  const auto before = test::make_vec1({1.f, 2.f});
  const auto kept = before.clone();
  const auto after = optim.step(1.0, before, test::grads_for(before, {1.f, 1.f}));
  EXPECT_THAT(values(kept.p), ElementsAre(1.f, 2.f));
  EXPECT_THAT(values(after.p), ElementsAre(0.f, 1.f));
}

TEST(OptimizerStep, StateFollowsParamIdThroughValidAndFromInner) {
  // The momentum case, with the module taken to Cpu and back between steps 1 and 2.
  const auto c = test::load_case("sgd_momentum_dampening_weight_decay");
  auto optim = SgdConfig()
                   .with_momentum(MomentumConfig().with_momentum(0.9).with_dampening(0.5))
                   .with_weight_decay(WeightDecayConfig(0.1))
                   .init<AD>();
  const auto g = c.input("grads").to_vec<float>();
  const auto expected = c.expected("params_after_each_step").to_vec<float>();
  auto model = test::make_vec1(c.input("p0").to_vec<float>());
  for (int step = 0; step < 3; ++step) {
    model = optim.step(0.1, model,
                       test::grads_for(model, {g[3 * step], g[3 * step + 1], g[3 * step + 2]}));
    const test::Vec1<Cpu> inference = model.valid();
    model = inference.from_inner<AD>();
  }
  model.p.val().to_data().assert_approx_eq(
      TensorData(Shape{3}, std::vector<float>(expected.begin() + 6, expected.end())),
      c.tolerance());
}

TEST(OptimizerStep, RecordCarriesTheStateToAnotherOptimizer) {
  const auto config = AdamConfig().with_epsilon(1e-8);
  auto first = config.init<AD>();
  auto model = test::make_vec1({1.f, -1.f});
  model = first.step(0.01, model, test::grads_for(model, {1.f, 2.f}));
  const auto record = first.to_record();
  ASSERT_EQ(record.size(), 1u);
  EXPECT_EQ(record.at(model.p.id()).time, 1);

  auto second = config.init<AD>().load_record(record);
  auto fresh = config.init<AD>();
  const auto a = first.step(0.01, model, test::grads_for(model, {-3.f, 0.5f}));
  const auto b = second.step(0.01, model, test::grads_for(model, {-3.f, 0.5f}));
  const auto c = fresh.step(0.01, model, test::grads_for(model, {-3.f, 0.5f}));
  EXPECT_EQ(values(a.p), values(b.p));
  EXPECT_NE(values(a.p), values(c.p)) << "without the record, Adam restarts at t = 1";
}

TEST(OptimizerStep, ZeroLearningRateChangesNothingButTheState) {
  auto optim = SgdConfig().with_momentum(MomentumConfig()).init<AD>();
  auto model = test::make_vec1({1.f, 2.f});
  model = optim.step(0.0, model, test::grads_for(model, {5.f, 5.f}));
  EXPECT_THAT(values(model.p), ElementsAre(1.f, 2.f));
  EXPECT_TRUE(optim.has_state(model.p.id()));
}

TEST(OptimizerStep, ValueClippingFromTheConfig) {
  auto optim = SgdConfig().with_gradient_clipping(GradientClippingConfig::value(0.5)).init<AD>();
  EXPECT_TRUE(optim.has_gradient_clipping());
  auto model = test::make_vec1({0.f, 0.f, 0.f});
  model = optim.step(1.0, model, test::grads_for(model, {2.f, -3.f, 0.1f}));
  EXPECT_THAT(values(model.p), ElementsAre(-0.5f, 0.5f, FloatEq(-0.1f)));
}

TEST(OptimizerStep, WithGradClippingAddsClippingToABuiltOptimizer) {
  auto optim = SgdConfig().init<AD>().with_grad_clipping(GradientClipping::norm(1.0));
  auto model = test::make_vec1({0.f, 0.f});
  model = optim.step(1.0, model, test::grads_for(model, {3.f, 4.f}));  // norm 5 -> 1
  EXPECT_THAT(values(model.p), ElementsAre(FloatNear(-0.6f, 1e-6f), FloatNear(-0.8f, 1e-6f)));
}

TEST(OptimizerStepErrors, NegativeOrNonFiniteLearningRate) {
  auto optim = SgdConfig().init<AD>();
  const auto model = test::make_vec1({1.f});
  EXPECT_THAT([&] { (void)optim.step(-0.1, model, test::grads_for(model, {1.f})); },
              ThrowsMessage<ValueError>(
                  HasSubstr("Optimizer::step: learning rate must be finite and >= 0, got -0.1")));
  EXPECT_THAT(
      [&] {
        (void)optim.step(std::numeric_limits<double>::quiet_NaN(), model,
                         test::grads_for(model, {1.f}));
      },
      ThrowsMessage<ValueError>(HasSubstr("got nan")));
}

TEST(OptimizerStepErrors, GradientOfTheWrongShapeOrRank) {
  auto optim = SgdConfig().init<AD>();
  const auto model = test::make_vec1({1.f, 2.f, 3.f});
  GradientsParams<AD> wrong_shape;
  wrong_shape.insert(model.p.id(), Tensor<Cpu, 1>::ones(Shape{2}));
  EXPECT_THAT([&] { (void)optim.step(0.1, model, std::move(wrong_shape)); },
              ThrowsMessage<ShapeError>(HasSubstr("has shape [2], the parameter [3]")));
  GradientsParams<AD> wrong_rank;
  wrong_rank.insert(model.p.id(), Tensor<Cpu, 2>::ones(Shape{1, 3}));
  EXPECT_THAT([&] { (void)optim.step(0.1, model, std::move(wrong_rank)); },
              ThrowsMessage<RankError>(HasSubstr("has rank 2 (shape [1, 3]), asked for rank 1")));
}

}  // namespace
}  // namespace kiln
