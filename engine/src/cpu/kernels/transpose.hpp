#pragma once
// Blocked (cache-tiled) 2-D transpose, the core of CpuOps::permute when the innermost
// output dim is not the innermost input dim (transpose, swap_dims, NCHW <-> NHWC, ...).
//
// dst[j * ld_dst + i] = src[i * ld_src + j] for i < rows, j < cols.
//
// The matrix is walked in kTransposeTile x kTransposeTile tiles so that the source rows
// and destination rows a tile touches stay in L1; inside a tile, N x N blocks (N = lanes
// of a 128-bit register: 4 for f32/i32, 16 for bytes) are transposed in registers with
// log2(N) rounds of zip_lo/zip_hi (the "perfect shuffle" transpose), the edges in scalar.
//
// The kernel runs with 128-bit batches on every target (kiln::cpu::Sse2: SSE2 natively,
// SIMD128 in WebAssembly) instead of going through cpu::dispatch: a transpose is bound by
// memory traffic, not by lanes, and xsimd 8.1's AVX/AVX-512 zip_lo/zip_hi interleave
// within 128-bit lanes only, which this shuffle does not allow (the static_assert below).
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "cpu/dispatch.hpp"

namespace kiln::cpu::kernels {

/// Tile edge in elements (32 x 32 f32 = 4 KiB read + 4 KiB written).
inline constexpr std::int64_t kTransposeTile = 32;

/// Scalar transpose of a rows x cols block (the edges of the tiled transpose).
template <class T>
inline void transpose_block_scalar(const T* src, std::int64_t ld_src, T* dst,
                                   std::int64_t ld_dst, std::int64_t rows,
                                   std::int64_t cols) noexcept {
  for (std::int64_t j = 0; j < cols; ++j) {
    T* d = dst + j * ld_dst;
    const T* s = src + j;
    for (std::int64_t i = 0; i < rows; ++i) d[i] = s[i * ld_src];
  }
}

/// N x N block in registers, N = xsimd::batch<T, Arch>::size.
template <class Arch, class T>
inline void transpose_block_simd(const T* src, std::int64_t ld_src, T* dst,
                                 std::int64_t ld_dst) noexcept {
  using Batch = xsimd::batch<T, Arch>;
  static_assert(sizeof(Batch) == 16,
                "transpose_block_simd: needs 128-bit batches whose zip_lo/zip_hi interleave "
                "the whole register (SSE2, SIMD128)");
  constexpr std::size_t n = Batch::size;
  Batch r[n];
  for (std::size_t k = 0; k < n; ++k) r[k] = Batch::load_unaligned(src + k * ld_src);
  // After log2(n) rounds of pairing row i with row i + n/2, row k holds column k.
  for (std::size_t round = 1; round < n; round *= 2) {
    Batch t[n];
    for (std::size_t i = 0; i < n / 2; ++i) {
      t[2 * i] = xsimd::zip_lo(r[i], r[i + n / 2]);
      t[2 * i + 1] = xsimd::zip_hi(r[i], r[i + n / 2]);
    }
    for (std::size_t k = 0; k < n; ++k) r[k] = t[k];
  }
  for (std::size_t k = 0; k < n; ++k) r[k].store_unaligned(dst + k * ld_dst);
}

/// dst[j * ld_dst + i] = src[i * ld_src + j] for i < rows, j < cols. T is float,
/// std::int32_t or std::uint8_t; src and dst must not overlap.
template <class T>
inline void transpose_2d(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst,
                         std::int64_t rows, std::int64_t cols) noexcept {
  using Arch = kiln::cpu::Sse2;
  constexpr auto n = static_cast<std::int64_t>(xsimd::batch<T, Arch>::size);
  constexpr std::int64_t tile = std::max<std::int64_t>(kTransposeTile, n);
  for (std::int64_t i0 = 0; i0 < rows; i0 += tile) {
    const std::int64_t i1 = std::min(rows, i0 + tile);
    for (std::int64_t j0 = 0; j0 < cols; j0 += tile) {
      const std::int64_t j1 = std::min(cols, j0 + tile);
      std::int64_t i = i0;
      for (; i + n <= i1; i += n) {
        std::int64_t j = j0;
        for (; j + n <= j1; j += n) {
          transpose_block_simd<Arch>(src + i * ld_src + j, ld_src, dst + j * ld_dst + i, ld_dst);
        }
        if (j < j1) {
          transpose_block_scalar(src + i * ld_src + j, ld_src, dst + j * ld_dst + i, ld_dst, n,
                                 j1 - j);
        }
      }
      if (i < i1) {
        transpose_block_scalar(src + i * ld_src + j0, ld_src, dst + j0 * ld_dst + i, ld_dst,
                               i1 - i, j1 - j0);
      }
    }
  }
}

}  // namespace kiln::cpu::kernels
