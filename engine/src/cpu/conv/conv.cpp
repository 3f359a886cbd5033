// im2col / col2im convolution kernels (see conv.hpp). The column matrix of one image and
// group is [Cg·kd·kh·kw, depth_out·height_out·width_out]: row (c, a, i, j) holds the input
// values that kernel tap (c, a, i, j) meets at each output position (0 in the padding), so
// the convolution of that image and group is one GEMM W_g[Og, Cg·kd·kh·kw] · cols (kd = 1,
// depth 1 for the 1-D and 2-D convolutions).
#include "cpu/conv/conv.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "cpu/dispatch.hpp"
#include "cpu/gemm/gemm.hpp"
#include "cpu/kernels/conv_direct.hpp"

namespace kiln::cpu::conv {
namespace {

/// Per-group sizes derived from a Geometry.
// ptrdiff_t, the GEMM's stride type, so that matrix views built from these need no narrowing
// in WebAssembly (32-bit ptrdiff_t; sizes there are below 2^31 by Kiln's element limit).
struct Sizes {
  std::ptrdiff_t cg, og;         // channels per group, in and out
  std::ptrdiff_t k;              // cg·kh·kw: rows of the column matrix
  std::ptrdiff_t in_spatial;     // height·width
  std::ptrdiff_t out_spatial;    // height_out·width_out
  bool identity;               // 1x1 kernel, stride 1, no padding: cols is x itself
};

Sizes sizes(const Geometry& g) {
  Sizes s{};
  s.cg = g.channels_in / g.groups;
  s.og = g.channels_out / g.groups;
  s.k = s.cg * g.kernel_d * g.kernel_h * g.kernel_w;
  s.in_spatial = g.depth * g.height * g.width;
  s.out_spatial = g.depth_out * g.height_out * g.width_out;
  s.identity = g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 &&
               g.pad_h == 0 && g.pad_w == 0 && g.height_out == g.height &&
               g.width_out == g.width && g.kernel_d == 1 && g.stride_d == 1 && g.pad_d == 0 &&
               g.depth_out == g.depth;
  return s;
}

/// Output positions o in [lo, hi) with 0 <= o·stride + offset < in_size (the others read
/// padding), for o < out_size.
void valid_range(std::int64_t out_size, std::int64_t in_size, std::int64_t stride,
                 std::int64_t offset, std::int64_t& lo, std::int64_t& hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  const std::int64_t last = in_size - 1 - offset;  // o·stride <= last
  hi = last < 0 ? 0 : last / stride + 1;
  hi = std::min(hi, out_size);
  lo = std::min(lo, hi);
}

/// cols [cg·kd·kh·kw, out_spatial] from x (the group's cg channels of one image).
void im2col(const Geometry& g, const Sizes& s, const float* x, float* cols) {
  const std::int64_t ho = g.height_out, wo = g.width_out;
  const std::int64_t plane_in = g.height * g.width, plane_out = ho * wo;
  for (std::int64_t c = 0; c < s.cg; ++c) {
    for (std::int64_t a = 0; a < g.kernel_d; ++a) {
      const std::int64_t off_d = a * g.dilation_d - g.pad_d;
      std::int64_t od_lo, od_hi;
      valid_range(g.depth_out, g.depth, g.stride_d, off_d, od_lo, od_hi);
      for (std::int64_t i = 0; i < g.kernel_h; ++i) {
        const std::int64_t off_h = i * g.dilation_h - g.pad_h;
        std::int64_t oh_lo, oh_hi;
        valid_range(ho, g.height, g.stride_h, off_h, oh_lo, oh_hi);
        for (std::int64_t j = 0; j < g.kernel_w; ++j) {
          const std::int64_t off_w = j * g.dilation_w - g.pad_w;
          std::int64_t ow_lo, ow_hi;
          valid_range(wo, g.width, g.stride_w, off_w, ow_lo, ow_hi);
          float* row_d =
              cols + (((c * g.kernel_d + a) * g.kernel_h + i) * g.kernel_w + j) * s.out_spatial;
          std::fill(row_d, row_d + od_lo * plane_out, 0.0f);
          std::fill(row_d + od_hi * plane_out, row_d + s.out_spatial, 0.0f);
          for (std::int64_t od = od_lo; od < od_hi; ++od) {
            const float* xc = x + c * s.in_spatial + (od * g.stride_d + off_d) * plane_in;
            float* row = row_d + od * plane_out;
            std::fill(row, row + oh_lo * wo, 0.0f);
            std::fill(row + oh_hi * wo, row + plane_out, 0.0f);
            for (std::int64_t oh = oh_lo; oh < oh_hi; ++oh) {
              float* dst = row + oh * wo;
              const float* src = xc + (oh * g.stride_h + off_h) * g.width;
              std::fill(dst, dst + ow_lo, 0.0f);
              if (g.stride_w == 1) {  // rows are short (tens of floats): a loop beats memcpy's call
                const float* s = src + off_w;
                for (std::int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow] = s[ow];
              } else {
                for (std::int64_t ow = ow_lo; ow < ow_hi; ++ow)
                  dst[ow] = src[ow * g.stride_w + off_w];
              }
              std::fill(dst + ow_hi, dst + wo, 0.0f);
            }
          }
        }
      }
    }
  }
}

/// x (the group's cg channels of one image, zeroed by the caller) += the scatter of cols:
/// the adjoint of im2col.
void col2im(const Geometry& g, const Sizes& s, const float* cols, float* x) {
  const std::int64_t ho = g.height_out, wo = g.width_out;
  const std::int64_t plane_in = g.height * g.width, plane_out = ho * wo;
  for (std::int64_t c = 0; c < s.cg; ++c) {
    for (std::int64_t a = 0; a < g.kernel_d; ++a) {
      const std::int64_t off_d = a * g.dilation_d - g.pad_d;
      std::int64_t od_lo, od_hi;
      valid_range(g.depth_out, g.depth, g.stride_d, off_d, od_lo, od_hi);
      for (std::int64_t i = 0; i < g.kernel_h; ++i) {
        const std::int64_t off_h = i * g.dilation_h - g.pad_h;
        std::int64_t oh_lo, oh_hi;
        valid_range(ho, g.height, g.stride_h, off_h, oh_lo, oh_hi);
        for (std::int64_t j = 0; j < g.kernel_w; ++j) {
          const std::int64_t off_w = j * g.dilation_w - g.pad_w;
          std::int64_t ow_lo, ow_hi;
          valid_range(wo, g.width, g.stride_w, off_w, ow_lo, ow_hi);
          for (std::int64_t od = od_lo; od < od_hi; ++od) {
            float* xc = x + c * s.in_spatial + (od * g.stride_d + off_d) * plane_in;
            const float* row =
                cols + (((c * g.kernel_d + a) * g.kernel_h + i) * g.kernel_w + j) * s.out_spatial +
                od * plane_out;
            for (std::int64_t oh = oh_lo; oh < oh_hi; ++oh) {
              const float* src = row + oh * wo;
              float* dst = xc + (oh * g.stride_h + off_h) * g.width;
              if (g.stride_w == 1) {
                for (std::int64_t ow = ow_lo; ow < ow_hi; ++ow) dst[ow + off_w] += src[ow];
              } else {
                for (std::int64_t ow = ow_lo; ow < ow_hi; ++ow)
                  dst[ow * g.stride_w + off_w] += src[ow];
              }
            }
          }
        }
      }
    }
  }
}

/// n floats of `buffer` (grown as needed) from its first 64-byte boundary. The direct
/// kernels store whole vectors at multiples of 8 floats from the start of their output rows:
/// from a cache-line-aligned start none splits a line. Emscripten's malloc (dlmalloc in the
/// threaded build, emmalloc in the others) aligns to 8 bytes only, so where a buffer started
/// depended on the allocations before it; the direct kernels are sensitive to it
/// (bench/RESULTS.md, "Threads: the threaded build's one-thread gap").
float* line_aligned(std::vector<float>& buffer, std::int64_t n) {
  constexpr std::int64_t kLineFloats = 16;
  if (static_cast<std::int64_t>(buffer.size()) < n + kLineFloats) {
    buffer.resize(static_cast<std::size_t>(n + kLineFloats));
  }
  const auto address = reinterpret_cast<std::uintptr_t>(buffer.data());
  return buffer.data() + ((64 - address % 64) % 64) / sizeof(float);
}

/// A per-thread column buffer of at least n floats, 64-byte aligned (kept and reused, as the
/// GEMM's packing buffers).
float* column_buffer(std::int64_t n) {
  thread_local std::vector<float> buffer;
  return line_aligned(buffer, n);
}

/// A second per-thread scratch buffer (the direct kernels need two), 64-byte aligned.
float* scratch_buffer(std::int64_t n) {
  thread_local std::vector<float> buffer;
  return line_aligned(buffer, n);
}

// ---- direct kernels (cpu/kernels/conv_direct.hpp) for small channel counts
//
// Used for one group, stride 1, dilation 1, no padding, the usual output size and a small
// reduction (Cg·kh·kw <= 256, channels_out <= 64): there im2col + GEMM packing cost more
// than the products (MNIST-sized layers). Flat rows of the input width W: output position
// p = oh·W + ow reads input position p + i·W + j for tap (i, j).

constexpr std::int64_t kRound = 32;  // lengths are rounded to a multiple of 2·16 floats

std::int64_t round_up(std::int64_t n) { return (n + kRound - 1) / kRound * kRound; }

bool use_direct(const Geometry& g, const Sizes& s) {
  return g.depth == 1 && g.kernel_d == 1 && g.depth_out == 1 && g.groups == 1 && g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == 1 &&
         g.dilation_w == 1 && g.pad_h == 0 && g.pad_w == 0 &&
         g.height_out == g.height - g.kernel_h + 1 && g.width_out == g.width - g.kernel_w + 1 &&
         g.height_out > 0 && g.width_out > 0 && s.k <= 256 && g.channels_out <= 64 &&
         !s.identity;
}

/// Flat offsets i·W + j of the taps, row-major.
std::vector<std::int64_t> tap_offsets(const Geometry& g) {
  std::vector<std::int64_t> off;
  for (std::int64_t i = 0; i < g.kernel_h; ++i) {
    for (std::int64_t j = 0; j < g.kernel_w; ++j) off.push_back(i * g.width + j);
  }
  return off;
}

/// Flat length of the output positions: (height_out - 1)·W + width_out.
std::int64_t flat_length(const Geometry& g) { return (g.height_out - 1) * g.width + g.width_out; }

/// buf[o][base + oh·W + ow] = grad_out[o, oh, ow] for each of `rows` planes of row length
/// `row_len`, zero elsewhere.
void spread(const Geometry& g, const float* go, std::int64_t rows, std::int64_t base,
            std::int64_t row_len, float* buf) {
  const std::int64_t out_spatial = g.height_out * g.width_out;
  std::fill(buf, buf + rows * row_len, 0.0f);
  for (std::int64_t o = 0; o < rows; ++o) {
    for (std::int64_t oh = 0; oh < g.height_out; ++oh) {
      const float* src = go + o * out_spatial + oh * g.width_out;
      float* dst = buf + o * row_len + base + oh * g.width;
      for (std::int64_t ow = 0; ow < g.width_out; ++ow) dst[ow] = src[ow];
    }
  }
}

void direct_forward(const Geometry& g, const Sizes& s, const float* x, const float* w,
                    const float* bias, float* out) {
  const std::vector<std::int64_t> off = tap_offsets(g);
  const std::int64_t taps = g.kernel_h * g.kernel_w;
  const std::int64_t length = round_up(flat_length(g));
  const std::int64_t image = g.channels_in * s.in_spatial;
  detail::parallel_for(g.batch, [&](std::int64_t begin, std::int64_t end) {
    float* tmp = column_buffer(g.channels_out * length);
    float* pad = scratch_buffer(image + kRound);
    for (std::int64_t n = begin; n < end; ++n) {
      // The kernel reads up to kRound - 1 floats past a plane: the next plane's, or, for
      // the last image, a zero-padded copy's.
      const float* xn = x + n * image;
      if (n == g.batch - 1) {
        std::copy(xn, xn + image, pad);
        std::fill(pad + image, pad + image + kRound, 0.0f);
        xn = pad;
      }
      dispatch(kernels::CorrelateF32{}, xn, s.in_spatial, g.channels_in, off.data(), taps, w,
               bias, g.channels_out, tmp, length, length);
      float* on = out + n * g.channels_out * s.out_spatial;
      for (std::int64_t o = 0; o < g.channels_out; ++o) {
        for (std::int64_t oh = 0; oh < g.height_out; ++oh) {
          const float* src = tmp + o * length + oh * g.width;
          std::copy(src, src + g.width_out, on + (o * g.height_out + oh) * g.width_out);
        }
      }
    }
  });
}

void direct_backward_input(const Geometry& g, const Sizes& s, const float* grad_out,
                           const float* w, float* grad_x) {
  // dx[c, q] = Σ_{o, t} w[o, c, t] · G[o, q - off_t], G spread into rows with `front`
  // leading zeros: offsets front - off_t over the flipped kernel.
  const std::vector<std::int64_t> off = tap_offsets(g);
  const std::int64_t taps = g.kernel_h * g.kernel_w;
  const std::int64_t front = off.back();
  std::vector<std::int64_t> flipped(off.size());
  for (std::size_t t = 0; t < off.size(); ++t) flipped[t] = front - off[t];
  std::vector<float> wt(static_cast<std::size_t>(g.channels_out * s.k));  // [c][o][t]
  for (std::int64_t o = 0; o < g.channels_out; ++o) {
    for (std::int64_t c = 0; c < g.channels_in; ++c) {
      for (std::int64_t t = 0; t < taps; ++t) {
        wt[static_cast<std::size_t>((c * g.channels_out + o) * taps + t)] =
            w[(o * g.channels_in + c) * taps + t];
      }
    }
  }
  const std::int64_t length = round_up(s.in_spatial);
  const std::int64_t g_row = front + length + kRound;
  detail::parallel_for(g.batch, [&](std::int64_t begin, std::int64_t end) {
    float* tmp = column_buffer(g.channels_in * length);
    float* gbuf = scratch_buffer(g.channels_out * g_row);
    for (std::int64_t n = begin; n < end; ++n) {
      spread(g, grad_out + n * g.channels_out * s.out_spatial, g.channels_out, front, g_row,
             gbuf);
      dispatch(kernels::CorrelateF32{}, static_cast<const float*>(gbuf), g_row, g.channels_out,
               static_cast<const std::int64_t*>(flipped.data()), taps,
               static_cast<const float*>(wt.data()), static_cast<const float*>(nullptr),
               g.channels_in, tmp, length, length);
      float* dx = grad_x + n * g.channels_in * s.in_spatial;
      for (std::int64_t c = 0; c < g.channels_in; ++c) {
        std::copy(tmp + c * length, tmp + c * length + s.in_spatial, dx + c * s.in_spatial);
      }
    }
  });
}

void direct_backward_weight(const Geometry& g, const Sizes& s, const float* x,
                            const float* grad_out, float* grad_w) {
  const std::vector<std::int64_t> off = tap_offsets(g);
  const std::int64_t taps = g.kernel_h * g.kernel_w;
  const std::int64_t weight_size = g.channels_out * s.k;
  const std::int64_t length = round_up(flat_length(g));
  const std::int64_t image = g.channels_in * s.in_spatial;
  // Fixed chunks of the batch (their number depends on the batch only), each summed by the
  // kernel in registers, then added in order.
  constexpr std::int64_t kChunks = 8;
  const std::int64_t chunks = std::min(g.batch, kChunks);
  std::vector<float> partials(static_cast<std::size_t>((chunks - 1) * weight_size));
  detail::parallel_for(chunks, [&](std::int64_t c_begin, std::int64_t c_end) {
    for (std::int64_t c = c_begin; c < c_end; ++c) {
      float* dst = c == 0 ? grad_w : partials.data() + (c - 1) * weight_size;
      const std::int64_t b0 = g.batch * c / chunks, b1 = g.batch * (c + 1) / chunks;
      const std::int64_t images = b1 - b0;
      float* gbuf = column_buffer(images * g.channels_out * length);
      // x copied with kRound zeros after the chunk (the kernel reads past the last plane).
      float* xbuf = scratch_buffer(images * image + kRound);
      std::copy(x + b0 * image, x + b1 * image, xbuf);
      std::fill(xbuf + images * image, xbuf + images * image + kRound, 0.0f);
      for (std::int64_t n = b0; n < b1; ++n) {
        spread(g, grad_out + n * g.channels_out * s.out_spatial, g.channels_out, 0, length,
               gbuf + (n - b0) * g.channels_out * length);
      }
      dispatch(kernels::CorrelateWeightF32{}, static_cast<const float*>(gbuf),
               g.channels_out * length, static_cast<const float*>(xbuf), image, s.in_spatial,
               images, g.channels_in, static_cast<const std::int64_t*>(off.data()), taps,
               g.channels_out, length, dst);
    }
  });
  for (std::int64_t c = 1; c < chunks; ++c) {
    const float* part = partials.data() + (c - 1) * weight_size;
    for (std::int64_t i = 0; i < weight_size; ++i) grad_w[i] += part[i];
  }
}

using gemm::ConstMatrixView;
using gemm::MatrixView;
using gemm::SgemmArgs;

SgemmArgs product(std::int64_t m, std::int64_t n, std::int64_t k, ConstMatrixView a,
                  ConstMatrixView b, float beta, MatrixView c) {
  SgemmArgs args;
  args.m = static_cast<std::size_t>(m);
  args.n = static_cast<std::size_t>(n);
  args.k = static_cast<std::size_t>(k);
  args.a = a;
  args.b = b;
  args.beta = beta;
  args.c = c;
  return args;
}

}  // namespace

void forward(const Geometry& g, const float* x, const float* w, const float* bias, float* out) {
  const Sizes s = sizes(g);
  if (use_direct(g, s)) return direct_forward(g, s, x, w, bias, out);
  detail::parallel_for(g.batch, [&](std::int64_t begin, std::int64_t end) {
    float* buffer = s.identity ? nullptr : column_buffer(s.k * s.out_spatial);
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t grp = 0; grp < g.groups; ++grp) {
        const float* xg = x + (n * g.channels_in + grp * s.cg) * s.in_spatial;
        const float* cols = xg;
        if (!s.identity) {
          im2col(g, s, xg, buffer);
          cols = buffer;
        }
        float* og = out + (n * g.channels_out + grp * s.og) * s.out_spatial;
        if (bias) {
          for (std::int64_t o = 0; o < s.og; ++o) {
            std::fill(og + o * s.out_spatial, og + (o + 1) * s.out_spatial, bias[grp * s.og + o]);
          }
        }
        // out_g[Og, P] = W_g[Og, K] · cols[K, P] (+ the bias already there)
        gemm::sgemm(product(s.og, s.out_spatial, s.k, {w + grp * s.og * s.k, s.k, 1},
                            {cols, s.out_spatial, 1}, bias ? 1.0f : 0.0f,
                            {og, s.out_spatial, 1}));
      }
    }
  });
}

