#pragma once
/// The losses of the JS API (kiln.loss.*, a Learner's loss): their spec as a JS value, read
/// into LossSpec by loss_from_js (train_loss.cpp, also the Embind functions lossForward and
/// lossValidate). Shared by train_learner.cpp (a Learner's loss). In its own TU so that an
/// engine without the Learner (the inference engine, CMakeLists.txt) still has kiln.loss.
#include <emscripten/val.h>

#include "kiln/nn/loss/binary_cross_entropy.hpp"
#include "kiln/nn/loss/cross_entropy.hpp"
#include "kiln/nn/loss/huber.hpp"
#include "kiln/nn/loss/mse.hpp"
#include "kiln/nn/loss/smooth_l1.hpp"
#include "js_tensor.hpp"

namespace kiln_js {

/// The loss of a Learner or of kiln.loss.*: {"kind": "cross_entropy", <CrossEntropyLossConfig
/// fields>}, {"kind": "binary_cross_entropy", <BinaryCrossEntropyLossConfig fields>} or
/// {"kind": "mse", "reduction": ...}; "reduction" may also be "none" (kiln.loss only: the
/// per-row or per-element losses, PyTorch's reduction="none").
struct LossSpec {
  enum class Kind { CrossEntropy, BinaryCrossEntropy, Mse, Huber, SmoothL1 };
  Kind kind = Kind::CrossEntropy;
  bool cross_entropy = true;  ///< kind == CrossEntropy
  kiln::nn::loss::CrossEntropyLossConfig ce;
  kiln::nn::loss::BinaryCrossEntropyLossConfig bce;
  kiln::nn::loss::Reduction reduction = kiln::nn::loss::Reduction::Mean;
  bool none = false;  ///< reduction "none"
  double delta = 1.0;  ///< huber's (kiln::nn::loss::HuberLoss)
  double beta = 1.0;   ///< smooth_l1's (kiln::nn::loss::SmoothL1Loss)

  /// The element losses of a regression loss (mse, huber, smooth_l1) of y against targets.
  template <class T>
  T regression_no_reduction(const T& y, const T& targets) const {
    if (kind == Kind::Huber) return kiln::nn::loss::HuberLoss{delta}.forward_no_reduction(y, targets);
    if (kind == Kind::SmoothL1) return kiln::nn::loss::SmoothL1Loss{beta}.forward_no_reduction(y, targets);
    return kiln::nn::loss::MseLoss{}.forward_no_reduction(y, targets);
  }
};

/// A loss from its spec as a JS value ({"kind": "cross_entropy", ...}, config_js.hpp).
/// Throws ConfigError naming the loss and the field (`loss.mse: unknown field "x" ...`).
LossSpec loss_from_js(const emscripten::val& spec);

/// A Learner's loss: loss_from_js, reduced to one value (not binary cross-entropy, whose
/// targets a Learner does not feed). Throws ConfigError otherwise.
LossSpec learner_loss_from_js(const emscripten::val& loss);

}  // namespace kiln_js
