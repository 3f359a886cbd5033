#pragma once
/// Pooling layers (Burn's `nn::pool`, PyTorch's nn.MaxPool2d ...): MaxPool1d/2d,
/// AvgPool1d/2d, AdaptiveAvgPool1d/2d and their configs, over kiln/nn/functional/pool.hpp.
///
///   auto pool = nn::MaxPool2dConfig({2, 2}).with_strides({2, 2}).with_padding({0, 0}).init();
///   auto y = pool.forward(x);  // [batch_size, channels, 28, 28] -> [batch_size, channels, 14, 14]
///
/// The layers hold no parameters and no backend (as Burn's): plain values whose `forward`
/// is a template over the backend. As KILN_MODULE fields they are copied by valid() and
/// printed, and nothing is recorded for them.
///
/// Padding is the explicit symmetric {height, width} (PyTorch's `padding`); Burn's
/// PaddingConfig2d (Valid/Same/Explicit) is not used here (see the report of issue 5).
#include <array>
#include <cstdint>
#include <string>

#include "kiln/backend/pool_options.hpp"
#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/functional/pool.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

namespace detail {
/// `[2, 2]` for printing.
inline ::kiln::StrOut& print_pair(::kiln::StrOut& out, const std::array<std::int64_t, 2>& p) {
  return out << "[" << p[0] << ", " << p[1] << "]";
}
/// Throws ConfigError `<op>: <field> must be >= <min>, got ...` for any entry below min.
template <std::size_t N>
void check_at_least(const char* op, const char* field, const std::array<std::int64_t, N>& v,
                    std::int64_t min) {
  for (auto x : v) {
    if (x < min) {
      throw_error<ConfigError>(op, ": ", field, " must be >= ", min, ", got ", x);
    }
  }
}
/// Throws ConfigError unless 0 <= padding <= kernel / 2 (PyTorch's rule).
template <std::size_t N>
void check_padding(const char* op, const std::array<std::int64_t, N>& padding,
                   const std::array<std::int64_t, N>& kernel) {
  for (std::size_t i = 0; i < N; ++i) {
    if (padding[i] < 0 || padding[i] > kernel[i] / 2) {
      throw_error<ConfigError>(op, ": padding must be in [0, kernel_size / 2] (as PyTorch), got ",
                               "padding ", padding[i], " for kernel_size ", kernel[i]);
    }
  }
}
}  // namespace detail

// ------------------------------------------------------------------ MaxPool2d

struct MaxPool2d;

/// Configuration of 2-D max pooling (Burn's MaxPool2dConfig; `strides` default to the kernel).
struct MaxPool2dConfig {
  std::array<std::int64_t, 2> kernel_size;          ///< window {height, width}
  std::array<std::int64_t, 2> strides;              ///< step {height, width}; default kernel_size
  std::array<std::int64_t, 2> padding{0, 0};        ///< -inf padding {height, width}, <= kernel / 2
  std::array<std::int64_t, 2> dilation{1, 1};       ///< spacing of window elements
  bool ceil_mode = false;                           ///< ceil in the output-size rule

  explicit MaxPool2dConfig(std::array<std::int64_t, 2> kernel_size)
      : kernel_size(kernel_size), strides(kernel_size) {}
  KILN_CONFIG(MaxPool2dConfig, (kernel_size), (strides, padding, dilation, ceil_mode))

  /// Throws: ConfigError if a kernel size, stride or dilation is < 1, or a padding is
  ///         negative or > kernel_size / 2.
  void check() const {
    const char* op = "MaxPool2dConfig::init";
    detail::check_at_least(op, "kernel_size", kernel_size, 1);
    detail::check_at_least(op, "strides", strides, 1);
    detail::check_at_least(op, "dilation", dilation, 1);
    detail::check_padding(op, padding, kernel_size);
  }
  /// Throws: ConfigError as check().
  MaxPool2d init() const;
};

/// 2-D max pooling (PyTorch nn.MaxPool2d, Burn nn::pool::MaxPool2d).
struct MaxPool2d {
  MaxPool2dOptions options;

