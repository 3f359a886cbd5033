#pragma once
/// Cross-entropy on class logits with Int class targets (Burn's `CrossEntropyLoss`,
/// PyTorch's `torch.nn.CrossEntropyLoss`): class weights, label smoothing, ignore_index.
#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/loss/host_check.hpp"
#include "kiln/nn/loss/reduction.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss {

template <Backend B>
struct CrossEntropyLoss;

/// Configuration of a cross-entropy loss; `init` builds a `CrossEntropyLoss`.
///
///   auto loss = CrossEntropyLossConfig().with_smoothing(0.1).init<B>(device);
///   auto l = loss.forward(logits, targets);  // [batch_size, num_classes], [batch_size] -> [1]
///
/// Field names are Burn's (`weights`, `smoothing`, `logits`); `ignore_index` and `reduction`
/// are PyTorch's arguments (Burn's `pad_tokens` is a list of ignored targets: use one
/// ignore_index). JSON holds every field; absent optionals are null.
struct CrossEntropyLossConfig {
  /// Per-class weights [num_classes] (PyTorch's `weight`): the loss of a row whose target is
  /// c is multiplied by weights[c], and the mean divides by the sum of those weights.
  std::optional<std::vector<float>> weights;
  /// Label smoothing ε in [0, 1] (PyTorch's `label_smoothing`, Szegedy et al. 2016,
  /// arXiv:1512.00567): the target distribution becomes (1 - ε)·one_hot + ε/num_classes.
  std::optional<double> smoothing;
  /// true: the input holds logits (log_softmax is applied); false: it holds probabilities,
  /// whose log is taken after clamping them to >= sqrt(FLT_MIN) ≈ 1.08e-19 (Burn's rule).
  bool logits = true;
  /// Rows whose target equals this value add nothing and are left out of the mean
  /// (PyTorch's `ignore_index`, whose default there is -100; here unset by default, so every
  /// target must be a class index unless an ignore_index is given).
  std::optional<std::int32_t> ignore_index;
  /// How `forward` reduces the per-row losses (PyTorch's `reduction`; Burn always means).
  Reduction reduction = Reduction::Mean;

  CrossEntropyLossConfig() = default;
  KILN_CONFIG(CrossEntropyLossConfig, (), (weights, smoothing, logits, ignore_index, reduction))

  /// Checks the fields and builds the loss. `device` is Burn's argument; the loss keeps its
  /// weights on the host and makes them on the logits' device in each forward.
  /// Throws: ConfigError if smoothing is outside [0, 1] or nan, or weights is empty or holds
  ///         a negative or non-finite value.
  template <Backend B>
  CrossEntropyLoss<B> init(const Device<B>& device = {}) const;
};

/// The cross-entropy between class logits and Int class targets (torch.nn.CrossEntropyLoss
/// with class-index targets, Burn's CrossEntropyLoss). For row i with target t_i, log
/// probabilities lp_i = log_softmax(logits_i) and class weights w (all 1 without weights):
///
///   loss_i = -(1 - ε)·w[t_i]·lp_i[t_i] - (ε / num_classes)·Σ_c w[c]·lp_i[c]
///
/// (ε = smoothing, 0 by default; with ε = 0 the second term is left out, so a logit of -inf
/// in another class does not turn the loss into nan); loss_i = 0 for a row whose target is
/// ignore_index. Mean: Σ loss_i / Σ w[t_i] over the rows not ignored (the count of those
/// rows without weights; 0/0 = nan when every row is ignored, as PyTorch >= 1.11); Sum:
/// Σ loss_i (0 when every row is ignored).
///
/// Stable for logits of any size (log_softmax subtracts the row maximum). Every step is a
/// tensor op, so on Autodiff<B> the gradient flows to the logits (softmax(logits) minus the
/// smoothed, weighted one-hot, scaled by the reduction), and ignored rows get exactly 0.
template <Backend B>
struct CrossEntropyLoss {
  std::optional<std::vector<float>> weights;  ///< [num_classes], on the host
  std::optional<double> smoothing;            ///< ε in [0, 1]
  bool logits = true;                         ///< false: the input holds probabilities
  std::optional<std::int32_t> ignore_index;   ///< rows with this target are ignored
  Reduction reduction = Reduction::Mean;      ///< used by forward
  KILN_MODULE(CrossEntropyLoss, weights, smoothing, logits, ignore_index, reduction)

  /// The reduced loss.
  ///
  /// Shapes: logits [batch_size, num_classes], targets [batch_size] (Int) -> [1]
  /// Throws: ShapeError  if targets' length is not batch_size, num_classes is 0, or weights
  ///                     has not num_classes entries;
  ///         IndexError  naming the first row whose target is neither in [0, num_classes) nor
  ///                     ignore_index (the targets are read on the host to check them;
  ///                     on Wgpu only when they came from host data: host_check.hpp).
  /// Semantics: torch.nn.functional.cross_entropy(logits, targets, weight, ignore_index,
  ///            reduction, label_smoothing) with class-index targets.
  Tensor<B, 1> forward(const Tensor<B, 2>& logits, const Tensor<B, 1, Int>& targets) const {
    return finish(per_row(logits, targets), reduction);
  }

