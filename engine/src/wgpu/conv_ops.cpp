// Convolutions of the Wgpu backend (kiln/wgpu/wgpu.hpp): direct "gather" WGSL kernels, one
// invocation per output element, over the Cpu backend's Geometry (engine/src/cpu/conv/conv.hpp)
// and checks (engine/src/cpu/ops/conv_checks.hpp, so both backends throw the same errors).
//
// Every op is one of three kernels written for the 3-D convolution (depth 1 and kernel_d 1
// serve 2-D, height 1 and kernel_h 1 serve 1-D), exactly as the Cpu maps them (g the group
// of o, Cg = channels_in / groups, positions per spatial axis):
//   kForward         out[n, o, p] = (bias[o] +) Σ_{c, tap} w[o, c, tap] · x[n, g·Cg + c, i],
//                    i = p·stride - pad + tap·dil; x read as 0 in the padding and still
//                    multiplied, as the Cpu's im2col + GEMM (an inf or nan weight gives nan
//                    at padded positions on both)
//   kXBackward       dx[n, c, i] = Σ_tap Σ_{o of c's group} w[o, c, tap] · g[n, o, p] over
//                    the taps with a whole p = (i + pad - tap·dil) / stride in range (the
//                    Cpu's col2im of Wᵀ·G: padding positions are never added), (+ bias[c])
//   kWeightBackward  dw[o, c, tap] = Σ_n Σ_p g[n, o, p] · x[n, g·Cg + c, i], x as 0 in the
//                    padding and multiplied (the Cpu's G·im2col(x)ᵀ)
// A transposed convolution is kXBackward of the adjoint convolution plus its bias; its
// x-gradient is kForward and its weight gradient kWeightBackward of that adjoint (x and
// output_grad exchanged), as in engine/src/cpu/ops/conv_ops.cpp.
//
// Non-finite values: results equal the Cpu's im2col + GEMM path. The Cpu's direct kernels
// for small stride-1 unpadded layers (cpu/conv/conv.cpp, use_direct) also multiply the zeros
// of the row tails they pad: there a nan or inf in the weight (x gradient) or in x (weight
// gradient) gives the Cpu nan in entries its GEMM path (and PyTorch, and this backend) give
// finite; the cases (tests/webgpu/cases_conv.mjs) keep non-finite values out of those two.
//
// Sums run in a fixed order (the taps and channels in the Cpu's im2col row order, the images
// in order): deterministic, but not the Cpu's GEMM blocking, so results differ from the Cpu's
// by float rounding only (tests/webgpu/cases_conv.mjs). The bias gradient is summed with
// Neumaier compensation in f32 where the Cpu sums in double.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "cpu/conv/conv.hpp"
#include "cpu/ops/conv_checks.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

using cpu::conv::Geometry;
using cpu::ops::conv_operand;

// The uniform block of the three convolution kernels: sizes of the Geometry, spatial ones as
// (depth, height, width); 25 scalars of 4 bytes, laid out as the WGSL struct P below.
struct ConvParams {
  std::uint32_t n;  // invocations (output elements)
  std::uint32_t batch, channels_in, channels_out, cg, og, has_bias;
  std::int32_t in[3];        // d, h, w: the input
  std::int32_t kernel[3];    // kd, kh, kw
  std::int32_t out[3];       // od, oh, ow: the output
  std::int32_t stride[3];    // sd, sh, sw
  std::int32_t pad[3];       // pd, ph, pw: padding before the input
  std::int32_t dilation[3];  // dd, dh, dw
};
static_assert(sizeof(ConvParams) == 25 * 4, "ConvParams is WGSL's P");

const char* const kConvHeader = R"WGSL(
struct P {
  n: u32, batch: u32, cin: u32, cout: u32, cg: u32, og: u32, has_bias: u32,
  d: i32, h: i32, w: i32,
  kd: i32, kh: i32, kw: i32,
  od: i32, oh: i32, ow: i32,
  sd: i32, sh: i32, sw: i32,
  pd: i32, ph: i32, pw: i32,
  dd: i32, dh: i32, dw: i32,
}
)WGSL";