  /// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h, out_w]
  /// Throws:    ShapeError if the window is larger than the padded input.
  /// Semantics: nn::functional::max_pool2d.
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& input) const {
    return functional::max_pool2d(input, options);
  }
  friend bool operator==(const MaxPool2d& a, const MaxPool2d& b) {
    return a.options.kernel_size == b.options.kernel_size && a.options.stride == b.options.stride &&
           a.options.padding == b.options.padding && a.options.dilation == b.options.dilation &&
           a.options.ceil_mode == b.options.ceil_mode;
  }
  /// `MaxPool2d {kernel_size: [2, 2], stride: [2, 2], padding: [0, 0], dilation: [1, 1], ceil_mode: false}`
  friend void append_to(std::string& kiln_text, const MaxPool2d& m) {
    ::kiln::StrOut out(kiln_text);
    out << "MaxPool2d {kernel_size: ";
    detail::print_pair(out, m.options.kernel_size) << ", stride: ";
    detail::print_pair(out, m.options.stride) << ", padding: ";
    detail::print_pair(out, m.options.padding) << ", dilation: ";
    detail::print_pair(out, m.options.dilation);
    out << ", ceil_mode: " << (m.options.ceil_mode ? "true" : "false") << "}";
  }
};

inline MaxPool2d MaxPool2dConfig::init() const {
  check();
  return MaxPool2d{MaxPool2dOptions{kernel_size, strides, padding, dilation, ceil_mode}};
}

namespace detail {
/// The items after a 2-D pool (rank 3, [channels, height, width]) in a Sequential spec.
inline SequentialItem pool2d_item_shape(const std::array<std::int64_t, 2>& kernel_size,
                                        const std::array<std::int64_t, 2>& strides,
                                        const std::array<std::int64_t, 2>& padding,
                                        const std::array<std::int64_t, 2>& dilation,
                                        bool ceil_mode, const SequentialItem& in,
                                        std::string_view at) {
  sequential::need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
  if (!in.dims) return SequentialItem{std::vector<std::int64_t>{-1, -1, -1}, std::nullopt};
  const auto& d = *in.dims;
  return SequentialItem{
      std::vector<std::int64_t>{d[0],
                                sequential::pool_out(d[1], kernel_size[0], strides[0], padding[0],
                                                     dilation[0], ceil_mode, at, "height", in),
                                sequential::pool_out(d[2], kernel_size[1], strides[1], padding[1],
                                                     dilation[1], ceil_mode, at, "width", in)},
      std::nullopt};
}
}  // namespace detail

/// In a Sequential: {"type": "max_pool2d", "kernel_size": [2, 2], "stride": [2, 2], ...}:
/// the spec says "stride" (as conv2d and PyTorch) for the config's "strides"; pairs also as
/// one integer; items [channels, height, width].
template <>
struct SequentialRules<MaxPool2dConfig> {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 1> renames{
      {{"stride", "strides"}}};
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"kernel_size", "stride", "padding", "dilation"}) {
      sequential::widen_pair(body, f);
    }
  }
  static SequentialItem item_shape(const MaxPool2dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::pool2d_item_shape(c.kernel_size, c.strides, c.padding, c.dilation, c.ceil_mode,
                                     in, at);
  }
};
KILN_REGISTER_LAYER(MaxPool2dConfig, "max_pool2d");

// ------------------------------------------------------------------ MaxPool1d

struct MaxPool1d;

/// Configuration of 1-D max pooling (Burn's MaxPool1dConfig; `stride` defaults to the kernel).
struct MaxPool1dConfig {
  std::int64_t kernel_size;  ///< window length
  std::int64_t stride;       ///< step; default kernel_size
  std::int64_t padding = 0;  ///< -inf padding, <= kernel_size / 2
  std::int64_t dilation = 1;
  bool ceil_mode = false;

  explicit MaxPool1dConfig(std::int64_t kernel_size)
      : kernel_size(kernel_size), stride(kernel_size) {}
  KILN_CONFIG(MaxPool1dConfig, (kernel_size), (stride, padding, dilation, ceil_mode))

  /// Throws: ConfigError if kernel_size, stride or dilation is < 1, or padding is negative
  ///         or > kernel_size / 2 (as MaxPool2dConfig).
  void check() const {
    const char* op = "MaxPool1dConfig::init";
    detail::check_at_least<1>(op, "kernel_size", {kernel_size}, 1);
    detail::check_at_least<1>(op, "stride", {stride}, 1);
    detail::check_at_least<1>(op, "dilation", {dilation}, 1);
    detail::check_padding<1>(op, {padding}, {kernel_size});
  }
  /// Throws: ConfigError as check().
  MaxPool1d init() const;
};

