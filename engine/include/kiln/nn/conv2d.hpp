#pragma once
/// Conv2d: the 2-D convolution layer (Burn's `nn::conv::Conv2d`, PyTorch's `nn.Conv2d`)
/// and its config.
///
///   auto conv = nn::Conv2dConfig({1, 8}, {3, 3}).with_padding(nn::PaddingConfig2d::same())
///                   .init<Cpu>(device);
///   auto y = conv.forward(images);  // [64, 1, 28, 28] -> [64, 8, 28, 28]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/backend/conv_options.hpp"
#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/initializer.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/padding.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/conv.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct Conv2d;

/// Configuration of a 2-D convolution layer; `init` builds a `Conv2d` (Burn's Conv2dConfig).
struct Conv2dConfig {
  std::array<std::int64_t, 2> channels;     ///< {channels_in, channels_out}
  std::array<std::int64_t, 2> kernel_size;  ///< {kernel_h, kernel_w}
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::int64_t groups = 1;  ///< both channel counts must be divisible by it
  PaddingConfig2d padding = PaddingConfig2d::valid();
  bool bias = true;  ///< learn an additive bias of shape [channels_out]
  /// PyTorch's nn.Conv2d default: kaiming_uniform_ with a = sqrt(5) (gain 1/sqrt(3)), fan_in =
  /// channels_in / groups · kernel_h · kernel_w, so the weight is U(-k, k), k = 1/sqrt(fan_in);
  /// the bias is drawn with the same fans, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch.
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  /// Required fields, as Burn's `Conv2dConfig::new(channels, kernel_size)`.
  Conv2dConfig(std::array<std::int64_t, 2> channels, std::array<std::int64_t, 2> kernel_size)
      : channels(channels), kernel_size(kernel_size) {}
  KILN_CONFIG(Conv2dConfig, (channels, kernel_size),
              (stride, dilation, groups, padding, bias, initializer))

  /// Throws: ConfigError if a channel count, kernel size, stride, dilation or groups is < 1,
  /// a channel count is not divisible by groups, the padding is Same with a stride other
  /// than 1 or Explicit and negative; `Conv2dConfig::init: initializer: ...` as
  /// Initializer::sampling. LimitError if the weight would pass 2^31 - 1 elements or Same
  /// padding's dilation · (kernel_size - 1) overflows int64 (also for Conv1dConfig and
  /// ConvTranspose2dConfig's weights).
  void check() const;

  /// A new layer with freshly initialized parameters on `device`.
  /// Throws: ConfigError as check().
  template <Backend B>
  Conv2d<B> init(const Device<B>& device = {}) const;
};

/// y = conv2d(x, W) + b (PyTorch nn.Conv2d, Burn nn::conv::Conv2d), cross-correlation.
/// Records hold "weight" [channels_out, channels_in / groups, kernel_h, kernel_w] and
/// "bias" [channels_out], PyTorch's names and layouts (load_state_dict works unchanged).
template <Backend B>
struct Conv2d {
  module::Param<Tensor<B, 4>> weight;               ///< [channels_out, channels_in / groups, kh, kw]
  std::optional<module::Param<Tensor<B, 1>>> bias;  ///< [channels_out]
  std::array<std::int64_t, 2> stride = {1, 1};
  std::array<std::int64_t, 2> kernel_size = {1, 1};
  std::array<std::int64_t, 2> dilation = {1, 1};
  std::int64_t groups = 1;
  PaddingConfig2d padding;

  KILN_MODULE(Conv2d, weight, bias, stride, kernel_size, dilation, groups, padding)

  /// Input channels (weight dim 1 · groups). Throws StateError before init/load.
  std::int64_t channels_in() const { return weight.shape()[1] * groups; }
  /// Output channels (weight dim 0). Throws StateError before init/load.
  std::int64_t channels_out() const { return weight.shape()[0]; }

  /// Applies the convolution.
  ///
  /// Shapes:    input [batch_size, channels_in, height, width] ->
  ///            [batch_size, channels_out, height_out, width_out], per spatial dim
  ///            out = floor((in + pad_begin + pad_end - dilation·(kernel - 1) - 1) / stride) + 1
  ///            (Same: out = in).
  /// Throws:    ShapeError if input's channels differ from channels_in or the kernel is
  ///            larger than the padded input (both naming conv2d); StateError before init.
  /// Cost:      see kiln::conv2d (im2col + GEMM, multithreaded over the batch).
  /// Semantics: torch.nn.Conv2d.forward with padding_mode 'zeros'.
  Tensor<B, 4> forward(const Tensor<B, 4>& input) const {
    return kiln::conv2d(input, weight.val(), bias ? std::optional(bias->val()) : std::nullopt,
                        options());
  }

  /// The options forward passes to kiln::conv2d (padding resolved per side).
  ConvOptions<2> options() const {
    const auto [begin, end] = padding.resolve("Conv2d::forward", kernel_size, stride, dilation);
    return ConvOptions<2>(stride, begin, end, dilation, groups);
  }