void backward_input(const Geometry& g, const float* grad_out, const float* w, float* grad_x) {
  const Sizes s = sizes(g);
  if (use_direct(g, s)) return direct_backward_input(g, s, grad_out, w, grad_x);
  detail::parallel_for(g.batch, [&](std::int64_t begin, std::int64_t end) {
    float* buffer = s.identity ? nullptr : column_buffer(s.k * s.out_spatial);
    for (std::int64_t n = begin; n < end; ++n) {
      for (std::int64_t grp = 0; grp < g.groups; ++grp) {
        float* dx = grad_x + (n * g.channels_in + grp * s.cg) * s.in_spatial;
        const float* go = grad_out + (n * g.channels_out + grp * s.og) * s.out_spatial;
        // cols[K, P] = W_gᵀ[K, Og] · G_g[Og, P] (W_g read transposed, no copy)
        float* cols = s.identity ? dx : buffer;
        gemm::sgemm(product(s.k, s.out_spatial, s.og, {w + grp * s.og * s.k, 1, s.k},
                            {go, s.out_spatial, 1}, 0.0f, {cols, s.out_spatial, 1}));
        if (!s.identity) {
          std::fill(dx, dx + s.cg * s.in_spatial, 0.0f);
          col2im(g, s, cols, dx);
        }
      }
    }
  });
}

