#pragma once
/// LayerNorm (Burn's `nn::LayerNorm`, PyTorch's nn.LayerNorm over the last dim) and its config.
///
///   auto norm = nn::LayerNormConfig(512).init<Cpu>(device);
///   auto y = norm.forward(x);  // [batch_size, seq_length, 512] -> same shape
#include <cstdint>
#include <optional>
#include <ostream>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct LayerNorm;

/// Configuration of LayerNorm (Burn's LayerNormConfig; `elementwise_affine` is PyTorch's).
struct LayerNormConfig {
  std::int64_t d_model;            ///< size of the normalised last dim (PyTorch's normalized_shape)
  double epsilon = 1e-5;           ///< added to the variance inside the square root
  bool elementwise_affine = true;  ///< learn weight (ones) and bias (zeros) of shape [d_model]

  explicit LayerNormConfig(std::int64_t d_model) : d_model(d_model) {}
  KILN_CONFIG(LayerNormConfig, (d_model), (epsilon, elementwise_affine))

  /// Throws: ConfigError if d_model < 1 or epsilon < 0 (or NaN).
  void check() const {
    if (d_model < 1) {
      throw ConfigError(str_cat("LayerNormConfig::init: d_model must be >= 1, got ", d_model));
    }
    if (!(epsilon >= 0.0)) {
      throw ConfigError(str_cat("LayerNormConfig::init: epsilon must be >= 0, got ", epsilon));
    }
  }

  /// Throws: ConfigError as check().
  template <Backend B>
  LayerNorm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: over the last dim, which must be d_model.
template <>
struct SequentialRules<LayerNormConfig> {
  static SequentialItem item_shape(const LayerNormConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    const auto features = in.last_dim();
    if (features && *features != c.d_model) {
      throw ConfigError(str_cat(at, "d_model is ", c.d_model, " but the previous layer outputs ",
                                in.describe()));
    }
    return in;
  }
};
KILN_REGISTER_LAYER(LayerNormConfig, "layer_norm");

/// y = (x - mean) / sqrt(var + epsilon) · weight + bias over the last dim, var biased
/// (torch.nn.LayerNorm with normalized_shape = [d_model]). Composed of tensor ops, so
/// Autodiff<B> differentiates it.
template <Backend B>
struct LayerNorm {
  std::optional<module::Param<Tensor<B, 1>>> weight;  ///< γ [d_model]
  std::optional<module::Param<Tensor<B, 1>>> bias;    ///< β [d_model]
  std::int64_t d_model = 0;
  double epsilon = 1e-5;

  KILN_MODULE(LayerNorm, weight, bias, d_model, epsilon)

  /// Shapes:    input [..., d_model] (rank D >= 1) -> the same shape.
  /// Throws:    ShapeError if the last dim is not d_model.
  /// Semantics: torch.nn.functional.layer_norm(x, [d_model], weight, bias, eps).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    const Shape s = input.shape();
    if (s[D - 1] != d_model) {
      throw ShapeError(str_cat("LayerNorm::forward: expected input [..., ", d_model,
                               "] (d_model = ", d_model, "), got ", s));
    }
    constexpr auto last = static_cast<std::int64_t>(D - 1);
    const auto [var, mean] = input.var_mean(last, /*unbiased=*/false);
    auto y = (input - mean) / (var + epsilon).sqrt();
    if (weight) y = y * weight->val().template unsqueeze<D>();
    if (bias) y = y + bias->val().template unsqueeze<D>();
    return y;
  }

  /// `d_model: 512, epsilon: 0.00001, elementwise_affine: true`
  void describe_fields(std::ostream& out) const {
    out << "d_model: " << d_model << ", epsilon: " << epsilon
        << ", elementwise_affine: " << (weight ? "true" : "false");
  }
};

template <Backend B>
LayerNorm<B> LayerNormConfig::init(const Device<B>& device) const {
  check();
  LayerNorm<B> out;
  out.d_model = d_model;
  out.epsilon = epsilon;
  if (elementwise_affine) {
    out.weight = module::Param<Tensor<B, 1>>(Tensor<B, 1>::ones(Shape{d_model}, device));
    out.bias = module::Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{d_model}, device));
  }
  return out;
}

}  // namespace kiln::nn
