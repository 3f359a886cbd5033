#pragma once
/// Conv3d: the 3-D convolution layer (Burn's `nn::conv::Conv3d`, PyTorch's `nn.Conv3d`)
/// and its config.
///
///   auto conv = nn::Conv3dConfig({1, 8}, {3, 3, 3}).with_padding(nn::PaddingConfig3d::same())
///                   .init<Cpu>(device);
///   auto y = conv.forward(volumes);  // [4, 1, 16, 32, 32] -> [4, 8, 16, 32, 32]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/nn/conv2d.hpp"

namespace kiln::nn {

template <Backend B>
struct Conv3d;

/// Configuration of a 3-D convolution layer; `init` builds a `Conv3d` (Burn's Conv3dConfig).
struct Conv3dConfig {
  std::array<std::int64_t, 2> channels;     ///< {channels_in, channels_out}
  std::array<std::int64_t, 3> kernel_size;  ///< {kernel_d, kernel_h, kernel_w}
  std::array<std::int64_t, 3> stride = {1, 1, 1};
  std::array<std::int64_t, 3> dilation = {1, 1, 1};
  std::int64_t groups = 1;  ///< both channel counts must be divisible by it
  PaddingConfig3d padding = PaddingConfig3d::valid();
  bool bias = true;  ///< learn an additive bias of shape [channels_out]
  /// PyTorch's nn.Conv3d default: weight and bias U(-k, k), k = 1/sqrt(fan_in), fan_in =
  /// channels_in / groups · kernel_d · kernel_h · kernel_w (kaiming_uniform_ a = sqrt(5)).
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  /// Required fields, as Burn's `Conv3dConfig::new(channels, kernel_size)`.
  Conv3dConfig(std::array<std::int64_t, 2> channels, std::array<std::int64_t, 3> kernel_size)
      : channels(channels), kernel_size(kernel_size) {}
  KILN_CONFIG(Conv3dConfig, (channels, kernel_size),
              (stride, dilation, groups, padding, bias, initializer))

  /// Throws: ConfigError as Conv2dConfig::check (naming Conv3dConfig::init); LimitError if
  /// the weight would pass 2^31 - 1 elements.
  void check() const;

  /// A new layer with freshly initialized parameters on `device`. Throws: as check().
  template <Backend B>
  Conv3d<B> init(const Device<B>& device = {}) const;
};

/// y = conv3d(x, W) + b (PyTorch nn.Conv3d, Burn nn::conv::Conv3d), cross-correlation.
/// Records hold "weight" [channels_out, channels_in / groups, kernel_d, kernel_h, kernel_w]
/// and "bias" [channels_out], PyTorch's names and layouts.
template <Backend B>
struct Conv3d {
  module::Param<Tensor<B, 5>> weight;  ///< [channels_out, channels_in / groups, kd, kh, kw]
  std::optional<module::Param<Tensor<B, 1>>> bias;  ///< [channels_out]
  std::array<std::int64_t, 3> stride = {1, 1, 1};
  std::array<std::int64_t, 3> kernel_size = {1, 1, 1};
  std::array<std::int64_t, 3> dilation = {1, 1, 1};
  std::int64_t groups = 1;
  PaddingConfig3d padding;

  KILN_MODULE(Conv3d, weight, bias, stride, kernel_size, dilation, groups, padding)

  /// Input channels (weight dim 1 · groups). Throws StateError before init/load.
  std::int64_t channels_in() const { return weight.shape()[1] * groups; }
  /// Output channels (weight dim 0). Throws StateError before init/load.
  std::int64_t channels_out() const { return weight.shape()[0]; }

  /// Applies the convolution.
  ///
  /// Shapes:    input [batch_size, channels_in, depth, height, width] -> [batch_size,
  ///            channels_out, depth_out, height_out, width_out], per spatial dim
  ///            out = floor((in + pad_begin + pad_end - dilation·(kernel - 1) - 1) / stride) + 1
  ///            (Same: out = in).
  /// Throws:    ShapeError if input's channels differ from channels_in or the kernel is
  ///            larger than the padded input (both naming conv3d); StateError before init.
  /// Cost:      see kiln::conv3d (im2col + GEMM, multithreaded over the batch).
  /// Semantics: torch.nn.Conv3d.forward with padding_mode 'zeros'.
  Tensor<B, 5> forward(const Tensor<B, 5>& input) const {
    return kiln::conv3d(input, weight.val(), bias ? std::optional(bias->val()) : std::nullopt,
                        options());
  }

  /// The options forward passes to kiln::conv3d (padding resolved per side).
  ConvOptions<3> options() const {
    const auto [begin, end] = padding.resolve("Conv3d::forward", kernel_size, stride, dilation);
    return ConvOptions<3>(stride, begin, end, dilation, groups);
  }

  /// `ch_in: 1, ch_out: 8, stride: [1, 1, 1], kernel_size: [3, 3, 3], dilation: [1, 1, 1],
  /// groups: 1, padding: Valid, bias: true`.
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
    out << ", groups: " << groups << ", padding: " << padding
        << ", bias: " << (bias ? "true" : "false");
  }
};

