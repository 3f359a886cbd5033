#pragma once
/// 3-D pooling layers (PyTorch's nn.MaxPool3d, nn.AvgPool3d, nn.AdaptiveAvgPool3d; configs
/// named as Burn's 2-D ones): MaxPool3d, AvgPool3d, AdaptiveAvgPool3d over
/// kiln/nn/functional/pool3d.hpp, input [batch_size, channels, depth, height, width].
///
///   auto pool = nn::MaxPool3dConfig({2, 2, 2}).init();
///   auto y = pool.forward(x);  // [batch_size, channels, 8, 8, 8] -> [batch_size, channels, 4, 4, 4]
///
/// As the 2-D pools (kiln/nn/pool.hpp): no parameters and no backend, triples
/// {depth, height, width}, symmetric padding <= kernel / 2, `strides` defaulting to the
/// kernel. Registered as Sequential layers "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d"
/// (rank-5 activations).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/functional/pool3d.hpp"
#include "kiln/nn/pool.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

namespace detail {
/// `[2, 2, 2]` for printing.
inline ::kiln::StrOut& print_triple(::kiln::StrOut& out, const std::array<std::int64_t, 3>& t) {
  return out << "[" << t[0] << ", " << t[1] << ", " << t[2] << "]";
}
/// An integer given for a {depth, height, width} field of a spec becomes [n, n, n]
/// (PyTorch's int-or-tuple).
inline void widen_triple(config::Value& body, const char* field) {
  config::Value* v = body.find(field);
  if (v && v->is_number_integer()) *v = config::Value::array({*v, *v, *v});
}
/// The items after a 3-D pool (rank 4, [channels, depth, height, width]) in a Sequential spec.
inline SequentialItem pool3d_item_shape(const std::array<std::int64_t, 3>& kernel_size,
                                        const std::array<std::int64_t, 3>& strides,
                                        const std::array<std::int64_t, 3>& padding,
                                        const std::array<std::int64_t, 3>& dilation,
                                        bool ceil_mode, const SequentialItem& in,
                                        std::string_view at) {
  sequential::need_item_rank(in, 4, at, "[batch_size, channels, depth, height, width]");
  if (!in.dims) return SequentialItem{std::vector<std::int64_t>{-1, -1, -1, -1}, std::nullopt};
  const auto& d = *in.dims;
  const char* names[3] = {"depth", "height", "width"};
  std::vector<std::int64_t> out{d[0]};
  for (std::size_t i = 0; i < 3; ++i) {
    out.push_back(sequential::pool_out(d[i + 1], kernel_size[i], strides[i], padding[i],
                                       dilation[i], ceil_mode, at, names[i], in));
  }
  return SequentialItem{out, std::nullopt};
}
}  // namespace detail

// ------------------------------------------------------------------ MaxPool3d

struct MaxPool3d;

/// Configuration of 3-D max pooling (as Burn's MaxPool2dConfig; `strides` default to the
/// kernel, as PyTorch's stride=None).
struct MaxPool3dConfig {
  std::array<std::int64_t, 3> kernel_size;        ///< window {depth, height, width}
  std::array<std::int64_t, 3> strides;            ///< step; default kernel_size
  std::array<std::int64_t, 3> padding{0, 0, 0};   ///< -inf padding, <= kernel / 2
  std::array<std::int64_t, 3> dilation{1, 1, 1};  ///< spacing of window elements
  bool ceil_mode = false;                         ///< ceil in the output-size rule

  explicit MaxPool3dConfig(std::array<std::int64_t, 3> kernel_size)
      : kernel_size(kernel_size), strides(kernel_size) {}
  KILN_CONFIG(MaxPool3dConfig, (kernel_size), (strides, padding, dilation, ceil_mode))

  /// Throws: ConfigError if a kernel size, stride or dilation is < 1, or a padding is
  ///         negative or > kernel_size / 2.
  void check() const {
    const char* op = "MaxPool3dConfig::init";
    detail::check_at_least(op, "kernel_size", kernel_size, 1);
    detail::check_at_least(op, "strides", strides, 1);
    detail::check_at_least(op, "dilation", dilation, 1);
    detail::check_padding(op, padding, kernel_size);
  }
  /// Throws: ConfigError as check().
  MaxPool3d init() const;
};

