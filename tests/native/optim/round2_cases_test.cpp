// The optimizer cases of the second PyTorch reference file (tests/native/cases/round2.jsonl,
// category optim, PyTorch 1.13): RMSprop with eps outside the square root (plain, and
// centered with momentum and weight decay), gradient clipping with non-finite norms and other
// norm types, OneCycle (cosine two-phase and linear three-phase) and ReduceLROnPlateau.
// The file is read here (support/cases.hpp reads cases.jsonl); hyper-parameters come from
// each case's `params`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/optim/lr_scheduler_cycle.hpp"
#include "optim/models.hpp"
#include "support/paths.hpp"

namespace kiln {
namespace {

using namespace optim;
using test::AD;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

json round2_case(const std::string& id) {
  std::string path = KILN_CASES_FILE;
  path.replace(path.rfind("cases.jsonl"), 11, "round2.jsonl");
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line);
    if (j.at("id") == id) return j;
  }
  throw std::runtime_error("no case " + id + " in " + path);
}

double number(const json& v) {
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("bad number " + s);
  }
  return v.get<double>();
}

std::vector<double> values(const json& tensor) {
  std::vector<double> out;
  for (const auto& v : tensor.at("data")) out.push_back(number(v));
  return out;
}

std::vector<float> floats(const json& tensor) {
  std::vector<float> out;
  for (double v : values(tensor)) out.push_back(static_cast<float>(v));
  return out;
}

/// |got - want| <= abs + rel·|want|; nan matches nan, ±inf the same infinity.
void expect_close(double got, double want, const json& tol, const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what << ": got " << got << ", want nan";
  } else if (std::isinf(want)) {
    EXPECT_EQ(got, want) << what;
  } else {
    EXPECT_LE(std::fabs(got - want), tol.at("abs").get<double>() + tol.at("rel").get<double>() * std::fabs(want))
        << what << ": got " << got << ", want " << want;
  }
}

void expect_all_close(const std::vector<double>& got, const std::vector<double>& want,
                      const json& tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], tol, what + "[" + std::to_string(i) + "]");
}

std::vector<double> host(const CpuTensor& g) {
  std::vector<double> out;
  for (float v : Tensor<Cpu, 1>(g).reshape<1>({-1}).to_data().to_vec<float>()) out.push_back(v);
  return out;
}

CpuTensor prim(const json& tensor) {
  const auto data = floats(tensor);
  return Tensor<Cpu, 1>::from_data(TensorData(Shape{static_cast<std::int64_t>(data.size())}, data))
      .into_primitive();
}

// ---------------------------------------------------------------- RMSprop

void expect_rmsprop(const json& c, const json& p, const std::string& key) {
  auto config = RmsPropConfig()
                    .with_alpha(p.at("alpha").get<double>())
                    .with_epsilon(p.at("eps").get<double>())
                    .with_momentum(p.value("momentum", 0.0))
                    .with_centered(p.value("centered", false));
  if (p.contains("weight_decay")) config = config.with_weight_decay(WeightDecayConfig(p.at("weight_decay").get<double>()));
  auto optim = config.init<AD>();
  const auto p0 = floats(c.at("inputs").at("p0"));
  const auto grads = floats(c.at("inputs").at("grads"));
  const auto want = values(c.at("expected").at(key + "_params_after_each_step"));
  auto model = test::make_vec1(p0);
  const std::size_t n = p0.size();
  for (std::size_t step = 0; step < 3; ++step) {
    std::vector<float> g(grads.begin() + step * n, grads.begin() + (step + 1) * n);
    model = optim.step(p.at("lr").get<double>(), model, test::grads_for(model, g));
    const auto got = model.p.val().to_data().to_vec<float>();
    for (std::size_t i = 0; i < n; ++i) {
      expect_close(got[i], want[step * n + i], c.at("tolerance"), key + " step " + std::to_string(step + 1));
    }
  }
}

