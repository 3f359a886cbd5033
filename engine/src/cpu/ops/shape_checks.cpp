// Argument checks and shape inference of the shape, joining and matmul ops, shared by the
// Cpu and the Wgpu backends (shape_checks.hpp).
#include "cpu/ops/shape_checks.hpp"

#include <algorithm>
#include <limits>

#include "kiln/core/check.hpp"

namespace kiln::cpu::ops {
namespace {

constexpr std::size_t kMaxRank = Shape::max_rank;

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
std::array<DimRange, kMaxRank> resolve_slice(const char* op, const Shape& shape,
                                             std::span<const Slice> ranges) {
  if (ranges.size() > shape.rank()) {
    throw_error<RankError>(op, ": got ", ranges.size(), " ranges for a tensor of rank ",
                           shape.rank(), " (shape ", shape, ")");
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
      throw_error<ValueError>(op, ": step of dim ", d, " is 0; range ", slice_str(s));
    }
    const std::int64_t start = s.start < 0 ? s.start + size : s.start;
    const std::int64_t end = s.end ? (*s.end < 0 ? *s.end + size : *s.end) : size;
    if (start < 0 || end > size || start > size || end < 0) {
      throw_error<IndexError>(op, ": range ", slice_str(s), " is out of bounds for dim ", d,
                              " of size ", size, " (shape ", shape, ")");
    }
    if (start > end) {
      throw_error<IndexError>(op, ": range ", slice_str(s), " of dim ", d, " (size ", size,
                              ") starts after it ends (", start, " > ", end, ")");
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

}  // namespace

std::string dims_str(std::span<const std::int64_t> dims) {
  StrOut out;
  out << '[';
  for (std::size_t i = 0; i < dims.size(); ++i) out << (i ? ", " : "") << dims[i];
  out << ']';
  return out.str();
}

void check_dims(const char* op, std::span<const std::int64_t> dims) {
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] > checked::max_elements) {
      throw_error<LimitError>(op, ": dim ", i, " of the output shape ", dims_str(dims), " is ",
                              dims[i], ", more than the limit of ", checked::max_elements);
    }
  }
}

// ------------------------------------------------------------------ reshape

namespace {

enum class ReshapeFault { Rank, TwoInferred, Negative, Ambiguous, NotDivisible, Mismatch };

/// reshape_shape's errors, built out of line (one call at each check; issue 17). `x` and `y`
/// are the fault's numbers: the two -1 dims; the negative dim and its value; the known
/// product (-1 when it overflowed).
[[noreturn, gnu::cold, gnu::noinline]] void reshape_error(ReshapeFault fault, const Shape& from,
                                                          std::span<const std::int64_t> dims,
                                                          std::int64_t total, std::int64_t x,
                                                          std::int64_t y) {
  std::string m = str_cat("reshape: cannot view ", from);
  if (fault >= ReshapeFault::Ambiguous) str_append(m, " (", total, " elements)");
  str_append(m, " as ", dims_str(dims));
  switch (fault) {
    case ReshapeFault::Rank:
      throw LimitError(
          str_append(m, ": rank ", dims.size(), " exceeds the maximum rank ", kMaxRank));
    case ReshapeFault::TwoInferred:
      throw ShapeError(str_append(m, ": only one dim may be -1, got dims ", x, " and ", y));
    case ReshapeFault::Negative:
      throw ValueError(
          str_append(m, ": dim ", x, " is ", y, " (dims must be >= 0, or -1 to infer)"));
    case ReshapeFault::Ambiguous:
      throw ShapeError(
          str_append(m, ": the -1 is ambiguous when the other dims multiply to 0"));
    case ReshapeFault::NotDivisible:
      str_append(m, ": ", total, " is not divisible by ");
      throw ShapeError(x < 0 ? str_append(m, "an overflowing product") : str_append(m, x));
    case ReshapeFault::Mismatch:
      break;
  }
  m += " (";
  throw ShapeError(x < 0 ? str_append(m, "more than 2^63 elements)")
                         : str_append(m, x, " elements)"));
}

}  // namespace

