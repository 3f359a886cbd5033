#pragma once
// Shared plumbing of the element-wise ops (elementwise_ops.cpp, compare_ops.cpp,
// softmax_ops.cpp): op names for messages, NumPy broadcasting, broadcast plans for the
// kernels, dtype checks, scalar conversion and the "reuse the input buffer" rule.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

#include "cpu/kernels/broadcast.hpp"
#include "kiln/backend/backend.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln::cpu::ops {

/// Burn's / the front end's name of each op, for error messages.
const char* op_name(BinaryOp op, DType dtype);
const char* op_name(UnaryOp op);
const char* op_name(CompareOp op);

/// A named operand shape, for broadcast error messages.
struct NamedShape {
  const char* name;
  const Shape* shape;
};

/// The NumPy broadcast of the shapes (right-aligned; each dim equal or 1).
/// Throws ShapeError `<op>: shapes do not broadcast: lhs [2, 3] vs rhs [4] (dim 1: 3 vs 4)`.
Shape broadcast_shapes(const char* op, std::initializer_list<NamedShape> shapes);

/// Throws DTypeError `<op>: dtypes differ: lhs f32 vs rhs i32` unless a and b match.
void check_same_dtype(const char* op, const char* name_a, DType a, const char* name_b, DType b);
/// Throws DTypeError `<op>: expected <what>, got <dtype>`.
[[noreturn]] void throw_dtype(const char* op, const char* what, DType got);

/// `value` as an i32 scalar for an Int tensor. Throws ValueError unless it is an integer
/// in the i32 range.
std::int32_t int_scalar(const char* op, double value);

// ---- argument checks of the element-wise ops, shared by every backend (CpuOps, WgpuOps):
// each throws what the op throws, with the op's message. Value checks that read tensor
// elements take a pointer to them (the caller's host copy). ----

/// binary: throws DTypeError if the dtypes differ or are Bool.
void check_binary(BinaryOp op, DType lhs, DType rhs);
/// binary_scalar: throws DTypeError for a Bool tensor.
void check_binary_scalar(BinaryOp op, DType dtype);
/// Div, DivTrunc, Rem and Fmod: the ops whose i32 form divides.
bool is_int_division(BinaryOp op);
/// i32 binary: throws ValueError if a divisor (the n rhs elements, of shape `shape`) is 0 or
/// a Pow exponent is negative (PyTorch raises ZeroDivisionError / "Integers to negative
/// integer powers are not allowed").
void check_int_rhs(BinaryOp op, const std::int32_t* rhs, std::int64_t n, const Shape& shape);
/// i32 binary_scalar with the scalar `s` on the right: as check_int_rhs for that scalar.
void check_int_scalar_rhs(BinaryOp op, std::int32_t s);
/// unary: throws DTypeError for Bool, and for I32 unless the op is NUMERIC.
void check_unary(UnaryOp op, DType dtype);
/// clamp: throws DTypeError for Bool, ValueError for a nan bound or min > max.
void check_clamp(DType dtype, std::optional<double> min, std::optional<double> max);
/// leaky_relu: throws DTypeError unless F32, ValueError for a non-finite slope.
void check_leaky_relu(DType dtype, double negative_slope);
/// softplus: throws DTypeError unless F32, ValueError unless beta is positive and finite
/// and threshold is not nan.
void check_softplus(DType dtype, double beta, double threshold);
/// Throws DTypeError `<op>: <name> must be a bool tensor, got <dtype>` unless Bool.
void require_bool(const char* op, const char* name, DType dtype);
/// mask_where: throws DTypeError unless mask is Bool and x and value have one dtype.
void check_mask_where(DType x, DType mask, DType value);
/// mask_fill: throws DTypeError unless mask is Bool.
void check_mask_fill(DType mask);

/// True when `t`'s buffer may become the output: the only handle, same shape and dtype.
inline bool reusable(const CpuTensor& t, const Shape& shape, DType dtype) {
  return t.is_unique() && t.dtype() == dtype && t.shape() == shape;
}

/// The broadcast plan of an op whose contiguous output has shape `out` and whose inputs
/// have the given shapes (each broadcastable to `out`; a rank-0 Shape is one scalar).
template <std::size_t N>
kernels::Plan<N> make_plan(const Shape& out, const std::array<const Shape*, N>& in) {
  kernels::Plan<N> plan;
  if (out.num_elements() == 0) return plan;  // no runs
  const std::size_t rank = out.rank();
  // Per-operand strides over the output dims, skipping output dims of size 1.
  std::int64_t dims[kernels::kPlanMaxRank];
  std::int64_t strides[N][kernels::kPlanMaxRank];
  std::size_t r = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    // Merge into the previous dim when every operand is contiguous across the two.
    bool merge = r > 0;
    std::int64_t cur[N];
    for (std::size_t k = 0; k < N; ++k) {
      const Shape& s = *in[k];
      const std::size_t lead = rank - s.rank();
      std::int64_t stride = 0;
      if (d >= lead && s[d - lead] != 1) {
        stride = 1;
        for (std::size_t e = d - lead + 1; e < s.rank(); ++e) stride *= s[e];
      }
      cur[k] = stride;
      if (merge && strides[k][r - 1] != stride * out[d]) merge = false;
    }
    if (merge) {
      dims[r - 1] *= out[d];
      for (std::size_t k = 0; k < N; ++k) strides[k][r - 1] = cur[k];
    } else {
      dims[r] = out[d];
      for (std::size_t k = 0; k < N; ++k) strides[k][r] = cur[k];
      ++r;
    }
  }
  if (r == 0) {  // a single element
    plan.run = 1;
    plan.num_runs = 1;
    for (std::size_t k = 0; k < N; ++k) plan.run_vector[k] = true;
    return plan;
  }
  plan.run = dims[r - 1];
  for (std::size_t k = 0; k < N; ++k) plan.run_vector[k] = strides[k][r - 1] != 0;
  plan.outer_rank = r - 1;
  plan.num_runs = 1;
  for (std::size_t d = 0; d + 1 < r; ++d) {
    plan.outer_shape[d] = dims[d];
    plan.num_runs *= dims[d];
    for (std::size_t k = 0; k < N; ++k) plan.outer_stride[k][d] = strides[k][d];
  }
  return plan;
}

/// The plan of `tensor op scalar` (scalar_on_left: `scalar op tensor`) over n elements.
inline kernels::Plan<2> scalar_plan(std::int64_t n, bool scalar_on_left) {
  kernels::Plan<2> plan;
  if (n == 0) return plan;
  plan.run = n;
  plan.num_runs = 1;
  plan.run_vector[0] = !scalar_on_left;
  plan.run_vector[1] = scalar_on_left;
  return plan;
}

}  // namespace kiln::cpu::ops