TEST(OptimRound2Cases, RmspropEpsOutsideSqrtPlain) {
  const json c = round2_case("rmsprop_eps_outside_sqrt_centered");
  expect_rmsprop(c, c.at("params").at("plain"), "plain");
}

TEST(OptimRound2Cases, RmspropEpsOutsideSqrtCenteredMomentumWeightDecay) {
  const json c = round2_case("rmsprop_eps_outside_sqrt_centered");
  expect_rmsprop(c, c.at("params").at("centered_momentum_wd"), "centered_momentum_wd");
}

// ---------------------------------------------------------------- clipping

struct ClipOut {
  double total;
  std::vector<std::vector<double>> grads;
};

ClipOut clip(const json& c, std::vector<std::string> names, double max_norm, double norm_type,
             bool error_if_nonfinite = false) {
  GradientList<Cpu> list;
  for (const auto& n : names) list.grads.push_back(prim(c.at("inputs").at(n)));
  ClipOut out;
  out.total = clip_grad_norm(list, max_norm, ClipGradNormOptions{norm_type, error_if_nonfinite});
  for (const auto& g : list.grads) out.grads.push_back(host(g));
  return out;
}

TEST(OptimRound2Cases, ClipGradNormInfiniteGradient) {
  const json c = round2_case("clip_grad_nonfinite_and_norm_types");
  const json& e = c.at("expected");
  const json& tol = c.at("tolerance");
  const auto r = clip(c, {"grad_a", "grad_b_inf"}, 1.0, 2.0);
  expect_close(r.total, values(e.at("inf_total_norm"))[0], tol, "inf_total_norm");
  expect_all_close(r.grads[0], values(e.at("inf_clipped_a")), tol, "inf_clipped_a");
  expect_all_close(r.grads[1], values(e.at("inf_clipped_b")), tol, "inf_clipped_b");
}

TEST(OptimRound2Cases, ClipGradNormNanGradient) {
  const json c = round2_case("clip_grad_nonfinite_and_norm_types");
  const json& e = c.at("expected");
  const json& tol = c.at("tolerance");
  const auto r = clip(c, {"grad_a", "grad_b_nan"}, 1.0, 2.0);
  expect_close(r.total, values(e.at("nan_total_norm"))[0], tol, "nan_total_norm");
  expect_all_close(r.grads[0], values(e.at("nan_clipped_a")), tol, "nan_clipped_a");
  expect_all_close(r.grads[1], values(e.at("nan_clipped_b")), tol, "nan_clipped_b");
}

TEST(OptimRound2Cases, ClipGradNormErrorIfNonfiniteThrowsAndChangesNothing) {
  const json c = round2_case("clip_grad_nonfinite_and_norm_types");
  ASSERT_TRUE(c.at("expected").at("nan_error_if_nonfinite").at("error").get<bool>());
  GradientList<Cpu> list;
  list.grads = {prim(c.at("inputs").at("grad_a")), prim(c.at("inputs").at("grad_b_nan"))};
  EXPECT_THAT([&] { (void)clip_grad_norm(list, 1.0, ClipGradNormOptions{2.0, true}); },
              ThrowsMessage<NonFiniteError>(HasSubstr("clip_grad_norm: the total norm of order 2 of the gradients is nan")));
  EXPECT_EQ(host(list.grads[0]), (std::vector<double>{3.0, 4.0}));  // unchanged
}

TEST(OptimRound2Cases, ClipGradNormInfNorm) {
  const json c = round2_case("clip_grad_nonfinite_and_norm_types");
  const json& e = c.at("expected");
  const json& tol = c.at("tolerance");
  const auto r = clip(c, {"grad_a", "grad_b_12"}, 1.0, std::numeric_limits<double>::infinity());
  expect_close(r.total, values(e.at("maxnorm_total_norm"))[0], tol, "maxnorm_total_norm");
  expect_all_close(r.grads[0], values(e.at("maxnorm_clipped_a")), tol, "maxnorm_clipped_a");
  expect_all_close(r.grads[1], values(e.at("maxnorm_clipped_b")), tol, "maxnorm_clipped_b");
}

