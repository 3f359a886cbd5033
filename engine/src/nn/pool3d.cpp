// Argument checks and output shapes of the 3-D pools (kiln/nn/functional/pool3d.hpp),
// PyTorch's pool3d_shape_check (aten/src/ATen/native/Pool.h) with Kiln's messages. They run
// before the two 2-D passes, so that errors name the 3-D op and its {depth, height, width}.
#include <array>
#include <cstdint>

#include "kiln/backend/pool_options.hpp"
#include "kiln/core/check.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/nn/functional/pool3d.hpp"

namespace kiln::nn::functional {
namespace {

using Triple = std::array<std::int64_t, 3>;

std::string triple(const Triple& t) { return str_cat("{", t[0], ", ", t[1], ", ", t[2], "}"); }

/// Rank 5 with non-empty depth, height and width (PyTorch: "non-empty 5D input expected").
void check_input(const char* op, const Shape& x) {
  check::rank(op, 5, x);
  if (x[2] < 1 || x[3] < 1 || x[4] < 1) {
    throw_error<ShapeError>(op, ": expected input [batch_size, channels, depth, height, width] ",
                            "with depth, height and width >= 1, got ", x);
  }
}

/// [n, c, out_d, out_h, out_w] after checking that the output and the intermediate
/// [n·c·depth, 1, out_h, out_w] of the {height, width} pass fit the limits.
Shape checked_output(const char* op, const Shape& x, const Triple& out) {
  const std::array<std::int64_t, 5> dims{x[0], x[1], out[0], out[1], out[2]};
  checked::numel(op, dims, "output shape");
  const std::array<std::int64_t, 5> mid{x[0], x[1], x[2], out[1], out[2]};
  checked::numel(op, mid, "the {height, width} pass's output");
  checked::buffer(op, checked::product(op, out, "output size"), sizeof(float),
                  str_cat("output size ", triple(out), " per channel"));
  return Shape{x[0], x[1], out[0], out[1], out[2]};
}

Shape output_shape(const char* op, const Shape& x, const Triple& kernel, const Triple& stride,
                   const Triple& padding, const Triple& dilation, bool ceil_mode) {
  check_input(op, x);
  const char* dims[3] = {"depth", "height", "width"};
  for (int i = 0; i < 3; ++i) {
    if (kernel[i] < 1 || stride[i] < 1 || dilation[i] < 1) {
      throw_error<ConfigError>(op, ": kernel_size, stride and dilation must be >= 1, got ",
                               "kernel_size ", triple(kernel), ", stride ", triple(stride),
                               ", dilation ", triple(dilation));
    }
    if (padding[i] < 0 || padding[i] > kernel[i] / 2) {
      throw_error<ConfigError>(op, ": padding must be in [0, kernel_size / 2] (as PyTorch), got ",
                               "padding ", padding[i], " for kernel_size ", kernel[i], " in ",
                               dims[i]);
    }
  }
  Triple out{};
  for (int i = 0; i < 3; ++i) {
    out[i] = pool::output_size(x[2 + i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode,
                               op);
  }
  if (out[0] < 1 || out[1] < 1 || out[2] < 1) {
    throw_error<ShapeError>(op, ": the window (kernel_size ", triple(kernel), ", dilation ",
                            triple(dilation), ") is larger than the padded input: input ", x,
                            " with padding ", triple(padding), " gives output size ", triple(out));
  }
  return checked_output(op, x, out);
}

}  // namespace

Shape check_max_pool3d(const char* op, const Shape& x, const MaxPool3dOptions& o) {
  return output_shape(op, x, o.kernel_size, o.stride, o.padding, o.dilation, o.ceil_mode);
}

Shape check_avg_pool3d(const char* op, const Shape& x, const AvgPool3dOptions& o) {
  return output_shape(op, x, o.kernel_size, o.stride, o.padding, {1, 1, 1}, o.ceil_mode);
}

Shape check_adaptive_avg_pool3d(const char* op, const Shape& x, const Triple& output_size) {
  check::rank(op, 5, x);
  if (output_size[0] < 1 || output_size[1] < 1 || output_size[2] < 1) {
    throw_error<ConfigError>(op, ": output_size must be >= 1, got ", triple(output_size));
  }
  check_input(op, x);
  return checked_output(op, x, output_size);
}

}  // namespace kiln::nn::functional
