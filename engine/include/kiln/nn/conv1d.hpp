#pragma once
/// Conv1d: the 1-D convolution layer (Burn's `nn::conv::Conv1d`, PyTorch's `nn.Conv1d`)
/// and its config.
///
///   auto conv = nn::Conv1dConfig({16, 32}, 5).with_padding(nn::PaddingConfig1d::same())
///                   .init<Cpu>(device);
///   auto y = conv.forward(signals);  // [batch_size, 16, 100] -> [batch_size, 32, 100]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/conv2d.hpp"

namespace kiln::nn {

template <Backend B>
struct Conv1d;

/// Configuration of a 1-D convolution layer; `init` builds a `Conv1d` (Burn's Conv1dConfig).
struct Conv1dConfig {
  std::array<std::int64_t, 2> channels;  ///< {channels_in, channels_out}
  std::int64_t kernel_size;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t groups = 1;
  PaddingConfig1d padding = PaddingConfig1d::valid();
  bool bias = true;
  /// PyTorch's default, as Conv2dConfig: weight and bias U(-k, k), k = 1/sqrt(fan_in),
  /// fan_in = channels_in / groups · kernel_size.
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  Conv1dConfig(std::array<std::int64_t, 2> channels, std::int64_t kernel_size)
      : channels(channels), kernel_size(kernel_size) {}
  KILN_CONFIG(Conv1dConfig, (channels, kernel_size),
              (stride, dilation, groups, padding, bias, initializer))

  /// Throws: ConfigError as Conv2dConfig::check (naming Conv1dConfig::init).
  void check() const;

  /// A new layer. Throws: ConfigError as check().
  template <Backend B>
  Conv1d<B> init(const Device<B>& device = {}) const;
};

/// y = conv1d(x, W) + b (PyTorch nn.Conv1d). Records: "weight" [channels_out,
/// channels_in / groups, kernel_size], "bias" [channels_out].
template <Backend B>
struct Conv1d {
  module::Param<Tensor<B, 3>> weight;
  std::optional<module::Param<Tensor<B, 1>>> bias;
  std::int64_t stride = 1;
  std::int64_t kernel_size = 1;
  std::int64_t dilation = 1;
  std::int64_t groups = 1;
  PaddingConfig1d padding;

  KILN_MODULE(Conv1d, weight, bias, stride, kernel_size, dilation, groups, padding)

  std::int64_t channels_in() const { return weight.shape()[1] * groups; }
  std::int64_t channels_out() const { return weight.shape()[0]; }

  /// Shapes:    input [batch_size, channels_in, length] -> [batch_size, channels_out,
  ///            length_out], length_out = floor((length + pad_begin + pad_end -
  ///            dilation·(kernel_size - 1) - 1) / stride) + 1 (Same: length).
  /// Throws:    ShapeError naming conv1d for a channel mismatch or a kernel larger than the
  ///            padded input; StateError before init.
  /// Semantics: torch.nn.Conv1d.forward with padding_mode 'zeros'.
  Tensor<B, 3> forward(const Tensor<B, 3>& input) const {
    return kiln::conv1d(input, weight.val(), bias ? std::optional(bias->val()) : std::nullopt,
                        options());
  }

  ConvOptions<1> options() const {
    const auto [begin, end] =
        padding.resolve("Conv1d::forward", {kernel_size}, {stride}, {dilation});
    return ConvOptions<1>({stride}, begin, end, {dilation}, groups);
  }

  /// `ch_in: 16, ch_out: 32, stride: 1, kernel_size: 5, dilation: 1, groups: 1, padding: Same`.
  void describe_fields(::kiln::StrOut& out) const {
    if (weight.is_initialized()) {
      out << "ch_in: " << channels_in() << ", ch_out: " << channels_out() << ", ";
    }
    out << "stride: " << stride << ", kernel_size: " << kernel_size << ", dilation: " << dilation
        << ", groups: " << groups << ", padding: " << padding
        << ", bias: " << (bias ? "true" : "false");
  }
};

inline void Conv1dConfig::check() const {
  const char* op = "Conv1dConfig::init";
  check_conv_config(op, channels[0], channels[1], groups);
  check_positive<1>(op, "kernel_size", {kernel_size});
  check_positive<1>(op, "stride", {stride});
  check_positive<1>(op, "dilation", {dilation});
  padding.resolve(op, {kernel_size}, {stride}, {dilation});
  // The weight [channels_out, channels_in / groups, kernel_size] must fit (bounds the fans).
  checked::numel(
      op, std::array<std::int64_t, 3>{channels[1], channels[0] / groups, kernel_size},
      "weight shape");
  try {
    (void)initializer.sampling(channels[0] / groups * kernel_size, channels[1] * kernel_size);
  } catch (const ConfigError& e) {
    throw_error<ConfigError>(op, ": initializer: ", e.what());
  }
}

/// In a Sequential: {"type": "conv1d", "channels": [4, 8], "kernel_size": 3, "padding":
/// "valid" | "same" | 1, ...}; items [channels, length].
template <>
struct SequentialRules<Conv1dConfig> {
  static void spec_to_config(config::Value& body, std::string_view at) {
    sequential::spec_padding_to_config(body, at, false);
  }
  static void config_to_spec(config::Value& j) { sequential::config_padding_to_spec(j); }
  static SequentialItem item_shape(const Conv1dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 2, at, "[batch_size, channels, length]");
    const auto [begin, end] =
        c.padding.resolve("Conv1dConfig::init", {c.kernel_size}, {c.stride}, {c.dilation});
    std::vector<std::int64_t> out{c.channels[1], -1};
    if (in.dims) {
      const auto& d = *in.dims;
      if (d[0] >= 0 && d[0] != c.channels[0]) {
        throw_error<ConfigError>(at, "channels[0] is ", c.channels[0],
                                 " but the previous layer outputs ", in.describe(), " (", d[0],
                                 " channels)");
      }
      out[1] = sequential::conv_out(d[1], c.kernel_size, c.stride,
                                    sequential::pad_sum(begin[0], end[0], at, "length"), c.dilation,
                                    at, "length", in);
    }
    return SequentialItem{out, std::nullopt};
  }
};
KILN_REGISTER_LAYER(Conv1dConfig, "conv1d");

template <Backend B>
Conv1d<B> Conv1dConfig::init(const Device<B>& device) const {
  check();
  const std::int64_t fan_in = channels[0] / groups * kernel_size;
  const std::int64_t fan_out = channels[1] * kernel_size;
  Conv1d<B> out;
  out.weight = module::Param<Tensor<B, 3>>(initializer.init<B, 3>(
      Shape{channels[1], channels[0] / groups, kernel_size}, fan_in, fan_out, device));
  if (bias) {
    out.bias = module::Param<Tensor<B, 1>>(
        initializer.init<B, 1>(Shape{channels[1]}, fan_in, fan_out, device));
  }
  out.stride = stride;
  out.kernel_size = kernel_size;
  out.dilation = dilation;
  out.groups = groups;
  out.padding = padding;
  return out;
}

}  // namespace kiln::nn
