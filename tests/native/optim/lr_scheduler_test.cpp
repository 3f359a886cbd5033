// Learning-rate schedulers: sequences computed by hand from Burn's formulas
// (crates/burn-optim/src/lr_scheduler/*.rs), and the config checks.
#include "kiln/optim/lr_scheduler.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/core/error.hpp"

namespace kiln {
namespace {

using namespace optim;
using testing::HasSubstr;
using testing::ThrowsMessage;

static_assert(LrScheduler<ConstantLr> && LrScheduler<StepLrScheduler> &&
              LrScheduler<ExponentialLrScheduler> && LrScheduler<LinearLrScheduler> &&
              LrScheduler<CosineAnnealingLrScheduler> && LrScheduler<NoamLrScheduler>);

template <class S>
void expect_sequence(S scheduler, const std::vector<double>& expected) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(scheduler.step(), expected[i], 1e-12 * std::max(1.0, std::abs(expected[i])))
        << "step " << i;
  }
}

TEST(LrScheduler, Constant) {
  expect_sequence(ConstantLrSchedulerConfig(0.01).init(), {0.01, 0.01, 0.01});
}

TEST(LrScheduler, StepMultipliesByGammaEveryStepSize) {
  expect_sequence(StepLrSchedulerConfig(0.5, 3).init(),  // gamma 0.1 by default
                  {0.5, 0.5, 0.5, 0.05, 0.05, 0.05, 0.005, 0.005});
  expect_sequence(StepLrSchedulerConfig(0.1, 2).with_gamma(2.0).init(), {0.1, 0.1, 0.2, 0.2, 0.4});
}

TEST(LrScheduler, ExponentialStartsAtInitialLr) {
  expect_sequence(ExponentialLrSchedulerConfig(0.8, 0.1).init(), {0.8, 0.08, 0.008, 0.0008});
}

TEST(LrScheduler, LinearReachesFinalLrAfterNumItersThenStays) {
  expect_sequence(LinearLrSchedulerConfig(0.9, 0.5, 4).init(), {0.9, 0.8, 0.7, 0.6, 0.5, 0.5});
  expect_sequence(LinearLrSchedulerConfig(0.01, 0.04, 3).init(), {0.01, 0.02, 0.03, 0.04, 0.04});
}

TEST(LrScheduler, CosineAnnealingWithRestart) {
  // num_iters 2: cos(0), cos(π/2), cos(π), then the restart.
  expect_sequence(CosineAnnealingLrSchedulerConfig(0.5, 2).with_min_lr(0.1).init(),
                  {0.5, 0.3, 0.1, 0.5, 0.3});
  // num_iters 4, min 0: (1 + cos(kπ/4)) / 2.
  const double r = std::sqrt(0.5);
  expect_sequence(CosineAnnealingLrSchedulerConfig(1.0, 4).init(),
                  {1.0, (1 + r) / 2, 0.5, (1 - r) / 2, 0.0, 1.0});
}

TEST(LrScheduler, NoamWarmsUpThenDecays) {
  // factor 2, model_size 16: 2 / 4 · min(n^-0.5, n / 4^1.5) = 0.5 · min(n^-0.5, n / 8).
  auto s = NoamLrSchedulerConfig(2.0).with_warmup_steps(4).with_model_size(16).init();
  std::vector<double> got;
  for (int n = 1; n <= 16; ++n) got.push_back(s.step());
  EXPECT_DOUBLE_EQ(got[0], 0.0625);  // n = 1: 1/8
  EXPECT_DOUBLE_EQ(got[1], 0.125);   // n = 2: 2/8
  EXPECT_DOUBLE_EQ(got[3], 0.25);    // n = 4: both 1/2 (the peak)
  EXPECT_DOUBLE_EQ(got[4], 0.5 / std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(got[15], 0.125);  // n = 16: 16^-0.5 / 2
  const NoamLrSchedulerConfig defaults(1.0);
  EXPECT_EQ(defaults.warmup_steps, 4000);
  EXPECT_EQ(defaults.model_size, 512);
}

TEST(LrScheduler, ConfigsRoundTripThroughJson) {
  const auto c = CosineAnnealingLrSchedulerConfig(0.01, 100).with_min_lr(1e-4);
  EXPECT_EQ(c.to_json().dump(), R"({"initial_lr":0.01,"min_lr":0.0001,"num_iters":100})");
  EXPECT_EQ(CosineAnnealingLrSchedulerConfig::from_json_string(c.to_json_string()), c);
  EXPECT_EQ(StepLrSchedulerConfig::from_json_string(R"({"initial_lr": 0.1, "step_size": 5})"),
            StepLrSchedulerConfig(0.1, 5));
}

TEST(LrSchedulerErrors, ConfigChecksNameTheField) {
  EXPECT_THAT([] { (void)ConstantLrSchedulerConfig(-1.0).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("ConstantLrSchedulerConfig::init: lr must be finite and >= 0")));
  EXPECT_THAT([] { (void)StepLrSchedulerConfig(0.1, 0).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("StepLrSchedulerConfig::init: step_size must be >= 1, got 0")));
  EXPECT_THAT([] { (void)ExponentialLrSchedulerConfig(1.5, 0.5).init(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "ExponentialLrSchedulerConfig::init: initial_lr must be in (0, 1], got 1.5")));
  EXPECT_THAT([] { (void)ExponentialLrSchedulerConfig(0.5, 0.0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("gamma must be in (0, 1], got 0")));
  EXPECT_THAT([] { (void)LinearLrSchedulerConfig(0.0, 0.5, 10).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("LinearLrSchedulerConfig::init: initial_lr must be in (0, 1]")));
  EXPECT_THAT([] { (void)LinearLrSchedulerConfig(0.5, -0.5, 10).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("final_lr must be in [0, 1], got -0.5")));
  EXPECT_THAT([] { (void)LinearLrSchedulerConfig(0.5, 0.1, 0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("num_iters must be >= 1, got 0")));
  EXPECT_THAT(
      [] { (void)CosineAnnealingLrSchedulerConfig(0.5, 10).with_min_lr(0.6).init(); },
      ThrowsMessage<ConfigError>(HasSubstr("CosineAnnealingLrSchedulerConfig::init: min_lr must be "
                                           "in [0, initial_lr] = [0, 0.5], got 0.6")));
  EXPECT_THAT([] { (void)CosineAnnealingLrSchedulerConfig(0.5, -3).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("num_iters must be >= 1, got -3")));
  EXPECT_THAT([] { (void)NoamLrSchedulerConfig(1.0).with_warmup_steps(0).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("NoamLrSchedulerConfig::init: warmup_steps must be >= 1, got 0")));
  EXPECT_THAT([] { (void)NoamLrSchedulerConfig(1.0).with_model_size(0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("model_size must be >= 1, got 0")));
}

}  // namespace
}  // namespace kiln