inline void Conv3dConfig::check() const {
  const char* op = "Conv3dConfig::init";
  check_conv_config(op, channels[0], channels[1], groups);
  check_positive(op, "kernel_size", kernel_size);
  check_positive(op, "stride", stride);
  check_positive(op, "dilation", dilation);
  padding.resolve(op, kernel_size, stride, dilation);  // Same with stride != 1, negative sizes
  // The weight [channels_out, channels_in / groups, kd, kh, kw] must fit (bounds the fans).
  checked::numel(op,
                 std::array<std::int64_t, 5>{channels[1], channels[0] / groups, kernel_size[0],
                                             kernel_size[1], kernel_size[2]},
                 "weight shape");
  const std::int64_t receptive = kernel_size[0] * kernel_size[1] * kernel_size[2];
  try {
    (void)initializer.sampling(channels[0] / groups * receptive, channels[1] * receptive);
  } catch (const ConfigError& e) {
    throw_error<ConfigError>(op, ": initializer: ", e.what());
  }
}

namespace sequential {
/// An integer given for a {depth, height, width} field becomes [n, n, n] (PyTorch's
/// int-or-tuple).
inline void widen_triple(config::Value& body, const char* field) {
  config::Value* v = body.find(field);
  if (v && v->is_number_integer()) *v = config::Value::array({*v, *v, *v});
}

/// The spec's padding of a 3-D convolution ("valid", "same", [d, h, w] or n) -> Burn's JSON
/// form ("Valid", "Same", {"Explicit": [d, h, w]}) that PaddingConfig3d reads.
inline void spec_padding3d_to_config(config::Value& body, std::string_view at) {
  config::Value* found = body.find("padding");
  if (!found) return;
  config::Value& p = *found;
  if (p.is_string("valid")) {
    p = config::Value("Valid");
  } else if (p.is_string("same")) {
    p = config::Value("Same");
  } else if (p.is_number_integer()) {
    p = config::Value::object({{"Explicit", config::Value::array({p, p, p})}});
  } else if (p.is_array() && p.size() == 3 && p[0].is_number_integer() &&
             p[1].is_number_integer() && p[2].is_number_integer()) {
    p = config::Value::object({{"Explicit", p}});
  } else {
    throw_error<ConfigError>(at, "padding: expected \"valid\", \"same\" or [depth, height, ",
                             "width] (or one integer), got ", config::describe(p));
  }
}

/// The per-item shape [channels_out, depth, height, width] after a 3-D convolution-like
/// layer whose out(i, in) gives the size of spatial dim i; checks channels[0].
template <class Out>
SequentialItem item_shape_3d(std::int64_t channels_in, std::int64_t channels_out,
                             const SequentialItem& in, std::string_view at, Out out_size) {
  need_item_rank(in, 4, at, "[batch_size, channels, depth, height, width]");
  std::vector<std::int64_t> out{channels_out, -1, -1, -1};
  if (in.dims) {
    const auto& d = *in.dims;
    if (d[0] >= 0 && d[0] != channels_in) {
      throw_error<ConfigError>(at, "channels[0] is ", channels_in,
                               " but the previous layer outputs ", in.describe(), " (", d[0],
                               " channels)");
    }
    for (std::size_t i = 0; i < 3; ++i) {
      if (d[i + 1] >= 0) out[i + 1] = out_size(i, d[i + 1]);
    }
  }
  return SequentialItem{out, std::nullopt};
}
}  // namespace sequential

/// In a Sequential: {"type": "conv3d", "channels": [1, 8], "kernel_size": [3, 3, 3],
/// "stride": [1, 1, 1], "padding": "valid" | "same" | [1, 1, 1], ...}, triples also as one
/// integer; items [channels, depth, height, width].
template <>
struct SequentialRules<Conv3dConfig> {
  static void spec_to_config(config::Value& body, std::string_view at) {
    for (const char* f : {"kernel_size", "stride", "dilation"}) sequential::widen_triple(body, f);
    sequential::spec_padding3d_to_config(body, at);
  }
  static void config_to_spec(config::Value& j) { sequential::config_padding_to_spec(j); }
  static SequentialItem item_shape(const Conv3dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    // Not a structured binding: clang 14 (em++) cannot capture one in the lambda.
    const auto sides = c.padding.resolve("Conv3dConfig::init", c.kernel_size, c.stride, c.dilation);
    static constexpr const char* kNames[] = {"depth", "height", "width"};
    return sequential::item_shape_3d(
        c.channels[0], c.channels[1], in, at, [&](std::size_t i, std::int64_t size) {
          return sequential::conv_out(
              size, c.kernel_size[i], c.stride[i],
              sequential::pad_sum(sides.first[i], sides.second[i], at, kNames[i]), c.dilation[i],
              at, kNames[i], in);
        });
  }
};
KILN_REGISTER_LAYER(Conv3dConfig, "conv3d");

template <Backend B>
Conv3d<B> Conv3dConfig::init(const Device<B>& device) const {
  check();
  const std::int64_t receptive = kernel_size[0] * kernel_size[1] * kernel_size[2];
  const std::int64_t fan_in = channels[0] / groups * receptive;
  const std::int64_t fan_out = channels[1] * receptive;  // torch: weight.size(0)·receptive
  Conv3d<B> out;
  out.weight = module::Param<Tensor<B, 5>>(initializer.init<B, 5>(
      Shape{channels[1], channels[0] / groups, kernel_size[0], kernel_size[1], kernel_size[2]},
      fan_in, fan_out, device));
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
