// The fused optimizer updates of the Cpu backend (kiln/optim/fused.hpp) against the rules'
// element-wise op chains (adam.hpp, adamw.hpp, sgd.hpp), which stay their definition: the
// same rule runs on Cpu (fused, one pass) and on UnfusedCpu (the Cpu ops under another
// backend type, so the rule takes its op-chain path), and every parameter and state value
// must agree bit for bit after each of several steps, for sizes that end in a partial vector
// of every instruction set (ctest runs this on SSE2, AVX2 and AVX-512). Then the finiteness
// the fused pass reports, its shape checks, and OptimizerAdaptor::stage / commit (train_step's
// guard without an optimizer copy).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "optim/models.hpp"

namespace kiln {

/// The Cpu backend under another type: the optimizer rules take their op-chain path on it.
struct UnfusedCpu : Cpu {};
template <>
inline constexpr bool optim::fused::kHasFusedOptim<UnfusedCpu> = false;

namespace {

using namespace optim;
using test::AD;

static_assert(fused::kHasFusedOptim<Cpu>);
static_assert(!fused::kHasFusedOptim<UnfusedCpu>);

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

template <Backend I>
Tensor<I, 1> vec_on(const std::vector<float>& v) {
  return Tensor<I, 1>::from_data(
      TensorData(Shape{static_cast<std::int64_t>(v.size())}, std::vector<float>(v)));
}

template <Backend I>
std::vector<std::uint32_t> bits_of(const Tensor<I, 1>& t) {
  return bits(t.to_data().template to_vec<float>());
}

/// Every state field as printable text: counts as numbers, tensors as their bit patterns.
template <class S>
std::vector<std::string> fields(const std::optional<S>& state) {
  std::vector<std::string> out;
  if (!state) return {"no state"};
  state->visit([&](std::string_view name, const auto& value) {
    using T = std::remove_cvref_t<decltype(value)>;
    std::string text(name);
    if constexpr (std::is_same_v<T, std::int64_t>) {
      text += "=" + std::to_string(value);
    } else if constexpr (std::is_same_v<T, CpuTensor>) {
      for (auto b : bits(CpuOps::into_data(value).template to_vec<float>())) {
        text += " " + std::to_string(b);
      }
    } else {
      if (!value) {
        text += " absent";
      } else {
        for (auto b : bits(CpuOps::into_data(*value).template to_vec<float>())) {
          text += " " + std::to_string(b);
        }
      }
    }
    out.push_back(std::move(text));
  });
  return out;
}

/// Random values of a scale that keeps Adam's and SGD's arithmetic away from overflow, with a
/// few zeros (0/0 is possible with epsilon 0 and a zero moment).
std::vector<float> random_values(std::size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> normal(0.f, scale);
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i % 11 == 5 ? 0.f : normal(rng);
  return v;
}

/// `steps` steps of `rule` with lr on both backends from the same random start; checks the
/// parameter and every state field bit for bit after each step.
template <class O>
void expect_fused_equals_chain(const O& rule, double lr, const char* what) {
  for (const std::size_t n : {1u, 3u, 4u, 7u, 8u, 15u, 16u, 17u, 33u, 100u, 1027u}) {
    SCOPED_TRACE(std::string(what) + ", n = " + std::to_string(n));
    std::mt19937 rng(static_cast<unsigned>(n));
    const auto p0 = random_values(n, rng, 1.f);
    Tensor<Cpu, 1> p_fused = vec_on<Cpu>(p0);
    Tensor<UnfusedCpu, 1> p_chain = vec_on<UnfusedCpu>(p0);
    std::optional<typename O::template State<Cpu>> s_fused;
    std::optional<typename O::template State<UnfusedCpu>> s_chain;
    for (int step = 1; step <= 4; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const auto g = random_values(n, rng, 0.5f);
      UpdateFinite finite;
      p_fused = rule.step(lr, p_fused, vec_on<Cpu>(g), s_fused, &finite);
      p_chain = rule.step(lr, p_chain, vec_on<UnfusedCpu>(g), s_chain);
      ASSERT_EQ(bits_of(p_fused), bits_of(p_chain));
      // The reported finiteness is that of the chain's result (epsilon 0 with a zero
      // gradient and moment gives 0/0 = nan: a step the guard refuses).
      const auto chain_values = p_chain.to_data().template to_vec<float>();
      bool chain_finite = true;
      for (const float x : chain_values) chain_finite = chain_finite && std::isfinite(x);
      EXPECT_TRUE(finite.known);
      EXPECT_TRUE(finite.grad);
      EXPECT_EQ(finite.param, chain_finite);
      // UnfusedCpu's primitives are CpuTensors too: the fields print alike.
      ASSERT_EQ(fields(s_fused), fields(s_chain));
    }
  }
}

AdaptiveMomentum momentum(double eps = 1e-5, bool amsgrad = false) {
  return AdaptiveMomentum{0.9, 0.999, eps, amsgrad};
}

TEST(FusedOptim, AdamIsItsOpChainBitForBit) {
  expect_fused_equals_chain(Adam(momentum(), std::nullopt), 1e-3, "Adam");
  expect_fused_equals_chain(Adam(momentum(1e-8), WeightDecayConfig(0.01)), 0.1,
                            "Adam, weight decay");
  expect_fused_equals_chain(Adam(momentum(1e-5, true), std::nullopt), 0.05, "Adam, amsgrad");
  expect_fused_equals_chain(Adam(momentum(0.0, true), WeightDecayConfig(0.5)), 0.3,
                            "Adam, amsgrad, weight decay, epsilon 0");
}

TEST(FusedOptim, AdamWIsItsOpChainBitForBit) {
  expect_fused_equals_chain(AdamW(momentum(), 1e-4), 1e-3, "AdamW");
  expect_fused_equals_chain(AdamW(momentum(1e-8, true), 0.1), 0.2, "AdamW, amsgrad");
  expect_fused_equals_chain(AdamW(momentum(), 0.0), 0.01, "AdamW, no decay");
}

TEST(FusedOptim, SgdIsItsOpChainBitForBit) {
  expect_fused_equals_chain(Sgd(std::nullopt, std::nullopt), 0.1, "SGD");
  expect_fused_equals_chain(Sgd(std::nullopt, WeightDecayConfig(0.01)), 0.1, "SGD, weight decay");
  expect_fused_equals_chain(Sgd(MomentumConfig(), std::nullopt), 0.05, "SGD, momentum");
  expect_fused_equals_chain(Sgd(MomentumConfig().with_dampening(0.0).with_nesterov(true),
                                WeightDecayConfig(1e-3)),
                            0.05, "SGD, nesterov, weight decay");
  expect_fused_equals_chain(Sgd(MomentumConfig().with_momentum(0.0), std::nullopt), 0.5,
                            "SGD, momentum 0");
}

/// One fused SGD step of p with gradient g and lr: what it reports.
UpdateFinite sgd_finite(std::vector<float> p, std::vector<float> g, double lr) {
  const Sgd sgd(std::nullopt, std::nullopt);
  std::optional<Sgd::State<Cpu>> state;
  UpdateFinite finite;
  (void)sgd.step(lr, vec_on<Cpu>(p), vec_on<Cpu>(g), state, &finite);
  return finite;
}

TEST(FusedOptim, ReportsANonFiniteGradientWhereverItSits) {
  for (const std::size_t n : {1u, 5u, 16u, 21u, 64u}) {
    for (const std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      for (const float bad : {kNaN, kInf, -kInf}) {
        SCOPED_TRACE("n = " + std::to_string(n) + ", at " + std::to_string(at));
        std::vector<float> g(n, 0.25f);
        g[at] = bad;
        const UpdateFinite f = sgd_finite(std::vector<float>(n, 1.f), g, 0.1);
        EXPECT_TRUE(f.known);
        EXPECT_FALSE(f.grad);
        EXPECT_FALSE(f.param);  // 1 - 0.1·(nan or ±inf) is not finite either
      }
    }
  }
}

TEST(FusedOptim, ReportsAnUpdateThatOverflowsFromFiniteValues) {
  // 3e38 - 1e30 · 1e9 = -inf in float32; the other elements stay finite.
  const UpdateFinite f = sgd_finite({1.f, 3e38f, 2.f, 1.f, 1.f}, {0.f, 1e9f, 0.f, 0.f, 0.f}, 1e30);
  EXPECT_TRUE(f.grad);
  EXPECT_FALSE(f.param);
  // Finite values whose sum would overflow are finite.
  const UpdateFinite ok = sgd_finite({3e38f, 3e38f, 3e38f}, {0.f, 0.f, 0.f}, 0.1);
  EXPECT_TRUE(ok.grad);
  EXPECT_TRUE(ok.param);
}

TEST(FusedOptim, OtherBackendsLeaveTheCheckToTheAdaptor) {
  const Sgd sgd(std::nullopt, std::nullopt);
  std::optional<Sgd::State<UnfusedCpu>> state;
  UpdateFinite finite;
  (void)sgd.step(0.1, vec_on<UnfusedCpu>({1.f}), vec_on<UnfusedCpu>({kNaN}), state, &finite);
  EXPECT_FALSE(finite.known);
}

TEST(FusedOptim, OperandsOfAnotherShapeAreAShapeError) {
  const Adam adam(momentum(), std::nullopt);
  std::optional<Adam::State<Cpu>> state;
  EXPECT_THROW((void)adam.step(0.1, vec_on<Cpu>({1.f, 2.f, 3.f}), vec_on<Cpu>({1.f, 2.f}), state),
               ShapeError);
  EXPECT_FALSE(state);
  const Sgd sgd(MomentumConfig(), std::nullopt);
  std::optional<Sgd::State<Cpu>> buffer;
  (void)sgd.step(0.1, vec_on<Cpu>({1.f, 2.f}), vec_on<Cpu>({1.f, 2.f}), buffer);
  EXPECT_THROW((void)sgd.step(0.1, vec_on<Cpu>({1.f, 2.f, 3.f}), vec_on<Cpu>({1.f, 2.f, 3.f}),
                              buffer),
               ShapeError);  // a momentum buffer of 2 values for a parameter of 3
}

TEST(OptimizerStage, ChangesNothingUntilCommittedAndThenIsTheStep) {
  auto staged_optim = AdamConfig().init<AD>();
  auto stepped_optim = AdamConfig().init<AD>();
  test::Pair<AD> model;
  model.weight = module::Param<Tensor<AD, 2>>(test::mat(2, 3, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  model.bias = module::Param<Tensor<AD, 1>>(test::vec({1.f, -2.f, 3.f}));
  const std::vector<float> gw{0.5f, -1.f, 2.f, 0.25f, 3.f, -4.f}, gb{1.f, -2.f, 0.5f};

  auto staged = staged_optim.stage(0.1, model, test::grads_for(model, gw, gb), true);
  EXPECT_FALSE(staged_optim.has_state(model.weight.id()));  // not applied yet
  EXPECT_EQ(test::values(model.weight), (std::vector<float>{1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  ASSERT_EQ(staged.checks.size(), 2u);
  EXPECT_EQ(staged.checks[0].id, model.weight.id());  // in visit order
  EXPECT_EQ(staged.checks[1].id, model.bias.id());
  for (const auto& c : staged.checks) {
    EXPECT_TRUE(c.grad_finite);
    EXPECT_TRUE(c.update_finite);
  }
  const auto committed = staged_optim.commit(std::move(staged));
  const auto stepped = stepped_optim.step(0.1, model, test::grads_for(model, gw, gb));
  EXPECT_EQ(bits(test::values(committed.weight)), bits(test::values(stepped.weight)));
  EXPECT_EQ(bits(test::values(committed.bias)), bits(test::values(stepped.bias)));
  EXPECT_EQ(staged_optim.to_named_record(committed), stepped_optim.to_named_record(stepped));

  // A staged step that is dropped leaves the state of the first step.
  const auto record = staged_optim.to_named_record(committed);
  {
    auto dropped = staged_optim.stage(1e39, committed, test::grads_for(committed, gw, gb), true);
    EXPECT_FALSE(dropped.checks[0].update_finite);  // lr 1e39 overflows float32
    EXPECT_TRUE(dropped.checks[0].grad_finite);
  }
  EXPECT_EQ(staged_optim.to_named_record(committed), record);
}

TEST(OptimizerStage, ReportsANonFiniteGradientAsGiven) {
  auto sgd = SgdConfig().with_momentum(MomentumConfig()).init<AD>();
  test::Pair<AD> model;
  model.weight = module::Param<Tensor<AD, 2>>(test::mat(2, 3, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  model.bias = module::Param<Tensor<AD, 1>>(test::vec({1.f, 2.f, 3.f}));
  auto staged = sgd.stage(0.1, model,
                          test::grads_for(model, {1.f, 1.f, 1.f, 1.f, 1.f, 1.f}, {1.f, kInf, 1.f}),
                          true);
  ASSERT_EQ(staged.checks.size(), 2u);
  EXPECT_TRUE(staged.checks[0].grad_finite);
  EXPECT_FALSE(staged.checks[1].grad_finite);
  EXPECT_EQ(CpuOps::into_data(staged.checks[1].grad).to_vec<float>(),
            (std::vector<float>{1.f, kInf, 1.f}));
  EXPECT_FALSE(sgd.has_state(model.bias.id()));
}

}  // namespace
}  // namespace kiln
