#pragma once
// Argument checks of the pooling primitives beyond pool::check_* of
// kiln/backend/pool_options.hpp (dtypes, the gradients of the backward passes, the window
// tables), shared by the Cpu backend (engine/src/cpu/ops/pool_ops.cpp) and the Wgpu backend
// (engine/src/wgpu/pool_ops.cpp), so both throw the same errors with the same messages.
#include <array>
#include <cstddef>
#include <cstdint>

#include "kiln/backend/pool_options.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"

namespace kiln::pool {

/// Bytes of one entry of the per-row and per-column window tables the kernels build (the
/// Cpu backend's AvgSpan: three int64).
inline constexpr std::size_t kTableEntryBytes = 24;

/// Throws DTypeError unless dtype is F32.
void check_f32(const char* op, DType dtype, const Shape& shape);

/// The per-row and per-column window tables (kTableEntryBytes per output row or column)
/// must be addressable too: in wasm32 a height_out of 2^28 passes the element checks of
/// pool::check_* but its table of 6 GiB does not fit size_t. Throws LimitError.
void check_tables(const char* op, const Shape& out_shape);

/// The gradient of a backward pass: f32 (DTypeError) of shape expected_grad (ShapeError).
void check_grad(const char* op, const Shape& x_shape, const Shape& expected_grad, DType dtype,
                const Shape& grad);

/// max_pool2d and max_pool2d_with_indices (op): x f32, then check_max_pool2d, check_tables.
/// Returns the output shape.
Shape check_max_pool2d_input(const char* op, DType dtype, const Shape& x,
                             const MaxPool2dOptions& options);

/// max_pool2d_backward: x_shape 4-D (RankError), grad f32 (DTypeError), indices i32 of
/// grad's shape, grad [x_shape[0], x_shape[1], ., .] (ShapeError).
void check_max_pool2d_backward(const Shape& x_shape, DType grad_dtype, const Shape& grad,
                               DType indices_dtype, const Shape& indices);

/// avg_pool2d: x f32, then check_avg_pool2d, check_tables. Returns the output shape.
Shape check_avg_pool2d_input(DType dtype, const Shape& x, const AvgPool2dOptions& options);

/// avg_pool2d_backward: check_avg_pool2d on x_shape, check_tables, check_grad. Returns the
/// output shape (the gradient's).
Shape check_avg_pool2d_backward(const Shape& x_shape, DType grad_dtype, const Shape& grad,
                                const AvgPool2dOptions& options);

/// adaptive_avg_pool2d: x f32, then check_adaptive_avg_pool2d, check_tables.
Shape check_adaptive_avg_pool2d_input(DType dtype, const Shape& x,
                                      const std::array<std::int64_t, 2>& output_size);

/// adaptive_avg_pool2d_backward: grad 4-D (RankError), check_adaptive_avg_pool2d on x_shape
/// with grad's spatial size, check_tables, check_grad. Returns the output shape.
Shape check_adaptive_avg_pool2d_backward(const Shape& x_shape, DType grad_dtype, const Shape& grad);

}  // namespace kiln::pool
