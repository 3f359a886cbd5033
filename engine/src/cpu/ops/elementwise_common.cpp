#include "cpu/ops/elementwise_common.hpp"

#include <cmath>
#include <limits>

#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::cpu::ops {

// The names come from the op table (kiln/backend/ops.def): a row's message column when it is
// not "" (Pow: "powf" / "powi" by dtype; GeluTanh: "gelu"), else its snake name.
#define KILN_OPS_MESSAGE(message, snake) (sizeof(message) > 1 ? (message) : #snake)

const char* op_name(BinaryOp op, DType dtype) {
  switch (op) {
#define KILN_BINARY_OP(Name, snake, jsMethod, KINDS, doc, f32_message, i32_message) \
  case BinaryOp::Name:                                                              \
    return dtype == DType::I32 ? KILN_OPS_MESSAGE(i32_message, snake)               \
                               : KILN_OPS_MESSAGE(f32_message, snake);
#include "kiln/backend/ops.def"
  }
  return "binary";
}

const char* op_name(UnaryOp op) {
  switch (op) {
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, doc, message, ...) \
  case UnaryOp::Name:                                                  \
    return KILN_OPS_MESSAGE(message, snake);
#include "kiln/backend/ops.def"
  }
  return "unary";
}

const char* op_name(CompareOp op) {
  switch (op) {
#define KILN_COMPARE_OP(Name, snake, ...) \
  case CompareOp::Name:                   \
    return #snake;
#include "kiln/backend/ops.def"
  }
  return "compare";
}

#undef KILN_OPS_MESSAGE

Shape broadcast_shapes(const char* op, std::initializer_list<NamedShape> shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.shape->rank());
  std::array<std::int64_t, Shape::max_rank> dims{};
  for (std::size_t d = 0; d < rank; ++d) {
    std::int64_t size = 1;
    const NamedShape* owner = nullptr;
    for (const auto& s : shapes) {
      const std::size_t lead = rank - s.shape->rank();
      if (d < lead) continue;
      const std::int64_t v = (*s.shape)[d - lead];
      if (v == 1) continue;
      if (owner != nullptr && v != size) {
        StrOut msg;
        msg << op << ": shapes do not broadcast: ";
        bool first = true;
        for (const auto& t : shapes) {
          msg << (first ? "" : " vs ") << t.name << ' ' << *t.shape;
          first = false;
        }
        if (shapes.size() == 2) {
          msg << " (dim " << d << ": " << size << " vs " << v << ")";
        } else {
          msg << " (dim " << d << ": " << owner->name << ' ' << size << " vs " << s.name << ' ' << v
              << ")";
        }
        throw ShapeError(msg.str());
      }
      size = v;
      owner = &s;
    }
    dims[d] = size;
  }
  // Broadcasting multiplies the operands' sizes: [65536, 1] + [1, 65536] has 2^32 elements.
  checked::numel(op, std::span<const std::int64_t>(dims.data(), rank), "broadcast shape");
  return Shape(std::span<const std::int64_t>(dims.data(), rank));
}

void check_same_dtype(const char* op, const char* name_a, DType a, const char* name_b, DType b) {
  if (a != b) {
    throw_error<DTypeError>(op, ": dtypes differ: ", name_a, ' ', a, " vs ", name_b, ' ', b);
  }
}

void throw_dtype(const char* op, const char* what, DType got) {
  throw_error<DTypeError>(op, ": expected ", what, ", got ", got);
}

std::int32_t int_scalar(const char* op, double value) {
  if (!(value == std::floor(value) && value >= std::numeric_limits<std::int32_t>::min() &&
        value <= std::numeric_limits<std::int32_t>::max())) {
    throw_error<ValueError>(op, ": an Int tensor needs an integer scalar in the i32 range, got ",
                            value);
  }
  return static_cast<std::int32_t>(value);
}

void check_binary(BinaryOp op, DType lhs, DType rhs) {
  const char* name = op_name(op, lhs);
  check_same_dtype(name, "lhs", lhs, "rhs", rhs);
  if (lhs == DType::Bool) throw_dtype(name, "f32 or i32 tensors", lhs);
}

