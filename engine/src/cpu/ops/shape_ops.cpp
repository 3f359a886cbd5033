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
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "cpu/kernels/transpose.hpp"
#include "cpu/ops/visit_dtype.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/core/check.hpp"
#include "kiln/core/checked.hpp"

namespace kiln {
namespace {

constexpr std::size_t kMaxRank = Shape::max_rank;

using cpu::visit_dtype;

/// "[4, -1]" for dims that may hold -1 (Shape cannot).
std::string dims_str(std::span<const std::int64_t> dims) {
  StrOut out;
  out << '[';
  for (std::size_t i = 0; i < dims.size(); ++i) out << (i ? ", " : "") << dims[i];
  out << ']';
  return out.str();
}

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

/// Throws LimitError naming `op` when a dim of `dims` passes the element limit: an empty
/// result ([0, 2^40]) has no elements to count, but its dims still become strides.
void check_dims(const char* op, std::span<const std::int64_t> dims) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > checked::max_elements) {
      throw LimitError(str_cat(op, ": dim ", i, " of the output shape ", dims_str(dims), " is ",
                               dims[i], ", more than the limit of ", checked::max_elements));
    }
  }
}

/// a * b, or -1 when the product overflows int64 (both >= 0).
std::int64_t mul_or_overflow(std::int64_t a, std::int64_t b) {
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) return -1;
  return a * b;
}

/// One dim of a slice, resolved: `count` elements from `first`, `step` apart (step < 0
/// walks backwards).
struct DimRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t step = 1;
};

std::string slice_str(const Slice& s) {
  StrOut out;
  out << '[' << s.start << ", ";
  if (s.end) {
    out << *s.end;
  } else {
    out << "end";
  }
  out << ')';
  if (s.step != 1) out << " step " << s.step;
  return out.str();
}

/// Resolves Burn's slice rules for every dim of `shape` (missing ranges are whole dims).
/// Throws RankError (more ranges than dims), ValueError (step 0), IndexError (a range
/// outside its dim or with start > end).
std::array<DimRange, kMaxRank> resolve_slice(const char* op, const Shape& shape,
                                             std::span<const Slice> ranges) {
  if (ranges.size() > shape.rank()) {
    throw RankError(str_cat(op, ": got ", ranges.size(), " ranges for a tensor of rank ",
                            shape.rank(), " (shape ", shape, ")"));
  }
  std::array<DimRange, kMaxRank> out{};
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    const std::int64_t size = shape[d];
    if (d >= ranges.size()) {
      out[d] = {0, size, 1};
      continue;
    }
    const Slice& s = ranges[d];
    if (s.step == 0) {
      throw ValueError(str_cat(op, ": step of dim ", d, " is 0; range ", slice_str(s)));
    }
    const std::int64_t start = s.start < 0 ? s.start + size : s.start;
    const std::int64_t end = s.end ? (*s.end < 0 ? *s.end + size : *s.end) : size;
    if (start < 0 || end > size || start > size || end < 0) {
      throw IndexError(str_cat(op, ": range ", slice_str(s), " is out of bounds for dim ", d,
                               " of size ", size, " (shape ", shape, ")"));
    }
    if (start > end) {
      throw IndexError(str_cat(op, ": range ", slice_str(s), " of dim ", d, " (size ", size,
                               ") starts after it ends (", start, " > ", end, ")"));
    }
    const std::int64_t len = end - start;
    // |step| without overflow for INT64_MIN: any |step| >= len gives one element.
    const std::int64_t mag = s.step > 0 ? s.step : (s.step < -len ? len + 1 : -s.step);
    const std::int64_t count = len == 0 ? 0 : (len - 1) / mag + 1;
    if (count <= 1) {
      out[d] = {s.step > 0 ? start : end - 1, count, 1};  // the step never applies
    } else if (s.step > 0) {
      out[d] = {start, count, mag};
    } else {
      out[d] = {end - 1, count, -mag};  // Burn: walk [start, end) from its last element
    }
  }
  return out;
}

/// The strided view of x selected by `ranges`: the slice's shape and, for every dim,
/// the element offset of its first element and its stride in x.
struct SliceView {
  Shape shape;
  std::int64_t offset = 0;
  std::array<std::int64_t, kMaxRank> strides{};
  bool whole = true;  ///< the slice is all of x, in order
};

