#pragma once
// Element-wise unary kernels (f32, i32) and the parameterised activations leaky_relu,
// softplus and clamp. All use xsimd's vectorised math (exp, log, log1p, sin, cos, tanh,
// erf, erfc: within ~1.5 ulp of the correctly rounded f32 result on normal numbers; exp
// flushes results below ~1e-38 to 0). The last partial vector goes through a buffer, so
// every element sees the same code and gets the same answer wherever it sits.
//
// out may alias x. Kernels do not throw.
#include <cstddef>
#include <cstdint>

#include "cpu/dispatch.hpp"
#include "kiln/backend/backend.hpp"

namespace kiln::cpu::kernels {

namespace unary_detail {

/// out[i] = fn(x[i]) for batches, n elements, tail through a padded buffer.
template <class T, class Arch, class Fn>
inline void map(const T* x, T* out, std::size_t n, const Fn& fn) {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::size_t W = Batch::size;
  const std::size_t n_vec = n - n % W;
  std::size_t i = 0;
  for (; i < n_vec; i += W) fn(Batch::load_unaligned(x + i)).store_unaligned(out + i);
  if (i < n) {
    alignas(64) T buf[W];
    for (std::size_t j = 0; j < W; ++j) buf[j] = i + j < n ? x[i + j] : x[i];
    fn(Batch::load_aligned(buf)).store_aligned(buf);
    for (std::size_t j = 0; i + j < n; ++j) out[i + j] = buf[j];
  }
}

/// sigmoid without overflow: with e = exp(-|x|) in (0, 1], 1 / (1 + e) for x >= 0 and
/// e / (1 + e) for x < 0 (exactly 0 and 1 in the far tails, nan for nan).
template <class V>
inline V sigmoid(const V& x) {
  const V e = xsimd::exp(-xsimd::abs(x));
  return xsimd::select(x >= V(0.f), V(1.f), e) / (V(1.f) + e);
}

/// The f32 and i32 element functions of each op, generated from the rows of the op table
/// (kiln/backend/ops.def: the f32 and i32 kernel expressions of x; notes on each there).
template <UnaryOp Op>
struct F32;
template <UnaryOp Op>
struct I32;
// clang-format off
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, doc, message, f32, i32, ...) \
  template <>                                                                   \
  struct F32<UnaryOp::Name> {                                                   \
    template <class V> static V apply(const V& x) { return f32; }               \
  };                                                                            \
  KILN_UNARY_I32_##KINDS(Name, i32)
#define KILN_UNARY_I32_NUMERIC(Name, i32)                                       \
  template <>                                                                   \
  struct I32<UnaryOp::Name> {                                                   \
    template <class V> static V apply(const V& x) { return i32; }               \
  };
#define KILN_UNARY_I32_FLOAT(Name, i32)
#include "kiln/backend/ops.def"
#undef KILN_UNARY_I32_NUMERIC
#undef KILN_UNARY_I32_FLOAT
// clang-format on

}  // namespace unary_detail

/// out[i] = op(x[i]), f32.
template <UnaryOp Op>
struct UnaryF32 {
  template <class Arch>
  void operator()(Arch, const float* x, float* out, std::size_t n) const;
};
template <UnaryOp Op>
template <class Arch>
void UnaryF32<Op>::operator()(Arch, const float* x, float* out, std::size_t n) const {
  unary_detail::map<float, Arch>(x, out, n,
                                 [](const auto& v) { return unary_detail::F32<Op>::apply(v); });
}

/// out[i] = op(x[i]), i32 (the NUMERIC rows of the op table: Neg, Abs, Sign).
template <UnaryOp Op>
struct UnaryI32 {
  template <class Arch>
  void operator()(Arch, const std::int32_t* x, std::int32_t* out, std::size_t n) const;
};
template <UnaryOp Op>
template <class Arch>
void UnaryI32<Op>::operator()(Arch, const std::int32_t* x, std::int32_t* out, std::size_t n) const {
  unary_detail::map<std::int32_t, Arch>(
      x, out, n, [](const auto& v) { return unary_detail::I32<Op>::apply(v); });
}

