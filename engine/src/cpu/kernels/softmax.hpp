#pragma once
// Softmax and log-softmax kernels, stable (the max is subtracted before exp):
//   softmax     = exp(x - max) / sum(exp(x - max))
//   log_softmax = (x - max) - log(sum(exp(x - max))), the log written as log1p of the sum
//                 without the max entries' 1s
// IEEE arithmetic gives PyTorch's answers for non-finite rows with no special cases:
// -inf entries get exp(-inf) = 0 exactly; a row of all -inf has max -inf and -inf - -inf =
// nan, so the row is nan; a +inf entry gives inf - inf = nan in the sum, so the row is nan;
// a nan anywhere in a row makes the sum, and so the row, nan.
//
// SoftmaxLastDimF32 handles contiguous rows (softmax along the last dim): one vector pass
// for the max, one for exp + sum (storing exp for softmax), one to scale by 1/sum (or to
// subtract max + log(sum)). SoftmaxStridedF32 handles [outer, n, inner] with inner > 1
// (softmax along a middle dim): the same three passes, vectorised across `inner` columns.
// out may alias x. Kernels do not throw.
#include <cmath>
#include <cstddef>
#include <limits>

#include "cpu/dispatch.hpp"
#include "cpu/simd_compat.hpp"

namespace kiln::cpu::kernels {

/// Softmax (log_softmax when `log`) of `rows` contiguous rows of n elements.
struct SoftmaxLastDimF32 {
  template <class Arch>
  void operator()(Arch, const float* x, float* out, std::size_t rows, std::size_t n,
                  bool log) const;
};

template <class Arch>
void SoftmaxLastDimF32::operator()(Arch, const float* x, float* out, std::size_t rows,
                                   std::size_t n, bool log) const {
  using Batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = Batch::size;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNegInf = -kInf;
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  const std::size_t n_vec = n - n % W;
  if (n == 0) return;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* outr = out + r * n;

    // Pass 1: the row max.
    Batch vmax(kNegInf);
    std::size_t i = 0;
    for (; i < n_vec; i += W) vmax = xsimd::max(vmax, Batch::load_unaligned(xr + i));
    float m = simd::reduce_max(vmax);
    KILN_TAIL_LOOP
    for (; i < n; ++i) m = xr[i] > m ? xr[i] : m;
    const Batch vm(m);

    // Pass 2: exp(x - max), stored for softmax, summed. The tail is padded with -inf,
    // whose exp adds 0 (or nan when the row itself is already nan). log_softmax sums the
    // entries below the max apart from the count of max entries (each exp(0) = 1), so that
    // lse = log1p(rest + count - 1) keeps its precision when one entry dominates (a
    // confident prediction's log-probability near 0 stays accurate to ~1 ulp).
    Batch vsum(0.f), vcount(0.f);
    auto accumulate = [&](const Batch& v, const Batch& e) {
      if (log) {
        const auto is_max = v == vm;
        vsum += xsimd::select(is_max, Batch(0.f), e);
        vcount += xsimd::select(is_max, Batch(1.f), Batch(0.f));
      } else {
        vsum += e;
      }
    };
    for (i = 0; i < n_vec; i += W) {
      const Batch v = Batch::load_unaligned(xr + i);
      const Batch e = xsimd::exp(v - vm);
      if (!log) e.store_unaligned(outr + i);
      accumulate(v, e);
    }
    if (i < n) {
      alignas(64) float buf[W];
      for (std::size_t j = 0; j < W; ++j) buf[j] = i + j < n ? xr[i + j] : kNegInf;
      const Batch v = Batch::load_aligned(buf);
      const Batch e = xsimd::exp(v - vm);
      if (!log) {
        e.store_aligned(buf);
        for (std::size_t j = 0; i + j < n; ++j) outr[i + j] = buf[j];
      }
      accumulate(v, e);
    }
    const float sum = simd::reduce_add(vsum);

    // Pass 3: scale, or shift by the log-sum-exp.
    if (!log) {
      const float inv = 1.f / sum;
      const Batch vinv(inv);
      for (i = 0; i < n_vec; i += W) {
        (Batch::load_unaligned(outr + i) * vinv).store_unaligned(outr + i);
      }
      KILN_TAIL_LOOP
      for (; i < n; ++i) outr[i] *= inv;
    } else {
      // A +inf entry makes the row nan (inf - inf), as PyTorch; the count would hide it.
      const float lse = m == kInf ? kNan : std::log1p(sum + (simd::reduce_add(vcount) - 1.f));
      const Batch vlse(lse);
      for (i = 0; i < n_vec; i += W) {
        ((Batch::load_unaligned(xr + i) - vm) - vlse).store_unaligned(outr + i);
      }
      KILN_TAIL_LOOP
      for (; i < n; ++i) outr[i] = (xr[i] - m) - lse;
    }
  }
}