// One invocation per output element [batch, cout, od, oh, ow].
const char* const kForward = R"WGSL(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  var r = i;
  let ox = i32(r % u32(p.ow)); r = r / u32(p.ow);
  let oy = i32(r % u32(p.oh)); r = r / u32(p.oh);
  let oz = i32(r % u32(p.od)); r = r / u32(p.od);
  let o = r % p.cout;
  let nb = r / p.cout;
  let grp = o / p.og;
  let plane = u32(p.d * p.h * p.w);
  let taps = u32(p.kd * p.kh * p.kw);
  var acc = 0.0;
  if (p.has_bias != 0u) { acc = bias[o]; }
  for (var c = 0u; c < p.cg; c = c + 1u) {
    let xbase = (nb * p.cin + grp * p.cg + c) * plane;
    var wi = (o * p.cg + c) * taps;
    for (var a = 0; a < p.kd; a = a + 1) {
      let iz = oz * p.sd - p.pd + a * p.dd;
      let vz = iz >= 0 && iz < p.d;
      for (var b = 0; b < p.kh; b = b + 1) {
        let iy = oy * p.sh - p.ph + b * p.dh;
        let vy = vz && iy >= 0 && iy < p.h;
        for (var j = 0; j < p.kw; j = j + 1) {
          let ix = ox * p.sw - p.pw + j * p.dw;
          var xv = 0.0;
          if (vy && ix >= 0 && ix < p.w) { xv = x[xbase + u32((iz * p.h + iy) * p.w + ix)]; }
          acc = acc + wt[wi] * xv;
          wi = wi + 1u;
        }
      }
    }
  }
  out[i] = acc;
}
)WGSL";

// One invocation per input element [batch, cin, d, h, w] of the convolution.
const char* const kXBackward = R"WGSL(
@group(0) @binding(0) var<storage, read> g: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
// The output position reading input position q through tap t of one axis, or -1.
fn source(q: i32, t: i32, s: i32, pad: i32, dil: i32, size_out: i32) -> i32 {
  let v = q + pad - t * dil;
  if (v < 0 || v % s != 0) { return -1; }
  let o = v / s;
  return select(-1, o, o < size_out);
}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  var r = i;
  let ix = i32(r % u32(p.w)); r = r / u32(p.w);
  let iy = i32(r % u32(p.h)); r = r / u32(p.h);
  let iz = i32(r % u32(p.d)); r = r / u32(p.d);
  let c = r % p.cin;
  let nb = r / p.cin;
  let grp = c / p.cg;
  let cl = c % p.cg;
  let plane_out = u32(p.od * p.oh * p.ow);
  let taps = u32(p.kd * p.kh * p.kw);
  var acc = 0.0;
  var t = 0u;
  for (var a = 0; a < p.kd; a = a + 1) {
    let oz = source(iz, a, p.sd, p.pd, p.dd, p.od);
    for (var b = 0; b < p.kh; b = b + 1) {
      let oy = source(iy, b, p.sh, p.ph, p.dh, p.oh);
      for (var j = 0; j < p.kw; j = j + 1) {
        let ox = source(ix, j, p.sw, p.pw, p.dw, p.ow);
        if (oz >= 0 && oy >= 0 && ox >= 0) {
          let pos = u32((oz * p.oh + oy) * p.ow + ox);
          var s = 0.0;
          for (var ol = 0u; ol < p.og; ol = ol + 1u) {
            let o = grp * p.og + ol;
            s = s + wt[(o * p.cg + cl) * taps + t] * g[(nb * p.cout + o) * plane_out + pos];
          }
          acc = acc + s;
        }
        t = t + 1u;
      }
    }
  }
  if (p.has_bias != 0u) { acc = acc + bias[c]; }
  dx[i] = acc;
}
)WGSL";

