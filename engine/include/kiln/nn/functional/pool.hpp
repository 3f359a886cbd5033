#pragma once
/// Pooling on typed tensors (Burn's `burn::tensor::module::{max_pool2d, avg_pool2d, ...}`,
/// PyTorch's torch.nn.functional), NCHW. Differentiable on `Autodiff<B>`; the 1-D forms
/// run the 2-D primitives on [batch, channels, 1, length] (as Burn's default ModuleOps).
///
///   auto y = nn::functional::max_pool2d(x, MaxPool2dOptions{{2, 2}, {2, 2}});  // [N, C, H/2, W/2]
///   auto z = nn::functional::adaptive_avg_pool2d(x, {1, 1});                  // [N, C, 1, 1]
#include <array>
#include <cstdint>
#include <utility>

#include "kiln/backend/pool_options.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::functional {

/// max_pool1d's options (torch.nn.functional.max_pool1d).
struct MaxPool1dOptions {
  std::int64_t kernel_size = 2;  ///< window length, >= 1
  std::int64_t stride = 2;       ///< step, >= 1
  std::int64_t padding = 0;      ///< -inf padding, <= kernel_size / 2
  std::int64_t dilation = 1;     ///< spacing of window elements, >= 1
  bool ceil_mode = false;        ///< ceil instead of floor in the output-size rule
};

/// avg_pool1d's options (torch.nn.functional.avg_pool1d).
struct AvgPool1dOptions {
  std::int64_t kernel_size = 2;   ///< window length, >= 1
  std::int64_t stride = 2;        ///< step, >= 1
  std::int64_t padding = 0;       ///< zero padding, <= kernel_size / 2
  bool count_include_pad = true;  ///< divide by the padded window size (true) or the inside count
  bool ceil_mode = false;         ///< ceil instead of floor in the output-size rule
};

/// The max of each window.
///
/// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h, out_w],
///            out = floor((in + 2·padding - dilation·(kernel - 1) - 1) / stride) + 1 (ceil in
///            ceil_mode, dropping a last window that starts in the right padding).
/// Throws:    ConfigError for a kernel/stride/dilation < 1 or padding > kernel / 2; ShapeError
///            if the window is larger than the padded input; LimitError if a size overflows
///            int64 or the output (or one channel of it) passes 2^31 - 1 elements; DTypeError
///            never (Float only).
/// Gradient:  to the first maximum of each window in row-major order (PyTorch CPU),
///            accumulated where windows overlap.
/// Semantics: torch.nn.functional.max_pool2d, Burn's module::max_pool2d.
template <Backend B>
Tensor<B, 4> max_pool2d(const Tensor<B, 4>& input, const MaxPool2dOptions& options) {
  return Tensor<B, 4>(B::FloatOps::max_pool2d(input.primitive(), options));
}

/// max_pool2d and the index of each max in its [height, width] plane (h·width + w), as
/// torch's return_indices=True. Shapes: both [batch_size, channels, out_h, out_w].
template <Backend B>
std::pair<Tensor<B, 4>, Tensor<B, 4, Int>> max_pool2d_with_indices(
    const Tensor<B, 4>& input, const MaxPool2dOptions& options) {
  auto [out, indices] = B::FloatOps::max_pool2d_with_indices(input.primitive(), options);
  return {Tensor<B, 4>(std::move(out)), Tensor<B, 4, Int>(std::move(indices))};
}

/// The mean of each window (zero padding).
///
/// Shapes:    as max_pool2d (dilation 1).
/// Divisor:   count_include_pad: the window clipped to the padded input (a ceil-mode window
///            running past it counts only up to its edge); otherwise the number of input
///            elements in the window. A window holding no input element gives 0 (PyTorch).
/// Throws:    as max_pool2d.
/// Semantics: torch.nn.functional.avg_pool2d (no divisor_override), Burn's module::avg_pool2d.
template <Backend B>
Tensor<B, 4> avg_pool2d(const Tensor<B, 4>& input, const AvgPool2dOptions& options) {
  return Tensor<B, 4>(B::FloatOps::avg_pool2d(input.primitive(), options));
}

