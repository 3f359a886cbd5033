#pragma once
/// Adam (Burn's `Adam` / `AdamConfig`, Kingma & Ba, https://arxiv.org/abs/1412.6980) with
/// PyTorch's update rule (torch.optim.Adam, torch/optim/adam.py `_single_tensor_adam`), at
/// step t = 1, 2, ... of each parameter:
///   grad += weight_decay · param                       (if weight_decay: L2, coupled)
///   m = β1 · m + (1 - β1) · grad                       (m, v start at 0)
///   v = β2 · v + (1 - β2) · grad²
///   v̂ = amsgrad ? (v_max = max(v_max, v)) : v
///   param -= lr / (1 - β1^t) · m / (sqrt(v̂) / sqrt(1 - β2^t) + ε)
/// Burn's AdaptiveMomentum computes the same quantity rearranged
/// (m · sqrt(1 - β2^t) / (1 - β1^t) / (sqrt(v̂) + ε · sqrt(1 - β2^t))).
///
/// Defaults are Burn's: β1 0.9, β2 0.999, ε 1e-5 (PyTorch's eps is 1e-8: set
/// `with_epsilon(1e-8)` to reproduce a PyTorch run exactly), no weight decay, no amsgrad.
///
///   auto optim = AdamConfig().with_beta_1(0.9).init<B>();
#include <cmath>
#include <cstdint>
#include <optional>

#include "kiln/config/config.hpp"
#include "kiln/optim/decay.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/optim/fused.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/optimizer.hpp"

namespace kiln::optim {

/// The moment estimates shared by Adam and AdamW (Burn's `AdaptiveMomentum`).
struct AdaptiveMomentum {
  double beta_1;
  double beta_2;
  double epsilon;
  bool amsgrad;

  /// Per-parameter state (Burn's `AdaptiveMomentumState`).
  template <Backend I>
  struct State {
    std::int64_t time = 0;                                ///< steps taken (t of the last step)
    typename I::FloatTensor moment_1;                     ///< m
    typename I::FloatTensor moment_2;                     ///< v
    std::optional<typename I::FloatTensor> max_moment_2;  ///< v_max (amsgrad only)

    /// Calls `v(name, field)` for each field, in declaration order ("time", "moment_1",
    /// "moment_2", "max_moment_2"): how OptimizerAdaptor::to_named_record names them.
    template <class V>
    void visit(V&& v) const {
      v("time", time);
      v("moment_1", moment_1);
      v("moment_2", moment_2);
      v("max_moment_2", max_moment_2);
    }
    /// visit with mutable fields (OptimizerAdaptor::load_named_record).
    template <class V>
    void visit_mut(V&& v) {
      v("time", time);
      v("moment_1", moment_1);
      v("moment_2", moment_2);
      v("max_moment_2", max_moment_2);
    }
  };

  /// Updates (or creates) the moments with `grad` and returns the change of the parameter,
  /// (lr / (1 - β1^t)) · m / (sqrt(v̂) / sqrt(1 - β2^t) + ε) (the scalar factor computed in
  /// double, as PyTorch's step_size). A thin wrapper over delta_primitive.
  template <Backend I, std::size_t D>
  Tensor<I, D> delta(double lr, Tensor<I, D> grad, std::optional<State<I>>& state) const {
    return Tensor<I, D>(delta_primitive<I>(lr, std::move(grad).into_primitive(), state));
  }

  /// delta on the backend's rank-erased float primitive (one copy for every rank).
  template <Backend I>
  typename I::FloatTensor delta_primitive(double lr, typename I::FloatTensor grad_primitive,
                                          std::optional<State<I>>& state) const {
    using T = kiln::detail::ErasedFloat<I>;
    T grad(std::move(grad_primitive));
    T squared = grad * grad;
    T m = state ? T(std::move(state->moment_1)) * beta_1 + grad * (1.0 - beta_1)
                : std::move(grad) * (1.0 - beta_1);
    T v = state ? T(std::move(state->moment_2)) * beta_2 + std::move(squared) * (1.0 - beta_2)
                : std::move(squared) * (1.0 - beta_2);
    const std::int64_t time = state ? state->time + 1 : 1;
    std::optional<T> v_max;
    if (amsgrad) {
      // PyTorch starts v_max at zeros, so after step 1 it equals v (v >= 0).
      v_max = state && state->max_moment_2 ? T(std::move(*state->max_moment_2)).max_pair(v) : v;
    }
    const double t = static_cast<double>(time);
    const double bias_correction_1 = 1.0 - std::pow(beta_1, t);
    const double bias_correction_2_sqrt = std::sqrt(1.0 - std::pow(beta_2, t));
    T denom = (v_max ? *v_max : v).sqrt() / bias_correction_2_sqrt + epsilon;
    T change = m / std::move(denom) * (lr / bias_correction_1);
    state = State<I>{time, std::move(m).into_primitive(), std::move(v).into_primitive(),
                     v_max ? std::optional(std::move(*v_max).into_primitive()) : std::nullopt};
    return std::move(change).into_primitive();
  }

  /// The whole update on the Cpu backend in one pass (kiln/optim/fused.hpp), bit-for-bit
  /// `param - delta(lr, grad (+ param · penalty), state)` for Adam, or with `decay` (AdamW's
  /// lr · weight_decay, when not 0) `param · (1 - decay) - delta(lr, grad, state)`. Updates
  /// or creates `state` as delta does; sets `*finite` when given. A thin wrapper over
  /// fused_step_primitive.
  template <Backend I, std::size_t D>
  Tensor<I, D> fused_step(double lr, const Tensor<I, D>& param, const Tensor<I, D>& grad,
                          std::optional<State<I>>& state, std::optional<double> penalty,
                          double decay, UpdateFinite* finite) const {
    return Tensor<I, D>(fused_step_primitive<I>(lr, param.primitive(), grad.primitive(), state,
                                                penalty, decay, finite));
  }

