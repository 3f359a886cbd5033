// train::train_step (kiln/train/step.hpp): a finite step is the optimizer's own step (by
// hand), and a step whose loss, a gradient or an updated parameter is not finite is refused
// with a NonFiniteError naming it and its position, leaving the model's weights and the
// optimizer's state (Adam's moments and step counts) as they were, so that the next step
// continues exactly as if the refused one had never been tried.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "optim/models.hpp"

namespace kiln::train {
namespace {

using module::Param;
using test::AD;
using test::values;
using testing::ElementsAre;
using testing::FloatEq;
using testing::HasSubstr;
using testing::ThrowsMessage;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// A step's item: only the loss.
struct LossItem {
  using backend_type = AD;
  Tensor<AD, 1> loss;
};

/// The gradients a batch asks for: loss = Σ weight·g_weight + Σ bias·g_bias has exactly
/// these gradients (no rounding), so every update is computable by hand.
struct Target {
  std::vector<float> g_weight;  // [2, 3]
  std::vector<float> g_bias;    // [3]
};

LossItem dot_loss(const test::Pair<AD>& m, const Target& t) {
  return {test::dot(m.weight, test::mat(2, 3, t.g_weight)) +
          test::dot(m.bias, test::vec(t.g_bias))};
}

/// test::Pair with a TrainStep (forward, loss and backward in train_step).
template <Backend B>
struct Scored {
  test::Pair<B> pair;
  KILN_MODULE(Scored, pair)

