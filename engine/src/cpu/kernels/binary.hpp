#pragma once
// Element-wise binary kernels over a broadcast plan (kernels/broadcast.hpp): f32 and i32,
// one functor per BinaryOp, semantics of kiln::BinaryOp (PyTorch's).
//
// Each run is vector-vector, vector-scalar, scalar-vector or scalar-scalar; the vector
// body uses xsimd batches and the tail a scalar loop computing bit-identical values (the
// vectorised ops are single IEEE / integer operations), so an element's result never
// depends on its position and short broadcast runs ([4096, 2] + [1, 2]) stay cheap. Ops
// without an exact vector form (f32 Rem, Fmod, Pow; i32 division, remainder, power) run a
// scalar body.
//
// Preconditions (checked by the ops layer, not here; kernels must not throw): i32
// divisors of Div/DivTrunc/Rem/Fmod are non-zero and i32 Pow exponents are >= 0. A zero
// divisor that slips through gives 0, never a trap. i32 arithmetic wraps (two's complement,
// as PyTorch), including INT_MIN / -1.
#include <cmath>
#include <cstdint>
#include <limits>

#include "cpu/dispatch.hpp"
#include "cpu/kernels/broadcast.hpp"
#include "kiln/backend/backend.hpp"

namespace kiln::cpu::kernels {

namespace binary_detail {

/// f32 element functions: `scalar` for one element; when kVector, also `vec` for batches,
/// computing exactly the same values (the vector body uses `vec`, the tail `scalar`).
template <BinaryOp Op>
struct F32;

template <>
struct F32<BinaryOp::Add> {
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return a + b;
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return a + b;
  }
};
template <>
struct F32<BinaryOp::Sub> {
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return a - b;
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return a - b;
  }
};
template <>
struct F32<BinaryOp::Mul> {
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return a * b;
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return a * b;
  }
};
template <>
struct F32<BinaryOp::Div> {
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return a / b;
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return a / b;
  }
};
template <>
struct F32<BinaryOp::DivTrunc> {  // torch.div(rounding_mode="trunc")
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return std::trunc(a / b);
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return xsimd::trunc(a / b);
  }
};
template <>
struct F32<BinaryOp::Max> {  // torch.maximum: nan if either is nan
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return (a != a || b != b) ? a + b : (a > b ? a : b);
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), a + b, xsimd::max(a, b));
  }
};
template <>
struct F32<BinaryOp::Min> {  // torch.minimum: nan if either is nan
  static constexpr bool kVector = true;
  template <class Arch>
  static float scalar(float a, float b) {
    return (a != a || b != b) ? a + b : (a < b ? a : b);
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), a + b, xsimd::min(a, b));
  }
};
template <>
struct F32<BinaryOp::Rem> {  // torch.remainder: sign of the divisor, via exact fmod
  static constexpr bool kVector = false;
  template <class Arch>
  static float scalar(float a, float b) {
    float m = std::fmod(a, b);
    if (m != 0.f && ((b < 0.f) != (m < 0.f))) m += b;
    return m;
  }
};
template <>
struct F32<BinaryOp::Fmod> {  // torch.fmod / C fmod: sign of the dividend, exact
  static constexpr bool kVector = false;
  template <class Arch>
  static float scalar(float a, float b) {
    return std::fmod(a, b);
  }
};
template <>
struct F32<BinaryOp::Pow> {  // std::pow (xsimd's pow is exp(b·log a) in f32: tens of ulp off)
  static constexpr bool kVector = false;
  template <class Arch>
  static float scalar(float a, float b) {
    return std::pow(a, b);
  }
};

// i32 scalar code wraps through uint32 (signed overflow is UB in scalar C++). Scalar
// helpers are templates on Arch, like everything here: a plain inline function compiled
// in an AVX-512 TU could be the copy the linker keeps for every caller.
template <class T>
constexpr std::int32_t wrap(T v) {
  return static_cast<std::int32_t>(v);
}
template <class T>
constexpr std::uint32_t bits(T v) {
  return static_cast<std::uint32_t>(v);
}

