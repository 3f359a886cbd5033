// Element-wise arithmetic of the Cpu backend: binary ops with NumPy broadcasting and with
// scalars, unary ops, clamp, leaky_relu, softplus. Thin: check arguments, pick the output
// buffer (the input's own when it is the only handle), run an xsimd kernel.
// Comparisons, Bool logic and masks are in compare_ops.cpp.
#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/dispatch.hpp"
#include "cpu/kernels/binary.hpp"
#include "cpu/kernels/unary.hpp"
#include "cpu/ops/elementwise_common.hpp"
#include "cpu/parallel_plan.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

using cpu::ops::op_name;
namespace kernels = cpu::kernels;

/// Runs the binary kernel family K (BinaryF32 or BinaryI32) for the run-time op, split
/// across the thread pool when large (cpu/parallel_plan.hpp: a map, so bit-identical).
template <template <BinaryOp> class K, class T>
void run_binary(BinaryOp op, const kernels::Plan<2>& plan, const T* lhs, const T* rhs, T* out) {
  cpu::parallel_plan(plan, [&](const kernels::Plan<2>& p, const std::int64_t* off,
                               std::int64_t out_off) {
    const T* a = lhs + off[0];
    const T* b = rhs + off[1];
    T* o = out + out_off;
    switch (op) {
#define KILN_BINARY_OP(Name, ...) \
  case BinaryOp::Name: cpu::dispatch_apart(K<BinaryOp::Name>{}, p, a, b, o); return;
#include "kiln/backend/ops.def"
    }
  });
}

/// Runs the unary kernel UnaryF32<op> for the run-time op (split when large, as run_binary).
void run_unary_f32(UnaryOp op, const float* x, float* out, std::size_t n) {
  cpu::parallel_elements(static_cast<std::int64_t>(n), [&](std::int64_t begin, std::int64_t end) {
    const float* xs = x + begin;
    float* o = out + begin;
    const auto len = static_cast<std::size_t>(end - begin);
    switch (op) {
#define KILN_UNARY_OP(Name, ...) \
  case UnaryOp::Name: cpu::dispatch_apart(kernels::UnaryF32<UnaryOp::Name>{}, xs, o, len); return;
#include "kiln/backend/ops.def"
    }
  });
}

/// Runs the unary kernel UnaryI32<op> for the run-time op (a NUMERIC row of the op table).
void run_unary_i32(UnaryOp op, const std::int32_t* x, std::int32_t* out, std::size_t n) {
  switch (op) {
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, ...) KILN_UNARY_I32_CASE_##KINDS(Name)
#define KILN_UNARY_I32_CASE_NUMERIC(Name) \
  case UnaryOp::Name: cpu::dispatch_apart(kernels::UnaryI32<UnaryOp::Name>{}, x, out, n); return;
#define KILN_UNARY_I32_CASE_FLOAT(Name)
#include "kiln/backend/ops.def"
#undef KILN_UNARY_I32_CASE_NUMERIC
#undef KILN_UNARY_I32_CASE_FLOAT
    default: return;  // not reached: CpuOps::unary rejects i32 for FLOAT ops
  }
}

/// The output of an op mapping x to the same shape and dtype: x's own buffer when unique.
CpuTensor same_shape_output(CpuTensor& x) {
  return x.is_unique() ? std::move(x) : CpuTensor(x.shape(), x.dtype());
}

}  // namespace

CpuTensor CpuOps::binary(BinaryOp op, CpuTensor lhs, CpuTensor rhs) {
  const DType dtype = lhs.dtype();
  const char* name = op_name(op, dtype);
  cpu::ops::check_binary(op, dtype, rhs.dtype());
  const Shape shape =
      cpu::ops::broadcast_shapes(name, {{"lhs", &lhs.shape()}, {"rhs", &rhs.shape()}});
  const auto plan = cpu::ops::make_plan<2>(shape, {&lhs.shape(), &rhs.shape()});
  if (dtype == DType::I32 && plan.num_runs > 0) {
    cpu::ops::check_int_rhs(op, rhs.data<std::int32_t>(), rhs.num_elements(), rhs.shape());
  }
  // Pointers first: the output may take over lhs's or rhs's buffer.
  const void* a = lhs.data<std::uint8_t>();
  const void* b = rhs.data<std::uint8_t>();
  CpuTensor out = cpu::ops::reusable(lhs, shape, dtype)   ? std::move(lhs)
                  : cpu::ops::reusable(rhs, shape, dtype) ? std::move(rhs)
                                                          : CpuTensor(shape, dtype);
  if (dtype == DType::F32) {
    run_binary<kernels::BinaryF32>(op, plan, static_cast<const float*>(a),
                                   static_cast<const float*>(b), out.data<float>());
  } else {
    run_binary<kernels::BinaryI32>(op, plan, static_cast<const std::int32_t*>(a),
                                   static_cast<const std::int32_t*>(b), out.data<std::int32_t>());
  }
  return out;
}

