#pragma once
/// 3-D pooling on typed tensors (PyTorch's torch.nn.functional.max_pool3d, avg_pool3d,
/// adaptive_avg_pool3d), layout NCDHW: input [batch_size, channels, depth, height, width].
/// Differentiable on `Autodiff<B>`.
///
/// No primitive of their own: a 3-D window is the product of a {height, width} window and a
/// depth window, and max, the window sums and PyTorch's divisors (the padded or the inside
/// extent of each dim, multiplied) all factor over it, so each runs the 2-D primitive twice:
/// over {height, width} on [batch·channels·depth, 1, height, width], then over depth on
/// [batch·channels, 1, depth, out_h·out_w] with a {kernel_d, 1} window. The max's gradient
/// still goes to the first maximum of the window in (depth, height, width) order, as
/// PyTorch's CPU kernel (the first maximum of each plane, then the first plane holding the
/// largest): checked against torch.nn.functional.max_pool3d with ties in
/// tests/native/nn/pool3d_test.cpp.
///
///   auto y = nn::functional::max_pool3d(x, {{2, 2, 2}, {2, 2, 2}});  // [N, C, D/2, H/2, W/2]
#include <array>
#include <cstdint>

#include "kiln/backend/pool_options.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn::functional {

/// max_pool3d's options (torch.nn.functional.max_pool3d); triples are {depth, height, width}.
struct MaxPool3dOptions {
  std::array<std::int64_t, 3> kernel_size{2, 2, 2};  ///< window, each >= 1
  std::array<std::int64_t, 3> stride{2, 2, 2};       ///< step, each >= 1
  std::array<std::int64_t, 3> padding{0, 0, 0};      ///< -inf padding, each <= kernel / 2
  std::array<std::int64_t, 3> dilation{1, 1, 1};     ///< spacing of window elements, >= 1
  bool ceil_mode = false;                            ///< ceil instead of floor in the size rule
};

/// avg_pool3d's options (torch.nn.functional.avg_pool3d, no divisor_override).
struct AvgPool3dOptions {
  std::array<std::int64_t, 3> kernel_size{2, 2, 2};  ///< window {depth, height, width}, >= 1
  std::array<std::int64_t, 3> stride{2, 2, 2};       ///< step, each >= 1
  std::array<std::int64_t, 3> padding{0, 0, 0};      ///< zero padding, each <= kernel / 2
  /// Divide by the window clipped to the padded input (true, PyTorch's default) or by the
  /// number of input elements in it (false).
  bool count_include_pad = true;
  bool ceil_mode = false;  ///< ceil instead of floor in the size rule
};

/// Validates a max_pool3d call and returns the output shape
/// [batch_size, channels, out_d, out_h, out_w] (per dim PyTorch's pooling_output_shape, as
/// kiln/backend/pool_options.hpp). Messages start with `op`.
/// Throws: RankError unless x is 5-D; ConfigError if a kernel size, stride or dilation is
///         < 1 or a padding < 0 or > kernel / 2; ShapeError if an output dim would be < 1;
///         LimitError if a size overflows or the output passes 2^31 - 1 elements.
Shape check_max_pool3d(const char* op, const Shape& x, const MaxPool3dOptions& options);
/// Same for avg_pool3d (dilation 1).
Shape check_avg_pool3d(const char* op, const Shape& x, const AvgPool3dOptions& options);
/// Validates adaptive_avg_pool3d: x 5-D with non-empty depth, height and width, output sizes
/// >= 1. Throws: RankError, ConfigError, ShapeError, LimitError as above.
Shape check_adaptive_avg_pool3d(const char* op, const Shape& x,
                                const std::array<std::int64_t, 3>& output_size);

namespace detail {
/// [n, c, d, h, w] -> [n·c·d, 1, h, w] (the {height, width} pass).
template <Backend B>
Tensor<B, 4> planes_of(const Tensor<B, 5>& x) {
  const auto [n, c, d, h, w] = x.dims();
  return x.template reshape<4>(std::array<std::int64_t, 4>{n * c * d, 1, h, w});
}
/// [n·c·d, 1, h', w'] -> [n·c, 1, d, h'·w'] (the depth pass).
template <Backend B>
Tensor<B, 4> depth_rows(const Tensor<B, 4>& y, std::int64_t nc, std::int64_t d) {
  const auto [ncd, one, h, w] = y.dims();
  (void)ncd;
  (void)one;
  return y.template reshape<4>(std::array<std::int64_t, 4>{nc, 1, d, h * w});
}
}  // namespace detail

