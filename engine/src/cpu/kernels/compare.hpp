#pragma once
// Kernels whose output or input is Bool (one byte 0/1 per element): comparisons over a
// broadcast plan, is_nan / is_inf, Bool logic, and where(mask, value, x).
//
// Comparisons follow IEEE: every comparison with nan is false except NotEqual, which is
// computed as !(a == b) (xsimd 8.1's AVX-512 `!=` uses the ordered predicate NEQ_OQ, which
// is false for nan). Lane masks become bytes through kernels/mask.hpp. Kernels do not throw.
#include <cstddef>
#include <cstdint>
#include <limits>

#include "cpu/dispatch.hpp"
#include "cpu/kernels/binary.hpp"
#include "cpu/kernels/broadcast.hpp"
#include "cpu/kernels/mask.hpp"
#include "kiln/backend/backend.hpp"

namespace kiln::cpu::kernels {

/// Bool logic of bool_and / bool_or / bool_xor.
enum class BoolOp { And, Or, Xor };

namespace compare_detail {

/// The comparison of each op for scalars (`scalar`) and batches (`apply`), generated from the
/// rows of the op table (kiln/backend/ops.def: the expression of a and b).
template <CompareOp Op>
struct Cmp;
// clang-format off
#define KILN_COMPARE_OP(Name, snake, jsMethod, KINDS, doc, expr)             \
  template <>                                                               \
  struct Cmp<CompareOp::Name> {                                             \
    template <class Arch, class T> static bool scalar(T a, T b) { return expr; } \
    template <class V> static auto apply(const V& a, const V& b) { return expr; } \
  };
#include "kiln/backend/ops.def"
// clang-format on

/// Stores a comparison mask as Batch::size bytes: f32/i32 through the lane bitmask, u8
/// directly.
template <class T, class Arch>
inline void store_result(const xsimd::batch_bool<T, Arch>& m, std::uint8_t* out) {
  if constexpr (sizeof(T) == 1) {
    using Batch = xsimd::batch<std::uint8_t, Arch>;
    xsimd::select(m, Batch(1), Batch(0)).store_unaligned(out);
  } else {
    store_mask<T, Arch>(m, out);
  }
}

/// One run of a comparison; av / bv: the operand steps by 1 (else it is one value).
template <class Fn, class T, class Arch>
inline void run(const T* a, bool av, const T* b, bool bv, std::uint8_t* out, std::int64_t n) {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::int64_t W = static_cast<std::int64_t>(Batch::size);
  const std::int64_t n_vec = n - n % W;
  std::int64_t i = 0;
  if (av && bv) {
    for (; i < n_vec; i += W) {
      store_result<T, Arch>(Fn::apply(Batch::load_unaligned(a + i), Batch::load_unaligned(b + i)),
                            out + i);
    }
  } else if (av) {
    const Batch vb(b[0]);
    for (; i < n_vec; i += W) {
      store_result<T, Arch>(Fn::apply(Batch::load_unaligned(a + i), vb), out + i);
    }
  } else if (bv) {
    const Batch va(a[0]);
    for (; i < n_vec; i += W) {
      store_result<T, Arch>(Fn::apply(va, Batch::load_unaligned(b + i)), out + i);
    }
  } else {
    const std::uint8_t r = Fn::template scalar<Arch>(a[0], b[0]);
    for (i = 0; i < n; ++i) out[i] = r;
    return;
  }
  // The tail element by element (an IEEE comparison gives the same answer either way).
  KILN_TAIL_LOOP
  for (; i < n; ++i) out[i] = Fn::template scalar<Arch>(a[av ? i : 0], b[bv ? i : 0]);
}

template <class Fn, class T, class Arch>
inline void run_plan(const Plan<2>& plan, const T* lhs, const T* rhs, std::uint8_t* out) {
  const bool av = plan.run_vector[0], bv = plan.run_vector[1];
  for_each_run(plan, [&](const std::int64_t* off, std::int64_t out_off, std::int64_t n) {
    run<Fn, T, Arch>(lhs + off[0], av, rhs + off[1], bv, out + out_off, n);
  });
}

/// Bool logic on 0/1 bytes, for binary_detail::run.
template <BoolOp Op>
struct Logic {
  static constexpr bool kVector = true;
  template <class V>
  static V vec(const V& a, const V& b) {
    if constexpr (Op == BoolOp::And) {
      return a & b;
    } else if constexpr (Op == BoolOp::Or) {
      return a | b;
    } else {
      return a ^ b;
    }
  }
  template <class Arch>
  static std::uint8_t scalar(std::uint8_t a, std::uint8_t b) {
    return static_cast<std::uint8_t>(vec<unsigned>(a, b));
  }
};

}  // namespace compare_detail

/// out[i] = lhs op rhs as Bool bytes, over a broadcast plan, for T = float, int32_t or
/// uint8_t (Bool tensors).
template <CompareOp Op, class T>
struct Compare {
  template <class Arch>
  void operator()(Arch, const Plan<2>& plan, const T* lhs, const T* rhs, std::uint8_t* out) const;
};
template <CompareOp Op, class T>
template <class Arch>
void Compare<Op, T>::operator()(Arch, const Plan<2>& plan, const T* lhs, const T* rhs,
                                std::uint8_t* out) const {
  compare_detail::run_plan<compare_detail::Cmp<Op>, T, Arch>(plan, lhs, rhs, out);
}

/// out[i] = x[i] is nan (IsInf = false) or ±inf (IsInf = true), as Bool bytes.
template <bool IsInf>
struct FloatClassF32 {
  template <class Arch>
  void operator()(Arch, const float* x, std::uint8_t* out, std::size_t n) const;
};
template <bool IsInf>
template <class Arch>
void FloatClassF32<IsInf>::operator()(Arch, const float* x, std::uint8_t* out,
                                      std::size_t n) const {
  using Batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = Batch::size;
  auto test = [](const Batch& v) {
    if constexpr (IsInf) {
      return xsimd::abs(v) == Batch(std::numeric_limits<float>::infinity());
    } else {
      return xsimd::isnan(v);
    }
  };
  const std::size_t n_vec = n - n % W;
  std::size_t i = 0;
  for (; i < n_vec; i += W) store_mask<float, Arch>(test(Batch::load_unaligned(x + i)), out + i);
  if (i < n) {
    alignas(64) float buf[W];
    for (std::size_t j = 0; j < W; ++j) buf[j] = i + j < n ? x[i + j] : 0.f;
    store_bits<Arch>(bitmask<Arch>(test(Batch::load_aligned(buf))), out + i, n - i);
  }
}

/// out[i] = !x[i] on Bool bytes.
struct BoolNot {
  template <class Arch>
  void operator()(Arch, const std::uint8_t* x, std::uint8_t* out, std::size_t n) const;
};
template <class Arch>
void BoolNot::operator()(Arch, const std::uint8_t* x, std::uint8_t* out, std::size_t n) const {
  using Batch = xsimd::batch<std::uint8_t, Arch>;
  constexpr std::size_t W = Batch::size;
  const std::size_t n_vec = n - n % W;
  std::size_t i = 0;
  for (; i < n_vec; i += W) (Batch::load_unaligned(x + i) ^ Batch(1)).store_unaligned(out + i);
  KILN_TAIL_LOOP
  for (; i < n; ++i) out[i] = static_cast<std::uint8_t>(x[i] ^ 1u);
}

/// out = lhs op rhs on Bool bytes over a broadcast plan.
template <BoolOp Op>
struct BoolLogic {
  template <class Arch>
  void operator()(Arch, const Plan<2>& plan, const std::uint8_t* lhs, const std::uint8_t* rhs,
                  std::uint8_t* out) const;
};
template <BoolOp Op>
template <class Arch>
void BoolLogic<Op>::operator()(Arch, const Plan<2>& plan, const std::uint8_t* lhs,
                               const std::uint8_t* rhs, std::uint8_t* out) const {
  binary_detail::run_plan<compare_detail::Logic<Op>, std::uint8_t, Arch>(plan, lhs, rhs, out);
}

/// out = mask ? value : x over a broadcast plan with operands (x, mask, value), for
/// T = float, int32_t or uint8_t. out may alias x when x has the output's shape.
template <class T>
struct Where {
  template <class Arch>
  void operator()(Arch, const Plan<3>& plan, const T* x, const std::uint8_t* mask, const T* value,
                  T* out) const;
};
template <class T>
template <class Arch>
void Where<T>::operator()(Arch, const Plan<3>& plan, const T* x, const std::uint8_t* mask,
                          const T* value, T* out) const {
  using Batch = xsimd::batch<T, Arch>;
  constexpr std::int64_t W = static_cast<std::int64_t>(Batch::size);
  const bool xv = plan.run_vector[0], mv = plan.run_vector[1], vv = plan.run_vector[2];
  // The select of one vector; m holds W mask bytes.
  auto pick = [](const Batch& a, const std::uint8_t* m, const Batch& v) {
    if constexpr (sizeof(T) == 1) {
      // 0/1 bytes: a ^ ((a ^ v) & -m).
      const Batch mb = Batch(0) - Batch::load_unaligned(m);
      return a ^ ((a ^ v) & mb);
    } else {
      return xsimd::select(load_mask<T, Arch>(m), v, a);
    }
  };
  for_each_run(plan, [&](const std::int64_t* off, std::int64_t out_off, std::int64_t n) {
    const T* xs = x + off[0];
    const std::uint8_t* ms = mask + off[1];
    const T* vs = value + off[2];
    T* o = out + out_off;
    const std::int64_t n_vec = n - n % W;
    std::int64_t i = 0;
    alignas(64) std::uint8_t mask_splat[W];
    if (n_vec > 0 && !mv) {
      for (std::int64_t j = 0; j < W; ++j) mask_splat[j] = ms[0];
    }
    const Batch x_splat(xs[0]), v_splat(vs[0]);
    for (; i < n_vec; i += W) {
      pick(xv ? Batch::load_unaligned(xs + i) : x_splat, mv ? ms + i : mask_splat,
           vv ? Batch::load_unaligned(vs + i) : v_splat)
          .store_unaligned(o + i);
    }
    KILN_TAIL_LOOP
    for (; i < n; ++i) o[i] = ms[mv ? i : 0] ? vs[vv ? i : 0] : xs[xv ? i : 0];
  });
}

}  // namespace kiln::cpu::kernels

