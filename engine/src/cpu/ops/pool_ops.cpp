// Pooling ops of the Cpu backend (NCHW, f32): max_pool2d (with indices), avg_pool2d,
// adaptive_avg_pool2d and their backward passes. Semantics: PyTorch's CPU kernels
// (aten/src/ATen/native/cpu/MaxPoolKernel.cpp, AvgPoolKernel.cpp, AdaptiveAvgPoolKernel.cpp).
//
// Each (batch, channel) plane is independent; for every output row and column the valid
// part of the window (inside the input) is computed once, so the inner loops carry no
// bounds checks. Buffers are contiguous (CpuTensor always is), so a permuted or sliced
// front-end tensor arrives here already materialised.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__) && !defined(__EMSCRIPTEN__)
#include <emmintrin.h>
#elif defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif
#include <limits>
#include <vector>

#include "backend/pool_checks.hpp"
#include "core/parallel.hpp"
#include "kiln/backend/pool_options.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

/// The valid taps [first, last) of a dilated window starting at `start` over [0, size):
/// tap k reads start + k·dilation.
struct Taps {
  std::int64_t first = 0, last = 0;
};
Taps taps(std::int64_t start, std::int64_t kernel, std::int64_t dilation, std::int64_t size) {
  Taps t;
  t.first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const std::int64_t past = size - 1 - start;  // last valid offset
  t.last = past < 0 ? 0 : std::min(kernel, past / dilation + 1);
  if (t.last < t.first) t.last = t.first;
  return t;
}

/// Runs fn(p0, p1) over the planes [0, planes), split across the thread pool when the op
/// touches at least 2 · kElementwiseGrain floats (`plane_elements` per plane, input and
/// output together). Planes are independent, so every split gives bit-identical results.
template <class Fn>
void split_planes(std::int64_t planes, std::int64_t plane_elements, Fn&& fn) {
  if constexpr (!detail::kHasThreads) {
    fn(std::int64_t{0}, planes);
  } else {
    const std::int64_t grain = std::max<std::int64_t>(
        1, detail::kElementwiseGrain / std::max<std::int64_t>(plane_elements, 1));
    detail::parallel_for(planes, grain, 1, fn);
  }
}

/// max_pool2d on one plane; idx may be null (no indices wanted).
void max_pool_plane(const float* in, float* out, std::int32_t* idx, std::int64_t height,
                    std::int64_t width, std::int64_t out_h, std::int64_t out_w,
                    const MaxPool2dOptions& o, const std::vector<Taps>& col_taps) {
  const auto [kh, kw] = o.kernel_size;
  const auto [sh, sw] = o.stride;
  const auto [ph, pw] = o.padding;
  const auto [dh, dw] = o.dilation;
  (void)kw;
  for (std::int64_t i = 0; i < out_h; ++i) {
    const std::int64_t h0 = i * sh - ph;
    const Taps rt = taps(h0, kh, dh, height);
    for (std::int64_t j = 0; j < out_w; ++j) {
      const std::int64_t w0 = j * sw - pw;
      const Taps& ct = col_taps[static_cast<std::size_t>(j)];
      float best = -std::numeric_limits<float>::infinity();
      std::int64_t best_at = -1;
      if (rt.first < rt.last && ct.first < ct.last) {
        best_at = (h0 + rt.first * dh) * width + (w0 + ct.first * dw);  // PyTorch's start
      }
      for (std::int64_t a = rt.first; a < rt.last; ++a) {
        const std::int64_t row = (h0 + a * dh) * width;
        for (std::int64_t b = ct.first; b < ct.last; ++b) {
          const std::int64_t at = row + w0 + b * dw;
          const float v = in[at];
          // Strictly greater: the first maximum wins ties; a nan becomes the max.
          if (v > best || std::isnan(v)) {
            best = v;
            best_at = at;
          }
        }
      }
      out[i * out_w + j] = best;
      if (idx) idx[i * out_w + j] = static_cast<std::int32_t>(best_at);
    }
  }
}

