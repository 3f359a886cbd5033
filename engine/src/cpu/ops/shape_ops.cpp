// Shape and joining ops of the Cpu backend: reshape, permute, expand, repeat_dim, flip,
// slice, slice_assign, cat. All are dtype-generic (f32, i32, bool as uint8_t).
//
// Most of them are one "strided copy": the output (or, for slice_assign, the input) is
// walked in row-major order while the other side advances by arbitrary strides (negative
// for flips and backward slices, zero for broadcast dims). The copy first drops size-1
// dims and merges dims that are contiguous on both sides, then runs the innermost dim as
// a memcpy when both sides are unit-stride, a fill when the source stride is 0, and an
// element loop otherwise. permute sends the case "innermost output dim is not the
// innermost input dim" to the blocked transpose of cpu/kernels/transpose.hpp instead.
// The argument checks and shape inference are shape_checks.hpp's (shared with the Wgpu
// backend, so both throw the same messages).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>

#include "cpu/kernels/transpose.hpp"
#include "cpu/ops/shape_checks.hpp"
#include "cpu/ops/visit_dtype.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

constexpr std::size_t kMaxRank = Shape::max_rank;

using cpu::visit_dtype;
using namespace cpu::ops;  // the shared checks (shape_checks.hpp)

/// A copy of `shape` elements between two strided layouts (strides in elements, any sign).
struct Strided {
  std::size_t rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> src{};
  std::array<std::int64_t, kMaxRank> dst{};

  void push(std::int64_t size, std::int64_t src_stride, std::int64_t dst_stride) {
    shape[rank] = size;
    src[rank] = src_stride;
    dst[rank] = dst_stride;
    ++rank;
  }
  bool empty() const {
    for (std::size_t d = 0; d < rank; ++d) {
      if (shape[d] == 0) return true;
    }
    return false;
  }
  /// Drops size-1 dims and merges neighbours that are contiguous on both sides; the
  /// result walks the same elements in the same order.
  Strided simplified() const {
    Strided out;
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

/// Row-major strides of `shape`.
std::array<std::int64_t, kMaxRank> strides_of(const Shape& shape) { return shape.strides(); }

/// Copies one run of n elements.
template <class T>
inline void copy_run(const T* src, std::int64_t ss, T* dst, std::int64_t ds, std::int64_t n) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(n) * sizeof(T));
  } else if (ss == 0 && ds == 1) {
    std::fill(dst, dst + n, *src);
  } else if (ss == -1 && ds == 1) {
    for (std::int64_t i = 0; i < n; ++i) dst[i] = src[-i];
  } else if (ds == 1) {
    for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i * ss];
  } else if (ss == 1) {
    for (std::int64_t i = 0; i < n; ++i) dst[i * ds] = src[i];
  } else {
    for (std::int64_t i = 0; i < n; ++i) dst[i * ds] = src[i * ss];
  }
}

/// Walks every position of `g` (already simplified or not) and copies src -> dst.
template <class T>
void strided_copy(const T* src, T* dst, const Strided& layout) {
  if (layout.empty()) return;
  const Strided g = layout.simplified();
  if (g.rank == 0) {
    *dst = *src;
    return;
  }
  const std::size_t inner = g.rank - 1;
  std::int64_t outer = 1;
  for (std::size_t d = 0; d < inner; ++d) outer *= g.shape[d];
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t so = 0;
  std::int64_t dof = 0;
  for (std::int64_t o = 0; o < outer; ++o) {
    copy_run(src + so, g.src[inner], dst + dof, g.dst[inner], g.shape[inner]);
    for (std::size_t d = inner; d-- > 0;) {  // odometer over the outer dims
      so += g.src[d];
      dof += g.dst[d];
      if (++idx[d] < g.shape[d]) break;
      so -= g.src[d] * g.shape[d];
      dof -= g.dst[d] * g.shape[d];
      idx[d] = 0;
    }
  }
}

