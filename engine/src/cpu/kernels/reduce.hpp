#pragma once
// Reduction kernels of the Cpu backend (sum, mean, prod, max, min, argmax, argmin,
// var_mean, any, all), written once over xsimd architectures (STYLE.md §5).
//
// Every kernel sees its input as [outer, n, inner] (row-major, contiguous) and reduces the
// middle axis, writing outer·inner results in row-major [outer, inner] order:
//   inner == 1  "rows":    each result reduces a contiguous run of n elements; vector
//                          accumulators run along the row, then a horizontal reduction.
//                          Rows shorter than a vector (n < W) are taken W at a time,
//                          transposed into an L1 buffer and reduced vertically, one lane per
//                          row (no per-row horizontal work, no data-dependent branches).
//   inner  > 1  "columns": the n rows of length inner are combined element-wise, vectorised
//                          across inner, chunk by chunk (kColumnChunk positions at a time):
//                          sums carry strips of vectors in registers down blocks of
//                          kLaneBlock rows; max/min/arg stream each row through the chunk's
//                          running state (whichever measured faster). There is never a
//                          strided gather per element.
//
// Float sums (sum, mean, var_mean) are blocked ("cascade") summations:
//   rows:    4 vector accumulators; every lane adds at most kLaneBlock terms in f32, then
//            the block's partial (lanes combined by a tree of at most 2 + (W - 1) f32
//            additions, W = lanes) is added to an f64 total; up to 3 leftover vectors go
//            through one more f32 accumulator, the last < W elements through f64;
//   short rows (n < W): at most W - 1 f32 additions per result;
//   columns: register accumulators run down blocks of kLaneBlock rows (each lane adds at
//            most kLaneBlock terms in f32), then the block is added to f64 totals.
// Each input element therefore passes through at most 31 + 2 + 15 = 48 f32 additions
// before it reaches f64 (rows with AVX-512, W = 16; fewer with narrower vectors; 31 in the
// columns case), and the f64 part adds at most n / 32 terms. Error bound (first order,
// u = 2^-24, u64 = 2^-53):
//   |sum_hat - sum| <= 48·u·Σ|x_i| + (n / 32)·u64·Σ|x_i| + u·|sum|
//                  ~= 2.9e-6·Σ|x_i| + u·|sum|   for any n < 2^31,
// independent of n, where a naive f32 loop has (n - 1)·u·Σ|x_i|. The last term is the final
// rounding to f32 (the mean divides in f64 first). Sums of integers up to 2^24 (e.g. 10^6
// ones) are exact. tests/native/tensor/reduction_test.cpp checks this bound.
// Float products use the same blocking; their relative error bound is the usual n·u (every
// rounding of a product scales the whole result).
// Int sums accumulate exactly in int64 (plain loops: xsimd 8.1 has no i32 -> i64 widening;
// these loops are compiled per arch and auto-vectorised); Int products are exact in int64
// with overflow detection (kIntOverflow).
//
// nan: xsimd 8.1's float `a != b` is an ordered compare on AVX/AVX-512 (false when either
// is nan) but unordered on SSE, so kernels test nan with xsimd::isnan and non-zero with
// ~(v == 0).
// Kernels never throw (dispatch is noexcept); callers validate shapes and dtypes and never
// call a kernel with outer·inner == 0. Max/min/arg kernels need n >= 1.
// Helpers are templates over Arch so that no ISA-specific copy of a shared inline function
// leaks out of the arch TUs (STYLE.md §5).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cpu/dispatch.hpp"