/// max_pool_plane for a 2×2 window, stride 2, no padding, dilation 1 (the common case, a
/// third of a small CNN's training step in the generic loop): the same comparisons in the
/// same order, unrolled. v > best || v != v: the first maximum wins ties, a nan becomes the
/// max (and a later nan replaces it), as max_pool_plane.
void max_pool_plane_2x2(const float* in, float* out, std::int32_t* idx, std::int64_t width,
                        std::int64_t out_h, std::int64_t out_w) {
  for (std::int64_t i = 0; i < out_h; ++i) {
    const float* r0 = in + 2 * i * width;
    const float* r1 = r0 + width;
    const std::int64_t base = 2 * i * width;
    std::int64_t j = 0;
#if defined(__SSE2__) && !defined(__EMSCRIPTEN__)
    // Four windows at a time: even/odd columns split by shuffles, the same three selects
    // as the scalar loop below as lane masks (cmpgt | cmpunord), no branches.
    for (; j + 4 <= out_w; j += 4) {
      const std::int64_t c = 2 * j;
      const __m128 a0 = _mm_loadu_ps(r0 + c), a1 = _mm_loadu_ps(r0 + c + 4);
      const __m128 b0 = _mm_loadu_ps(r1 + c), b1 = _mm_loadu_ps(r1 + c + 4);
      const __m128 v[4] = {_mm_shuffle_ps(a0, a1, _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm_shuffle_ps(a0, a1, _MM_SHUFFLE(3, 1, 3, 1)),
                           _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(2, 0, 2, 0)),
                           _mm_shuffle_ps(b0, b1, _MM_SHUFFLE(3, 1, 3, 1))};
      const std::int32_t first = static_cast<std::int32_t>(base + c);
      const std::int32_t w32 = static_cast<std::int32_t>(width);
      const __m128i at0 = _mm_setr_epi32(first, first + 2, first + 4, first + 6);
      const __m128i v_at[4] = {at0, _mm_add_epi32(at0, _mm_set1_epi32(1)),
                               _mm_add_epi32(at0, _mm_set1_epi32(w32)),
                               _mm_add_epi32(at0, _mm_set1_epi32(w32 + 1))};
      __m128 best = v[0];
      __m128i at = at0;
      for (int k = 1; k < 4; ++k) {
        const __m128 m = _mm_or_ps(_mm_cmpgt_ps(v[k], best), _mm_cmpunord_ps(v[k], v[k]));
        best = _mm_or_ps(_mm_and_ps(m, v[k]), _mm_andnot_ps(m, best));
        const __m128i mi = _mm_castps_si128(m);
        at = _mm_or_si128(_mm_and_si128(mi, v_at[k]), _mm_andnot_si128(mi, at));
      }
      _mm_storeu_ps(out + i * out_w + j, best);
      if (idx) _mm_storeu_si128(reinterpret_cast<__m128i*>(idx + i * out_w + j), at);
    }
#elif defined(__wasm_simd128__)
    // The same in WebAssembly SIMD128 (Emscripten's emmintrin.h emulates some SSE2 lane by
    // lane): even/odd columns by i32x4 shuffles, the selects as v128.bitselect on the mask
    // gt | ne(v, v).
    for (; j + 4 <= out_w; j += 4) {
      const std::int64_t c = 2 * j;
      const v128_t a0 = wasm_v128_load(r0 + c), a1 = wasm_v128_load(r0 + c + 4);
      const v128_t b0 = wasm_v128_load(r1 + c), b1 = wasm_v128_load(r1 + c + 4);
      const v128_t v[4] = {wasm_i32x4_shuffle(a0, a1, 0, 2, 4, 6), wasm_i32x4_shuffle(a0, a1, 1, 3, 5, 7),
                           wasm_i32x4_shuffle(b0, b1, 0, 2, 4, 6), wasm_i32x4_shuffle(b0, b1, 1, 3, 5, 7)};
      const std::int32_t first = static_cast<std::int32_t>(base + c);
      const std::int32_t w32 = static_cast<std::int32_t>(width);
      const v128_t at0 = wasm_i32x4_make(first, first + 2, first + 4, first + 6);
      const v128_t v_at[4] = {at0, wasm_i32x4_add(at0, wasm_i32x4_splat(1)),
                              wasm_i32x4_add(at0, wasm_i32x4_splat(w32)),
                              wasm_i32x4_add(at0, wasm_i32x4_splat(w32 + 1))};
      v128_t best = v[0];
      v128_t at = at0;
      for (int k = 1; k < 4; ++k) {
        const v128_t m = wasm_v128_or(wasm_f32x4_gt(v[k], best), wasm_f32x4_ne(v[k], v[k]));
        best = wasm_v128_bitselect(v[k], best, m);
        at = wasm_v128_bitselect(v_at[k], at, m);
      }
      wasm_v128_store(out + i * out_w + j, best);
      if (idx) wasm_v128_store(idx + i * out_w + j, at);
    }
#endif
    for (; j < out_w; ++j) {
      // Branch-free selects through bit masks: on real activations the comparisons are
      // unpredictable, and mispredicted branches made this loop a quarter of a CNN
      // training step (the compiler turns ?: on floats into branches).
      const std::int64_t c = 2 * j;
      float best = r0[c];
      std::uint32_t at = static_cast<std::uint32_t>(base + c);
      auto take = [&](float v, std::uint32_t v_at) {
        const std::uint32_t m = 0u - static_cast<std::uint32_t>((v > best) | (v != v));
        std::uint32_t vb, bb;
        std::memcpy(&vb, &v, 4);
        std::memcpy(&bb, &best, 4);
        bb = (vb & m) | (bb & ~m);
        std::memcpy(&best, &bb, 4);
        at = (v_at & m) | (at & ~m);
      };
      take(r0[c + 1], static_cast<std::uint32_t>(base + c + 1));
      take(r1[c], static_cast<std::uint32_t>(base + width + c));
      take(r1[c + 1], static_cast<std::uint32_t>(base + width + c + 1));
      out[i * out_w + j] = best;
      if (idx) idx[i * out_w + j] = static_cast<std::int32_t>(at);
    }
  }
}