/// Copies a whole tensor into a new buffer (when an op must not write into a shared one).
CpuTensor copy_of(const CpuTensor& x) {
  CpuTensor out(x.shape(), x.dtype());
  if (x.num_bytes()) std::memcpy(out.data<std::uint8_t>(), x.data<std::uint8_t>(), x.num_bytes());
  return out;
}

}  // namespace

// ------------------------------------------------------------------ reshape

CpuTensor CpuOps::reshape(CpuTensor x, std::span<const std::int64_t> dims) {
  const Shape out_shape = reshape_shape(x.shape(), dims);
  // No copy: the new tensor shares x's buffer (Burn's reshape of a contiguous tensor).
  return x.with_shape(out_shape);
}

// ------------------------------------------------------------------ permute

CpuTensor CpuOps::permute(const CpuTensor& x, std::span<const std::int64_t> axes) {
  const Shape& s = x.shape();
  const std::size_t rank = s.rank();
  const Shape out_shape = permute_shape(s, axes);
  const auto xs = strides_of(s);
  const auto os = strides_of(out_shape);
  Strided layout;
  for (std::size_t i = 0; i < rank; ++i) {
    layout.push(out_shape[i], xs[static_cast<std::size_t>(axes[i])], os[i]);
  }
  const Strided g = layout.simplified();
  // Only size-1 dims move (or nothing does): the bytes are already in the output's order.
  if (layout.empty() || g.rank == 0 || (g.rank == 1 && g.src[0] == 1)) {
    return x.with_shape(out_shape);
  }
  CpuTensor out(out_shape, x.dtype());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    const std::size_t last = g.rank - 1;
    if (g.src[last] == 1) {  // inner runs stay contiguous: memcpy them
      strided_copy(src, dst, g);
      return;
    }
    // The output's innermost dim `last` walks x with a stride; the dim `k` that is
    // x's innermost (stride 1) lies further out. Transpose the (last, k) plane in tiles
    // for every position of the other dims.
    std::size_t k = 0;
    while (g.src[k] != 1) ++k;  // exists: x's innermost non-1 dim keeps stride 1
    Strided rest;
    for (std::size_t d = 0; d < last; ++d) {
      if (d != k) rest.push(g.shape[d], g.src[d], g.dst[d]);
    }
    std::int64_t outer = 1;
    for (std::size_t d = 0; d < rest.rank; ++d) outer *= rest.shape[d];
    std::array<std::int64_t, kMaxRank> idx{};
    std::int64_t so = 0;
    std::int64_t dof = 0;
    for (std::int64_t o = 0; o < outer; ++o) {
      cpu::kernels::transpose_2d(src + so, g.src[last], dst + dof, g.dst[k], g.shape[last],
                                 g.shape[k]);
      for (std::size_t d = rest.rank; d-- > 0;) {
        so += rest.src[d];
        dof += rest.dst[d];
        if (++idx[d] < rest.shape[d]) break;
        so -= rest.src[d] * rest.shape[d];
        dof -= rest.dst[d] * rest.shape[d];
        idx[d] = 0;
      }
    }
  });
  return out;
}

// ------------------------------------------------------------------ expand, repeat, flip

CpuTensor CpuOps::expand(const CpuTensor& x, std::span<const std::int64_t> dims) {
  const Shape& s = x.shape();
  const std::size_t rank = s.rank();
  const Shape out_shape = expand_shape(s, dims);
  const std::size_t lead = dims.size() - rank;
  if (out_shape.num_elements() == x.num_elements()) return x.with_shape(out_shape);
  CpuTensor out(out_shape, x.dtype());
  const auto xs = strides_of(s);
  const auto os = strides_of(out_shape);
  Strided layout;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const bool broadcast = i < lead || s[i - lead] != out_shape[i];
    layout.push(out_shape[i], broadcast ? 0 : xs[i - lead], os[i]);
  }
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_copy(x.data<T>(), out.data<T>(), layout);
  });
  return out;
}