TEST(OptimRound2Cases, ClipGradNormL1Norm) {
  const json c = round2_case("clip_grad_nonfinite_and_norm_types");
  const json& e = c.at("expected");
  const json& tol = c.at("tolerance");
  const auto r = clip(c, {"grad_a_l1", "grad_b_12"}, 5.0, 1.0);
  expect_close(r.total, values(e.at("l1_total_norm"))[0], tol, "l1_total_norm");
  expect_all_close(r.grads[0], values(e.at("l1_clipped_a")), tol, "l1_clipped_a");
  expect_all_close(r.grads[1], values(e.at("l1_clipped_b")), tol, "l1_clipped_b");
}

TEST(OptimRound2Cases, ClipGradValueKeepsNanClampsInf) {
  const json c = round2_case("clip_grad_nonfinite_and_norm_types");
  GradientList<Cpu> list;
  list.grads = {prim(c.at("inputs").at("grad_value"))};
  clip_grad_value(list, 1.0);
  expect_all_close(host(list.grads[0]), values(c.at("expected").at("value_clipped")),
                   c.at("tolerance"), "value_clipped");
}

TEST(OptimRound2Cases, ClipGradNormBadNormType) {
  GradientList<Cpu> list;
  EXPECT_THAT([&] { (void)clip_grad_norm(list, 1.0, ClipGradNormOptions{0.0, false}); },
              ThrowsMessage<ValueError>(HasSubstr("clip_grad_norm: norm_type must be > 0 or inf, got 0")));
  EXPECT_THAT([&] { (void)clip_grad_norm(list, 1.0, ClipGradNormOptions{std::nan(""), false}); },
              ThrowsMessage<ValueError>(HasSubstr("norm_type must be > 0 or inf, got nan")));
}

// ---------------------------------------------------------------- OneCycle

TEST(OptimRound2Cases, OneCycleCosineTwoPhase) {
  const json c = round2_case("onecycle_lr_schedule");
  auto s = OneCycleLrSchedulerConfig(1.0, 10)
               .with_pct_start(0.3)
               .with_div_factor(25.0)
               .with_final_div_factor(1e4)
               .init();
  std::vector<double> lr, momentum;
  for (int t = 0; t < 10; ++t) {
    lr.push_back(s.step());
    momentum.push_back(s.momentum());
  }
  expect_all_close(lr, values(c.at("expected").at("cos_lr")), c.at("tolerance"), "cos_lr");
  expect_all_close(momentum, values(c.at("expected").at("cos_momentum")), c.at("tolerance"), "cos_momentum");
  EXPECT_THAT([&] { (void)s.step(); },
              ThrowsMessage<StateError>(HasSubstr("total_steps = 10 steps, this is step 11")));
}

TEST(OptimRound2Cases, OneCycleLinearThreePhase) {
  const json c = round2_case("onecycle_lr_schedule");
  auto s = OneCycleLrSchedulerConfig(1.0, 10)
               .with_anneal_strategy("linear")
               .with_three_phase(true)
               .init();
  std::vector<double> lr, momentum;
  for (int t = 0; t < 10; ++t) {
    lr.push_back(s.step());
    momentum.push_back(s.momentum());
  }
  expect_all_close(lr, values(c.at("expected").at("linear_three_phase_lr")), c.at("tolerance"), "lr");
  expect_all_close(momentum, values(c.at("expected").at("linear_three_phase_momentum")),
                   c.at("tolerance"), "momentum");
}

