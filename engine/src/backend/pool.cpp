// Output sizes and argument checks of the pooling primitives (kiln/backend/pool_options.hpp),
// PyTorch's pool2d_shape_check (aten/src/ATen/native/Pool.h) with Kiln's messages.
#include "kiln/backend/pool_options.hpp"

#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/check.hpp"

namespace kiln {
namespace {

::kiln::StrOut& pair(::kiln::StrOut& out, const std::array<std::int64_t, 2>& p) {
  return out << "{" << p[0] << ", " << p[1] << "}";
}

void check_window(const char* op, const std::array<std::int64_t, 2>& kernel,
                  const std::array<std::int64_t, 2>& stride,
                  const std::array<std::int64_t, 2>& padding,
                  const std::array<std::int64_t, 2>& dilation) {
  const char* dims[2] = {"height", "width"};
  for (int i = 0; i < 2; ++i) {
    if (kernel[i] < 1 || stride[i] < 1 || dilation[i] < 1) {
      throw_error<ConfigError>(op, ": kernel_size, stride and dilation must be >= 1, got ",
                               "kernel_size {", kernel[0], ", ", kernel[1], "}, stride {",
                               stride[0], ", ", stride[1], "}, dilation {", dilation[0], ", ",
                               dilation[1], "}");
    }
    if (padding[i] < 0 || padding[i] > kernel[i] / 2) {
      throw_error<ConfigError>(op, ": padding must be in [0, kernel_size / 2] (as PyTorch), got ",
                               "padding ", padding[i], " for kernel_size ", kernel[i], " in ",
                               dims[i]);
    }
  }
}

/// [batch, channels, out_h, out_w] after checking that one plane (the per-channel scratch
/// buffers of the kernels) and the whole output fit the element and byte limits.
Shape checked_output(const char* op, const Shape& x, const std::array<std::int64_t, 2>& out) {
  const std::int64_t plane = checked::product(op, out, "output size");
  checked::buffer(op, plane, sizeof(float),
                  str_cat("output size [", out[0], ", ", out[1], "] per channel"));
  const std::array<std::int64_t, 4> dims{x[0], x[1], out[0], out[1]};
  checked::numel(op, dims, "output shape");
  return Shape{x[0], x[1], out[0], out[1]};
}

Shape output_shape(const char* op, const Shape& x, const std::array<std::int64_t, 2>& kernel,
                   const std::array<std::int64_t, 2>& stride,
                   const std::array<std::int64_t, 2>& padding,
                   const std::array<std::int64_t, 2>& dilation, bool ceil_mode) {
  check::rank(op, 4, x);
  check_window(op, kernel, stride, padding, dilation);
  std::array<std::int64_t, 2> out{};
  for (int i = 0; i < 2; ++i) {
    out[i] = pool::output_size(x[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode,
                               op);
  }
  if (out[0] < 1 || out[1] < 1) {
    throw_error<ShapeError>(
        op, ": the window (kernel_size {", kernel[0], ", ", kernel[1], "}, dilation {", dilation[0],
        ", ", dilation[1], "}) is larger than the padded input: input ", x, " with padding {",
        padding[0], ", ", padding[1], "} gives output size {", out[0], ", ", out[1], "}");
  }
  return checked_output(op, x, out);
}

}  // namespace

namespace pool {

std::int64_t output_size(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                         std::int64_t padding, std::int64_t dilation, bool ceil_mode,
                         std::string_view op) {
  const std::int64_t padded =
      checked::add(op, in, checked::mul(op, 2, padding, "2 · padding"), "input + 2 · padding");
  const std::int64_t window = checked::mul(op, dilation,
                                           checked::sub(op, kernel, 1, "kernel_size - 1"),
                                           "dilation · (kernel_size - 1)");
  const std::int64_t span = padded - window - 1;  // both >= 0: no overflow
  const std::int64_t num =
      ceil_mode ? checked::add(op, span, stride - 1, "the ceil mode's span + stride - 1") : span;
  // Floor division (num may be negative when the window exceeds the input).
  std::int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  // A last window starting inside the right padding is dropped (PyTorch).
  if (ceil_mode && out > 0 && (out - 1) * stride >= in + padding) --out;
  return out;
}

Shape check_max_pool2d(const char* op, const Shape& x, const MaxPool2dOptions& o) {
  return output_shape(op, x, o.kernel_size, o.stride, o.padding, o.dilation, o.ceil_mode);
}

Shape check_avg_pool2d(const char* op, const Shape& x, const AvgPool2dOptions& o) {
  return output_shape(op, x, o.kernel_size, o.stride, o.padding, {1, 1}, o.ceil_mode);
}

Shape check_adaptive_avg_pool2d(const char* op, const Shape& x,
                                const std::array<std::int64_t, 2>& output_size) {
  check::rank(op, 4, x);
  if (output_size[0] < 1 || output_size[1] < 1) {
    throw_error<ConfigError>(op, ": output_size must be >= 1, got {", output_size[0], ", ",
                             output_size[1], "}");
  }
  if (x[2] < 1 || x[3] < 1) {
    throw_error<ShapeError>(op, ": the input's height and width must be >= 1, got ", x);
  }
  return checked_output(op, x, output_size);
}

}  // namespace pool

void append_to(std::string& kiln_text, const MaxPool2dOptions& o) {
  ::kiln::StrOut out(kiln_text);
  out << "MaxPool2dOptions {kernel_size: ";
  pair(out, o.kernel_size) << ", stride: ";
  pair(out, o.stride) << ", padding: ";
  pair(out, o.padding) << ", dilation: ";
  pair(out, o.dilation) << ", ceil_mode: " << (o.ceil_mode ? "true" : "false") << "}";
}

void append_to(std::string& kiln_text, const AvgPool2dOptions& o) {
  ::kiln::StrOut out(kiln_text);
  out << "AvgPool2dOptions {kernel_size: ";
  pair(out, o.kernel_size) << ", stride: ";
  pair(out, o.stride) << ", padding: ";
  pair(out, o.padding) << ", count_include_pad: " << (o.count_include_pad ? "true" : "false")
                       << ", ceil_mode: " << (o.ceil_mode ? "true" : "false") << "}";
}

}  // namespace kiln