CpuTensor CpuOps::repeat_dim(const CpuTensor& x, std::int64_t dim, std::int64_t times) {
  const Shape& s = x.shape();
  std::size_t d = 0;
  const Shape out_shape = repeat_dim_shape(s, dim, times, &d);
  if (times == 1) return x;
  CpuTensor out(out_shape, x.dtype());
  if (out.num_elements() == 0) return out;
  std::int64_t outer = 1;
  for (std::size_t i = 0; i < d; ++i) outer *= s[i];
  // Every outer index holds one block (dims d.. of x) that is written `times` in a row.
  const std::size_t block = x.num_bytes() / static_cast<std::size_t>(outer);
  const auto* src = x.data<std::uint8_t>();
  auto* dst = out.data<std::uint8_t>();
  for (std::int64_t o = 0; o < outer; ++o, src += block) {
    for (std::int64_t t = 0; t < times; ++t, dst += block) std::memcpy(dst, src, block);
  }
  return out;
}

CpuTensor CpuOps::flip(const CpuTensor& x, std::span<const std::int64_t> dims) {
  const Shape& s = x.shape();
  const std::array<bool, kMaxRank> flipped = flip_dims(s, dims);
  const auto xs = strides_of(s);
  Strided layout;
  std::int64_t offset = 0;
  bool any = false;
  for (std::size_t d = 0; d < s.rank(); ++d) {
    const bool f = flipped[d] && s[d] > 1;
    any = any || f;
    if (f) offset += (s[d] - 1) * xs[d];
    layout.push(s[d], f ? -xs[d] : xs[d], xs[d]);
  }
  if (!any || x.num_elements() == 0) return x;  // nothing moves
  CpuTensor out(s, x.dtype());
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_copy(x.data<T>() + offset, out.data<T>(), layout);
  });
  return out;
}

// ------------------------------------------------------------------ slice

CpuTensor CpuOps::slice(const CpuTensor& x, std::span<const Slice> ranges) {
  const SliceView v = slice_view("slice", x.shape(), ranges);
  if (v.whole) return x;
  CpuTensor out(v.shape, x.dtype());
  if (out.num_elements() == 0) return out;
  const auto os = strides_of(v.shape);
  Strided layout;
  for (std::size_t d = 0; d < v.shape.rank(); ++d) layout.push(v.shape[d], v.strides[d], os[d]);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_copy(x.data<T>() + v.offset, out.data<T>(), layout);
  });
  return out;
}

CpuTensor CpuOps::slice_assign(CpuTensor x, std::span<const Slice> ranges,
                               const CpuTensor& values) {
  const SliceView v = slice_view("slice_assign", x.shape(), ranges);
  check_slice_assign(v, x.shape(), x.dtype(), values.shape(), values.dtype());
  if (values.num_elements() == 0) return x;
  // Write into x's buffer when this call holds the only reference (values cannot share
  // it then: it would hold a second reference).
  CpuTensor out = x.is_unique() ? std::move(x) : copy_of(x);
  const auto vs = strides_of(v.shape);
  Strided layout;
  for (std::size_t d = 0; d < v.shape.rank(); ++d) layout.push(v.shape[d], vs[d], v.strides[d]);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_copy(values.data<T>(), out.data<T>() + v.offset, layout);
  });
  return out;
}

// ------------------------------------------------------------------ cat

CpuTensor CpuOps::cat(std::span<const CpuTensor> tensors, std::int64_t dim) {
  const auto [out_shape, d] = cat_plan(tensors, dim);
  const CpuTensor& first = tensors.front();
  if (tensors.size() == 1) return first;
  const Shape& s0 = first.shape();
  CpuTensor out(out_shape, first.dtype());
  if (out.num_elements() == 0) return out;
  std::int64_t outer = 1;
  for (std::size_t k = 0; k < d; ++k) outer *= s0[k];
  // Per outer index, each input contributes one contiguous block (its dims d..).
  auto* dst = out.data<std::uint8_t>();
  for (std::int64_t o = 0; o < outer; ++o) {
    for (const CpuTensor& t : tensors) {
      const std::size_t block = t.num_bytes() / static_cast<std::size_t>(outer);
      if (block == 0) continue;
      std::memcpy(dst, t.data<std::uint8_t>() + static_cast<std::size_t>(o) * block, block);
      dst += block;
    }
  }
  return out;
}

}  // namespace kiln
