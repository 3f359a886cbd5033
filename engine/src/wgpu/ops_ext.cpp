// The ops of kiln/tensor/ops_ext.hpp (norm, var/std, amax/amin, pad, tril/triu, cumsum,
// linspace, einsum) on the Wgpu backend and Autodiff<Wgpu>: engine/src/tensor/ops_ext.cpp
// instantiated for Wgpu (the same checks, formulas and backward rules as on Cpu), plus the
// one kernel that file leaves to the backend, cumsum's loop over lines.
#include <cstdint>
#include <string>

#include "kiln/core/error.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln::ops {
namespace {

// Cumulative sum along d of a float32 or int32 tensor, from the end when `reverse`. The
// tensor is seen as [outer, n, inner] around d; each of the outer·inner lines is one GPU
// thread that adds its n elements in order, as the Cpu loop does (the same f32 sums, so the
// same values; int32 wraps, as WGSL's i32 addition does).
const char* const kCumsum = R"WGSL(
struct P { n: u32, inner: u32, lines: u32, reverse: u32 }
@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> out: array<T>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let r = flat_index(gid, nwg, 256u);
  if (r >= p.lines) { return; }
  let base = (r / p.inner) * p.n * p.inner + r % p.inner;
  var acc = T(0);
  for (var t = 0u; t < p.n; t++) {
    var k = t;
    if (p.reverse != 0u) { k = p.n - 1u - t; }
    let e = base + k * p.inner;
    acc = acc + x[e];
    out[e] = acc;
  }
}
)WGSL";

WgpuTensor cumsum_lines(const WgpuTensor& x, std::int64_t d, bool reverse) {
  const char* const op = "cumsum";
  wgpu::check(op);
  const Shape& s = x.shape();
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t i = 0; i < d; ++i) outer *= s[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(d) + 1; i < s.rank(); ++i) inner *= s[i];
  const std::int64_t n = s[static_cast<std::size_t>(d)];
  auto out = wgpu::allocate(op, x.num_bytes());
  const std::int64_t lines = outer * inner;
  if (x.num_elements() > 0) {
    const std::string type = x.dtype() == DType::F32 ? "alias T = f32;\n" : "alias T = i32;\n";
    const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + type + kCumsum, 1, 1, true);
    struct {
      std::uint32_t n, inner, lines, reverse;
    } p{static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(inner),
        static_cast<std::uint32_t>(lines), reverse ? 1u : 0u};
    wgpu::dispatch(k, {&x.buffer(), out.get()}, p, wgpu::groups_for(lines));
  }
  return WgpuTensor(s, x.dtype(), std::move(out));
}

}  // namespace
}  // namespace kiln::ops

#define KILN_OPS_EXT_BACKEND Wgpu
#include "tensor/ops_ext.cpp"