/// The mean over output cell (i, j)'s window rows [floor(i·H/out_h), ceil((i+1)·H/out_h)) and
/// likewise columns (windows may overlap when sizes do not divide).
///
/// Shapes:    input [batch_size, channels, height, width] -> [batch_size, channels, out_h, out_w]
/// Throws:    ConfigError if an output size is < 1; ShapeError for an empty height or width;
///            LimitError if out_h · out_w (one channel) or the output passes 2^31 - 1
///            elements (`output size [65536, 65536] per channel gives 4294967296 elements`).
/// Semantics: torch.nn.functional.adaptive_avg_pool2d, Burn's module::adaptive_avg_pool2d.
template <Backend B>
Tensor<B, 4> adaptive_avg_pool2d(const Tensor<B, 4>& input,
                                 const std::array<std::int64_t, 2>& output_size) {
  return Tensor<B, 4>(B::FloatOps::adaptive_avg_pool2d(input.primitive(), output_size));
}

namespace detail {
template <Backend B>
Tensor<B, 4> as_2d(const Tensor<B, 3>& input) {
  const auto [n, c, l] = input.dims();
  return input.template reshape<4>(std::array<std::int64_t, 4>{n, c, 1, l});
}
template <Backend B, class K = Float>
Tensor<B, 3, K> as_1d(const Tensor<B, 4, K>& output) {
  const auto [n, c, one, l] = output.dims();
  (void)one;
  return output.template reshape<3>(std::array<std::int64_t, 3>{n, c, l});
}
}  // namespace detail

/// 1-D max pooling. Shapes: input [batch_size, channels, length] -> [batch_size, channels,
/// out_length]. Throws, gradient, semantics: as max_pool2d (torch.nn.functional.max_pool1d).
template <Backend B>
Tensor<B, 3> max_pool1d(const Tensor<B, 3>& input, const MaxPool1dOptions& o) {
  const MaxPool2dOptions o2{{1, o.kernel_size}, {1, o.stride}, {0, o.padding}, {1, o.dilation},
                            o.ceil_mode};
  return detail::as_1d(max_pool2d(detail::as_2d(input), o2));
}

/// 1-D max pooling with the index of each max along the length.
template <Backend B>
std::pair<Tensor<B, 3>, Tensor<B, 3, Int>> max_pool1d_with_indices(const Tensor<B, 3>& input,
                                                                   const MaxPool1dOptions& o) {
  const MaxPool2dOptions o2{{1, o.kernel_size}, {1, o.stride}, {0, o.padding}, {1, o.dilation},
                            o.ceil_mode};
  auto [out, idx] = max_pool2d_with_indices(detail::as_2d(input), o2);
  return {detail::as_1d(out), detail::as_1d<B, Int>(idx)};
}

/// 1-D average pooling. Shapes: input [batch_size, channels, length] -> [batch_size, channels,
/// out_length]. Divisor, throws, semantics: as avg_pool2d (torch.nn.functional.avg_pool1d).
template <Backend B>
Tensor<B, 3> avg_pool1d(const Tensor<B, 3>& input, const AvgPool1dOptions& o) {
  const AvgPool2dOptions o2{{1, o.kernel_size}, {1, o.stride}, {0, o.padding},
                            o.count_include_pad, o.ceil_mode};
  return detail::as_1d(avg_pool2d(detail::as_2d(input), o2));
}

/// 1-D adaptive average pooling. Shapes: input [batch_size, channels, length] ->
/// [batch_size, channels, output_size] (torch.nn.functional.adaptive_avg_pool1d).
template <Backend B>
Tensor<B, 3> adaptive_avg_pool1d(const Tensor<B, 3>& input, std::int64_t output_size) {
  return detail::as_1d(adaptive_avg_pool2d(detail::as_2d(input), {1, output_size}));
}

}  // namespace kiln::nn::functional