// One invocation per weight element [cout, cg, kd, kh, kw].
const char* const kWeightBackward = R"WGSL(
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read_write> dw: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  var r = i;
  let j = i32(r % u32(p.kw)); r = r / u32(p.kw);
  let b = i32(r % u32(p.kh)); r = r / u32(p.kh);
  let a = i32(r % u32(p.kd)); r = r / u32(p.kd);
  let cl = r % p.cg;
  let o = r / p.cg;
  let c = (o / p.og) * p.cg + cl;
  let plane = u32(p.d * p.h * p.w);
  let plane_out = u32(p.od * p.oh * p.ow);
  var acc = 0.0;
  for (var nb = 0u; nb < p.batch; nb = nb + 1u) {
    let xbase = (nb * p.cin + c) * plane;
    var gi = (nb * p.cout + o) * plane_out;
    var s = 0.0;
    for (var oz = 0; oz < p.od; oz = oz + 1) {
      let iz = oz * p.sd - p.pd + a * p.dd;
      let vz = iz >= 0 && iz < p.d;
      for (var oy = 0; oy < p.oh; oy = oy + 1) {
        let iy = oy * p.sh - p.ph + b * p.dh;
        let vy = vz && iy >= 0 && iy < p.h;
        for (var ox = 0; ox < p.ow; ox = ox + 1) {
          let ix = ox * p.sw - p.pw + j * p.dw;
          var xv = 0.0;
          if (vy && ix >= 0 && ix < p.w) { xv = x[xbase + u32((iz * p.h + iy) * p.w + ix)]; }
          s = s + g[gi] * xv;
          gi = gi + 1u;
        }
      }
    }
    acc = acc + s;
  }
  dw[i] = acc;
}
)WGSL";

// grad_b[c] = Σ_{n, q} g[n, c, q], one invocation per channel, Neumaier-compensated (the Cpu
// sums in double; a non-finite sum is returned as it is).
const char* const kBiasBackward = R"WGSL(
struct Q { channels: u32, batch: u32, spatial: u32 }
@group(0) @binding(0) var<storage, read> g: array<f32>;
@group(0) @binding(1) var<storage, read_write> db: array<f32>;
@group(0) @binding(2) var<uniform> q: Q;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let c = flat_index(gid, nwg, 256u);
  if (c >= q.channels) { return; }
  var sum = 0.0;
  var comp = 0.0;
  for (var nb = 0u; nb < q.batch; nb = nb + 1u) {
    let base = (nb * q.channels + c) * q.spatial;
    for (var k = 0u; k < q.spatial; k = k + 1u) {
      let v = g[base + k];
      let t = sum + v;
      if (abs(sum) >= abs(v)) { comp = comp + ((sum - t) + v); } else { comp = comp + ((v - t) + sum); }
      sum = t;
    }
  }
  db[c] = select(sum, sum + comp, is_finite_f32(sum));
}
)WGSL";

const char* const kCopy = R"WGSL(
struct Q { n: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> q: Q;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i < q.n) { dst[i] = src[i]; }
}
)WGSL";

const wgpu::Kernel& conv_kernel(const char* body, int nread, int nrw) {
  return wgpu::kernel(std::string(wgpu::kPrelude) + kConvHeader + body, nread, nrw, true);
}

/// `t`'s buffer, or a copy of it when one of `others` shares it (a dispatch binds a buffer
/// once; conv2d(x, x) is legal when the shapes allow it).
std::shared_ptr<wgpu::Buffer> distinct(const char* op, const WgpuTensor& t,
                                       std::initializer_list<const WgpuTensor*> others) {
  bool shared = false;
  for (const WgpuTensor* other : others) shared |= other->buffer_ptr() == t.buffer_ptr();
  if (!shared) return t.buffer_ptr();
  auto copy = wgpu::allocate(op, t.num_bytes());
  const std::int64_t n = t.num_elements();
  if (n > 0) {
    struct {
      std::uint32_t n;
    } q{static_cast<std::uint32_t>(n)};
    const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + kCopy, 1, 1, true);
    wgpu::dispatch(k, {&t.buffer(), copy.get()}, q, wgpu::groups_for(n));
  }
  return copy;
}

