#pragma once
/// Mean squared error (Burn's `MseLoss`, PyTorch's `torch.nn.MSELoss`).
#include <string>

#include "kiln/nn/loss/reduction.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss {

/// (logits - targets)² element-wise, then the mean or the sum. A module without fields:
///
///   auto l = MseLoss().forward(logits, targets, Reduction::Mean);  // [1]
///
/// On Autodiff<B> the gradient is 2·(logits - targets) (divided by the element count for
/// Mean), to both tensors (with opposite signs) when they require gradients.
struct MseLoss {
  /// The reduced loss.
  /// Shapes: logits [...], targets [...] (the same shape) -> [1]
  /// Throws: ShapeError if the shapes differ (PyTorch broadcasts them with a warning; Kiln
  ///         refuses, since a [batch] vs [batch, 1] mix-up then silently makes a matrix).
  /// Semantics: torch.nn.functional.mse_loss(logits, targets, reduction); a mean over zero
  ///            elements is nan.
  template <Backend B, std::size_t D>
  Tensor<B, 1> forward(const Tensor<B, D>& logits, const Tensor<B, D>& targets,
                       Reduction reduction = Reduction::Mean) const {
    return reduce(forward_no_reduction(logits, targets), reduction);
  }

  /// (logits - targets)² (PyTorch's reduction="none").
  /// Shapes: logits [...], targets [...] -> [...]
  /// Throws: ShapeError if the shapes differ.
  template <Backend B, std::size_t D>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& logits, const Tensor<B, D>& targets) const {
    detail::check_same_shape("MseLoss::forward", "logits", logits.shape(), "targets",
                             targets.shape());
    const auto diff = logits - targets;
    return diff * diff;
  }

  friend void append_to(std::string& kiln_text, const MseLoss&) { ::kiln::StrOut{kiln_text} << "MseLoss"; }
};

}  // namespace kiln::nn::loss