/// 3-D max pooling (PyTorch nn.MaxPool3d).
struct MaxPool3d {
  functional::MaxPool3dOptions options;

  /// Shapes:    input [batch_size, channels, depth, height, width] ->
  ///            [batch_size, channels, out_d, out_h, out_w]
  /// Throws:    ShapeError if the window is larger than the padded input or a spatial dim
  ///            is empty; RankError for another rank (in a Sequential).
  /// Semantics: nn::functional::max_pool3d.
  template <Backend B>
  Tensor<B, 5> forward(const Tensor<B, 5>& input) const {
    return functional::max_pool3d(input, options);
  }
  /// `MaxPool3d {kernel_size: [2, 2, 2], stride: [2, 2, 2], padding: [0, 0, 0], dilation: [1, 1, 1], ceil_mode: false}`
  friend void append_to(std::string& kiln_text, const MaxPool3d& m) {
    ::kiln::StrOut out(kiln_text);
    out << "MaxPool3d {kernel_size: ";
    detail::print_triple(out, m.options.kernel_size) << ", stride: ";
    detail::print_triple(out, m.options.stride) << ", padding: ";
    detail::print_triple(out, m.options.padding) << ", dilation: ";
    detail::print_triple(out, m.options.dilation);
    out << ", ceil_mode: " << (m.options.ceil_mode ? "true" : "false") << "}";
  }
};

inline MaxPool3d MaxPool3dConfig::init() const {
  check();
  return MaxPool3d{functional::MaxPool3dOptions{kernel_size, strides, padding, dilation, ceil_mode}};
}

/// In a Sequential: {"type": "max_pool3d", "kernel_size": [2, 2, 2], "stride": 2, ...}: the
/// spec says "stride" (as PyTorch) for the config's "strides"; triples also as one integer;
/// items [channels, depth, height, width].
template <>
struct SequentialRules<MaxPool3dConfig> {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 1> renames{
      {{"stride", "strides"}}};
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"kernel_size", "stride", "padding", "dilation"}) {
      detail::widen_triple(body, f);
    }
  }
  static SequentialItem item_shape(const MaxPool3dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::pool3d_item_shape(c.kernel_size, c.strides, c.padding, c.dilation, c.ceil_mode,
                                     in, at);
  }
};
KILN_REGISTER_LAYER(MaxPool3dConfig, "max_pool3d");

// ------------------------------------------------------------------ AvgPool3d

struct AvgPool3d;

/// Configuration of 3-D average pooling (as Burn's AvgPool2dConfig).
struct AvgPool3dConfig {
  std::array<std::int64_t, 3> kernel_size;       ///< window {depth, height, width}
  std::array<std::int64_t, 3> strides;           ///< step; default kernel_size
  std::array<std::int64_t, 3> padding{0, 0, 0};  ///< zero padding, <= kernel / 2
  bool count_include_pad = true;                 ///< padded window size as divisor (PyTorch's default)
  bool ceil_mode = false;                        ///< ceil in the output-size rule

  explicit AvgPool3dConfig(std::array<std::int64_t, 3> kernel_size)
      : kernel_size(kernel_size), strides(kernel_size) {}
  KILN_CONFIG(AvgPool3dConfig, (kernel_size), (strides, padding, count_include_pad, ceil_mode))

  /// Throws: ConfigError if a kernel size or stride is < 1, or a padding is negative or
  ///         > kernel_size / 2.
  void check() const {
    const char* op = "AvgPool3dConfig::init";
    detail::check_at_least(op, "kernel_size", kernel_size, 1);
    detail::check_at_least(op, "strides", strides, 1);
    detail::check_padding(op, padding, kernel_size);
  }
  /// Throws: ConfigError as check().
  AvgPool3d init() const;
};

/// 3-D average pooling (PyTorch nn.AvgPool3d, no divisor_override).
struct AvgPool3d {
  functional::AvgPool3dOptions options;

