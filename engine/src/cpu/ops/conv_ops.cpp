// Convolutions of the Cpu backend: the mapping of each op onto the kernels of
// engine/src/cpu/conv/ (conv1d is conv2d over a unit height, conv3d the same kernels with a
// depth axis; a transposed convolution is the x-adjoint of the convolution whose input is
// its output). The argument checks and geometries are conv_checks.hpp's, shared with the
// Wgpu backend.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include "cpu/conv/conv.hpp"
#include "cpu/ops/conv_checks.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

using cpu::ops::conv_operand;
using cpu::ops::input_side_shape;
using cpu::ops::output_side_shape;

/// A transposed convolution with N spatial dims: the x-adjoint of the convolution whose
/// input is its output, plus the bias.
template <std::size_t N>
CpuTensor conv_transpose(const char* op, const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvTransposeOptions<N>& o) {
  const cpu::conv::Geometry g = cpu::ops::check_conv_transpose<N>(
      op, conv_operand(x), conv_operand(weight), conv_operand(bias), o);
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
  const cpu::conv::Geometry g = cpu::ops::check_conv<1>(
      "conv1d", conv_operand(x), conv_operand(weight), conv_operand(bias), options);
  CpuTensor out(output_side_shape<1>(g), DType::F32);
  if (out.num_elements() == 0) return out;
  cpu::conv::forward(g, x.data<float>(), weight.data<float>(), bias ? bias->data<float>() : nullptr,
                     out.data<float>());
  return out;
}

CpuTensor CpuOps::conv2d(const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvOptions<2>& options) {
  const cpu::conv::Geometry g = cpu::ops::check_conv<2>(
      "conv2d", conv_operand(x), conv_operand(weight), conv_operand(bias), options);
  CpuTensor out(output_side_shape<2>(g), DType::F32);
  if (out.num_elements() == 0) return out;
  cpu::conv::forward(g, x.data<float>(), weight.data<float>(), bias ? bias->data<float>() : nullptr,
                     out.data<float>());
  return out;
}

CpuTensor CpuOps::conv2d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                    const CpuTensor& output_grad, const ConvOptions<2>& options) {
  const auto g =
      cpu::ops::conv_backward_geometry<2>(x_shape, weight.shape(), output_grad.shape(), options);
  CpuTensor grad(x_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_input(g, output_grad.data<float>(), weight.data<float>(), grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv2d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                         const CpuTensor& output_grad,
                                         const ConvOptions<2>& options) {
  const auto g =
      cpu::ops::conv_backward_geometry<2>(x.shape(), weight_shape, output_grad.shape(), options);
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
  const auto g = cpu::ops::conv_transpose_backward_geometry<2>(x_shape, weight.shape(),
                                                               output_grad.shape(), options);
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
  const auto g = cpu::ops::conv_transpose_backward_geometry<2>(x.shape(), weight_shape,
                                                               output_grad.shape(), options);
  CpuTensor grad(weight_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_weight(g, output_grad.data<float>(), x.data<float>(), grad.data<float>());
  return grad;
}

// ---- 3-D convolutions and the transposed 1-D one (issue 19)

CpuTensor CpuOps::conv3d(const CpuTensor& x, const CpuTensor& weight,
                         const std::optional<CpuTensor>& bias, const ConvOptions<3>& options) {
  const cpu::conv::Geometry g = cpu::ops::check_conv<3>(
      "conv3d", conv_operand(x), conv_operand(weight), conv_operand(bias), options);
  CpuTensor out(output_side_shape<3>(g), DType::F32);
  if (out.num_elements() == 0) return out;
  cpu::conv::forward(g, x.data<float>(), weight.data<float>(), bias ? bias->data<float>() : nullptr,
                     out.data<float>());
  return out;
}

CpuTensor CpuOps::conv3d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                    const CpuTensor& output_grad, const ConvOptions<3>& options) {
  const auto g =
      cpu::ops::conv_backward_geometry<3>(x_shape, weight.shape(), output_grad.shape(), options);
  CpuTensor grad(x_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_input(g, output_grad.data<float>(), weight.data<float>(), grad.data<float>());
  return grad;
}

CpuTensor CpuOps::conv3d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                         const CpuTensor& output_grad,
                                         const ConvOptions<3>& options) {
  const auto g =
      cpu::ops::conv_backward_geometry<3>(x.shape(), weight_shape, output_grad.shape(), options);
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
  const auto g = cpu::ops::conv_transpose_backward_geometry<3>(x_shape, weight.shape(),
                                                               output_grad.shape(), options);
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
  const auto g = cpu::ops::conv_transpose_backward_geometry<3>(x.shape(), weight_shape,
                                                               output_grad.shape(), options);
  CpuTensor grad(weight_shape, DType::F32);
  if (grad.num_elements() == 0) return grad;
  cpu::conv::backward_weight(g, output_grad.data<float>(), x.data<float>(), grad.data<float>());
  return grad;
}

}  // namespace kiln
