// Shape and joining ops of the Wgpu backend: reshape, permute, expand, repeat_dim, flip,
// slice, slice_assign, cat (kiln/wgpu/wgpu.hpp). All are dtype-generic: every dtype is one
// 32-bit word per element on the device (bool as u32), so the kernel copies u32 words.
//
// The checks and shape inference are the Cpu backend's (cpu/ops/shape_checks.hpp): the same
// errors, the same messages. reshape never copies (the output shares x's buffer); the others
// are one "strided copy" each (cat one per input): the kernel walks a layout in row-major
// order, turning each position into a source and a destination offset through per-dim
// strides (negative for flips and backward slices, zero for broadcast dims). The host first
// drops size-1 dims and merges dims that are contiguous on both sides, as the Cpu backend's
// copy does, so most copies run at rank 1 to 3. Like the Cpu backend, an op whose result
// is x itself (a whole slice, a flip of size-1 dims, repeat_dim by 1, a permute moving only
// size-1 dims) returns x or a view of its buffer without copying.
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "cpu/ops/shape_checks.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/runtime.hpp"

namespace kiln {
namespace {

using namespace cpu::ops;  // the shared checks

constexpr std::size_t kMaxRank = Shape::max_rank;

/// A copy of `shape` elements between two strided layouts (element strides, any sign; the
/// offsets of position 0 are src_base and dst_base).
struct Layout {
  std::size_t rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> src{};
  std::array<std::int64_t, kMaxRank> dst{};
  std::int64_t src_base = 0;
  std::int64_t dst_base = 0;

  void push(std::int64_t size, std::int64_t src_stride, std::int64_t dst_stride) {
    shape[rank] = size;
    src[rank] = src_stride;
    dst[rank] = dst_stride;
    ++rank;
  }
  std::int64_t num_elements() const {
    std::int64_t n = 1;
    for (std::size_t d = 0; d < rank; ++d) n *= shape[d];
    return n;
  }
  /// Drops size-1 dims and merges neighbours that are contiguous on both sides; the result
  /// walks the same elements in the same order.
  Layout simplified() const {
    Layout out;
    out.src_base = src_base;
    out.dst_base = dst_base;
    for (std::size_t d = 0; d < rank; ++d) {
      if (shape[d] == 1) continue;
      if (out.rank > 0) {
        const std::size_t b = out.rank - 1;
        if (out.src[b] == src[d] * shape[d] && out.dst[b] == dst[d] * shape[d]) {
          out.shape[b] *= shape[d];
          out.src[b] = src[d];
          out.dst[b] = dst[d];
          continue;
        }
      }
      out.push(shape[d], src[d], dst[d]);
    }
    return out;
  }
};

// out[dst offset of position i] = x[src offset of position i], for the n positions of the
// layout's shape (row-major). Offsets are computed in wrapping u32 arithmetic: strides may
// be negative (two's complement), every final offset lies in [0, 2^31).
const char* const kStridedCopy = R"WGSL(
struct P {
  n: u32, rank: u32, src_base: u32, dst_base: u32,
  shape: array<vec4<u32>, 2>,
  src: array<vec4<u32>, 2>,
  dst: array<vec4<u32>, 2>,
}
@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = flat_index(gid, nwg, 256u);
  if (i >= p.n) { return; }
  var rest = i;
  var s = p.src_base;
  var o = p.dst_base;
  for (var d = p.rank; d > 0u; d--) {
    let k = d - 1u;
    let size = p.shape[k / 4u][k % 4u];
    let idx = rest % size;
    rest = rest / size;
    s += idx * p.src[k / 4u][k % 4u];
    o += idx * p.dst[k / 4u][k % 4u];
  }
  out[o] = x[s];
}
)WGSL";

struct CopyParams {
  std::uint32_t n, rank, src_base, dst_base;
  std::uint32_t shape[kMaxRank], src[kMaxRank], dst[kMaxRank];
};
static_assert(sizeof(CopyParams) == 112);

