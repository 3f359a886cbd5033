#pragma once
/// Binary cross-entropy on probabilities or on logits (Burn's `BinaryCrossEntropyLoss`,
/// PyTorch's `torch.nn.BCELoss` and `torch.nn.BCEWithLogitsLoss`).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/loss/host_check.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/loss/reduction.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss {

template <Backend B>
struct BinaryCrossEntropyLoss;

/// The kinds binary cross-entropy takes as targets: Int (0 or 1) and Float (in [0, 1]).
template <class K>
concept BinaryTargetKind = std::is_same_v<K, Int> || std::is_same_v<K, Float>;

/// Configuration of a binary cross-entropy loss; `init` builds a `BinaryCrossEntropyLoss`.
///
///   auto bce = BinaryCrossEntropyLossConfig().with_logits(true).init<B>(device);
///   auto l = bce.forward(logits, targets);  // [batch_size] or [batch_size, n] -> [1]
///
/// Field names are Burn's; `reduction` is PyTorch's argument (Burn always means).
struct BinaryCrossEntropyLossConfig {
  /// Weights (Burn's rule): for an input of rank 1, [w_0, w_1], the weight of an element
  /// whose target is 0 or 1; for rank >= 2 (multi-label), one weight per entry of the last
  /// dim, broadcast over the others (PyTorch's `weight` of shape [n]). Multiplies the loss.
  std::optional<std::vector<float>> weights;
  /// Label smoothing ε in [0, 1]: targets t become t·(1 - ε) + ε/2, i.e. towards 1/2 for
  /// every label (Keras' `label_smoothing`; Burn divides ε by the number of labels for
  /// rank >= 2 instead of by 2: Kiln keeps each label a two-class problem).
  std::optional<double> smoothing;
  /// false: the input holds probabilities in [0, 1] (BCELoss); true: logits (BCEWithLogits).
  bool logits = false;
  /// How `forward` reduces the element losses; Mean divides by the element count also with
  /// weights (PyTorch's BCELoss mean, unlike CrossEntropyLoss's weighted mean).
  Reduction reduction = Reduction::Mean;
  /// PyTorch's pos_weight (BCEWithLogitsLoss; logits = true only): the weight of the
  /// positive term, one entry per label of the last dim (broadcast over the others), or one
  /// entry for any input; loss = -(pos_weight·t·log σ(x) + (1 - t)·log(1 - σ(x))).
  /// Not one of the config's JSON fields (its JSON form predates it): set it with
  /// with_pos_weight; kiln.loss reads "pos_weight" from a loss spec (bindings/train_learner.cpp).
  std::optional<std::vector<float>> pos_weight;

  BinaryCrossEntropyLossConfig() = default;
  KILN_CONFIG(BinaryCrossEntropyLossConfig, (), (weights, smoothing, logits, reduction))
  /// This config with pos_weight set.
  BinaryCrossEntropyLossConfig with_pos_weight(std::vector<float> value) const {
    auto c = *this;
    c.pos_weight = std::move(value);
    return c;
  }

  /// Checks the fields and builds the loss (`device` is Burn's argument; the weights stay on
  /// the host and are made on the input's device in each forward).
  /// Throws: ConfigError if smoothing is outside [0, 1] or nan, weights or pos_weight is
  ///         empty or holds a negative or non-finite value, or pos_weight is given without
  ///         logits (PyTorch's BCELoss has none).
  template <Backend B>
  BinaryCrossEntropyLoss<B> init(const Device<B>& device = {}) const;
};

/// Binary cross-entropy of each element x with target t (0 or 1, or in [0, 1] when soft):
///
///   probabilities (logits = false):  -(t·max(log x, -100) + (1 - t)·max(log(1 - x), -100))
///   logits (logits = true):          max(x, 0) - x·t + log1p(exp(-|x|))
///
/// times the element's weight. The clamp of the logs at -100 is PyTorch's: a certain wrong
/// prediction costs 100, and x = t ∈ {0, 1} costs 0. The logit form is log(1 + exp(x)) - x·t
/// written so that nothing overflows: logits of ±100 give 100 or 0, never inf or nan; it is
/// computed as softplus(x) - x·t, the same function, whose derivative at x = 0 is sigmoid(0)
/// (composing max and abs op by op would give 1 there).
///
/// Gradients (Autodiff<B>) are PyTorch's: with respect to logits, (sigmoid(x) - t)·w; with
/// respect to probabilities, (x - t)·w / max(x·(1 - x), 1e-12), finite also at x ∈ {0, 1}
/// (the derivative of the clamped logs would be 0/0 = nan there, so the forward adds
/// (x - detach(x))·detach(that gradient), which is exactly 0 and carries it). Float targets
/// that require gradients get (max(log(1 - x), -100) - max(log x, -100))·w from the
/// probability form (PyTorch: the unclamped logs, ±inf at x ∈ {0, 1}) and -x·w from the
/// logit form (as PyTorch).
template <Backend B>
struct BinaryCrossEntropyLoss {
  std::optional<std::vector<float>> weights;  ///< [2] or [n], on the host
  std::optional<double> smoothing;            ///< ε in [0, 1]
  bool logits = false;                        ///< true: the input holds logits
  Reduction reduction = Reduction::Mean;      ///< used by forward
  std::optional<std::vector<float>> pos_weight;  ///< [1] or [n] (logits only), on the host
  KILN_MODULE(BinaryCrossEntropyLoss, weights, smoothing, logits, reduction, pos_weight)

