// Convolutions of the Cpu backend: argument checks (STYLE.md §7) and the mapping of each
// op onto the kernels of engine/src/cpu/conv/ (conv1d is conv2d over a unit height, conv3d
// the same kernels with a depth axis; a transposed convolution is the x-adjoint of the
// convolution whose input is its output).
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "cpu/conv/conv.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

template <std::size_t N>
struct List {
  const std::array<std::int64_t, N>& a;
};
template <std::size_t N>
void append_to(std::string& out, const List<N>& l) {
  out += '[';
  for (std::size_t i = 0; i < N; ++i) str_append(out, i ? ", " : "", l.a[i]);
  out += ']';
}
template <std::size_t N>
List<N> list(const std::array<std::int64_t, N>& a) {
  return {a};
}

template <std::size_t N>
const char* layout() {
  return N == 1   ? "[batch_size, channels, length]"
         : N == 2 ? "[batch_size, channels, height, width]"
                  : "[batch_size, channels, depth, height, width]";
}

template <std::size_t N>
void check_at_least(const char* op, const char* field, const std::array<std::int64_t, N>& v,
                    std::int64_t min) {
  for (std::size_t i = 0; i < N; ++i) {
    if (v[i] < min) {
      throw ConfigError(str_cat(op, ": ", field, " must be >= ", min, " in every dim, got ",
                                list(v)));
    }
  }
}

/// Ranks and dtypes of x, weight and bias (N spatial dims).
template <std::size_t N>
void check_tensors(const char* op, const CpuTensor& x, const CpuTensor& weight,
                   const std::optional<CpuTensor>& bias) {
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  if (xs.rank() != N + 2) {
    throw RankError(str_cat(op, ": expected x of rank ", N + 2, " ", layout<N>(), ", got ", xs,
                            " (rank ", xs.rank(), ")"));
  }
  if (ws.rank() != N + 2) {
    throw RankError(str_cat(op, ": expected weight of rank ", N + 2, ", got ", ws, " (rank ",
                            ws.rank(), ")"));
  }
  if (bias && bias->shape().rank() != 1) {
    throw RankError(str_cat(op, ": expected bias of rank 1, got ", bias->shape()));
  }
  if (x.dtype() != DType::F32 || weight.dtype() != DType::F32 ||
      (bias && bias->dtype() != DType::F32)) {
    throw DTypeError(str_cat(op, ": expected f32 tensors, got x ", x.dtype(), ", weight ",
                             weight.dtype(), bias ? str_cat(", bias ", bias->dtype()) : ""));
  }
  for (std::size_t d = 2; d < N + 2; ++d) {
    if (ws[d] < 1) throw ShapeError(str_cat(op, ": weight ", ws, " has an empty kernel"));
  }
}

/// The kernels' geometry of an N-D convolution (N = 1: a unit height; N = 3: with depth).
template <std::size_t N>
cpu::conv::Geometry geometry(const Shape& xs, const Shape& ws, std::int64_t channels_out,
                             std::int64_t groups, const std::array<std::int64_t, N>& stride,
                             const std::array<std::int64_t, N>& padding,
                             const std::array<std::int64_t, N>& dilation,
                             const std::array<std::int64_t, N>& out) {
  cpu::conv::Geometry g;
  g.batch = xs[0];
  g.channels_in = xs[1];
  g.channels_out = channels_out;
  g.groups = groups;
  constexpr std::size_t w = N - 1;
  g.width = xs[N + 1];
  g.kernel_w = ws[N + 1];
  g.stride_w = stride[w];
  g.pad_w = padding[w];
  g.dilation_w = dilation[w];
  g.width_out = out[w];
  if constexpr (N >= 2) {
    constexpr std::size_t h = N - 2;
    g.height = xs[N];
    g.kernel_h = ws[N];
    g.stride_h = stride[h];
    g.pad_h = padding[h];
    g.dilation_h = dilation[h];
    g.height_out = out[h];
  } else {
    g.height = g.kernel_h = g.height_out = 1;
  }
  if constexpr (N == 3) {
    g.depth = xs[2];
    g.kernel_d = ws[2];
    g.stride_d = stride[0];
    g.pad_d = padding[0];
    g.dilation_d = dilation[0];
    g.depth_out = out[0];
  }
  return g;
}

