#pragma once
// Packing of GEMM operands into the micro-kernel's layout (micro_kernel.hpp):
//   A block [mc x kc] -> ceil(mc / MR) micro-panels, each kc x MR: out[p·MR + i]
//   B block [kc x nc] -> ceil(nc / NR) micro-panels, each kc x NR: out[p·NR + j]
// Rows (columns) past the edge of the matrix are zero, so the micro-kernel always runs on
// full tiles and only the store of an edge tile is partial. The source may have any
// strides; the common layouts (unit column stride: row-major; unit row stride: a
// transposed row-major matrix) get loops that read memory in order.
#include <cstddef>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "cpu/gemm/micro_kernel.hpp"

// Loops that run at a matrix's edges only (odd rows, zero padding, the kc tail, arbitrary
// strides): kept as plain loops (no vectorized copy with its run-time checks, no unrolling),
// which makes each Pack instantiation several KB smaller in the WebAssembly a page loads
// (issue 17); the loops every full panel runs (rows_to_columns' vector body, the row-major B
// panel copy) are untouched.
#if defined(__clang__)
#define KILN_EDGE_LOOP _Pragma("clang loop vectorize(disable) interleave(disable) unroll(disable)")
#else
#define KILN_EDGE_LOOP
#endif

namespace kiln::cpu::gemm {

template <class Arch>
struct Pack {
  using Batch = xsimd::batch<float, Arch>;
  static constexpr std::size_t MR = MicroKernel<Arch>::MR;
  static constexpr std::size_t NR = MicroKernel<Arch>::NR;
  static constexpr std::size_t L = Batch::size;

  /// Packs A[0:mc, 0:kc] (element (i, p) at a[i·rs + p·cs]) into ceil(mc / MR) panels.
  static void a_block(std::size_t mc, std::size_t kc, const float* a, std::ptrdiff_t rs,
                      std::ptrdiff_t cs, float* out) noexcept;

  /// Writes R consecutive rows (row r at src + r·rs, kc floats each) as R-float groups
  /// S floats apart: dst[p·S + r] = src[r·rs + p]. R is 2 or 4; S is MR (packing a
  /// row-major A) or NR (packing a column-major, i.e. transposed, B). Uses the per-128-bit-lane interleaves
  /// (zip_lo / zip_hi are unpcklps / unpckhps on SSE, AVX and AVX-512 alike): within each
  /// 4-float lane q they turn R row vectors into the R-float columns 4q .. 4q + 3.
  template <std::size_t R, std::size_t S>
  static void rows_to_columns(const float* src, std::ptrdiff_t rs, std::size_t kc,
                              float* dst) noexcept;