/// Records the copy of `layout` from `src` into `dst` (no dispatch for no elements).
void strided_copy(const wgpu::Buffer& src, const wgpu::Buffer& dst, const Layout& layout) {
  const Layout g = layout.simplified();
  const std::int64_t n = g.num_elements();
  if (n == 0) return;
  CopyParams p{};
  p.n = static_cast<std::uint32_t>(n);
  p.rank = static_cast<std::uint32_t>(g.rank);
  p.src_base = static_cast<std::uint32_t>(g.src_base);
  p.dst_base = static_cast<std::uint32_t>(g.dst_base);
  for (std::size_t d = 0; d < g.rank; ++d) {
    p.shape[d] = static_cast<std::uint32_t>(g.shape[d]);
    p.src[d] = static_cast<std::uint32_t>(g.src[d]);  // two's complement when negative
    p.dst[d] = static_cast<std::uint32_t>(g.dst[d]);
  }
  const auto& k = wgpu::kernel(std::string(wgpu::kPrelude) + kStridedCopy, 1, 1, true);
  wgpu::dispatch(k, {&src, &dst}, p, wgpu::groups_for(n));
}

/// A new output buffer for a tensor of `shape`, after the Cpu backend's allocation check
/// (CpuTensor's constructor: LimitError "tensor: ..." past the element limit).
std::shared_ptr<wgpu::Buffer> allocate(const char* op, const Shape& shape, DType dtype) {
  cpu::check_allocation("tensor", shape, dtype);
  return wgpu::allocate(op, static_cast<std::size_t>(shape.num_elements()) * 4);
}

}  // namespace

// ------------------------------------------------------------------ reshape

WgpuTensor WgpuOps::reshape(WgpuTensor x, std::span<const std::int64_t> dims) {
  wgpu::check("reshape");
  // No copy: the new tensor shares x's buffer (as the Cpu backend's reshape).
  return x.with_shape(reshape_shape(x.shape(), dims));
}

// ------------------------------------------------------------------ permute

WgpuTensor WgpuOps::permute(const WgpuTensor& x, std::span<const std::int64_t> axes) {
  wgpu::check("permute");
  const Shape& s = x.shape();
  const Shape out_shape = permute_shape(s, axes);
  const auto xs = s.strides();
  const auto os = out_shape.strides();
  Layout layout;
  for (std::size_t i = 0; i < s.rank(); ++i) {
    layout.push(out_shape[i], xs[static_cast<std::size_t>(axes[i])], os[i]);
  }
  const Layout g = layout.simplified();
  // Only size-1 dims move (or nothing does): the words are already in the output's order.
  if (x.num_elements() == 0 || g.rank == 0 || (g.rank == 1 && g.src[0] == 1)) {
    return x.with_shape(out_shape);
  }
  auto out = allocate("permute", out_shape, x.dtype());
  strided_copy(x.buffer(), *out, g);
  return WgpuTensor(out_shape, x.dtype(), std::move(out));
}

// ------------------------------------------------------------------ expand, repeat, flip