/// The kernels' parameters of `g` for n invocations. Throws LimitError naming `op` when a
/// position the kernels compute (from -padding to the last output's last tap, and input
/// position + padding) does not fit their 32-bit integers; the element counts always fit
/// (checked::max_elements is 2^31 - 1).
ConvParams params_of(const char* op, const Geometry& g, std::int64_t n, bool has_bias,
                     std::size_t spatial_dims) {
  struct Axis {
    std::int64_t in, kernel, out, stride, pad, dilation;
  };
  const std::array<Axis, 3> axes{
      Axis{g.depth, g.kernel_d, g.depth_out, g.stride_d, g.pad_d, g.dilation_d},
      Axis{g.height, g.kernel_h, g.height_out, g.stride_h, g.pad_h, g.dilation_h},
      Axis{g.width, g.kernel_w, g.width_out, g.stride_w, g.pad_w, g.dilation_w}};
  for (std::size_t a = 3 - spatial_dims; a < 3; ++a) {
    const Axis& x = axes[a];
    // (out - 1)·stride + (kernel - 1)·dilation + in + pad, each term >= 0
    std::int64_t reach = 0, span = 0, total = 0;
    const bool overflow =
        __builtin_mul_overflow(std::max<std::int64_t>(x.out - 1, 0), x.stride, &reach) ||
        __builtin_mul_overflow(x.kernel - 1, x.dilation, &span) ||
        __builtin_add_overflow(reach, span, &total) ||
        __builtin_add_overflow(total, x.in, &total) || __builtin_add_overflow(total, x.pad, &total);
    if (overflow || total > INT32_MAX || x.stride > INT32_MAX || x.dilation > INT32_MAX) {
      const char* what = " exceed the webgpu kernels' 32-bit range (more than 2^31 - 1): input ";
      throw_error<LimitError>(op, ": positions in spatial dim ", a - (3 - spatial_dims), what, x.in,
                              ", output ", x.out, ", kernel ", x.kernel, ", stride ", x.stride,
                              ", padding ", x.pad, ", dilation ", x.dilation);
    }
  }
  auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  ConvParams p{};
  p.n = u(n);
  p.batch = u(g.batch);
  p.channels_in = u(g.channels_in);
  p.channels_out = u(g.channels_out);
  p.cg = u(g.channels_in / g.groups);
  p.og = u(g.channels_out / g.groups);
  p.has_bias = has_bias ? 1u : 0u;
  for (std::size_t a = 0; a < 3; ++a) {
    p.in[a] = static_cast<std::int32_t>(axes[a].in);
    p.kernel[a] = static_cast<std::int32_t>(axes[a].kernel);
    p.out[a] = static_cast<std::int32_t>(axes[a].out);
    p.stride[a] = static_cast<std::int32_t>(axes[a].stride);
    p.pad[a] = static_cast<std::int32_t>(axes[a].pad);
    p.dilation[a] = static_cast<std::int32_t>(axes[a].dilation);
  }
  return p;
}

/// kForward of `g` over x and weight (+ bias) -> a new tensor of `shape` (the output side).
WgpuTensor run_forward(const char* op, const Geometry& g, std::size_t spatial_dims,
                       const WgpuTensor& x, const WgpuTensor& weight,
                       const std::optional<WgpuTensor>& bias, Shape shape) {
  const std::int64_t n = shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n == 0) return WgpuTensor(shape, DType::F32, std::move(out));
  const ConvParams p = params_of(op, g, n, bias.has_value(), spatial_dims);
  const auto w_buf = distinct(op, weight, {&x});
  const auto b_buf = bias ? distinct(op, *bias, {&x, &weight}) : wgpu::allocate(op, 4);
  wgpu::dispatch(conv_kernel(kForward, 3, 1), {&x.buffer(), w_buf.get(), b_buf.get(), out.get()}, p,
                 wgpu::groups_for(n));
  return WgpuTensor(shape, DType::F32, std::move(out));
}

/// kXBackward of `g` over output_grad and weight (+ bias) -> a new tensor of `shape` (the
/// input side).
WgpuTensor run_x_backward(const char* op, const Geometry& g, std::size_t spatial_dims,
                          const WgpuTensor& output_grad, const WgpuTensor& weight,
                          const std::optional<WgpuTensor>& bias, Shape shape) {
  const std::int64_t n = shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n == 0) return WgpuTensor(shape, DType::F32, std::move(out));
  const ConvParams p = params_of(op, g, n, bias.has_value(), spatial_dims);
  const auto w_buf = distinct(op, weight, {&output_grad});
  const auto b_buf = bias ? distinct(op, *bias, {&output_grad, &weight}) : wgpu::allocate(op, 4);
  wgpu::dispatch(conv_kernel(kXBackward, 3, 1),
                 {&output_grad.buffer(), w_buf.get(), b_buf.get(), out.get()}, p,
                 wgpu::groups_for(n));
  return WgpuTensor(shape, DType::F32, std::move(out));
}