void check_binary_scalar(BinaryOp op, DType dtype) {
  if (dtype == DType::Bool) throw_dtype(op_name(op, dtype), "a f32 or i32 tensor", dtype);
}

bool is_int_division(BinaryOp op) {
  return op == BinaryOp::Div || op == BinaryOp::DivTrunc || op == BinaryOp::Rem ||
         op == BinaryOp::Fmod;
}

void check_int_rhs(BinaryOp op, const std::int32_t* rhs, std::int64_t n, const Shape& shape) {
  const char* name = op_name(op, DType::I32);
  if (is_int_division(op)) {
    for (std::int64_t i = 0; i < n; ++i) {
      if (rhs[i] == 0) {
        throw_error<ValueError>(name, ": integer division by zero: divisor element ", i, " of ",
                                shape, " is 0 (ZeroDivisionError in PyTorch)");
      }
    }
  } else if (op == BinaryOp::Pow) {
    for (std::int64_t i = 0; i < n; ++i) {
      if (rhs[i] < 0) {
        throw_error<ValueError>(name, ": integers to negative integer powers are not allowed:",
                                " exponent element ", i, " of ", shape, " is ", rhs[i]);
      }
    }
  }
}

void check_int_scalar_rhs(BinaryOp op, std::int32_t s) {
  const char* name = op_name(op, DType::I32);
  if (is_int_division(op) && s == 0) {
    throw_error<ValueError>(name, ": integer division by zero: the scalar divisor is 0",
                            " (ZeroDivisionError in PyTorch)");
  }
  if (op == BinaryOp::Pow && s < 0) {
    throw_error<ValueError>(
        name, ": integers to negative integer powers are not allowed:", " exponent ", s);
  }
}

void check_unary(UnaryOp op, DType dtype) {
  const char* name = op_name(op);
  const bool numeric_op = unary_op_is_numeric(op);
  if (dtype == DType::Bool) {
    throw_dtype(name, numeric_op ? "a f32 or i32 tensor" : "a f32 tensor", dtype);
  }
  if (dtype == DType::I32 && !numeric_op) throw_dtype(name, "a f32 tensor", dtype);
}

void check_clamp(DType dtype, std::optional<double> min, std::optional<double> max) {
  if (dtype == DType::Bool) throw_dtype("clamp", "a f32 or i32 tensor", dtype);
  if ((min && std::isnan(*min)) || (max && std::isnan(*max))) {
    throw_error<ValueError>("clamp: bounds must not be nan, got min = ",
                            min ? str_cat(*min) : "none", ", max = ", max ? str_cat(*max) : "none");
  }
  if (min && max && *min > *max) {
    throw_error<ValueError>("clamp: min must be <= max, got min = ", *min, ", max = ", *max);
  }
}

void check_leaky_relu(DType dtype, double negative_slope) {
  if (dtype != DType::F32) throw_dtype("leaky_relu", "a f32 tensor", dtype);
  if (!std::isfinite(negative_slope)) {
    throw_error<ValueError>("leaky_relu: negative_slope must be finite, got ", negative_slope);
  }
}

void check_softplus(DType dtype, double beta, double threshold) {
  if (dtype != DType::F32) throw_dtype("softplus", "a f32 tensor", dtype);
  if (!(beta > 0.0) || !std::isfinite(beta)) {
    throw_error<ValueError>("softplus: beta must be positive and finite, got ", beta);
  }
  if (std::isnan(threshold)) throw_error<ValueError>("softplus: threshold must not be nan");
}

void require_bool(const char* op, const char* name, DType dtype) {
  if (dtype != DType::Bool) {
    throw_error<DTypeError>(op, ": ", name, " must be a bool tensor, got ", dtype);
  }
}

void check_mask_where(DType x, DType mask, DType value) {
  require_bool("mask_where", "mask", mask);
  check_same_dtype("mask_where", "x", x, "value", value);
}

void check_mask_fill(DType mask) { require_bool("mask_fill", "mask", mask); }

}  // namespace kiln::cpu::ops