std::pair<CpuTensor, CpuTensor> max_pool(const char* op, const CpuTensor& x,
                                         const MaxPool2dOptions& o, bool with_indices) {
  const Shape out_shape = pool::check_max_pool2d_input(op, x.dtype(), x.shape(), o);
  const Shape& s = x.shape();
  const std::int64_t planes = s[0] * s[1], height = s[2], width = s[3];
  const std::int64_t out_h = out_shape[2], out_w = out_shape[3];
  CpuTensor out(out_shape, DType::F32);
  CpuTensor indices;
  if (with_indices) indices = CpuTensor(out_shape, DType::I32);
  std::vector<Taps> col_taps(static_cast<std::size_t>(out_w));
  for (std::int64_t j = 0; j < out_w; ++j) {
    col_taps[static_cast<std::size_t>(j)] =
        taps(j * o.stride[1] - o.padding[1], o.kernel_size[1], o.dilation[1], width);
  }
  if (planes == 0) return {out, indices};
  const float* in = x.data<float>();
  float* po = out.data<float>();
  std::int32_t* pi = with_indices ? indices.data<std::int32_t>() : nullptr;
  const std::int64_t in_plane = height * width, out_plane = out_h * out_w;
  if (o.kernel_size == std::array<std::int64_t, 2>{2, 2} &&
      o.stride == std::array<std::int64_t, 2>{2, 2} &&
      o.padding == std::array<std::int64_t, 2>{0, 0} &&
      o.dilation == std::array<std::int64_t, 2>{1, 1} && 2 * out_h <= height &&
      2 * out_w <= width) {
    split_planes(planes, in_plane + out_plane, [&](std::int64_t p0, std::int64_t p1) {
      for (std::int64_t p = p0; p < p1; ++p) {
        max_pool_plane_2x2(in + p * in_plane, po + p * out_plane,
                           pi ? pi + p * out_plane : nullptr, width, out_h, out_w);
      }
    });
    return {out, indices};
  }
  split_planes(planes, in_plane + out_plane, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) {
      max_pool_plane(in + p * in_plane, po + p * out_plane, pi ? pi + p * out_plane : nullptr,
                     height, width, out_h, out_w, o, col_taps);
    }
  });
  return {out, indices};
}

/// One spatial dim of an avg-pool window: [lo, hi) inside the input and the count PyTorch
/// divides by when padding is included (the window clipped to the padded input).
struct AvgSpan {
  std::int64_t lo = 0, hi = 0, padded = 0;
};
AvgSpan avg_span(std::int64_t i, std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                 std::int64_t size) {
  const std::int64_t start = i * stride - padding;
  const std::int64_t end = std::min(start + kernel, size + padding);
  AvgSpan s;
  s.padded = end - start;
  s.lo = std::max<std::int64_t>(start, 0);
  s.hi = std::min(end, size);
  return s;
}

static_assert(sizeof(AvgSpan) <= pool::kTableEntryBytes, "pool::check_tables bounds the tables");

std::vector<AvgSpan> avg_spans(std::int64_t out, std::int64_t kernel, std::int64_t stride,
                               std::int64_t padding, std::int64_t size) {
  std::vector<AvgSpan> spans(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    spans[static_cast<std::size_t>(i)] = avg_span(i, kernel, stride, padding, size);
  }
  return spans;
}

