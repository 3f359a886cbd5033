// train::deferred_train_step and settle_deferred (kiln/train/deferred_step.hpp), run here on
// the Cpu backend (the webgpu engine runs the same code on Wgpu): finite steps apply exactly
// the optimizer's update (by hand for SGD; as train_step's, itself checked by hand, for Adam),
// and a step whose loss, gradient or update is not finite is refused on the device together
// with every step after it until the status is read; settle_deferred then names the first
// refused step and check, and the model, the moments and Adam's step counts are those of the
// step before it, so that training continues as if the refused steps had never been tried.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "kiln/train/deferred_step.hpp"
#include "optim/models.hpp"

namespace kiln::train {
namespace {

using module::Param;
using test::AD;
using test::values;
using testing::ElementsAre;
using testing::FloatEq;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

struct LossItem {
  Tensor<AD, 1> loss;
};

/// loss = Σ weight·g_weight + Σ bias·g_bias: the gradients are exactly g (no rounding).
struct Target {
  std::vector<float> g_weight;  // [2, 3]
  std::vector<float> g_bias;    // [3]
};

auto dot_loss(const Target& t) {
  return [t](const test::Pair<AD>& m) {
    return LossItem{test::dot(m.weight, test::mat(2, 3, t.g_weight)) +
                    test::dot(m.bias, test::vec(t.g_bias))};
  };
}

test::Pair<AD> make_pair() {
  test::Pair<AD> m;
  m.weight = Param<Tensor<AD, 2>>(test::mat(2, 3, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  m.bias = Param<Tensor<AD, 1>>(test::vec({1.f, 2.f, 3.f}));
  return m;
}

const Target kA{{1.f, -1.f, 2.f, 0.f, 0.5f, 10.f}, {1.f, 2.f, 3.f}};
const Target kB{{0.5f, 0.5f, -0.5f, 1.f, 2.f, -3.f}, {-1.f, 0.f, 1.f}};
const Target kNaNGrad{{1.f, kNaN, 1.f, 1.f, 1.f, 1.f}, {1.f, 1.f, 1.f}};

/// The status read back, as the JS Learner reads it.
std::vector<float> read(const DeferredGuard<Cpu>& guard) {
  return Cpu::FloatOps::into_data(guard.status({})).to_vec<float>();
}

TEST(DeferredStep, FiniteStepsAreTheOptimizersStepsByHand) {
  // SGD lr 0.1 twice: p - 0.1·gA - 0.1·gB.
  test::Pair<AD> model = make_pair();
  auto sgd = optim::SgdConfig().init<AD>();
  DeferredGuard<Cpu> guard;
  const LossItem first = deferred_train_step(model, sgd, 0.1, dot_loss(kA), guard, {"Test", 1, 1});
  (void)deferred_train_step(model, sgd, 0.1, dot_loss(kB), guard, {"Test", 1, 2});
  // loss of step 1 = 1 - 2 + 6 + 0 + 2.5 + 60 + (1 + 4 + 9) = 81.5 (weights before it)
  EXPECT_FLOAT_EQ(first.loss.into_scalar(), 81.5f);
  EXPECT_THAT(values(model.weight),
              ElementsAre(FloatEq(1.f - 0.1f - 0.05f), FloatEq(2.f + 0.1f - 0.05f),
                          FloatEq(3.f - 0.2f + 0.05f), FloatEq(4.f - 0.f - 0.1f),
                          FloatEq(5.f - 0.05f - 0.2f), FloatEq(6.f - 1.f + 0.3f)));
  EXPECT_THAT(values(model.bias), ElementsAre(FloatEq(1.f - 0.1f + 0.1f), FloatEq(2.f - 0.2f),
                                              FloatEq(3.f - 0.3f - 0.1f)));
  EXPECT_EQ(guard.pending(), 2u);
  EXPECT_THAT(read(guard), ElementsAre(1.f, 0.f, 0.f, 0.f));
  EXPECT_FALSE(settle_deferred(sgd, guard, read(guard)).has_value());
  EXPECT_EQ(guard.pending(), 0u);
}

TEST(DeferredStep, AdamStepsEqualTrainStepsAndARefusedStepRewindsEverything) {
  // Run A (deferred): steps kA, kB, then kNaNGrad (refused), kA (refused: after the failure),
  // then the status is read. Run B (train_step): kA, kB. Both then step kB once more.
  test::Pair<AD> a = make_pair();
  auto adam_a = optim::AdamConfig().init<AD>();
  DeferredGuard<Cpu> guard;
  for (const Target* t : {&kA, &kB, &kNaNGrad, &kA}) {
    (void)deferred_train_step(a, adam_a, 0.01, dot_loss(*t), guard,
                              {"Learner.fit", 2, static_cast<std::int64_t>(guard.pending() + 1)});
  }
  const std::vector<float> status = read(guard);
  EXPECT_EQ(status[0], 0.f);
  EXPECT_EQ(status[1], 2.f);  // the third pending step
  // kNaNGrad's NaN multiplies a weight: the loss is NaN, and it is checked first (check 0).
  EXPECT_EQ(status[2], 0.f);
  const auto failure = settle_deferred(adam_a, guard, status);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->what, "loss is NaN");
  EXPECT_EQ(failure->step, 2u);
  EXPECT_EQ(failure->skipped, 2u);
  EXPECT_EQ(failure->epoch, 2);
  EXPECT_EQ(failure->batch, 3);

  test::Pair<AD> b = make_pair();
  auto adam_b = optim::AdamConfig().init<AD>();
  (void)train_step(b, adam_b, 0.01, dot_loss(kA), StepPosition{"B", 1, 1});
  (void)train_step(b, adam_b, 0.01, dot_loss(kB), StepPosition{"B", 1, 2});
  EXPECT_EQ(values(a.weight), values(b.weight));
  EXPECT_EQ(values(a.bias), values(b.bias));
  EXPECT_EQ(adam_a.to_named_record(a), adam_b.to_named_record(b));  // moments, time == 2
  EXPECT_EQ(std::get<std::int64_t>(adam_a.to_named_record(a).at("weight.time")), 2);

  (void)deferred_train_step(a, adam_a, 0.01, dot_loss(kB), guard, {"Learner.fit", 2, 5});
  (void)train_step(b, adam_b, 0.01, dot_loss(kB), StepPosition{"B", 1, 3});
  EXPECT_FALSE(settle_deferred(adam_a, guard, read(guard)).has_value());
  EXPECT_EQ(values(a.weight), values(b.weight));
  EXPECT_EQ(adam_a.to_named_record(a), adam_b.to_named_record(b));
}

TEST(DeferredStep, ANonFiniteGradientOnTheFirstStepDropsTheStatesItCreated) {
  // loss = Σ weight + Σ sqrt(bias - [1, 0, 0]): finite, d/dbias[0] = inf. SGD with momentum:
  // the refused first step must leave no momentum buffer (the next step starts one afresh).
  test::Pair<AD> model = make_pair();
  auto sgd = optim::SgdConfig()
                 .with_momentum(optim::MomentumConfig().with_momentum(0.9).with_dampening(0.5))
                 .init<AD>();
  DeferredGuard<Cpu> guard;
  auto inf_grad = [](const test::Pair<AD>& m) {
    return LossItem{m.weight.val().sum() + (m.bias.val() - test::vec({1.f, 0.f, 0.f})).sqrt().sum()};
  };
  (void)deferred_train_step(model, sgd, 0.1, inf_grad, guard, {"Loop", 0, 7});
  const auto failure = settle_deferred(sgd, guard, read(guard));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->what, "the gradient of parameter bias is not finite");
  EXPECT_THROW(detail::throw_refused_step(failure->at(), failure->what), NonFiniteError);
  EXPECT_THAT(values(model.weight), ElementsAre(1.f, 2.f, 3.f, 4.f, 5.f, 6.f));
  EXPECT_THAT(values(model.bias), ElementsAre(1.f, 2.f, 3.f));
  EXPECT_FALSE(sgd.has_state(model.weight.id()));
  EXPECT_FALSE(sgd.has_state(model.bias.id()));
  // The next step starts the buffer with the gradient itself (PyTorch: buf = grad on the
  // first step, no dampening): p - 0.1·g.
  (void)deferred_train_step(model, sgd, 0.1, dot_loss(kA), guard, {"Loop", 0, 8});
  EXPECT_FALSE(settle_deferred(sgd, guard, read(guard)).has_value());
  EXPECT_THAT(values(model.bias), ElementsAre(FloatEq(0.9f), FloatEq(1.8f), FloatEq(2.7f)));
}

TEST(DeferredStep, AnUpdateThatOverflowsIsRefusedAndNamed) {
  // SGD lr 1e30, gradients 1e10: the weights overflow to -inf; loss and gradients are finite.
  test::Pair<AD> model = make_pair();
  auto sgd = optim::SgdConfig().init<AD>();
  DeferredGuard<Cpu> guard;
  const Target big{std::vector<float>(6, 1e10f), {0.f, 0.f, 0.f}};
  (void)deferred_train_step(model, sgd, 0.5, dot_loss(kA), guard, {"Test", 1, 1});
  (void)deferred_train_step(model, sgd, 1e30, dot_loss(big), guard, {"Test", 1, 2});
  const auto status = read(guard);
  EXPECT_EQ(status[1], 1.f);
  EXPECT_EQ(status[2], 3.f);  // loss, 2 gradients, then the weight's update
  const auto failure = settle_deferred(sgd, guard, status);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->what, "the update of parameter weight with learning rate 1e+30 is not finite");
  EXPECT_EQ(failure->skipped, 1u);
  // The first step was applied: bias - 0.5·gA.
  EXPECT_THAT(values(model.bias), ElementsAre(FloatEq(0.5f), FloatEq(1.f), FloatEq(1.5f)));
  EXPECT_TRUE(std::isfinite(values(model.weight)[0]));
}

TEST(DeferredStep, TheLossValueOfAnInfiniteLossIsReported) {
  test::Pair<AD> model = make_pair();
  auto sgd = optim::SgdConfig().init<AD>();
  DeferredGuard<Cpu> guard;
  const Target inf{{kInf, 0.f, 0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f}};
  (void)deferred_train_step(model, sgd, 0.1, dot_loss(inf), guard, {"Test", 1, 1});
  const auto failure = settle_deferred(sgd, guard, read(guard));
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->what, "loss is inf");
}

TEST(DeferredStep, AStatusOfAnotherGuardIsRefusedAndChangesNothing) {
  test::Pair<AD> model = make_pair();
  auto sgd = optim::SgdConfig().init<AD>();
  DeferredGuard<Cpu> guard;
  (void)deferred_train_step(model, sgd, 0.1, dot_loss(kA), guard, {"Test", 1, 1});
  const std::vector<float> wrong_size{0.f, 0.f};
  EXPECT_THROW((void)settle_deferred(sgd, guard, wrong_size), ValueError);
  const std::vector<float> wrong_step{0.f, 5.f, 0.f, 0.f};
  EXPECT_THROW((void)settle_deferred(sgd, guard, wrong_step), ValueError);
  EXPECT_EQ(guard.pending(), 1u);
  EXPECT_THROW(
      (void)deferred_train_step(model, sgd, -1.0, dot_loss(kA), guard, {"Test", 1, 2}),
      ValueError);
  EXPECT_EQ(guard.pending(), 1u);
}

}  // namespace
}  // namespace kiln::train
