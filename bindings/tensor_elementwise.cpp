// Element-wise ops of the JS Tensor: binary (tensor or scalar), unary, clamp, comparisons,
// bool logic, masks, casts, and the activations along a dim (softmax, logSoftmax).
// float32 goes through Autodiff<Cpu> (recording the graph unless in noGrad); int32 and
// bool through the Cpu primitives, whose checks reject kinds an op does not support.
#include <emscripten/bind.h>

#include <optional>

#include "js_tensor.hpp"

namespace kiln_js {
namespace {

using kiln::BinaryOp;
using kiln::CompareOp;
using kiln::DType;
using kiln::UnaryOp;
using Ops = AD::FloatOps;

BinaryOp binary_op(int op) {
  if (op < 0 || op >= kiln::binary_op_count) {
    kiln::throw_error<kiln::TypeError>("binary: unknown op code ", op);
  }
  return static_cast<BinaryOp>(op);
}
UnaryOp unary_op(int op) {
  if (op < 0 || op >= kiln::unary_op_count) {
    kiln::throw_error<kiln::TypeError>("unary: unknown op code ", op);
  }
  return static_cast<UnaryOp>(op);
}
CompareOp compare_op(int op) {
  if (op < 0 || op >= kiln::compare_op_count) {
    kiln::throw_error<kiln::TypeError>("compare: unknown op code ", op);
  }
  return static_cast<CompareOp>(op);
}

JsTensor binary(int op, const JsTensor& a, const JsTensor& b) {
  return guarded([&] {
    const BinaryOp o = binary_op(op);
    if (a.is_float() && b.is_float()) return JsTensor(Ops::binary(o, op_input(a), op_input(b)));
    return JsTensor(InnerOps::binary(o, a.primitive(), b.primitive()));
  });
}

JsTensor binary_scalar(int op, const JsTensor& a, double scalar, bool scalar_on_left) {
  return guarded([&] {
    const BinaryOp o = binary_op(op);
    if (a.is_float()) return JsTensor(Ops::binary_scalar(o, op_input(a), scalar, scalar_on_left));
    return JsTensor(InnerOps::binary_scalar(o, a.primitive(), scalar, scalar_on_left));
  });
}

JsTensor unary(int op, const JsTensor& a) {
  return guarded([&] {
    const UnaryOp o = unary_op(op);
    if (a.is_float()) return JsTensor(Ops::unary(o, op_input(a)));
    return JsTensor(InnerOps::unary(o, a.primitive()));
  });
}

JsTensor clamp(const JsTensor& a, bool has_min, double min, bool has_max, double max) {
  return guarded([&] {
    const std::optional<double> lo = has_min ? std::optional<double>(min) : std::nullopt;
    const std::optional<double> hi = has_max ? std::optional<double>(max) : std::nullopt;
    if (lo && hi && *lo > *hi) {
      kiln::throw_error<kiln::ValueError>("clamp: min ", *lo, " is greater than max ", *hi);
    }
    if (a.is_float()) return JsTensor(Ops::clamp(op_input(a), lo, hi));
    return JsTensor(InnerOps::clamp(a.primitive(), lo, hi));
  });
}

JsTensor leaky_relu(const JsTensor& a, double slope) {
  return guarded([&] {
    check_dtype("leakyRelu", a, DType::F32);
    return JsTensor(Ops::leaky_relu(op_input(a), slope));
  });
}

JsTensor softplus(const JsTensor& a, double beta, double threshold) {
  return guarded([&] {
    check_dtype("softplus", a, DType::F32);
    return JsTensor(Ops::softplus(op_input(a), beta, threshold));
  });
}

JsTensor softmax(const JsTensor& a, double dim, bool log) {
  return guarded([&] {
    const char* name = log ? "logSoftmax" : "softmax";
    check_dtype(name, a, DType::F32);
    if (std::abs(dim) > 1e15) {
      kiln::throw_error<kiln::IndexError>(name, ": dim ", dim, " is out of range");
    }
    const auto d = static_cast<std::int64_t>(dim);
    return JsTensor(log ? Ops::log_softmax(op_input(a), d) : Ops::softmax(op_input(a), d));
  });
}

JsTensor compare(int op, const JsTensor& a, const JsTensor& b) {
  return guarded([&] { return JsTensor(InnerOps::compare(compare_op(op), a.primitive(), b.primitive())); });
}

JsTensor compare_scalar(int op, const JsTensor& a, double scalar) {
  return guarded(
      [&] { return JsTensor(InnerOps::compare_scalar(compare_op(op), a.primitive(), scalar)); });
}

/// 0 isNan, 1 isInf, 2 not.
JsTensor bool_unary(int op, const JsTensor& a) {
  return guarded([&] {
    switch (op) {
      case 0: check_dtype("isNan", a, DType::F32); return JsTensor(InnerOps::is_nan(a.primitive()));
      case 1: check_dtype("isInf", a, DType::F32); return JsTensor(InnerOps::is_inf(a.primitive()));
      case 2: check_dtype("boolNot", a, DType::Bool); return JsTensor(InnerOps::bool_not(a.primitive()));
      default:
        kiln::throw_error<kiln::TypeError>("boolUnary: unknown op code ", op);
    }
  });
}

/// 0 and, 1 or, 2 xor.
JsTensor bool_binary(int op, const JsTensor& a, const JsTensor& b) {
  return guarded([&] {
    static const char* const names[] = {"boolAnd", "boolOr", "boolXor"};
    if (op < 0 || op > 2) kiln::throw_error<kiln::TypeError>("boolBinary: unknown op code ", op);
    check_dtype(names[op], a, DType::Bool);
    check_dtype(names[op], b, DType::Bool);
    switch (op) {
      case 0: return JsTensor(InnerOps::bool_and(a.primitive(), b.primitive()));
      case 1: return JsTensor(InnerOps::bool_or(a.primitive(), b.primitive()));
      default: return JsTensor(InnerOps::bool_xor(a.primitive(), b.primitive()));
    }
  });
}

JsTensor mask_where(const JsTensor& x, const JsTensor& mask, const JsTensor& value) {
  return guarded([&] {
    check_dtype("maskWhere", mask, DType::Bool);
    if (x.dtype() != value.dtype()) {
      kiln::throw_error<kiln::DTypeError>(
          "maskWhere: the value tensor must have the dtype of "
          "the tensor, ",
          js_dtype_name(x.dtype()), ", got ", js_dtype_name(value.dtype()));
    }
    if (x.is_float()) {
      return JsTensor(Ops::mask_where(op_input(x), mask.primitive(), op_input(value)));
    }
    return JsTensor(InnerOps::mask_where(x.primitive(), mask.primitive(), value.primitive()));
  });
}

JsTensor mask_fill(const JsTensor& x, const JsTensor& mask, double value) {
  return guarded([&] {
    check_dtype("maskFill", mask, DType::Bool);
    if (x.is_float()) return JsTensor(Ops::mask_fill(op_input(x), mask.primitive(), value));
    return JsTensor(InnerOps::mask_fill(x.primitive(), mask.primitive(), value));
  });
}

/// dtype codes: 0 float32, 1 int32, 2 bool. A cast to the same dtype shares the buffer
/// (and the graph node); int/bool -> float32 gives an untracked float tensor.
JsTensor cast(const JsTensor& x, int dtype_code) {
  return guarded([&] {
    if (dtype_code < 0 || dtype_code > 2) {
      kiln::throw_error<kiln::TypeError>("cast: unknown dtype code ", dtype_code);
    }
    const auto to = static_cast<DType>(dtype_code);
    if (to == x.dtype()) return x;
    return JsTensor(InnerOps::cast(x.primitive(), to));
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_tensor_elementwise) {
  using namespace kiln_js;
  using emscripten::function;
  function("tBinary", &binary);
  function("tBinaryScalar", &binary_scalar);
  function("tUnary", &unary);
  function("tClamp", &clamp);
  function("tLeakyRelu", &leaky_relu);
  function("tSoftplus", &softplus);
  function("tSoftmax", &softmax);
  function("tCompare", &compare);
  function("tCompareScalar", &compare_scalar);
  function("tBoolUnary", &bool_unary);
  function("tBoolBinary", &bool_binary);
  function("tMaskWhere", &mask_where);
  function("tMaskFill", &mask_fill);
  function("tCast", &cast);
}
