// Indexing ops of the Cpu backend: select (torch.index_select), select_assign
// (torch.index_add), gather, scatter (torch.scatter_add), one_hot. Dtype-generic (f32,
// i32, bool as uint8_t); index tensors are i32. Every index is checked before anything
// is allocated or written, so a bad index never leaves a half-written buffer behind.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu/ops/visit_dtype.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/core/check.hpp"

namespace kiln {
namespace {

constexpr std::size_t kMaxRank = Shape::max_rank;

using cpu::visit_dtype;

/// dst += src for the accumulating ops: f32 adds, i32 adds with two's-complement
/// wrap-around (as PyTorch; no signed-overflow UB), bool ors.
template <class T>
inline void accumulate(T& dst, T src) {
  if constexpr (std::is_same_v<T, float>) {
    dst += src;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    dst = static_cast<std::int32_t>(static_cast<std::uint32_t>(dst) +
                                    static_cast<std::uint32_t>(src));
  } else {
    dst = static_cast<T>(dst | src);
  }
}

template <class T>
inline void accumulate_run(T* dst, const T* src, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) accumulate(dst[i], src[i]);
}

void check_indices_dtype(const char* op, const CpuTensor& indices) {
  if (indices.dtype() != DType::I32) {
    throw DTypeError(str_cat(op, ": indices must have dtype i32, got ", indices.dtype(), " (shape ",
                             indices.shape(), ")"));
  }
}

void check_same_dtype(const char* op, const CpuTensor& x, const CpuTensor& values) {
  if (values.dtype() != x.dtype()) {
    throw DTypeError(
        str_cat(op, ": values have dtype ", values.dtype(), ", the tensor has ", x.dtype()));
  }
}

/// Product of dims [from, to) of s.
std::int64_t prod(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t k = from; k < to; ++k) p *= s[k];
  return p;
}

/// Rank-1 i32 indices along a dim of `size`, checked against [-size, size) and
/// normalised to [0, size) (negative ones count from the end).
std::vector<std::int64_t> checked_rank1_indices(const char* op, const CpuTensor& indices,
                                                std::int64_t dim, std::int64_t size,
                                                const Shape& shape) {
  check_indices_dtype(op, indices);
  if (indices.shape().rank() != 1) {
    throw RankError(str_cat(op, ": indices must have rank 1, got shape ", indices.shape()));
  }
  const std::int32_t* p = indices.data<std::int32_t>();
  std::vector<std::int64_t> out(static_cast<std::size_t>(indices.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t v = p[i];
    if (v < -size || v >= size) {
      throw IndexError(str_cat(op, ": index ", v, " (position ", i, ") is out of range for dim ",
                               dim, " of size ", size, " (shape ", shape, ", expected ", -size,
                               " <= index < ", size, ")"));
    }
    out[i] = v < 0 ? v + size : v;
  }
  return out;
}

/// Checks that every i32 index lies in [0, size) (gather, scatter: as torch, no negative
/// indices, so a stray -1 or -100 "ignore" label fails loudly).
void check_index_range(const char* op, const CpuTensor& indices, std::int64_t dim,
                       std::int64_t size, const Shape& shape) {
  const std::int32_t* p = indices.data<std::int32_t>();
  for (std::int64_t i = 0; i < indices.num_elements(); ++i) {
    if (p[i] < 0 || p[i] >= size) {
      throw IndexError(str_cat(op, ": index ", p[i], " (flat position ", i,
                               " of indices) is out of range for dim ", dim, " of size ", size,
                               " (shape ", shape, ", expected 0 <= index < ", size, ")"));
    }
  }
}

CpuTensor copy_of(const CpuTensor& x) {
  CpuTensor out(x.shape(), x.dtype());
  if (x.num_bytes()) std::memcpy(out.data<std::uint8_t>(), x.data<std::uint8_t>(), x.num_bytes());
  return out;
}

/// Walks the positions of `shape` (the indices' shape) in row-major order, tracking the
/// element offsets of the same position in two other tensors (strides `a`, `b`, with
/// the gather/scatter dim's stride set to 0 in both), and calls
/// `row(offset_a, offset_b, flat_position_of_row_start)` once per innermost row.
template <class Row>
void for_each_row(const Shape& shape, const std::array<std::int64_t, kMaxRank>& a,
                  const std::array<std::int64_t, kMaxRank>& b, Row&& row) {
  const std::size_t rank = shape.rank();
  if (shape.num_elements() == 0) return;
  const std::size_t inner = rank - 1;
  const std::int64_t n = shape[inner];
  const std::int64_t outer = shape.num_elements() / n;
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t oa = 0;
  std::int64_t ob = 0;
  for (std::int64_t o = 0; o < outer; ++o) {
    row(oa, ob, o * n);
    for (std::size_t d = inner; d-- > 0;) {
      oa += a[d];
      ob += b[d];
      if (++idx[d] < shape[d]) break;
      oa -= a[d] * shape[d];
      ob -= b[d] * shape[d];
      idx[d] = 0;
    }
  }
}

/// gather/scatter shape rule (torch): indices has x's rank, and along every dim but
/// `dim` is no larger than `other` (x, or values for scatter: every dim).
void check_index_shape(const char* op, const char* other_name, const Shape& indices,
                       const Shape& other, std::size_t skip_dim) {
  for (std::size_t k = 0; k < indices.rank(); ++k) {
    if (k != skip_dim && indices[k] > other[k]) {
      throw ShapeError(str_cat(op, ": indices shape ", indices, " is larger than ", other_name,
                               " shape ", other, " in dim ", k, " (", indices[k], " > ", other[k],
                               ")"));
    }
  }
}

}  // namespace