void backward_weight(const Geometry& g, const float* x, const float* grad_out, float* grad_w) {
  const Sizes s = sizes(g);
  const std::int64_t weight_size = g.channels_out * s.k;
  if (g.batch == 0) {
    std::fill(grad_w, grad_w + weight_size, 0.0f);
    return;
  }
  if (use_direct(g, s)) return direct_backward_weight(g, s, x, grad_out, grad_w);
  // Fixed chunks of the batch, each summed into its own partial, then added in order: the
  // chunk count depends on the sizes only (up to 32 chunks, partials within ~16 MB), never
  // on the thread count.
  constexpr std::int64_t kMaxChunks = 32;
  constexpr std::int64_t kPartialBudget = std::int64_t{1} << 22;  // floats
  const std::int64_t chunks = std::max<std::int64_t>(
      1, std::min({g.batch, kMaxChunks, kPartialBudget / std::max<std::int64_t>(weight_size, 1)}));
  std::vector<float> partials(static_cast<std::size_t>((chunks - 1) * weight_size));
  detail::parallel_for(chunks, [&](std::int64_t c_begin, std::int64_t c_end) {
    float* buffer = s.identity ? nullptr : column_buffer(s.k * s.out_spatial);
    for (std::int64_t c = c_begin; c < c_end; ++c) {
      float* dst = c == 0 ? grad_w : partials.data() + (c - 1) * weight_size;
      const std::int64_t b0 = g.batch * c / chunks, b1 = g.batch * (c + 1) / chunks;
      for (std::int64_t n = b0; n < b1; ++n) {
        for (std::int64_t grp = 0; grp < g.groups; ++grp) {
          const float* xg = x + (n * g.channels_in + grp * s.cg) * s.in_spatial;
          const float* cols = xg;
          if (!s.identity) {
            im2col(g, s, xg, buffer);
            cols = buffer;
          }
          const float* go = grad_out + (n * g.channels_out + grp * s.og) * s.out_spatial;
          // dW_g[Og, K] (+)= G_g[Og, P] · colsᵀ[P, K] (cols read transposed, no copy)
          gemm::sgemm(product(s.og, s.k, s.out_spatial, {go, s.out_spatial, 1},
                              {cols, 1, s.out_spatial}, n == b0 ? 0.0f : 1.0f,
                              {dst + grp * s.og * s.k, s.k, 1}));
        }
      }
    }
  });
  for (std::int64_t c = 1; c < chunks; ++c) {
    const float* part = partials.data() + (c - 1) * weight_size;
    for (std::int64_t i = 0; i < weight_size; ++i) grad_w[i] += part[i];
  }
}

