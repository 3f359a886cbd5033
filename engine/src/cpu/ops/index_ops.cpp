// Indexing ops of the Cpu backend: select (torch.index_select), select_assign
// (torch.index_add), gather, scatter (torch.scatter_add), one_hot. Dtype-generic (f32,
// i32, bool as uint8_t); index tensors are i32. Every index is checked before anything
// is allocated or written, so a bad index never leaves a half-written buffer behind.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "backend/index_checks.hpp"
#include "cpu/ops/visit_dtype.hpp"
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

/// Product of dims [from, to) of s.
std::int64_t prod(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t k = from; k < to; ++k) p *= s[k];
  return p;
}

/// The values of an i32 index tensor.
std::span<const std::int32_t> index_values(const CpuTensor& indices) {
  return {indices.data<std::int32_t>(), static_cast<std::size_t>(indices.num_elements())};
}

/// Rank-1 i32 indices along a dim of `size`, checked against [-size, size) and
/// normalised to [0, size) (negative ones count from the end).
std::vector<std::int64_t> checked_rank1_indices(const char* op, const CpuTensor& indices,
                                                std::int64_t dim, std::int64_t size,
                                                const Shape& shape) {
  index_check::rank1_indices(op, indices.dtype(), indices.shape());
  return index_check::normalized_rank1(op, index_values(indices), dim, size, shape);
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
  index_check::same_dtype("select_assign", x.dtype(), values.dtype());
  index_check::select_assign_values(s, dim, d, static_cast<std::int64_t>(idx.size()),
                                    values.shape());
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
  const Shape& is = indices.shape();
  index_check::gather_indices(s, d, indices.dtype(), is);
  index_check::index_range("gather", index_values(indices), dim, s[d], s);
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
  const Shape& is = indices.shape();
  const Shape& vs = values.shape();
  index_check::scatter_args(s, x.dtype(), d, indices.dtype(), is, values.dtype(), vs);
  index_check::index_range("scatter", index_values(indices), dim, s[d], s);
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
  const Shape out_shape = index_check::one_hot_shape(s, num_classes);
  const std::int64_t n = x.num_elements();
  // Class of every element, checked before the output is allocated.
  std::vector<std::int64_t> classes(static_cast<std::size_t>(n));
  index_check::one_hot_classes(x.dtype(), x.data<std::uint8_t>(), n, s, num_classes,
                               classes.data());
  CpuTensor out(out_shape, x.dtype());
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
