#pragma once
/// ConvTranspose2d: the transposed 2-D convolution layer (Burn's
/// `nn::conv::ConvTranspose2d`, PyTorch's `nn.ConvTranspose2d`) and its config.
///
///   auto up = nn::ConvTranspose2dConfig({16, 8}, {3, 3}).with_stride({2, 2})
///                 .with_padding({1, 1}).with_padding_out({1, 1}).init<Cpu>(device);
///   auto y = up.forward(x);  // [batch_size, 16, 7, 7] -> [batch_size, 8, 14, 14]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/conv2d.hpp"

namespace kiln::nn {

template <Backend B>
struct ConvTranspose2d;

/// Configuration of a transposed 2-D convolution; `init` builds a `ConvTranspose2d`.
struct ConvTranspose2dConfig {
  std::array<std::int64_t, 2> channels;     ///< {channels_in, channels_out}
  std::array<std::int64_t, 2> kernel_size;  ///< {kernel_h, kernel_w}
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};      ///< removed from both output sides
  std::array<std::int64_t, 2> padding_out = {0, 0};  ///< PyTorch's output_padding
  std::int64_t groups = 1;
  bool bias = true;
  /// PyTorch's default: kaiming_uniform_ a = sqrt(5) on the weight [channels_in,
  /// channels_out / groups, kh, kw], whose fan_in is channels_out / groups · kh · kw; the
  /// bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the same fan_in.
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  ConvTranspose2dConfig(std::array<std::int64_t, 2> channels,
                        std::array<std::int64_t, 2> kernel_size)
      : channels(channels), kernel_size(kernel_size) {}
  KILN_CONFIG(ConvTranspose2dConfig, (channels, kernel_size),
              (stride, dilation, padding, padding_out, groups, bias, initializer))

  /// Throws: ConfigError for sizes < 1, channels not divisible by groups, negative
  /// padding, or padding_out not smaller than stride or dilation (PyTorch's rule); LimitError
  /// if the weight would pass 2^31 - 1 elements.
  void check() const;

  /// A new layer. Throws: as check().
  template <Backend B>
  ConvTranspose2d<B> init(const Device<B>& device = {}) const;
};

inline void ConvTranspose2dConfig::check() const {
  const char* op = "ConvTranspose2dConfig::init";
  check_conv_config(op, channels[0], channels[1], groups);
  check_positive(op, "kernel_size", kernel_size);
  check_positive(op, "stride", stride);
  check_positive(op, "dilation", dilation);
  // The weight [channels_in, channels_out / groups, kh, kw] must fit (bounds the fans).
  checked::numel(op,
                 std::array<std::int64_t, 4>{channels[0], channels[1] / groups, kernel_size[0],
                                             kernel_size[1]},
                 "weight shape");
  for (std::size_t d = 0; d < 2; ++d) {
    if (padding[d] < 0 || padding_out[d] < 0) {
      throw_error<ConfigError>(op, ": padding and padding_out must be >= 0, got padding [",
                               padding[0], ", ", padding[1], "], padding_out [", padding_out[0],
                               ", ", padding_out[1], "]");
    }
    if (padding_out[d] >= stride[d] && padding_out[d] >= dilation[d]) {
      throw_error<ConfigError>(op, ": padding_out must be smaller than stride or dilation, got ",
                               "padding_out ", padding_out[d], ", stride ", stride[d],
                               ", dilation ", dilation[d], " in dim ", d);
    }
  }
}

