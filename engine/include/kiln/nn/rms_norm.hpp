#pragma once
/// RmsNorm (Burn's `nn::RmsNorm`, PyTorch's nn.RMSNorm over the last dim) and its config.
///
///   auto norm = nn::RmsNormConfig(512).init<Cpu>(device);
///   auto y = norm.forward(x);  // [..., 512] -> same shape
#include <cstdint>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct RmsNorm;

/// Configuration of RmsNorm (Burn's RmsNormConfig).
struct RmsNormConfig {
  std::int64_t d_model;   ///< size of the normalised last dim
  double epsilon = 1e-5;  ///< added to mean(x²) inside the square root (Burn's default;
                          ///< PyTorch's eps=None means float32's machine epsilon)

  explicit RmsNormConfig(std::int64_t d_model) : d_model(d_model) {}
  KILN_CONFIG(RmsNormConfig, (d_model), (epsilon))

  /// Throws: ConfigError if d_model < 1 or epsilon < 0.
  void check() const {
    if (d_model < 1 || !(epsilon >= 0.0)) {
      throw_error<ConfigError>(
          "RmsNormConfig::init: need d_model >= 1 and epsilon >= 0, got "
          "d_model = ",
          d_model, ", epsilon = ", epsilon);
    }
  }
  /// weight = ones. Throws: ConfigError as check().
  template <Backend B>
  RmsNorm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: over the last dim, which must be d_model.
template <>
struct SequentialRules<RmsNormConfig> {
  static SequentialItem item_shape(const RmsNormConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (const auto last = in.last_dim(); last && *last != c.d_model) {
      throw_error<ConfigError>(at, "d_model is ", c.d_model, " but the previous layer outputs ",
                               in.describe());
    }
    return in;
  }
};
KILN_REGISTER_LAYER(RmsNormConfig, "rms_norm");

/// y = x / sqrt(mean(x²) + epsilon) · weight over the last dim (Zhang & Sennrich 2019,
/// torch.nn.RMSNorm, Burn's RmsNorm). Composed of tensor ops.
template <Backend B>
struct RmsNorm {
  module::Param<Tensor<B, 1>> weight;  ///< γ [d_model] (Burn's gamma)
  double epsilon = 1e-5;

  KILN_MODULE(RmsNorm, weight, epsilon)

  std::int64_t d_model() const { return weight.shape()[0]; }

  /// Shapes: input [..., d_model] (rank D >= 1) -> the same shape.
  /// Throws: ShapeError if the last dim is not d_model; StateError before init/load.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    const Shape s = input.shape();
    if (s[D - 1] != d_model()) {
      throw_error<ShapeError>("RmsNorm::forward: expected input [..., ", d_model(),
                              "] (d_model = ", d_model(), "), got ", s);
    }
    return normalize(kiln::detail::ErasedFloat<B>(input), D).template typed<D>();
  }

  /// forward's computation for an input of rank D, rank-erased (one copy of the code for
  /// every rank; the same ops in the same order as written on Tensor<B, D>).
  kiln::detail::ErasedFloat<B> normalize(const kiln::detail::ErasedFloat<B>& input,
                                         std::size_t D) const {
    using E = kiln::detail::ErasedFloat<B>;
    const auto ms = (input * input).mean_dim(static_cast<std::int64_t>(D - 1));
    // weight.val().unsqueeze<D>(): [d_model] -> [1, ..., 1, d_model]
    const Shape w = derived::unsqueeze_shape(weight.shape(), D);
    return input / (ms + epsilon).sqrt() * E(weight.val()).reshape(w.dims());
  }

  /// `d_model: 512, epsilon: 0.00001`
  void describe_fields(::kiln::StrOut& out) const {
    if (weight.is_initialized()) out << "d_model: " << d_model(); else out << "weight: <empty>";
    out << ", epsilon: " << epsilon;
  }
};

template <Backend B>
RmsNorm<B> RmsNormConfig::init(const Device<B>& device) const {
  check();
  RmsNorm<B> out;
  out.weight = module::Param<Tensor<B, 1>>(Tensor<B, 1>::ones(Shape{d_model}, device));
  out.epsilon = epsilon;
  return out;
}

}  // namespace kiln::nn
