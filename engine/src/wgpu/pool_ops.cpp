// Pooling ops of the Wgpu backend (NCHW, f32): max_pool2d (with indices), avg_pool2d,
// adaptive_avg_pool2d and their backward passes, as WGSL kernels with the Cpu backend's
// semantics (engine/src/cpu/ops/pool_ops.cpp) and checks (engine/src/backend/pool_checks.hpp,
// pool::check_* of kiln/backend/pool_options.hpp).
//
// The windows of each output row and column are computed on the host, in int64 as the Cpu
// does, and uploaded as a small table (kept for later calls with the same sizes and
// options): the kernels then only loop over valid window elements, whatever the options.
// The backward passes are gathers (each input element sums the gradients of the windows
// that cover it, in the Cpu's order of output positions), so there are no atomics and the
// results are deterministic.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "backend/pool_checks.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

/// The table `make()` builds for `key`, uploaded once and kept (training loops pool the same
/// sizes every step); at most 64 tables are kept.
template <class Make>
std::shared_ptr<wgpu::Buffer> table(const char* op, const std::string& key, Make make) {
  static std::unordered_map<std::string, std::shared_ptr<wgpu::Buffer>> cache;
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const std::vector<std::uint32_t> t = make();
  auto buffer = wgpu::upload(op, t.data(), t.size() * 4);
  if (cache.size() >= 64) cache.clear();
  cache.emplace(key, buffer);
  return buffer;
}

// ---- max pool

/// The valid taps of a dilated window starting at `start` over [0, size) (the Cpu's Taps):
/// {first input index, number of taps}; tap k reads first + k·dilation.
std::array<std::uint32_t, 2> max_taps(std::int64_t start, std::int64_t kernel,
                                      std::int64_t dilation, std::int64_t size) {
  const std::int64_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const std::int64_t past = size - 1 - start;  // last valid offset
  std::int64_t last = past < 0 ? 0 : std::min(kernel, past / dilation + 1);
  if (last <= first) return {0, 0};
  return {u32(start + first * dilation), u32(last - first)};
}

/// [rows: first, count][columns: first, count] of max_pool2d's windows.
std::shared_ptr<wgpu::Buffer> max_table(const char* op, const Shape& x, const Shape& out,
                                        const MaxPool2dOptions& o) {
  const std::string key = str_cat("max ", x[2], " ", x[3], " ", out[2], " ", out[3], " ", o);
  return table(op, key, [&] {
    std::vector<std::uint32_t> t;
    t.reserve(static_cast<std::size_t>(2 * (out[2] + out[3])));
    for (int axis = 0; axis < 2; ++axis) {
      for (std::int64_t i = 0; i < out[2 + axis]; ++i) {
        const auto taps = max_taps(i * o.stride[axis] - o.padding[axis], o.kernel_size[axis],
                                   o.dilation[axis], x[2 + axis]);
        t.push_back(taps[0]);
        t.push_back(taps[1]);
      }
    }
    return t;
  });
}

// The max of each window, the first in row-major order on ties; a nan is the max (and a
// later nan replaces it), as the Cpu's `v > best || isnan(v)` (explicit bit tests: WGSL may
// assume finite math). Values move as bits, so nan payloads and subnormals are kept.
// INDEX_BINDING / INDEX_STORE: the indices output of max_pool2d_with_indices, or nothing.
const char* const kMaxPool = R"WGSL(
struct P { n: u32, out_h: u32, out_w: u32, width: u32, in_plane: u32, dh: u32, dw: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> tab: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
INDEX_BINDING
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let j = i % p.out_w;
  let t = i / p.out_w;
  let r = t % p.out_h;
  let base = (t / p.out_h) * p.in_plane;
  let fh = tab[2u * r];
  let ch = tab[2u * r + 1u];
  let fw = tab[2u * p.out_h + 2u * j];
  let cw = tab[2u * p.out_h + 2u * j + 1u];
  var best = bitcast<u32>(-inf_f32());
  var at = -1;
  if (ch > 0u && cw > 0u) { at = i32(fh * p.width + fw); }
  for (var a = 0u; a < ch; a++) {
    let row = (fh + a * p.dh) * p.width + fw;
    for (var b = 0u; b < cw; b++) {
      let pos = row + b * p.dw;
      let v = x[base + pos];
      let vf = bitcast<f32>(v);
      let bf = bitcast<f32>(best);
      if (is_nan_f32(vf) || (!is_nan_f32(bf) && vf > bf)) {
        best = v;
        at = i32(pos);
      }
    }
  }
  out[i] = best;
  INDEX_STORE
}
)WGSL";