namespace detail {
/// The items after a 1-D pool (rank 2, [channels, length]) in a Sequential spec.
inline SequentialItem pool1d_item_shape(std::int64_t kernel_size, std::int64_t stride,
                                        std::int64_t padding, std::int64_t dilation,
                                        bool ceil_mode, const SequentialItem& in,
                                        std::string_view at) {
  sequential::need_item_rank(in, 2, at, "[batch_size, channels, length]");
  if (!in.dims) return SequentialItem{std::vector<std::int64_t>{-1, -1}, std::nullopt};
  const auto& d = *in.dims;
  return SequentialItem{
      std::vector<std::int64_t>{d[0], sequential::pool_out(d[1], kernel_size, stride, padding,
                                                           dilation, ceil_mode, at, "length", in)},
      std::nullopt};
}
}  // namespace detail

/// In a Sequential: {"type": "max_pool1d", "kernel_size": 2, "stride": 2, ...}; items
/// [channels, length].
template <>
struct SequentialRules<MaxPool1dConfig> {
  static SequentialItem item_shape(const MaxPool1dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::pool1d_item_shape(c.kernel_size, c.stride, c.padding, c.dilation, c.ceil_mode,
                                     in, at);
  }
};
KILN_REGISTER_LAYER(MaxPool1dConfig, "max_pool1d");

/// 1-D max pooling (PyTorch nn.MaxPool1d, Burn nn::pool::MaxPool1d).
struct MaxPool1d {
  functional::MaxPool1dOptions options;

  /// Shapes: input [batch_size, channels, length] -> [batch_size, channels, out_length]
  /// Throws: ShapeError if the window is larger than the padded input.
  template <Backend B>
  Tensor<B, 3> forward(const Tensor<B, 3>& input) const {
    return functional::max_pool1d(input, options);
  }
  /// `MaxPool1d {kernel_size: 3, stride: 3, padding: 0, dilation: 1, ceil_mode: false}`
  friend void append_to(std::string& kiln_text, const MaxPool1d& m) {
    ::kiln::StrOut{kiln_text} << "MaxPool1d {kernel_size: " << m.options.kernel_size
               << ", stride: " << m.options.stride << ", padding: " << m.options.padding
               << ", dilation: " << m.options.dilation
               << ", ceil_mode: " << (m.options.ceil_mode ? "true" : "false") << "}";
  }
};

inline MaxPool1d MaxPool1dConfig::init() const {
  check();
  return MaxPool1d{functional::MaxPool1dOptions{kernel_size, stride, padding, dilation, ceil_mode}};
}

// ------------------------------------------------------------------ AvgPool2d

struct AvgPool2d;

/// Configuration of 2-D average pooling (Burn's AvgPool2dConfig; `strides` default to the
/// kernel as PyTorch's).
struct AvgPool2dConfig {
  std::array<std::int64_t, 2> kernel_size;    ///< window {height, width}
  std::array<std::int64_t, 2> strides;        ///< step; default kernel_size
  std::array<std::int64_t, 2> padding{0, 0};  ///< zero padding, <= kernel / 2
  bool count_include_pad = true;              ///< padded window size as divisor (PyTorch's default)
  bool ceil_mode = false;                     ///< ceil in the output-size rule

  explicit AvgPool2dConfig(std::array<std::int64_t, 2> kernel_size)
      : kernel_size(kernel_size), strides(kernel_size) {}
  KILN_CONFIG(AvgPool2dConfig, (kernel_size), (strides, padding, count_include_pad, ceil_mode))

  /// Throws: ConfigError if a kernel size or stride is < 1, or a padding is negative or
  ///         > kernel_size / 2.
  void check() const {
    const char* op = "AvgPool2dConfig::init";
    detail::check_at_least(op, "kernel_size", kernel_size, 1);
    detail::check_at_least(op, "strides", strides, 1);
    detail::check_padding(op, padding, kernel_size);
  }
  /// Throws: ConfigError as check().
  AvgPool2d init() const;
};

/// 2-D average pooling (PyTorch nn.AvgPool2d, Burn nn::pool::AvgPool2d).
struct AvgPool2d {
  AvgPool2dOptions options;

  /// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h, out_w]
  /// Throws:    ShapeError if the window is larger than the padded input.
  /// Semantics: nn::functional::avg_pool2d (divisor rules there).
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& input) const {
    return functional::avg_pool2d(input, options);
  }
  /// `AvgPool2d {kernel_size: [3, 3], stride: [2, 2], padding: [1, 1], count_include_pad: true, ceil_mode: false}`
  friend void append_to(std::string& kiln_text, const AvgPool2d& m) {
    ::kiln::StrOut out(kiln_text);
    out << "AvgPool2d {kernel_size: ";
    detail::print_pair(out, m.options.kernel_size) << ", stride: ";
    detail::print_pair(out, m.options.stride) << ", padding: ";
    detail::print_pair(out, m.options.padding);
    out << ", count_include_pad: " << (m.options.count_include_pad ? "true" : "false")
               << ", ceil_mode: " << (m.options.ceil_mode ? "true" : "false") << "}";
  }
};