WgpuTensor WgpuOps::expand(const WgpuTensor& x, std::span<const std::int64_t> dims) {
  wgpu::check("expand");
  const Shape& s = x.shape();
  const Shape out_shape = expand_shape(s, dims);
  if (out_shape.num_elements() == x.num_elements()) return x.with_shape(out_shape);
  auto out = allocate("expand", out_shape, x.dtype());
  const std::size_t lead = dims.size() - s.rank();
  const auto xs = s.strides();
  const auto os = out_shape.strides();
  Layout layout;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const bool broadcast = i < lead || s[i - lead] != out_shape[i];
    layout.push(out_shape[i], broadcast ? 0 : xs[i - lead], os[i]);
  }
  strided_copy(x.buffer(), *out, layout);
  return WgpuTensor(out_shape, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::repeat_dim(const WgpuTensor& x, std::int64_t dim, std::int64_t times) {
  wgpu::check("repeat_dim");
  const Shape& s = x.shape();
  std::size_t d = 0;
  const Shape out_shape = repeat_dim_shape(s, dim, times, &d);
  if (times == 1) return x;
  auto out = allocate("repeat_dim", out_shape, x.dtype());
  if (out_shape.num_elements() > 0) {
    // [outer, times, block]: every outer index holds one block (dims d.. of x), written
    // `times` in a row.
    std::int64_t outer = 1;
    for (std::size_t i = 0; i < d; ++i) outer *= s[i];
    const std::int64_t block = x.num_elements() / outer;
    Layout layout;
    layout.push(outer, block, times * block);
    layout.push(times, 0, block);
    layout.push(block, 1, 1);
    strided_copy(x.buffer(), *out, layout);
  }
  return WgpuTensor(out_shape, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::flip(const WgpuTensor& x, std::span<const std::int64_t> dims) {
  wgpu::check("flip");
  const Shape& s = x.shape();
  const std::array<bool, kMaxRank> flipped = flip_dims(s, dims);
  const auto xs = s.strides();
  Layout layout;
  bool any = false;
  for (std::size_t d = 0; d < s.rank(); ++d) {
    const bool f = flipped[d] && s[d] > 1;
    any = any || f;
    if (f) layout.src_base += (s[d] - 1) * xs[d];
    layout.push(s[d], f ? -xs[d] : xs[d], xs[d]);
  }
  if (!any || x.num_elements() == 0) return x;  // nothing moves
  auto out = allocate("flip", s, x.dtype());
  strided_copy(x.buffer(), *out, layout);
  return WgpuTensor(s, x.dtype(), std::move(out));
}

// ------------------------------------------------------------------ slice

WgpuTensor WgpuOps::slice(const WgpuTensor& x, std::span<const Slice> ranges) {
  wgpu::check("slice");
  const SliceView v = slice_view("slice", x.shape(), ranges);
  if (v.whole) return x;
  auto out = allocate("slice", v.shape, x.dtype());
  const auto os = v.shape.strides();
  Layout layout;
  layout.src_base = v.offset;
  for (std::size_t d = 0; d < v.shape.rank(); ++d) layout.push(v.shape[d], v.strides[d], os[d]);
  strided_copy(x.buffer(), *out, layout);
  return WgpuTensor(v.shape, x.dtype(), std::move(out));
}

WgpuTensor WgpuOps::slice_assign(WgpuTensor x, std::span<const Slice> ranges,
                                 const WgpuTensor& values) {
  wgpu::check("slice_assign");
  const SliceView v = slice_view("slice_assign", x.shape(), ranges);
  check_slice_assign(v, x.shape(), x.dtype(), values.shape(), values.dtype());
  if (values.num_elements() == 0) return x;
  // Always a new buffer (x's may be shared, and never bound twice): x copied whole, then
  // values written over the slice, two dispatches in submission order.
  auto out = allocate("slice_assign", x.shape(), x.dtype());
  Layout whole;
  whole.push(x.num_elements(), 1, 1);
  strided_copy(x.buffer(), *out, whole);
  const auto vs = v.shape.strides();
  Layout layout;
  layout.dst_base = v.offset;
  for (std::size_t d = 0; d < v.shape.rank(); ++d) layout.push(v.shape[d], vs[d], v.strides[d]);
  strided_copy(values.buffer(), *out, layout);
  return WgpuTensor(x.shape(), x.dtype(), std::move(out));
}

// ------------------------------------------------------------------ cat

WgpuTensor WgpuOps::cat(std::span<const WgpuTensor> tensors, std::int64_t dim) {
  wgpu::check("cat");
  const auto [out_shape, d] = cat_plan(tensors, dim);
  const WgpuTensor& first = tensors.front();
  if (tensors.size() == 1) return first;
  auto out = allocate("cat", out_shape, first.dtype());
  const std::int64_t n = out_shape.num_elements();
  if (n > 0) {
    std::int64_t outer = 1;
    for (std::size_t k = 0; k < d; ++k) outer *= out_shape[k];
    // Per outer index, each input contributes one contiguous block (its dims d..), placed
    // after the blocks of the inputs before it: one copy [outer, block] per input.
    const std::int64_t row = n / outer;
    std::int64_t at = 0;
    for (const WgpuTensor& t : tensors) {
      const std::int64_t block = t.num_elements() / outer;
      if (block == 0) continue;
      Layout layout;
      layout.dst_base = at;
      layout.push(outer, block, row);
      layout.push(block, 1, 1);
      strided_copy(t.buffer(), *out, layout);
      at += block;
    }
  }
  return WgpuTensor(out_shape, first.dtype(), std::move(out));
}

}  // namespace kiln
