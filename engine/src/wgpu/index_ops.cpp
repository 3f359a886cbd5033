// Indexing ops of the Wgpu backend: select (torch.index_select), select_assign
// (torch.index_add), gather, scatter (torch.scatter_add), one_hot, as WGSL kernels with the
// Cpu backend's semantics (engine/src/cpu/ops/index_ops.cpp) and checks
// (engine/src/backend/index_checks.hpp).
//
// Every kernel writes each output element from one invocation, so there are no atomics and
// the accumulating ops are deterministic: select_assign and scatter are written in gather
// form (each output element adds the values whose index hits it, in the Cpu's order, so
// the f32 sums round as the Cpu's do).
//
// Index values: when the index tensor keeps its host copy (it came from from_data), the
// Cpu's range check runs on that copy and throws the same IndexError. Otherwise the values
// exist only on the device and cannot be checked synchronously: a check kernel (kCheck)
// records a bad one in the device-check flags (wgpu::check_flags), and the next read rejects
// with KilnError `Index` naming the op and the value. The kernels never read or write out of
// bounds: an index out of range is skipped (select and gather write 0 for it, select_assign
// and scatter add nothing, one_hot writes a row of zeros), values the read then reports.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/index_checks.hpp"
#include "kiln/core/check.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

// dtype codes of the kernels: 0 f32, 1 i32, 2 bool (one u32 each).
std::uint32_t kind_of(DType d) { return d == DType::F32 ? 0u : d == DType::I32 ? 1u : 2u; }

std::uint32_t u32(std::int64_t v) { return static_cast<std::uint32_t>(v); }

/// The values of an i32 index tensor's host copy (the caller checked the dtype).
std::span<const std::int32_t> host_indices(const WgpuTensor& indices) {
  return {reinterpret_cast<const std::int32_t*>(indices.host()->bytes.data()),
          static_cast<std::size_t>(indices.num_elements())};
}

/// Product of dims [first, last) of s.
std::int64_t prod(const Shape& s, std::size_t first, std::size_t last) {
  std::int64_t p = 1;
  for (std::size_t k = first; k < last; ++k) p *= s[k];
  return p;
}

// Helpers of every kernel below.
//   accumulate(a, b, kind)  a + b as the Cpu's accumulate: f32 adds, i32 adds with
//                           two's-complement wrap-around (u32 addition), bool ors
//   normalized(v, size)     an index of [-size, size) mapped to [0, size), else -1
const char* const kCommon = R"WGSL(
fn accumulate(a: u32, b: u32, kind: u32) -> u32 {
  if (kind == 0u) { return bitcast<u32>(bitcast<f32>(a) + bitcast<f32>(b)); }
  if (kind == 1u) { return a + b; }
  return a | b;
}
fn normalized(v: i32, size: u32) -> i32 {
  let s = i32(size);
  let w = select(v, v + s, v < 0);
  return select(-1, w, w >= 0 && w < s);
}
)WGSL";

std::string source(const char* body) { return std::string(wgpu::kPrelude) + kCommon + body; }

// The device check of values with no host copy (wgpu::check_flags): every value must be what
// p.mode says (wgpu::DeviceCheckMode); a bad one sets the op's bit and records itself.
const char* const kCheck = R"WGSL(
struct P { n: u32, size: u32, bit: u32, mode: u32 }
@group(0) @binding(0) var<storage, read> v: array<u32>;
@group(0) @binding(1) var<storage, read_write> flags: array<atomic<u32>, 4>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let b = v[i];
  var ok = false;
  if (p.mode == 2u) {
    let f = bitcast<f32>(b);
    ok = is_finite_f32(f) && f >= 0.0 && f < f32(p.size) && floor(f) == f;
  } else {
    let x = bitcast<i32>(b);
    let s = i32(p.size);
    ok = x < s && (x >= 0 || (p.mode == 1u && x >= -s));
  }
  if (!ok) {
    atomicOr(&flags[0], p.bit);
    atomicStore(&flags[1], b);
    atomicStore(&flags[2], p.size);
    atomicStore(&flags[3], p.mode);
  }
}
)WGSL";

struct CheckParams {
  std::uint32_t n, size, bit, mode;
};