namespace kiln::cpu::kernels {

/// f32 terms each vector lane accumulates before its partial moves to f64.
inline constexpr std::size_t kLaneBlock = 32;
/// Positions of the inner axis processed together in the column case (stack buffers).
inline constexpr std::size_t kColumnChunk = 256;
/// Written by AccumulateI32<true> where the exact product overflows int64 (it then lies
/// outside i32 too; the caller reports the error).
inline constexpr std::int64_t kIntOverflow = std::numeric_limits<std::int64_t>::max();

/// out[o·inner + i] = (Σ or Π over k of x[(o·n + k)·inner + i]) / divisor, rounded to f32.
/// Sum: identity 0 (divisor 1 for sum, n for mean: 0 / 0 = nan for an empty mean).
/// Prod (IsProd): identity 1, divisor 1. nan propagates through the arithmetic.
template <bool IsProd>
struct AccumulateF32 {
  template <class Arch>
  void operator()(Arch, const float* x, std::size_t outer, std::size_t n, std::size_t inner,
                  double divisor, float* out) const;
};
using SumF32 = AccumulateF32<false>;
using ProdF32 = AccumulateF32<true>;

/// out[o·inner + i] = exact int64 Σ (or Π) over k; a product that overflows int64 (with no
/// zero factor) is written as kIntOverflow.
template <bool IsProd>
struct AccumulateI32 {
  template <class Arch>
  void operator()(Arch, const std::int32_t* x, std::size_t outer, std::size_t n,
                  std::size_t inner, std::int64_t* out) const;
};
using SumI32 = AccumulateI32<false>;
using ProdI32 = AccumulateI32<true>;

/// out = max (IsMax) or min over k; nan propagates (any nan gives nan, as torch.amax).
/// Needs n >= 1.
template <class T, bool IsMax>
struct Extremum {
  template <class Arch>
  void operator()(Arch, const T* x, std::size_t outer, std::size_t n, std::size_t inner,
                  T* out) const;
};
using MaxF32 = Extremum<float, true>;
using MinF32 = Extremum<float, false>;
using MaxI32 = Extremum<std::int32_t, true>;
using MinI32 = Extremum<std::int32_t, false>;

/// values = max (min) over k, indices = its k: the first on ties; nan counts as larger
/// (smaller) than everything and the first nan wins (torch.max(dim) / argmax). Needs n >= 1.
template <class T, bool IsMax>
struct ArgExtremum {
  template <class Arch>
  void operator()(Arch, const T* x, std::size_t outer, std::size_t n, std::size_t inner,
                  T* values, std::int32_t* indices) const;
};
using ArgMaxF32 = ArgExtremum<float, true>;
using ArgMinF32 = ArgExtremum<float, false>;
using ArgMaxI32 = ArgExtremum<std::int32_t, true>;
using ArgMinI32 = ArgExtremum<std::int32_t, false>;

/// mean = Σx / n and var = Σ(x - mean)² / var_divisor by the corrected two-pass algorithm
/// (Chan, Golub & LeVeque 1983): with d = x - fl32(mean), var = (Σd² - (Σd)² / n) / divisor,
/// both sums blocked as above. n = 0 gives nan for both.
struct VarMeanF32 {
  template <class Arch>
  void operator()(Arch, const float* x, std::size_t outer, std::size_t n, std::size_t inner,
                  double var_divisor, float* var, float* mean) const;
};

/// out (0/1) = any (all) over k of x != 0 (nan counts as non-zero). Empty: any 0, all 1.
template <class T, bool IsAll>
struct AnyAll {
  template <class Arch>
  void operator()(Arch, const T* x, std::size_t outer, std::size_t n, std::size_t inner,
                  std::uint8_t* out) const;
};
using AnyF32 = AnyAll<float, false>;
using AllF32 = AnyAll<float, true>;
using AnyI32 = AnyAll<std::int32_t, false>;
using AllI32 = AnyAll<std::int32_t, true>;
using AnyBool = AnyAll<std::uint8_t, false>;
using AllBool = AnyAll<std::uint8_t, true>;

// ------------------------------------------------------------------ implementation

namespace reduce_detail {

/// Arithmetic of a cascade over f32 lanes with f64 totals; one class per Arch (see above).
template <class Arch, bool IsProd>
struct Acc {
  using B = xsimd::batch<float, Arch>;
  static constexpr float identity = IsProd ? 1.0f : 0.0f;
  static B apply(const B& a, const B& b) noexcept {
    if constexpr (IsProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  static float apply(float a, float b) noexcept { return IsProd ? a * b : a + b; }
  static double apply(double a, double b) noexcept { return IsProd ? a * b : a + b; }
  static float horizontal(const B& v) noexcept {
    if constexpr (IsProd) {
      alignas(64) float lanes[B::size];
      v.store_aligned(lanes);
      float p = lanes[0];
      for (std::size_t j = 1; j < B::size; ++j) p *= lanes[j];
      return p;
    } else {
      return simd::reduce_add(v);
    }
  }
  static std::size_t min(std::size_t a, std::size_t b) noexcept { return a < b ? a : b; }
};

/// Σ (or Π) of the contiguous x[0, n) as f64 (rows case).
template <class Arch, bool IsProd>
double accumulate_row(const float* x, std::size_t n) noexcept {
  using A = Acc<Arch, IsProd>;
  using B = typename A::B;
  constexpr std::size_t W = B::size;
  const B id(A::identity);
  double total = A::identity;
  std::size_t k = 0;
  const std::size_t n4 = n - n % (4 * W);
  while (k < n4) {
    const std::size_t end = A::min(n4, k + kLaneBlock * 4 * W);
    B a0 = id, a1 = id, a2 = id, a3 = id;
    for (; k < end; k += 4 * W) {
      a0 = A::apply(a0, B::load_unaligned(x + k));
      a1 = A::apply(a1, B::load_unaligned(x + k + W));
      a2 = A::apply(a2, B::load_unaligned(x + k + 2 * W));
      a3 = A::apply(a3, B::load_unaligned(x + k + 3 * W));
    }
    total = A::apply(total, static_cast<double>(A::horizontal(
                                A::apply(A::apply(a0, a1), A::apply(a2, a3)))));
  }
  if (n - k >= W) {
    B a = id;
    for (; k + W <= n; k += W) a = A::apply(a, B::load_unaligned(x + k));
    total = A::apply(total, static_cast<double>(A::horizontal(a)));
  }
  // Scalar tail (< W elements; the whole row when n < W) in f64, 4 independent chains.
  double t0 = A::identity, t1 = A::identity, t2 = A::identity, t3 = A::identity;
  for (; k + 4 <= n; k += 4) {
    t0 = A::apply(t0, static_cast<double>(x[k]));
    t1 = A::apply(t1, static_cast<double>(x[k + 1]));
    t2 = A::apply(t2, static_cast<double>(x[k + 2]));
    t3 = A::apply(t3, static_cast<double>(x[k + 3]));
  }
  KILN_TAIL_LOOP
  for (; k < n; ++k) t0 = A::apply(t0, static_cast<double>(x[k]));
  return A::apply(total, A::apply(A::apply(t0, t1), A::apply(t2, t3)));
}

/// acc[i] = Σ (or Π) over k < n of x[k·inner + i] for i < len <= kColumnChunk, in f64
/// (columns case; x points at the chunk's first position in row 0). For each block of
/// kLaneBlock rows, strips of 4 vectors across the chunk are accumulated in registers down
/// the block's rows (each lane adds <= kLaneBlock terms in f32), then added to the f64
/// totals. Positions past the last full vector use scalar f32 partials, one per position,
/// so that the chains stay independent even for a narrow inner (inner < W).
/// (A blocked version that added rows into an f32 row buffer ran at half the speed when the
/// row stride was 1 KB: loads aliasing the buffer's stores.)
template <class Arch, bool IsProd>
void accumulate_columns(const float* x, std::size_t n, std::size_t inner, std::size_t len,
                        double* acc) noexcept {
  using A = Acc<Arch, IsProd>;
  using B = typename A::B;
  constexpr std::size_t W = B::size;
  const B id(A::identity);
  alignas(64) float part[4 * W];
  for (std::size_t i = 0; i < len; ++i) acc[i] = A::identity;
  const std::size_t len4 = len - len % (4 * W);
  const std::size_t len1 = len - len % W;
  for (std::size_t k0 = 0; k0 < n; k0 += kLaneBlock) {
    const std::size_t k1 = A::min(n, k0 + kLaneBlock);
    const float* block = x + k0 * inner;
    std::size_t i = 0;
    for (; i < len4; i += 4 * W) {
      B a0 = id, a1 = id, a2 = id, a3 = id;
      const float* p = block + i;
      for (std::size_t k = k0; k < k1; ++k, p += inner) {
        a0 = A::apply(a0, B::load_unaligned(p));
        a1 = A::apply(a1, B::load_unaligned(p + W));
        a2 = A::apply(a2, B::load_unaligned(p + 2 * W));
        a3 = A::apply(a3, B::load_unaligned(p + 3 * W));
      }
      a0.store_aligned(part);
      a1.store_aligned(part + W);
      a2.store_aligned(part + 2 * W);
      a3.store_aligned(part + 3 * W);
      for (std::size_t j = 0; j < 4 * W; ++j) {
        acc[i + j] = A::apply(acc[i + j], static_cast<double>(part[j]));
      }
    }
    for (; i < len1; i += W) {
      B a = id;
      const float* p = block + i;
      for (std::size_t k = k0; k < k1; ++k, p += inner) a = A::apply(a, B::load_unaligned(p));
      a.store_aligned(part);
      for (std::size_t j = 0; j < W; ++j) acc[i + j] = A::apply(acc[i + j], static_cast<double>(part[j]));
    }
    if (i < len) {
      const std::size_t rest = len - i;  // < W
      for (std::size_t j = 0; j < rest; ++j) part[j] = A::identity;
      const float* p = block + i;
      for (std::size_t k = k0; k < k1; ++k, p += inner) {
        for (std::size_t j = 0; j < rest; ++j) part[j] = A::apply(part[j], p[j]);
      }
      for (std::size_t j = 0; j < rest; ++j) acc[i + j] = A::apply(acc[i + j], static_cast<double>(part[j]));
    }
  }
}

/// Copies W short rows (n < W elements each, contiguous from r) into tb as n rows of W:
/// tb[k·W + j] = r[j·n + k], so that they can be reduced vertically, one lane per row.
template <class Arch, class T, std::size_t W>
void transpose_short_rows(const T* r, std::size_t n, T* tb) noexcept {
  for (std::size_t j = 0; j < W; ++j) {
    for (std::size_t k = 0; k < n; ++k) tb[k * W + j] = r[j * n + k];
  }
}

/// Scalar and vector comparison rules of max / min / argmax / argmin for one Arch.
template <class Arch, class T, bool IsMax>
struct Cmp {
  using B = xsimd::batch<T, Arch>;
  using M = typename B::batch_bool_type;
  static constexpr bool is_float = std::is_floating_point_v<T>;
  /// v replaces best: strictly better, or nan over a non-nan (the first nan wins).
  static bool better(T v, T best) noexcept {
    const bool cmp = IsMax ? v > best : v < best;
    if constexpr (is_float) {
      return cmp | ((v != v) & (best == best));  // bitwise: no branches on data
    } else {
      return cmp;
    }
  }
  /// Vector form. Note: xsimd 8.1's float `v != v` is an ordered compare on AVX/AVX-512
  /// (false for nan, unlike SSE and IEEE), so nan is detected with xsimd::isnan.
  static M better(const B& v, const B& best) noexcept {
    const M cmp = IsMax ? (v > best) : (v < best);
    if constexpr (is_float) {
      return cmp | (xsimd::isnan(v) & (best == best));
    } else {
      return cmp;
    }
  }
  /// Equal, or both nan.
  static bool same(T a, T b) noexcept {
    if constexpr (is_float) {
      return a == b || (a != a && b != b);
    } else {
      return a == b;
    }
  }
  /// Max / min with nan propagation (v replaces best when better or nan). Ints use the same
  /// compare + blend: GCC 12 warns (PR 105593) inside _mm512_max_epi32 otherwise.
  static B extremum(const B& best, const B& v) noexcept {
    return xsimd::select(better(v, best), v, best);
  }
  static xsimd::batch_bool<std::int32_t, Arch> index_mask(const M& m) noexcept {
    if constexpr (is_float) {
      return xsimd::bool_cast(m);
    } else {
      return m;
    }
  }
  static std::size_t min(std::size_t a, std::size_t b) noexcept { return a < b ? a : b; }
};

}  // namespace reduce_detail

template <bool IsProd>
template <class Arch>
void AccumulateF32<IsProd>::operator()(Arch, const float* x, std::size_t outer, std::size_t n,
                                       std::size_t inner, double divisor, float* out) const {
  using namespace reduce_detail;
  if (inner == 1) {
    std::size_t o = 0;
    if (n < xsimd::batch<float, Arch>::size) {
      // Short rows, W at a time, reduced vertically after a transpose (< W f32 terms each).
      using A = Acc<Arch, IsProd>;
      using B = typename A::B;
      constexpr std::size_t W = B::size;
      alignas(64) float tb[W * W];
      alignas(64) float lanes[W];
      for (; o + W <= outer; o += W) {
        transpose_short_rows<Arch, float, W>(x + o * n, n, tb);
        B a(A::identity);
        for (std::size_t k = 0; k < n; ++k) a = A::apply(a, B::load_aligned(tb + k * W));
        a.store_aligned(lanes);
        for (std::size_t j = 0; j < W; ++j) {
          out[o + j] = static_cast<float>(static_cast<double>(lanes[j]) / divisor);
        }
      }
    }
    for (; o < outer; ++o) {
      out[o] = static_cast<float>(accumulate_row<Arch, IsProd>(x + o * n, n) / divisor);
    }
    return;
  }
  alignas(64) double acc[kColumnChunk];
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i0 = 0; i0 < inner; i0 += kColumnChunk) {
      const std::size_t len = Acc<Arch, IsProd>::min(kColumnChunk, inner - i0);
      accumulate_columns<Arch, IsProd>(x + o * n * inner + i0, n, inner, len, acc);
      float* dst = out + o * inner + i0;
      for (std::size_t i = 0; i < len; ++i) dst[i] = static_cast<float>(acc[i] / divisor);
    }
  }
}

template <bool IsProd>
template <class Arch>
void AccumulateI32<IsProd>::operator()(Arch, const std::int32_t* x, std::size_t outer,
                                       std::size_t n, std::size_t inner,
                                       std::int64_t* out) const {
  if constexpr (!IsProd) {
    // Exact: |Σ| <= n·2^31 < 2^62 for n < 2^31.
    for (std::size_t o = 0; o < outer; ++o) {
      const std::int32_t* xo = x + o * n * inner;
      std::int64_t* dst = out + o * inner;
      if (inner == 1) {
        std::int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        std::size_t k = 0;
        for (; k + 4 <= n; k += 4) {
          s0 += xo[k];
          s1 += xo[k + 1];
          s2 += xo[k + 2];
          s3 += xo[k + 3];
        }
        KILN_TAIL_LOOP
        for (; k < n; ++k) s0 += xo[k];
        dst[0] = (s0 + s1) + (s2 + s3);
      } else {
        for (std::size_t i = 0; i < inner; ++i) dst[i] = 0;
        for (std::size_t k = 0; k < n; ++k) {
          const std::int32_t* row = xo + k * inner;
          for (std::size_t i = 0; i < inner; ++i) dst[i] += row[i];
        }
      }
    }
  } else {
    // Exact with overflow detection; a zero factor makes the product 0 whatever came before.
    alignas(64) std::uint8_t state[kColumnChunk];  // bit 0: zero seen, bit 1: overflowed
    for (std::size_t o = 0; o < outer; ++o) {
      const std::int32_t* xo = x + o * n * inner;
      std::int64_t* dst = out + o * inner;
      for (std::size_t i0 = 0; i0 < inner; i0 += kColumnChunk) {
        const std::size_t len = inner - i0 < kColumnChunk ? inner - i0 : kColumnChunk;
        for (std::size_t i = 0; i < len; ++i) {
          dst[i0 + i] = 1;
          state[i] = 0;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const std::int32_t* row = xo + k * inner + i0;
          for (std::size_t i = 0; i < len; ++i) {
            std::int64_t p;
            if (row[i] == 0) {
              state[i] |= 1;
            } else if (__builtin_mul_overflow(dst[i0 + i], static_cast<std::int64_t>(row[i]), &p)) {
              state[i] |= 2;
            } else {
              dst[i0 + i] = p;
            }
          }
        }
        for (std::size_t i = 0; i < len; ++i) {
          if (state[i] & 1) {
            dst[i0 + i] = 0;
          } else if (state[i] & 2) {
            dst[i0 + i] = kIntOverflow;
          }
        }
      }
    }
  }
}

template <class T, bool IsMax>
template <class Arch>
void Extremum<T, IsMax>::operator()(Arch, const T* x, std::size_t outer, std::size_t n,
                                    std::size_t inner, T* out) const {
  using C = reduce_detail::Cmp<Arch, T, IsMax>;
  using B = typename C::B;
  constexpr std::size_t W = B::size;
  if (inner == 1) {
    std::size_t o = 0;
    if (n < W) {
      // Short rows, W at a time: transpose the [W, n] block into L1 (contiguous reads), then
      // reduce its n rows vertically, one lane per input row (no data-dependent branches).
      alignas(64) T tb[W * W];
      for (; o + W <= outer; o += W) {
        reduce_detail::transpose_short_rows<Arch, T, W>(x + o * n, n, tb);
        B best = B::load_aligned(tb);
        for (std::size_t k = 1; k < n; ++k) best = C::extremum(best, B::load_aligned(tb + k * W));
        best.store_unaligned(out + o);
      }
    }
    for (; o < outer; ++o) {
      const T* row = x + o * n;
      T best = row[0];
      std::size_t k = 0;
      if (n >= W) {
        const B first = B::load_unaligned(row);
        B a0 = first, a1 = first, a2 = first, a3 = first;
        const std::size_t n4 = n - n % (4 * W);
        for (; k < n4; k += 4 * W) {
          a0 = C::extremum(a0, B::load_unaligned(row + k));
          a1 = C::extremum(a1, B::load_unaligned(row + k + W));
          a2 = C::extremum(a2, B::load_unaligned(row + k + 2 * W));
          a3 = C::extremum(a3, B::load_unaligned(row + k + 3 * W));
        }
        for (; k + W <= n; k += W) a0 = C::extremum(a0, B::load_unaligned(row + k));
        alignas(64) T lanes[W];
        C::extremum(C::extremum(a0, a1), C::extremum(a2, a3)).store_aligned(lanes);
        for (std::size_t j = 0; j < W; ++j) best = C::better(lanes[j], best) ? lanes[j] : best;
      }
      KILN_TAIL_LOOP
      for (; k < n; ++k) best = C::better(row[k], best) ? row[k] : best;
      out[o] = best;
    }
    return;
  }
  // Columns: the running extremum of a chunk (kColumnChunk positions, in L1) lives in the
  // output; each row of the chunk is streamed through it, vectorised across positions.
  // (Carrying strips in registers down blocks of rows measured 2x slower here.)
  for (std::size_t o = 0; o < outer; ++o) {
    const T* xo = x + o * n * inner;
    for (std::size_t i0 = 0; i0 < inner; i0 += kColumnChunk) {
      const std::size_t len = C::min(kColumnChunk, inner - i0);
      T* d = out + o * inner + i0;
      for (std::size_t i = 0; i < len; ++i) d[i] = xo[i0 + i];
      for (std::size_t k = 1; k < n; ++k) {
        const T* row = xo + k * inner + i0;
        std::size_t i = 0;
        for (; i + W <= len; i += W) {
          C::extremum(B::load_unaligned(d + i), B::load_unaligned(row + i)).store_unaligned(d + i);
        }
        KILN_TAIL_LOOP
        for (; i < len; ++i) d[i] = C::better(row[i], d[i]) ? row[i] : d[i];
      }
    }
  }
}

template <class T, bool IsMax>
template <class Arch>
void ArgExtremum<T, IsMax>::operator()(Arch, const T* x, std::size_t outer, std::size_t n,
                                       std::size_t inner, T* values,
                                       std::int32_t* indices) const {
  using C = reduce_detail::Cmp<Arch, T, IsMax>;
  using B = typename C::B;
  using I = xsimd::batch<std::int32_t, Arch>;
  constexpr std::size_t W = B::size;
  static_assert(I::size == W, "ArgExtremum: index and value lanes must match");
  if (inner == 1) {
    std::size_t o = 0;
    if (n < W) {
      // Short rows, W at a time: transpose the [W, n] block into L1, then reduce vertically
      // (strict comparison keeps the first index; no data-dependent branches).
      alignas(64) T tb[W * W];
      for (; o + W <= outer; o += W) {
        reduce_detail::transpose_short_rows<Arch, T, W>(x + o * n, n, tb);
        B best = B::load_aligned(tb);
        I best_index(0);
        I kk(0);
        const I one(1);
        for (std::size_t k = 1; k < n; ++k) {
          kk = kk + one;
          const B c = B::load_aligned(tb + k * W);
          const auto m = C::better(c, best);
          best = xsimd::select(m, c, best);
          best_index = xsimd::select(C::index_mask(m), kk, best_index);
        }
        best.store_unaligned(values + o);
        best_index.store_unaligned(indices + o);
      }
    }
    alignas(64) std::int32_t iota[W];
    for (std::size_t j = 0; j < W; ++j) iota[j] = static_cast<std::int32_t>(j);
    for (; o < outer; ++o) {
      const T* row = x + o * n;
      T best = row[0];
      std::int32_t best_index = 0;
      std::size_t k = 1;
      if (n >= W) {
        // Per lane of two interleaved chains (even and odd vectors, so that two
        // compare/select dependency chains overlap): the best value seen and its first
        // index (strict comparison keeps the earliest). The 2·W lanes are then merged by
        // value, ties going to the lowest index.
        B v0 = B::load_unaligned(row);
        I i0 = I::load_aligned(iota);
        B v1 = v0;  // a copy of chain 0 until the loop below starts chain 1
        I i1 = i0;
        k = W;
        if (n >= 2 * W) {
          v1 = B::load_unaligned(row + W);
          i1 = i0 + I(static_cast<std::int32_t>(W));
          I c0 = i0, c1 = i1;
          const I step(static_cast<std::int32_t>(2 * W));
          for (k = 2 * W; k + 2 * W <= n; k += 2 * W) {
            const B a = B::load_unaligned(row + k);
            const B b = B::load_unaligned(row + k + W);
            c0 = c0 + step;
            c1 = c1 + step;
            const auto ma = C::better(a, v0);
            const auto mb = C::better(b, v1);
            v0 = xsimd::select(ma, a, v0);
            v1 = xsimd::select(mb, b, v1);
            i0 = xsimd::select(C::index_mask(ma), c0, i0);
            i1 = xsimd::select(C::index_mask(mb), c1, i1);
          }
        }
        for (; k + W <= n; k += W) {  // at most one more vector, into chain 0
          const B a = B::load_unaligned(row + k);
          const auto ma = C::better(a, v0);
          v0 = xsimd::select(ma, a, v0);
          i0 = xsimd::select(C::index_mask(ma), I(static_cast<std::int32_t>(k)) + I::load_aligned(iota), i0);
        }
        alignas(64) T lanes[2 * W];
        alignas(64) std::int32_t lane_index[2 * W];
        v0.store_aligned(lanes);
        v1.store_aligned(lanes + W);
        i0.store_aligned(lane_index);
        i1.store_aligned(lane_index + W);
        best = lanes[0];
        best_index = lane_index[0];
        for (std::size_t j = 1; j < 2 * W; ++j) {
          if (C::better(lanes[j], best) ||
              (C::same(lanes[j], best) && lane_index[j] < best_index)) {
            best = lanes[j];
            best_index = lane_index[j];
          }
        }
      }
      KILN_TAIL_LOOP
      for (; k < n; ++k) {
        const bool b = C::better(row[k], best);
        best = b ? row[k] : best;
        best_index = b ? static_cast<std::int32_t>(k) : best_index;
      }
      values[o] = best;
      indices[o] = best_index;
    }
    return;
  }
  // Columns: running values and indices of a chunk (kColumnChunk positions, in L1) live in
  // the outputs; each row of the chunk is streamed through them, vectorised across
  // positions. (Carrying strips in registers down blocks of rows measured slower, and so
  // did moving the state to buffers placed away from the rows' low address bits.)
  for (std::size_t o = 0; o < outer; ++o) {
    const T* xo = x + o * n * inner;
    for (std::size_t i0 = 0; i0 < inner; i0 += kColumnChunk) {
      const std::size_t len = C::min(kColumnChunk, inner - i0);
      T* v = values + o * inner + i0;
      std::int32_t* idx = indices + o * inner + i0;
      for (std::size_t i = 0; i < len; ++i) {
        v[i] = xo[i0 + i];
        idx[i] = 0;
      }
      for (std::size_t k = 1; k < n; ++k) {
        const T* row = xo + k * inner + i0;
        const I kk(static_cast<std::int32_t>(k));
        std::size_t i = 0;
        for (; i + W <= len; i += W) {
          const B cur = B::load_unaligned(row + i);
          const B best = B::load_unaligned(v + i);
          const auto m = C::better(cur, best);
          xsimd::select(m, cur, best).store_unaligned(v + i);
          xsimd::select(C::index_mask(m), kk, I::load_unaligned(idx + i)).store_unaligned(idx + i);
        }
        KILN_TAIL_LOOP
        for (; i < len; ++i) {
          const bool b = C::better(row[i], v[i]);
          v[i] = b ? row[i] : v[i];
          idx[i] = b ? static_cast<std::int32_t>(k) : idx[i];
        }
      }
    }
  }
}

namespace reduce_detail {

/// Σd and Σd² with d = x - m over the contiguous x[0, n), blocked as accumulate_row.
template <class Arch>
void centered_sums_row(const float* x, std::size_t n, float m, double& s1,
                       double& s2) noexcept {
  using B = xsimd::batch<float, Arch>;
  constexpr std::size_t W = B::size;
  const B mv(m);
  const B zero(0.0f);
  s1 = 0.0;
  s2 = 0.0;
  std::size_t k = 0;
  const std::size_t n2 = n - n % (2 * W);
  while (k < n2) {
    const std::size_t end = Acc<Arch, false>::min(n2, k + kLaneBlock * 2 * W);
    B d0 = zero, d1 = zero, q0 = zero, q1 = zero;
    for (; k < end; k += 2 * W) {
      const B a = B::load_unaligned(x + k) - mv;
      const B b = B::load_unaligned(x + k + W) - mv;
      d0 += a;
      d1 += b;
      q0 = xsimd::fma(a, a, q0);
      q1 = xsimd::fma(b, b, q1);
    }
    s1 += static_cast<double>(simd::reduce_add(d0 + d1));
    s2 += static_cast<double>(simd::reduce_add(q0 + q1));
  }
  KILN_TAIL_LOOP
  for (; k < n; ++k) {
    const double d = static_cast<double>(x[k] - m);
    s1 += d;
    s2 += d * d;
  }
}

/// Σd and Σd² per position of a column chunk (d = x - m[i]), blocked as accumulate_columns
/// (strips of 2 vectors, each with a Σd and a Σd² accumulator, down blocks of kLaneBlock rows).
template <class Arch>
void centered_sums_columns(const float* x, std::size_t n, std::size_t inner, std::size_t len,
                           const float* m, double* s1, double* s2) noexcept {
  using B = xsimd::batch<float, Arch>;
  constexpr std::size_t W = B::size;
  const B zero(0.0f);
  alignas(64) float p1[2 * W];
  alignas(64) float p2[2 * W];
  for (std::size_t i = 0; i < len; ++i) s1[i] = s2[i] = 0.0;
  const std::size_t len2 = len - len % (2 * W);
  for (std::size_t k0 = 0; k0 < n; k0 += kLaneBlock) {
    const std::size_t k1 = Acc<Arch, false>::min(n, k0 + kLaneBlock);
    const float* block = x + k0 * inner;
    std::size_t i = 0;
    for (; i < len2; i += 2 * W) {
      const B m0 = B::load_aligned(m + i);
      const B m1 = B::load_aligned(m + i + W);
      B d0 = zero, d1 = zero, q0 = zero, q1 = zero;
      const float* p = block + i;
      for (std::size_t k = k0; k < k1; ++k, p += inner) {
        const B a = B::load_unaligned(p) - m0;
        const B b = B::load_unaligned(p + W) - m1;
        d0 += a;
        d1 += b;
        q0 = xsimd::fma(a, a, q0);
        q1 = xsimd::fma(b, b, q1);
      }
      d0.store_aligned(p1);
      d1.store_aligned(p1 + W);
      q0.store_aligned(p2);
      q1.store_aligned(p2 + W);
      for (std::size_t j = 0; j < 2 * W; ++j) {
        s1[i + j] += static_cast<double>(p1[j]);
        s2[i + j] += static_cast<double>(p2[j]);
      }
    }
    if (i < len) {
      const std::size_t rest = len - i;  // < 2W
      for (std::size_t j = 0; j < rest; ++j) p1[j] = p2[j] = 0.0f;
      const float* p = block + i;
      for (std::size_t k = k0; k < k1; ++k, p += inner) {
        for (std::size_t j = 0; j < rest; ++j) {
          const float d = p[j] - m[i + j];
          p1[j] += d;
          p2[j] += d * d;
        }
      }
      for (std::size_t j = 0; j < rest; ++j) {
        s1[i + j] += static_cast<double>(p1[j]);
        s2[i + j] += static_cast<double>(p2[j]);
      }
    }
  }
}

/// var from the centered sums; rounding can make Σd² - (Σd)²/n slightly negative: clamp.
template <class Arch>
float finish_var(double s1, double s2, double n, double divisor) noexcept {
  double v = (s2 - s1 * s1 / n) / divisor;
  if (v < 0.0) v = 0.0;
  return static_cast<float>(v);
}

}  // namespace reduce_detail

template <class Arch>
void VarMeanF32::operator()(Arch, const float* x, std::size_t outer, std::size_t n,
                            std::size_t inner, double var_divisor, float* var,
                            float* mean) const {
  using namespace reduce_detail;
  const double nd = static_cast<double>(n);
  if (inner == 1) {
    std::size_t o = 0;
    using B = xsimd::batch<float, Arch>;
    constexpr std::size_t W = B::size;
    if (n >= 1 && n < W) {
      // Short rows, W at a time, vertically after a transpose: the same two passes per lane.
      alignas(64) float tb[W * W];
      alignas(64) float lanes[W];
      alignas(64) float l1[W];
      alignas(64) float l2[W];
      for (; o + W <= outer; o += W) {
        transpose_short_rows<Arch, float, W>(x + o * n, n, tb);
        B s(0.0f);
        for (std::size_t k = 0; k < n; ++k) s += B::load_aligned(tb + k * W);
        s.store_aligned(lanes);
        for (std::size_t j = 0; j < W; ++j) {
          const double mu = static_cast<double>(lanes[j]) / nd;
          mean[o + j] = static_cast<float>(mu);
          lanes[j] = static_cast<float>(mu);
        }
        const B m = B::load_aligned(lanes);
        B d1(0.0f), d2(0.0f);
        for (std::size_t k = 0; k < n; ++k) {
          const B d = B::load_aligned(tb + k * W) - m;
          d1 += d;
          d2 = xsimd::fma(d, d, d2);
        }
        d1.store_aligned(l1);
        d2.store_aligned(l2);
        for (std::size_t j = 0; j < W; ++j) {
          var[o + j] = finish_var<Arch>(l1[j], l2[j], nd, var_divisor);
        }
      }
    }
    for (; o < outer; ++o) {
      const float* row = x + o * n;
      const double mu = accumulate_row<Arch, false>(row, n) / nd;
      double s1 = 0.0, s2 = 0.0;
      centered_sums_row<Arch>(row, n, static_cast<float>(mu), s1, s2);
      mean[o] = static_cast<float>(mu);
      var[o] = n == 0 ? std::numeric_limits<float>::quiet_NaN()
                      : finish_var<Arch>(s1, s2, nd, var_divisor);
    }
    return;
  }
  alignas(64) double acc[kColumnChunk];
  alignas(64) double s2[kColumnChunk];
  alignas(64) float m[kColumnChunk];
  // (Narrowing the chunk so that the second pass finds its rows in L2 measured slower: the
  // rows are then read in pieces of one or two cache lines.)
  constexpr std::size_t chunk = kColumnChunk;
  for (std::size_t o = 0; o < outer; ++o) {
    const float* xo = x + o * n * inner;
    for (std::size_t i0 = 0; i0 < inner; i0 += chunk) {
      const std::size_t len = Acc<Arch, false>::min(chunk, inner - i0);
      accumulate_columns<Arch, false>(xo + i0, n, inner, len, acc);
      for (std::size_t i = 0; i < len; ++i) {
        const double mu = acc[i] / nd;
        mean[o * inner + i0 + i] = static_cast<float>(mu);
        m[i] = static_cast<float>(mu);
      }
      centered_sums_columns<Arch>(xo + i0, n, inner, len, m, acc, s2);
      for (std::size_t i = 0; i < len; ++i) {
        var[o * inner + i0 + i] = n == 0 ? std::numeric_limits<float>::quiet_NaN()
                                         : finish_var<Arch>(acc[i], s2[i], nd, var_divisor);
      }
    }
  }
}

template <class T, bool IsAll>
template <class Arch>
void AnyAll<T, IsAll>::operator()(Arch, const T* x, std::size_t outer, std::size_t n,
                                  std::size_t inner, std::uint8_t* out) const {
  const std::uint8_t empty = IsAll ? 1 : 0;
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    // Bool input: plain loops (one byte per element; compiled per arch, auto-vectorised).
    for (std::size_t o = 0; o < outer; ++o) {
      const T* xo = x + o * n * inner;
      std::uint8_t* dst = out + o * inner;
      for (std::size_t i = 0; i < inner; ++i) dst[i] = empty;
      for (std::size_t k = 0; k < n; ++k) {
        const T* row = xo + k * inner;
        for (std::size_t i = 0; i < inner; ++i) {
          if constexpr (IsAll) {
            dst[i] &= static_cast<std::uint8_t>(row[i] != 0);
          } else {
            dst[i] |= static_cast<std::uint8_t>(row[i] != 0);
          }
        }
      }
    }
  } else {
    using B = xsimd::batch<T, Arch>;
    using M = typename B::batch_bool_type;
    constexpr std::size_t W = B::size;
    const B zero(T(0));
    // Not `v != zero`: xsimd 8.1's float != is ordered on AVX/AVX-512 (false for nan) but
    // unordered on SSE; == is ordered everywhere, so its negation counts nan as non-zero.
    const auto nonzero = [&zero](const B& v) { return ~(v == zero); };
    if (inner == 1) {
      for (std::size_t o = 0; o < outer; ++o) {
        const T* row = x + o * n;
        // Stops at the first block holding an element that decides the result (a non-zero
        // for any, a zero for all).
        bool decided = false;
        std::size_t k = 0;
        while (!decided && k + W <= n) {
          M acc = nonzero(B::load_unaligned(row + k));
          k += W;
          for (std::size_t j = 1; j < 16 && k + W <= n; ++j, k += W) {
            const M nz = nonzero(B::load_unaligned(row + k));
            acc = IsAll ? (acc & nz) : (acc | nz);
          }
          decided = IsAll ? !xsimd::all(acc) : xsimd::any(acc);
        }
        for (; !decided && k < n; ++k) decided = (row[k] != T(0)) != IsAll;
        const bool result = decided ? !IsAll : IsAll;
        out[o] = static_cast<std::uint8_t>(result);
      }
      return;
    }
    // Columns: T-typed flags (0 or 1) per position, vectorised across inner.
    alignas(64) T flag[kColumnChunk];
    const B one(T(1));
    for (std::size_t o = 0; o < outer; ++o) {
      const T* xo = x + o * n * inner;
      for (std::size_t i0 = 0; i0 < inner; i0 += kColumnChunk) {
        const std::size_t len = inner - i0 < kColumnChunk ? inner - i0 : kColumnChunk;
        for (std::size_t i = 0; i < len; ++i) flag[i] = T(empty);
        for (std::size_t k = 0; k < n; ++k) {
          const T* row = xo + k * inner + i0;
          std::size_t i = 0;
          for (; i + W <= len; i += W) {
            const M nz = nonzero(B::load_unaligned(row + i));
            const B f = B::load_aligned(flag + i);
            (IsAll ? xsimd::select(nz, f, zero) : xsimd::select(nz, one, f)).store_aligned(flag + i);
          }
          KILN_TAIL_LOOP
          for (; i < len; ++i) {
            if (IsAll ? row[i] == T(0) : row[i] != T(0)) flag[i] = T(IsAll ? 0 : 1);
          }
        }
        std::uint8_t* dst = out + o * inner + i0;
        for (std::size_t i = 0; i < len; ++i) dst[i] = static_cast<std::uint8_t>(flag[i] != T(0));
      }
    }
  }
}

}  // namespace kiln::cpu::kernels

