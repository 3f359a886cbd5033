// The optimizer cases of the shared PyTorch reference (tests/native/cases/cases.jsonl,
// category optim): 3-step trajectories of SGD with momentum/dampening/weight decay, SGD
// with Nesterov momentum, AdamW's decoupled weight decay, and clipping by the global norm.
// The hyper-parameters below are the cases' `params` (the case text spells them out).
#include "support/cases.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kiln/kiln.hpp"
#include "optim/models.hpp"

namespace kiln {
namespace {

using namespace optim;
using test::AD;

std::vector<float> row(const std::vector<float>& flat, std::size_t i, std::size_t n) {
  return std::vector<float>(flat.begin() + static_cast<std::ptrdiff_t>(i * n),
                            flat.begin() + static_cast<std::ptrdiff_t>((i + 1) * n));
}

/// Runs the case's 3 steps on a one-parameter module and checks every step.
template <class Optim>
void expect_trajectory(const std::string& id, Optim optim, double lr) {
  const auto c = test::load_case(id);
  const auto p0 = c.input("p0").to_vec<float>();
  const auto grads = c.input("grads").to_vec<float>();
  const auto expected = c.expected("params_after_each_step").to_vec<float>();
  const std::size_t n = p0.size();
  auto model = test::make_vec1(p0);
  for (std::size_t step = 0; step < 3; ++step) {
    model = optim.step(lr, model, test::grads_for(model, row(grads, step, n)));
    SCOPED_TRACE(id + ", step " + std::to_string(step + 1));
    model.p.val().to_data().assert_approx_eq(
        TensorData(Shape{static_cast<std::int64_t>(n)}, row(expected, step, n)), c.tolerance());
  }
}

TEST(OptimCases, SgdMomentumDampeningWeightDecay) {
  // lr 0.1, momentum 0.9, dampening 0.5, weight_decay 0.1, nesterov false
  auto optim = SgdConfig()
                   .with_momentum(MomentumConfig().with_momentum(0.9).with_dampening(0.5))
                   .with_weight_decay(WeightDecayConfig(0.1))
                   .init<AD>();
  expect_trajectory("sgd_momentum_dampening_weight_decay", optim, 0.1);
}

TEST(OptimCases, SgdNesterov) {
  // lr 0.1, momentum 0.9, dampening 0, weight_decay 0.01, nesterov true
  auto optim = SgdConfig()
                   .with_momentum(
                       MomentumConfig().with_momentum(0.9).with_dampening(0.0).with_nesterov(true))
                   .with_weight_decay(WeightDecayConfig(0.01))
                   .init<AD>();
  expect_trajectory("sgd_nesterov", optim, 0.1);
}

TEST(OptimCases, AdamWDecoupledWeightDecay) {
  // lr 0.01, beta1 0.9, beta2 0.999, eps 1e-8, weight_decay 0.1
  auto optim = AdamWConfig()
                   .with_beta_1(0.9)
                   .with_beta_2(0.999)
                   .with_epsilon(1e-8)
                   .with_weight_decay(0.1)
                   .init<AD>();
  expect_trajectory("adamw_decoupled_weight_decay", optim, 0.01);
}

TEST(OptimCases, ClipGradNormGlobal) {
  const auto c = test::load_case("clip_grad_norm_global");
  const auto a = ParamId::next(), b = ParamId::next(), cc = ParamId::next();
  GradientsParams<AD> grads;
  grads.insert(a, Tensor<Cpu, 1>::from_data(c.input("grad_a")));
  grads.insert(b, Tensor<Cpu, 2>::from_data(c.input("grad_b")));
  grads.insert(cc, Tensor<Cpu, 1>::from_data(c.input("grad_c")));

  const double total = clip_grad_norm(grads, 6.5);
  TensorData(Shape{1}, std::vector<float>{static_cast<float>(total)})
      .assert_approx_eq(c.expected("total_norm"), c.tolerance());
  grads.get<1>(a)->to_data().assert_approx_eq(c.expected("clipped_a"), c.tolerance());
  grads.get<2>(b)->to_data().assert_approx_eq(c.expected("clipped_b"), c.tolerance());
  grads.get<1>(cc)->to_data().assert_approx_eq(c.expected("clipped_c"), c.tolerance());

  // Below the threshold (norm 5 < 10) nothing changes.
  GradientsParams<AD> small;
  small.insert(a, Tensor<Cpu, 1>::from_data(c.input("grad_a")));
  small.insert(b, Tensor<Cpu, 2>::from_data(c.input("grad_b")));
  const double total_ab = clip_grad_norm(small, 10.0);
  TensorData(Shape{1}, std::vector<float>{static_cast<float>(total_ab)})
      .assert_approx_eq(c.expected("total_norm_ab"), c.tolerance());
  small.get<1>(a)->to_data().assert_approx_eq(c.expected("unclipped_a"), c.tolerance());
  small.get<2>(b)->to_data().assert_approx_eq(c.expected("unclipped_b"), c.tolerance());
}

/// The same case through an optimizer: SGD with lr 1 from zeros moves each parameter by
/// minus its clipped gradient, so the step must use the global norm of all three.
template <Backend B>
struct Three {
  module::Param<Tensor<B, 1>> a;
  module::Param<Tensor<B, 2>> b;
  module::Param<Tensor<B, 1>> c;
  KILN_MODULE(Three, a, b, c)
};

TEST(OptimCases, ClipGradNormGlobalThroughTheOptimizer) {
  const auto c = test::load_case("clip_grad_norm_global");
  Three<AD> model;
  model.a = module::Param<Tensor<AD, 1>>(Tensor<AD, 1>::zeros(Shape{2}));
  model.b = module::Param<Tensor<AD, 2>>(Tensor<AD, 2>::zeros(Shape{2, 1}));
  model.c = module::Param<Tensor<AD, 1>>(Tensor<AD, 1>::zeros(Shape{1}));
  const auto loss = test::dot(model.a, Tensor<AD, 1>::from_data(c.input("grad_a"))) +
                    test::dot(model.b, Tensor<AD, 2>::from_data(c.input("grad_b"))) +
                    test::dot(model.c, Tensor<AD, 1>::from_data(c.input("grad_c")));
  auto optim = SgdConfig().with_gradient_clipping(GradientClippingConfig::norm(6.5)).init<AD>();
  model = optim.step(1.0, model, GradientsParams<AD>::from_grads(loss.backward(), model));
  (-model.a.val()).to_data().assert_approx_eq(c.expected("clipped_a"), c.tolerance());
  (-model.b.val()).to_data().assert_approx_eq(c.expected("clipped_b"), c.tolerance());
  (-model.c.val()).to_data().assert_approx_eq(c.expected("clipped_c"), c.tolerance());
}

}  // namespace
}  // namespace kiln
