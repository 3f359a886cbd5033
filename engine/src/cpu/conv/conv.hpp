#pragma once
// Convolution kernels of the Cpu backend: im2col / col2im around the packed GEMM
// (engine/src/cpu/gemm/), on raw contiguous f32 buffers whose shapes the caller
// (engine/src/cpu/ops/conv_ops.cpp) has checked. Small stride-1 unpadded convolutions with
// one group (Cg·kh·kw <= 256, channels_out <= 64) take direct xsimd kernels instead
// (engine/src/cpu/kernels/conv_direct.hpp; see conv.cpp's use_direct).
//
// Every op is written for the 2-D convolution
//   out[n, o, oh, ow] = Σ_{c, i, j} w[o, c, i, j] · x[n, g·Cg + c, oh·sh - ph + i·dh, ow·sw - pw + j·dw]
// (zero outside the input; g the group of o, Cg = channels_in / groups), and its two
// adjoints; a depth axis (od, a; sd, pd, dd) in front of the height makes it the 3-D
// convolution (conv3d; depth 1 and kernel_d 1 for the 1-D and 2-D ops). A transposed convolution is the x-adjoint of the convolution whose input is its
// output (engine/src/cpu/ops/conv_ops.cpp maps the shapes).
//
// Threads: the batch is split across kiln::num_threads() (engine/src/core/parallel.hpp).
// No floating-point sum depends on the split: forward and x-backward write disjoint
// images; the weight gradient sums fixed batch chunks (their number depends on the sizes
// only) and then adds the chunks in order. So results are bit-identical for any count.
#include <cstdint>

namespace kiln::cpu::conv {

/// Sizes of one 2-D convolution. Output sizes are given, not derived, so that the adjoint
/// of a transposed convolution (whose output_padding may leave rows the formula would not
/// produce) uses the same kernels.
struct Geometry {
  std::int64_t batch = 0;
  std::int64_t channels_in = 0, height = 0, width = 0;  // input
  std::int64_t channels_out = 0, kernel_h = 0, kernel_w = 0;
  std::int64_t groups = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t pad_h = 0, pad_w = 0;  // before the input (top, left); the end side is implied
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t height_out = 0, width_out = 0;
  // The depth axis of a 3-D convolution (in front of the height); 1-D and 2-D leave these.
  std::int64_t depth = 1, kernel_d = 1, stride_d = 1, pad_d = 0, dilation_d = 1, depth_out = 1;
};

/// out [batch, channels_out, (depth_out,) height_out, width_out] = conv(x, w) (+ bias[o] when
/// bias is not null). w is [channels_out, channels_in / groups, (kernel_d,) kernel_h, kernel_w].
void forward(const Geometry& g, const float* x, const float* w, const float* bias, float* out);

/// grad_x [batch, channels_in, height, width] = the adjoint of `forward` w.r.t. x applied to
/// grad_out (overwritten, not accumulated).
void backward_input(const Geometry& g, const float* grad_out, const float* w, float* grad_x);

/// grad_w [channels_out, channels_in / groups, kernel_h, kernel_w] = the adjoint of
/// `forward` w.r.t. w applied to grad_out, summed over the batch (overwritten).
void backward_weight(const Geometry& g, const float* x, const float* grad_out, float* grad_w);

/// grad_b[c] = Σ_{n, p} grad_out[n, c, p] for grad_out [batch, channels, spatial]
/// (summed in double, in a fixed order).
void backward_bias(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                   const float* grad_out, float* grad_b);

}  // namespace kiln::cpu::conv
