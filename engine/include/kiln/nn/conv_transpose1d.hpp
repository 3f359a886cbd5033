#pragma once
/// ConvTranspose1d: the transposed 1-D convolution layer (Burn's
/// `nn::conv::ConvTranspose1d`, PyTorch's `nn.ConvTranspose1d`) and its config.
///
///   auto up = nn::ConvTranspose1dConfig({16, 8}, 4).with_stride(2).with_padding(1)
///                 .init<Cpu>(device);
///   auto y = up.forward(x);  // [batch_size, 16, 50] -> [batch_size, 8, 100]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/conv_transpose3d.hpp"

namespace kiln::nn {

template <Backend B>
struct ConvTranspose1d;

/// Configuration of a transposed 1-D convolution; `init` builds a `ConvTranspose1d`
/// (Burn's ConvTranspose1dConfig).
struct ConvTranspose1dConfig {
  std::array<std::int64_t, 2> channels;  ///< {channels_in, channels_out}
  std::int64_t kernel_size;
  std::int64_t stride = 1;
  std::int64_t dilation = 1;
  std::int64_t padding = 0;      ///< removed from both output sides
  std::int64_t padding_out = 0;  ///< PyTorch's output_padding
  std::int64_t groups = 1;
  bool bias = true;
  /// PyTorch's default, as ConvTranspose2dConfig: fan_in = channels_out / groups · kernel_size.
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  /// Required fields, as Burn's `ConvTranspose1dConfig::new(channels, kernel_size)`.
  ConvTranspose1dConfig(std::array<std::int64_t, 2> channels, std::int64_t kernel_size)
      : channels(channels), kernel_size(kernel_size) {}
  KILN_CONFIG(ConvTranspose1dConfig, (channels, kernel_size),
              (stride, dilation, padding, padding_out, groups, bias, initializer))

  /// Throws: ConfigError as ConvTranspose2dConfig::check (naming ConvTranspose1dConfig::init).
  void check() const;

  /// A new layer. Throws: as check().
  template <Backend B>
  ConvTranspose1d<B> init(const Device<B>& device = {}) const;
};

inline void ConvTranspose1dConfig::check() const {
  const char* op = "ConvTranspose1dConfig::init";
  check_conv_config(op, channels[0], channels[1], groups);
  check_positive<1>(op, "kernel_size", {kernel_size});
  check_positive<1>(op, "stride", {stride});
  check_positive<1>(op, "dilation", {dilation});
  checked::numel(op, std::array<std::int64_t, 3>{channels[0], channels[1] / groups, kernel_size},
                 "weight shape");
  check_transposed_padding<1>(op, {stride}, {dilation}, {padding}, {padding_out});
}

/// In a Sequential: {"type": "conv_transpose1d", "channels": [16, 8], "kernel_size": 4,
/// "stride": 2, "padding": 1, "padding_out": 0, ...}; items [channels, length] ->
/// [channels_out, length_out].
template <>
struct SequentialRules<ConvTranspose1dConfig> {
  static SequentialItem item_shape(const ConvTranspose1dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 2, at, "[batch_size, channels, length]");
    std::vector<std::int64_t> out{c.channels[1], -1};
    if (in.dims) {
      const auto& d = *in.dims;
      if (d[0] >= 0 && d[0] != c.channels[0]) {
        throw_error<ConfigError>(at, "channels[0] is ", c.channels[0],
                                 " but the previous layer outputs ", in.describe(), " (", d[0],
                                 " channels)");
      }
      if (d[1] >= 0) {
        out[1] = conv_transpose_out(d[1], c.kernel_size, c.stride, c.padding, c.padding_out,
                                    c.dilation, at, "length", in);
      }
    }
    return SequentialItem{out, std::nullopt};
  }
};
KILN_REGISTER_LAYER(ConvTranspose1dConfig, "conv_transpose1d");

/// y = conv_transpose1d(x, W) + b (PyTorch nn.ConvTranspose1d). Records: "weight"
/// [channels_in, channels_out / groups, kernel_size], "bias" [channels_out].
template <Backend B>
struct ConvTranspose1d {
  module::Param<Tensor<B, 3>> weight;
  std::optional<module::Param<Tensor<B, 1>>> bias;
  std::int64_t stride = 1;
  std::int64_t kernel_size = 1;
  std::int64_t dilation = 1;
  std::int64_t padding = 0;
  std::int64_t padding_out = 0;
  std::int64_t groups = 1;

  KILN_MODULE(ConvTranspose1d, weight, bias, stride, kernel_size, dilation, padding,
              padding_out, groups)

  std::int64_t channels_in() const { return weight.shape()[0]; }
  std::int64_t channels_out() const { return weight.shape()[1] * groups; }

  /// Shapes:    input [batch_size, channels_in, length] -> [batch_size, channels_out,
  ///            length_out], length_out = (length - 1)·stride - 2·padding +
  ///            dilation·(kernel_size - 1) + padding_out + 1.
  /// Throws:    ShapeError naming conv_transpose1d for a channel mismatch or an empty
  ///            output; StateError before init.
  /// Semantics: torch.nn.ConvTranspose1d.forward without output_size.
  Tensor<B, 3> forward(const Tensor<B, 3>& input) const {
    return kiln::conv_transpose1d(input, weight.val(),
                                  bias ? std::optional(bias->val()) : std::nullopt, options());
  }

  ConvTransposeOptions<1> options() const {
    return ConvTransposeOptions<1>({stride}, {padding}, {padding_out}, {dilation}, groups);
  }

  /// `ch_in: 16, ch_out: 8, stride: 2, kernel_size: 4, dilation: 1, groups: 1, padding: 1,
  /// padding_out: 0, bias: true`.
  void describe_fields(::kiln::StrOut& out) const {
    if (weight.is_initialized()) {
      out << "ch_in: " << channels_in() << ", ch_out: " << channels_out() << ", ";
    }
    out << "stride: " << stride << ", kernel_size: " << kernel_size << ", dilation: " << dilation
        << ", groups: " << groups << ", padding: " << padding << ", padding_out: " << padding_out
        << ", bias: " << (bias ? "true" : "false");
  }
};

template <Backend B>
ConvTranspose1d<B> ConvTranspose1dConfig::init(const Device<B>& device) const {
  check();
  const std::int64_t fan_in = channels[1] / groups * kernel_size;  // torch: weight.size(1)·k
  const std::int64_t fan_out = channels[0] * kernel_size;
  ConvTranspose1d<B> out;
  out.weight = module::Param<Tensor<B, 3>>(initializer.init<B, 3>(
      Shape{channels[0], channels[1] / groups, kernel_size}, fan_in, fan_out, device));
  if (bias) {
    out.bias = module::Param<Tensor<B, 1>>(
        initializer.init<B, 1>(Shape{channels[1]}, fan_in, fan_out, device));
  }
  out.stride = stride;
  out.kernel_size = kernel_size;
  out.dilation = dilation;
  out.padding = padding;
  out.padding_out = padding_out;
  out.groups = groups;
  return out;
}

}  // namespace kiln::nn