inline AvgPool2d AvgPool2dConfig::init() const {
  check();
  return AvgPool2d{AvgPool2dOptions{kernel_size, strides, padding, count_include_pad, ceil_mode}};
}

/// In a Sequential: as max_pool2d ("stride" for "strides"), without dilation.
template <>
struct SequentialRules<AvgPool2dConfig> {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 1> renames{
      {{"stride", "strides"}}};
  static void spec_to_config(config::Value& body, std::string_view) {
    for (const char* f : {"kernel_size", "stride", "padding", "dilation"}) {
      sequential::widen_pair(body, f);
    }
  }
  static SequentialItem item_shape(const AvgPool2dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::pool2d_item_shape(c.kernel_size, c.strides, c.padding, {1, 1}, c.ceil_mode, in,
                                     at);
  }
};
KILN_REGISTER_LAYER(AvgPool2dConfig, "avg_pool2d");

// ------------------------------------------------------------------ AvgPool1d

struct AvgPool1d;

/// Configuration of 1-D average pooling (Burn's AvgPool1dConfig; `stride` defaults to the kernel).
struct AvgPool1dConfig {
  std::int64_t kernel_size;
  std::int64_t stride;  ///< default kernel_size
  std::int64_t padding = 0;
  bool count_include_pad = true;
  bool ceil_mode = false;

  explicit AvgPool1dConfig(std::int64_t kernel_size)
      : kernel_size(kernel_size), stride(kernel_size) {}
  KILN_CONFIG(AvgPool1dConfig, (kernel_size), (stride, padding, count_include_pad, ceil_mode))

  /// Throws: ConfigError if kernel_size or stride is < 1, or padding is negative or
  ///         > kernel_size / 2 (as AvgPool2dConfig).
  void check() const {
    const char* op = "AvgPool1dConfig::init";
    detail::check_at_least<1>(op, "kernel_size", {kernel_size}, 1);
    detail::check_at_least<1>(op, "stride", {stride}, 1);
    detail::check_padding<1>(op, {padding}, {kernel_size});
  }
  /// Throws: ConfigError as check().
  AvgPool1d init() const;
};

/// In a Sequential: {"type": "avg_pool1d", "kernel_size": 2, ...}; items [channels, length].
template <>
struct SequentialRules<AvgPool1dConfig> {
  static SequentialItem item_shape(const AvgPool1dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return detail::pool1d_item_shape(c.kernel_size, c.stride, c.padding, 1, c.ceil_mode, in, at);
  }
};
KILN_REGISTER_LAYER(AvgPool1dConfig, "avg_pool1d");

/// 1-D average pooling (PyTorch nn.AvgPool1d, Burn nn::pool::AvgPool1d).
struct AvgPool1d {
  functional::AvgPool1dOptions options;

  /// Shapes: input [batch_size, channels, length] -> [batch_size, channels, out_length]
  template <Backend B>
  Tensor<B, 3> forward(const Tensor<B, 3>& input) const {
    return functional::avg_pool1d(input, options);
  }
  /// `AvgPool1d {kernel_size: 3, stride: 3, padding: 0, count_include_pad: true, ceil_mode: false}`
  friend void append_to(std::string& kiln_text, const AvgPool1d& m) {
    ::kiln::StrOut{kiln_text} << "AvgPool1d {kernel_size: " << m.options.kernel_size
               << ", stride: " << m.options.stride << ", padding: " << m.options.padding
               << ", count_include_pad: " << (m.options.count_include_pad ? "true" : "false")
               << ", ceil_mode: " << (m.options.ceil_mode ? "true" : "false") << "}";
  }
};

inline AvgPool1d AvgPool1dConfig::init() const {
  check();
  return AvgPool1d{
      functional::AvgPool1dOptions{kernel_size, stride, padding, count_include_pad, ceil_mode}};
}

// ------------------------------------------------------------------ adaptive

struct AdaptiveAvgPool2d;
struct AdaptiveAvgPool1d;

/// Configuration of 2-D adaptive average pooling (Burn's AdaptiveAvgPool2dConfig).
struct AdaptiveAvgPool2dConfig {
  std::array<std::int64_t, 2> output_size;  ///< {out_h, out_w}, each >= 1

