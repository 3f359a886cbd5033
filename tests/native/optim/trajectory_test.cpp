// Adam, AdamW and RMSProp against 3-step trajectories computed with PyTorch 1.13
// (tests/native/optim/trajectories.json, written by make_trajectories.py beside this file:
// it documents the setting and how to regenerate). PyTorch is not needed at test time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/config/json_interop.hpp"  // AdamConfig::from_json(nlohmann::json)
#include "kiln/kiln.hpp"
#include "optim/models.hpp"
#include "support/paths.hpp"

namespace kiln {
namespace {

using namespace optim;
using test::AD;
using Json = nlohmann::json;

Json load_trajectories() {
  // KILN_CASES_FILE is tests/native/cases/cases.jsonl; the trajectories sit in tests/native/optim.
  const auto path = std::filesystem::path(KILN_CASES_FILE).parent_path().parent_path() / "optim" /
                    "trajectories.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return Json::parse(in);
}

const Json& trajectory(const std::string& id) {
  static const Json all = load_trajectories();
  for (const auto& t : all.at("trajectories")) {
    if (t.at("id") == id) return t;
  }
  throw std::runtime_error("no trajectory " + id);
}

std::vector<float> floats(const Json& j) { return j.get<std::vector<float>>(); }

template <class Optim>
void expect_trajectory(const Json& t, Optim optim) {
  const double lr = t.at("lr").get<double>();
  const auto tolerance = Tolerance::rel_abs(t.at("tolerance").at("rel").get<double>(),
                                            t.at("tolerance").at("abs").get<double>());
  test::Pair<AD> model;
  model.weight =
      module::Param<Tensor<AD, 2>>(test::mat(2, 3, floats(t.at("params").at("weight").at("data"))));
  model.bias =
      module::Param<Tensor<AD, 1>>(test::vec(floats(t.at("params").at("bias").at("data"))));
  for (std::size_t step = 0; step < 3; ++step) {
    auto grads = test::grads_for(model, floats(t.at("grads").at("weight").at(step)),
                                 floats(t.at("grads").at("bias").at(step)));
    model = optim.step(lr, model, std::move(grads));
    SCOPED_TRACE(t.at("id").get<std::string>() + ", step " + std::to_string(step + 1) + ", " +
                 t.at("torch").get<std::string>());
    model.weight.val().to_data().assert_approx_eq(
        TensorData(Shape{2, 3}, floats(t.at("expected").at("weight").at(step))), tolerance);
    model.bias.val().to_data().assert_approx_eq(
        TensorData(Shape{3}, floats(t.at("expected").at("bias").at(step))), tolerance);
  }
}

void run(const std::string& id) {
  const Json& t = trajectory(id);
  const std::string kind = t.at("optimizer").get<std::string>();
  if (kind == "Adam") {
    expect_trajectory(t, AdamConfig::from_json(t.at("config")).init<AD>());
  } else if (kind == "AdamW") {
    expect_trajectory(t, AdamWConfig::from_json(t.at("config")).init<AD>());
  } else if (kind == "RmsProp") {
    expect_trajectory(t, RmsPropConfig::from_json(t.at("config")).init<AD>());
  } else {
    FAIL() << "unknown optimizer " << kind;
  }
}

TEST(AdamTrajectory, BurnDefaults) { run("adam_burn_defaults"); }
TEST(AdamTrajectory, L2WeightDecay) { run("adam_l2_weight_decay"); }
TEST(AdamTrajectory, Amsgrad) { run("adam_amsgrad"); }
TEST(AdamWTrajectory, BurnDefaults) { run("adamw_burn_defaults"); }
TEST(AdamWTrajectory, AmsgradWeightDecay) { run("adamw_amsgrad_weight_decay"); }
TEST(RmsPropTrajectory, Plain) { run("rmsprop_plain"); }
TEST(RmsPropTrajectory, BurnDefaults) { run("rmsprop_burn_defaults"); }
TEST(RmsPropTrajectory, CenteredWithMomentum) { run("rmsprop_centered_momentum"); }
TEST(RmsPropTrajectory, CenteredWithoutMomentum) { run("rmsprop_centered_plain"); }
TEST(RmsPropTrajectory, WeightDecay) { run("rmsprop_weight_decay"); }

TEST(Trajectories, EveryStoredTrajectoryHasATest) {
  // Adding a trajectory to make_trajectories.py without a test above fails here.
  const Json all = load_trajectories();
  std::vector<std::string> ids;
  for (const auto& t : all.at("trajectories")) ids.push_back(t.at("id"));
  EXPECT_THAT(
      ids, testing::UnorderedElementsAre(
               "adam_burn_defaults", "adam_l2_weight_decay", "adam_amsgrad", "adamw_burn_defaults",
               "adamw_amsgrad_weight_decay", "rmsprop_plain", "rmsprop_burn_defaults",
               "rmsprop_centered_momentum", "rmsprop_centered_plain", "rmsprop_weight_decay"));
}

}  // namespace
}  // namespace kiln