// Explicit instantiations: declared extern here (native), defined in cpu/arch/reduce_*.cpp.
#define KILN_REDUCE_KERNEL_INSTANCES(PREFIX, Arch)                                            \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::SumF32, Arch, const float*, std::size_t,     \
                       std::size_t, std::size_t, double, float*)                               \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::ProdF32, Arch, const float*, std::size_t,    \
                       std::size_t, std::size_t, double, float*)                               \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::SumI32, Arch, const std::int32_t*,           \
                       std::size_t, std::size_t, std::size_t, std::int64_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::ProdI32, Arch, const std::int32_t*,          \
                       std::size_t, std::size_t, std::size_t, std::int64_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::MaxF32, Arch, const float*, std::size_t,     \
                       std::size_t, std::size_t, float*)                                       \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::MinF32, Arch, const float*, std::size_t,     \
                       std::size_t, std::size_t, float*)                                       \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::MaxI32, Arch, const std::int32_t*,           \
                       std::size_t, std::size_t, std::size_t, std::int32_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::MinI32, Arch, const std::int32_t*,           \
                       std::size_t, std::size_t, std::size_t, std::int32_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::ArgMaxF32, Arch, const float*, std::size_t,  \
                       std::size_t, std::size_t, float*, std::int32_t*)                        \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::ArgMinF32, Arch, const float*, std::size_t,  \
                       std::size_t, std::size_t, float*, std::int32_t*)                        \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::ArgMaxI32, Arch, const std::int32_t*,        \
                       std::size_t, std::size_t, std::size_t, std::int32_t*, std::int32_t*)    \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::ArgMinI32, Arch, const std::int32_t*,        \
                       std::size_t, std::size_t, std::size_t, std::int32_t*, std::int32_t*)    \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::VarMeanF32, Arch, const float*, std::size_t, \
                       std::size_t, std::size_t, double, float*, float*)                       \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::AnyF32, Arch, const float*, std::size_t,     \
                       std::size_t, std::size_t, std::uint8_t*)                                \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::AllF32, Arch, const float*, std::size_t,     \
                       std::size_t, std::size_t, std::uint8_t*)                                \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::AnyI32, Arch, const std::int32_t*,           \
                       std::size_t, std::size_t, std::size_t, std::uint8_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::AllI32, Arch, const std::int32_t*,           \
                       std::size_t, std::size_t, std::size_t, std::uint8_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::AnyBool, Arch, const std::uint8_t*,          \
                       std::size_t, std::size_t, std::size_t, std::uint8_t*)                   \
  KILN_KERNEL_INSTANCE(PREFIX, kiln::cpu::kernels::AllBool, Arch, const std::uint8_t*,          \
                       std::size_t, std::size_t, std::size_t, std::uint8_t*)

#if !defined(__EMSCRIPTEN__)
KILN_REDUCE_KERNEL_INSTANCES(extern, kiln::cpu::Sse2)
KILN_REDUCE_KERNEL_INSTANCES(extern, kiln::cpu::Avx2)
KILN_REDUCE_KERNEL_INSTANCES(extern, kiln::cpu::Avx512)
#endif