SliceView slice_view(const char* op, const Shape& shape, std::span<const Slice> ranges) {
  const auto r = resolve_slice(op, shape, ranges);
  const auto xs = strides_of(shape);
  SliceView v;
  std::array<std::int64_t, kMaxRank> dims{};
  for (std::size_t d = 0; d < shape.rank(); ++d) {
    dims[d] = r[d].count;
    if (r[d].count > 0) v.offset += r[d].first * xs[d];
    v.strides[d] = r[d].step * xs[d];
    if (r[d].count != shape[d] || (r[d].count > 1 && r[d].step != 1)) v.whole = false;
  }
  v.shape = Shape(std::span<const std::int64_t>(dims.data(), shape.rank()));
  if (v.shape.num_elements() == 0) v.offset = 0;
  return v;
}

}  // namespace

// ------------------------------------------------------------------ reshape

CpuTensor CpuOps::reshape(CpuTensor x, std::span<const std::int64_t> dims) {
  const Shape& from = x.shape();
  const std::int64_t total = x.num_elements();
  if (dims.size() > kMaxRank) {
    throw LimitError(str_cat("reshape: cannot view ", from, " as ", dims_str(dims), ": rank ",
                             dims.size(), " exceeds the maximum rank ", kMaxRank));
  }
  std::size_t infer = dims.size();
  std::int64_t known = 1;  // product of the given dims; -1 once it overflows
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (infer != dims.size()) {
        throw ShapeError(str_cat("reshape: cannot view ", from, " as ", dims_str(dims),
                                 ": only one dim may be -1, got dims ", infer, " and ", i));
      }
      infer = i;
    } else if (dims[i] < 0) {
      throw ValueError(str_cat("reshape: cannot view ", from, " as ", dims_str(dims), ": dim ", i,
                               " is ", dims[i], " (dims must be >= 0, or -1 to infer)"));
    } else if (known >= 0) {
      known = mul_or_overflow(known, dims[i]);
    }
  }
  std::array<std::int64_t, kMaxRank> out{};
  std::copy(dims.begin(), dims.end(), out.begin());
  if (infer != dims.size()) {
    if (known == 0) {
      throw ShapeError(str_cat("reshape: cannot view ", from, " (", total, " elements) as ",
                               dims_str(dims),
                               ": the -1 is ambiguous when the other dims multiply to 0"));
    }
    if (known < 0 || total % known != 0) {
      throw ShapeError(str_cat("reshape: cannot view ", from, " (", total, " elements) as ",
                               dims_str(dims), ": ", total, " is not divisible by ",
                               known < 0 ? std::string("an overflowing product") : str_cat(known)));
    }
    out[infer] = total / known;
  } else if (known != total) {
    throw ShapeError(
        str_cat("reshape: cannot view ", from, " (", total, " elements) as ", dims_str(dims), " (",
                known < 0 ? std::string("more than 2^63") : str_cat(known), " elements)"));
  }
  // No copy: the new tensor shares x's buffer (Burn's reshape of a contiguous tensor).
  return x.with_shape(Shape(std::span<const std::int64_t>(out.data(), dims.size())));
}

// ------------------------------------------------------------------ permute

CpuTensor CpuOps::permute(const CpuTensor& x, std::span<const std::int64_t> axes) {
  const Shape& s = x.shape();
  const std::size_t rank = s.rank();
  if (axes.size() != rank) {
    throw RankError(str_cat("permute: expected ", rank, " axes for shape ", s, ", got ",
                            axes.size(), " (", dims_str(axes), ")"));
  }
  std::array<bool, kMaxRank> seen{};
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t a = axes[i];
    if (a < 0 || a >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(a)]) {
      throw IndexError(str_cat("permute: axes ", dims_str(axes), " are not a permutation of 0..",
                               rank - 1, " (shape ", s, ")"));
    }
    seen[static_cast<std::size_t>(a)] = true;
  }
  std::array<std::int64_t, kMaxRank> out_dims{};
  for (std::size_t i = 0; i < rank; ++i) out_dims[i] = s[static_cast<std::size_t>(axes[i])];
  const Shape out_shape(std::span<const std::int64_t>(out_dims.data(), rank));
  const auto xs = strides_of(s);
  const auto os = strides_of(out_shape);
  Strided layout;
  for (std::size_t i = 0; i < rank; ++i) {
    layout.push(out_dims[i], xs[static_cast<std::size_t>(axes[i])], os[i]);
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
  if (dims.size() < rank || dims.size() > kMaxRank) {
    throw RankError(str_cat("expand: cannot expand ", s, " to ", dims_str(dims),
                            ": the target rank must be between ", rank, " and ", kMaxRank));
  }
  const std::size_t lead = dims.size() - rank;
  std::array<std::int64_t, kMaxRank> out_dims{};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t want = dims[i];
    if (i < lead) {
      if (want < 0) {
        throw ValueError(str_cat("expand: cannot expand ", s, " to ", dims_str(dims), ": new dim ",
                                 i, " is ", want, " (new leading dims must be >= 0)"));
      }
      out_dims[i] = want;
      continue;
    }
    const std::int64_t have = s[i - lead];
    if (want == -1 || want == have) {
      out_dims[i] = have;
    } else if (want < -1) {
      throw ValueError(str_cat("expand: cannot expand ", s, " to ", dims_str(dims), ": dim ", i,
                               " is ", want, " (dims must be >= 0, or -1 to keep)"));
    } else if (have != 1) {
      throw ShapeError(str_cat("expand: cannot expand ", s, " to ", dims_str(dims), ": dim ", i,
                               " has size ", have, " and only size-1 dims can grow (", have,
                               " != ", want, ")"));
    } else {
      out_dims[i] = want;
    }
  }
  checked::numel("expand", std::span<const std::int64_t>(out_dims.data(), dims.size()),
                 "output shape");
  check_dims("expand", std::span<const std::int64_t>(out_dims.data(), dims.size()));
  const Shape out_shape(std::span<const std::int64_t>(out_dims.data(), dims.size()));
  if (out_shape.num_elements() == x.num_elements()) return x.with_shape(out_shape);
  CpuTensor out(out_shape, x.dtype());
  const auto xs = strides_of(s);
  const auto os = strides_of(out_shape);
  Strided layout;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const bool broadcast = i < lead || s[i - lead] != out_dims[i];
    layout.push(out_dims[i], broadcast ? 0 : xs[i - lead], os[i]);
  }
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    strided_copy(x.data<T>(), out.data<T>(), layout);
  });
  return out;
}

