#pragma once
/// AdamW (Burn's `AdamW` / `AdamWConfig`, Loshchilov & Hutter, "Decoupled Weight Decay
/// Regularization", https://arxiv.org/abs/1711.05101) with PyTorch's update rule
/// (torch.optim.AdamW, torch/optim/adamw.py `_single_tensor_adamw`):
///   param *= 1 - lr · weight_decay        (decoupled: the decay never enters m or v, and is
///                                           scaled by lr, as PyTorch and Burn do)
///   param -= Adam's delta on the raw gradient (adam.hpp)
/// Defaults are Burn's: β1 0.9, β2 0.999, ε 1e-5, weight_decay 1e-4 (PyTorch's: eps 1e-8,
/// weight_decay 1e-2).
///
///   auto optim = AdamWConfig().with_weight_decay(0.01).init<B>();
#include <optional>

#include "kiln/config/config.hpp"
#include "kiln/optim/adam.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/optimizer.hpp"

namespace kiln::optim {

/// The AdamW rule for one tensor (a simple optimizer, see optimizer.hpp).
class AdamW {
 public:
  template <Backend I>
  using State = AdaptiveMomentum::State<I>;

  AdamW(AdaptiveMomentum momentum, double weight_decay)
      : momentum_(momentum), weight_decay_(weight_decay) {}

  /// param · (1 - lr · weight_decay) - delta. Shapes: param and grad equal. On the Cpu
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
        return momentum_.fused_step_primitive<I>(lr, param, grad, state, std::nullopt,
                                                 lr * weight_decay_, finite);
      }
    }
    using T = kiln::detail::ErasedFloat<I>;
    T delta(momentum_.delta_primitive<I>(lr, std::move(grad), state));
    const double decay = lr * weight_decay_;
    T p(std::move(param));
    if (decay != 0.0) p = std::move(p) * (1.0 - decay);
    return (std::move(p) - std::move(delta)).into_primitive();
  }

 private:
  AdaptiveMomentum momentum_;
  double weight_decay_;
};

/// Configuration of AdamW (Burn's `AdamWConfig`).
struct AdamWConfig {
  double beta_1 = 0.9;         ///< decay of the first moment, in [0, 1)
  double beta_2 = 0.999;       ///< decay of the second moment, in [0, 1)
  double epsilon = 1e-5;       ///< added to the denominator (>= 0); PyTorch's default is 1e-8
  double weight_decay = 1e-4;  ///< decoupled decay rate (>= 0): param *= 1 - lr · weight_decay
  bool amsgrad = false;        ///< AMSGrad, as torch.optim.AdamW(amsgrad=True)
  std::optional<GradientClippingConfig> grad_clipping;  ///< clipping before each step

  KILN_CONFIG(AdamWConfig, (), (beta_1, beta_2, epsilon, weight_decay, amsgrad, grad_clipping))

  /// The optimizer for modules on the autodiff backend B.
  /// Throws: ConfigError naming the field (beta_1 or beta_2 outside [0, 1), epsilon < 0,
  ///         weight_decay < 0, a non-finite value, grad_clipping threshold <= 0).
  template <AutodiffBackend B>
  OptimizerAdaptor<AdamW, B> init() const {
    check();
    return OptimizerAdaptor<AdamW, B>(
        AdamW(AdaptiveMomentum{beta_1, beta_2, epsilon, amsgrad}, weight_decay),
        grad_clipping ? std::optional(grad_clipping->init()) : std::nullopt);
  }

  /// Throws: ConfigError as init.
  void check() const;
};

}  // namespace kiln::optim
