#include "cpu/ops/elementwise_common.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::cpu::ops {

const char* op_name(BinaryOp op, DType dtype) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::DivTrunc: return "div_trunc";
    case BinaryOp::Rem: return "remainder";
    case BinaryOp::Fmod: return "fmod";
    case BinaryOp::Pow: return dtype == DType::I32 ? "powi" : "powf";
    case BinaryOp::Max: return "max_pair";
    case BinaryOp::Min: return "min_pair";
  }
  return "binary";
}

const char* op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "neg";
    case UnaryOp::Abs: return "abs";
    case UnaryOp::Sign: return "sign";
    case UnaryOp::Exp: return "exp";
    case UnaryOp::Log: return "log";
    case UnaryOp::Log1p: return "log1p";
    case UnaryOp::Sqrt: return "sqrt";
    case UnaryOp::Sin: return "sin";
    case UnaryOp::Cos: return "cos";
    case UnaryOp::Tanh: return "tanh";
    case UnaryOp::Ceil: return "ceil";
    case UnaryOp::Floor: return "floor";
    case UnaryOp::Round: return "round";
    case UnaryOp::Recip: return "recip";
    case UnaryOp::Erf: return "erf";
    case UnaryOp::Sigmoid: return "sigmoid";
    case UnaryOp::Relu: return "relu";
    case UnaryOp::Gelu: return "gelu";
    case UnaryOp::GeluTanh: return "gelu";
    case UnaryOp::Silu: return "silu";
  }
  return "unary";
}

const char* op_name(CompareOp op) {
  switch (op) {
    case CompareOp::Equal: return "equal";
    case CompareOp::NotEqual: return "not_equal";
    case CompareOp::Greater: return "greater";
    case CompareOp::GreaterEqual: return "greater_equal";
    case CompareOp::Lower: return "lower";
    case CompareOp::LowerEqual: return "lower_equal";
  }
  return "compare";
}

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
        std::ostringstream msg;
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