/// Throws LimitError naming `op` unless the output [batch, channels_out, spatial...] and the
/// column buffer of one image and group (Cg·kh·kw rows of out_h·out_w, im2col) fit the element
/// and byte limits (the buffer only when the output is not empty: no kernel runs then):
/// checked once here, so the kernels' loops need no checks.
void check_buffers(const char* op, const cpu::conv::Geometry& g, std::size_t spatial_dims) {
  const std::array<std::int64_t, 5> out{g.batch, g.channels_out, g.depth_out, g.height_out,
                                        g.width_out};
  const std::int64_t out_count = checked::product(op, out, "output shape");
  checked::elements(
      op, out_count,
      spatial_dims == 1
          ? str_cat("output shape [", g.batch, ", ", g.channels_out, ", ", g.width_out, "]")
      : spatial_dims == 2
          ? str_cat("output shape ", checked::dims_string(std::array<std::int64_t, 4>{
                                         g.batch, g.channels_out, g.height_out, g.width_out}))
          : str_cat("output shape ", checked::dims_string(out)));
  if (out_count == 0) return;  // an empty output runs no kernel: no column buffer
  const std::array<std::int64_t, 7> cols{g.channels_in / g.groups, g.kernel_d, g.kernel_h,
                                         g.kernel_w, g.depth_out, g.height_out, g.width_out};
  const std::int64_t col_count = checked::product(op, cols, "the column buffer (im2col)");
  checked::buffer(
      op, col_count, sizeof(float),
      spatial_dims == 3
          ? str_cat("the column buffer (im2col) of ", g.channels_in / g.groups, " · ",
                    g.kernel_d * g.kernel_h * g.kernel_w, " kernel taps by ", g.depth_out, " · ",
                    g.height_out, " · ", g.width_out, " output positions")
          : str_cat("the column buffer (im2col) of ", g.channels_in / g.groups, " · ",
                    g.kernel_h * g.kernel_w, " kernel taps by ", g.height_out, " · ", g.width_out,
                    " output positions"));
}

/// Checks a convolution's arguments; returns its geometry.
template <std::size_t N>
cpu::conv::Geometry check_conv(const char* op, const CpuTensor& x, const CpuTensor& weight,
                               const std::optional<CpuTensor>& bias, const ConvOptions<N>& o) {
  check_tensors<N>(op, x, weight, bias);
  check_at_least(op, "stride", o.stride, 1);
  check_at_least(op, "dilation", o.dilation, 1);
  check_at_least(op, "padding", o.padding, 0);
  check_at_least(op, "padding_end", o.padding_end, 0);
  if (o.groups < 1) throw ConfigError(str_cat(op, ": groups must be >= 1, got ", o.groups));
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  std::int64_t expected_channels;
  const bool overflow = __builtin_mul_overflow(ws[1], o.groups, &expected_channels);
  if (overflow || expected_channels != xs[1]) {
    throw ShapeError(str_cat(op, ": x ", xs, " has ", xs[1], " channels, weight ", ws,
                             " with groups = ", o.groups, " expects ",
                             overflow ? std::string("more than 2^63") : str_cat(expected_channels),
                             " (weight dim 1 · groups)"));
  }
  if (ws[0] % o.groups != 0) {
    throw ShapeError(str_cat(op, ": weight ", ws, " has ", ws[0],
                             " output channels, not divisible by groups = ", o.groups));
  }
  if (bias && bias->shape()[0] != ws[0]) {
    throw ShapeError(str_cat(op, ": expected bias [", ws[0], "] (channels_out), got ",
                             bias->shape()));
  }
  std::array<std::int64_t, N> out{};
  for (std::size_t d = 0; d < N; ++d) {
    const std::string in_dim = str_cat(" in spatial dim ", d);
    const std::int64_t padded = checked::add(
        op, checked::add(op, xs[d + 2], o.padding[d], "input + padding" + in_dim),
        o.padding_end[d], "input + padding + padding_end" + in_dim);
    const std::int64_t extent = checked::add(
        op, checked::mul(op, o.dilation[d], ws[d + 2] - 1, "dilation · (kernel - 1)" + in_dim),
        1, "the dilated kernel's extent" + in_dim);
    if (extent > padded) {
      throw ShapeError(str_cat(op, ": kernel ", ws, " with dilation ", list(o.dilation),
                               " spans ", extent, " in spatial dim ", d, ", larger than the padded input (",
                               xs[d + 2], " + padding ", o.padding[d], " + ", o.padding_end[d],
                               " = ", padded, "); x ", xs));
    }
    out[d] = (padded - extent) / o.stride[d] + 1;
  }
  const auto g = geometry<N>(xs, ws, ws[0], o.groups, o.stride, o.padding, o.dilation, out);
  check_buffers(op, g, N);
  return g;
}