/// kWeightBackward of `g` over x and output_grad -> a new tensor of `shape` (the weight's).
WgpuTensor run_weight_backward(const char* op, const Geometry& g, std::size_t spatial_dims,
                               const WgpuTensor& x, const WgpuTensor& output_grad, Shape shape) {
  const std::int64_t n = shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n == 0) return WgpuTensor(shape, DType::F32, std::move(out));
  const ConvParams p = params_of(op, g, n, false, spatial_dims);
  const auto g_buf = distinct(op, output_grad, {&x});
  wgpu::dispatch(conv_kernel(kWeightBackward, 2, 1), {&x.buffer(), g_buf.get(), out.get()}, p,
                 wgpu::groups_for(n));
  return WgpuTensor(shape, DType::F32, std::move(out));
}

template <std::size_t N>
WgpuTensor conv(const char* op, const WgpuTensor& x, const WgpuTensor& weight,
                const std::optional<WgpuTensor>& bias, const ConvOptions<N>& options) {
  wgpu::check(op);
  const Geometry g = cpu::ops::check_conv<N>(op, conv_operand(x), conv_operand(weight),
                                             conv_operand(bias), options);
  return run_forward(op, g, N, x, weight, bias, cpu::ops::output_side_shape<N>(g));
}

template <std::size_t N>
WgpuTensor conv_x_backward(const char* op, const Shape& x_shape, const WgpuTensor& weight,
                           const WgpuTensor& output_grad, const ConvOptions<N>& options) {
  wgpu::check(op);
  const Geometry g =
      cpu::ops::conv_backward_geometry<N>(x_shape, weight.shape(), output_grad.shape(), options);
  return run_x_backward(op, g, N, output_grad, weight, std::nullopt, x_shape);
}

template <std::size_t N>
WgpuTensor conv_weight_backward(const char* op, const WgpuTensor& x, const Shape& weight_shape,
                                const WgpuTensor& output_grad, const ConvOptions<N>& options) {
  wgpu::check(op);
  const Geometry g =
      cpu::ops::conv_backward_geometry<N>(x.shape(), weight_shape, output_grad.shape(), options);
  return run_weight_backward(op, g, N, x, output_grad, weight_shape);
}

template <std::size_t N>
WgpuTensor conv_transpose(const char* op, const WgpuTensor& x, const WgpuTensor& weight,
                          const std::optional<WgpuTensor>& bias,
                          const ConvTransposeOptions<N>& options) {
  wgpu::check(op);
  const Geometry g = cpu::ops::check_conv_transpose<N>(op, conv_operand(x), conv_operand(weight),
                                                       conv_operand(bias), options);
  return run_x_backward(op, g, N, x, weight, bias, cpu::ops::input_side_shape<N>(g));
}

// The transposed convolution's gradients: those of its adjoint convolution (input
// output_grad, output x), as the Cpu's.
template <std::size_t N>
WgpuTensor conv_transpose_x_backward(const char* op, const Shape& x_shape, const WgpuTensor& weight,
                                     const WgpuTensor& output_grad,
                                     const ConvTransposeOptions<N>& options) {
  wgpu::check(op);
  const Geometry g = cpu::ops::conv_transpose_backward_geometry<N>(x_shape, weight.shape(),
                                                                   output_grad.shape(), options);
  return run_forward(op, g, N, output_grad, weight, std::nullopt, x_shape);
}

template <std::size_t N>
WgpuTensor conv_transpose_weight_backward(const char* op, const WgpuTensor& x,
                                          const Shape& weight_shape, const WgpuTensor& output_grad,
                                          const ConvTransposeOptions<N>& options) {
  wgpu::check(op);
  const Geometry g = cpu::ops::conv_transpose_backward_geometry<N>(x.shape(), weight_shape,
                                                                   output_grad.shape(), options);
  return run_weight_backward(op, g, N, output_grad, x, weight_shape);
}

}  // namespace

WgpuTensor WgpuOps::conv1d(const WgpuTensor& x, const WgpuTensor& weight,
                           const std::optional<WgpuTensor>& bias, const ConvOptions<1>& options) {
  return conv<1>("conv1d", x, weight, bias, options);
}

WgpuTensor WgpuOps::conv2d(const WgpuTensor& x, const WgpuTensor& weight,
                           const std::optional<WgpuTensor>& bias, const ConvOptions<2>& options) {
  return conv<2>("conv2d", x, weight, bias, options);
}

WgpuTensor WgpuOps::conv2d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                      const WgpuTensor& output_grad,
                                      const ConvOptions<2>& options) {
  return conv_x_backward<2>("conv2d_x_backward", x_shape, weight, output_grad, options);
}

