#pragma once
/// Options of the pooling primitives (Burn's ModuleOps `max_pool2d`, `avg_pool2d`,
/// `adaptive_avg_pool2d`), shared by every backend, and the output-size rule they use.
///
/// Layout NCHW: input [batch_size, channels, height, width]. Pairs are {height, width}.
/// The output size of one spatial dim is PyTorch's `pooling_output_shape`
/// (aten/src/ATen/native/Pool.h):
///   out = floor_or_ceil((in + 2·padding - dilation·(kernel - 1) - 1) / stride) + 1
/// and, in ceil mode, a last window that would start in the right padding (start >=
/// in + padding) is dropped, so every window overlaps the input or the left padding.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/core/shape.hpp"

namespace kiln {

/// max_pool2d's options (torch.nn.functional.max_pool2d).
struct MaxPool2dOptions {
  std::array<std::int64_t, 2> kernel_size{2, 2};  ///< window {height, width}, each >= 1
  std::array<std::int64_t, 2> stride{2, 2};       ///< step {height, width}, each >= 1
  std::array<std::int64_t, 2> padding{0, 0};      ///< -inf padding, each <= kernel / 2
  std::array<std::int64_t, 2> dilation{1, 1};     ///< spacing of window elements, >= 1
  bool ceil_mode = false;                         ///< ceil instead of floor in the size rule
};

/// avg_pool2d's options (torch.nn.functional.avg_pool2d, no divisor_override).
struct AvgPool2dOptions {
  std::array<std::int64_t, 2> kernel_size{2, 2};  ///< window {height, width}, each >= 1
  std::array<std::int64_t, 2> stride{2, 2};       ///< step {height, width}, each >= 1
  std::array<std::int64_t, 2> padding{0, 0};      ///< zero padding, each <= kernel / 2
  /// Divide by the window's size clipped to the padded input (true, PyTorch's default) or
  /// by the number of input elements in it (false).
  bool count_include_pad = true;
  bool ceil_mode = false;  ///< ceil instead of floor in the size rule
};

namespace pool {

/// Output size of one spatial dim (see the file comment); kernel, stride, dilation >= 1 and
/// padding >= 0 are the caller's checks. Throws LimitError naming `op` when a sum or product
/// of the sizes overflows int64 (padding or dilation near 2^63).
std::int64_t output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                         std::int64_t padding, std::int64_t dilation, bool ceil_mode,
                         std::string_view op = "pool");

/// Validates a max_pool2d call and returns the output shape [batch, channels, out_h, out_w].
/// Throws: RankError unless x is 4-D; ConfigError if a kernel, stride or dilation is < 1,
///         a padding < 0 or > kernel / 2 (PyTorch: "pad should be at most half of
///         effective kernel size"); ShapeError if an output dim would be < 1 (the kernel
///         is larger than the padded input). Messages start with `op`.
Shape check_max_pool2d(const char* op, const Shape& x, const MaxPool2dOptions& options);
/// Same for avg_pool2d (dilation 1).
Shape check_avg_pool2d(const char* op, const Shape& x, const AvgPool2dOptions& options);
/// Validates adaptive_avg_pool2d: x 4-D with non-empty height and width, output sizes >= 1.
/// Throws: RankError, ConfigError, ShapeError as above.
/// All three also throw LimitError (naming `op`) when a size overflows int64, or an output
/// plane (out_h · out_w, one channel) or the output has more than 2^31 - 1 elements or more
/// bytes than a buffer may hold (2 GiB in wasm32).
Shape check_adaptive_avg_pool2d(const char* op, const Shape& x,
                                const std::array<std::int64_t, 2>& output_size);

/// First input index of adaptive window i of `out` over `in`: floor(i·in/out) (PyTorch).
inline std::int64_t adaptive_start(std::int64_t i, std::int64_t in, std::int64_t out) {
  return (i * in) / out;
}
/// One past the last input index of adaptive window i: ceil((i + 1)·in/out) (PyTorch).
inline std::int64_t adaptive_end(std::int64_t i, std::int64_t in, std::int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

}  // namespace pool

void append_to(std::string& out, const MaxPool2dOptions& options);
void append_to(std::string& out, const AvgPool2dOptions& options);

}  // namespace kiln