  TrainOutput<LossItem> train_step(const Target& t) const {
    LossItem item = dot_loss(pair, t);
    auto grads = item.loss.backward();
    return {*this, std::move(grads), std::move(item)};
  }
};
static_assert(TrainStep<Scored<AD>, Target>);

test::Pair<AD> make_pair() {
  test::Pair<AD> m;
  m.weight = Param<Tensor<AD, 2>>(test::mat(2, 3, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  m.bias = Param<Tensor<AD, 1>>(test::vec({1.f, 2.f, 3.f}));
  return m;
}

const Target kOnes{{1.f, 1.f, 1.f, 1.f, 1.f, 1.f}, {1.f, 1.f, 1.f}};

TEST(TrainStep, AFiniteStepIsTheOptimizersStepByHand) {
  // TrainStep form: SGD lr 0.1, p - 0.1·g.
  Scored<AD> model{make_pair()};
  auto sgd = optim::SgdConfig().init<AD>();
  const Target t{{1.f, -1.f, 2.f, 0.f, 0.5f, 10.f}, {1.f, 2.f, 3.f}};
  const LossItem item = train_step(model, sgd, 0.1, t, StepPosition{"Test", 1, 1});
  // loss = 1 - 2 + 6 + 0 + 2.5 + 60 + (1 + 4 + 9) = 81.5, of the weights before the step
  EXPECT_FLOAT_EQ(item.loss.into_scalar(), 81.5f);
  EXPECT_THAT(values(model.pair.weight), ElementsAre(FloatEq(0.9f), FloatEq(2.1f), FloatEq(2.8f),
                                                     FloatEq(4.f), FloatEq(4.95f), FloatEq(5.f)));
  EXPECT_THAT(values(model.pair.bias), ElementsAre(FloatEq(0.9f), FloatEq(1.8f), FloatEq(2.7f)));

  // Loss-callback form on the bare Pair: the same update.
  test::Pair<AD> pair = make_pair();
  auto sgd2 = optim::SgdConfig().init<AD>();
  (void)train_step(pair, sgd2, 0.1, [&](const test::Pair<AD>& m) { return dot_loss(m, t); },
                   StepPosition{"Test", 1, 1});
  EXPECT_EQ(values(pair.weight), values(model.pair.weight));
  EXPECT_EQ(values(pair.bias), values(model.pair.bias));
}

TEST(TrainStep, ANaNLossIsRefusedAndTheModelIsKept) {
  Scored<AD> model{make_pair()};
  auto sgd = optim::SgdConfig()
                 .with_momentum(optim::MomentumConfig().with_momentum(0.9))
                 .init<AD>();
  const Target nan_target{{1.f, kNaN, 1.f, 1.f, 1.f, 1.f}, {1.f, 1.f, 1.f}};
  EXPECT_THAT([&] { (void)train_step(model, sgd, 0.1, nan_target, StepPosition{"Test", 2, 3}); },
              ThrowsMessage<NonFiniteError>(testing::StrEq(
                  "Test: loss is NaN at epoch 2, batch 3 (the step was not applied: the model is "
                  "that of the previous step)")));
  EXPECT_THAT(values(model.pair.weight), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
  EXPECT_THAT(values(model.pair.bias), ElementsAre(1.f, 2.f, 3.f));
  EXPECT_FALSE(sgd.has_state(model.pair.weight.id()));  // no momentum buffer was started
}

TEST(TrainStep, ANonFiniteGradientIsRefusedAndNamed) {
  // loss = Σ weight + Σ sqrt(bias - [1, 0, 0]): finite (sqrt(0) = 0), but d/dbias[0] =
  // 1 / (2·sqrt(0)) = inf.
  test::Pair<AD> pair = make_pair();
  auto sgd = optim::SgdConfig().init<AD>();
  auto loss_fn = [](const test::Pair<AD>& m) {
    return LossItem{m.weight.val().sum() + (m.bias.val() - test::vec({1.f, 0.f, 0.f})).sqrt().sum()};
  };
  EXPECT_THAT([&] { (void)train_step(pair, sgd, 0.1, loss_fn, StepPosition{"Loop", 0, 7}); },
              ThrowsMessage<NonFiniteError>(testing::StrEq(
                  "Loop: the gradient of parameter bias is not finite (1 inf of 3 values) at "
                  "step 7 (the step was not applied: the model is that of the previous step)")));
  EXPECT_THAT(values(pair.weight), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
  EXPECT_THAT(values(pair.bias), ElementsAre(1.f, 2.f, 3.f));
}

TEST(TrainStep, AnUpdateThatOverflowsIsRefusedAlthoughLossAndGradientsAreFinite) {
  // SGD lr 1e30 with gradients 1e10: weight - 1e40 overflows float32 to -inf; the loss
  // (Σ weight·1e10 + Σ bias·0 = 2.1e11) and the gradients are finite.
  Scored<AD> model{make_pair()};
  auto sgd = optim::SgdConfig().init<AD>();
  const Target big{std::vector<float>(6, 1e10f), {0.f, 0.f, 0.f}};
  EXPECT_THAT([&] { (void)train_step(model, sgd, 1e30, big, StepPosition{"Test", 1, 1}); },
              ThrowsMessage<NonFiniteError>(testing::StrEq(
                  "Test: the update of parameter pair.weight with learning rate 1e+30 is not "
                  "finite (6 -inf of 6 values) at epoch 1, batch 1 (the step was not applied: "
                  "the model is that of the previous step)")));
  EXPECT_THAT(values(model.pair.weight), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
  EXPECT_THAT(values(model.pair.bias), ElementsAre(1.f, 2.f, 3.f));
  // The model still trains: the next (finite) step is applied.
  (void)train_step(model, sgd, 0.5, kOnes, StepPosition{"Test", 1, 2});
  EXPECT_THAT(values(model.pair.bias), ElementsAre(0.5f, 1.5f, 2.5f));
}

TEST(TrainStep, ARefusedAdamStepKeepsTheMomentsAndStepCounts) {
  // Run A: a step, a refused step (lr 1e39: Adam's update is about lr per element, which
  // overflows float32), a step. Run B: the two steps only. Same weights and state.
  const Target second{{0.5f, -1.f, 2.f, 0.25f, 3.f, -4.f}, {1.f, -2.f, 0.5f}};
  auto run = [&](bool with_refused) {
    Scored<AD> model{make_pair()};
    auto adam = optim::AdamConfig().init<AD>();
    (void)train_step(model, adam, 0.1, kOnes, StepPosition{"Test", 1, 1});
    if (with_refused) {
      const auto record = adam.to_named_record(model);
      const auto weight = values(model.pair.weight);
      EXPECT_THAT([&] { (void)train_step(model, adam, 1e39, second, StepPosition{"Test", 1, 2}); },
                  ThrowsMessage<NonFiniteError>(
                      HasSubstr("Test: the update of parameter pair.weight with learning rate "
                                "1e+39 is not finite (")));
      EXPECT_EQ(values(model.pair.weight), weight);
      EXPECT_EQ(adam.to_named_record(model), record);  // moments and time == 1
      EXPECT_EQ(std::get<std::int64_t>(record.at("pair.weight.time")), 1);
    }
    (void)train_step(model, adam, 0.1, second, StepPosition{"Test", 1, 3});
    return std::pair(model, adam.to_named_record(model));
  };
  const auto [a, record_a] = run(true);
  const auto [b, record_b] = run(false);
  EXPECT_EQ(values(a.pair.weight), values(b.pair.weight));
  EXPECT_EQ(values(a.pair.bias), values(b.pair.bias));
  EXPECT_EQ(record_a, record_b);
  EXPECT_EQ(std::get<std::int64_t>(record_a.at("pair.bias.time")), 2);
}

TEST(TrainStep, OtherErrorsAlsoLeaveModelAndOptimizerAsTheyWere) {
  // A negative learning rate: the optimizer throws ValueError from inside its step.
  Scored<AD> model{make_pair()};
  auto adam = optim::AdamConfig().init<AD>();
  (void)train_step(model, adam, 0.1, kOnes, StepPosition{"Test", 1, 1});
  const auto record = adam.to_named_record(model);
  const auto weight = values(model.pair.weight);
  EXPECT_THROW((void)train_step(model, adam, -1.0, kOnes, StepPosition{"Test", 1, 2}), ValueError);
  EXPECT_EQ(values(model.pair.weight), weight);
  EXPECT_EQ(adam.to_named_record(model), record);
}

TEST(TrainStepDetail, NonFiniteCountsReadWell) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v{1.f, kNaN, inf, -inf, kNaN, 0.f};
  const detail::NonFiniteCount c = detail::count_non_finite(v.data(), v.size());
  EXPECT_EQ(c.nan, 2u);
  EXPECT_EQ(c.pos_inf, 1u);
  EXPECT_EQ(c.neg_inf, 1u);
  EXPECT_EQ(detail::describe_count(c), "2 NaN and 1 inf and 1 -inf of 6 values");
  // A sum that overflows from finite elements is not mistaken for a non-finite tensor.
  EXPECT_FALSE(detail::non_finite_elements(Tensor<Cpu, 1>::from_data(
                   TensorData(Shape{2}, std::vector<float>{3e38f, 3e38f}))));
  EXPECT_TRUE(detail::non_finite_elements(Tensor<Cpu, 1>::from_data(
                  TensorData(Shape{2}, std::vector<float>{1.f, kNaN}))));
}

}  // namespace
}  // namespace kiln::train