/// Checks a transposed convolution's arguments; returns the geometry of the convolution
/// whose x-adjoint it is (input: the transposed conv's output, output: its input).
template <std::size_t N>
cpu::conv::Geometry check_conv_transpose(const char* op, const CpuTensor& x,
                                         const CpuTensor& weight,
                                         const std::optional<CpuTensor>& bias,
                                         const ConvTransposeOptions<N>& o) {
  check_tensors<N>(op, x, weight, bias);
  check_at_least(op, "stride", o.stride, 1);
  check_at_least(op, "dilation", o.dilation, 1);
  check_at_least(op, "padding", o.padding, 0);
  check_at_least(op, "padding_out", o.padding_out, 0);
  if (o.groups < 1) throw ConfigError(str_cat(op, ": groups must be >= 1, got ", o.groups));
  for (std::size_t d = 0; d < N; ++d) {
    if (o.padding_out[d] >= o.stride[d] && o.padding_out[d] >= o.dilation[d]) {
      throw ConfigError(str_cat(op, ": padding_out ", list(o.padding_out),
                                " must be smaller than stride ", list(o.stride),
                                " or dilation ", list(o.dilation), " in every dim"));
    }
  }
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  if (ws[0] != xs[1]) {
    throw ShapeError(str_cat(op, ": x ", xs, " has ", xs[1], " channels, weight ", ws,
                             " expects ", ws[0], " (weight dim 0)"));
  }
  if (xs[1] % o.groups != 0) {
    throw ShapeError(str_cat(op, ": x ", xs, " has ", xs[1],
                             " channels, not divisible by groups = ", o.groups));
  }
  const std::int64_t channels_out =
      checked::mul(op, ws[1], o.groups, "channels_out = weight dim 1 · groups");
  if (bias && bias->shape()[0] != channels_out) {
    throw ShapeError(str_cat(op, ": expected bias [", channels_out,
                             "] (channels_out = weight dim 1 · groups), got ", bias->shape()));
  }
  std::array<std::int64_t, N> out{};
  for (std::size_t d = 0; d < N; ++d) {
    // PyTorch's formula term by term, each sum and product checked.
    const std::string in_dim = str_cat(" in spatial dim ", d);
    const std::int64_t grown =
        checked::mul(op, xs[d + 2] - 1, o.stride[d], "(input - 1) · stride" + in_dim);
    const std::int64_t trimmed = checked::sub(
        op, grown, checked::mul(op, 2, o.padding[d], "2 · padding" + in_dim),
        "(input - 1) · stride - 2 · padding" + in_dim);
    const std::int64_t extent = checked::add(
        op, checked::mul(op, o.dilation[d], ws[d + 2] - 1, "dilation · (kernel - 1)" + in_dim),
        checked::add(op, o.padding_out[d], 1, "padding_out + 1" + in_dim),
        "dilation · (kernel - 1) + padding_out + 1" + in_dim);
    out[d] = checked::add(op, trimmed, extent, "the output size" + in_dim);
    if (out[d] < 1) {
      throw ShapeError(str_cat(op, ": output size ", out[d], " < 1 in spatial dim ", d,
                               " for x ", xs, ", weight ", ws, ", stride ", list(o.stride),
                               ", padding ", list(o.padding)));
    }
  }
  // The adjoint convolution: input [batch, channels_out, out...], output = x's spatial dims.
  std::array<std::int64_t, N + 2> out_dims{xs[0], channels_out};
  std::array<std::int64_t, N> x_spatial{};
  for (std::size_t d = 0; d < N; ++d) {
    out_dims[d + 2] = out[d];
    x_spatial[d] = xs[d + 2];
  }
  checked::numel(op, out_dims, "output shape");
  const Shape conv_in(out_dims);
  auto g = geometry<N>(conv_in, ws, xs[1], o.groups, o.stride, o.padding, o.dilation, x_spatial);
  // The adjoint's column buffer: channels_out / groups · taps rows by x's plane.
  check_buffers(op, g, N);
  return g;
}

