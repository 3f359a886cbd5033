// Argument checks of the pooling primitives (engine/src/backend/pool_checks.hpp), moved out
// of the Cpu backend's pool_ops.cpp so the Wgpu backend throws the same errors.
#include "backend/pool_checks.hpp"

#include "kiln/core/check.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::pool {

void check_f32(const char* op, DType dtype, const Shape& shape) {
  if (dtype != DType::F32) {
    throw_error<DTypeError>(op, ": expected a Float (f32) tensor, got dtype ", dtype, " (shape ",
                            shape, ")");
  }
}

void check_tables(const char* op, const Shape& out_shape) {
  checked::bytes(op, out_shape[2], kTableEntryBytes, "the table of output rows");
  checked::bytes(op, out_shape[3], kTableEntryBytes, "the table of output columns");
}

void check_grad(const char* op, const Shape& x_shape, const Shape& expected_grad, DType dtype,
                const Shape& grad) {
  check_f32(op, dtype, grad);
  if (!(grad == expected_grad)) {
    throw_error<ShapeError>(op, ": the gradient has shape ", grad, ", expected ", expected_grad,
                            " (the output shape for input ", x_shape, ")");
  }
}

Shape check_max_pool2d_input(const char* op, DType dtype, const Shape& x,
                             const MaxPool2dOptions& options) {
  check_f32(op, dtype, x);
  const Shape out_shape = check_max_pool2d(op, x, options);
  check_tables(op, out_shape);
  return out_shape;
}

void check_max_pool2d_backward(const Shape& x_shape, DType grad_dtype, const Shape& grad,
                               DType indices_dtype, const Shape& indices) {
  const char* op = "max_pool2d_backward";
  check::rank(op, 4, x_shape);
  check_f32(op, grad_dtype, grad);
  if (indices_dtype != DType::I32 || !(indices == grad) || grad.rank() != 4 ||
      grad[0] != x_shape[0] || grad[1] != x_shape[1]) {
    throw_error<ShapeError>(op, ": gradient ", grad, " and indices ", indices, " (dtype ",
                            indices_dtype, ") do not fit input ", x_shape);
  }
}

Shape check_avg_pool2d_input(DType dtype, const Shape& x, const AvgPool2dOptions& options) {
  const char* op = "avg_pool2d";
  check_f32(op, dtype, x);
  const Shape out_shape = check_avg_pool2d(op, x, options);
  check_tables(op, out_shape);
  return out_shape;
}

Shape check_avg_pool2d_backward(const Shape& x_shape, DType grad_dtype, const Shape& grad,
                                const AvgPool2dOptions& options) {
  const char* op = "avg_pool2d_backward";
  const Shape out_shape = check_avg_pool2d(op, x_shape, options);
  check_tables(op, out_shape);
  check_grad(op, x_shape, out_shape, grad_dtype, grad);
  return out_shape;
}

Shape check_adaptive_avg_pool2d_input(DType dtype, const Shape& x,
                                      const std::array<std::int64_t, 2>& output_size) {
  const char* op = "adaptive_avg_pool2d";
  check_f32(op, dtype, x);
  const Shape out_shape = check_adaptive_avg_pool2d(op, x, output_size);
  check_tables(op, out_shape);
  return out_shape;
}

Shape check_adaptive_avg_pool2d_backward(const Shape& x_shape, DType grad_dtype,
                                         const Shape& grad) {
  const char* op = "adaptive_avg_pool2d_backward";
  check::rank(op, 4, grad);
  const std::array<std::int64_t, 2> output_size{grad[2], grad[3]};
  const Shape out_shape = check_adaptive_avg_pool2d(op, x_shape, output_size);
  check_tables(op, out_shape);
  check_grad(op, x_shape, out_shape, grad_dtype, grad);
  return out_shape;
}

}  // namespace kiln::pool
