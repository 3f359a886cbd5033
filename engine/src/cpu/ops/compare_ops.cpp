// Comparisons (-> Bool), is_nan / is_inf, Bool logic and masked selection of the Cpu
// backend. Bool tensors hold one byte 0/1 per element. Comparisons follow IEEE (nan is
// unequal to everything, NotEqual is true for nan), as PyTorch.
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu/dispatch.hpp"
#include "cpu/kernels/compare.hpp"
#include "cpu/ops/elementwise_common.hpp"
#include "cpu/parallel_plan.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

using cpu::ops::op_name;
namespace kernels = cpu::kernels;

/// Runs the comparison, split across the thread pool when large (cpu/parallel_plan.hpp).
template <class T>
void run_compare(CompareOp op, const kernels::Plan<2>& plan, const T* lhs, const T* rhs,
                 std::uint8_t* out) {
  cpu::parallel_plan(plan, [&](const kernels::Plan<2>& p, const std::int64_t* off,
                               std::int64_t out_off) {
    const T* a = lhs + off[0];
    const T* b = rhs + off[1];
    std::uint8_t* o = out + out_off;
    switch (op) {
#define KILN_COMPARE_OP(Name, ...)                                           \
  case CompareOp::Name:                                                      \
    cpu::dispatch_apart(kernels::Compare<CompareOp::Name, T>{}, p, a, b, o); \
    return;
#include "kiln/backend/ops.def"
    }
  });
}

/// Runs the comparison for any dtype; lhs and rhs have `dtype`.
void run_compare_any(CompareOp op, DType dtype, const kernels::Plan<2>& plan, const void* lhs,
                     const void* rhs, std::uint8_t* out) {
  switch (dtype) {
    case DType::F32:
      run_compare(op, plan, static_cast<const float*>(lhs), static_cast<const float*>(rhs), out);
      break;
    case DType::I32:
      run_compare(op, plan, static_cast<const std::int32_t*>(lhs),
                  static_cast<const std::int32_t*>(rhs), out);
      break;
    case DType::Bool:
      run_compare(op, plan, static_cast<const std::uint8_t*>(lhs),
                  static_cast<const std::uint8_t*>(rhs), out);
      break;
  }
}

bool compare_double(CompareOp op, double a, double b) {
  switch (op) {
#define KILN_COMPARE_OP(Name, snake, jsMethod, KINDS, doc, expr) \
  case CompareOp::Name: return expr;
#include "kiln/backend/ops.def"
  }
  return false;
}

template <kernels::BoolOp Op>
CpuTensor bool_logic(const char* name, CpuTensor lhs, CpuTensor rhs) {
  cpu::ops::require_bool(name, "lhs", lhs.dtype());
  cpu::ops::require_bool(name, "rhs", rhs.dtype());
  const Shape shape =
      cpu::ops::broadcast_shapes(name, {{"lhs", &lhs.shape()}, {"rhs", &rhs.shape()}});
  const auto plan = cpu::ops::make_plan<2>(shape, {&lhs.shape(), &rhs.shape()});
  const std::uint8_t* a = lhs.data<std::uint8_t>();
  const std::uint8_t* b = rhs.data<std::uint8_t>();
  CpuTensor out = cpu::ops::reusable(lhs, shape, DType::Bool)   ? std::move(lhs)
                  : cpu::ops::reusable(rhs, shape, DType::Bool) ? std::move(rhs)
                                                                : CpuTensor(shape, DType::Bool);
  cpu::dispatch(kernels::BoolLogic<Op>{}, plan, a, b, out.data<std::uint8_t>());
  return out;
}

/// where(mask, value, x) with all three broadcast; value has x's dtype; `value_shape` is a
/// rank-0 Shape when value is one scalar.
CpuTensor where(CpuTensor x, const CpuTensor& mask, const void* value, const Shape& value_shape,
                const Shape& shape) {
  const auto plan = cpu::ops::make_plan<3>(shape, {&x.shape(), &mask.shape(), &value_shape});
  const void* xs = x.data<std::uint8_t>();
  const DType dtype = x.dtype();
  CpuTensor out = cpu::ops::reusable(x, shape, dtype) ? std::move(x) : CpuTensor(shape, dtype);
  const std::uint8_t* m = mask.data<std::uint8_t>();
  void* o = out.data<std::uint8_t>();
  // A map: split across the thread pool when large (cpu/parallel_plan.hpp).
  auto run = [&](auto tag) {
    using T = decltype(tag);
    cpu::parallel_plan(plan, [&](const kernels::Plan<3>& p, const std::int64_t* off,
                                 std::int64_t out_off) {
      cpu::dispatch_apart(kernels::Where<T>{}, p, static_cast<const T*>(xs) + off[0],
                          m + off[1], static_cast<const T*>(value) + off[2],
                          static_cast<T*>(o) + out_off);
    });
  };
  switch (dtype) {
    case DType::F32: run(float{}); break;
    case DType::I32: run(std::int32_t{}); break;
    case DType::Bool: run(std::uint8_t{}); break;
  }
  return out;
}

}  // namespace