template <BinaryOp Op>
struct I32;

template <>
struct I32<BinaryOp::Add> {
  static constexpr bool kVector = true;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    return wrap(bits(a) + bits(b));
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return a + b;
  }
};
template <>
struct I32<BinaryOp::Sub> {
  static constexpr bool kVector = true;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    return wrap(bits(a) - bits(b));
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return a - b;
  }
};
template <>
struct I32<BinaryOp::Mul> {  // in uint32: xsimd's SSE2 i32 multiply is a scalar signed loop (UB)
  static constexpr bool kVector = true;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    return wrap(bits(a) * bits(b));
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    using U = xsimd::batch<std::uint32_t, typename V::arch_type>;
    return xsimd::bitwise_cast<V>(xsimd::bitwise_cast<U>(a) * xsimd::bitwise_cast<U>(b));
  }
};
template <>
struct I32<BinaryOp::Max> {
  static constexpr bool kVector = true;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    return a > b ? a : b;
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return xsimd::max(a, b);
  }
};
template <>
struct I32<BinaryOp::Min> {
  static constexpr bool kVector = true;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    return a < b ? a : b;
  }
  template <class V>
  static V vec(const V& a, const V& b) {
    return xsimd::min(a, b);
  }
};
template <>
struct I32<BinaryOp::DivTrunc> {  // C division; INT_MIN / -1 wraps to INT_MIN
  static constexpr bool kVector = false;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    if (b == 0) return 0;
    if (b == -1) return wrap(0u - bits(a));
    return a / b;
  }
};
template <>
struct I32<BinaryOp::Div> {  // floor division (Python //, torch.floor_divide)
  static constexpr bool kVector = false;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    if (b == 0) return 0;
    if (b == -1) return wrap(0u - bits(a));
    const std::int32_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
};
template <>
struct I32<BinaryOp::Rem> {  // sign of the divisor (Python %, torch.remainder)
  static constexpr bool kVector = false;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    if (b == 0 || b == -1) return 0;
    const std::int32_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
  }
};
template <>
struct I32<BinaryOp::Fmod> {  // sign of the dividend (C %, torch.fmod)
  static constexpr bool kVector = false;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    if (b == 0 || b == -1) return 0;
    return a % b;
  }
};
template <>
struct I32<BinaryOp::Pow> {  // exact, wrapping; exponent >= 0 (checked by the caller)
  static constexpr bool kVector = false;
  template <class Arch>
  static std::int32_t scalar(std::int32_t a, std::int32_t b) {
    if (b < 0) return 0;
    std::uint32_t result = 1, base = bits(a), e = bits(b);
    while (e != 0) {
      if (e & 1u) result *= base;
      base *= base;
      e >>= 1;
    }
    return wrap(result);
  }
};