  /// `weights: [3, 7], smoothing: 0.05, logits: true, reduction: mean` (and `, pos_weight:
  /// [2]` when set).
  void describe_fields(::kiln::StrOut& out) const {
    out << "weights: ";
    module::describe_field(out, weights);
    out << ", smoothing: ";
    module::describe_field(out, smoothing);
    out << ", logits: " << (logits ? "true" : "false") << ", reduction: ";
    module::describe_field(out, reduction);
    if (pos_weight) {
      out << ", pos_weight: ";
      module::describe_field(out, pos_weight);
    }
  }

  /// The reduced loss.
  ///
  /// Shapes: input [batch_size] or [batch_size, n] (any rank >= 1), targets of the same
  ///         shape, Int (0 or 1) or Float -> [1]
  /// Throws: ShapeError if the shapes differ, or weights has not 2 entries (rank 1) or n
  ///                    entries (rank >= 2, n the last dim);
  ///         ValueError if an Int target is not 0 or 1, or (logits = false) an input value
  ///                    is outside [0, 1] or nan (as PyTorch's BCELoss); the values are read
  ///                    on the host for these checks (on Wgpu only when made from host data:
  ///                    host_check.hpp).
  /// Semantics: torch.nn.functional.binary_cross_entropy (logits = false) and
  ///            binary_cross_entropy_with_logits (logits = true), with reduction.
  template <std::size_t D, BinaryTargetKind K>
  Tensor<B, 1> forward(const Tensor<B, D>& input, const Tensor<B, D, K>& targets) const {
    return reduce(forward_no_reduction(input, targets), reduction);
  }