  /// The loss of each row, loss_i above (PyTorch's reduction="none"); 0 for ignored rows.
  /// Shapes: logits [batch_size, num_classes], targets [batch_size] -> [batch_size]
  /// Throws: as forward.
  Tensor<B, 1> forward_no_reduction(const Tensor<B, 2>& logits,
                                    const Tensor<B, 1, Int>& targets) const {
    return per_row(logits, targets).losses;
  }

 private:
  static constexpr const char* kOp = "CrossEntropyLoss::forward";

  /// Per-row losses, plus what the mean needs: the mask of ignored rows and the gathered
  /// weights w[t_i] (0 on ignored rows).
  struct Rows {
    Tensor<B, 1> losses;
    std::optional<Tensor<B, 1, Bool>> ignored;
    std::optional<Tensor<B, 1>> target_weights;
  };

  Rows per_row(const Tensor<B, 2>& input, const Tensor<B, 1, Int>& targets) const {
    const auto [batch_size, num_classes] = input.dims();
    const auto [num_targets] = targets.dims();
    if (num_targets != batch_size) {
      throw_error<ShapeError>(kOp, ": targets ", targets.shape(),
                              " do not match the batch of logits ", input.shape(), " (",
                              num_targets, " != ", batch_size, ")");
    }
    if (num_classes == 0) {
      throw_error<ShapeError>(kOp, ": logits ", input.shape(), " have no classes");
    }
    if (weights && static_cast<std::int64_t>(weights->size()) != num_classes) {
      throw_error<ShapeError>(kOp, ": weights has ", weights->size(), " entries but logits ",
                              input.shape(), " have ", num_classes, " classes");
    }
    if (const auto values = detail::data_for_check(targets)) {
      detail::check_class_targets(kOp, *values, num_classes, ignore_index);
    }

    // Log-probabilities [batch_size, num_classes].
    const Tensor<B, 2> log_probs =
        logits ? activation::log_softmax(input, 1) : input.clamp_min(kMinProbability).log();

    std::optional<Tensor<B, 1, Bool>> ignored;
    Tensor<B, 1, Int> safe_targets = targets;  // ignored rows read class 0, then masked
    if (ignore_index) {
      ignored = targets.equal_elem(*ignore_index);
      safe_targets = targets.mask_fill(*ignored, 0);
    }
    const auto picked = log_probs.gather(1, safe_targets.template unsqueeze_dim<2>(1))
                            .template squeeze_dim<1>(1);  // lp_i[t_i], [batch_size]
    Tensor<B, 1> losses = -picked;

    std::optional<Tensor<B, 1>> class_weights, target_weights;
    if (weights) {
      class_weights =
          Tensor<B, 1>::from_data(TensorData(Shape{num_classes}, *weights), input.device());
      target_weights = class_weights->gather(0, safe_targets);
      losses = losses * *target_weights;
    }
    const double epsilon = smoothing.value_or(0.0);
    if (epsilon > 0.0) {
      // Σ_c w[c]·lp_i[c], [batch_size]
      const Tensor<B, 2> weighted =
          class_weights ? log_probs * class_weights->template unsqueeze<2>() : log_probs;
      const auto smooth = -weighted.sum_dim(1).template squeeze_dim<1>(1);
      losses = losses * (1.0 - epsilon) + smooth * (epsilon / static_cast<double>(num_classes));
    }
    if (ignored) {
      losses = losses.mask_fill(*ignored, 0.f);
      if (target_weights) target_weights = target_weights->mask_fill(*ignored, 0.f);
    }
    return Rows{losses, ignored, target_weights};
  }

  static Tensor<B, 1> finish(const Rows& rows, Reduction reduction) {
    if (reduction == Reduction::Sum) return rows.losses.sum();
    // PyTorch's mean: divide by the total weight of the rows that count.
    if (rows.target_weights) return rows.losses.sum() / rows.target_weights->sum();
    if (rows.ignored) return rows.losses.sum() / rows.ignored->bool_not().float_().sum();
    return rows.losses.mean();
  }

  /// Probabilities are clamped to at least sqrt(FLT_MIN) = 2^-63 before the log (Burn's
  /// clamp_probs).
  static constexpr float kMinProbability = 0x1p-63f;
};

template <Backend B>
CrossEntropyLoss<B> CrossEntropyLossConfig::init(const Device<B>&) const {
  if (smoothing) detail::check_smoothing("CrossEntropyLossConfig::init", *smoothing);
  if (weights) detail::check_weights("CrossEntropyLossConfig::init", *weights);
  CrossEntropyLoss<B> loss;
  loss.weights = weights;
  loss.smoothing = smoothing;
  loss.logits = logits;
  loss.ignore_index = ignore_index;
  loss.reduction = reduction;
  return loss;
}

}  // namespace kiln::nn::loss
