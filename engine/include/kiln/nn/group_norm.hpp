#pragma once
/// GroupNorm (Burn's `nn::GroupNorm`, PyTorch's nn.GroupNorm) and its config.
///
///   auto norm = nn::GroupNormConfig(/*num_groups=*/4, /*num_channels=*/16).init<Cpu>(device);
///   auto y = norm.forward(x);  // [batch_size, 16, ...] -> same shape
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

namespace detail {
/// group_norm of an input of rank >= 2, rank-erased (one copy of the code for every rank; the
/// same ops in the same order as written on Tensor<B, D>).
template <Backend B>
kiln::detail::ErasedFloat<B> group_norm_erased(
    const char* op, const kiln::detail::ErasedFloat<B>& input, std::int64_t groups,
    std::int64_t channels, double epsilon,
    const std::optional<module::Param<Tensor<B, 1>>>& weight,
    const std::optional<module::Param<Tensor<B, 1>>>& bias) {
  using E = kiln::detail::ErasedFloat<B>;
  const Shape s = input.shape();
  if (s[1] != channels) {
    throw_error<ShapeError>(op, ": expected input [batch_size, ", channels,
                            ", ...] (num_channels = ", channels, "), got ", s);
  }
  const std::int64_t n = s[0];
  const std::array<std::int64_t, 3> grouped_dims{n, groups, -1};
  const auto grouped = input.reshape(grouped_dims);
  const auto [var, mean] = grouped.var_mean(2, /*unbiased=*/false);
  auto y = ((grouped - mean) / (var + epsilon).sqrt()).reshape(s.dims());
  std::vector<std::int64_t> per_channel(s.rank(), 1);
  per_channel[1] = channels;
  if (weight) y = y * E(weight->val()).reshape(per_channel);
  if (bias) y = y + E(bias->val()).reshape(per_channel);
  return y;
}

/// Normalises each group of channels of each sample: x [N, C, ...] viewed as
/// [N, groups, C/groups·...], (x - mean)/sqrt(var + epsilon) with the biased variance, then
/// weight·y + bias per channel when given. Shared by GroupNorm and InstanceNorm; `op` names
/// the caller in errors. Throws ShapeError if dim 1 is not `channels`.
template <Backend B, std::size_t D>
Tensor<B, D> group_norm(const char* op, const Tensor<B, D>& input, std::int64_t groups,
                        std::int64_t channels, double epsilon,
                        const std::optional<module::Param<Tensor<B, 1>>>& weight,
                        const std::optional<module::Param<Tensor<B, 1>>>& bias) {
  static_assert(D >= 2, "group_norm: input rank must be >= 2");
  return group_norm_erased<B>(op, kiln::detail::ErasedFloat<B>(input), groups, channels, epsilon,
                              weight, bias)
      .template typed<D>();
}

}  // namespace detail

template <Backend B>
struct GroupNorm;

/// Configuration of GroupNorm (Burn's GroupNormConfig).
struct GroupNormConfig {
  std::int64_t num_groups;    ///< groups the channels are split into (divides num_channels)
  std::int64_t num_channels;  ///< C in [batch_size, C, ...]
  double epsilon = 1e-5;      ///< added to the variance inside the square root
  bool affine = true;         ///< learn weight (ones) and bias (zeros) of shape [num_channels]

  GroupNormConfig(std::int64_t num_groups, std::int64_t num_channels)
      : num_groups(num_groups), num_channels(num_channels) {}
  KILN_CONFIG(GroupNormConfig, (num_groups, num_channels), (epsilon, affine))

  /// Throws: ConfigError if num_groups < 1, num_channels is not a positive multiple of
  ///         num_groups, or epsilon < 0 (or NaN).
  void check() const {
    if (num_groups < 1 || num_channels < 1 || num_channels % num_groups != 0 ||
        !(epsilon >= 0.0)) {
      throw_error<ConfigError>(
          "GroupNormConfig::init: num_channels must be a positive multiple "
          "of num_groups and epsilon >= 0, got num_groups = ",
          num_groups, ", num_channels = ", num_channels, ", epsilon = ", epsilon);
    }
  }

  /// Throws: ConfigError as check().
  template <Backend B>
  GroupNorm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("group_norm"): over dim 1 of [batch_size, C, ...] (items of rank 1 to
/// 3), C = num_channels; the items keep their shape.
template <>
struct SequentialRules<GroupNormConfig> {
  static SequentialItem item_shape(const GroupNormConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (in.dims && (in.dims->empty() || in.dims->size() > 3)) {
      throw_error<ConfigError>(at,
                               "expects input [batch_size, num_channels, ...] (items of "
                               "rank 1 to 3) but the previous layer outputs ",
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
KILN_REGISTER_LAYER(GroupNormConfig, "group_norm");

/// Group normalisation (Wu & He 2018, torch.nn.GroupNorm): per sample and group of
/// num_channels/num_groups channels, y = (x - mean)/sqrt(var + epsilon) (biased var over
/// the group's channels and all spatial positions), then weight·y + bias per channel.
/// The same in training and inference (no running statistics).
template <Backend B>
struct GroupNorm {
  std::optional<module::Param<Tensor<B, 1>>> weight;  ///< γ [num_channels]
  std::optional<module::Param<Tensor<B, 1>>> bias;    ///< β [num_channels]
  std::int64_t num_groups = 1;
  std::int64_t num_channels = 0;
  double epsilon = 1e-5;

  KILN_MODULE(GroupNorm, weight, bias, num_groups, num_channels, epsilon)

  /// Shapes: input [batch_size, num_channels, ...] (rank D >= 2) -> the same shape.
  /// Throws: ShapeError if dim 1 is not num_channels.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return detail::group_norm("GroupNorm::forward", input, num_groups, num_channels, epsilon,
                              weight, bias);
  }

  /// `num_groups: 4, num_channels: 16, epsilon: 0.00001, affine: true`
  void describe_fields(::kiln::StrOut& out) const {
    out << "num_groups: " << num_groups << ", num_channels: " << num_channels
        << ", epsilon: " << epsilon << ", affine: " << (weight ? "true" : "false");
  }
};

template <Backend B>
GroupNorm<B> GroupNormConfig::init(const Device<B>& device) const {
  check();
  GroupNorm<B> out;
  out.num_groups = num_groups;
  out.num_channels = num_channels;
  out.epsilon = epsilon;
  if (affine) {
    out.weight = module::Param<Tensor<B, 1>>(Tensor<B, 1>::ones(Shape{num_channels}, device));
    out.bias = module::Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{num_channels}, device));
  }
  return out;
}

}  // namespace kiln::nn