/// The max of each window.
///
/// Shapes:    input [batch_size, channels, depth, height, width] ->
///            [batch_size, channels, out_d, out_h, out_w], per dim
///            out = floor((in + 2·padding - dilation·(kernel - 1) - 1) / stride) + 1 (ceil in
///            ceil_mode, dropping a last window that starts in the right padding).
/// Throws:    as check_max_pool3d (op "max_pool3d").
/// Gradient:  to the first maximum of each window in (depth, height, width) order (PyTorch
///            CPU), accumulated where windows overlap; a nan is the max.
/// Semantics: torch.nn.functional.max_pool3d (no return_indices).
template <Backend B>
Tensor<B, 5> max_pool3d(const Tensor<B, 5>& input, const MaxPool3dOptions& o) {
  const Shape out = check_max_pool3d("max_pool3d", input.shape(), o);
  const auto [n, c, d, h, w] = input.dims();
  (void)h;
  (void)w;
  const MaxPool2dOptions hw{{o.kernel_size[1], o.kernel_size[2]},
                            {o.stride[1], o.stride[2]},
                            {o.padding[1], o.padding[2]},
                            {o.dilation[1], o.dilation[2]},
                            o.ceil_mode};
  const MaxPool2dOptions depth{
      {o.kernel_size[0], 1}, {o.stride[0], 1}, {o.padding[0], 0}, {o.dilation[0], 1}, o.ceil_mode};
  auto y = Tensor<B, 4>(B::FloatOps::max_pool2d(detail::planes_of(input).primitive(), hw));
  y = Tensor<B, 4>(B::FloatOps::max_pool2d(detail::depth_rows(y, n * c, d).primitive(), depth));
  return y.template reshape<5>(std::array<std::int64_t, 5>{out[0], out[1], out[2], out[3], out[4]});
}

/// The mean of each window (zero padding).
///
/// Shapes:    as max_pool3d (dilation 1).
/// Divisor:   count_include_pad: the window clipped to the padded input (a ceil-mode window
///            running past it counts only up to its edge); otherwise the number of input
///            elements in the window.
/// Throws:    as check_avg_pool3d (op "avg_pool3d").
/// Semantics: torch.nn.functional.avg_pool3d (no divisor_override).
template <Backend B>
Tensor<B, 5> avg_pool3d(const Tensor<B, 5>& input, const AvgPool3dOptions& o) {
  const Shape out = check_avg_pool3d("avg_pool3d", input.shape(), o);
  const auto [n, c, d, h, w] = input.dims();
  (void)h;
  (void)w;
  const AvgPool2dOptions hw{{o.kernel_size[1], o.kernel_size[2]},
                            {o.stride[1], o.stride[2]},
                            {o.padding[1], o.padding[2]},
                            o.count_include_pad,
                            o.ceil_mode};
  const AvgPool2dOptions depth{
      {o.kernel_size[0], 1}, {o.stride[0], 1}, {o.padding[0], 0}, o.count_include_pad, o.ceil_mode};
  auto y = Tensor<B, 4>(B::FloatOps::avg_pool2d(detail::planes_of(input).primitive(), hw));
  y = Tensor<B, 4>(B::FloatOps::avg_pool2d(detail::depth_rows(y, n * c, d).primitive(), depth));
  return y.template reshape<5>(std::array<std::int64_t, 5>{out[0], out[1], out[2], out[3], out[4]});
}

/// The mean over output cell (i, j, k)'s window: depths [floor(i·D/out_d),
/// ceil((i+1)·D/out_d)), likewise rows and columns (windows overlap when sizes do not divide).
///
/// Shapes:    input [batch_size, channels, depth, height, width] ->
///            [batch_size, channels, out_d, out_h, out_w]
/// Throws:    as check_adaptive_avg_pool3d (op "adaptive_avg_pool3d").
/// Semantics: torch.nn.functional.adaptive_avg_pool3d.
template <Backend B>
Tensor<B, 5> adaptive_avg_pool3d(const Tensor<B, 5>& input,
                                 const std::array<std::int64_t, 3>& output_size) {
  const Shape out = check_adaptive_avg_pool3d("adaptive_avg_pool3d", input.shape(), output_size);
  const auto [n, c, d, h, w] = input.dims();
  (void)h;
  (void)w;
  const std::int64_t plane = output_size[1] * output_size[2];
  auto y = Tensor<B, 4>(B::FloatOps::adaptive_avg_pool2d(detail::planes_of(input).primitive(),
                                                         {output_size[1], output_size[2]}));
  // Columns map plane -> plane one to one; rows average the depth windows.
  y = Tensor<B, 4>(B::FloatOps::adaptive_avg_pool2d(detail::depth_rows(y, n * c, d).primitive(),
                                                    {output_size[0], plane}));
  return y.template reshape<5>(std::array<std::int64_t, 5>{out[0], out[1], out[2], out[3], out[4]});
}

}  // namespace kiln::nn::functional
