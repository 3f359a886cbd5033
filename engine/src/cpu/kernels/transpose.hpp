#pragma once
// Blocked (cache-tiled) 2-D transpose, the core of CpuOps::permute when the innermost
// output dim is not the innermost input dim (transpose, swap_dims, NCHW <-> NHWC, ...).
//
// dst[j * ld_dst + i] = src[i * ld_src + j] for i < rows, j < cols.
//
// The matrix is walked in panels of kTransposeTile source rows x one 64-byte cache line
// of source columns, staged through a 4 KiB buffer so that every source and destination
// line is touched once, in one burst (see transpose_2d). Inside a panel, N x N blocks
// (N = lanes of a 128-bit register: 4 for f32/i32, 16 for bytes) are transposed in
// registers with log2(N) rounds of zip_lo/zip_hi (the "perfect shuffle" transpose); the
// ragged edges are scalar.
//
// Measured (this 2-core EPYC VM, f32, best of 9, buffers reused): 1024^2 0.36 ms, 2048^2
// 1.8 ms, 1000^2 0.17 ms; a plain 32 x 32 tiling of 4x4 register blocks took 1.7 / 11 /
// 0.19 ms (power-of-two rows all fall into one cache set); the naive double loop takes
// 12-17 ms at 1024^2 and 51-70 ms at 2048^2.
//
// The kernel runs with 128-bit batches on every target (kiln::cpu::Sse2: SSE2 natively,
// SIMD128 in WebAssembly) instead of going through cpu::dispatch: a transpose is bound by
// memory traffic, not by lanes, and xsimd 8.1's AVX/AVX-512 zip_lo/zip_hi interleave
// within 128-bit lanes only, which this shuffle does not allow (the static_assert below).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <xsimd/xsimd.hpp>

#include "cpu/dispatch.hpp"

namespace kiln::cpu::kernels {

/// Source rows per panel (64 rows x one 64-byte line = a 4 KiB buffer).
inline constexpr std::int64_t kTransposeTile = 64;

/// Scalar transpose of a rows x cols block (the edges of the tiled transpose).
template <class T>
inline void transpose_block_scalar(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst,
                                   std::int64_t rows, std::int64_t cols) noexcept {
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
///
/// Walks src in panels of Tile rows x one cache line (64 bytes) of columns: each src line
/// is read once, whole, as n-row strips of n x n register transposes into a small buffer
/// laid out like dst; the buffer's rows then go out as contiguous runs of Tile elements.
/// Touching every line once, in one burst, keeps power-of-two leading dims (whose rows
/// all map to the same cache set) as fast as the others.
template <std::int64_t Tile = kTransposeTile, class T>
inline void transpose_2d(const T* src, std::int64_t ld_src, T* dst, std::int64_t ld_dst,
                         std::int64_t rows, std::int64_t cols) noexcept {
  using Arch = kiln::cpu::Sse2;
  constexpr auto n = static_cast<std::int64_t>(xsimd::batch<T, Arch>::size);
  constexpr auto line = static_cast<std::int64_t>(64 / sizeof(T));  // src columns per panel
  constexpr std::int64_t tile = std::max<std::int64_t>(Tile, n);    // src rows per panel
  static_assert(line % n == 0, "transpose_2d: a cache line must hold whole register rows");
  alignas(64) T buf[line * tile];  // buf[c * tile + r] = src[(i0 + r) * ld_src + j0 + c]
  for (std::int64_t i0 = 0; i0 < rows; i0 += tile) {
    const std::int64_t h = std::min(tile, rows - i0);
    const std::int64_t hv = h - h % n;  // rows done in registers
    for (std::int64_t j0 = 0; j0 < cols; j0 += line) {
      const std::int64_t w = std::min(line, cols - j0);
      const std::int64_t wv = w - w % n;  // columns done in registers
      const T* s = src + i0 * ld_src + j0;
      T* d = dst + j0 * ld_dst + i0;
      if (wv > 0 && hv > 0) {
        for (std::int64_t r = 0; r < hv; r += n) {
          for (std::int64_t c = 0; c < wv; c += n) {
            transpose_block_simd<Arch>(s + r * ld_src + c, ld_src, buf + c * tile + r, tile);
          }
        }
        for (std::int64_t c = 0; c < wv; ++c) {
          std::memcpy(d + c * ld_dst, buf + c * tile, static_cast<std::size_t>(hv) * sizeof(T));
        }
      }
      if (wv < w) {  // the last columns, fewer than n
        transpose_block_scalar(s + wv, ld_src, d + wv * ld_dst, ld_dst, hv, w - wv);
      }
      if (hv < h) {  // the last rows, fewer than n
        transpose_block_scalar(s + hv * ld_src, ld_src, d + hv, ld_dst, h - hv, w);
      }
    }
  }
}

}  // namespace kiln::cpu::kernels
