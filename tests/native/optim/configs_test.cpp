// Optimizer configs: Burn's defaults, JSON round trips (nested momentum / weight decay /
// gradient clipping), and ConfigError naming the field for bad values at init.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "kiln/kiln.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

namespace kiln {
namespace {

using namespace optim;
using AD = Autodiff<Cpu>;
using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(OptimConfigs, DefaultsAreBurns) {
  const AdamConfig adam;
  EXPECT_EQ(adam.beta_1, 0.9);
  EXPECT_EQ(adam.beta_2, 0.999);
  EXPECT_EQ(adam.epsilon, 1e-5);
  EXPECT_FALSE(adam.amsgrad);
  EXPECT_FALSE(adam.weight_decay.has_value());
  EXPECT_FALSE(adam.grad_clipping.has_value());
  EXPECT_EQ(AdamWConfig().weight_decay, 1e-4);
  EXPECT_EQ(AdamWConfig().epsilon, 1e-5);
  const RmsPropConfig rmsprop;
  EXPECT_EQ(rmsprop.alpha, 0.99);
  EXPECT_EQ(rmsprop.momentum, 0.9);
  EXPECT_EQ(rmsprop.epsilon, 1e-5);
  EXPECT_FALSE(rmsprop.centered);
  const MomentumConfig momentum;
  EXPECT_EQ(momentum.momentum, 0.9);
  EXPECT_EQ(momentum.dampening, 0.1);
  EXPECT_FALSE(momentum.nesterov);
  const SgdConfig sgd;
  EXPECT_FALSE(sgd.momentum || sgd.weight_decay || sgd.gradient_clipping);
}

TEST(OptimConfigs, SgdJsonRoundTripWithNestedConfigs) {
  const auto c = SgdConfig()
                     .with_momentum(MomentumConfig().with_nesterov(true).with_dampening(0.0))
                     .with_weight_decay(WeightDecayConfig(0.01))
                     .with_gradient_clipping(GradientClippingConfig::norm(1.5));
  EXPECT_EQ(c.to_json().dump(),
            R"({"gradient_clipping":{"Norm":1.5},"momentum":{"dampening":0.0,"momentum":0.9,)"
            R"("nesterov":true},"weight_decay":{"penalty":0.01}})");
  EXPECT_EQ(SgdConfig::from_json_string(c.to_json_string()), c);
  EXPECT_EQ(SgdConfig::from_json_string("{}"), SgdConfig());
}

TEST(OptimConfigs, AdamJsonRoundTripAndPrinting) {
  const auto c =
      AdamConfig().with_beta_2(0.98).with_grad_clipping(GradientClippingConfig::value(0.5));
  EXPECT_EQ(AdamConfig::from_json_string(c.to_json_string()), c);
  std::ostringstream out;
  out << c;
  EXPECT_THAT(out.str(), HasSubstr(R"(AdamConfig {"amsgrad":false,"beta_1":0.9,"beta_2":0.98,)"));
  EXPECT_THAT(out.str(), HasSubstr(R"("grad_clipping":{"Value":0.5})"));
  EXPECT_EQ(RmsPropConfig::from_json_string(RmsPropConfig().with_centered(true).to_json_string()),
            RmsPropConfig().with_centered(true));
  EXPECT_EQ(AdamWConfig::from_json_string(R"({"weight_decay": 0.5})").weight_decay, 0.5);
}

TEST(OptimConfigs, GradientClippingJsonErrors) {
  EXPECT_THAT([] { (void)SgdConfig::from_json_string(R"({"gradient_clipping": {"Max": 1}})"); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "SgdConfig.gradient_clipping: GradientClippingConfig: unknown variant \"Max\"")));
  EXPECT_THAT(
      [] {
        (void)GradientClippingConfig::from_json(config::Json::parse(R"({"Value": 1, "Norm": 2})"));
      },
      ThrowsMessage<ConfigError>(HasSubstr("an object with 2 keys")));
  EXPECT_THAT(
      [] { (void)GradientClippingConfig::from_json(config::Json::parse(R"({"Norm": "big"})")); },
      ThrowsMessage<ConfigError>(
          HasSubstr("GradientClippingConfig.Norm: expected a number, got the string")));
}

TEST(OptimConfigErrors, AdamFieldsAreChecked) {
  EXPECT_THAT(
      [] { (void)AdamConfig().with_beta_1(1.0).init<AD>(); },
      ThrowsMessage<ConfigError>(HasSubstr("AdamConfig::init: beta_1 must be in [0, 1), got 1")));
  EXPECT_THAT([] { (void)AdamConfig().with_beta_2(-0.5).init<AD>(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("AdamConfig::init: beta_2 must be in [0, 1), got -0.5")));
  EXPECT_THAT(
      [] { (void)AdamConfig().with_epsilon(-1e-8).init<AD>(); },
      ThrowsMessage<ConfigError>(HasSubstr("AdamConfig::init: epsilon must be finite and >= 0")));
  EXPECT_THAT([] { (void)AdamConfig().with_weight_decay(WeightDecayConfig(-0.1)).init<AD>(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "AdamConfig::init: weight_decay.penalty must be finite and >= 0, got -0.1")));
  EXPECT_THAT(
      [] { (void)AdamConfig().with_grad_clipping(GradientClippingConfig::value(0.0)).init<AD>(); },
      ThrowsMessage<ConfigError>(
          HasSubstr("AdamConfig::init: grad_clipping.Value must be finite and > 0, got 0")));
}

TEST(OptimConfigErrors, AdamWSgdAndRmsPropFieldsAreChecked) {
  EXPECT_THAT([] { (void)AdamWConfig().with_weight_decay(-1.0).init<AD>(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("AdamWConfig::init: weight_decay must be finite and >= 0")));
  EXPECT_THAT(
      [] { (void)AdamWConfig().with_beta_1(std::numeric_limits<double>::quiet_NaN()).init<AD>(); },
      ThrowsMessage<ConfigError>(
          HasSubstr("AdamWConfig::init: beta_1 must be in [0, 1), got nan")));
  EXPECT_THAT(
      [] { (void)SgdConfig().with_momentum(MomentumConfig().with_momentum(-0.9)).init<AD>(); },
      ThrowsMessage<ConfigError>(
          HasSubstr("SgdConfig::init: momentum.momentum must be finite and >= 0")));
  EXPECT_THAT(
      [] {
        (void)SgdConfig()
            .with_weight_decay(WeightDecayConfig(std::numeric_limits<double>::infinity()))
            .init<AD>();
      },
      ThrowsMessage<ConfigError>(
          HasSubstr("SgdConfig::init: weight_decay.penalty must be finite")));
  EXPECT_THAT(
      [] {
        (void)SgdConfig().with_gradient_clipping(GradientClippingConfig::norm(-1.0)).init<AD>();
      },
      ThrowsMessage<ConfigError>(
          HasSubstr("SgdConfig::init: gradient_clipping.Norm must be finite and > 0, got -1")));
  EXPECT_THAT([] { (void)RmsPropConfig().with_alpha(1.5).init<AD>(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("RmsPropConfig::init: alpha must be in [0, 1], got 1.5")));
  EXPECT_THAT([] { (void)RmsPropConfig().with_momentum(-0.1).init<AD>(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("RmsPropConfig::init: momentum must be finite and >= 0")));
  EXPECT_THAT([] { (void)RmsPropConfig().with_epsilon(-1.0).init<AD>(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("RmsPropConfig::init: epsilon must be finite and >= 0")));
}

TEST(OptimConfigErrors, ValidEdgeValuesAreAccepted) {
  EXPECT_NO_THROW((void)AdamConfig().with_beta_1(0.0).with_epsilon(0.0).init<AD>());
  EXPECT_NO_THROW((void)RmsPropConfig().with_alpha(1.0).with_momentum(0.0).init<AD>());
  EXPECT_NO_THROW((void)SgdConfig().with_momentum(MomentumConfig().with_momentum(0.0)).init<AD>());
}

}  // namespace
}  // namespace kiln
