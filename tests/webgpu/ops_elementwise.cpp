// Harness cases of the element-wise ops (engine/src/wgpu/elementwise_ops.cpp). Ops are named
// by the op table's snake names where an attribute picks the row (attrs.op).
#include <limits>
#include <optional>

#include "harness.hpp"

namespace kiln::harness {
namespace {

BinaryOp binary_op(const json& a) {
  const std::string name = a.at("op").get<std::string>();
#define KILN_BINARY_OP(Name, snake, ...) \
  if (name == #snake) return BinaryOp::Name;
#include "kiln/backend/ops.def"
  throw ValueError("harness: unknown binary op " + name);
}

UnaryOp unary_op(const json& a) {
  const std::string name = a.at("op").get<std::string>();
#define KILN_UNARY_OP(Name, snake, ...) \
  if (name == #snake) return UnaryOp::Name;
#include "kiln/backend/ops.def"
  throw ValueError("harness: unknown unary op " + name);
}

CompareOp compare_op(const json& a) {
  const std::string name = a.at("op").get<std::string>();
#define KILN_COMPARE_OP(Name, snake, ...) \
  if (name == #snake) return CompareOp::Name;
#include "kiln/backend/ops.def"
  throw ValueError("harness: unknown compare op " + name);
}

std::optional<double> optional_number(const json& a, const char* key) {
  if (!a.contains(key) || a.at(key).is_null()) return std::nullopt;
  return a.at(key).get<double>();
}

// A double attribute; the strings "nan", "inf", "-inf" for the values JSON cannot hold.
double number(const json& a, const char* key) {
  const json& v = a.at(key);
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw ValueError("harness: not a number: " + s);
  }
  return v.get<double>();
}

KILN_HARNESS_OP(binary, { return Ops::binary(binary_op(a), in[0], in[1]); });

// binary with the same tensor on both sides (one buffer read as two operands).
KILN_HARNESS_OP(binary_self, { return Ops::binary(binary_op(a), in[0], in[0]); });

KILN_HARNESS_OP(binary_scalar, {
  return Ops::binary_scalar(binary_op(a), in[0], number(a, "scalar"), a.value("left", false));
});

KILN_HARNESS_OP(unary, { return Ops::unary(unary_op(a), in[0]); });

// 1 / op(x): makes the sign of a zero result visible (±inf) to the page's comparison.
KILN_HARNESS_OP(unary_signed_zero, {
  return Ops::binary_scalar(BinaryOp::Div, Ops::unary(unary_op(a), in[0]), 1.0, true);
});
KILN_HARNESS_OP(binary_signed_zero, {
  return Ops::binary_scalar(BinaryOp::Div, Ops::binary(binary_op(a), in[0], in[1]), 1.0, true);
});

KILN_HARNESS_OP(clamp, {
  return Ops::clamp(in[0], optional_number(a, "min"), optional_number(a, "max"));
});

KILN_HARNESS_OP(clamp_nan_min, {
  return Ops::clamp(in[0], std::numeric_limits<double>::quiet_NaN(), optional_number(a, "max"));
});

KILN_HARNESS_OP(leaky_relu, { return Ops::leaky_relu(in[0], number(a, "slope")); });

KILN_HARNESS_OP(softplus,
                { return Ops::softplus(in[0], number(a, "beta"), number(a, "threshold")); });

KILN_HARNESS_OP(compare, { return Ops::compare(compare_op(a), in[0], in[1]); });

KILN_HARNESS_OP(compare_scalar,
                { return Ops::compare_scalar(compare_op(a), in[0], number(a, "scalar")); });

KILN_HARNESS_OP(is_nan, { return Ops::is_nan(in[0]); });
KILN_HARNESS_OP(is_inf, { return Ops::is_inf(in[0]); });

KILN_HARNESS_OP(bool_not, { return Ops::bool_not(in[0]); });
KILN_HARNESS_OP(bool_and, { return Ops::bool_and(in[0], in[1]); });
KILN_HARNESS_OP(bool_or, { return Ops::bool_or(in[0], in[1]); });
KILN_HARNESS_OP(bool_xor, { return Ops::bool_xor(in[0], in[1]); });

KILN_HARNESS_OP(mask_where, { return Ops::mask_where(in[0], in[1], in[2]); });
KILN_HARNESS_OP(mask_where_self, { return Ops::mask_where(in[0], in[1], in[0]); });
KILN_HARNESS_OP(mask_fill, { return Ops::mask_fill(in[0], in[1], number(a, "value")); });

// binary with an rhs computed on the device (rhs + 0: no host copy, so the i32 divisor and
// exponent checks cannot read it; see the Wgpu report's gaps).
KILN_HARNESS_OP(binary_device_rhs, {
  return Ops::binary(binary_op(a), in[0], Ops::binary_scalar(BinaryOp::Add, in[1], 0.0, false));
});

}  // namespace
}  // namespace kiln::harness