struct MaxPoolParams {
  std::uint32_t n, out_h, out_w, width, in_plane, dh, dw, pad;
};

std::pair<WgpuTensor, WgpuTensor> max_pool(const char* op, const WgpuTensor& x,
                                           const MaxPool2dOptions& o, bool with_indices) {
  wgpu::check(op);
  const Shape out_shape = pool::check_max_pool2d_input(op, x.dtype(), x.shape(), o);
  const Shape& s = x.shape();
  const std::int64_t n = out_shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  std::shared_ptr<wgpu::Buffer> indices;
  if (with_indices) indices = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    const auto tab = max_table(op, s, out_shape, o);
    // A dilation only matters when a window has two taps in the input, so it is < height
    // (width) then; clamped so that it fits the kernel's u32.
    const MaxPoolParams p{u32(n),
                          u32(out_shape[2]),
                          u32(out_shape[3]),
                          u32(s[3]),
                          u32(s[2] * s[3]),
                          u32(std::min(o.dilation[0], s[2])),
                          u32(std::min(o.dilation[1], s[3])),
                          0};
    std::string wgsl = std::string(wgpu::kPrelude) + kMaxPool;
    const std::string binding =
        with_indices ? "@group(0) @binding(3) var<storage, read_write> idx: array<i32>;\n"
                       "@group(0) @binding(4) var<uniform> p: P;"
                     : "@group(0) @binding(3) var<uniform> p: P;";
    wgsl.replace(wgsl.find("INDEX_BINDING"), 13, binding);
    wgsl.replace(wgsl.find("INDEX_STORE"), 11, with_indices ? "idx[i] = at;" : "");
    if (with_indices) {
      wgpu::dispatch(wgpu::kernel(wgsl, 2, 2, true),
                     {&x.buffer(), tab.get(), out.get(), indices.get()}, p, wgpu::groups_for(n));
    } else {
      wgpu::dispatch(wgpu::kernel(wgsl, 2, 1, true), {&x.buffer(), tab.get(), out.get()}, p,
                     wgpu::groups_for(n));
    }
  }
  WgpuTensor values(out_shape, DType::F32, std::move(out));
  if (!with_indices) return {std::move(values), WgpuTensor()};
  return {std::move(values), WgpuTensor(out_shape, DType::I32, std::move(indices))};
}

// max_pool2d_backward, pass 1: per plane, the range of input rows the indices of each output
// row point at, and of input columns for each output column ({lo, hi}, inclusive; {max, -1}
// when none is valid). Indices outside the plane (-1: a window with no input element) are
// skipped, as the Cpu skips them.
const char* const kMaxBounds = R"WGSL(
struct P { n: u32, out_h: u32, out_w: u32, width: u32, in_plane: u32 }
@group(0) @binding(0) var<storage, read> idx: array<i32>;
@group(0) @binding(1) var<storage, read_write> bounds: array<i32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let t = flat_index(gid, nwg, 256u);
  if (t >= p.n) { return; }
  let per = p.out_h + p.out_w;
  let r = t % per;
  let ob = (t / per) * p.out_h * p.out_w;
  var lo = 2147483647;
  var hi = -1;
  if (r < p.out_h) {
    for (var j = 0u; j < p.out_w; j++) {
      let at = idx[ob + r * p.out_w + j];
      if (at >= 0 && u32(at) < p.in_plane) {
        let h = i32(u32(at) / p.width);
        lo = min(lo, h);
        hi = max(hi, h);
      }
    }
  } else {
    let j = r - p.out_h;
    for (var i = 0u; i < p.out_h; i++) {
      let at = idx[ob + i * p.out_w + j];
      if (at >= 0 && u32(at) < p.in_plane) {
        let w = i32(u32(at) % p.width);
        lo = min(lo, w);
        hi = max(hi, w);
      }
    }
  }
  bounds[2u * t] = lo;
  bounds[2u * t + 1u] = hi;
}
)WGSL";

