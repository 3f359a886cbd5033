#pragma once
// The register-tiled micro-kernel of the GEMM: an MR x NR block of C held in MR·NV SIMD
// registers (NR = NV·lanes), updated by one rank-1 product per k step:
//   acc[i][v] += broadcast(a[p·MR + i]) · b[p·NR + v·lanes .. +lanes]
// with a and b the packed micro-panels (pack.hpp). Per k step it loads NV vectors of B,
// broadcasts MR scalars of A and issues MR·NV fused multiply-adds (mul + add where the arch
// has no FMA, e.g. WASM SIMD128; f32x4.relaxed_madd in the relaxed-SIMD build, madd.hpp).
//
// Register budget (accumulators + NV B vectors + 1 broadcast):
//   AVX-512 (32 zmm): 12 x 32 -> 24 + 2 + 1 = 27 (14 x 32, 31 registers, measured the
//                     same at n = 512 and slower at n = 128: more padding in edge tiles)
//   AVX2    (16 ymm):  6 x 16 -> 12 + 2 + 1 = 15
//   SSE / WASM (16 xmm): 6 x 8 -> 12 + 2 + 1 = 15, + 1 for the product of a mul + add
//                     (no FMA) = 16: V8 gives wasm 16 xmm registers; 4 x 8 measured slower
#include <cstddef>
#include <xsimd/xsimd.hpp>

#include "cpu/madd.hpp"

namespace kiln::cpu::gemm {

/// The register tile of an arch, from its vector width.
template <class Arch>
struct TileShape {
  static constexpr std::size_t lanes = xsimd::batch<float, Arch>::size;
  static constexpr std::size_t mr = lanes >= 16 ? 12 : 6;
  static constexpr std::size_t nv = 2;
  static constexpr std::size_t nr = nv * lanes;
};

template <class Arch>
struct MicroKernel {
  using Batch = xsimd::batch<float, Arch>;
  static constexpr std::size_t MR = TileShape<Arch>::mr;
  static constexpr std::size_t NV = TileShape<Arch>::nv;
  static constexpr std::size_t L = Batch::size;
  static constexpr std::size_t NR = NV * L;

  /// c[i·ldc + j] = alpha·(A·B)[i][j] + beta·c[i·ldc + j] for the whole MR x NR tile;
  /// c is not read when beta == 0. a: packed MR x kc panel, b: packed kc x NR panel
  /// (64-byte aligned).
  ///
  /// Never inlined: V8 first compiles a wasm function with its baseline compiler and swaps
  /// in optimised code only at a later call, so the hot loop must sit in a function that is
  /// called often (a copy inlined into the driver ran at a third of the speed).
  __attribute__((noinline)) static void run(std::size_t kc, const float* a, const float* b,
                                            float alpha, float beta, float* c,
                                            std::ptrdiff_t ldc) noexcept;
};

template <class Arch>
void MicroKernel<Arch>::run(std::size_t kc, const float* a, const float* b, float alpha, float beta,
                            float* c, std::ptrdiff_t ldc) noexcept {
  // Ask for the C tile now (with intent to write) so its cache misses overlap the k loop;
  // rows of C are often 2-4 KiB apart and collide in L1 (GCC and clang builtin; a no-op in
  // WebAssembly).
#pragma GCC unroll 16
  for (std::size_t i = 0; i < MR; ++i) {
    const float* row = c + static_cast<std::ptrdiff_t>(i) * ldc;
#pragma GCC unroll 4
    for (std::size_t j = 0; j < NR; j += 16) __builtin_prefetch(row + j, 1, 3);
    __builtin_prefetch(row + NR - 1, 1, 3);
  }

  Batch acc[MR][NV];
#pragma GCC unroll 16
  for (std::size_t i = 0; i < MR; ++i) {
#pragma GCC unroll 4
    for (std::size_t v = 0; v < NV; ++v) acc[i][v] = Batch(0.0f);
  }

  // Four k steps per iteration: natively a few percent; in WASM (V8) 6 x 8 ran at ~37
  // GFLOP/s unrolled by 4 against ~24 not unrolled and ~24 unrolled by 8 (4 x 8: ~33).
  // Except with relaxed SIMD (f32x4.relaxed_madd): there clang orders the unrolled body by
  // row (all of B's 8 vectors first, then 4 chained madds per accumulator), V8 then keeps
  // 8 of the 12 accumulators on the stack, and the loop not unrolled (12 madds, every
  // accumulator in a register, checked with node --print-wasm-code) ran ~12 % faster
  // (Node 20, n = 512: 43.7 / 38.4 against 38.7 / 32.9 GFLOP/s in two interleaved runs).
#if defined(__wasm_relaxed_simd__)
#pragma GCC unroll 1
#else
#pragma GCC unroll 4
#endif
  for (std::size_t p = 0; p < kc; ++p) {
    Batch bv[NV];
#pragma GCC unroll 4
    for (std::size_t v = 0; v < NV; ++v) bv[v] = Batch::load_aligned(b + v * L);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i) {
      const Batch ai(a[i]);
#pragma GCC unroll 4
      for (std::size_t v = 0; v < NV; ++v) acc[i][v] = simd::madd(ai, bv[v], acc[i][v]);
    }
    a += MR;
    b += NR;
  }

  const Batch alpha_v(alpha);
  if (beta == 0.0f) {
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (std::size_t v = 0; v < NV; ++v) {
        (acc[i][v] * alpha_v).store_unaligned(c + i * ldc + v * L);
      }
    }
  } else {
    const Batch beta_v(beta);
#pragma GCC unroll 16
    for (std::size_t i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (std::size_t v = 0; v < NV; ++v) {
        float* cp = c + i * ldc + v * L;
        xsimd::fma(beta_v, Batch::load_unaligned(cp), acc[i][v] * alpha_v).store_unaligned(cp);
      }
    }
  }
}

}  // namespace kiln::cpu::gemm