  /// Packs B[0:kc, 0:nc] (element (p, j) at b[p·rs + j·cs]) into ceil(nc / NR) panels.
  static void b_block(std::size_t kc, std::size_t nc, const float* b, std::ptrdiff_t rs,
                      std::ptrdiff_t cs, float* out) noexcept;
};

template <class Arch>
void Pack<Arch>::a_block(std::size_t mc, std::size_t kc, const float* a, std::ptrdiff_t rs,
                         std::ptrdiff_t cs, float* out) noexcept {
  for (std::size_t i0 = 0; i0 < mc; i0 += MR) {
    const std::size_t rows = mc - i0 < MR ? mc - i0 : MR;
    const float* src = a + static_cast<std::ptrdiff_t>(i0) * rs;
    if (cs == 1) {
      // Row-major A: a transpose. Four (then two) rows at a time are read in order, L
      // columns per step, and interleaved in registers (rows_to_columns); odd rows go one
      // by one. The panel (kc·MR floats) stays in L1.
      std::size_t i = 0;
      for (; i + 4 <= rows; i += 4) {
        rows_to_columns<4, MR>(src + static_cast<std::ptrdiff_t>(i) * rs, rs, kc, out + i);
      }
      for (; i + 2 <= rows; i += 2) {
        rows_to_columns<2, MR>(src + static_cast<std::ptrdiff_t>(i) * rs, rs, kc, out + i);
      }
      for (; i < rows; ++i) {
        const float* row = src + static_cast<std::ptrdiff_t>(i) * rs;
        float* dst = out + i;
        KILN_EDGE_LOOP
        for (std::size_t p = 0; p < kc; ++p) dst[p * MR] = row[p];
      }
    } else if (rs == 1) {
      // Transposed A (column-major, e.g. dyᵀ·x): each k step is `rows` contiguous floats.
      for (std::size_t p = 0; p < kc; ++p) {
        const float* col = src + static_cast<std::ptrdiff_t>(p) * cs;
        float* dst = out + p * MR;
        for (std::size_t i = 0; i < rows; ++i) dst[i] = col[i];
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) {
        const float* col = src + static_cast<std::ptrdiff_t>(p) * cs;
        float* dst = out + p * MR;
        KILN_EDGE_LOOP
        for (std::size_t i = 0; i < rows; ++i) dst[i] = col[static_cast<std::ptrdiff_t>(i) * rs];
      }
    }
    if (rows < MR) {
      for (std::size_t p = 0; p < kc; ++p) {
        KILN_EDGE_LOOP
        for (std::size_t i = rows; i < MR; ++i) out[p * MR + i] = 0.0f;
      }
    }
    out += kc * MR;
  }
}

// GCC 12 warns that the AVX-512 unpack intrinsics' undefined pass-through operand "may be
// used uninitialized" (a false positive inside avx512fintrin.h).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <class Arch>
template <std::size_t R, std::size_t S>
void Pack<Arch>::rows_to_columns(const float* src, std::ptrdiff_t rs, std::size_t kc,
                                 float* dst) noexcept {
  static_assert(R == 2 || R == 4);
  using Wide = xsimd::batch<double, Arch>;
  alignas(64) float cols[4][L];  // cols[j][4q + r]: row r of column 4q + j
  std::size_t p = 0;
  for (; p + L <= kc; p += L) {
    const Batch r0 = Batch::load_unaligned(src + p);
    const Batch r1 = Batch::load_unaligned(src + rs + p);
    const Batch t0 = xsimd::zip_lo(r0, r1);  // lane: r0[0] r1[0] r0[1] r1[1]
    const Batch t1 = xsimd::zip_hi(r0, r1);  // lane: r0[2] r1[2] r0[3] r1[3]
    if constexpr (R == 2) {
      t0.store_aligned(cols[0]);
      t1.store_aligned(cols[2]);
      for (std::size_t q = 0; q < L / 4; ++q) {
        for (std::size_t j = 0; j < 4; ++j) {
          std::memcpy(dst + (p + 4 * q + j) * S, cols[j & 2] + 4 * q + 2 * (j & 1),
                      2 * sizeof(float));
        }
      }
    } else {
      const Batch r2 = Batch::load_unaligned(src + 2 * rs + p);
      const Batch r3 = Batch::load_unaligned(src + 3 * rs + p);
      const Batch t2 = xsimd::zip_lo(r2, r3);
      const Batch t3 = xsimd::zip_hi(r2, r3);
      const auto wide = [](const Batch& x) { return xsimd::bitwise_cast<Wide>(x); };
      const auto narrow = [](const Wide& x) { return xsimd::bitwise_cast<Batch>(x); };
      narrow(xsimd::zip_lo(wide(t0), wide(t2))).store_aligned(cols[0]);  // r0..r3 of col 0
      narrow(xsimd::zip_hi(wide(t0), wide(t2))).store_aligned(cols[1]);
      narrow(xsimd::zip_lo(wide(t1), wide(t3))).store_aligned(cols[2]);
      narrow(xsimd::zip_hi(wide(t1), wide(t3))).store_aligned(cols[3]);
      for (std::size_t q = 0; q < L / 4; ++q) {
        for (std::size_t j = 0; j < 4; ++j) {
          std::memcpy(dst + (p + 4 * q + j) * S, cols[j] + 4 * q, 4 * sizeof(float));
        }
      }
    }
  }
  KILN_EDGE_LOOP
  for (; p < kc; ++p) {
    for (std::size_t r = 0; r < R; ++r)
      dst[p * S + r] = src[static_cast<std::ptrdiff_t>(r) * rs + p];
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

template <class Arch>
void Pack<Arch>::b_block(std::size_t kc, std::size_t nc, const float* b, std::ptrdiff_t rs,
                         std::ptrdiff_t cs, float* out) noexcept {
  for (std::size_t j0 = 0; j0 < nc; j0 += NR) {
    const std::size_t cols = nc - j0 < NR ? nc - j0 : NR;
    const float* src = b + static_cast<std::ptrdiff_t>(j0) * cs;
    if (cs == 1 && cols == NR) {
      // Row-major B, full panel: NR contiguous floats per k step.
      for (std::size_t p = 0; p < kc; ++p) {
        const float* row = src + static_cast<std::ptrdiff_t>(p) * rs;
        float* dst = out + p * NR;
#pragma GCC unroll 4
        for (std::size_t v = 0; v < NR; v += L)
          Batch::load_unaligned(row + v).store_aligned(dst + v);
      }
    } else if (rs == 1) {
      // Transposed B (column-major, e.g. x·Wᵀ with W row-major): a transpose, as for a
      // row-major A; each column is read in order.
      std::size_t j = 0;
      for (; j + 4 <= cols; j += 4) {
        rows_to_columns<4, NR>(src + static_cast<std::ptrdiff_t>(j) * cs, cs, kc, out + j);
      }
      for (; j + 2 <= cols; j += 2) {
        rows_to_columns<2, NR>(src + static_cast<std::ptrdiff_t>(j) * cs, cs, kc, out + j);
      }
      for (; j < cols; ++j) {
        const float* col = src + static_cast<std::ptrdiff_t>(j) * cs;
        float* dst = out + j;
        KILN_EDGE_LOOP
        for (std::size_t p = 0; p < kc; ++p) dst[p * NR] = col[p];
      }
      if (cols < NR) {
        for (std::size_t p = 0; p < kc; ++p) {
          KILN_EDGE_LOOP
          for (std::size_t j = cols; j < NR; ++j) out[p * NR + j] = 0.0f;
        }
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) {
        const float* row = src + static_cast<std::ptrdiff_t>(p) * rs;
        float* dst = out + p * NR;
        std::size_t j = 0;
        KILN_EDGE_LOOP
        for (; j < cols; ++j) dst[j] = row[static_cast<std::ptrdiff_t>(j) * cs];
        KILN_EDGE_LOOP
        for (; j < NR; ++j) dst[j] = 0.0f;
      }
    }
    out += kc * NR;
  }
}

}  // namespace kiln::cpu::gemm

#undef KILN_EDGE_LOOP
