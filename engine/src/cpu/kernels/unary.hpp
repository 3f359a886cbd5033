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

template <UnaryOp Op>
struct F32;
// clang-format off
#define KILN_UNARY_F32(Op, expr)                                   \
  template <>                                                      \
  struct F32<UnaryOp::Op> {                                        \
    template <class V> static V apply(const V& x) { return expr; } \
  };
// Flips the sign bit: xsimd 8.1 computes AVX-512 neg as 0 - x, which maps 0 to +0, not -0.
KILN_UNARY_F32(Neg, x ^ V(-0.f))
KILN_UNARY_F32(Abs, xsimd::abs(x))
// -1, 0, 1; ±0 -> 0, nan -> nan (as the front end documents).
KILN_UNARY_F32(Sign, xsimd::select(x > V(0.f), V(1.f),
                                   xsimd::select(x < V(0.f), V(-1.f),
                                                 xsimd::select(xsimd::isnan(x), x, V(0.f)))))
KILN_UNARY_F32(Exp, xsimd::exp(x))
KILN_UNARY_F32(Log, xsimd::log(x))
KILN_UNARY_F32(Log1p, xsimd::log1p(x))
KILN_UNARY_F32(Sqrt, xsimd::sqrt(x))
KILN_UNARY_F32(Sin, xsimd::sin(x))
KILN_UNARY_F32(Cos, xsimd::cos(x))
KILN_UNARY_F32(Tanh, xsimd::tanh(x))
// A rounded value has the sign of its input, also when it is zero (ceil(-0.5) = -0);
// xsimd 8.1's SSE2 ceil/floor/round go through an integer conversion that loses it.
KILN_UNARY_F32(Ceil, xsimd::copysign(xsimd::ceil(x), x))
KILN_UNARY_F32(Floor, xsimd::copysign(xsimd::floor(x), x))
// Half to even (torch.round): nearbyint in the default rounding mode.
KILN_UNARY_F32(Round, xsimd::copysign(xsimd::nearbyint(x), x))
// An exact division, not the ~12-bit rcpps estimate.
KILN_UNARY_F32(Recip, V(1.f) / x)
KILN_UNARY_F32(Erf, xsimd::erf(x))
KILN_UNARY_F32(Sigmoid, sigmoid(x))
// max(0, x) keeping nan (torch.relu); -0 stays -0.
KILN_UNARY_F32(Relu, xsimd::select(x < V(0.f), V(0.f), x))
// x·Φ(x) = 0.5·x·erfc(-x/√2): the erf form of torch's gelu, written with erfc so that the
// negative tail keeps its relative precision (1 + erf(t) cancels there).
KILN_UNARY_F32(Gelu, V(0.5f) * x * xsimd::erfc(x * V(-0.70710678118654752f)))
// 0.5·x·(1 + tanh(u)) = x·sigmoid(2u), u = √(2/π)·(x + 0.044715·x³)
// (torch's approximate="tanh").
KILN_UNARY_F32(GeluTanh,
               x * sigmoid(V(2.f * 0.79788456080286536f) * (x + V(0.044715f) * x * x * x)))
// x·sigmoid(x) (torch.nn.functional.silu).
KILN_UNARY_F32(Silu, x * sigmoid(x))
#undef KILN_UNARY_F32
// clang-format on

template <UnaryOp Op>
struct I32;
template <>
struct I32<UnaryOp::Neg> {  // wraps: -INT_MIN = INT_MIN
  template <class V>
  static V apply(const V& x) {
    return V(0) - x;
  }
};
template <>
struct I32<UnaryOp::Abs> {  // wraps: |INT_MIN| = INT_MIN (as PyTorch)
  template <class V>
  static V apply(const V& x) {
    return xsimd::select(x < V(0), V(0) - x, x);
  }
};
template <>
struct I32<UnaryOp::Sign> {
  template <class V>
  static V apply(const V& x) {
    return xsimd::select(x > V(0), V(1), xsimd::select(x < V(0), V(-1), V(0)));
  }
};

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

/// out[i] = op(x[i]), i32 (Neg, Abs, Sign).
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

#define KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Op)                                         \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::UnaryF32<::kiln::UnaryOp::Op>, Arch, \
                       const float*, float*, std::size_t)
#define KILN_UNARY_I32_INSTANCE(PREFIX, Arch, Op)                                         \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::UnaryI32<::kiln::UnaryOp::Op>, Arch, \
                       const std::int32_t*, std::int32_t*, std::size_t)
#define KILN_UNARY_KERNELS(PREFIX, Arch)                                                       \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Neg)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Abs)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Sign)                                                  \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Exp)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Log)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Log1p)                                                 \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Sqrt)                                                  \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Sin)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Cos)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Tanh)                                                  \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Ceil)                                                  \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Floor)                                                 \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Round)                                                 \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Recip)                                                 \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Erf)                                                   \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Sigmoid)                                               \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Relu)                                                  \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Gelu)                                                  \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, GeluTanh)                                              \
  KILN_UNARY_F32_INSTANCE(PREFIX, Arch, Silu)                                                  \
  KILN_UNARY_I32_INSTANCE(PREFIX, Arch, Neg)                                                   \
  KILN_UNARY_I32_INSTANCE(PREFIX, Arch, Abs)                                                   \
  KILN_UNARY_I32_INSTANCE(PREFIX, Arch, Sign)                                                  \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::LeakyReluF32, Arch, const float*, float*, \
                       std::size_t, float)                                                     \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::SoftplusF32, Arch, const float*, float*,  \
                       std::size_t, float, float)                                              \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::ClampF32, Arch, const float*, float*,     \
                       std::size_t, float, float)                                              \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::ClampI32, Arch, const std::int32_t*,      \
                       std::int32_t*, std::size_t, std::int32_t, std::int32_t)

#if !defined(__EMSCRIPTEN__)
KILN_UNARY_KERNELS(extern, ::kiln::cpu::Sse2)
KILN_UNARY_KERNELS(extern, ::kiln::cpu::Avx2)
KILN_UNARY_KERNELS(extern, ::kiln::cpu::Avx512)
#endif