/// Softmax (log_softmax when `log`) along the middle dim of a contiguous [outer, n, inner]
/// block, vectorised across the inner dim.
struct SoftmaxStridedF32 {
  template <class Arch>
  void operator()(Arch, const float* x, float* out, std::size_t outer, std::size_t n,
                  std::size_t inner, bool log) const;
};

template <class Arch>
void SoftmaxStridedF32::operator()(Arch, const float* x, float* out, std::size_t outer,
                                   std::size_t n, std::size_t inner, bool log) const {
  using Batch = xsimd::batch<float, Arch>;
  constexpr std::size_t W = Batch::size;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr float kNegInf = -kInf;
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  if (n == 0 || inner == 0) return;
  for (std::size_t o = 0; o < outer; ++o) {
    const float* xo = x + o * n * inner;
    float* oo = out + o * n * inner;
    for (std::size_t j = 0; j < inner; j += W) {
      const std::size_t cols = inner - j < W ? inner - j : W;
      // Loads / stores `cols` columns at row k; partial groups go through a buffer.
      auto load = [&](const float* base, std::size_t k) {
        if (cols == W) return Batch::load_unaligned(base + k * inner + j);
        alignas(64) float buf[W];
        for (std::size_t c = 0; c < W; ++c) buf[c] = c < cols ? base[k * inner + j + c] : 0.f;
        return Batch::load_aligned(buf);
      };
      auto store = [&](const Batch& v, std::size_t k) {
        if (cols == W) {
          v.store_unaligned(oo + k * inner + j);
          return;
        }
        alignas(64) float buf[W];
        v.store_aligned(buf);
        for (std::size_t c = 0; c < cols; ++c) oo[k * inner + j + c] = buf[c];
      };

      Batch vmax(kNegInf);
      for (std::size_t k = 0; k < n; ++k) vmax = xsimd::max(vmax, load(xo, k));
      if (!log) {
        Batch vsum(0.f);
        for (std::size_t k = 0; k < n; ++k) {
          const Batch e = xsimd::exp(load(xo, k) - vmax);
          store(e, k);
          vsum += e;
        }
        const Batch inv = Batch(1.f) / vsum;
        for (std::size_t k = 0; k < n; ++k) store(load(oo, k) * inv, k);
      } else {
        // As in the last-dim kernel: entries below the max summed apart from the max count.
        Batch vsum(0.f), vcount(0.f);
        for (std::size_t k = 0; k < n; ++k) {
          const Batch v = load(xo, k);
          const auto is_max = v == vmax;
          vsum += xsimd::select(is_max, Batch(0.f), xsimd::exp(v - vmax));
          vcount += xsimd::select(is_max, Batch(1.f), Batch(0.f));
        }
        const Batch lse = xsimd::select(vmax == Batch(kInf), Batch(kNan),
                                        xsimd::log1p(vsum + (vcount - Batch(1.f))));
        for (std::size_t k = 0; k < n; ++k) store((load(xo, k) - vmax) - lse, k);
      }
    }
  }
}

}  // namespace kiln::cpu::kernels

#define KILN_SOFTMAX_KERNELS(PREFIX, Arch)                                                  \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::SoftmaxLastDimF32, Arch, const float*, \
                       float*, std::size_t, std::size_t, bool)                              \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::SoftmaxStridedF32, Arch, const float*, \
                       float*, std::size_t, std::size_t, std::size_t, bool)

#if !defined(__EMSCRIPTEN__)
KILN_SOFTMAX_KERNELS(extern, ::kiln::cpu::Sse2)
KILN_SOFTMAX_KERNELS(extern, ::kiln::cpu::Avx2)
KILN_SOFTMAX_KERNELS(extern, ::kiln::cpu::Avx512)
#endif
