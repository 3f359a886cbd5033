#pragma once
// Packing of GEMM operands into the micro-kernel's layout (micro_kernel.hpp):
//   A block [mc x kc] -> ceil(mc / MR) micro-panels, each kc x MR: out[p·MR + i]
//   B block [kc x nc] -> ceil(nc / NR) micro-panels, each kc x NR: out[p·NR + j]
// Rows (columns) past the edge of the matrix are zero, so the micro-kernel always runs on
// full tiles and only the store of an edge tile is partial. The source may have any
// strides; the common layouts (unit column stride: row-major; unit row stride: a
// transposed row-major matrix) get loops that read memory in order.
#include <cstddef>
#include <xsimd/xsimd.hpp>

#include "cpu/gemm/micro_kernel.hpp"

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
      // Row-major A: each row is read in order and scattered with stride MR (the panel,
      // kc·MR floats, stays in L1).
      for (std::size_t i = 0; i < rows; ++i) {
        const float* row = src + static_cast<std::ptrdiff_t>(i) * rs;
        float* dst = out + i;
        for (std::size_t p = 0; p < kc; ++p) dst[p * MR] = row[p];
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) {
        const float* col = src + static_cast<std::ptrdiff_t>(p) * cs;
        float* dst = out + p * MR;
        for (std::size_t i = 0; i < rows; ++i) dst[i] = col[static_cast<std::ptrdiff_t>(i) * rs];
      }
    }
    if (rows < MR) {
      for (std::size_t p = 0; p < kc; ++p) {
        for (std::size_t i = rows; i < MR; ++i) out[p * MR + i] = 0.0f;
      }
    }
    out += kc * MR;
  }
}

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
        for (std::size_t v = 0; v < NR; v += L) Batch::load_unaligned(row + v).store_aligned(dst + v);
      }
    } else if (rs == 1) {
      // Transposed B (column-major): each column is read in order.
      for (std::size_t j = 0; j < cols; ++j) {
        const float* col = src + static_cast<std::ptrdiff_t>(j) * cs;
        float* dst = out + j;
        for (std::size_t p = 0; p < kc; ++p) dst[p * NR] = col[p];
      }
      if (cols < NR) {
        for (std::size_t p = 0; p < kc; ++p) {
          for (std::size_t j = cols; j < NR; ++j) out[p * NR + j] = 0.0f;
        }
      }
    } else {
      for (std::size_t p = 0; p < kc; ++p) {
        const float* row = src + static_cast<std::ptrdiff_t>(p) * rs;
        float* dst = out + p * NR;
        std::size_t j = 0;
        for (; j < cols; ++j) dst[j] = row[static_cast<std::ptrdiff_t>(j) * cs];
        for (; j < NR; ++j) dst[j] = 0.0f;
      }
    }
    out += kc * NR;
  }
}

}  // namespace kiln::cpu::gemm
