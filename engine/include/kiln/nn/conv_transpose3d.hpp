#pragma once
/// ConvTranspose3d: the transposed 3-D convolution layer (Burn's
/// `nn::conv::ConvTranspose3d`, PyTorch's `nn.ConvTranspose3d`) and its config.
///
///   auto up = nn::ConvTranspose3dConfig({16, 8}, {3, 3, 3}).with_stride({2, 2, 2})
///                 .with_padding({1, 1, 1}).with_padding_out({1, 1, 1}).init<Cpu>(device);
///   auto y = up.forward(x);  // [batch_size, 16, 4, 7, 7] -> [batch_size, 8, 8, 14, 14]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/conv3d.hpp"

namespace kiln::nn {

template <Backend B>
struct ConvTranspose3d;

/// Configuration of a transposed 3-D convolution; `init` builds a `ConvTranspose3d`
/// (Burn's ConvTranspose3dConfig).
struct ConvTranspose3dConfig {
  std::array<std::int64_t, 2> channels;     ///< {channels_in, channels_out}
  std::array<std::int64_t, 3> kernel_size;  ///< {kernel_d, kernel_h, kernel_w}
  std::array<std::int64_t, 3> stride = {1, 1, 1};
  std::array<std::int64_t, 3> dilation = {1, 1, 1};
  std::array<std::int64_t, 3> padding = {0, 0, 0};      ///< removed from both output sides
  std::array<std::int64_t, 3> padding_out = {0, 0, 0};  ///< PyTorch's output_padding
  std::int64_t groups = 1;
  bool bias = true;
  /// PyTorch's default: kaiming_uniform_ a = sqrt(5) on the weight [channels_in,
  /// channels_out / groups, kd, kh, kw], whose fan_in is channels_out / groups · kd · kh · kw;
  /// the bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with the same fan_in.
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  /// Required fields, as Burn's `ConvTranspose3dConfig::new(channels, kernel_size)`.
  ConvTranspose3dConfig(std::array<std::int64_t, 2> channels,
                        std::array<std::int64_t, 3> kernel_size)
      : channels(channels), kernel_size(kernel_size) {}
  KILN_CONFIG(ConvTranspose3dConfig, (channels, kernel_size),
              (stride, dilation, padding, padding_out, groups, bias, initializer))

  /// Throws: ConfigError for sizes < 1, channels not divisible by groups, negative
  /// padding, or padding_out not smaller than stride or dilation (PyTorch's rule); LimitError
  /// if the weight would pass 2^31 - 1 elements.
  void check() const;

  /// A new layer. Throws: as check().
  template <Backend B>
  ConvTranspose3d<B> init(const Device<B>& device = {}) const;
};

/// Checks the per-dim padding and padding_out of a transposed convolution config (naming
/// `op`): both >= 0, padding_out smaller than stride or dilation (PyTorch's rule).
template <std::size_t N>
void check_transposed_padding(const char* op, const std::array<std::int64_t, N>& stride,
                              const std::array<std::int64_t, N>& dilation,
                              const std::array<std::int64_t, N>& padding,
                              const std::array<std::int64_t, N>& padding_out) {
  for (std::size_t d = 0; d < N; ++d) {
    if (padding[d] < 0 || padding_out[d] < 0) {
      throw_error<ConfigError>(op, ": padding and padding_out must be >= 0, got padding ",
                               padding[d], " and padding_out ", padding_out[d], " in dim ", d);
    }
    if (padding_out[d] >= stride[d] && padding_out[d] >= dilation[d]) {
      throw_error<ConfigError>(op, ": padding_out must be smaller than stride or dilation, got ",
                               "padding_out ", padding_out[d], ", stride ", stride[d],
                               ", dilation ", dilation[d], " in dim ", d);
    }
  }
}

/// (in - 1)·stride - 2·padding + dilation·(kernel - 1) + padding_out + 1, PyTorch's output
/// size of a transposed convolution (for the Sequential spec; the op checks its own).
/// Throws: ConfigError (prefixed `at`) when it is < 1.
inline std::int64_t conv_transpose_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                       std::int64_t padding, std::int64_t padding_out,
                                       std::int64_t dilation, std::string_view at,
                                       std::string_view dim_name, const SequentialItem& item) {
  std::string_view op = at;  // `SequentialConfig: layers[i] (conv_transpose3d)` names the layer
  if (op.size() >= 2 && op.substr(op.size() - 2) == ": ") op.remove_suffix(2);
  const std::int64_t o = checked::add(
      op,
      checked::sub(op, checked::mul(op, in - 1, stride, "(input - 1) · stride"),
                   checked::mul(op, 2, padding, "2 · padding"), "(input - 1) · stride - 2 · padding"),
      checked::add(op, checked::mul(op, dilation, kernel - 1, "dilation · (kernel - 1)"),
                   padding_out + 1, "dilation · (kernel - 1) + padding_out + 1"),
      "the output size");
  if (o < 1) {
    throw_error<ConfigError>(at, "the output ", dim_name, " would be ", o,
                             " for the previous layer's ", item.describe());
  }
  return o;
}