/// Records the device check of `values` (no host copy) against `size` (see kCheck).
void check_on_device(const WgpuTensor& values, std::int64_t size, wgpu::DeviceCheck bit,
                     wgpu::DeviceCheckMode mode) {
  const std::int64_t n = values.num_elements();
  if (n == 0) return;
  const CheckParams p{u32(n), u32(size), bit, mode};
  wgpu::dispatch(wgpu::kernel(source(kCheck), 1, 1, true), {&values.buffer(), &wgpu::check_flags()}, p,
                 wgpu::groups_for(n));
}

// select: x viewed as [outer, size, inner], out as [outer, count, inner].
const char* const kSelect = R"WGSL(
struct P { n: u32, inner: u32, count: u32, size: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> idx: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let k = i % p.inner;
  let t = i / p.inner;
  let v = normalized(idx[t % p.count], p.size);
  if (v < 0) { out[i] = 0u; return; }
  out[i] = x[((t / p.count) * p.size + u32(v)) * p.inner + k];
}
)WGSL";

// select_assign's inverse index, built on the device when the indices have no host copy:
// csr[0 .. size] the offsets (csr[j] .. csr[j + 1] are the positions of the indices that
// hit j), csr[size + 1 ..] those positions in increasing order. Three passes: count the hits
// of each j, an exclusive scan of the counts in one workgroup, list the positions.
const char* const kCsrCount = R"WGSL(
struct P { size: u32, count: u32 }
@group(0) @binding(0) var<storage, read> idx: array<i32>;
@group(0) @binding(1) var<storage, read_write> csr: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let j = flat_index(gid, nwg, 256u);
  if (j >= p.size) { return; }
  var c = 0u;
  for (var i = 0u; i < p.count; i++) {
    if (normalized(idx[i], p.size) == i32(j)) { c++; }
  }
  csr[j] = c;
}
)WGSL";

const char* const kCsrScan = R"WGSL(
struct P { size: u32, count: u32 }
@group(0) @binding(0) var<storage, read> idx: array<i32>;
@group(0) @binding(1) var<storage, read_write> csr: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
var<workgroup> part: array<u32, 256>;
@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
  let t = lid.x;
  let chunk = (p.size + 255u) / 256u;
  let lo = min(t * chunk, p.size);
  let hi = min(lo + chunk, p.size);
  var s = 0u;
  for (var j = lo; j < hi; j++) { s += csr[j]; }
  part[t] = s;
  workgroupBarrier();
  if (t == 0u) {
    var run = 0u;
    for (var k = 0u; k < 256u; k++) {
      let v = part[k];
      part[k] = run;
      run += v;
    }
    csr[p.size] = run;
  }
  workgroupBarrier();
  var run = part[t];
  for (var j = lo; j < hi; j++) {
    let v = csr[j];
    csr[j] = run;
    run += v;
  }
}
)WGSL";

const char* const kCsrFill = R"WGSL(
struct P { size: u32, count: u32 }
@group(0) @binding(0) var<storage, read> idx: array<i32>;
@group(0) @binding(1) var<storage, read_write> csr: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let j = flat_index(gid, nwg, 256u);
  if (j >= p.size) { return; }
  var at = p.size + 1u + csr[j];
  for (var i = 0u; i < p.count; i++) {
    if (normalized(idx[i], p.size) == i32(j)) {
      csr[at] = i;
      at++;
    }
  }
}
)WGSL";

// select_assign: out [outer, size, inner] = x plus, for each index position q that hits j
// (increasing q, the Cpu's order), values[outer, q, inner].
const char* const kSelectAssign = R"WGSL(
struct P { n: u32, inner: u32, count: u32, size: u32, kind: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> values: array<u32>;
@group(0) @binding(2) var<storage, read> csr: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let k = i % p.inner;
  let t = i / p.inner;
  let j = t % p.size;
  let base = (t / p.size) * p.count;
  var acc = x[i];
  let hi = csr[j + 1u];
  for (var q = csr[j]; q < hi; q++) {
    let s = csr[p.size + 1u + q];
    acc = accumulate(acc, values[(base + s) * p.inner + k], p.kind);
  }
  out[i] = acc;
}
)WGSL";