// A comma inside a macro argument (Compare<Op, T>), expanded after argument splitting.
#ifndef KILN_COMMA
#define KILN_COMMA ,
#endif
#define KILN_COMPARE_INSTANCE(PREFIX, Arch, Op, T)                                                \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::Compare<::kiln::CompareOp::Op KILN_COMMA T>, \
                       Arch, const ::kiln::cpu::kernels::Plan<2>&, const T*, const T*,            \
                       std::uint8_t*)
#define KILN_COMPARE_TYPES(PREFIX, Arch, Op)            \
  KILN_COMPARE_INSTANCE(PREFIX, Arch, Op, float)        \
  KILN_COMPARE_INSTANCE(PREFIX, Arch, Op, std::int32_t) \
  KILN_COMPARE_INSTANCE(PREFIX, Arch, Op, std::uint8_t)
#define KILN_BOOL_LOGIC_INSTANCE(PREFIX, Arch, Op)                                                \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::BoolLogic<::kiln::cpu::kernels::BoolOp::Op>, \
                       Arch, const ::kiln::cpu::kernels::Plan<2>&, const std::uint8_t*,           \
                       const std::uint8_t*, std::uint8_t*)
#define KILN_WHERE_INSTANCE(PREFIX, Arch, T)                                                \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::Where<T>, Arch,                        \
                       const ::kiln::cpu::kernels::Plan<3>&, const T*, const std::uint8_t*, \
                       const T*, T*)
#define KILN_COMPARE_OTHER_KERNELS(PREFIX, Arch)                                               \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::FloatClassF32<false>, Arch, const float*, \
                       std::uint8_t*, std::size_t)                                             \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::FloatClassF32<true>, Arch, const float*,  \
                       std::uint8_t*, std::size_t)                                             \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::BoolNot, Arch, const std::uint8_t*,       \
                       std::uint8_t*, std::size_t)                                             \
  KILN_BOOL_LOGIC_INSTANCE(PREFIX, Arch, And)                                                  \
  KILN_BOOL_LOGIC_INSTANCE(PREFIX, Arch, Or)                                                   \
  KILN_BOOL_LOGIC_INSTANCE(PREFIX, Arch, Xor)                                                  \
  KILN_WHERE_INSTANCE(PREFIX, Arch, float)                                                     \
  KILN_WHERE_INSTANCE(PREFIX, Arch, std::int32_t)                                              \
  KILN_WHERE_INSTANCE(PREFIX, Arch, std::uint8_t)

#define KILN_INSTANCES_FILE "cpu/kernels/compare_instances.inc"
#include "cpu/kernels/extern_instances.inc"
