#pragma once
// Direct convolution kernels for small channel counts (engine/src/cpu/conv/conv.cpp uses
// them for stride 1, dilation 1, one group, no padding). A plane of width W is treated as
// one flat row: output position p = oh·W + ow' (ow' < W, the columns ow' >= width_out are
// computed and thrown away) reads input position p + i·W + j for tap (i, j), so a 2-D
// correlation becomes a 1-D one over flat rows with one offset per tap, vectorised over p
// without im2col or GEMM packing.
//
// CorrelateF32:        out[r, p] = init[r] + Σ_{s, t} coef[r, s, t] · src[s, p + offsets[t]]
//                      for p in [0, length): the forward pass (r = output channel, s = input
//                      channel) and, with flipped taps, the input gradient.
// CorrelateWeightF32:  dw[r, s, t] = Σ_images Σ_p g[img, r, p] · src[img, s, p + offsets[t]]:
//                      the weight gradient (g zero where p is not a real output position).
// Sums run in a fixed order (s, t ascending; images, then p, in vector lanes reduced with
// simd::reduce_add), independent of threads. length is a multiple of 2·(vector width) for
// CorrelateF32 and of the vector width for CorrelateWeightF32; src rows must be readable up
// to max(offsets) + length. Kernels do not throw.
#include <cstdint>
#include <type_traits>

#include "cpu/dispatch.hpp"
#include "cpu/madd.hpp"
#include "cpu/simd_compat.hpp"