/// In a Sequential: {"type": "conv_transpose2d", "channels": [16, 8], "kernel_size": [3, 3],
/// "stride": [2, 2], "padding": [1, 1], "padding_out": [1, 1], ...}, pairs also as one
/// integer; items [channels, height, width] -> [channels_out, height_out, width_out].
template <>
struct SequentialRules<ConvTranspose2dConfig> {
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"kernel_size", "stride", "dilation", "padding", "padding_out"}) {
      sequential::widen_pair(body, f);
    }
  }
  static SequentialItem item_shape(const ConvTranspose2dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
    std::vector<std::int64_t> out{c.channels[1], -1, -1};
    if (in.dims) {
      const auto& d = *in.dims;
      if (d[0] >= 0 && d[0] != c.channels[0]) {
        throw_error<ConfigError>(at, "channels[0] is ", c.channels[0],
                                 " but the previous layer outputs ", in.describe(), " (", d[0],
                                 " channels)");
      }
      for (std::size_t i = 0; i < 2; ++i) {
        if (d[i + 1] < 0) continue;
        // (in - 1)·stride - 2·padding + dilation·(kernel - 1) + padding_out + 1
        const std::int64_t o = (d[i + 1] - 1) * c.stride[i] - 2 * c.padding[i] +
                               c.dilation[i] * (c.kernel_size[i] - 1) + c.padding_out[i] + 1;
        if (o < 1) {
          throw_error<ConfigError>(at, "the output ", i == 0 ? "height" : "width", " would be ", o,
                                   " for the previous layer's ", in.describe());
        }
        out[i + 1] = o;
      }
    }
    return SequentialItem{out, std::nullopt};
  }
};
KILN_REGISTER_LAYER(ConvTranspose2dConfig, "conv_transpose2d");

/// y = conv_transpose2d(x, W) + b (PyTorch nn.ConvTranspose2d). Records: "weight"
/// [channels_in, channels_out / groups, kernel_h, kernel_w], "bias" [channels_out].
template <Backend B>
struct ConvTranspose2d {
  module::Param<Tensor<B, 4>> weight;
  std::optional<module::Param<Tensor<B, 1>>> bias;
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> kernel_size = {1, 1};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::array<std::int64_t, 2> padding = {0, 0};
  std::array<std::int64_t, 2> padding_out = {0, 0};
  std::int64_t groups = 1;

  KILN_MODULE(ConvTranspose2d, weight, bias, stride, kernel_size, dilation, padding, padding_out,
              groups)

  std::int64_t channels_in() const { return weight.shape()[0]; }
  std::int64_t channels_out() const { return weight.shape()[1] * groups; }

  /// Shapes:    input [batch_size, channels_in, height, width] -> [batch_size, channels_out,
  ///            height_out, width_out], per dim out = (in - 1)·stride - 2·padding +
  ///            dilation·(kernel - 1) + padding_out + 1.
  /// Throws:    ShapeError naming conv_transpose2d for a channel mismatch or an empty output;
  ///            StateError before init.
  /// Semantics: torch.nn.ConvTranspose2d.forward without output_size.
  Tensor<B, 4> forward(const Tensor<B, 4>& input) const {
    return kiln::conv_transpose2d(input, weight.val(),
                                  bias ? std::optional(bias->val()) : std::nullopt, options());
  }

  ConvTransposeOptions<2> options() const {
    return ConvTransposeOptions<2>(stride, padding, padding_out, dilation, groups);
  }

  /// `ch_in: 16, ch_out: 8, stride: [2, 2], kernel_size: [3, 3], dilation: [1, 1], groups: 1,
  /// padding: [1, 1], padding_out: [1, 1]`.
  void describe_fields(::kiln::StrOut& out) const {
    auto list = [&out](const std::array<std::int64_t, 2>& a) {
      out << '[' << a[0] << ", " << a[1] << ']';
    };
    if (weight.is_initialized()) {
      out << "ch_in: " << channels_in() << ", ch_out: " << channels_out() << ", ";
    }
    out << "stride: ";
    list(stride);
    out << ", kernel_size: ";
    list(kernel_size);
    out << ", dilation: ";
    list(dilation);
    out << ", groups: " << groups << ", padding: ";
    list(padding);
    out << ", padding_out: ";
    list(padding_out);
    out << ", bias: " << (bias ? "true" : "false");
  }
};

template <Backend B>
ConvTranspose2d<B> ConvTranspose2dConfig::init(const Device<B>& device) const {
  check();
  const std::int64_t receptive = kernel_size[0] * kernel_size[1];
  const std::int64_t fan_in = channels[1] / groups * receptive;  // torch: weight.size(1)·receptive
  const std::int64_t fan_out = channels[0] * receptive;
  ConvTranspose2d<B> out;
  out.weight = module::Param<Tensor<B, 4>>(initializer.init<B, 4>(
      Shape{channels[0], channels[1] / groups, kernel_size[0], kernel_size[1]}, fan_in, fan_out,
      device));
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