TEST(OptimRound2Cases, OneCycleConfigErrors) {
  EXPECT_THAT([] { (void)OneCycleLrSchedulerConfig(1.0, 10).with_anneal_strategy("cosine").init(); },
              ThrowsMessage<ConfigError>(HasSubstr("anneal_strategy must be \"cos\" or \"linear\", got \"cosine\"")));
  EXPECT_THAT([] { (void)OneCycleLrSchedulerConfig(0.0, 10).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("max_lr must be finite and > 0, got 0")));
  EXPECT_THAT([] { (void)OneCycleLrSchedulerConfig(1.0, 3).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("leaves a phase without steps")));
  EXPECT_THAT([] { (void)OneCycleLrSchedulerConfig(1.0, 10).with_pct_start(1.0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("pct_start must be in (0, 1), got 1")));
}

// ---------------------------------------------------------------- ReduceLROnPlateau

std::vector<double> plateau_run(const json& p, double initial_lr, const std::vector<double>& metrics) {
  auto s = ReduceLrOnPlateauConfig(initial_lr)
               .with_mode(p.at("mode").get<std::string>())
               .with_factor(p.at("factor").get<double>())
               .with_patience(p.at("patience").get<std::int64_t>())
               .with_threshold(p.at("threshold").get<double>())
               .with_threshold_mode(p.at("threshold_mode").get<std::string>())
               .with_cooldown(p.at("cooldown").get<std::int64_t>())
               .with_min_lr(p.at("min_lr").get<double>())
               .init();
  std::vector<double> out;
  for (double m : metrics) out.push_back(s.step(m));
  return out;
}

TEST(OptimRound2Cases, ReduceLrOnPlateauMinRelCooldown) {
  const json c = round2_case("reduce_lr_on_plateau_patience_cooldown");
  expect_all_close(plateau_run(c.at("params").at("a"), 1.0, values(c.at("inputs").at("metrics_min"))),
                   values(c.at("expected").at("lr_after_each_step_min")), c.at("tolerance"), "min");
}

TEST(OptimRound2Cases, ReduceLrOnPlateauMaxAbs) {
  const json c = round2_case("reduce_lr_on_plateau_patience_cooldown");
  expect_all_close(plateau_run(c.at("params").at("b"), 1.0, values(c.at("inputs").at("metrics_max"))),
                   values(c.at("expected").at("lr_after_each_step_max")), c.at("tolerance"), "max");
}

TEST(OptimRound2Cases, ReduceLrOnPlateauStateRoundTrip) {
  // Half a run, its state loaded into a fresh scheduler, the rest: the same rates as one run.
  const json c = round2_case("reduce_lr_on_plateau_patience_cooldown");
  const auto metrics = values(c.at("inputs").at("metrics_min"));
  const auto want = values(c.at("expected").at("lr_after_each_step_min"));
  auto config = ReduceLrOnPlateauConfig(1.0).with_factor(0.5).with_patience(2).with_threshold(0.1)
                    .with_cooldown(1).with_min_lr(0.1);
  auto first = config.init();
  for (std::size_t i = 0; i < 12; ++i) (void)first.step(metrics[i]);
  auto second = config.init();
  second.load_state(first.state());
  for (std::size_t i = 12; i < metrics.size(); ++i) EXPECT_EQ(second.step(metrics[i]), want[i]) << i;
}

TEST(OptimRound2Cases, ReduceLrOnPlateauConfigErrors) {
  EXPECT_THAT([] { (void)ReduceLrOnPlateauConfig(1.0).with_factor(1.0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("factor must be in [0, 1), got 1")));
  EXPECT_THAT([] { (void)ReduceLrOnPlateauConfig(1.0).with_mode("minimum").init(); },
              ThrowsMessage<ConfigError>(HasSubstr("mode must be \"min\" or \"max\", got \"minimum\"")));
  EXPECT_THAT([] { (void)ReduceLrOnPlateauConfig(1.0).with_threshold_mode("relative").init(); },
              ThrowsMessage<ConfigError>(HasSubstr("threshold_mode must be \"rel\" or \"abs\"")));
  EXPECT_THAT([] { (void)ReduceLrOnPlateauConfig(1.0).with_patience(-1).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("patience must be >= 0, got -1")));
}

}  // namespace
}  // namespace kiln