// gather: out (indices' shape) = x at the same position with dim replaced by the index.
const char* const kGather = R"WGSL(
struct P { rank: u32, dim: u32, n: u32, size: u32,
           shape: array<vec4<u32>, 2>, xstride: array<vec4<u32>, 2> }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> idx: array<i32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  var rem = i;
  var off = 0u;
  for (var k = p.rank; k > 0u; k--) {
    let d = k - 1u;
    let e = p.shape[d / 4u][d % 4u];
    if (d != p.dim) { off += (rem % e) * p.xstride[d / 4u][d % 4u]; }
    rem = rem / e;
  }
  let v = idx[i];
  if (v < 0 || u32(v) >= p.size) { out[i] = 0u; return; }
  out[i] = x[off + u32(v) * p.xstride[p.dim / 4u][p.dim % 4u]];
}
)WGSL";

// scatter: out (x's shape) = x plus, for each position of indices that matches the output
// position outside dim and whose index is the output's coordinate along dim (increasing
// coordinate along dim, the Cpu's order), the value at that position.
const char* const kScatter = R"WGSL(
struct P { rank: u32, dim: u32, n: u32, len: u32, kind: u32, pad0: u32, pad1: u32, pad2: u32,
           xshape: array<vec4<u32>, 2>, ishape: array<vec4<u32>, 2>,
           istride: array<vec4<u32>, 2>, vstride: array<vec4<u32>, 2> }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> idx: array<i32>;
@group(0) @binding(2) var<storage, read> values: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<u32>;
@group(0) @binding(4) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  var rem = i;
  var bi = 0u;
  var bv = 0u;
  var coord = 0u;
  var inside = true;
  for (var k = p.rank; k > 0u; k--) {
    let d = k - 1u;
    let e = p.xshape[d / 4u][d % 4u];
    let c = rem % e;
    rem = rem / e;
    if (d == p.dim) {
      coord = c;
    } else {
      if (c >= p.ishape[d / 4u][d % 4u]) { inside = false; }
      bi += c * p.istride[d / 4u][d % 4u];
      bv += c * p.vstride[d / 4u][d % 4u];
    }
  }
  var acc = x[i];
  if (inside) {
    let si = p.istride[p.dim / 4u][p.dim % 4u];
    let sv = p.vstride[p.dim / 4u][p.dim % 4u];
    for (var t = 0u; t < p.len; t++) {
      if (idx[bi + t * si] == i32(coord)) { acc = accumulate(acc, values[bv + t * sv], p.kind); }
    }
  }
  out[i] = acc;
}
)WGSL";

// one_hot: out [..., classes] is 1 where the class of x (a whole f32 >= 0, an i32 >= 0,
// a bool) is the last coordinate.
const char* const kOneHot = R"WGSL(
struct P { n: u32, classes: u32, kind: u32 }
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  let b = x[i / p.classes];
  let c = i % p.classes;
  var hit = false;
  if (p.kind == 0u) {
    let f = bitcast<f32>(b);
    if (is_finite_f32(f) && f >= 0.0 && f < 4294967296.0 && trunc(f) == f) { hit = u32(f) == c; }
  } else if (p.kind == 1u) {
    let v = bitcast<i32>(b);
    hit = v >= 0 && u32(v) == c;
  } else {
    hit = b == c;
  }
  out[i] = select(0u, select(1u, 0x3f800000u, p.kind == 0u), hit);
}
)WGSL";

struct SelectParams {
  std::uint32_t n, inner, count, size;
};
struct CsrParams {
  std::uint32_t size, count;
};
struct SelectAssignParams {
  std::uint32_t n, inner, count, size, kind;
};
struct GatherParams {
  std::uint32_t rank, dim, n, size;
  std::uint32_t shape[8], xstride[8];
};
struct ScatterParams {
  std::uint32_t rank, dim, n, len, kind, pad[3];
  std::uint32_t xshape[8], ishape[8], istride[8], vstride[8];
};
struct OneHotParams {
  std::uint32_t n, classes, kind;
};