void backward_bias(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                   const float* grad_out, float* grad_b) {
  // Each image's row is summed in 8 float lanes (a fixed order the compiler vectorises
  // without reassociating), the lanes and the images in double. The row sums are split
  // across the thread pool by whole images (the split the conv kernels, the element-wise
  // ops and the pools before this one use, so each thread reads the images it wrote); the
  // images are then added in order on the calling thread, so the result does not depend on
  // the thread count. (Split by channels, each thread read every image, half of them from
  // the other core's cache: slower on 2 threads than the whole sum on one.)
  constexpr int kLanes = 8;
  std::vector<double> rows(static_cast<std::size_t>(std::max<std::int64_t>(batch * channels, 0)));
  auto image_range = [&](std::int64_t n0, std::int64_t n1) {
    for (std::int64_t n = n0; n < n1; ++n) {
      for (std::int64_t c = 0; c < channels; ++c) {
        const float* p = grad_out + (n * channels + c) * spatial;
        float lanes[kLanes] = {};
        std::int64_t i = 0;
        for (; i + kLanes <= spatial; i += kLanes) {
          for (int l = 0; l < kLanes; ++l) lanes[l] += p[i + l];
        }
        double row = 0.0;
        for (int l = 0; l < kLanes; ++l) row += lanes[l];
        for (; i < spatial; ++i) row += p[i];
        rows[static_cast<std::size_t>(n * channels + c)] = row;
      }
    }
  };
  if constexpr (!detail::kHasThreads) {
    image_range(0, batch);
  } else {
    const std::int64_t per_image = std::max<std::int64_t>(channels * spatial, 1);
    const std::int64_t grain = std::max<std::int64_t>(1, detail::kElementwiseGrain / per_image);
    detail::parallel_for(batch, grain, 1, image_range);
  }
  for (std::int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < batch; ++n) sum += rows[static_cast<std::size_t>(n * channels + c)];
    grad_b[c] = static_cast<float>(sum);
  }
}

}  // namespace kiln::cpu::conv
