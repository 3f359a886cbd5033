// Argument checks and geometry of the convolution ops (conv_checks.hpp), shared by the Cpu
// and the Wgpu backends.
#include "cpu/ops/conv_checks.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::cpu::ops {
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
      throw_error<ConfigError>(op, ": ", field, " must be >= ", min, " in every dim, got ",
                               list(v));
    }
  }
}

/// Ranks and dtypes of x, weight and bias (N spatial dims).
template <std::size_t N>
void check_tensors(const char* op, const ConvOperand& x, const ConvOperand& weight,
                   const std::optional<ConvOperand>& bias) {
  const Shape& xs = x.shape;
  const Shape& ws = weight.shape;
  if (xs.rank() != N + 2) {
    throw_error<RankError>(op, ": expected x of rank ", N + 2, " ", layout<N>(), ", got ", xs,
                           " (rank ", xs.rank(), ")");
  }
  if (ws.rank() != N + 2) {
    throw_error<RankError>(op, ": expected weight of rank ", N + 2, ", got ", ws, " (rank ",
                           ws.rank(), ")");
  }
  if (bias && bias->shape.rank() != 1) {
    throw_error<RankError>(op, ": expected bias of rank 1, got ", bias->shape);
  }
  if (x.dtype != DType::F32 || weight.dtype != DType::F32 || (bias && bias->dtype != DType::F32)) {
    throw_error<DTypeError>(op, ": expected f32 tensors, got x ", x.dtype, ", weight ",
                            weight.dtype, bias ? str_cat(", bias ", bias->dtype) : "");
  }
  for (std::size_t d = 2; d < N + 2; ++d) {
    if (ws[d] < 1) throw_error<ShapeError>(op, ": weight ", ws, " has an empty kernel");
  }
}