/// select_assign's inverse index (see kCsrCount) of `count` indices over [0, size): built
/// on the host from the checked indices when they have a host copy, else on the device.
std::shared_ptr<wgpu::Buffer> inverse_index(const char* op, const WgpuTensor& indices,
                                            const std::vector<std::int64_t>* host,
                                            std::int64_t size) {
  const std::int64_t count = indices.num_elements();
  const auto entries = static_cast<std::size_t>(size + 1 + count);
  if (host) {
    std::vector<std::uint32_t> csr(entries, 0);
    for (const std::int64_t j : *host) ++csr[static_cast<std::size_t>(j) + 1];
    for (std::size_t j = 1; j <= static_cast<std::size_t>(size); ++j) csr[j] += csr[j - 1];
    std::vector<std::uint32_t> at(csr.begin(), csr.begin() + static_cast<std::ptrdiff_t>(size));
    for (std::int64_t q = 0; q < count; ++q) {
      const auto j = static_cast<std::size_t>((*host)[static_cast<std::size_t>(q)]);
      csr[static_cast<std::size_t>(size + 1) + at[j]++] = u32(q);
    }
    return wgpu::upload(op, csr.data(), csr.size() * 4);
  }
  auto csr = wgpu::allocate(op, entries * 4);
  const CsrParams p{u32(size), u32(count)};
  const auto groups = wgpu::groups_for(size);
  wgpu::dispatch(wgpu::kernel(source(kCsrCount), 1, 1, true), {&indices.buffer(), csr.get()}, p,
                 groups);
  wgpu::dispatch(wgpu::kernel(source(kCsrScan), 1, 1, true), {&indices.buffer(), csr.get()}, p,
                 {1, 1, 1});
  wgpu::dispatch(wgpu::kernel(source(kCsrFill), 1, 1, true), {&indices.buffer(), csr.get()}, p,
                 groups);
  return csr;
}

void put(std::uint32_t* dst, const Shape& s) {
  for (std::size_t k = 0; k < s.rank(); ++k) dst[k] = u32(s[k]);
}
void put(std::uint32_t* dst, const std::array<std::int64_t, Shape::max_rank>& strides,
         std::size_t rank) {
  for (std::size_t k = 0; k < rank; ++k) dst[k] = u32(strides[k]);
}

}  // namespace

