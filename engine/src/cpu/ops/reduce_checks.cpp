#include "cpu/ops/reduce_checks.hpp"

#include <string>

#include "cpu/ops/elementwise_common.hpp"
#include "kiln/core/check.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::cpu::ops {
namespace {

void check_numeric(const char* op, DType dtype, const Shape& shape) {
  if (dtype != DType::F32 && dtype != DType::I32) {
    throw_error<DTypeError>(op, ": expected an f32 or i32 tensor, got ", dtype, " (shape ", shape,
                            ")");
  }
}

/// What the error of an empty reduction names: "dim 1 of shape [2, 0]" or "shape [0]".
std::string where(const Shape& s, std::optional<std::size_t> dim) {
  if (dim) return str_cat("dim ", *dim, " of shape ", s, " has size 0");
  return str_cat("shape ", s, " has no elements");
}

void check_not_empty(const char* op, const char* what, std::size_t n, const Shape& s,
                     std::optional<std::size_t> dim) {
  if (n == 0) {
    throw_error<ShapeError>(op, ": cannot take the ", what, " of zero elements: ", where(s, dim),
                            " (as PyTorch, an empty reduction has no ", what, ")");
  }
}

}  // namespace

const char* reduce_op_name(ReduceOp op, bool along_dim) {
  switch (op) {
#define KILN_REDUCE_OP(Name, snake, ...) \
  case ReduceOp::Name: return along_dim ? #snake "_dim" : #snake;
#include "kiln/backend/ops.def"
  }
  return "reduce";
}

void check_reduce(ReduceOp op, const char* name, DType dtype, const Shape& shape, std::size_t n,
                  std::optional<std::size_t> dim) {
  if (op == ReduceOp::Any || op == ReduceOp::All) return;
  check_numeric(name, dtype, shape);
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    check_not_empty(name, op == ReduceOp::Max ? "max" : "min", n, shape, dim);
  }
  if (op == ReduceOp::Mean && dtype == DType::I32 && n == 0) {
    throw_error<ShapeError>(name,
                            ": cannot take the Int mean of zero elements: ", where(shape, dim),
                            " (0 / 0 has no i32 value)");
  }
}

std::size_t check_arg_extremum(const char* name, bool is_max, DType dtype, const Shape& shape,
                               std::int64_t dim) {
  const auto d = static_cast<std::size_t>(check::dim(name, dim, shape.rank()));
  check_numeric(name, dtype, shape);
  check_not_empty(name, is_max ? "max" : "min", static_cast<std::size_t>(shape[d]), shape, d);
  return d;
}

std::size_t check_var_mean(DType dtype, const Shape& shape, std::int64_t dim) {
  const auto d = static_cast<std::size_t>(check::dim("var_mean", dim, shape.rank()));
  if (dtype != DType::F32) {
    throw_error<DTypeError>("var_mean: expected an f32 tensor, got ", dtype, " (shape ", shape,
                            ")");
  }
  return d;
}

std::size_t check_sort(DType dtype, const Shape& shape, std::int64_t dim) {
  const auto d = static_cast<std::size_t>(check::dim("sort", dim, shape.rank()));
  if (dtype != DType::F32 && dtype != DType::I32) {
    throw_error<DTypeError>("sort: expected an f32 or i32 tensor, got ", dtype, " (shape ", shape,
                            ")");
  }
  return d;
}

std::size_t check_softmax(const char* name, DType dtype, const Shape& shape, std::int64_t dim) {
  if (dtype != DType::F32) throw_dtype(name, "a f32 tensor", dtype);
  return static_cast<std::size_t>(check::dim(name, dim, shape.rank()));
}

}  // namespace kiln::cpu::ops
