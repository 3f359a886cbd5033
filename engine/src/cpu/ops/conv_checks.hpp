#pragma once
// Argument checks and geometry of the convolution ops, shared by the Cpu backend
// (conv_ops.cpp) and the Wgpu backend (engine/src/wgpu/conv_ops.cpp), so that both throw the
// same errors with the same messages (STYLE.md §7) and map shapes onto the same Geometry
// (engine/src/cpu/conv/conv.hpp). N is the number of spatial dims (1, 2 or 3): a 1-D
// convolution is a 2-D one over a unit height, a 3-D one adds the depth axis.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "cpu/conv/conv.hpp"
#include "kiln/backend/conv_options.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"

namespace kiln::cpu::ops {

/// What the checks read of a tensor: its shape and dtype.
struct ConvOperand {
  Shape shape;
  DType dtype;
};

/// The operand of a tensor of any backend (anything with shape() and dtype()).
template <class T>
ConvOperand conv_operand(const T& t) {
  return {t.shape(), t.dtype()};
}
template <class T>
std::optional<ConvOperand> conv_operand(const std::optional<T>& t) {
  if (!t) return std::nullopt;
  return conv_operand(*t);
}

/// Checks a convolution's arguments (ranks, f32 dtypes, options, channels and groups, the
/// bias, the dilated kernel against the padded input, the output and im2col buffer limits);
/// returns its geometry. Throws RankError, DTypeError, ConfigError, ShapeError or
/// LimitError naming `op`.
template <std::size_t N>
conv::Geometry check_conv(const char* op, const ConvOperand& x, const ConvOperand& weight,
                          const std::optional<ConvOperand>& bias, const ConvOptions<N>& o);

/// Checks a transposed convolution's arguments; returns the geometry of the convolution
/// whose x-adjoint it is (input: the transposed conv's output, output: its input).
template <std::size_t N>
conv::Geometry check_conv_transpose(const char* op, const ConvOperand& x, const ConvOperand& weight,
                                    const std::optional<ConvOperand>& bias,
                                    const ConvTransposeOptions<N>& o);

/// The geometry of the backward ops of convN (arguments came from a checked forward).
template <std::size_t N>
conv::Geometry conv_backward_geometry(const Shape& x_shape, const Shape& weight_shape,
                                      const Shape& grad_shape, const ConvOptions<N>& o);

/// The geometry of the backward ops of conv_transposeN: the adjoint convolution whose input
/// is output_grad (grad_shape) and whose output is x (x_shape).
template <std::size_t N>
conv::Geometry conv_transpose_backward_geometry(const Shape& x_shape, const Shape& weight_shape,
                                                const Shape& grad_shape,
                                                const ConvTransposeOptions<N>& o);

/// [batch, channels_out, spatial_out...] of a geometry with N spatial dims (a convolution's
/// output).
template <std::size_t N>
Shape output_side_shape(const conv::Geometry& g);

/// [batch, channels_in, spatial...] of a geometry with N spatial dims (a transposed
/// convolution's output).
template <std::size_t N>
Shape input_side_shape(const conv::Geometry& g);

}  // namespace kiln::cpu::ops