/// 1/divisor of each output element of one plane (0 for a window with no input element,
/// whose output PyTorch sets to 0).
std::vector<float> avg_scales(const std::vector<AvgSpan>& rows, const std::vector<AvgSpan>& cols,
                              bool count_include_pad) {
  std::vector<float> scale(rows.size() * cols.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const auto& r = rows[i];
      const auto& c = cols[j];
      const std::int64_t inside = (r.hi - r.lo) * (c.hi - c.lo);
      const std::int64_t divisor = count_include_pad ? r.padded * c.padded : inside;
      scale[i * cols.size() + j] =
          (r.lo >= r.hi || c.lo >= c.hi) ? 0.f : 1.f / static_cast<float>(divisor);
    }
  }
  return scale;
}

/// Sums each window of one plane times its scale (avg_pool2d and adaptive_avg_pool2d).
void window_mean_plane(const float* in, float* out, std::int64_t width,
                       const std::vector<AvgSpan>& rows, const std::vector<AvgSpan>& cols,
                       const std::vector<float>& scale) {
  const std::size_t out_w = cols.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    for (std::size_t j = 0; j < out_w; ++j) {
      const auto& c = cols[j];
      float sum = 0.f;
      for (std::int64_t h = r.lo; h < r.hi; ++h) {
        const float* row = in + h * width;
        for (std::int64_t w = c.lo; w < c.hi; ++w) sum += row[w];
      }
      out[i * out_w + j] = sum * scale[i * out_w + j];
    }
  }
}

/// Spreads each output gradient times its scale over its window (the transposed op).
void window_mean_backward_plane(const float* grad, float* in_grad, std::int64_t width,
                                const std::vector<AvgSpan>& rows,
                                const std::vector<AvgSpan>& cols,
                                const std::vector<float>& scale) {
  const std::size_t out_w = cols.size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    for (std::size_t j = 0; j < out_w; ++j) {
      const auto& c = cols[j];
      const float g = grad[i * out_w + j] * scale[i * out_w + j];
      for (std::int64_t h = r.lo; h < r.hi; ++h) {
        float* row = in_grad + h * width;
        for (std::int64_t w = c.lo; w < c.hi; ++w) row[w] += g;
      }
    }
  }
}

std::vector<AvgSpan> adaptive_spans(std::int64_t out, std::int64_t size) {
  std::vector<AvgSpan> spans(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    auto& s = spans[static_cast<std::size_t>(i)];
    s.lo = pool::adaptive_start(i, size, out);
    s.hi = pool::adaptive_end(i, size, out);
    s.padded = s.hi - s.lo;
  }
  return spans;
}

/// Runs `plane(in_plane_ptr, out_plane_ptr)` over every (batch, channel) plane.
template <class F>
void for_planes(std::int64_t planes, const float* in, std::int64_t in_plane, float* out,
                std::int64_t out_plane, F&& plane) {
  split_planes(planes, in_plane + out_plane, [&](std::int64_t p0, std::int64_t p1) {
    for (std::int64_t p = p0; p < p1; ++p) plane(in + p * in_plane, out + p * out_plane);
  });
}

}  // namespace

CpuTensor CpuOps::max_pool2d(const CpuTensor& x, const MaxPool2dOptions& options) {
  return max_pool("max_pool2d", x, options, false).first;
}

std::pair<CpuTensor, CpuTensor> CpuOps::max_pool2d_with_indices(const CpuTensor& x,
                                                                const MaxPool2dOptions& options) {
  return max_pool("max_pool2d_with_indices", x, options, true);
}

CpuTensor CpuOps::max_pool2d_backward(const Shape& x_shape, const CpuTensor& grad,
                                      const CpuTensor& indices) {
  pool::check_max_pool2d_backward(x_shape, grad.dtype(), grad.shape(), indices.dtype(),
                                  indices.shape());
  const std::int64_t planes = x_shape[0] * x_shape[1];
  const std::int64_t in_plane = x_shape[2] * x_shape[3];
  const std::int64_t out_plane = grad.shape()[2] * grad.shape()[3];
  if (planes == 0 || out_plane == 0) return full(x_shape, 0.0, DType::F32, {});
  CpuTensor out(x_shape, DType::F32);  // zeroed plane by plane below
  const float* g = grad.data<float>();
  const std::int32_t* idx = indices.data<std::int32_t>();
  float* o = out.data<float>();
  // Indices stay inside their own plane, so planes split across threads write disjoint
  // memory, each plane's sums in the serial order.
  split_planes(planes, in_plane + out_plane, [&](std::int64_t p0, std::int64_t p1) {
    std::fill(o + p0 * in_plane, o + p1 * in_plane, 0.0f);
    for (std::int64_t p = p0; p < p1; ++p) {
      float* op_ = o + p * in_plane;
      const float* gp = g + p * out_plane;
      const std::int32_t* ip = idx + p * out_plane;
      for (std::int64_t k = 0; k < out_plane; ++k) {
        const std::int64_t at = ip[k];
        if (at >= 0 && at < in_plane) op_[at] += gp[k];  // -1: a window with no input element
      }
    }
  });
  return out;
}