// ------------------------------------------------------------------ select, select_assign

CpuTensor CpuOps::select(const CpuTensor& x, std::int64_t dim, const CpuTensor& indices) {
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim("select", dim, s.rank()));
  const auto idx = checked_rank1_indices("select", indices, dim, s[d], s);
  Shape out_shape = s;
  out_shape[d] = static_cast<std::int64_t>(idx.size());
  CpuTensor out(out_shape, x.dtype());
  if (out.num_elements() == 0) return out;
  const std::int64_t outer = prod(s, 0, d);
  const std::int64_t inner = prod(s, d + 1, s.rank());
  const std::int64_t size = s[d];
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    for (std::int64_t o = 0; o < outer; ++o) {
      const T* base = src + o * size * inner;
      if (inner == 1) {
        for (const std::int64_t i : idx) *dst++ = base[i];
      } else {
        for (const std::int64_t i : idx) {
          std::memcpy(dst, base + i * inner, static_cast<std::size_t>(inner) * sizeof(T));
          dst += inner;
        }
      }
    }
  });
  return out;
}

CpuTensor CpuOps::select_assign(CpuTensor x, std::int64_t dim, const CpuTensor& indices,
                                const CpuTensor& values) {
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim("select_assign", dim, s.rank()));
  const auto idx = checked_rank1_indices("select_assign", indices, dim, s[d], s);
  check_same_dtype("select_assign", x, values);
  Shape expected = s;
  expected[d] = static_cast<std::int64_t>(idx.size());
  if (!(values.shape() == expected)) {
    throw ShapeError(str_cat("select_assign: values have shape ", values.shape(), ", expected ",
                             expected, " (tensor ", s, " with dim ", dim, " of size ", idx.size(),
                             ", the number of indices)"));
  }
  if (values.num_elements() == 0) return x;
  CpuTensor out = x.is_unique() ? std::move(x) : copy_of(x);
  const std::int64_t outer = prod(s, 0, d);
  const std::int64_t inner = prod(s, d + 1, s.rank());
  const std::int64_t size = s[d];
  const auto n = static_cast<std::int64_t>(idx.size());
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = values.data<T>();
    T* dst = out.data<T>();
    for (std::int64_t o = 0; o < outer; ++o) {
      T* base = dst + o * size * inner;
      for (std::int64_t i = 0; i < n; ++i, src += inner) {
        accumulate_run(base + idx[static_cast<std::size_t>(i)] * inner, src, inner);
      }
    }
  });
  return out;
}

// ------------------------------------------------------------------ gather, scatter

CpuTensor CpuOps::gather(const CpuTensor& x, std::int64_t dim, const CpuTensor& indices) {
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim("gather", dim, s.rank()));
  check_indices_dtype("gather", indices);
  const Shape& is = indices.shape();
  if (is.rank() != s.rank()) {
    throw RankError(str_cat("gather: indices must have the rank of the tensor: indices ", is,
                            " vs tensor ", s, " (", is.rank(), " != ", s.rank(), ")"));
  }
  check_index_shape("gather", "tensor", is, s, d);
  check_index_range("gather", indices, dim, s[d], s);
  CpuTensor out(is, x.dtype());
  if (out.num_elements() == 0) return out;
  auto xs = s.strides();
  const std::int64_t stride_d = xs[d];
  xs[d] = 0;
  const auto os = is.strides();
  const std::size_t last = s.rank() - 1;
  const std::int64_t n = is[last];
  const std::int32_t* ip = indices.data<std::int32_t>();
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    for_each_row(is, xs, os, [&](std::int64_t xo, std::int64_t oo, std::int64_t) {
      const std::int32_t* row = ip + oo;  // indices are laid out like the output
      T* o = dst + oo;
      const T* base = src + xo;
      if (d == last) {
        for (std::int64_t j = 0; j < n; ++j) o[j] = base[row[j]];
      } else {
        for (std::int64_t j = 0; j < n; ++j) o[j] = base[row[j] * stride_d + j];
      }
    });
  });
  return out;
}