/// The spatial dims of a shape [batch, channels, spatial...] (N of them).
template <std::size_t N>
std::array<std::int64_t, N> spatial(const Shape& s) {
  std::array<std::int64_t, N> out{};
  for (std::size_t d = 0; d < N; ++d) out[d] = s[d + 2];
  return out;
}

/// The geometry of the backward ops of convN (arguments came from a checked forward).
template <std::size_t N>
cpu::conv::Geometry backward_geometry(const Shape& x_shape, const Shape& w_shape,
                                      const Shape& grad_shape, const ConvOptions<N>& o) {
  return geometry<N>(x_shape, w_shape, w_shape[0], o.groups, o.stride, o.padding, o.dilation,
                     spatial<N>(grad_shape));
}

/// The output shape [batch, channels, spatial...] of a geometry's input side (a transposed
/// convolution's output) with N spatial dims.
template <std::size_t N>
Shape input_side_shape(const cpu::conv::Geometry& g) {
  if constexpr (N == 1) return Shape{g.batch, g.channels_in, g.width};
  if constexpr (N == 2) return Shape{g.batch, g.channels_in, g.height, g.width};
  if constexpr (N == 3) return Shape{g.batch, g.channels_in, g.depth, g.height, g.width};
}

/// A transposed convolution with N spatial dims: the x-adjoint of the convolution whose
/// input is its output, plus the bias.
template <std::size_t N>
CpuTensor conv_transpose(const char* op, const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvTransposeOptions<N>& o) {
  const cpu::conv::Geometry g = check_conv_transpose<N>(op, x, weight, bias, o);
  CpuTensor out(input_side_shape<N>(g), DType::F32);
  if (out.num_elements() == 0) return out;
  float* p_out = out.data<float>();
  if (x.num_elements() == 0) {
    std::fill(p_out, p_out + out.num_elements(), 0.0f);
  } else {
    cpu::conv::backward_input(g, x.data<float>(), weight.data<float>(), p_out);
  }
  if (bias) {
    const float* b = bias->data<float>();
    const std::int64_t plane = g.depth * g.height * g.width;
    for (std::int64_t n = 0; n < g.batch; ++n) {
      for (std::int64_t c = 0; c < g.channels_in; ++c) {
        float* p = p_out + (n * g.channels_in + c) * plane;
        for (std::int64_t i = 0; i < plane; ++i) p[i] += b[c];
      }
    }
  }
  return out;
}

}  // namespace

CpuTensor CpuOps::conv1d(const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvOptions<1>& options) {
  const cpu::conv::Geometry g = check_conv<1>("conv1d", x, weight, bias, options);
  CpuTensor out(Shape{g.batch, g.channels_out, g.width_out}, DType::F32);
  if (out.num_elements() == 0) return out;
  cpu::conv::forward(g, x.data<float>(), weight.data<float>(),
                     bias ? bias->data<float>() : nullptr, out.data<float>());
  return out;
}

CpuTensor CpuOps::conv2d(const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvOptions<2>& options) {
  const cpu::conv::Geometry g = check_conv<2>("conv2d", x, weight, bias, options);
  CpuTensor out(Shape{g.batch, g.channels_out, g.height_out, g.width_out}, DType::F32);
  if (out.num_elements() == 0) return out;
  cpu::conv::forward(g, x.data<float>(), weight.data<float>(),
                     bias ? bias->data<float>() : nullptr, out.data<float>());
  return out;
}

