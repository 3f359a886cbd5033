#pragma once
/// Smooth L1 loss (PyTorch's `torch.nn.SmoothL1Loss`; Burn's HuberLoss divided by delta).
#include <cmath>
#include <limits>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/loss/reduction.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss {

struct SmoothL1Loss;

/// Configuration of a smooth L1 loss; `init` builds a `SmoothL1Loss`.
///
///   auto l1 = SmoothL1LossConfig().with_beta(0.5).init();
///   auto l = l1.forward(predictions, targets, Reduction::Mean);  // [1]
struct SmoothL1LossConfig {
  /// Where the loss turns from quadratic to linear, in the units of the residual; >= 0
  /// (0 is exactly the L1 loss). PyTorch's default 1.
  double beta = 1.0;

  SmoothL1LossConfig() = default;
  KILN_CONFIG(SmoothL1LossConfig, (), (beta))

  /// Throws: ConfigError if beta is negative, nan or infinite (PyTorch refuses beta < 0).
  void check() const {
    if (!(beta >= 0.0) || !(beta < std::numeric_limits<double>::infinity())) {
      throw_error<ConfigError>("SmoothL1LossConfig::init: beta must be >= 0 and finite, got ",
                               beta);
    }
  }
  /// Throws: ConfigError as check().
  SmoothL1Loss init() const;
};

/// For each residual r = predictions - targets:
///
///   loss(r) = 0.5·r² / beta      if |r| < beta
///           = |r| - 0.5·beta     otherwise
///
/// and |r| for beta = 0 (never 0/0). The gradient with respect to the predictions is r/beta
/// inside and sign(r) outside (±1 at |r| = beta from both sides); the targets get its
/// negative. HuberLoss(delta) = delta · SmoothL1Loss(beta = delta).
struct SmoothL1Loss {
  double beta = 1.0;  ///< >= 0

  /// The reduced loss.
  /// Shapes:    predictions [...], targets [...] (the same shape) -> [1]
  /// Throws:    ShapeError if the shapes differ (PyTorch would broadcast them).
  /// Semantics: torch.nn.functional.smooth_l1_loss(predictions, targets, reduction, beta).
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
    detail::check_same_shape("SmoothL1Loss::forward", "predictions", predictions.shape(),
                             "targets", targets.shape());
    return forward_residuals(predictions - targets);
  }

  /// loss(r) above for residuals computed elsewhere.
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
    if (beta == 0.0) return magnitude;  // L1: the quadratic branch would be 0/0
    // The residual clamped to [-beta, beta], squared: r² where it is kept and finite
    // elsewhere, so the branch mask_where drops passes a zero gradient, never 0·inf.
    const auto inside = residuals.clamp(static_cast<float>(-beta), static_cast<float>(beta));
    const auto quadratic = inside * inside * (0.5 / beta);
    const auto linear = magnitude - 0.5 * beta;
    return quadratic.mask_where(magnitude.greater_equal_elem(beta), linear);
  }

  /// `SmoothL1Loss {beta: 0.5}`
  friend void append_to(std::string& kiln_text, const SmoothL1Loss& loss) {
    ::kiln::StrOut{kiln_text} << "SmoothL1Loss {beta: " << loss.beta << "}";
  }
};

inline SmoothL1Loss SmoothL1LossConfig::init() const {
  check();
  SmoothL1Loss loss;
  loss.beta = beta;
  return loss;
}

}  // namespace kiln::nn::loss