CpuTensor CpuOps::binary_scalar(BinaryOp op, CpuTensor lhs, double scalar, bool scalar_on_left) {
  const DType dtype = lhs.dtype();
  const char* name = op_name(op, dtype);
  cpu::ops::check_binary_scalar(op, dtype);
  const std::int64_t n = lhs.num_elements();
  const auto plan = cpu::ops::scalar_plan(n, scalar_on_left);
  const void* x = lhs.data<std::uint8_t>();
  if (dtype == DType::F32) {
    const float s = static_cast<float>(scalar);
    if (op == BinaryOp::Pow && !scalar_on_left && (s == 1.f || s == 2.f)) {
      // pow(x, 1) = x and pow(x, 2) = x·x exactly (both correctly rounded): vector paths.
      if (s == 1.f) return lhs;  // buffers are never written while shared: no copy needed
      CpuTensor out = same_shape_output(lhs);
      const auto* xf = static_cast<const float*>(x);
      const auto square = cpu::ops::make_plan<2>(out.shape(), {&out.shape(), &out.shape()});
      cpu::dispatch_apart(kernels::BinaryF32<BinaryOp::Mul>{}, square, xf, xf, out.data<float>());
      return out;
    }
    CpuTensor out = same_shape_output(lhs);
    const auto* xf = static_cast<const float*>(x);
    if (scalar_on_left) {
      run_binary<kernels::BinaryF32>(op, plan, &s, xf, out.data<float>());
    } else {
      run_binary<kernels::BinaryF32>(op, plan, xf, &s, out.data<float>());
    }
    return out;
  }
  const std::int32_t s = cpu::ops::int_scalar(name, scalar);
  const auto* xi = static_cast<const std::int32_t*>(x);
  if (n > 0) {
    if (scalar_on_left) {
      cpu::ops::check_int_rhs(op, xi, n, lhs.shape());
    } else {
      cpu::ops::check_int_scalar_rhs(op, s);
    }
  }
  CpuTensor out = same_shape_output(lhs);
  if (scalar_on_left) {
    run_binary<kernels::BinaryI32>(op, plan, &s, xi, out.data<std::int32_t>());
  } else {
    run_binary<kernels::BinaryI32>(op, plan, xi, &s, out.data<std::int32_t>());
  }
  return out;
}

CpuTensor CpuOps::unary(UnaryOp op, CpuTensor x) {
  const DType dtype = x.dtype();
  cpu::ops::check_unary(op, dtype);
  const auto n = static_cast<std::size_t>(x.num_elements());
  const void* in = x.data<std::uint8_t>();
  CpuTensor out = same_shape_output(x);
  if (dtype == DType::F32) {
    run_unary_f32(op, static_cast<const float*>(in), out.data<float>(), n);
  } else {
    run_unary_i32(op, static_cast<const std::int32_t*>(in), out.data<std::int32_t>(), n);
  }
  return out;
}

CpuTensor CpuOps::clamp(CpuTensor x, std::optional<double> min, std::optional<double> max) {
  const DType dtype = x.dtype();
  cpu::ops::check_clamp(dtype, min, max);
  const auto n = static_cast<std::size_t>(x.num_elements());
  const void* in = x.data<std::uint8_t>();
  CpuTensor out = same_shape_output(x);
  if (dtype == DType::F32) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    const float lo = min ? static_cast<float>(*min) : -kInf;
    const float hi = max ? static_cast<float>(*max) : kInf;
    cpu::dispatch(kernels::ClampF32{}, static_cast<const float*>(in), out.data<float>(), n, lo, hi);
  } else {
    // x >= 2.5 exactly when x >= 3 for integers: round the bounds inward, then saturate.
    constexpr double kMin = std::numeric_limits<std::int32_t>::min();
    constexpr double kMax = std::numeric_limits<std::int32_t>::max();
    const double lo = min ? std::clamp(std::ceil(*min), kMin, kMax) : kMin;
    const double hi = max ? std::clamp(std::floor(*max), kMin, kMax) : kMax;
    cpu::dispatch(kernels::ClampI32{}, static_cast<const std::int32_t*>(in),
                  out.data<std::int32_t>(), n, static_cast<std::int32_t>(lo),
                  static_cast<std::int32_t>(hi));
  }
  return out;
}

CpuTensor CpuOps::leaky_relu(CpuTensor x, double negative_slope) {
  cpu::ops::check_leaky_relu(x.dtype(), negative_slope);
  const auto n = static_cast<std::size_t>(x.num_elements());
  const float* in = x.data<float>();
  CpuTensor out = same_shape_output(x);
  cpu::dispatch(kernels::LeakyReluF32{}, in, out.data<float>(), n,
                static_cast<float>(negative_slope));
  return out;
}

CpuTensor CpuOps::softplus(CpuTensor x, double beta, double threshold) {
  cpu::ops::check_softplus(x.dtype(), beta, threshold);
  const auto n = static_cast<std::size_t>(x.num_elements());
  const float* in = x.data<float>();
  CpuTensor out = same_shape_output(x);
  cpu::dispatch(kernels::SoftplusF32{}, in, out.data<float>(), n, static_cast<float>(beta),
                static_cast<float>(threshold));
  return out;
}

}  // namespace kiln