CpuTensor CpuOps::repeat_dim(const CpuTensor& x, std::int64_t dim, std::int64_t times) {
  const Shape& s = x.shape();
  const std::int64_t d = check::dim("repeat_dim", dim, s.rank());
  if (times < 0) {
    throw ValueError(
        str_cat("repeat_dim: times must be >= 0, got ", times, " (dim ", dim, ", shape ", s, ")"));
  }
  if (times == 1) return x;
  Shape out_shape = s;
  const std::int64_t size = mul_or_overflow(s[static_cast<std::size_t>(d)], times);
  if (size < 0) {
    throw LimitError(str_cat("repeat_dim: repeating dim ", dim, " of ", s, " ", times,
                             " times overflows int64"));
  }
  out_shape[static_cast<std::size_t>(d)] = size;
  CpuTensor out(out_shape, x.dtype());
  if (out.num_elements() == 0) return out;
  std::int64_t outer = 1;
  for (std::int64_t i = 0; i < d; ++i) outer *= s[static_cast<std::size_t>(i)];
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
  std::array<bool, kMaxRank> flipped{};
  for (const std::int64_t dim : dims) {
    const auto d = static_cast<std::size_t>(check::dim("flip", dim, s.rank()));
    if (flipped[d]) {
      throw IndexError(str_cat("flip: dim ", dim, " appears twice in dims ", dims_str(dims)));
    }
    flipped[d] = true;
  }
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
  if (values.dtype() != x.dtype()) {
    throw DTypeError(str_cat("slice_assign: values have dtype ", values.dtype(),
                             ", the tensor has ", x.dtype()));
  }
  if (!(values.shape() == v.shape)) {
    throw ShapeError(str_cat("slice_assign: values have shape ", values.shape(),
                             ", the slice has shape ", v.shape, " (tensor ", x.shape(), ")"));
  }
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
  if (tensors.empty()) throw ValueError("cat: expected at least one tensor, got none");
  const CpuTensor& first = tensors.front();
  const Shape& s0 = first.shape();
  const auto d = static_cast<std::size_t>(check::dim("cat", dim, s0.rank()));
  std::int64_t size = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const CpuTensor& t = tensors[i];
    if (t.dtype() != first.dtype()) {
      throw DTypeError(
          str_cat("cat: tensor ", i, " has dtype ", t.dtype(), ", tensor 0 has ", first.dtype()));
    }
    const Shape& si = t.shape();
    bool same = si.rank() == s0.rank();
    for (std::size_t k = 0; same && k < s0.rank(); ++k) same = k == d || si[k] == s0[k];
    if (!same) {
      throw ShapeError(str_cat("cat: tensor ", i, " has shape ", si, ", tensor 0 has shape ", s0,
                               ": they must match in every dim except dim ", dim));
    }
    size += si[d];  // each <= 2^31 elements: no overflow for any realistic list
  }
  if (tensors.size() == 1) return first;
  Shape out_shape = s0;
  out_shape[d] = size;
  checked::numel("cat", out_shape.dims(), "output shape");
  check_dims("cat", out_shape.dims());
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
