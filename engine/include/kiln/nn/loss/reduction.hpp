#pragma once
/// Reduction of per-element losses to one value (Burn's `burn::nn::loss::Reduction`,
/// PyTorch's `reduction="mean" | "sum"`), and the host-side checks the losses share.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::loss {

/// How a loss turns its per-element values into the [1] tensor that `forward` returns.
/// Mean: the average (a weighted average for CrossEntropyLoss with class weights or an
/// ignore_index, as PyTorch); Sum: the sum. Burn's third value, Auto, is Mean for every loss
/// here and is not provided; PyTorch's "none" is each loss's `forward_no_reduction`.
/// JSON: the strings "mean" and "sum" (lower case, as PyTorch's argument).
enum class Reduction { Mean, Sum };

/// "mean" or "sum".
std::string_view reduction_name(Reduction reduction) noexcept;
/// Prints reduction_name (the form modules print their fields in).
void append_to(std::string& out, Reduction reduction);
}  // namespace kiln::nn::loss

/// Reduction's JSON form: the strings "mean" and "sum".
template <>
struct kiln::config::Codec<kiln::nn::loss::Reduction> {
  static Value encode(kiln::nn::loss::Reduction reduction);
  /// Throws: ConfigError naming the value if it is not the string "mean" or "sum" (a config
  ///         field reports it as `CrossEntropyLossConfig.reduction: expected "mean" or "sum",
  ///         got the string "avg"`).
  static kiln::nn::loss::Reduction decode(const Value& json);
};

namespace kiln::nn::loss {

/// losses.mean() or losses.sum(): [...] -> [1]. A mean over zero elements is nan (PyTorch).
template <Backend B, std::size_t D>
Tensor<B, 1> reduce(const Tensor<B, D>& losses, Reduction reduction) {
  return reduction == Reduction::Sum ? losses.sum() : losses.mean();
}

namespace detail {

/// `[i, j, ...]`, the multi-index of flat element `flat` of a tensor of shape `shape`.
std::string multi_index(const Shape& shape, std::int64_t flat);

/// Throws ShapeError `<op>: <lhs_name> <shape> and <rhs_name> <shape> differ in shape` unless
/// the shapes are equal.
void check_same_shape(std::string_view op, std::string_view lhs_name, const Shape& lhs,
                      std::string_view rhs_name, const Shape& rhs);

/// Class targets of cross-entropy (i32 [batch]): each must lie in [0, num_classes) unless it
/// equals `ignore_index`. Throws IndexError naming the first bad target and its row.
void check_class_targets(std::string_view op, const TensorData& targets, std::int64_t num_classes,
                         std::optional<std::int32_t> ignore_index);

/// Int targets of binary cross-entropy: each must be 0 or 1. Throws ValueError naming the
/// first other value and its index.
void check_binary_targets(std::string_view op, const TensorData& targets);

/// Probabilities (f32): each must lie in [0, 1] (nan is not). Throws ValueError naming the
/// first other value and its index (PyTorch's binary_cross_entropy raises there too).
void check_probabilities(std::string_view op, const TensorData& input);

/// Weights given in a loss config: non-empty, each finite and >= 0. Throws ConfigError
/// `<op>: weights[i] must be finite and non-negative, got <w>` or `<op>: weights is empty`.
void check_weights(std::string_view op, const std::vector<float>& weights);

/// A label-smoothing factor: in [0, 1]. Throws ConfigError `<op>: smoothing must be in
/// [0, 1], got <s>` (nan included).
void check_smoothing(std::string_view op, double smoothing);

}  // namespace detail
}  // namespace kiln::nn::loss