  explicit AdaptiveAvgPool2dConfig(std::array<std::int64_t, 2> output_size)
      : output_size(output_size) {}
  KILN_CONFIG(AdaptiveAvgPool2dConfig, (output_size), ())

  /// Throws: ConfigError if an output size is < 1.
  void check() const {
    detail::check_at_least("AdaptiveAvgPool2dConfig::init", "output_size", output_size, 1);
  }
  /// Throws: ConfigError as check().
  AdaptiveAvgPool2d init() const;
};

/// 2-D adaptive average pooling (PyTorch nn.AdaptiveAvgPool2d, Burn nn::pool::AdaptiveAvgPool2d).
struct AdaptiveAvgPool2d {
  std::array<std::int64_t, 2> output_size{1, 1};

  /// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h, out_w]
  /// Semantics: nn::functional::adaptive_avg_pool2d (windows [floor(i·in/out), ceil((i+1)·in/out))).
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& input) const {
    return functional::adaptive_avg_pool2d(input, output_size);
  }
  /// `AdaptiveAvgPool2d {output_size: [3, 3]}`
  friend void append_to(std::string& kiln_text, const AdaptiveAvgPool2d& m) {
    ::kiln::StrOut out(kiln_text);
    out << "AdaptiveAvgPool2d {output_size: ";
    detail::print_pair(out, m.output_size) << "}";
  }
};

inline AdaptiveAvgPool2d AdaptiveAvgPool2dConfig::init() const {
  check();
  return AdaptiveAvgPool2d{output_size};
}

/// In a Sequential: {"type": "adaptive_avg_pool2d", "output_size": [1, 1]} (or one integer);
/// items [channels, out_h, out_w].
template <>
struct SequentialRules<AdaptiveAvgPool2dConfig> {
  static void spec_to_config(config::Value& body, std::string_view) {
    sequential::widen_pair(body, "output_size");
  }
  static SequentialItem item_shape(const AdaptiveAvgPool2dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
    return SequentialItem{
        std::vector<std::int64_t>{in.dims ? (*in.dims)[0] : -1, c.output_size[0], c.output_size[1]},
        std::nullopt};
  }
};
KILN_REGISTER_LAYER(AdaptiveAvgPool2dConfig, "adaptive_avg_pool2d");

/// Configuration of 1-D adaptive average pooling (Burn's AdaptiveAvgPool1dConfig).
struct AdaptiveAvgPool1dConfig {
  std::int64_t output_size;  ///< >= 1

  explicit AdaptiveAvgPool1dConfig(std::int64_t output_size) : output_size(output_size) {}
  KILN_CONFIG(AdaptiveAvgPool1dConfig, (output_size), ())

  /// Throws: ConfigError if output_size < 1.
  void check() const {
    detail::check_at_least<1>("AdaptiveAvgPool1dConfig::init", "output_size", {output_size}, 1);
  }
  /// Throws: ConfigError as check().
  AdaptiveAvgPool1d init() const;
};

/// In a Sequential: {"type": "adaptive_avg_pool1d", "output_size": 4}; items [channels,
/// output_size].
template <>
struct SequentialRules<AdaptiveAvgPool1dConfig> {
  static SequentialItem item_shape(const AdaptiveAvgPool1dConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    sequential::need_item_rank(in, 2, at, "[batch_size, channels, length]");
    return SequentialItem{std::vector<std::int64_t>{in.dims ? (*in.dims)[0] : -1, c.output_size},
                          std::nullopt};
  }
};
KILN_REGISTER_LAYER(AdaptiveAvgPool1dConfig, "adaptive_avg_pool1d");

/// 1-D adaptive average pooling (PyTorch nn.AdaptiveAvgPool1d).
struct AdaptiveAvgPool1d {
  std::int64_t output_size = 1;

  /// Shapes: input [batch_size, channels, length] -> [batch_size, channels, output_size]
  template <Backend B>
  Tensor<B, 3> forward(const Tensor<B, 3>& input) const {
    return functional::adaptive_avg_pool1d(input, output_size);
  }
  /// `AdaptiveAvgPool1d {output_size: 4}`
  friend void append_to(std::string& kiln_text, const AdaptiveAvgPool1d& m) {
    ::kiln::StrOut{kiln_text} << "AdaptiveAvgPool1d {output_size: " << m.output_size << "}";
  }
};

inline AdaptiveAvgPool1d AdaptiveAvgPool1dConfig::init() const {
  check();
  return AdaptiveAvgPool1d{output_size};
}

}  // namespace kiln::nn