// max_pool2d_backward, pass 2: each input element sums, from 0 and in increasing output
// position (the Cpu's order), the gradients of the outputs whose index is that element; only
// outputs whose row and column bounds cover it are looked at.
const char* const kMaxBackward = R"WGSL(
struct P { n: u32, out_h: u32, out_w: u32, width: u32, in_plane: u32 }
@group(0) @binding(0) var<storage, read> grad: array<f32>;
@group(0) @binding(1) var<storage, read> idx: array<i32>;
@group(0) @binding(2) var<storage, read> bounds: array<i32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = flat_index(gid, nwg, 256u);
  if (e >= p.n) { return; }
  let plane = e / p.in_plane;
  let at = e % p.in_plane;
  let h = i32(at / p.width);
  let w = i32(at % p.width);
  let rb = plane * (p.out_h + p.out_w) * 2u;
  let cb = rb + 2u * p.out_h;
  var jlo = p.out_w;
  var jhi = 0u;
  for (var j = 0u; j < p.out_w; j++) {
    if (bounds[cb + 2u * j] <= w && w <= bounds[cb + 2u * j + 1u]) {
      jlo = min(jlo, j);
      jhi = j + 1u;
    }
  }
  let ob = plane * p.out_h * p.out_w;
  var acc = 0.0;
  for (var i = 0u; i < p.out_h; i++) {
    if (bounds[rb + 2u * i] <= h && h <= bounds[rb + 2u * i + 1u]) {
      for (var j = jlo; j < jhi; j++) {
        let k = ob + i * p.out_w + j;
        if (idx[k] == i32(at)) { acc = acc + grad[k]; }
      }
    }
  }
  out[e] = acc;
}
)WGSL";

struct MaxBackwardParams {
  std::uint32_t n, out_h, out_w, width, in_plane;
};

// ---- average pools

/// [rows: lo, hi][columns: lo, hi][1/divisor of each output element, f32 bits]: the Cpu's
/// AvgSpan and avg_scales (a window with no input element has scale 0).
struct Span {
  std::int64_t lo, hi, padded;
};
std::vector<std::uint32_t> avg_table(const std::vector<Span>& rows, const std::vector<Span>& cols,
                                     bool count_include_pad) {
  std::vector<std::uint32_t> t;
  t.reserve(2 * (rows.size() + cols.size()) + rows.size() * cols.size());
  for (const auto* spans : {&rows, &cols}) {
    for (const Span& s : *spans) {
      t.push_back(u32(s.lo));
      t.push_back(u32(s.hi));
    }
  }
  for (const Span& r : rows) {
    for (const Span& c : cols) {
      const std::int64_t inside = (r.hi - r.lo) * (c.hi - c.lo);
      const std::int64_t divisor = count_include_pad ? r.padded * c.padded : inside;
      const float scale = (r.lo >= r.hi || c.lo >= c.hi) ? 0.f : 1.f / static_cast<float>(divisor);
      std::uint32_t bits;
      std::memcpy(&bits, &scale, 4);
      t.push_back(bits);
    }
  }
  return t;
}

std::vector<Span> avg_spans(std::int64_t out, std::int64_t kernel, std::int64_t stride,
                            std::int64_t padding, std::int64_t size) {
  std::vector<Span> spans(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    const std::int64_t start = i * stride - padding;
    const std::int64_t end = std::min(start + kernel, size + padding);
    spans[static_cast<std::size_t>(i)] = {std::max<std::int64_t>(start, 0), std::min(end, size),
                                          end - start};
  }
  return spans;
}

std::vector<Span> adaptive_spans(std::int64_t out, std::int64_t size) {
  std::vector<Span> spans(static_cast<std::size_t>(out));
  for (std::int64_t i = 0; i < out; ++i) {
    const std::int64_t lo = pool::adaptive_start(i, size, out);
    const std::int64_t hi = pool::adaptive_end(i, size, out);
    spans[static_cast<std::size_t>(i)] = {lo, hi, hi - lo};
  }
  return spans;
}

std::shared_ptr<wgpu::Buffer> avg_pool_table(const char* op, const Shape& x, const Shape& out,
                                             const AvgPool2dOptions& o) {
  const std::string key = str_cat("avg ", x[2], " ", x[3], " ", out[2], " ", out[3], " ", o);
  return table(op, key, [&] {
    return avg_table(avg_spans(out[2], o.kernel_size[0], o.stride[0], o.padding[0], x[2]),
                     avg_spans(out[3], o.kernel_size[1], o.stride[1], o.padding[1], x[3]),
                     o.count_include_pad);
  });
}

std::shared_ptr<wgpu::Buffer> adaptive_table(const char* op, const Shape& x, const Shape& out) {
  const std::string key = str_cat("adaptive ", x[2], " ", x[3], " ", out[2], " ", out[3]);
  return table(op, key, [&] {
    return avg_table(adaptive_spans(out[2], x[2]), adaptive_spans(out[3], x[3]), true);
  });
}

