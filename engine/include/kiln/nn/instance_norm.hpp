#pragma once
/// InstanceNorm (Burn's `nn::InstanceNorm`, PyTorch's nn.InstanceNorm1d/2d without running
/// statistics) and its config.
///
///   auto norm = nn::InstanceNormConfig(16).init<Cpu>(device);
///   auto y = norm.forward(x);  // [batch_size, 16, ...] -> same shape
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/group_norm.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct InstanceNorm;

/// Configuration of InstanceNorm (Burn's InstanceNormConfig: `affine` defaults to true,
/// where PyTorch's InstanceNorm2d defaults to affine=False).
struct InstanceNormConfig {
  std::int64_t num_channels;  ///< C in [batch_size, C, ...]
  double epsilon = 1e-5;      ///< added to the variance inside the square root
  bool affine = true;         ///< learn weight (ones) and bias (zeros) of shape [num_channels]

  explicit InstanceNormConfig(std::int64_t num_channels) : num_channels(num_channels) {}
  KILN_CONFIG(InstanceNormConfig, (num_channels), (epsilon, affine))

  /// Throws: ConfigError if num_channels < 1 or epsilon < 0.
  void check() const {
    if (num_channels < 1 || !(epsilon >= 0.0)) {
      throw_error<ConfigError>(
          "InstanceNormConfig::init: need num_channels >= 1 and epsilon "
          ">= 0, got num_channels = ",
          num_channels, ", epsilon = ", epsilon);
    }
  }
  /// Throws: ConfigError as check().
  template <Backend B>
  InstanceNorm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: over dim 1 of [batch_size, num_channels, ...] (items of rank 2 or 3).
template <>
struct SequentialRules<InstanceNormConfig> {
  static SequentialItem item_shape(const InstanceNormConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (in.dims && (in.dims->size() < 2 || in.dims->size() > 3)) {
      throw_error<ConfigError>(at,
                               "expects input [batch_size, num_channels, ...] (items of "
                               "rank 2 or 3) but the previous layer outputs ",
                               in.describe());
    }
    if (in.dims && (*in.dims)[0] >= 0 && (*in.dims)[0] != c.num_channels) {
      throw_error<ConfigError>(at, "num_channels is ", c.num_channels,
                               " but the previous layer outputs ", in.describe(), " (",
                               (*in.dims)[0], " channels in dim 1)");
    }
    return in;
  }
};
KILN_REGISTER_LAYER(InstanceNormConfig, "instance_norm");

/// Instance normalisation (Ulyanov et al. 2016): each channel of each sample normalised
/// over its spatial positions, y = (x - mean)/sqrt(var + epsilon) (biased var), then
/// weight·y + bias per channel; GroupNorm with one group per channel (as Burn). The same in
/// training and inference (torch.nn.InstanceNorm2d with track_running_stats=False).
template <Backend B>
struct InstanceNorm {
  std::optional<module::Param<Tensor<B, 1>>> weight;  ///< γ [num_channels]
  std::optional<module::Param<Tensor<B, 1>>> bias;    ///< β [num_channels]
  std::int64_t num_channels = 0;
  double epsilon = 1e-5;

  KILN_MODULE(InstanceNorm, weight, bias, num_channels, epsilon)

  /// Shapes: input [batch_size, num_channels, ...] (rank D >= 3: at least one spatial dim)
  ///         -> the same shape.
  /// Throws: ShapeError if dim 1 is not num_channels.
  template <std::size_t D>
    requires(D >= 3)
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return detail::group_norm("InstanceNorm::forward", input, num_channels, num_channels,
                              epsilon, weight, bias);
  }

  /// `num_channels: 16, epsilon: 0.00001, affine: true`
  void describe_fields(::kiln::StrOut& out) const {
    out << "num_channels: " << num_channels << ", epsilon: " << epsilon
        << ", affine: " << (weight ? "true" : "false");
  }
};

template <Backend B>
InstanceNorm<B> InstanceNormConfig::init(const Device<B>& device) const {
  check();
  InstanceNorm<B> out;
  out.num_channels = num_channels;
  out.epsilon = epsilon;
  if (affine) {
    out.weight = module::Param<Tensor<B, 1>>(Tensor<B, 1>::ones(Shape{num_channels}, device));
    out.bias = module::Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{num_channels}, device));
  }
  return out;
}

}  // namespace kiln::nn