CpuTensor CpuOps::conv2d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                    const CpuTensor& output_grad, const ConvOptions<2>& options) {
  const auto g = backward_geometry<2>(x_shape, weight.shape(), output_grad.shape(), options);
  CpuTensor grad(x_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_input(g, output_grad.data<float>(), weight.data<float>(),
                            grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv2d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                         const CpuTensor& output_grad,
                                         const ConvOptions<2>& options) {
  const auto g = backward_geometry<2>(x.shape(), weight_shape, output_grad.shape(), options);
  CpuTensor grad(weight_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_weight(g, x.data<float>(), output_grad.data<float>(), grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv_bias_backward(const CpuTensor& output_grad) {
  const Shape& s = output_grad.shape();
  const std::int64_t spatial = s[1] == 0 || s[0] == 0 ? 0 : s.num_elements() / (s[0] * s[1]);
  CpuTensor grad(Shape{s[1]}, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_bias(s[0], s[1], spatial, output_grad.data<float>(), grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv_transpose2d(const CpuTensor& x, const CpuTensor& weight,
                                   const std::optional<CpuTensor>& bias,
                                   const ConvTransposeOptions<2>& options) {
  return conv_transpose<2>("conv_transpose2d", x, weight, bias, options);
}

CpuTensor CpuOps::conv_transpose2d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                              const CpuTensor& output_grad,
                                              const ConvTransposeOptions<2>& options) {
  const Shape& gs = output_grad.shape();
  const auto g = geometry<2>(gs, weight.shape(), x_shape[1], options.groups, options.stride,
                             options.padding, options.dilation, {x_shape[2], x_shape[3]});
  CpuTensor grad(x_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::forward(g, output_grad.data<float>(), weight.data<float>(), nullptr,
                     grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv_transpose2d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                                   const CpuTensor& output_grad,
                                                   const ConvTransposeOptions<2>& options) {
  // dW of the transposed conv = dW of the adjoint conv with input output_grad, output grad x.
  const Shape& gs = output_grad.shape();
  const Shape& xs = x.shape();
  const auto g = geometry<2>(gs, weight_shape, xs[1], options.groups, options.stride,
                             options.padding, options.dilation, {xs[2], xs[3]});
  CpuTensor grad(weight_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_weight(g, output_grad.data<float>(), x.data<float>(), grad.data<float>());
  return grad;
}

// ---- 3-D convolutions and the transposed 1-D one (issue 19)

CpuTensor CpuOps::conv3d(const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvOptions<3>& options) {
  const cpu::conv::Geometry g = check_conv<3>("conv3d", x, weight, bias, options);
  CpuTensor out(Shape{g.batch, g.channels_out, g.depth_out, g.height_out, g.width_out},
                DType::F32);
  if (out.num_elements() == 0) return out;
  cpu::conv::forward(g, x.data<float>(), weight.data<float>(),
                     bias ? bias->data<float>() : nullptr, out.data<float>());
  return out;
}

CpuTensor CpuOps::conv3d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                    const CpuTensor& output_grad, const ConvOptions<3>& options) {
  const auto g = backward_geometry<3>(x_shape, weight.shape(), output_grad.shape(), options);
  CpuTensor grad(x_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_input(g, output_grad.data<float>(), weight.data<float>(),
                            grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv3d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                         const CpuTensor& output_grad,
                                         const ConvOptions<3>& options) {
  const auto g = backward_geometry<3>(x.shape(), weight_shape, output_grad.shape(), options);
  CpuTensor grad(weight_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_weight(g, x.data<float>(), output_grad.data<float>(), grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv_transpose1d(const CpuTensor& x, const CpuTensor& weight,
                                   const std::optional<CpuTensor>& bias,
                                   const ConvTransposeOptions<1>& options) {
  return conv_transpose<1>("conv_transpose1d", x, weight, bias, options);
}

CpuTensor CpuOps::conv_transpose3d(const CpuTensor& x, const CpuTensor& weight,
                                   const std::optional<CpuTensor>& bias,
                                   const ConvTransposeOptions<3>& options) {
  return conv_transpose<3>("conv_transpose3d", x, weight, bias, options);
}

CpuTensor CpuOps::conv_transpose3d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                              const CpuTensor& output_grad,
                                              const ConvTransposeOptions<3>& options) {
  const auto g = geometry<3>(output_grad.shape(), weight.shape(), x_shape[1], options.groups,
                             options.stride, options.padding, options.dilation,
                             spatial<3>(x_shape));
  CpuTensor grad(x_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::forward(g, output_grad.data<float>(), weight.data<float>(), nullptr,
                     grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv_transpose3d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                                   const CpuTensor& output_grad,
                                                   const ConvTransposeOptions<3>& options) {
  // dW of the transposed conv = dW of the adjoint conv with input output_grad, output grad x.
  const auto g = geometry<3>(output_grad.shape(), weight_shape, x.shape()[1], options.groups,
                             options.stride, options.padding, options.dilation,
                             spatial<3>(x.shape()));
  CpuTensor grad(weight_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_weight(g, output_grad.data<float>(), x.data<float>(), grad.data<float>());
  return grad;
}

}  // namespace kiln