// The sum of each window in row-major order (the Cpu's), times its scale.
const char* const kWindowMean = R"WGSL(
struct P { n: u32, out_h: u32, out_w: u32, width: u32, in_plane: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> tab: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let j = i % p.out_w;
  let t = i / p.out_w;
  let r = t % p.out_h;
  let base = (t / p.out_h) * p.in_plane;
  let c0 = 2u * p.out_h + 2u * j;
  var sum = 0.0;
  for (var h = tab[2u * r]; h < tab[2u * r + 1u]; h++) {
    let row = base + h * p.width;
    for (var w = tab[c0]; w < tab[c0 + 1u]; w++) { sum = sum + x[row + w]; }
  }
  out[i] = sum * bitcast<f32>(tab[2u * (p.out_h + p.out_w) + r * p.out_w + j]);
}
)WGSL";

// Each input element sums grad · scale of the windows that cover it, from 0, in increasing
// output position (the Cpu's order). Window bounds never decrease along a row or column of
// outputs, so the windows covering an index are a run found by binary search.
const char* const kWindowMeanBackward = R"WGSL(
struct P { n: u32, out_h: u32, out_w: u32, width: u32, in_plane: u32 }
@group(0) @binding(0) var<storage, read> grad: array<f32>;
@group(0) @binding(1) var<storage, read> tab: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: P;
// The first of `count` windows at tab[base + 2k] = {lo, hi} with hi > v.
fn first_past(base: u32, count: u32, v: u32) -> u32 {
  var lo = 0u;
  var hi = count;
  loop {
    if (lo >= hi) { break; }
    let mid = (lo + hi) / 2u;
    if (tab[base + 2u * mid + 1u] > v) { hi = mid; } else { lo = mid + 1u; }
  }
  return lo;
}
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let e = flat_index(gid, nwg, 256u);
  if (e >= p.n) { return; }
  let plane = e / p.in_plane;
  let at = e % p.in_plane;
  let h = at / p.width;
  let w = at % p.width;
  let cb = 2u * p.out_h;
  let sb = 2u * (p.out_h + p.out_w);
  let gb = plane * p.out_h * p.out_w;
  let j0 = first_past(cb, p.out_w, w);
  var acc = 0.0;
  for (var r = first_past(0u, p.out_h, h); r < p.out_h; r++) {
    if (tab[2u * r] > h) { break; }
    for (var j = j0; j < p.out_w; j++) {
      if (tab[cb + 2u * j] > w) { break; }
      let k = r * p.out_w + j;
      let g = grad[gb + k] * bitcast<f32>(tab[sb + k]);
      acc = acc + g;
    }
  }
  out[e] = acc;
}
)WGSL";

struct WindowParams {
  std::uint32_t n, out_h, out_w, width, in_plane;
};

/// Runs kWindowMean of x over `tab` into a new tensor of out_shape.
WgpuTensor window_mean(const char* op, const WgpuTensor& x, const Shape& out_shape,
                       const std::shared_ptr<wgpu::Buffer>& tab) {
  const Shape& s = x.shape();
  const std::int64_t n = out_shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    const WindowParams p{u32(n), u32(out_shape[2]), u32(out_shape[3]), u32(s[3]), u32(s[2] * s[3])};
    wgpu::dispatch(wgpu::kernel(std::string(wgpu::kPrelude) + kWindowMean, 2, 1, true),
                   {&x.buffer(), tab.get(), out.get()}, p, wgpu::groups_for(n));
  }
  return WgpuTensor(out_shape, DType::F32, std::move(out));
}

/// Runs kWindowMeanBackward of grad (shape out_shape) over `tab` into a tensor of x_shape.
WgpuTensor window_mean_backward(const char* op, const Shape& x_shape, const WgpuTensor& grad,
                                const Shape& out_shape, const std::shared_ptr<wgpu::Buffer>& tab) {
  const std::int64_t n = x_shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    const WindowParams p{u32(n), u32(out_shape[2]), u32(out_shape[3]), u32(x_shape[3]),
                         u32(x_shape[2] * x_shape[3])};
    wgpu::dispatch(wgpu::kernel(std::string(wgpu::kPrelude) + kWindowMeanBackward, 2, 1, true),
                   {&grad.buffer(), tab.get(), out.get()}, p, wgpu::groups_for(n));
  }
  return WgpuTensor(x_shape, DType::F32, std::move(out));
}

}  // namespace

