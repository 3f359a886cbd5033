// OptimizerAdaptor::to_named_record / load_named_record: the keys ("<param path>.<field>"),
// the values (Adam's moments after two steps computed by hand), a round trip into a module
// with other ParamIds that continues bit for bit, and the errors for records that do not fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "optim/models.hpp"

namespace kiln {
namespace {

using namespace optim;
using test::AD;
using test::values;
using testing::HasSubstr;
using testing::ThrowsMessage;

test::Pair<AD> make_pair(std::vector<float> weight, std::vector<float> bias) {
  test::Pair<AD> m;
  m.weight = Param<Tensor<AD, 2>>(test::mat(2, 3, std::move(weight)));
  m.bias = Param<Tensor<AD, 1>>(test::vec(std::move(bias)));
  return m;
}

/// A module with the same values as `m` but new parameters (new ParamIds), as a new process
/// would build before loading a checkpoint.
test::Pair<AD> copy_with_new_ids(const test::Pair<AD>& m) {
  return make_pair(values(m.weight), values(m.bias));
}

std::vector<float> floats(const StateValue& value) {
  return std::get<TensorData>(value).to_vec<float>();
}

std::set<std::string> keys(const NamedStateRecord& record) {
  std::set<std::string> out;
  for (const auto& entry : record) out.insert(entry.first);
  return out;
}

const std::vector<float> kG1w{1.f, -2.f, 0.5f, 4.f, 0.f, -1.f}, kG1b{0.25f, 1.f, -3.f};
const std::vector<float> kG2w{-1.f, 2.f, 2.f, 0.5f, 1.f, 3.f}, kG2b{1.f, -0.5f, 2.f};
const std::vector<float> kG3w{0.5f, 0.5f, -1.f, 2.f, -2.f, 1.f}, kG3b{-1.f, 0.f, 1.f};

TEST(OptimizerStateRecord, AdamMomentsAfterTwoStepsByHand) {
  auto optim = AdamConfig().init<AD>();  // β1 0.9, β2 0.999
  auto model = make_pair({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {0.f, 0.f, 0.f});
  model = optim.step(0.01, model, test::grads_for(model, kG1w, kG1b));
  model = optim.step(0.01, model, test::grads_for(model, kG2w, kG2b));
  const NamedStateRecord record = optim.to_named_record(model);
  EXPECT_EQ(keys(record), (std::set<std::string>{"bias.moment_1", "bias.moment_2", "bias.time",
                                                  "weight.moment_1", "weight.moment_2",
                                                  "weight.time"}));
  EXPECT_EQ(std::get<std::int64_t>(record.at("weight.time")), 2);
  EXPECT_EQ(std::get<TensorData>(record.at("weight.moment_1")).shape, (Shape{2, 3}));
  // m = 0.9 · (0.1 · g1) + 0.1 · g2;  v = 0.999 · (0.001 · g1²) + 0.001 · g2².
  const auto m = floats(record.at("weight.moment_1"));
  const auto v = floats(record.at("weight.moment_2"));
  for (std::size_t i = 0; i < 6; ++i) {
    const double g1 = kG1w[i], g2 = kG2w[i];
    EXPECT_NEAR(m[i], 0.09 * g1 + 0.1 * g2, 1e-6) << i;
    EXPECT_NEAR(v[i], 0.999 * 0.001 * g1 * g1 + 0.001 * g2 * g2, 1e-8) << i;
  }
  const auto mb = floats(record.at("bias.moment_1"));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(mb[i], 0.09 * kG1b[i] + 0.1 * kG2b[i], 1e-6);
}

TEST(OptimizerStateRecord, PathsOfNestedOptionalAndIntParameters) {
  // Mixed: a, b (optional, absent here), inner.p, counts (Int: never has state).
  test::Mixed<AD> model;
  model.a = Param<Tensor<AD, 1>>(test::vec({1.f, 2.f}));
  model.inner.p = Param<Tensor<AD, 1>>(test::vec({0.f, 0.f, 0.f}));
  model.counts = Param<Tensor<AD, 1, Int>>(Tensor<AD, 1, Int>::from_ints({3, 4}));
  auto optim = SgdConfig().with_momentum(MomentumConfig()).init<AD>();
  const auto loss = test::dot(model.a, test::vec({1.f, 1.f})) +
                    test::dot(model.inner.p, test::vec({1.f, 2.f, 3.f}));
  model = optim.step(0.1, model, GradientsParams<AD>::from_grads(loss.backward(), model));
  const auto record = optim.to_named_record(model);
  EXPECT_EQ(keys(record),
            (std::set<std::string>{"a.momentum_buffer", "inner.p.momentum_buffer"}));
  // First step: the buffer is the raw gradient.
  EXPECT_EQ(floats(record.at("inner.p.momentum_buffer")), (std::vector<float>{1.f, 2.f, 3.f}));
}

TEST(OptimizerStateRecord, ParametersNeverUpdatedHaveNoEntries) {
  auto optim = AdamConfig().init<AD>();
  auto model = make_pair({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {0.f, 0.f, 0.f});
  EXPECT_TRUE(optim.to_named_record(model).empty());
  // Only the bias gets a gradient.
  const auto loss = test::dot(model.bias, test::vec({1.f, 1.f, 1.f}));
  model = optim.step(0.01, model, GradientsParams<AD>::from_grads(loss.backward(), model));
  EXPECT_EQ(keys(optim.to_named_record(model)),
            (std::set<std::string>{"bias.moment_1", "bias.moment_2", "bias.time"}));
}

/// Two steps, then the state moves through a named record into a module with new ids and a
/// fresh optimizer; the third step must be bit-identical to the original optimizer's, and
/// different from a fresh optimizer's (so the record carries something).
template <class Config>
void expect_round_trip_continues_exactly(const Config& config, std::size_t expected_keys) {
  auto optim = config.template init<AD>();
  auto model = make_pair({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {0.5f, -0.5f, 0.f});
  model = optim.step(0.01, model, test::grads_for(model, kG1w, kG1b));
  model = optim.step(0.01, model, test::grads_for(model, kG2w, kG2b));
  const auto record = optim.to_named_record(model);
  EXPECT_EQ(record.size(), expected_keys);

  auto other = copy_with_new_ids(model);
  ASSERT_NE(other.weight.id(), model.weight.id());
  auto loaded = config.template init<AD>().load_named_record(other, record);
  EXPECT_TRUE(loaded.has_state(other.weight.id()));
  EXPECT_FALSE(loaded.has_state(model.weight.id()));
  auto fresh = config.template init<AD>();
  auto fresh_model = copy_with_new_ids(model);

  model = optim.step(0.01, model, test::grads_for(model, kG3w, kG3b));
  other = loaded.step(0.01, other, test::grads_for(other, kG3w, kG3b));
  fresh_model = fresh.step(0.01, fresh_model, test::grads_for(fresh_model, kG3w, kG3b));
  EXPECT_EQ(values(other.weight), values(model.weight));
  EXPECT_EQ(values(other.bias), values(model.bias));
  EXPECT_NE(values(fresh_model.weight), values(model.weight));
  // And the record of the loaded optimizer equals the original's again.
  const auto again = loaded.to_named_record(other);
  const auto original = optim.to_named_record(model);
  ASSERT_EQ(keys(again), keys(original));
  for (const auto& [key, value] : original) {
    if (std::holds_alternative<std::int64_t>(value)) {
      EXPECT_EQ(std::get<std::int64_t>(again.at(key)), std::get<std::int64_t>(value)) << key;
    } else {
      EXPECT_EQ(floats(again.at(key)), floats(value)) << key;
    }
  }
}

TEST(OptimizerStateRecord, RoundTripContinuesExactlyForEachOptimizer) {
  {
    SCOPED_TRACE("Adam");
    expect_round_trip_continues_exactly(AdamConfig(), 6);  // time, moment_1, moment_2 × 2
  }
  {
    SCOPED_TRACE("AdamW amsgrad");
    expect_round_trip_continues_exactly(AdamWConfig().with_amsgrad(true), 8);  // + max_moment_2
  }
  {
    SCOPED_TRACE("SGD momentum");
    expect_round_trip_continues_exactly(SgdConfig().with_momentum(MomentumConfig()), 2);
  }
  {
    SCOPED_TRACE("RMSProp centered, momentum");
    expect_round_trip_continues_exactly(RmsPropConfig().with_centered(true), 6);
  }
}

TEST(OptimizerStateRecord, RecordsThatDoNotFitAreFormatErrorsListingEveryProblem) {
  auto adam = AdamConfig().init<AD>();
  auto model = make_pair({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {0.f, 0.f, 0.f});
  model = adam.step(0.01, model, test::grads_for(model, kG1w, kG1b));
  const auto record = adam.to_named_record(model);

  // Another optimizer's record: SGD's momentum buffers are unexpected for Adam.
  auto sgd = SgdConfig().with_momentum(MomentumConfig()).init<AD>();
  auto sgd_model = make_pair({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, {0.f, 0.f, 0.f});
  sgd_model = sgd.step(0.01, sgd_model, test::grads_for(sgd_model, kG1w, kG1b));
  EXPECT_THAT(
      [&] { (void)AdamConfig().init<AD>().load_named_record(model, sgd.to_named_record(sgd_model),
                                                            "\"optim-2.safetensors\""); },
      ThrowsMessage<FormatError>(AllOf(
          HasSubstr("OptimizerAdaptor::load_named_record: \"optim-2.safetensors\": 2 problems"),
          HasSubstr("unexpected \"weight.momentum_buffer\""),
          HasSubstr("unexpected \"bias.momentum_buffer\""))));

  // A missing field, a count stored as a tensor, a wrong shape.
  auto broken = record;
  broken.erase("weight.moment_2");
  broken["bias.time"] = StateValue(TensorData(Shape{1}, std::vector<float>{1.f}));
  broken["bias.moment_1"] = StateValue(TensorData(Shape{4}, std::vector<float>(4, 0.f)));
  EXPECT_THAT([&] { (void)AdamConfig().init<AD>().load_named_record(model, broken); },
              ThrowsMessage<FormatError>(AllOf(HasSubstr("record: 3 problems"),
                                               HasSubstr("missing \"weight.moment_2\""),
                                               HasSubstr("\"bias.time\" is a tensor, expected a count"),
                                               HasSubstr("\"bias.moment_1\" has shape [4], the parameter [3]"))));

  // A negative count; an entry for a path the module does not have.
  auto negative = record;
  negative["weight.time"] = StateValue(std::int64_t{-1});
  negative["fc9.weight.time"] = StateValue(std::int64_t{1});
  EXPECT_THAT([&] { (void)AdamConfig().init<AD>().load_named_record(model, negative); },
              ThrowsMessage<FormatError>(AllOf(HasSubstr("\"weight.time\" is -1, expected a count >= 0"),
                                               HasSubstr("unexpected \"fc9.weight.time\""))));
}

}  // namespace
}  // namespace kiln
