#pragma once
/// Huber loss (Burn's `HuberLoss`, PyTorch's `torch.nn.HuberLoss`).
#include <limits>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/nn/loss/reduction.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss {

struct HuberLoss;

/// Configuration of a Huber loss; `init` builds a `HuberLoss`.
///
///   auto huber = HuberLossConfig(1.0).init();
///   auto l = huber.forward(predictions, targets, Reduction::Mean);  // [1]
struct HuberLossConfig {
  /// Where the loss turns from quadratic to linear, in the units of the residual; > 0.
  double delta;

  explicit HuberLossConfig(double delta) : delta(delta) {}
  KILN_CONFIG(HuberLossConfig, (delta), ())

  /// Throws: ConfigError if delta is not positive and finite (PyTorch refuses delta <= 0;
  ///         Burn allows 0, where the loss degenerates to 0).
  HuberLoss init() const;
};

/// For each residual r = predictions - targets:
///
///   loss(r) = 0.5·r²                 if |r| <= delta
///           = delta·(|r| - 0.5·delta) otherwise
///
/// (quadratic near 0 like MseLoss/2, linear beyond delta like delta·L1, continuous with a
/// continuous derivative). The gradient with respect to the predictions is r inside and
/// delta·sign(r) outside, exactly delta at |r| = delta as PyTorch; the targets get its
/// negative. Equal to SmoothL1Loss(beta = delta) times delta.
struct HuberLoss {
  double delta = 1.0;  ///< > 0

  /// The reduced loss.
  /// Shapes: predictions [...], targets [...] (the same shape) -> [1]
  /// Throws: ShapeError if the shapes differ (PyTorch would broadcast them).
  /// Semantics: torch.nn.functional.huber_loss(predictions, targets, reduction, delta).
  template <Backend B, std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& predictions, const Tensor<B, D>& targets,
                       Reduction reduction = Reduction::Mean) const {
    return reduce(forward_no_reduction(predictions, targets), reduction);
  }

  /// The loss of each element (PyTorch's reduction="none").
  /// Shapes: predictions [...], targets [...] -> [...]
  /// Throws: ShapeError if the shapes differ.
  template <Backend B, std::size_t D>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& predictions,
                                    const Tensor<B, D>& targets) const {
    detail::check_same_shape("HuberLoss::forward", "predictions", predictions.shape(), "targets",
                             targets.shape());
    return forward_residuals(predictions - targets);
  }

  /// loss(r) above for residuals computed elsewhere (Burn's forward_residuals).
  /// Shapes: residuals [...] -> [...]
  template <Backend B, std::size_t D>
  Tensor<B, D> forward_residuals(const Tensor<B, D>& residuals) const {
    return residual_losses<B>(kiln::detail::ErasedFloat<B>(residuals)).template typed<D>();
  }

  /// forward_residuals, rank-erased (one copy of the code for every rank; the same ops in
  /// the same order as written on Tensor<B, D>).
  template <Backend B>
  kiln::detail::ErasedFloat<B> residual_losses(const kiln::detail::ErasedFloat<B>& residuals) const {
    const auto magnitude = residuals.abs();
    // The square of the residual clamped to [-delta, delta]: equal to r² where it is kept,
    // and finite elsewhere, so the zero gradient mask_where sends to the branch it drops
    // stays 0 through the product (0·inf would be nan for an infinite residual).
    const auto inside = residuals.clamp(static_cast<float>(-delta), static_cast<float>(delta));
    const auto quadratic = inside * inside * 0.5;
    const auto linear = (magnitude - 0.5 * delta) * delta;
    return quadratic.mask_where(magnitude.greater_elem(delta), linear);
  }

  /// `HuberLoss {delta: 0.5}`
  friend void append_to(std::string& kiln_text, const HuberLoss& loss) {
    ::kiln::StrOut{kiln_text} << "HuberLoss {delta: " << loss.delta << "}";
  }
};

inline HuberLoss HuberLossConfig::init() const {
  if (!(delta > 0.0) || !(delta < std::numeric_limits<double>::infinity())) {
    throw_error<ConfigError>("HuberLossConfig::init: delta must be positive and finite, got ",
                             delta);
  }
  HuberLoss loss;
  loss.delta = delta;
  return loss;
}

}  // namespace kiln::nn::loss
