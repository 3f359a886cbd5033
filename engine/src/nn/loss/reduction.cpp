// Reduction's names and JSON form, and the host-side checks of the losses (targets,
// probabilities, config values), run before any tensor op.
#include "kiln/nn/loss/reduction.hpp"

#include <cmath>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::nn::loss {

std::string_view reduction_name(Reduction reduction) noexcept {
  return reduction == Reduction::Sum ? "sum" : "mean";
}

void append_to(std::string& kiln_text, Reduction reduction) {
  ::kiln::StrOut{kiln_text} << reduction_name(reduction);
}

}  // namespace kiln::nn::loss

namespace kiln::config {

Value Codec<nn::loss::Reduction>::encode(nn::loss::Reduction reduction) {
  return Value(nn::loss::reduction_name(reduction));
}

nn::loss::Reduction Codec<nn::loss::Reduction>::decode(const Value& json) {
  if (json.is_string("mean")) return nn::loss::Reduction::Mean;
  if (json.is_string("sum")) return nn::loss::Reduction::Sum;
  throw_error<ConfigError>("expected \"mean\" or \"sum\", got ", describe(json));
}

}  // namespace kiln::config

namespace kiln::nn::loss {

namespace detail {

std::string multi_index(const Shape& shape, std::int64_t flat) {
  std::vector<std::int64_t> index(shape.rank());
  for (std::size_t d = shape.rank(); d-- > 0;) {
    const std::int64_t size = shape[d];
    index[d] = size > 0 ? flat % size : 0;
    flat = size > 0 ? flat / size : 0;
  }
  std::string out = "[";
  for (std::size_t d = 0; d < index.size(); ++d) out += str_cat(d ? ", " : "", index[d]);
  return out + "]";
}

void check_same_shape(std::string_view op, std::string_view lhs_name, const Shape& lhs,
                      std::string_view rhs_name, const Shape& rhs) {
  if (lhs != rhs) {
    throw_error<ShapeError>(op, ": ", lhs_name, " ", lhs, " and ", rhs_name, " ", rhs,
                            " differ in shape");
  }
}

void check_class_targets(std::string_view op, const TensorData& targets, std::int64_t num_classes,
                         std::optional<std::int32_t> ignore_index) {
  const auto values = targets.to_vec<std::int32_t>();
  for (std::size_t row = 0; row < values.size(); ++row) {
    const std::int32_t t = values[row];
    if (ignore_index && t == *ignore_index) continue;
    if (t < 0 || t >= num_classes) {
      throw_error<IndexError>(op, ": targets must be class indices in [0, ", num_classes, ")",
                              ignore_index ? str_cat(" or ignore_index ", *ignore_index) : "",
                              ": row ", row, " has target ", t);
    }
  }
}

void check_binary_targets(std::string_view op, const TensorData& targets) {
  const auto values = targets.to_vec<std::int32_t>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] != 0 && values[i] != 1) {
      throw_error<ValueError>(op, ": Int targets must be 0 or 1: targets",
                              multi_index(targets.shape, static_cast<std::int64_t>(i)), " is ",
                              values[i]);
    }
  }
}

void check_probabilities(std::string_view op, const TensorData& input) {
  const auto values = input.to_vec<float>();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float p = values[i];
    if (!(p >= 0.f && p <= 1.f)) {  // also rejects nan
      throw_error<ValueError>(op, ": probabilities must be in [0, 1] (logits is false): input",
                              multi_index(input.shape, static_cast<std::int64_t>(i)), " is ", p);
    }
  }
}

void check_weights(std::string_view op, const std::vector<float>& weights) {
  if (weights.empty()) throw_error<ConfigError>(op, ": weights is empty");
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i]) || weights[i] < 0.f) {
      throw_error<ConfigError>(op, ": weights[", i, "] must be finite and non-negative, got ",
                               weights[i]);
    }
  }
}

void check_smoothing(std::string_view op, double smoothing) {
  if (!(smoothing >= 0.0 && smoothing <= 1.0)) {
    throw_error<ConfigError>(op, ": smoothing must be in [0, 1], got ", smoothing);
  }
}

}  // namespace detail
}  // namespace kiln::nn::loss