/// x for x > 0, slope·x otherwise (torch.nn.functional.leaky_relu).
struct LeakyReluF32 {
  template <class Arch>
  void operator()(Arch, const float* x, float* out, std::size_t n, float slope) const;
};
template <class Arch>
void LeakyReluF32::operator()(Arch, const float* x, float* out, std::size_t n, float slope) const {
  using Batch = xsimd::batch<float, Arch>;
  const Batch s(slope);
  unary_detail::map<float, Arch>(
      x, out, n, [&](const Batch& v) { return xsimd::select(v > Batch(0.f), v, v * s); });
}

/// log(1 + exp(beta·x)) / beta, x where beta·x > threshold (torch.nn.Softplus), computed as
/// (max(bx, 0) + log1p(exp(-|bx|))) / beta: no overflow whatever the threshold.
struct SoftplusF32 {
  template <class Arch>
  void operator()(Arch, const float* x, float* out, std::size_t n, float beta,
                  float threshold) const;
};
template <class Arch>
void SoftplusF32::operator()(Arch, const float* x, float* out, std::size_t n, float beta,
                             float threshold) const {
  using Batch = xsimd::batch<float, Arch>;
  const Batch b(beta), t(threshold), zero(0.f);
  unary_detail::map<float, Arch>(x, out, n, [&](const Batch& v) {
    const Batch bx = v * b;
    const Batch soft = (xsimd::max(bx, zero) + xsimd::log1p(xsimd::exp(-xsimd::abs(bx)))) / b;
    return xsimd::select(bx > t, v, soft);
  });
}

/// Clamps to [lo, hi] (pass ∓inf for an absent bound); nan stays nan (torch.clamp).
struct ClampF32 {
  template <class Arch>
  void operator()(Arch, const float* x, float* out, std::size_t n, float lo, float hi) const;
};
template <class Arch>
void ClampF32::operator()(Arch, const float* x, float* out, std::size_t n, float lo,
                          float hi) const {
  using Batch = xsimd::batch<float, Arch>;
  const Batch l(lo), h(hi);
  unary_detail::map<float, Arch>(x, out, n, [&](const Batch& v) {
    const Batch r = xsimd::select(v < l, l, v);
    return xsimd::select(r > h, h, r);
  });
}

/// Clamps to [lo, hi] (pass INT_MIN / INT_MAX for an absent bound).
struct ClampI32 {
  template <class Arch>
  void operator()(Arch, const std::int32_t* x, std::int32_t* out, std::size_t n, std::int32_t lo,
                  std::int32_t hi) const;
};
template <class Arch>
void ClampI32::operator()(Arch, const std::int32_t* x, std::int32_t* out, std::size_t n,
                          std::int32_t lo, std::int32_t hi) const {
  using Batch = xsimd::batch<std::int32_t, Arch>;
  const Batch l(lo), h(hi);
  unary_detail::map<std::int32_t, Arch>(
      x, out, n, [&](const Batch& v) { return xsimd::min(xsimd::max(v, l), h); });
}

}  // namespace kiln::cpu::kernels

// Explicit instantiations: every kernel of this file for one Arch. Declared extern here
// (native), defined in cpu/arch/unary_*.cpp; the per-op list comes from the op table
// (cpu/kernels/unary_instances.inc), the others are listed here.
#define KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Op)                                         \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::UnaryF32<::kiln::UnaryOp::Op>, Arch, \
                       const float*, float*, std::size_t)
#define KILN_UNARY_I32_INSTANCE(PREFIX, Arch, Op)                                         \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::UnaryI32<::kiln::UnaryOp::Op>, Arch, \
                       const std::int32_t*, std::int32_t*, std::size_t)
#define KILN_UNARY_OTHER_KERNELS(PREFIX, Arch)                                                 \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::LeakyReluF32, Arch, const float*, float*, \
                       std::size_t, float)                                                     \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::SoftplusF32, Arch, const float*, float*,  \
                       std::size_t, float, float)                                              \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::ClampF32, Arch, const float*, float*,     \
                       std::size_t, float, float)                                              \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::ClampI32, Arch, const std::int32_t*,      \
                       std::int32_t*, std::size_t, std::int32_t, std::int32_t)

#define KILN_INSTANCES_FILE "cpu/kernels/unary_instances.inc"
#include "cpu/kernels/extern_instances.inc"
