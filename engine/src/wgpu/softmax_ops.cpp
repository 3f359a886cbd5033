// softmax and log_softmax of the Wgpu backend along any dim (kiln/wgpu/wgpu.hpp), with the
// Cpu backend's semantics (cpu/kernels/softmax.hpp) and checks (cpu/ops/reduce_checks.hpp).
//
// The input is seen as [outer, n, inner] around dim; line r = o·inner + i holds the
// elements x[(o·n + k)·inner + i] (no permute). Three passes over each line: the max, the
// sum of exp(x - max), the outputs
//   softmax     = exp(x - max) · (1 / sum)
//   log_softmax = (x - max) - log1p(rest + count - 1)
// where log_softmax sums the entries below the max apart (rest) from the count of max
// entries, as the Cpu, so that a dominant entry's log-probability near 0 keeps its
// precision. Lines up to kSerialMax elements take one thread each; longer lines one
// workgroup of 256 threads each (strided loops, trees in workgroup memory for the max and
// the sums). Non-finite input is handled explicitly (WGSL may assume finite math): a nan,
// a +inf or a line of all -inf makes the whole line nan (the Cpu's IEEE results); -inf
// entries give exp 0 (log_softmax -inf).
#include <cstdint>
#include <string>

#include "cpu/ops/reduce_checks.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

constexpr std::uint32_t kSerialMax = 256;

const char* const kCommon = R"WGSL(
struct P { n: u32, inner: u32, total: u32, log: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
fn at(r: u32, k: u32) -> u32 { return ((r / p.inner) * p.n + k) * p.inner + r % p.inner; }
// exp(d) for d <= 0: 0 for -inf and below the f32 range.
fn exp_shift(d: f32) -> f32 {
  if (is_inf_f32(d) || d < -104.0) { return 0.0; }
  return exp(d);
}
// log(1 + u) for u >= 0, accurate near 0 (WGSL has no log1p): 2·atanh(u / (2 + u)) by its
// series for u < 1 (s <= 1/3, 9 terms: < 2^-24 relative), log(1 + u) above.
fn log1p_pos(u: f32) -> f32 {
  if (u >= 1.0) { return log(1.0 + u); }
  let s = u / (2.0 + u);
  let s2 = s * s;
  let q = 1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0 + s2 * (1.0 / 11.0 +
          s2 * (1.0 / 13.0 + s2 * (1.0 / 15.0 + s2 * (1.0 / 17.0)))))));
  return 2.0 * (s + s * s2 * q);
}
// The output at element v of a line with max m and sums (sum, cnt), or nan for a bad line.
fn result(v: f32, m: f32, sum: f32, cnt: f32, bad: bool) -> f32 {
  if (bad) { return nan_f32(); }
  if (p.log != 0u) { return (v - m) - log1p_pos(sum + (cnt - 1.0)); }
  return exp_shift(v - m) * (1.0 / sum);
}
)WGSL";

const char* const kSerial = R"WGSL(
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = flat_index(gid, nwg, 256u);
  if (r >= p.total) { return; }
  var m = -inf_f32();
  var bad = false;
  for (var k = 0u; k < p.n; k++) {
    let v = x[at(r, k)];
    if (is_nan_f32(v)) { bad = true; } else if (v > m) { m = v; }
  }
  bad = bad || is_inf_f32(m);
  var sum = 0.0;
  var cnt = 0.0;
  if (!bad) {
    for (var k = 0u; k < p.n; k++) {
      let v = x[at(r, k)];
      if (p.log != 0u && v == m) { cnt += 1.0; } else { sum += exp_shift(v - m); }
    }
  }
  for (var k = 0u; k < p.n; k++) {
    let e = at(r, k);
    out[e] = result(x[e], m, sum, cnt, bad);
  }
}
)WGSL";

// One array of workgroup memory for both trees (SwiftShader's compile time grows with it):
// .x the max (a nan reads as +inf: either makes the line nan), then .x the sum, .y the count.
const char* const kWorkgroup = R"WGSL(
var<workgroup> sh: array<vec2<f32>, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = wid.x + wid.y * nwg.x;
  if (r >= p.total) { return; }
  var m = -inf_f32();
  for (var k = li; k < p.n; k += 256u) {
    let v = x[at(r, k)];
    if (is_nan_f32(v)) { m = inf_f32(); } else if (v > m) { m = v; }
  }
  sh[li] = vec2<f32>(m, 0.0);
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (li < s && sh[li + s].x > sh[li].x) { sh[li].x = sh[li + s].x; }
    workgroupBarrier();
  }
  m = sh[0].x;
  workgroupBarrier();
  let bad = is_inf_f32(m);
  var sum = 0.0;
  var cnt = 0.0;
  if (!bad) {
    for (var k = li; k < p.n; k += 256u) {
      let v = x[at(r, k)];
      if (p.log != 0u && v == m) { cnt += 1.0; } else { sum += exp_shift(v - m); }
    }
  }
  sh[li] = vec2<f32>(sum, cnt);
  workgroupBarrier();
  for (var s = 128u; s > 0u; s >>= 1u) {
    if (li < s) { sh[li] = sh[li] + sh[li + s]; }
    workgroupBarrier();
  }
  sum = sh[0].x;
  cnt = sh[0].y;
  for (var k = li; k < p.n; k += 256u) {
    let e = at(r, k);
    out[e] = result(x[e], m, sum, cnt, bad);
  }
}
)WGSL";

WgpuTensor softmax_impl(const char* name, const WgpuTensor& x, std::int64_t dim, bool log) {
  wgpu::check(name);
  const Shape& shape = x.shape();
  const std::size_t d = cpu::ops::check_softmax(name, x.dtype(), shape, dim);
  std::uint32_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < d; ++i) outer *= static_cast<std::uint32_t>(shape[i]);
  for (std::size_t i = d + 1; i < shape.rank(); ++i) inner *= static_cast<std::uint32_t>(shape[i]);
  const auto n = static_cast<std::uint32_t>(shape[d]);
  auto out = wgpu::allocate(name, x.num_bytes());
  const std::uint32_t lines = outer * inner;
  if (x.num_elements() > 0) {
    const bool serial = n <= kSerialMax;
    const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + kCommon + (serial ? kSerial : kWorkgroup), 1, 1, true);
    struct { std::uint32_t n, inner, total, log; } p{n, inner, lines, log ? 1u : 0u};
    wgpu::dispatch(k, {&x.buffer(), out.get()}, p,
                   serial ? wgpu::groups_for(lines)
                          : wgpu::groups_for(static_cast<std::int64_t>(lines) * 256, 256));
  }
  return WgpuTensor(shape, DType::F32, std::move(out));
}

}  // namespace

WgpuTensor WgpuOps::softmax(WgpuTensor x, std::int64_t dim) {
  return softmax_impl("softmax", x, dim, false);
}

WgpuTensor WgpuOps::log_softmax(WgpuTensor x, std::int64_t dim) {
  return softmax_impl("log_softmax", x, dim, true);
}

}  // namespace kiln