CpuTensor CpuOps::compare(CompareOp op, const CpuTensor& lhs, const CpuTensor& rhs) {
  const char* name = op_name(op);
  cpu::ops::check_same_dtype(name, "lhs", lhs.dtype(), "rhs", rhs.dtype());
  const Shape shape =
      cpu::ops::broadcast_shapes(name, {{"lhs", &lhs.shape()}, {"rhs", &rhs.shape()}});
  const auto plan = cpu::ops::make_plan<2>(shape, {&lhs.shape(), &rhs.shape()});
  CpuTensor out(shape, DType::Bool);
  run_compare_any(op, lhs.dtype(), plan, lhs.data<std::uint8_t>(), rhs.data<std::uint8_t>(),
                  out.data<std::uint8_t>());
  return out;
}

CpuTensor CpuOps::compare_scalar(CompareOp op, const CpuTensor& lhs, double scalar) {
  const std::int64_t n = lhs.num_elements();
  CpuTensor out(lhs.shape(), DType::Bool);
  std::uint8_t* o = out.data<std::uint8_t>();
  const auto plan = cpu::ops::scalar_plan(n, false);
  switch (lhs.dtype()) {
    case DType::F32: {
      // As PyTorch: a float32 tensor compares with the scalar rounded to float32.
      const float s = static_cast<float>(scalar);
      run_compare(op, plan, lhs.data<float>(), &s, o);
      return out;
    }
    case DType::I32: {
      const bool exact = scalar == std::floor(scalar) &&
                         scalar >= std::numeric_limits<std::int32_t>::min() &&
                         scalar <= std::numeric_limits<std::int32_t>::max();
      if (exact) {
        const auto s = static_cast<std::int32_t>(scalar);
        run_compare(op, plan, lhs.data<std::int32_t>(), &s, o);
        return out;
      }
      // 2.5, 1e10, nan: compare exactly in double (every i32 is a double), off the fast path.
      const std::int32_t* x = lhs.data<std::int32_t>();
      for (std::int64_t i = 0; i < n; ++i) o[i] = compare_double(op, x[i], scalar);
      return out;
    }
    case DType::Bool: {
      const std::uint8_t* x = lhs.data<std::uint8_t>();
      for (std::int64_t i = 0; i < n; ++i) o[i] = compare_double(op, x[i], scalar);
      return out;
    }
  }
  return out;
}

CpuTensor CpuOps::is_nan(const CpuTensor& x) {
  CpuTensor out(x.shape(), DType::Bool);
  const auto n = static_cast<std::size_t>(x.num_elements());
  if (x.dtype() == DType::F32) {
    cpu::dispatch(kernels::FloatClassF32<false>{}, x.data<float>(), out.data<std::uint8_t>(), n);
  } else if (n > 0) {
    std::memset(out.data<std::uint8_t>(), 0, n);  // integers are never nan
  }
  return out;
}

CpuTensor CpuOps::is_inf(const CpuTensor& x) {
  CpuTensor out(x.shape(), DType::Bool);
  const auto n = static_cast<std::size_t>(x.num_elements());
  if (x.dtype() == DType::F32) {
    cpu::dispatch(kernels::FloatClassF32<true>{}, x.data<float>(), out.data<std::uint8_t>(), n);
  } else if (n > 0) {
    std::memset(out.data<std::uint8_t>(), 0, n);
  }
  return out;
}

CpuTensor CpuOps::bool_not(CpuTensor x) {
  cpu::ops::require_bool("bool_not", "the input", x.dtype());
  const auto n = static_cast<std::size_t>(x.num_elements());
  const std::uint8_t* in = x.data<std::uint8_t>();
  CpuTensor out = x.is_unique() ? std::move(x) : CpuTensor(x.shape(), DType::Bool);
  cpu::dispatch(kernels::BoolNot{}, in, out.data<std::uint8_t>(), n);
  return out;
}

CpuTensor CpuOps::bool_and(CpuTensor lhs, CpuTensor rhs) {
  return bool_logic<kernels::BoolOp::And>("bool_and", std::move(lhs), std::move(rhs));
}
CpuTensor CpuOps::bool_or(CpuTensor lhs, CpuTensor rhs) {
  return bool_logic<kernels::BoolOp::Or>("bool_or", std::move(lhs), std::move(rhs));
}
CpuTensor CpuOps::bool_xor(CpuTensor lhs, CpuTensor rhs) {
  return bool_logic<kernels::BoolOp::Xor>("bool_xor", std::move(lhs), std::move(rhs));
}

CpuTensor CpuOps::mask_where(CpuTensor x, const CpuTensor& mask, const CpuTensor& value) {
  cpu::ops::check_mask_where(x.dtype(), mask.dtype(), value.dtype());
  const Shape shape = cpu::ops::broadcast_shapes(
      "mask_where", {{"x", &x.shape()}, {"mask", &mask.shape()}, {"value", &value.shape()}});
  return where(std::move(x), mask, value.data<std::uint8_t>(), value.shape(), shape);
}

CpuTensor CpuOps::mask_fill(CpuTensor x, const CpuTensor& mask, double value) {
  cpu::ops::check_mask_fill(mask.dtype());
  const Shape shape =
      cpu::ops::broadcast_shapes("mask_fill", {{"x", &x.shape()}, {"mask", &mask.shape()}});
  // The fill value in x's dtype, as one broadcast scalar (a rank-0 shape).
  union {
    float f;
    std::int32_t i;
    std::uint8_t b;
  } v{};
  switch (x.dtype()) {
    case DType::F32: v.f = static_cast<float>(value); break;
    case DType::I32: v.i = cpu::ops::int_scalar("mask_fill", value); break;
    case DType::Bool: v.b = value != 0.0; break;
  }
  return where(std::move(x), mask, &v, Shape(), shape);
}

}  // namespace kiln