  /// fused_step on the backend's rank-erased float primitives (one copy for every rank).
  template <Backend I>
  typename I::FloatTensor fused_step_primitive(double lr, const typename I::FloatTensor& param,
                                               const typename I::FloatTensor& grad,
                                               std::optional<State<I>>& state,
                                               std::optional<double> penalty, double decay,
                                               UpdateFinite* finite) const {
    const std::int64_t time = state ? state->time + 1 : 1;
    const double t = static_cast<double>(time);
    const double bias_correction_1 = 1.0 - std::pow(beta_1, t);
    const double bias_correction_2_sqrt = std::sqrt(1.0 - std::pow(beta_2, t));
    fused::AdamScalars s;
    s.amsgrad = amsgrad;
    if (penalty) s.penalty = static_cast<float>(*penalty);
    if (decay != 0.0) s.decay_factor = static_cast<float>(1.0 - decay);
    s.beta_1 = static_cast<float>(beta_1);
    s.one_minus_beta_1 = static_cast<float>(1.0 - beta_1);
    s.beta_2 = static_cast<float>(beta_2);
    s.one_minus_beta_2 = static_cast<float>(1.0 - beta_2);
    s.bias_correction_2_sqrt = static_cast<float>(bias_correction_2_sqrt);
    s.epsilon = static_cast<float>(epsilon);
    s.step_size = static_cast<float>(lr / bias_correction_1);
    auto* max_moment_2 = state && state->max_moment_2 ? &*state->max_moment_2 : nullptr;
    auto out =
        fused::adam_step(param, grad, state ? &state->moment_1 : nullptr,
                         state ? &state->moment_2 : nullptr, max_moment_2, s, finite);
    state = State<I>{time, std::move(out.moment_1), std::move(out.moment_2),
                     std::move(out.max_moment_2)};
    return std::move(out.param);
  }
};

/// The Adam rule for one tensor (a simple optimizer, see optimizer.hpp).
class Adam {
 public:
  template <Backend I>
  using State = AdaptiveMomentum::State<I>;

  Adam(AdaptiveMomentum momentum, std::optional<WeightDecayConfig> weight_decay)
      : momentum_(momentum), weight_decay_(std::move(weight_decay)) {}

  /// param - delta (see the top of this file). Shapes: param and grad equal. On the Cpu
  /// backend one fused pass (AdaptiveMomentum::fused_step), which also sets `*finite`.
  /// A thin wrapper over step_primitive, which holds the rule once for every rank.
  template <Backend I, std::size_t D>
  Tensor<I, D> step(double lr, Tensor<I, D> param, Tensor<I, D> grad,
                    std::optional<State<I>>& state, UpdateFinite* finite = nullptr) const {
    return Tensor<I, D>(step_primitive<I>(lr, std::move(param).into_primitive(),
                                          std::move(grad).into_primitive(), state, finite));
  }

  /// step on the backend's rank-erased float primitives (what OptimizerAdaptor calls).
  /// Throws: ShapeError if the gradient's or a moment's shape differs from the parameter's.
  template <Backend I>
  typename I::FloatTensor step_primitive(double lr, typename I::FloatTensor param,
                                         typename I::FloatTensor grad,
                                         std::optional<State<I>>& state,
                                         UpdateFinite* finite = nullptr) const {
    if constexpr (fused::kHasFusedOptim<I>) {
      if (fused::fuses_adam<I>(momentum_.amsgrad)) {
        return momentum_.fused_step_primitive<I>(
            lr, param, grad, state,
            weight_decay_ ? std::optional(weight_decay_->penalty) : std::nullopt, 0.0, finite);
      }
    }
    using T = kiln::detail::ErasedFloat<I>;
    T g(std::move(grad));
    if (weight_decay_) g = std::move(g) + T(param) * weight_decay_->penalty;
    return (T(std::move(param)) -
            T(momentum_.delta_primitive<I>(lr, std::move(g).into_primitive(), state)))
        .into_primitive();
  }

 private:
  AdaptiveMomentum momentum_;
  std::optional<WeightDecayConfig> weight_decay_;
};

/// Configuration of Adam (Burn's `AdamConfig`).
struct AdamConfig {
  double beta_1 = 0.9;    ///< decay of the first moment, in [0, 1)
  double beta_2 = 0.999;  ///< decay of the second moment, in [0, 1)
  double epsilon = 1e-5;  ///< added to the denominator (>= 0); Burn's default, PyTorch's is 1e-8
  bool amsgrad = false;   ///< AMSGrad: normalise by the running maximum of v
  std::optional<WeightDecayConfig> weight_decay;        ///< L2 penalty added to the gradient
  std::optional<GradientClippingConfig> grad_clipping;  ///< clipping before each step

  KILN_CONFIG(AdamConfig, (), (beta_1, beta_2, epsilon, amsgrad, weight_decay, grad_clipping))

  /// The optimizer for modules on the autodiff backend B.
  /// Throws: ConfigError naming the field (beta_1 or beta_2 outside [0, 1), epsilon < 0,
  ///         weight_decay.penalty < 0, a non-finite value, grad_clipping threshold <= 0).
  template <AutodiffBackend B>
  OptimizerAdaptor<Adam, B> init() const {
    check();
    return OptimizerAdaptor<Adam, B>(
        Adam(AdaptiveMomentum{beta_1, beta_2, epsilon, amsgrad}, weight_decay),
        grad_clipping ? std::optional(grad_clipping->init()) : std::nullopt);
  }

  /// Throws: ConfigError as init.
  void check() const;
};

}  // namespace kiln::optim