/// The kernels' geometry of an N-D convolution (N = 1: a unit height; N = 3: with depth).
template <std::size_t N>
conv::Geometry geometry(const Shape& xs, const Shape& ws, std::int64_t channels_out,
                        std::int64_t groups, const std::array<std::int64_t, N>& stride,
                        const std::array<std::int64_t, N>& padding,
                        const std::array<std::int64_t, N>& dilation,
                        const std::array<std::int64_t, N>& out) {
  conv::Geometry g;
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
void check_buffers(const char* op, const conv::Geometry& g, std::size_t spatial_dims) {
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
  const std::array<std::int64_t, 7> cols{g.channels_in / g.groups,
                                         g.kernel_d,
                                         g.kernel_h,
                                         g.kernel_w,
                                         g.depth_out,
                                         g.height_out,
                                         g.width_out};
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

/// The spatial dims of a shape [batch, channels, spatial...] (N of them).
template <std::size_t N>
std::array<std::int64_t, N> spatial(const Shape& s) {
  std::array<std::int64_t, N> out{};
  for (std::size_t d = 0; d < N; ++d) out[d] = s[d + 2];
  return out;
}

}  // namespace

/// Checks a convolution's arguments; returns its geometry.
template <std::size_t N>
conv::Geometry check_conv(const char* op, const ConvOperand& x, const ConvOperand& weight,
                          const std::optional<ConvOperand>& bias, const ConvOptions<N>& o) {
  check_tensors<N>(op, x, weight, bias);
  check_at_least(op, "stride", o.stride, 1);
  check_at_least(op, "dilation", o.dilation, 1);
  check_at_least(op, "padding", o.padding, 0);
  check_at_least(op, "padding_end", o.padding_end, 0);
  if (o.groups < 1) throw_error<ConfigError>(op, ": groups must be >= 1, got ", o.groups);
  const Shape& xs = x.shape;
  const Shape& ws = weight.shape;
  std::int64_t expected_channels;
  const bool overflow = __builtin_mul_overflow(ws[1], o.groups, &expected_channels);
  if (overflow || expected_channels != xs[1]) {
    throw_error<ShapeError>(op, ": x ", xs, " has ", xs[1], " channels, weight ", ws,
                            " with groups = ", o.groups, " expects ",
                            overflow ? std::string("more than 2^63") : str_cat(expected_channels),
                            " (weight dim 1 · groups)");
  }
  if (ws[0] % o.groups != 0) {
    throw_error<ShapeError>(op, ": weight ", ws, " has ", ws[0],
                            " output channels, not divisible by groups = ", o.groups);
  }
  if (bias && bias->shape[0] != ws[0]) {
    throw_error<ShapeError>(op, ": expected bias [", ws[0], "] (channels_out), got ", bias->shape);
  }
  std::array<std::int64_t, N> out{};
  for (std::size_t d = 0; d < N; ++d) {
    const std::string in_dim = str_cat(" in spatial dim ", d);
    const std::int64_t padded =
        checked::add(op, checked::add(op, xs[d + 2], o.padding[d], "input + padding" + in_dim),
                     o.padding_end[d], "input + padding + padding_end" + in_dim);
    const std::int64_t extent = checked::add(
        op, checked::mul(op, o.dilation[d], ws[d + 2] - 1, "dilation · (kernel - 1)" + in_dim), 1,
        "the dilated kernel's extent" + in_dim);
    if (extent > padded) {
      throw_error<ShapeError>(op, ": kernel ", ws, " with dilation ", list(o.dilation), " spans ",
                              extent, " in spatial dim ", d, ", larger than the padded input (",
                              xs[d + 2], " + padding ", o.padding[d], " + ", o.padding_end[d],
                              " = ", padded, "); x ", xs);
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
conv::Geometry check_conv_transpose(const char* op, const ConvOperand& x, const ConvOperand& weight,
                                    const std::optional<ConvOperand>& bias,
                                    const ConvTransposeOptions<N>& o) {
  check_tensors<N>(op, x, weight, bias);
  check_at_least(op, "stride", o.stride, 1);
  check_at_least(op, "dilation", o.dilation, 1);
  check_at_least(op, "padding", o.padding, 0);
  check_at_least(op, "padding_out", o.padding_out, 0);
  if (o.groups < 1) throw_error<ConfigError>(op, ": groups must be >= 1, got ", o.groups);
  for (std::size_t d = 0; d < N; ++d) {
    if (o.padding_out[d] >= o.stride[d] && o.padding_out[d] >= o.dilation[d]) {
      throw_error<ConfigError>(op, ": padding_out ", list(o.padding_out),
                               " must be smaller than stride ", list(o.stride), " or dilation ",
                               list(o.dilation), " in every dim");
    }
  }
  const Shape& xs = x.shape;
  const Shape& ws = weight.shape;
  if (ws[0] != xs[1]) {
    throw_error<ShapeError>(op, ": x ", xs, " has ", xs[1], " channels, weight ", ws, " expects ",
                            ws[0], " (weight dim 0)");
  }
  if (xs[1] % o.groups != 0) {
    throw_error<ShapeError>(op, ": x ", xs, " has ", xs[1],
                            " channels, not divisible by groups = ", o.groups);
  }
  const std::int64_t channels_out =
      checked::mul(op, ws[1], o.groups, "channels_out = weight dim 1 · groups");
  if (bias && bias->shape[0] != channels_out) {
    throw_error<ShapeError>(op, ": expected bias [", channels_out,
                            "] (channels_out = weight dim 1 · groups), got ", bias->shape);
  }
  std::array<std::int64_t, N> out{};
  for (std::size_t d = 0; d < N; ++d) {
    // PyTorch's formula term by term, each sum and product checked.
    const std::string in_dim = str_cat(" in spatial dim ", d);
    const std::int64_t grown =
        checked::mul(op, xs[d + 2] - 1, o.stride[d], "(input - 1) · stride" + in_dim);
    const std::int64_t trimmed =
        checked::sub(op, grown, checked::mul(op, 2, o.padding[d], "2 · padding" + in_dim),
                     "(input - 1) · stride - 2 · padding" + in_dim);
    const std::int64_t extent = checked::add(
        op, checked::mul(op, o.dilation[d], ws[d + 2] - 1, "dilation · (kernel - 1)" + in_dim),
        checked::add(op, o.padding_out[d], 1, "padding_out + 1" + in_dim),
        "dilation · (kernel - 1) + padding_out + 1" + in_dim);
    out[d] = checked::add(op, trimmed, extent, "the output size" + in_dim);
    if (out[d] < 1) {
      throw_error<ShapeError>(op, ": output size ", out[d], " < 1 in spatial dim ", d, " for x ",
                              xs, ", weight ", ws, ", stride ", list(o.stride), ", padding ",
                              list(o.padding));
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

template <std::size_t N>
conv::Geometry conv_backward_geometry(const Shape& x_shape, const Shape& weight_shape,
                                      const Shape& grad_shape, const ConvOptions<N>& o) {
  return geometry<N>(x_shape, weight_shape, weight_shape[0], o.groups, o.stride, o.padding,
                     o.dilation, spatial<N>(grad_shape));
}

template <std::size_t N>
conv::Geometry conv_transpose_backward_geometry(const Shape& x_shape, const Shape& weight_shape,
                                                const Shape& grad_shape,
                                                const ConvTransposeOptions<N>& o) {
  return geometry<N>(grad_shape, weight_shape, x_shape[1], o.groups, o.stride, o.padding,
                     o.dilation, spatial<N>(x_shape));
}

template <std::size_t N>
Shape output_side_shape(const conv::Geometry& g) {
  if constexpr (N == 1) return Shape{g.batch, g.channels_out, g.width_out};
  if constexpr (N == 2) return Shape{g.batch, g.channels_out, g.height_out, g.width_out};
  if constexpr (N == 3) {
    return Shape{g.batch, g.channels_out, g.depth_out, g.height_out, g.width_out};
  }
}

template <std::size_t N>
Shape input_side_shape(const conv::Geometry& g) {
  if constexpr (N == 1) return Shape{g.batch, g.channels_in, g.width};
  if constexpr (N == 2) return Shape{g.batch, g.channels_in, g.height, g.width};
  if constexpr (N == 3) return Shape{g.batch, g.channels_in, g.depth, g.height, g.width};
}

#define KILN_CONV_CHECKS(N)                                                                        \
  template conv::Geometry check_conv<N>(const char*, const ConvOperand&, const ConvOperand&,       \
                                        const std::optional<ConvOperand>&, const ConvOptions<N>&); \
  template conv::Geometry check_conv_transpose<N>(                                                 \
      const char*, const ConvOperand&, const ConvOperand&, const std::optional<ConvOperand>&,      \
      const ConvTransposeOptions<N>&);                                                             \
  template conv::Geometry conv_backward_geometry<N>(const Shape&, const Shape&, const Shape&,      \
                                                    const ConvOptions<N>&);                        \
  template conv::Geometry conv_transpose_backward_geometry<N>(                                     \
      const Shape&, const Shape&, const Shape&, const ConvTransposeOptions<N>&);                   \
  template Shape output_side_shape<N>(const conv::Geometry&);                                      \
  template Shape input_side_shape<N>(const conv::Geometry&);
KILN_CONV_CHECKS(1)
KILN_CONV_CHECKS(2)
KILN_CONV_CHECKS(3)
#undef KILN_CONV_CHECKS

}  // namespace kiln::cpu::ops
