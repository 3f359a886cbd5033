#pragma once
/// Stochastic gradient descent (Burn's `Sgd` / `SgdConfig`) with PyTorch's update rule
/// (torch.optim.SGD, torch/optim/sgd.py `_single_tensor_sgd`):
///   grad += weight_decay · param                   (if weight_decay)
///   grad  = momentum rule of momentum.hpp           (if momentum)
///   param -= lr · grad
///
///   auto optim = SgdConfig().with_momentum(MomentumConfig().with_nesterov(true)).init<B>();
///   model = optim.step(0.1, model, GradientsParams<B>::from_grads(loss.backward(), model));
#include <optional>

#include "kiln/config/config.hpp"
#include "kiln/optim/decay.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/optim/fused.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/momentum.hpp"
#include "kiln/optim/optimizer.hpp"

namespace kiln::optim {

/// The SGD rule for one tensor (a simple optimizer, see optimizer.hpp).
class Sgd {
 public:
  /// Per-parameter state: the momentum buffer (absent without momentum).
  template <Backend I>
  struct State {
    std::optional<typename I::FloatTensor> momentum_buffer;

    /// Calls `v("momentum_buffer", momentum_buffer)`: how OptimizerAdaptor::to_named_record
    /// names the field.
    template <class V>
    void visit(V&& v) const {
      v("momentum_buffer", momentum_buffer);
    }
    /// visit with a mutable field (OptimizerAdaptor::load_named_record).
    template <class V>
    void visit_mut(V&& v) {
      v("momentum_buffer", momentum_buffer);
    }
  };

  Sgd(std::optional<MomentumConfig> momentum, std::optional<WeightDecayConfig> weight_decay)
      : momentum_(std::move(momentum)), weight_decay_(std::move(weight_decay)) {}

  /// param - lr · update (see the top of this file). Shapes: param and grad equal. On the Cpu
  /// backend one fused pass (kiln/optim/fused.hpp), which also sets `*finite`.
  /// A thin wrapper over step_primitive, which holds the rule once for every rank.
  template <Backend I, std::size_t D>
  Tensor<I, D> step(double lr, Tensor<I, D> param, Tensor<I, D> grad,
                    std::optional<State<I>>& state, UpdateFinite* finite = nullptr) const {
    return Tensor<I, D>(step_primitive<I>(lr, std::move(param).into_primitive(),
                                          std::move(grad).into_primitive(), state, finite));
  }

  /// step on the backend's rank-erased float primitives (what OptimizerAdaptor calls).
  /// Throws: ShapeError if the gradient's or the momentum buffer's shape differs from the
  ///         parameter's.
  template <Backend I>
  typename I::FloatTensor step_primitive(double lr, typename I::FloatTensor param,
                                         typename I::FloatTensor grad,
                                         std::optional<State<I>>& state,
                                         UpdateFinite* finite = nullptr) const {
    if constexpr (fused::kHasFusedOptim<I>) {
      fused::SgdScalars s;
      if (weight_decay_) s.penalty = static_cast<float>(weight_decay_->penalty);
      if (momentum_) {
        s.has_momentum = true;
        s.nesterov = momentum_->nesterov;
        s.momentum = static_cast<float>(momentum_->momentum);
        s.one_minus_dampening = static_cast<float>(1.0 - momentum_->dampening);
      }
      s.lr = static_cast<float>(lr);
      auto* buffer = state && state->momentum_buffer ? &*state->momentum_buffer : nullptr;
      auto out = fused::sgd_step(param, grad, buffer, s, finite);
      if (momentum_) {
        if (!state) state.emplace();
        state->momentum_buffer = std::move(out.buffer);
      }
      return std::move(out.param);
    } else {
      using T = kiln::detail::ErasedFloat<I>;
      T p(std::move(param));
      T g(std::move(grad));
      if (weight_decay_) g = std::move(g) + p * weight_decay_->penalty;
      if (momentum_) {
        if (!state) state.emplace();
        const double m = momentum_->momentum;
        T buf = state->momentum_buffer
                    ? T(std::move(*state->momentum_buffer)) * m + g * (1.0 - momentum_->dampening)
                    : g;  // first step: the raw gradient, no dampening
        state->momentum_buffer = buf.primitive();
        g = momentum_->nesterov ? std::move(g) + buf * m : std::move(buf);
      }
      return (std::move(p) - std::move(g) * lr).into_primitive();
    }
  }

 private:
  std::optional<MomentumConfig> momentum_;
  std::optional<WeightDecayConfig> weight_decay_;
};

/// Configuration of SGD (Burn's `SgdConfig`: every field optional, none by default, so
/// `SgdConfig().init<B>()` is plain SGD).
struct SgdConfig {
  std::optional<WeightDecayConfig> weight_decay;  ///< L2 penalty added to the gradient
  std::optional<MomentumConfig> momentum;         ///< momentum (Burn's defaults when given)
  /// Clipping of all gradients before the step (Burn's field name for SGD).
  std::optional<GradientClippingConfig> gradient_clipping;

  KILN_CONFIG(SgdConfig, (), (weight_decay, momentum, gradient_clipping))

  /// The optimizer for modules on the autodiff backend B.
  /// Throws: ConfigError naming the field (weight_decay.penalty < 0, momentum.momentum < 0,
  ///         a non-finite value, gradient_clipping threshold <= 0).
  template <AutodiffBackend B>
  OptimizerAdaptor<Sgd, B> init() const {
    check();
    return OptimizerAdaptor<Sgd, B>(
        Sgd(momentum, weight_decay),
        gradient_clipping ? std::optional(gradient_clipping->init()) : std::nullopt);
  }

  /// Throws: ConfigError as init.
  void check() const;
};

}  // namespace kiln::optim