inline void ConvTranspose3dConfig::check() const {
  const char* op = "ConvTranspose3dConfig::init";
  check_conv_config(op, channels[0], channels[1], groups);
  check_positive(op, "kernel_size", kernel_size);
  check_positive(op, "stride", stride);
  check_positive(op, "dilation", dilation);
  // The weight [channels_in, channels_out / groups, kd, kh, kw] must fit (bounds the fans).
  checked::numel(op,
                 std::array<std::int64_t, 5>{channels[0], channels[1] / groups, kernel_size[0],
                                             kernel_size[1], kernel_size[2]},
                 "weight shape");
  check_transposed_padding(op, stride, dilation, padding, padding_out);
}

/// In a Sequential: {"type": "conv_transpose3d", "channels": [16, 8], "kernel_size": [3, 3, 3],
/// "stride": [2, 2, 2], "padding": [1, 1, 1], "padding_out": [1, 1, 1], ...}, triples also as
/// one integer; items [channels, depth, height, width] -> [channels_out, depth_out,
/// height_out, width_out].
template <>
struct SequentialRules<ConvTranspose3dConfig> {
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"kernel_size", "stride", "dilation", "padding", "padding_out"}) {
      sequential::widen_triple(body, f);
    }
  }
  static SequentialItem item_shape(const ConvTranspose3dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    static constexpr const char* kNames[] = {"depth", "height", "width"};
    return sequential::item_shape_3d(
        c.channels[0], c.channels[1], in, at, [&](std::size_t i, std::int64_t size) {
          return conv_transpose_out(size, c.kernel_size[i], c.stride[i], c.padding[i],
                                    c.padding_out[i], c.dilation[i], at, kNames[i], in);
        });
  }
};
KILN_REGISTER_LAYER(ConvTranspose3dConfig, "conv_transpose3d");

/// y = conv_transpose3d(x, W) + b (PyTorch nn.ConvTranspose3d). Records: "weight"
/// [channels_in, channels_out / groups, kernel_d, kernel_h, kernel_w], "bias" [channels_out].
template <Backend B>
struct ConvTranspose3d {
  module::Param<Tensor<B, 5>> weight;
  std::optional<module::Param<Tensor<B, 1>>> bias;
  std::array<std::int64_t, 3> stride = {1, 1, 1};
  std::array<std::int64_t, 3> kernel_size = {1, 1, 1};
  std::array<std::int64_t, 3> dilation = {1, 1, 1};
  std::array<std::int64_t, 3> padding = {0, 0, 0};
  std::array<std::int64_t, 3> padding_out = {0, 0, 0};
  std::int64_t groups = 1;

  KILN_MODULE(ConvTranspose3d, weight, bias, stride, kernel_size, dilation, padding,
              padding_out, groups)

  std::int64_t channels_in() const { return weight.shape()[0]; }
  std::int64_t channels_out() const { return weight.shape()[1] * groups; }

  /// Shapes:    input [batch_size, channels_in, depth, height, width] -> [batch_size,
  ///            channels_out, depth_out, height_out, width_out], per dim out = (in - 1)·stride
  ///            - 2·padding + dilation·(kernel - 1) + padding_out + 1.
  /// Throws:    ShapeError naming conv_transpose3d for a channel mismatch or an empty output;
  ///            StateError before init.
  /// Semantics: torch.nn.ConvTranspose3d.forward without output_size.
  Tensor<B, 5> forward(const Tensor<B, 5>& input) const {
    return kiln::conv_transpose3d(input, weight.val(),
                                  bias ? std::optional(bias->val()) : std::nullopt, options());
  }

  ConvTransposeOptions<3> options() const {
    return ConvTransposeOptions<3>(stride, padding, padding_out, dilation, groups);
  }

  /// `ch_in: 16, ch_out: 8, stride: [2, 2, 2], kernel_size: [3, 3, 3], dilation: [1, 1, 1],
  /// groups: 1, padding: [1, 1, 1], padding_out: [1, 1, 1], bias: true`.
  void describe_fields(::kiln::StrOut& out) const {
    auto list = [&out](const std::array<std::int64_t, 3>& a) {
      out << '[' << a[0] << ", " << a[1] << ", " << a[2] << ']';
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
ConvTranspose3d<B> ConvTranspose3dConfig::init(const Device<B>& device) const {
  check();
  const std::int64_t receptive = kernel_size[0] * kernel_size[1] * kernel_size[2];
  const std::int64_t fan_in = channels[1] / groups * receptive;  // torch: weight.size(1)·receptive
  const std::int64_t fan_out = channels[0] * receptive;
  ConvTranspose3d<B> out;
  out.weight = module::Param<Tensor<B, 5>>(initializer.init<B, 5>(
      Shape{channels[0], channels[1] / groups, kernel_size[0], kernel_size[1], kernel_size[2]},
      fan_in, fan_out, device));
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
