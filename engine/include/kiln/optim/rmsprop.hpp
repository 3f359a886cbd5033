#pragma once
/// RMSProp (Burn's `RmsProp` / `RmsPropConfig`; Hinton's lecture 6e, centered variant from
/// Graves, https://arxiv.org/abs/1308.0850) with PyTorch's update rule (torch.optim.RMSprop,
/// torch/optim/rmsprop.py `_single_tensor_rmsprop`; square_avg, grad_avg and buf start at 0):
///   grad += weight_decay · param                           (if weight_decay)
///   square_avg = α · square_avg + (1 - α) · grad²
///   centered:  grad_avg = α · grad_avg + (1 - α) · grad
///              avg = sqrt(square_avg - grad_avg²) + ε
///   else:      avg = sqrt(square_avg) + ε
///   momentum > 0:  buf = momentum · buf + grad / avg;  param -= lr · buf
///   else:          param -= lr · grad / avg
/// Burn's RmsProp applies the same rule. Defaults are Burn's: α 0.99, momentum 0.9,
/// ε 1e-5, not centered (PyTorch's: momentum 0, eps 1e-8).
///
///   auto optim = RmsPropConfig().with_momentum(0.0).with_centered(true).init<B>();
#include <optional>

#include "kiln/config/config.hpp"
#include "kiln/optim/decay.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/optim/fused.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/optimizer.hpp"

namespace kiln::optim {

/// The RMSProp rule for one tensor (a simple optimizer, see optimizer.hpp).
class RmsProp {
 public:
  /// Per-parameter state (Burn's `RmsPropState`).
  template <Backend I>
  struct State {
    typename I::FloatTensor square_avg;                      ///< running mean of grad²
    std::optional<typename I::FloatTensor> grad_avg;         ///< running mean of grad (centered)
    std::optional<typename I::FloatTensor> momentum_buffer;  ///< buf (momentum > 0)

    /// Calls `v(name, field)` for each field, in declaration order ("square_avg",
    /// "grad_avg", "momentum_buffer"): how OptimizerAdaptor::to_named_record names them.
    template <class V>
    void visit(V&& v) const {
      v("square_avg", square_avg);
      v("grad_avg", grad_avg);
      v("momentum_buffer", momentum_buffer);
    }
    /// visit with mutable fields (OptimizerAdaptor::load_named_record).
    template <class V>
    void visit_mut(V&& v) {
      v("square_avg", square_avg);
      v("grad_avg", grad_avg);
      v("momentum_buffer", momentum_buffer);
    }
  };

  RmsProp(double alpha, double momentum, double epsilon, bool centered,
          std::optional<WeightDecayConfig> weight_decay)
      : alpha_(alpha),
        momentum_(momentum),
        epsilon_(epsilon),
        centered_(centered),
        weight_decay_(std::move(weight_decay)) {}

  /// The updated parameter (see the top of this file). Shapes: param and grad equal.
  /// A thin wrapper over step_primitive, which holds the rule once for every rank.
  template <Backend I, std::size_t D>
  Tensor<I, D> step(double lr, Tensor<I, D> param, Tensor<I, D> grad,
                    std::optional<State<I>>& state) const {
    return Tensor<I, D>(step_primitive<I>(lr, std::move(param).into_primitive(),
                                          std::move(grad).into_primitive(), state));
  }

  /// step on the backend's rank-erased float primitives (what OptimizerAdaptor calls;
  /// `finite` is not set: the rule runs as an op chain).
  /// Throws: ShapeError if the gradient's or a state tensor's shape differs from the
  ///         parameter's.
  template <Backend I>
  typename I::FloatTensor step_primitive(double lr, typename I::FloatTensor param,
                                         typename I::FloatTensor grad,
                                         std::optional<State<I>>& state,
                                         UpdateFinite* /*finite*/ = nullptr) const {
    using T = kiln::detail::ErasedFloat<I>;
    T p(std::move(param));
    T g(std::move(grad));
    if (weight_decay_) g = std::move(g) + p * weight_decay_->penalty;
    T square_avg = state ? T(std::move(state->square_avg)) * alpha_ + g * g * (1.0 - alpha_)
                         : g * g * (1.0 - alpha_);
    std::optional<T> grad_avg;
    if (centered_) {
      grad_avg = state && state->grad_avg
                     ? T(std::move(*state->grad_avg)) * alpha_ + g * (1.0 - alpha_)
                     : g * (1.0 - alpha_);
    }
    T avg = (grad_avg ? square_avg - *grad_avg * *grad_avg : square_avg).sqrt() + epsilon_;
    T direction = std::move(g) / std::move(avg);
    std::optional<T> buf;
    if (momentum_ > 0.0) {
      buf = state && state->momentum_buffer
                ? T(std::move(*state->momentum_buffer)) * momentum_ + direction
                : direction;
      direction = *buf;
    }
    state = State<I>{std::move(square_avg).into_primitive(),
                     grad_avg ? std::optional(std::move(*grad_avg).into_primitive()) : std::nullopt,
                     buf ? std::optional(std::move(*buf).into_primitive()) : std::nullopt};
    return (std::move(p) - std::move(direction) * lr).into_primitive();
  }

 private:
  double alpha_;
  double momentum_;
  double epsilon_;
  bool centered_;
  std::optional<WeightDecayConfig> weight_decay_;
};

/// Configuration of RMSProp (Burn's `RmsPropConfig`).
struct RmsPropConfig {
  double alpha = 0.99;    ///< smoothing constant of the running averages, in [0, 1]
  double momentum = 0.9;  ///< momentum factor (>= 0; 0 disables the buffer); PyTorch's is 0
  double epsilon = 1e-5;  ///< added to the denominator (>= 0); PyTorch's is 1e-8
  bool centered = false;  ///< normalise by an estimate of the gradient's variance
  std::optional<WeightDecayConfig> weight_decay;        ///< L2 penalty added to the gradient
  std::optional<GradientClippingConfig> grad_clipping;  ///< clipping before each step

  KILN_CONFIG(RmsPropConfig, (), (alpha, momentum, epsilon, centered, weight_decay, grad_clipping))

  /// The optimizer for modules on the autodiff backend B.
  /// Throws: ConfigError naming the field (alpha outside [0, 1], momentum or epsilon < 0,
  ///         weight_decay.penalty < 0, a non-finite value, grad_clipping threshold <= 0).
  template <AutodiffBackend B>
  OptimizerAdaptor<RmsProp, B> init() const {
    check();
    return OptimizerAdaptor<RmsProp, B>(
        RmsProp(alpha, momentum, epsilon, centered, weight_decay),
        grad_clipping ? std::optional(grad_clipping->init()) : std::nullopt);
  }

  /// Throws: ConfigError as init.
  void check() const;
};

}  // namespace kiln::optim
