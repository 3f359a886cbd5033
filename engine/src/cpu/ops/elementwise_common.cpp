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
  case BinaryOp::Name:                                                             \
    return dtype == DType::I32 ? KILN_OPS_MESSAGE(i32_message, snake)              \
                               : KILN_OPS_MESSAGE(f32_message, snake);
#include "kiln/backend/ops.def"
  }
  return "binary";
}

const char* op_name(UnaryOp op) {
  switch (op) {
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, doc, message, ...) \
  case UnaryOp::Name: return KILN_OPS_MESSAGE(message, snake);
#include "kiln/backend/ops.def"
  }
  return "unary";
}

const char* op_name(CompareOp op) {
  switch (op) {
#define KILN_COMPARE_OP(Name, snake, ...) \
  case CompareOp::Name: return #snake;
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
    throw DTypeError(str_cat(op, ": dtypes differ: ", name_a, ' ', a, " vs ", name_b, ' ', b));
  }
}

void throw_dtype(const char* op, const char* what, DType got) {
  throw DTypeError(str_cat(op, ": expected ", what, ", got ", got));
}

std::int32_t int_scalar(const char* op, double value) {
  if (!(value == std::floor(value) && value >= std::numeric_limits<std::int32_t>::min() &&
        value <= std::numeric_limits<std::int32_t>::max())) {
    throw ValueError(
        str_cat(op, ": an Int tensor needs an integer scalar in the i32 range, got ", value));
  }
  return static_cast<std::int32_t>(value);
}

}  // namespace kiln::cpu::ops