CpuTensor CpuOps::avg_pool2d(const CpuTensor& x, const AvgPool2dOptions& o) {
  const Shape out_shape = pool::check_avg_pool2d_input(x.dtype(), x.shape(), o);
  const Shape& s = x.shape();
  const auto rows = avg_spans(out_shape[2], o.kernel_size[0], o.stride[0], o.padding[0], s[2]);
  const auto cols = avg_spans(out_shape[3], o.kernel_size[1], o.stride[1], o.padding[1], s[3]);
  const auto scale = avg_scales(rows, cols, o.count_include_pad);
  CpuTensor out(out_shape, DType::F32);
  const std::int64_t planes = s[0] * s[1];
  if (planes == 0) return out;
  for_planes(planes, x.data<float>(), s[2] * s[3], out.data<float>(), out_shape[2] * out_shape[3],
             [&](const float* in, float* o_) { window_mean_plane(in, o_, s[3], rows, cols, scale); });
  return out;
}

CpuTensor CpuOps::avg_pool2d_backward(const Shape& x_shape, const CpuTensor& grad,
                                      const AvgPool2dOptions& o) {
  const Shape out_shape =
      pool::check_avg_pool2d_backward(x_shape, grad.dtype(), grad.shape(), o);
  const auto rows =
      avg_spans(out_shape[2], o.kernel_size[0], o.stride[0], o.padding[0], x_shape[2]);
  const auto cols =
      avg_spans(out_shape[3], o.kernel_size[1], o.stride[1], o.padding[1], x_shape[3]);
  const auto scale = avg_scales(rows, cols, o.count_include_pad);
  CpuTensor out = full(x_shape, 0.0, DType::F32, {});
  const std::int64_t planes = x_shape[0] * x_shape[1];
  if (planes == 0) return out;
  for_planes(planes, grad.data<float>(), out_shape[2] * out_shape[3], out.data<float>(),
             x_shape[2] * x_shape[3], [&](const float* g, float* o_) {
               window_mean_backward_plane(g, o_, x_shape[3], rows, cols, scale);
             });
  return out;
}

CpuTensor CpuOps::adaptive_avg_pool2d(const CpuTensor& x,
                                      const std::array<std::int64_t, 2>& output_size) {
  const Shape out_shape =
      pool::check_adaptive_avg_pool2d_input(x.dtype(), x.shape(), output_size);
  const Shape& s = x.shape();
  const auto rows = adaptive_spans(output_size[0], s[2]);
  const auto cols = adaptive_spans(output_size[1], s[3]);
  const auto scale = avg_scales(rows, cols, true);
  CpuTensor out(out_shape, DType::F32);
  const std::int64_t planes = s[0] * s[1];
  if (planes == 0) return out;
  for_planes(planes, x.data<float>(), s[2] * s[3], out.data<float>(), out_shape[2] * out_shape[3],
             [&](const float* in, float* o_) { window_mean_plane(in, o_, s[3], rows, cols, scale); });
  return out;
}

CpuTensor CpuOps::adaptive_avg_pool2d_backward(const Shape& x_shape, const CpuTensor& grad) {
  const Shape out_shape =
      pool::check_adaptive_avg_pool2d_backward(x_shape, grad.dtype(), grad.shape());
  const std::array<std::int64_t, 2> output_size{out_shape[2], out_shape[3]};
  const auto rows = adaptive_spans(output_size[0], x_shape[2]);
  const auto cols = adaptive_spans(output_size[1], x_shape[3]);
  const auto scale = avg_scales(rows, cols, true);
  CpuTensor out = full(x_shape, 0.0, DType::F32, {});
  const std::int64_t planes = x_shape[0] * x_shape[1];
  if (planes == 0) return out;
  for_planes(planes, grad.data<float>(), output_size[0] * output_size[1], out.data<float>(),
             x_shape[2] * x_shape[3], [&](const float* g, float* o_) {
               window_mean_backward_plane(g, o_, x_shape[3], rows, cols, scale);
             });
  return out;
}

}  // namespace kiln
