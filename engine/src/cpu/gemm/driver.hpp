#pragma once
// The GEMM driver, templated on the xsimd arch: BLIS's five loops around the micro-kernel.
//
//   for jc in [0, n) step NC            B's block of NC columns (lives in L3)
//     for pc in [0, k) step KC          pack B[pc:pc+KC, jc:jc+NC] -> kc x NR micro-panels
//       for ic in [0, m) step MC        pack A[ic:ic+MC, pc:pc+KC] -> MR x kc micro-panels (L2)
//         for jr in [0, nc) step NR     one B micro-panel, reused from L1 by every ...
//           for ir in [0, mc) step MR   ... micro-kernel call on an A micro-panel
//
// beta is applied on the first KC slab only (later slabs accumulate, beta = 1). Edge tiles
// (fewer than MR rows or NR columns left, or a C with non-unit column stride) go through a
// small aligned tile on the stack. Instantiated in engine/src/cpu/arch/gemm_*.cpp natively
// (the extern templates below keep each arch's code in its own TU), at the call site in
// WebAssembly.
#include <cstddef>
#include <xsimd/xsimd.hpp>

#include "cpu/dispatch.hpp"
#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/micro_kernel.hpp"
#include "cpu/gemm/pack.hpp"

namespace kiln::cpu::gemm {

/// The default blocking of an arch (register tile mr x nr, cache blocks kc, mc, nc).
struct SgemmBlocking {
  template <class Arch>
  Blocking operator()(Arch) const noexcept;
};

/// Runs one product with a resolved blocking (every field non-zero, mc a multiple of mr,
/// nc of nr) and a workspace of at least workspace_floats(blocking, m, n, k) floats,
/// 64-byte aligned.
struct SgemmKernel {
  template <class Arch>
  void operator()(Arch, const SgemmArgs& args, const Blocking& blocking,
                  float* workspace) const noexcept;
};

/// Floats of the packed A block at the start of the workspace, rounded up to 64 bytes so
/// the packed B block after it is aligned too.
constexpr std::size_t a_block_floats(const Blocking& b, std::size_t m, std::size_t k) noexcept {
  const std::size_t kc = k < b.kc ? k : b.kc;
  const std::size_t mc = ((m < b.mc ? m : b.mc) + b.mr - 1) / b.mr * b.mr;
  return (kc * mc + 15) / 16 * 16;
}

/// Floats of packing workspace a product needs: the A block then the B block.
constexpr std::size_t workspace_floats(const Blocking& b, std::size_t m, std::size_t n,
                                       std::size_t k) noexcept {
  const std::size_t kc = k < b.kc ? k : b.kc;
  const std::size_t nc = ((n < b.nc ? n : b.nc) + b.nr - 1) / b.nr * b.nr;
  return a_block_floats(b, m, k) + kc * nc;
}

template <class Arch>
Blocking SgemmBlocking::operator()(Arch) const noexcept {
  using Tile = TileShape<Arch>;
  Blocking b;
  b.mr = Tile::mr;
  b.nr = Tile::nr;
  // Measured on Zen 5 (48 KiB L1d, 1 MiB L2), bench_gemm, n = 128..1024: kc from 256 to
  // 768 and mc from 84 to 336 are within a few percent; a B micro-panel of kc = 512 (64 KiB)
  // overflows L1 but streams from L2 fast enough, and k = 512 then takes one pass.
  if (Tile::lanes >= 16) {
    b.kc = 512;
    b.mc = 12 * 14;
    b.nc = 4096;
  } else if (Tile::lanes == 8) {
    b.kc = 256;
    b.mc = 6 * 24;
    b.nc = 4096;
  } else {
    b.kc = 256;
    b.mc = 6 * 16;
    b.nc = 2048;
  }
  return b;
}

template <class Arch>
void SgemmKernel::operator()(Arch, const SgemmArgs& g, const Blocking& bl,
                             float* workspace) const noexcept {
  using Kernel = MicroKernel<Arch>;
  constexpr std::size_t MR = Kernel::MR;
  constexpr std::size_t NR = Kernel::NR;
  const std::size_t m = g.m, n = g.n, k = g.k;
  const float alpha = g.alpha;
  float* const c = g.c.data;
  const std::ptrdiff_t rsc = g.c.row_stride, csc = g.c.col_stride;
  const auto at = [](std::size_t i, std::ptrdiff_t stride) {
    return static_cast<std::ptrdiff_t>(i) * stride;
  };
  if (m == 0 || n == 0) return;

  if (k == 0 || alpha == 0.0f) {  // C = beta·C, and C is not read when beta == 0 (BLAS)
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        float& cij = c[at(i, rsc) + at(j, csc)];
        cij = g.beta == 0.0f ? 0.0f : g.beta * cij;
      }
    }
    return;
  }

  const std::size_t kc_max = bl.kc, mc_max = bl.mc, nc_max = bl.nc;
  float* const a_packed = workspace;
  float* const b_packed = workspace + a_block_floats(bl, m, k);

  for (std::size_t jc = 0; jc < n; jc += nc_max) {
    const std::size_t nc = n - jc < nc_max ? n - jc : nc_max;
    for (std::size_t pc = 0; pc < k; pc += kc_max) {
      const std::size_t kc = k - pc < kc_max ? k - pc : kc_max;
      Pack<Arch>::b_block(kc, nc, g.b.data + at(pc, g.b.row_stride) + at(jc, g.b.col_stride),
                          g.b.row_stride, g.b.col_stride, b_packed);
      const float beta = pc == 0 ? g.beta : 1.0f;

      for (std::size_t ic = 0; ic < m; ic += mc_max) {
        const std::size_t mc = m - ic < mc_max ? m - ic : mc_max;
        Pack<Arch>::a_block(mc, kc, g.a.data + at(ic, g.a.row_stride) + at(pc, g.a.col_stride),
                            g.a.row_stride, g.a.col_stride, a_packed);

        for (std::size_t jr = 0; jr < nc; jr += NR) {
          const std::size_t nr = nc - jr < NR ? nc - jr : NR;
          const float* b_panel = b_packed + jr * kc;
          for (std::size_t ir = 0; ir < mc; ir += MR) {
            const std::size_t mr = mc - ir < MR ? mc - ir : MR;
            const float* a_panel = a_packed + ir * kc;
            float* c_tile = c + at(ic + ir, rsc) + at(jc + jr, csc);
            if (mr == MR && nr == NR && csc == 1) {
              Kernel::run(kc, a_panel, b_panel, alpha, beta, c_tile, rsc);
            } else {
              alignas(64) float tile[MR * NR];
              Kernel::run(kc, a_panel, b_panel, 1.0f, 0.0f, tile, NR);
              for (std::size_t i = 0; i < mr; ++i) {
                for (std::size_t j = 0; j < nr; ++j) {
                  float& cij = c_tile[at(i, rsc) + at(j, csc)];
                  const float ab = alpha * tile[i * NR + j];
                  cij = beta == 0.0f ? ab : ab + beta * cij;
                }
              }
            }
          }
        }
      }
    }
  }
}

#if !defined(__EMSCRIPTEN__)
#define KILN_GEMM_INSTANCES(PREFIX, Arch)                                                     \
  PREFIX template Blocking SgemmBlocking::operator()<Arch>(Arch) const noexcept;              \
  PREFIX template void SgemmKernel::operator()<Arch>(Arch, const SgemmArgs&, const Blocking&, \
                                                     float*) const noexcept;
KILN_GEMM_INSTANCES(extern, Sse2)
KILN_GEMM_INSTANCES(extern, Avx2)
KILN_GEMM_INSTANCES(extern, Avx512)
#endif

}  // namespace kiln::cpu::gemm
