// The optimizer rules on Wgpu against Cpu (tests/webgpu/cases_optim.mjs): Adam, AdamW and SGD
// run their fused update on both backends (kiln/optim/fused.hpp: the Cpu kernel is bit-for-bit
// the rule's op chain, the Wgpu kernel the same operations in WGSL); Adam with AMSGrad runs
// the op chain on Wgpu against the fused Cpu kernel. Several steps, so that the state written
// by one step is read by the next.
#include <optional>
#include <string>

#include "harness.hpp"
#include "kiln/optim/adam.hpp"
#include "kiln/optim/adamw.hpp"
#include "kiln/optim/sgd.hpp"

namespace kiln {
namespace {

/// Runs `rule` over the gradients in[1..] from the parameter in[0] (learning rate a.lr) and
/// returns what a.output names: 0 the parameter, 1 the first state tensor (Adam's first
/// moment, SGD's momentum buffer), 2 Adam's second moment, 3 AMSGrad's maximum.
template <class B, class Rule, class In>
typename B::FloatTensor run_rule(const Rule& rule, const In& in, const harness::json& a) {
  std::optional<typename Rule::template State<B>> state;
  typename B::FloatTensor param = in[0];
  for (std::size_t k = 1; k < in.size(); ++k) {
    param = rule.template step_primitive<B>(a.value("lr", 0.01), param, in[k], state);
  }
  const int output = a.value("output", 0);
  if (output == 0) return param;
  if constexpr (std::is_same_v<Rule, optim::Sgd>) {
    return state->momentum_buffer.value();
  } else {
    if (output == 1) return state->moment_1;
    if (output == 2) return state->moment_2;
    return state->max_moment_2.value();
  }
}

optim::AdaptiveMomentum adaptive(const harness::json& a) {
  return optim::AdaptiveMomentum{a.value("beta_1", 0.9), a.value("beta_2", 0.999),
                                 a.value("epsilon", 1e-8), a.value("amsgrad", false)};
}

}  // namespace

// a: rule ("adam", "adamw", "sgd"), lr, penalty (Adam's / SGD's L2 weight decay), weight_decay
// (AdamW), beta_1, beta_2, epsilon, amsgrad, momentum / dampening / nesterov (SGD, with
// momentum when `momentum` is given), output.
KILN_HARNESS_BACKEND_OP(optim_rule, {
  const std::string rule = a.value("rule", "adam");
  std::optional<optim::WeightDecayConfig> decay;
  if (a.contains("penalty")) decay = optim::WeightDecayConfig(a["penalty"].get<double>());
  if (rule == "adam") return run_rule<B>(optim::Adam(adaptive(a), decay), in, a);
  if (rule == "adamw") return run_rule<B>(optim::AdamW(adaptive(a), a.value("weight_decay", 0.01)), in, a);
  std::optional<optim::MomentumConfig> momentum;
  if (a.contains("momentum")) {
    momentum = optim::MomentumConfig{a["momentum"].get<double>(), a.value("dampening", 0.0),
                                     a.value("nesterov", false)};
  }
  return run_rule<B>(optim::Sgd(momentum, decay), in, a);
});

}  // namespace kiln