  /// The loss of each element (PyTorch's reduction="none").
  /// Shapes: input [...], targets [...] -> [...]
  /// Throws: as forward.
  template <std::size_t D, BinaryTargetKind K>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& input,
                                    const Tensor<B, D, K>& targets) const {
    detail::check_same_shape(kOp, "input", input.shape(), "targets", targets.shape());
    check_label_weights(input.shape());
    if constexpr (std::is_same_v<K, Int>) {
      if (const auto values = detail::data_for_check(targets)) detail::check_binary_targets(kOp, *values);
    }
    if (!logits) {
      if (const auto values = detail::data_for_check(input)) detail::check_probabilities(kOp, *values);
    }
    return losses(Erased(input), Erased(targets.float_())).template typed<D>();
  }

 /// The element losses times a per-element weight (PyTorch's `weight` argument of
  /// binary_cross_entropy[_with_logits], broadcast to the input's shape; gradients reach it).
  /// Shapes: input [...], targets [...], weight [...] (the same shape) -> [...]
  /// Throws: as forward_no_reduction; ShapeError if weight's shape differs.
  template <std::size_t D, BinaryTargetKind K>
  Tensor<B, D> forward_no_reduction(const Tensor<B, D>& input, const Tensor<B, D, K>& targets,
                                    const Tensor<B, D>& weight) const {
    detail::check_same_shape(kOp, "input", input.shape(), "weight", weight.shape());
    return forward_no_reduction(input, targets) * weight;
  }

 private:
  static constexpr const char* kOp = "BinaryCrossEntropyLoss::forward";
  // The loss itself is rank-erased (one copy of the code for every rank; the same ops in the
  // same order as written on Tensor<B, D>): forward_no_reduction checks and wraps it.
  using Erased = kiln::detail::ErasedFloat<B>;

  /// Throws ShapeError unless pos_weight has 1 or n entries and weights 2 (rank 1) or n
  /// (n the last dim of `shape`, the input's).
  void check_label_weights(const Shape& shape) const {
    const std::size_t D = shape.rank();
    if (pos_weight && pos_weight->size() != 1 &&
        static_cast<std::int64_t>(pos_weight->size()) != shape[D - 1]) {
      throw_error<ShapeError>(kOp, ": pos_weight has ", pos_weight->size(), " entries but input ",
                              shape, " has ", shape[D - 1], " labels in its last dim (give 1 or ",
                              shape[D - 1], ")");
    }
    if (weights) {
      const std::int64_t needed = D == 1 ? 2 : shape[D - 1];
      if (static_cast<std::int64_t>(weights->size()) != needed) {
        throw ShapeError(
            D == 1 ? str_cat(kOp, ": weights has ", weights->size(), " entries but input ", shape,
                             " has rank 1, which needs 2 (for targets 0 and 1)")
                   : str_cat(kOp, ": weights has ", weights->size(), " entries but input ", shape,
                             " has ", needed, " labels in its last dim"));
      }
    }
  }

  /// `values` [n] as [1, ..., 1, n] of rank `rank` on `device`.
  static Erased last_dim_vector(std::vector<float> values, std::size_t rank,
                                const Device<B>& device) {
    const Shape shape{static_cast<std::int64_t>(values.size())};
    const Shape lifted = derived::unsqueeze_shape(shape, rank);
    return Erased::from_data(TensorData(shape, std::move(values)), device).reshape(lifted.dims());
  }

  /// The element losses of checked input and targets (`hard`, as Float).
  Erased losses(const Erased& input, const Erased& hard) const {
    const std::size_t D = input.shape().rank();
    const double epsilon = smoothing.value_or(0.0);
    const Erased t = epsilon > 0.0 ? hard * (1.0 - epsilon) + epsilon / 2.0 : hard;

    Erased losses = logits ? (pos_weight ? pos_weighted_logit_losses(input, t)
                                         : input.softplus() - input * t)
                           : probability_losses(input, t);
    if (weights) {
      if (D == 1) {
        // w_0·(1 - t) + w_1·t: weights[t] exactly for t ∈ {0, 1}, and the linear
        // interpolation for soft targets (those before smoothing).
        losses = losses * (hard * (*weights)[1] + (1.0 - hard) * (*weights)[0]);
      } else {
        losses = losses * last_dim_vector(*weights, D, input.device());
      }
    }
    return losses;
  }

  /// (1 - t)·x + (1 + (pos_weight - 1)·t)·softplus(-x): PyTorch's stable form of
  /// -(pw·t·log σ(x) + (1 - t)·log(1 - σ(x))).
  Erased pos_weighted_logit_losses(const Erased& x, const Erased& t) const {
    const auto log_weight = [&]() -> Erased {
      if (pos_weight->size() == 1) return t * ((*pos_weight)[0] - 1.0) + 1.0;
      std::vector<float> v(*pos_weight);
      for (auto& w : v) w -= 1.f;
      return t * last_dim_vector(std::move(v), x.shape().rank(), x.device()) + 1.0;
    }();
    return (1.0 - t) * x + log_weight * (-x).softplus();
  }

  /// PyTorch's binary_cross_entropy on probabilities p (checked to lie in [0, 1]).
  static Erased probability_losses(const Erased& p, const Erased& t) {
    const auto clamped_logs = [](const Erased& x, const Erased& target) {
      const auto log_x = x.unary(UnaryOp::Log).clamp_min(-100.f);
      const auto log_1mx = (-x).unary(UnaryOp::Log1p).clamp_min(-100.f);
      return -(target * log_x + (1.0 - target) * log_1mx);
    };
    if constexpr (AutodiffBackend<B>) {
      if (p.is_require_grad()) {
        // The value from untracked p, and PyTorch's gradient through a term that is 0.
        const auto p0 = p.untracked();
        const auto t0 = t.untracked();
        const auto value = clamped_logs(p0, t);
        const auto slope = (p0 - t0) / (p0 * (1.0 - p0)).clamp_min(1e-12f);
        return value + (p - p0) * slope;
      }
    }
    return clamped_logs(p, t);
  }
};

template <Backend B>
BinaryCrossEntropyLoss<B> BinaryCrossEntropyLossConfig::init(const Device<B>&) const {
  if (smoothing) detail::check_smoothing("BinaryCrossEntropyLossConfig::init", *smoothing);
  if (weights) detail::check_weights("BinaryCrossEntropyLossConfig::init", *weights);
  if (pos_weight) {
    if (!logits) {
      throw_error<ConfigError>(
          "BinaryCrossEntropyLossConfig::init: pos_weight needs logits = true "
          "(PyTorch's BCEWithLogitsLoss; BCELoss on probabilities has none)");
    }
    detail::check_weights("BinaryCrossEntropyLossConfig::init: pos_weight", *pos_weight);
  }
  BinaryCrossEntropyLoss<B> loss;
  loss.pos_weight = pos_weight;
  loss.weights = weights;
  loss.smoothing = smoothing;
  loss.logits = logits;
  loss.reduction = reduction;
  return loss;
}

}  // namespace kiln::nn::loss