CpuTensor CpuOps::scatter(CpuTensor x, std::int64_t dim, const CpuTensor& indices,
                          const CpuTensor& values) {
  const Shape& s = x.shape();
  const auto d = static_cast<std::size_t>(check::dim("scatter", dim, s.rank()));
  check_indices_dtype("scatter", indices);
  check_same_dtype("scatter", x, values);
  const Shape& is = indices.shape();
  const Shape& vs = values.shape();
  if (is.rank() != s.rank() || vs.rank() != s.rank()) {
    throw RankError(
        str_cat("scatter: indices and values must have the rank of the tensor: "
                "tensor ",
                s, ", indices ", is, ", values ", vs));
  }
  check_index_shape("scatter", "tensor", is, s, d);
  check_index_shape("scatter", "values", is, vs, kMaxRank);
  check_index_range("scatter", indices, dim, s[d], s);
  if (indices.num_elements() == 0) return x;
  CpuTensor out = x.is_unique() ? std::move(x) : copy_of(x);
  auto xs = s.strides();
  const std::int64_t stride_d = xs[d];
  xs[d] = 0;
  const auto vstr = vs.strides();
  const std::size_t last = s.rank() - 1;
  const std::int64_t n = is[last];
  const std::int32_t* ip = indices.data<std::int32_t>();
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = values.data<T>();
    T* dst = out.data<T>();
    // Walk indices' positions; x's offset skips dim d, values' offset is the position's.
    for_each_row(is, xs, vstr, [&](std::int64_t xo, std::int64_t vo, std::int64_t flat) {
      const std::int32_t* row = ip + flat;
      const T* v = src + vo;
      T* base = dst + xo;
      if (d == last) {
        for (std::int64_t j = 0; j < n; ++j) accumulate(base[row[j]], v[j]);
      } else {
        for (std::int64_t j = 0; j < n; ++j) accumulate(base[row[j] * stride_d + j], v[j]);
      }
    });
  });
  return out;
}

// ------------------------------------------------------------------ one_hot

CpuTensor CpuOps::one_hot(const CpuTensor& x, std::int64_t num_classes) {
  const Shape& s = x.shape();
  if (num_classes < 1) {
    throw ValueError(str_cat("one_hot: num_classes must be >= 1, got ", num_classes));
  }
  if (s.rank() + 1 > kMaxRank) {
    throw LimitError(
        str_cat("one_hot: shape ", s, " plus the class dim exceeds the maximum rank ", kMaxRank));
  }
  {  // the output [..., num_classes] must fit, checked before anything is allocated
    std::array<std::int64_t, kMaxRank> out_dims{};
    std::copy(s.begin(), s.end(), out_dims.begin());
    out_dims[s.rank()] = num_classes;
    checked::numel("one_hot", std::span<const std::int64_t>(out_dims.data(), s.rank() + 1),
                   "output shape");
  }
  const std::int64_t n = x.num_elements();
  // Class of every element, checked before the output is allocated.
  std::vector<std::int64_t> classes(static_cast<std::size_t>(n));
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    for (std::int64_t i = 0; i < n; ++i) {
      const T v = p[i];
      if constexpr (std::is_same_v<T, float>) {
        if (!std::isfinite(v) || v != std::trunc(v)) {
          throw ValueError(str_cat("one_hot: value ", v, " at flat position ", i,
                                   " is not a whole number (shape ", s, ")"));
        }
        if (v < 0.f || static_cast<double>(v) >= static_cast<double>(num_classes)) {
          throw IndexError(str_cat("one_hot: value ", v, " at flat position ", i,
                                   " is out of range for num_classes = ", num_classes,
                                   " (expected 0 <= value < ", num_classes, ")"));
        }
        classes[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(v);
      } else {
        const auto c = static_cast<std::int64_t>(v);
        if (c < 0 || c >= num_classes) {
          throw IndexError(str_cat("one_hot: value ", c, " at flat position ", i,
                                   " is out of range for num_classes = ", num_classes,
                                   " (expected 0 <= value < ", num_classes, ")"));
        }
        classes[static_cast<std::size_t>(i)] = c;
      }
    }
  });
  std::array<std::int64_t, kMaxRank> dims{};
  std::copy(s.begin(), s.end(), dims.begin());
  dims[s.rank()] = num_classes;
  CpuTensor out(Shape(std::span<const std::int64_t>(dims.data(), s.rank() + 1)), x.dtype());
  if (out.num_elements() == 0) return out;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    std::fill(o, o + out.num_elements(), T(0));
    for (std::int64_t i = 0; i < n; ++i)
      o[i * num_classes + classes[static_cast<std::size_t>(i)]] = T(1);
  });
  return out;
}

}  // namespace kiln