  /// Shapes:    as MaxPool3d.
  /// Throws:    as MaxPool3d.
  /// Semantics: nn::functional::avg_pool3d (divisor rules there).
  template <Backend B>
  Tensor<B, 5> forward(const Tensor<B, 5>& input) const {
    return functional::avg_pool3d(input, options);
  }
  /// `AvgPool3d {kernel_size: [2, 2, 2], stride: [2, 2, 2], padding: [0, 0, 0], count_include_pad: true, ceil_mode: false}`
  friend void append_to(std::string& kiln_text, const AvgPool3d& m) {
    ::kiln::StrOut out(kiln_text);
    out << "AvgPool3d {kernel_size: ";
    detail::print_triple(out, m.options.kernel_size) << ", stride: ";
    detail::print_triple(out, m.options.stride) << ", padding: ";
    detail::print_triple(out, m.options.padding);
    out << ", count_include_pad: " << (m.options.count_include_pad ? "true" : "false")
               << ", ceil_mode: " << (m.options.ceil_mode ? "true" : "false") << "}";
  }
};

inline AvgPool3d AvgPool3dConfig::init() const {
  check();
  return AvgPool3d{
      functional::AvgPool3dOptions{kernel_size, strides, padding, count_include_pad, ceil_mode}};
}

/// In a Sequential: as max_pool3d ("stride" for "strides"), without dilation.
template <>
struct SequentialRules<AvgPool3dConfig> {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 1> renames{
      {{"stride", "strides"}}};
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"kernel_size", "stride", "padding"}) detail::widen_triple(body, f);
  }
  static SequentialItem item_shape(const AvgPool3dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::pool3d_item_shape(c.kernel_size, c.strides, c.padding, {1, 1, 1}, c.ceil_mode,
                                     in, at);
  }
};
KILN_REGISTER_LAYER(AvgPool3dConfig, "avg_pool3d");

// ------------------------------------------------------------------ AdaptiveAvgPool3d

struct AdaptiveAvgPool3d;

/// Configuration of 3-D adaptive average pooling (as Burn's AdaptiveAvgPool2dConfig).
struct AdaptiveAvgPool3dConfig {
  std::array<std::int64_t, 3> output_size;  ///< {out_d, out_h, out_w}, each >= 1

  explicit AdaptiveAvgPool3dConfig(std::array<std::int64_t, 3> output_size)
      : output_size(output_size) {}
  KILN_CONFIG(AdaptiveAvgPool3dConfig, (output_size), ())

  /// Throws: ConfigError if an output size is < 1.
  void check() const {
    detail::check_at_least("AdaptiveAvgPool3dConfig::init", "output_size", output_size, 1);
  }
  /// Throws: ConfigError as check().
  AdaptiveAvgPool3d init() const;
};

/// 3-D adaptive average pooling (PyTorch nn.AdaptiveAvgPool3d).
struct AdaptiveAvgPool3d {
  std::array<std::int64_t, 3> output_size{1, 1, 1};

  /// Shapes:    input [batch_size, channels, depth, height, width] ->
  ///            [batch_size, channels, out_d, out_h, out_w]
  /// Throws:    ShapeError for an empty depth, height or width.
  /// Semantics: nn::functional::adaptive_avg_pool3d.
  template <Backend B>
  Tensor<B, 5> forward(const Tensor<B, 5>& input) const {
    return functional::adaptive_avg_pool3d(input, output_size);
  }
  /// `AdaptiveAvgPool3d {output_size: [1, 1, 1]}`
  friend void append_to(std::string& kiln_text, const AdaptiveAvgPool3d& m) {
    ::kiln::StrOut out(kiln_text);
    out << "AdaptiveAvgPool3d {output_size: ";
    detail::print_triple(out, m.output_size) << "}";
  }
};

inline AdaptiveAvgPool3d AdaptiveAvgPool3dConfig::init() const {
  check();
  return AdaptiveAvgPool3d{output_size};
}

/// In a Sequential: {"type": "adaptive_avg_pool3d", "output_size": [1, 1, 1]} (or one
/// integer); items [channels, out_d, out_h, out_w].
template <>
struct SequentialRules<AdaptiveAvgPool3dConfig> {
  static void spec_to_config(config::Value& body, std::string_view) {
    detail::widen_triple(body, "output_size");
  }
  static SequentialItem item_shape(const AdaptiveAvgPool3dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 4, at, "[batch_size, channels, depth, height, width]");
    return SequentialItem{std::vector<std::int64_t>{in.dims ? (*in.dims)[0] : -1, c.output_size[0],
                                                    c.output_size[1], c.output_size[2]},
                          std::nullopt};
  }
};
KILN_REGISTER_LAYER(AdaptiveAvgPool3dConfig, "adaptive_avg_pool3d");

}  // namespace kiln::nn