namespace kiln::cpu::kernels {

/// See the file comment. coef is [rows][channels][taps]; init is [rows] or null (0);
/// src channel s starts at src + s·src_stride; out row r at out + r·out_stride.
struct CorrelateF32 {
  template <class Arch>
  void operator()(Arch, const float* src, std::int64_t src_stride, std::int64_t channels,
                  const std::int64_t* offsets, std::int64_t taps, const float* coef,
                  const float* init, std::int64_t rows, float* out, std::int64_t out_stride,
                  std::int64_t length) const;
};

/// See the file comment. g is [images][rows][length] (image stride g_image), src is
/// [images][channels][src_stride] (image stride src_image); dw [rows][channels][taps] is
/// overwritten.
struct CorrelateWeightF32 {
  template <class Arch>
  void operator()(Arch, const float* g, std::int64_t g_image, const float* src,
                  std::int64_t src_image, std::int64_t src_stride, std::int64_t images,
                  std::int64_t channels, const std::int64_t* offsets, std::int64_t taps,
                  std::int64_t rows, std::int64_t length, float* dw) const;
};

namespace conv_detail {

template <int RB, class Arch>
void correlate_block(const float* src, std::int64_t src_stride, std::int64_t channels,
                     const std::int64_t* offsets, std::int64_t taps, const float* coef,
                     const float* init, float* out, std::int64_t out_stride,
                     std::int64_t length) {
  using Batch = xsimd::batch<float, Arch>;
  constexpr std::int64_t N = Batch::size;
  const std::int64_t row_coef = channels * taps;
  for (std::int64_t p = 0; p < length; p += 2 * N) {
    Batch acc0[RB], acc1[RB];
    for (int r = 0; r < RB; ++r) {
      acc0[r] = Batch(init ? init[r] : 0.0f);
      acc1[r] = acc0[r];
    }
    for (std::int64_t s = 0; s < channels; ++s) {
      const float* sp = src + s * src_stride + p;
      const float* cp = coef + s * taps;
      for (std::int64_t t = 0; t < taps; ++t) {
        const Batch x0 = Batch::load_unaligned(sp + offsets[t]);
        const Batch x1 = Batch::load_unaligned(sp + offsets[t] + N);
        for (int r = 0; r < RB; ++r) {
          const Batch w(cp[r * row_coef + t]);
          acc0[r] = simd::madd(w, x0, acc0[r]);
          acc1[r] = simd::madd(w, x1, acc1[r]);
        }
      }
    }
    for (int r = 0; r < RB; ++r) {
      acc0[r].store_unaligned(out + r * out_stride + p);
      acc1[r].store_unaligned(out + r * out_stride + p + N);
    }
  }
}

template <int RB, int TB, class Arch>
void weight_block(const float* g, std::int64_t g_image, std::int64_t g_row, const float* src,
                  std::int64_t src_image, std::int64_t images, const std::int64_t* offsets,
                  std::int64_t length, float* dw, std::int64_t dw_row) {
  using Batch = xsimd::batch<float, Arch>;
  constexpr std::int64_t N = Batch::size;
  Batch acc[RB][TB];
  for (int r = 0; r < RB; ++r) {
    for (int t = 0; t < TB; ++t) acc[r][t] = Batch(0.0f);
  }
  for (std::int64_t img = 0; img < images; ++img) {
    const float* gi = g + img * g_image;
    const float* si = src + img * src_image;
    for (std::int64_t p = 0; p < length; p += N) {
      Batch x[TB];
      for (int t = 0; t < TB; ++t) x[t] = Batch::load_unaligned(si + offsets[t] + p);
      for (int r = 0; r < RB; ++r) {
        const Batch gv = Batch::load_unaligned(gi + r * g_row + p);
        for (int t = 0; t < TB; ++t) acc[r][t] = simd::madd(gv, x[t], acc[r][t]);
      }
    }
  }
  for (int r = 0; r < RB; ++r) {
    for (int t = 0; t < TB; ++t) dw[r * dw_row + t] = simd::reduce_add(acc[r][t]);
  }
}

}  // namespace conv_detail

template <class Arch>
void CorrelateF32::operator()(Arch, const float* src, std::int64_t src_stride,
                              std::int64_t channels, const std::int64_t* offsets,
                              std::int64_t taps, const float* coef, const float* init,
                              std::int64_t rows, float* out, std::int64_t out_stride,
                              std::int64_t length) const {
  const std::int64_t row_coef = channels * taps;
  std::int64_t r = 0;
  for (; r + 8 <= rows; r += 8) {
    conv_detail::correlate_block<8, Arch>(src, src_stride, channels, offsets, taps,
                                          coef + r * row_coef, init ? init + r : nullptr,
                                          out + r * out_stride, out_stride, length);
  }
  for (; r + 4 <= rows; r += 4) {
    conv_detail::correlate_block<4, Arch>(src, src_stride, channels, offsets, taps,
                                          coef + r * row_coef, init ? init + r : nullptr,
                                          out + r * out_stride, out_stride, length);
  }
  for (; r < rows; ++r) {
    conv_detail::correlate_block<1, Arch>(src, src_stride, channels, offsets, taps,
                                          coef + r * row_coef, init ? init + r : nullptr,
                                          out + r * out_stride, out_stride, length);
  }
}

template <class Arch>
void CorrelateWeightF32::operator()(Arch, const float* g, std::int64_t g_image, const float* src,
                                    std::int64_t src_image, std::int64_t src_stride,
                                    std::int64_t images, std::int64_t channels,
                                    const std::int64_t* offsets, std::int64_t taps,
                                    std::int64_t rows, std::int64_t length, float* dw) const {
  const std::int64_t dw_row = channels * taps;
  for (std::int64_t s = 0; s < channels; ++s) {
    const float* ss = src + s * src_stride;
    std::int64_t r = 0;
    auto taps_of = [&](auto rb) {
      constexpr int RB = decltype(rb)::value;
      std::int64_t t = 0;
      for (; t + 4 <= taps; t += 4) {
        conv_detail::weight_block<RB, 4, Arch>(g + r * length, g_image, length, ss, src_image,
                                               images, offsets + t, length,
                                               dw + r * dw_row + s * taps + t, dw_row);
      }
      for (; t < taps; ++t) {
        conv_detail::weight_block<RB, 1, Arch>(g + r * length, g_image, length, ss, src_image,
                                               images, offsets + t, length,
                                               dw + r * dw_row + s * taps + t, dw_row);
      }
    };
    for (; r + 4 <= rows; r += 4) taps_of(std::integral_constant<int, 4>{});
    for (; r < rows; ++r) taps_of(std::integral_constant<int, 1>{});
  }
}

}  // namespace kiln::cpu::kernels

#define KILN_CONV_DIRECT_KERNELS(PREFIX, Arch)                                                \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::CorrelateF32, Arch, const float*,        \
                       std::int64_t, std::int64_t, const std::int64_t*, std::int64_t,         \
                       const float*, const float*, std::int64_t, float*, std::int64_t,        \
                       std::int64_t)                                                          \
  KILN_KERNEL_INSTANCE(PREFIX, ::kiln::cpu::kernels::CorrelateWeightF32, Arch, const float*,  \
                       std::int64_t, const float*, std::int64_t, std::int64_t, std::int64_t,  \
                       std::int64_t, const std::int64_t*, std::int64_t, std::int64_t,         \
                       std::int64_t, float*)

#if !defined(__EMSCRIPTEN__)
KILN_CONV_DIRECT_KERNELS(extern, ::kiln::cpu::Sse2)
KILN_CONV_DIRECT_KERNELS(extern, ::kiln::cpu::Avx2)
KILN_CONV_DIRECT_KERNELS(extern, ::kiln::cpu::Avx512)
#endif