/// One run of n elements; av / bv: the operand steps by 1 (else it is one value).
template <class Fn, class T, class Arch>
inline void run(const T* a, bool av, const T* b, bool bv, T* out, std::int64_t n) {
  if constexpr (Fn::kVector) {
    using Batch = xsimd::batch<T, Arch>;
    constexpr std::int64_t W = static_cast<std::int64_t>(Batch::size);
    const std::int64_t n_vec = n - n % W;
    std::int64_t i = 0;
    if (av && bv) {
      for (; i < n_vec; i += W) {
        Fn::vec(Batch::load_unaligned(a + i), Batch::load_unaligned(b + i))
            .store_unaligned(out + i);
      }
    } else if (av) {
      const Batch vb(b[0]);
      for (; i < n_vec; i += W) Fn::vec(Batch::load_unaligned(a + i), vb).store_unaligned(out + i);
    } else if (bv) {
      const Batch va(a[0]);
      for (; i < n_vec; i += W) Fn::vec(va, Batch::load_unaligned(b + i)).store_unaligned(out + i);
    } else {
      const T r = Fn::template scalar<Arch>(a[0], b[0]);
      for (i = 0; i < n; ++i) out[i] = r;
      return;
    }
    // The tail element by element: the vector ops are exact IEEE / integer operations, so
    // the scalar form gives bit-identical results (and short broadcast runs stay cheap).
    KILN_TAIL_LOOP
    for (; i < n; ++i) out[i] = Fn::template scalar<Arch>(a[av ? i : 0], b[bv ? i : 0]);
  } else {
    if (av && bv) {
      for (std::int64_t i = 0; i < n; ++i) out[i] = Fn::template scalar<Arch>(a[i], b[i]);
    } else if (av) {
      const T vb = b[0];
      for (std::int64_t i = 0; i < n; ++i) out[i] = Fn::template scalar<Arch>(a[i], vb);
    } else if (bv) {
      const T va = a[0];
      for (std::int64_t i = 0; i < n; ++i) out[i] = Fn::template scalar<Arch>(va, b[i]);
    } else {
      const T r = Fn::template scalar<Arch>(a[0], b[0]);
      for (std::int64_t i = 0; i < n; ++i) out[i] = r;
    }
  }
}

template <class Fn, class T, class Arch>
inline void run_plan(const Plan<2>& plan, const T* lhs, const T* rhs, T* out) {
  const bool av = plan.run_vector[0], bv = plan.run_vector[1];
  for_each_run(plan, [&](const std::int64_t* off, std::int64_t out_off, std::int64_t n) {
    run<Fn, T, Arch>(lhs + off[0], av, rhs + off[1], bv, out + out_off, n);
  });
}

}  // namespace binary_detail

/// out = lhs op rhs over a broadcast plan, f32. out may alias lhs or rhs when that operand
/// has the output's shape (each element is read before it is written).
template <BinaryOp Op>
struct BinaryF32 {
  template <class Arch>
  void operator()(Arch, const Plan<2>& plan, const float* lhs, const float* rhs, float* out) const;
};
template <BinaryOp Op>
template <class Arch>
void BinaryF32<Op>::operator()(Arch, const Plan<2>& plan, const float* lhs, const float* rhs,
                               float* out) const {
  binary_detail::run_plan<binary_detail::F32<Op>, float, Arch>(plan, lhs, rhs, out);
}

/// out = lhs op rhs over a broadcast plan, i32 (see the preconditions above).
template <BinaryOp Op>
struct BinaryI32 {
  template <class Arch>
  void operator()(Arch, const Plan<2>& plan, const std::int32_t* lhs, const std::int32_t* rhs,
                  std::int32_t* out) const;
};
template <BinaryOp Op>
template <class Arch>
void BinaryI32<Op>::operator()(Arch, const Plan<2>& plan, const std::int32_t* lhs,
                               const std::int32_t* rhs, std::int32_t* out) const {
  binary_detail::run_plan<binary_detail::I32<Op>, std::int32_t, Arch>(plan, lhs, rhs, out);
}

}  // namespace kiln::cpu::kernels

// Explicit instantiations: declared extern here, defined in engine/src/cpu/arch/binary_*.cpp;
// one BinaryF32 and one BinaryI32 per row of the op table (cpu/kernels/binary_instances.inc).
#define KILN_BINARY_INSTANCE(PREFIX, Arch, Op)                                                   \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::BinaryF32<::kiln::BinaryOp::Op>, Arch,      \
                       const ::kiln::cpu::kernels::Plan<2>&, const float*, const float*, float*) \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::BinaryI32<::kiln::BinaryOp::Op>, Arch,      \
                       const ::kiln::cpu::kernels::Plan<2>&, const std::int32_t*,                \
                       const std::int32_t*, std::int32_t*)
#define KILN_INSTANCES_FILE "cpu/kernels/binary_instances.inc"
#include "cpu/kernels/extern_instances.inc"