  /// `ch_in: 1, ch_out: 8, stride: [1, 1], kernel_size: [3, 3], dilation: [1, 1], groups: 1,
  /// padding: Valid` (Burn's Display of Conv2d).
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
    out << ", groups: " << groups << ", padding: " << padding
        << ", bias: " << (bias ? "true" : "false");
  }
};

/// Checks the sizes shared by the conv layer configs (naming `op`).
inline void check_conv_config(const char* op, std::int64_t channels_in, std::int64_t channels_out,
                              std::int64_t groups) {
  if (channels_in < 1 || channels_out < 1) {
    throw_error<ConfigError>(op, ": channels must be >= 1, got {", channels_in, ", ", channels_out,
                             "}");
  }
  if (groups < 1) throw_error<ConfigError>(op, ": groups must be >= 1, got ", groups);
  if (channels_in % groups != 0 || channels_out % groups != 0) {
    throw_error<ConfigError>(op, ": channels {", channels_in, ", ", channels_out,
                             "} must both be divisible by groups = ", groups);
  }
}

/// Checks that every value of an N-D size is >= 1 (naming `op` and `field`).
template <std::size_t N>
void check_positive(const char* op, const char* field, const std::array<std::int64_t, N>& v) {
  for (std::size_t d = 0; d < N; ++d) {
    if (v[d] < 1) {
      throw_error<ConfigError>(op, ": ", field, " must be >= 1 in every dim, got ", v[d],
                               " in dim ", d);
    }
  }
}

inline void Conv2dConfig::check() const {
  const char* op = "Conv2dConfig::init";
  check_conv_config(op, channels[0], channels[1], groups);
  check_positive(op, "kernel_size", kernel_size);
  check_positive(op, "stride", stride);
  check_positive(op, "dilation", dilation);
  padding.resolve(op, kernel_size, stride, dilation);  // Same with stride != 1, negative sizes
  // The weight [channels_out, channels_in / groups, kh, kw] must fit; this also bounds the
  // fan products below.
  checked::numel(op,
                 std::array<std::int64_t, 4>{channels[1], channels[0] / groups, kernel_size[0],
                                             kernel_size[1]},
                 "weight shape");
  try {
    (void)initializer.sampling(channels[0] / groups * kernel_size[0] * kernel_size[1],
                               channels[1] * kernel_size[0] * kernel_size[1]);
  } catch (const ConfigError& e) {
    throw_error<ConfigError>(op, ": initializer: ", e.what());
  }
}

/// In a Sequential: {"type": "conv2d", "channels": [1, 8], "kernel_size": [3, 3], "stride":
/// [1, 1], "padding": "valid" | "same" | [1, 1], ...}, pairs also as one integer; items
/// [channels, height, width].
template <>
struct SequentialRules<Conv2dConfig> {
  static void spec_to_config(config::Value& body, std::string_view at) {
    for (const char* f : {"kernel_size", "stride", "dilation"}) sequential::widen_pair(body, f);
    sequential::spec_padding_to_config(body, at, true);
  }
  static void config_to_spec(config::Value& j) { sequential::config_padding_to_spec(j); }
  static SequentialItem item_shape(const Conv2dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
    const auto [begin, end] =
        c.padding.resolve("Conv2dConfig::init", c.kernel_size, c.stride, c.dilation);
    std::vector<std::int64_t> out{c.channels[1], -1, -1};
    if (in.dims) {
      const auto& d = *in.dims;
      if (d[0] >= 0 && d[0] != c.channels[0]) {
        throw_error<ConfigError>(at, "channels[0] is ", c.channels[0],
                                 " but the previous layer outputs ", in.describe(), " (", d[0],
                                 " channels)");
      }
      out[1] = sequential::conv_out(d[1], c.kernel_size[0], c.stride[0],
                                    sequential::pad_sum(begin[0], end[0], at, "height"),
                                    c.dilation[0], at, "height", in);
      out[2] = sequential::conv_out(d[2], c.kernel_size[1], c.stride[1],
                                    sequential::pad_sum(begin[1], end[1], at, "width"),
                                    c.dilation[1], at, "width", in);
    }
    return SequentialItem{out, std::nullopt};
  }
};
KILN_REGISTER_LAYER(Conv2dConfig, "conv2d");

template <Backend B>
Conv2d<B> Conv2dConfig::init(const Device<B>& device) const {
  check();
  const std::int64_t receptive = kernel_size[0] * kernel_size[1];
  const std::int64_t fan_in = channels[0] / groups * receptive;
  const std::int64_t fan_out = channels[1] * receptive;  // torch: weight.size(0)·receptive
  Conv2d<B> out;
  out.weight = module::Param<Tensor<B, 4>>(initializer.init<B, 4>(
      Shape{channels[1], channels[0] / groups, kernel_size[0], kernel_size[1]}, fan_in, fan_out,
      device));
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