WgpuTensor WgpuOps::max_pool2d(const WgpuTensor& x, const MaxPool2dOptions& options) {
  return max_pool("max_pool2d", x, options, false).first;
}

std::pair<WgpuTensor, WgpuTensor> WgpuOps::max_pool2d_with_indices(
    const WgpuTensor& x, const MaxPool2dOptions& options) {
  return max_pool("max_pool2d_with_indices", x, options, true);
}

WgpuTensor WgpuOps::max_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad,
                                        const WgpuTensor& indices) {
  const char* op = "max_pool2d_backward";
  wgpu::check(op);
  pool::check_max_pool2d_backward(x_shape, grad.dtype(), grad.shape(), indices.dtype(),
                                  indices.shape());
  const std::int64_t planes = x_shape[0] * x_shape[1];
  const std::int64_t out_h = grad.shape()[2], out_w = grad.shape()[3];
  if (planes == 0 || out_h * out_w == 0 || x_shape.num_elements() == 0) {
    return full(x_shape, 0.0, DType::F32, {});
  }
  const std::int64_t in_plane = x_shape[2] * x_shape[3];
  const std::int64_t n_bounds = planes * (out_h + out_w);
  auto bounds = wgpu::allocate(op, static_cast<std::size_t>(n_bounds) * 8);
  const MaxBackwardParams pb{u32(n_bounds), u32(out_h), u32(out_w), u32(x_shape[3]), u32(in_plane)};
  wgpu::dispatch(wgpu::kernel(std::string(wgpu::kPrelude) + kMaxBounds, 1, 1, true),
                 {&indices.buffer(), bounds.get()}, pb, wgpu::groups_for(n_bounds));
  const std::int64_t n = x_shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  const MaxBackwardParams p{u32(n), u32(out_h), u32(out_w), u32(x_shape[3]), u32(in_plane)};
  wgpu::dispatch(wgpu::kernel(std::string(wgpu::kPrelude) + kMaxBackward, 3, 1, true),
                 {&grad.buffer(), &indices.buffer(), bounds.get(), out.get()}, p,
                 wgpu::groups_for(n));
  return WgpuTensor(x_shape, DType::F32, std::move(out));
}

WgpuTensor WgpuOps::avg_pool2d(const WgpuTensor& x, const AvgPool2dOptions& options) {
  const char* op = "avg_pool2d";
  wgpu::check(op);
  const Shape out_shape = pool::check_avg_pool2d_input(x.dtype(), x.shape(), options);
  if (out_shape.num_elements() == 0)
    return WgpuTensor(out_shape, DType::F32, wgpu::allocate(op, 0));
  return window_mean(op, x, out_shape, avg_pool_table(op, x.shape(), out_shape, options));
}

WgpuTensor WgpuOps::avg_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad,
                                        const AvgPool2dOptions& options) {
  const char* op = "avg_pool2d_backward";
  wgpu::check(op);
  const Shape out_shape =
      pool::check_avg_pool2d_backward(x_shape, grad.dtype(), grad.shape(), options);
  if (x_shape.num_elements() == 0) return WgpuTensor(x_shape, DType::F32, wgpu::allocate(op, 0));
  return window_mean_backward(op, x_shape, grad, out_shape,
                              avg_pool_table(op, x_shape, out_shape, options));
}

WgpuTensor WgpuOps::adaptive_avg_pool2d(const WgpuTensor& x,
                                        const std::array<std::int64_t, 2>& output_size) {
  const char* op = "adaptive_avg_pool2d";
  wgpu::check(op);
  const Shape out_shape = pool::check_adaptive_avg_pool2d_input(x.dtype(), x.shape(), output_size);
  if (out_shape.num_elements() == 0)
    return WgpuTensor(out_shape, DType::F32, wgpu::allocate(op, 0));
  return window_mean(op, x, out_shape, adaptive_table(op, x.shape(), out_shape));
}

WgpuTensor WgpuOps::adaptive_avg_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad) {
  const char* op = "adaptive_avg_pool2d_backward";
  wgpu::check(op);
  const Shape out_shape =
      pool::check_adaptive_avg_pool2d_backward(x_shape, grad.dtype(), grad.shape());
  if (x_shape.num_elements() == 0) return WgpuTensor(x_shape, DType::F32, wgpu::allocate(op, 0));
  return window_mean_backward(op, x_shape, grad, out_shape, adaptive_table(op, x_shape, out_shape));
}

}  // namespace kiln