WgpuTensor WgpuOps::conv2d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                           const WgpuTensor& output_grad,
                                           const ConvOptions<2>& options) {
  return conv_weight_backward<2>("conv2d_weight_backward", x, weight_shape, output_grad, options);
}

WgpuTensor WgpuOps::conv_bias_backward(const WgpuTensor& output_grad) {
  const char* op = "conv_bias_backward";
  wgpu::check(op);
  // The Cpu's sizes: output_grad [batch, channels, spatial...] (from a checked forward).
  const Shape& s = output_grad.shape();
  const std::int64_t spatial = s[1] == 0 || s[0] == 0 ? 0 : s.num_elements() / (s[0] * s[1]);
  const Shape shape{s[1]};
  auto out = wgpu::allocate(op, static_cast<std::size_t>(s[1]) * 4);
  if (s[1] > 0) {
    struct {
      std::uint32_t channels, batch, spatial;
    } q{static_cast<std::uint32_t>(s[1]), static_cast<std::uint32_t>(s[0]),
        static_cast<std::uint32_t>(spatial)};
    const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + kBiasBackward, 1, 1, true);
    wgpu::dispatch(k, {&output_grad.buffer(), out.get()}, q, wgpu::groups_for(s[1]));
  }
  return WgpuTensor(shape, DType::F32, std::move(out));
}

WgpuTensor WgpuOps::conv_transpose2d(const WgpuTensor& x, const WgpuTensor& weight,
                                     const std::optional<WgpuTensor>& bias,
                                     const ConvTransposeOptions<2>& options) {
  return conv_transpose<2>("conv_transpose2d", x, weight, bias, options);
}

WgpuTensor WgpuOps::conv_transpose2d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                                const WgpuTensor& output_grad,
                                                const ConvTransposeOptions<2>& options) {
  return conv_transpose_x_backward<2>("conv_transpose2d_x_backward", x_shape, weight, output_grad,
                                      options);
}

WgpuTensor WgpuOps::conv_transpose2d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                                     const WgpuTensor& output_grad,
                                                     const ConvTransposeOptions<2>& options) {
  return conv_transpose_weight_backward<2>("conv_transpose2d_weight_backward", x, weight_shape,
                                           output_grad, options);
}

WgpuTensor WgpuOps::conv3d(const WgpuTensor& x, const WgpuTensor& weight,
                           const std::optional<WgpuTensor>& bias, const ConvOptions<3>& options) {
  return conv<3>("conv3d", x, weight, bias, options);
}

WgpuTensor WgpuOps::conv3d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                      const WgpuTensor& output_grad,
                                      const ConvOptions<3>& options) {
  return conv_x_backward<3>("conv3d_x_backward", x_shape, weight, output_grad, options);
}

WgpuTensor WgpuOps::conv3d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                           const WgpuTensor& output_grad,
                                           const ConvOptions<3>& options) {
  return conv_weight_backward<3>("conv3d_weight_backward", x, weight_shape, output_grad, options);
}

WgpuTensor WgpuOps::conv_transpose1d(const WgpuTensor& x, const WgpuTensor& weight,
                                     const std::optional<WgpuTensor>& bias,
                                     const ConvTransposeOptions<1>& options) {
  return conv_transpose<1>("conv_transpose1d", x, weight, bias, options);
}

WgpuTensor WgpuOps::conv_transpose3d(const WgpuTensor& x, const WgpuTensor& weight,
                                     const std::optional<WgpuTensor>& bias,
                                     const ConvTransposeOptions<3>& options) {
  return conv_transpose<3>("conv_transpose3d", x, weight, bias, options);
}

WgpuTensor WgpuOps::conv_transpose3d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                                const WgpuTensor& output_grad,
                                                const ConvTransposeOptions<3>& options) {
  return conv_transpose_x_backward<3>("conv_transpose3d_x_backward", x_shape, weight, output_grad,
                                      options);
}

WgpuTensor WgpuOps::conv_transpose3d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                                     const WgpuTensor& output_grad,
                                                     const ConvTransposeOptions<3>& options) {
  return conv_transpose_weight_backward<3>("conv_transpose3d_weight_backward", x, weight_shape,
                                           output_grad, options);
}

}  // namespace kiln