WgpuTensor WgpuOps::select(const WgpuTensor& x, std::int64_t dim, const WgpuTensor& indices) {
  const char* op = "select";
  wgpu::check(op);
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim(op, dim, s.rank()));
  index_check::rank1_indices(op, indices.dtype(), indices.shape());
  if (indices.host()) {
    index_check::normalized_rank1(op, host_indices(indices), dim, s[d], s);
  } else {
    check_on_device(indices, s[d], wgpu::kCheckSelect, wgpu::kIndexFromEnd);
  }
  Shape out_shape = s;
  out_shape[d] = indices.num_elements();
  const std::int64_t n = out_shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    const SelectParams p{u32(n), u32(prod(s, d + 1, s.rank())), u32(indices.num_elements()),
                         u32(s[d])};
    wgpu::dispatch(wgpu::kernel(source(kSelect), 2, 1, true),
                   {&x.buffer(), &indices.buffer(), out.get()}, p, wgpu::groups_for(n));
  }
  return WgpuTensor(out_shape, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::select_assign(WgpuTensor x, std::int64_t dim, const WgpuTensor& indices,
                                  const WgpuTensor& values) {
  const char* op = "select_assign";
  wgpu::check(op);
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim(op, dim, s.rank()));
  index_check::rank1_indices(op, indices.dtype(), indices.shape());
  std::vector<std::int64_t> host;
  if (indices.host()) host = index_check::normalized_rank1(op, host_indices(indices), dim, s[d], s);
  index_check::same_dtype(op, x.dtype(), values.dtype());
  const std::int64_t count = indices.num_elements();
  index_check::select_assign_values(s, dim, d, count, values.shape());
  if (!indices.host()) check_on_device(indices, s[d], wgpu::kCheckSelectAssign, wgpu::kIndexFromEnd);
  if (values.num_elements() == 0) return x;
  const std::int64_t n = x.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    const auto csr = inverse_index(op, indices, indices.host() ? &host : nullptr, s[d]);
    const SelectAssignParams p{u32(n), u32(prod(s, d + 1, s.rank())), u32(count), u32(s[d]),
                               kind_of(x.dtype())};
    wgpu::dispatch(wgpu::kernel(source(kSelectAssign), 3, 1, true),
                   {&x.buffer(), &values.buffer(), csr.get(), out.get()}, p, wgpu::groups_for(n));
  }
  return WgpuTensor(s, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::gather(const WgpuTensor& x, std::int64_t dim, const WgpuTensor& indices) {
  const char* op = "gather";
  wgpu::check(op);
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim(op, dim, s.rank()));
  const Shape& is = indices.shape();
  index_check::gather_indices(s, d, indices.dtype(), is);
  if (indices.host()) {
    index_check::index_range(op, host_indices(indices), dim, s[d], s);
  } else {
    check_on_device(indices, s[d], wgpu::kCheckGather, wgpu::kIndexFromZero);
  }
  const std::int64_t n = is.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    GatherParams p{};
    p.rank = u32(s.rank());
    p.dim = u32(d);
    p.n = u32(n);
    p.size = u32(s[d]);
    put(p.shape, is);
    put(p.xstride, s.strides(), s.rank());
    wgpu::dispatch(wgpu::kernel(source(kGather), 2, 1, true),
                   {&x.buffer(), &indices.buffer(), out.get()}, p, wgpu::groups_for(n));
  }
  return WgpuTensor(is, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::scatter(WgpuTensor x, std::int64_t dim, const WgpuTensor& indices,
                            const WgpuTensor& values) {
  const char* op = "scatter";
  wgpu::check(op);
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim(op, dim, s.rank()));
  const Shape& is = indices.shape();
  const Shape& vs = values.shape();
  index_check::scatter_args(s, x.dtype(), d, indices.dtype(), is, values.dtype(), vs);
  if (indices.host()) {
    index_check::index_range(op, host_indices(indices), dim, s[d], s);
  } else {
    check_on_device(indices, s[d], wgpu::kCheckScatter, wgpu::kIndexFromZero);
  }
  if (indices.num_elements() == 0) return x;
  const std::int64_t n = x.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    ScatterParams p{};
    p.rank = u32(s.rank());
    p.dim = u32(d);
    p.n = u32(n);
    p.len = u32(is[d]);
    p.kind = kind_of(x.dtype());
    put(p.xshape, s);
    put(p.ishape, is);
    put(p.istride, is.strides(), is.rank());
    put(p.vstride, vs.strides(), vs.rank());
    wgpu::dispatch(wgpu::kernel(source(kScatter), 3, 1, true),
                   {&x.buffer(), &indices.buffer(), &values.buffer(), out.get()}, p,
                   wgpu::groups_for(n));
  }
  return WgpuTensor(s, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::one_hot(const WgpuTensor& x, std::int64_t num_classes) {
  const char* op = "one_hot";
  wgpu::check(op);
  const Shape out_shape = index_check::one_hot_shape(x.shape(), num_classes);
  if (x.host()) {
    index_check::one_hot_classes(x.dtype(), x.host()->bytes.data(), x.num_elements(), x.shape(),
                                 num_classes, nullptr);
  } else {
    check_on_device(x, num_classes, wgpu::kCheckOneHot,
                    x.dtype() == DType::F32 ? wgpu::kWholeFloat : wgpu::kIndexFromZero);
  }
  const std::int64_t n = out_shape.num_elements();
  auto out = wgpu::allocate(op, static_cast<std::size_t>(n) * 4);
  if (n > 0) {
    const OneHotParams p{u32(n), u32(num_classes), kind_of(x.dtype())};
    wgpu::dispatch(wgpu::kernel(source(kOneHot), 1, 1, true), {&x.buffer(), out.get()}, p,
                   wgpu::groups_for(n));
  }
  return WgpuTensor(out_shape, x.dtype(), std::move(out));
}

std::optional<WgpuTensor> Wgpu::device_checks_failed() {
  if (!wgpu::check_flags_made()) return std::nullopt;
  wgpu::check("device_checks_failed");
  const WgpuTensor flags(Shape{4}, DType::I32, wgpu::check_flags_buffer());
  const Slice first[] = {Slice(0, 1)};
  return WgpuOps::compare_scalar(CompareOp::NotEqual, WgpuOps::slice(flags, first), 0.0);
}

}  // namespace kiln