Shape reshape_shape(const Shape& from, std::span<const std::int64_t> dims) {
  const std::int64_t total = from.num_elements();
  if (dims.size() > kMaxRank) reshape_error(ReshapeFault::Rank, from, dims, total, 0, 0);
  std::size_t infer = dims.size();
  std::int64_t known = 1;  // product of the given dims; -1 once it overflows
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (infer != dims.size()) {
        reshape_error(ReshapeFault::TwoInferred, from, dims, total,
                      static_cast<std::int64_t>(infer), static_cast<std::int64_t>(i));
      }
      infer = i;
    } else if (dims[i] < 0) {
      reshape_error(ReshapeFault::Negative, from, dims, total, static_cast<std::int64_t>(i),
                    dims[i]);
    } else if (known >= 0) {
      known = mul_or_overflow(known, dims[i]);
    }
  }
  std::array<std::int64_t, kMaxRank> out{};
  std::copy(dims.begin(), dims.end(), out.begin());
  if (infer != dims.size()) {
    if (known == 0) reshape_error(ReshapeFault::Ambiguous, from, dims, total, known, 0);
    if (known < 0 || total % known != 0) {
      reshape_error(ReshapeFault::NotDivisible, from, dims, total, known, 0);
    }
    out[infer] = total / known;
  } else if (known != total) {
    reshape_error(ReshapeFault::Mismatch, from, dims, total, known, 0);
  }
  return Shape(std::span<const std::int64_t>(out.data(), dims.size()));
}

// ------------------------------------------------------------------ permute

Shape permute_shape(const Shape& s, std::span<const std::int64_t> axes) {
  const std::size_t rank = s.rank();
  if (axes.size() != rank) {
    throw_error<RankError>("permute: expected ", rank, " axes for shape ", s, ", got ", axes.size(),
                           " (", dims_str(axes), ")");
  }
  std::array<bool, kMaxRank> seen{};
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t a = axes[i];
    if (a < 0 || a >= static_cast<std::int64_t>(rank) || seen[static_cast<std::size_t>(a)]) {
      throw_error<IndexError>("permute: axes ", dims_str(axes), " are not a permutation of 0..",
                              rank - 1, " (shape ", s, ")");
    }
    seen[static_cast<std::size_t>(a)] = true;
  }
  std::array<std::int64_t, kMaxRank> out_dims{};
  for (std::size_t i = 0; i < rank; ++i) out_dims[i] = s[static_cast<std::size_t>(axes[i])];
  return Shape(std::span<const std::int64_t>(out_dims.data(), rank));
}

// ------------------------------------------------------------------ expand, repeat, flip

Shape expand_shape(const Shape& s, std::span<const std::int64_t> dims) {
  const std::size_t rank = s.rank();
  if (dims.size() < rank || dims.size() > kMaxRank) {
    throw_error<RankError>("expand: cannot expand ", s, " to ", dims_str(dims),
                           ": the target rank must be between ", rank, " and ", kMaxRank);
  }
  const std::size_t lead = dims.size() - rank;
  std::array<std::int64_t, kMaxRank> out_dims{};
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t want = dims[i];
    if (i < lead) {
      if (want < 0) {
        throw_error<ValueError>("expand: cannot expand ", s, " to ", dims_str(dims), ": new dim ",
                                i, " is ", want, " (new leading dims must be >= 0)");
      }
      out_dims[i] = want;
      continue;
    }
    const std::int64_t have = s[i - lead];
    if (want == -1 || want == have) {
      out_dims[i] = have;
    } else if (want < -1) {
      throw_error<ValueError>("expand: cannot expand ", s, " to ", dims_str(dims), ": dim ", i,
                              " is ", want, " (dims must be >= 0, or -1 to keep)");
    } else if (have != 1) {
      throw_error<ShapeError>("expand: cannot expand ", s, " to ", dims_str(dims), ": dim ", i,
                              " has size ", have, " and only size-1 dims can grow (", have,
                              " != ", want, ")");
    } else {
      out_dims[i] = want;
    }
  }
  checked::numel("expand", std::span<const std::int64_t>(out_dims.data(), dims.size()),
                 "output shape");
  check_dims("expand", std::span<const std::int64_t>(out_dims.data(), dims.size()));
  return Shape(std::span<const std::int64_t>(out_dims.data(), dims.size()));
}

Shape repeat_dim_shape(const Shape& s, std::int64_t dim, std::int64_t times, std::size_t* d) {
  *d = static_cast<std::size_t>(check::dim("repeat_dim", dim, s.rank()));
  if (times < 0) {
    throw_error<ValueError>("repeat_dim: times must be >= 0, got ", times, " (dim ", dim,
                            ", shape ", s, ")");
  }
  Shape out_shape = s;
  const std::int64_t size = mul_or_overflow(s[*d], times);
  if (size < 0) {
    throw_error<LimitError>("repeat_dim: repeating dim ", dim, " of ", s, " ", times,
                            " times overflows int64");
  }
  out_shape[*d] = size;
  return out_shape;
}

std::array<bool, Shape::max_rank> flip_dims(const Shape& s, std::span<const std::int64_t> dims) {
  std::array<bool, kMaxRank> flipped{};
  for (const std::int64_t dim : dims) {
    const auto d = static_cast<std::size_t>(check::dim("flip", dim, s.rank()));
    if (flipped[d]) {
      throw_error<IndexError>("flip: dim ", dim, " appears twice in dims ", dims_str(dims));
    }
    flipped[d] = true;
  }
  return flipped;
}

// ------------------------------------------------------------------ slice

SliceView slice_view(const char* op, const Shape& shape, std::span<const Slice> ranges) {
  const auto r = resolve_slice(op, shape, ranges);
  const auto xs = shape.strides();
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

void check_slice_assign(const SliceView& v, const Shape& x_shape, DType x_dtype,
                        const Shape& values_shape, DType values_dtype) {
  if (values_dtype != x_dtype) {
    throw_error<DTypeError>("slice_assign: values have dtype ", values_dtype, ", the tensor has ",
                            x_dtype);
  }
  if (!(values_shape == v.shape)) {
    throw_error<ShapeError>("slice_assign: values have shape ", values_shape,
                            ", the slice has shape ", v.shape, " (tensor ", x_shape, ")");
  }
}

// ------------------------------------------------------------------ matmul

Shape matmul_shape(const Shape& ls, DType ld, const Shape& rs, DType rd, bool tl, bool tr) {
  if (ls.rank() < 2 || rs.rank() < 2) {
    throw_error<RankError>("matmul: expected tensors of rank >= 2, got lhs ", ls, " (rank ",
                           ls.rank(), ") and rhs ", rs, " (rank ", rs.rank(), ")");
  }
  if (ls.rank() != rs.rank()) {
    throw_error<RankError>("matmul: ranks differ: lhs ", ls, " (rank ", ls.rank(), ") vs rhs ", rs,
                           " (rank ", rs.rank(), ")");
  }
  if (ld != DType::F32 || rd != DType::F32) {
    throw_error<DTypeError>("matmul: expected f32 tensors, got lhs ", ld, " ", ls, " and rhs ", rd,
                            " ", rs);
  }
  const std::size_t rank = ls.rank();
  const std::int64_t k_lhs = ls[tl ? rank - 2 : rank - 1];
  const std::int64_t k_rhs = rs[tr ? rank - 1 : rank - 2];
  if (k_lhs != k_rhs) {
    throw_error<ShapeError>("matmul: inner dimensions differ: lhs ", ls, tl ? " (transposed)" : "",
                            " vs rhs ", rs, tr ? " (transposed)" : "", " (", k_lhs, " != ", k_rhs,
                            ")");
  }
  std::array<std::int64_t, Shape::max_rank> dims{};
  for (std::size_t d = 0; d + 2 < rank; ++d) {
    const std::int64_t a = ls[d], b = rs[d];
    if (a != b && a != 1 && b != 1) {
      throw_error<ShapeError>("matmul: batch dims do not broadcast: lhs ", ls, " vs rhs ", rs,
                              " (dim ", d, ": ", a, " vs ", b, ")");
    }
    dims[d] = a == 1 ? b : a;
  }
  dims[rank - 2] = ls[tl ? rank - 1 : rank - 2];
  dims[rank - 1] = rs[tr ? rank - 2 : rank - 1];
  checked::numel("matmul", std::span<const std::int64_t>(dims.data(), rank),
                 "output shape");  // broadcast batch dims
  return Shape(std::span<const std::int64_t>(dims.data(), rank));
}

}  // namespace kiln::cpu::ops
