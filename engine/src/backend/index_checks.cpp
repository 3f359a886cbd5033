// Argument checks of the indexing primitives (engine/src/backend/index_checks.hpp), moved
// out of the Cpu backend's index_ops.cpp so the Wgpu backend throws the same errors.
#include "backend/index_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::index_check {
namespace {

constexpr std::size_t kMaxRank = Shape::max_rank;

/// gather/scatter shape rule (torch): indices has x's rank, and along every dim but
/// `skip_dim` is no larger than `other` (x, or values for scatter: every dim).
void index_shape(const char* op, const char* other_name, const Shape& indices, const Shape& other,
                 std::size_t skip_dim) {
  for (std::size_t k = 0; k < indices.rank(); ++k) {
    if (k != skip_dim && indices[k] > other[k]) {
      throw_error<ShapeError>(op, ": indices shape ", indices, " is larger than ", other_name,
                              " shape ", other, " in dim ", k, " (", indices[k], " > ", other[k],
                              ")");
    }
  }
}

template <class T>
void classes_of(const T* p, std::int64_t n, const Shape& s, std::int64_t num_classes,
                std::int64_t* classes) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T v = p[i];
    std::int64_t c;
    if constexpr (std::is_same_v<T, float>) {
      if (!std::isfinite(v) || v != std::trunc(v)) {
        throw_error<ValueError>("one_hot: value ", v, " at flat position ", i,
                                " is not a whole number (shape ", s, ")");
      }
      if (v < 0.f || static_cast<double>(v) >= static_cast<double>(num_classes)) {
        throw_error<IndexError>("one_hot: value ", v, " at flat position ", i,
                                " is out of range for num_classes = ", num_classes,
                                " (expected 0 <= value < ", num_classes, ")");
      }
      c = static_cast<std::int64_t>(v);
    } else {
      c = static_cast<std::int64_t>(v);
      if (c < 0 || c >= num_classes) {
        throw_error<IndexError>("one_hot: value ", c, " at flat position ", i,
                                " is out of range for num_classes = ", num_classes,
                                " (expected 0 <= value < ", num_classes, ")");
      }
    }
    if (classes) classes[i] = c;
  }
}

}  // namespace

void indices_dtype(const char* op, DType dtype, const Shape& indices) {
  if (dtype != DType::I32) {
    throw_error<DTypeError>(op, ": indices must have dtype i32, got ", dtype, " (shape ", indices,
                            ")");
  }
}

void same_dtype(const char* op, DType x, DType values) {
  if (values != x) {
    throw_error<DTypeError>(op, ": values have dtype ", values, ", the tensor has ", x);
  }
}

void rank1_indices(const char* op, DType dtype, const Shape& indices) {
  indices_dtype(op, dtype, indices);
  if (indices.rank() != 1) {
    throw_error<RankError>(op, ": indices must have rank 1, got shape ", indices);
  }
}

std::vector<std::int64_t> normalized_rank1(const char* op, std::span<const std::int32_t> indices,
                                           std::int64_t dim, std::int64_t size,
                                           const Shape& shape) {
  std::vector<std::int64_t> out(indices.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t v = indices[i];
    if (v < -size || v >= size) {
      throw_error<IndexError>(op, ": index ", v, " (position ", i, ") is out of range for dim ",
                              dim, " of size ", size, " (shape ", shape, ", expected ", -size,
                              " <= index < ", size, ")");
    }
    out[i] = v < 0 ? v + size : v;
  }
  return out;
}

void select_assign_values(const Shape& x, std::int64_t dim, std::size_t d, std::int64_t count,
                          const Shape& values) {
  Shape expected = x;
  expected[d] = count;
  if (!(values == expected)) {
    throw_error<ShapeError>("select_assign: values have shape ", values, ", expected ", expected,
                            " (tensor ", x, " with dim ", dim, " of size ", count,
                            ", the number of indices)");
  }
}

void gather_indices(const Shape& s, std::size_t d, DType dtype, const Shape& is) {
  indices_dtype("gather", dtype, is);
  if (is.rank() != s.rank()) {
    throw_error<RankError>("gather: indices must have the rank of the tensor: indices ", is,
                           " vs tensor ", s, " (", is.rank(), " != ", s.rank(), ")");
  }
  index_shape("gather", "tensor", is, s, d);
}

void scatter_args(const Shape& s, DType x_dtype, std::size_t d, DType indices_dtype_,
                  const Shape& is, DType values_dtype, const Shape& vs) {
  indices_dtype("scatter", indices_dtype_, is);
  same_dtype("scatter", x_dtype, values_dtype);
  if (is.rank() != s.rank() || vs.rank() != s.rank()) {
    throw_error<RankError>(
        "scatter: indices and values must have the rank of the tensor: "
        "tensor ",
        s, ", indices ", is, ", values ", vs);
  }
  index_shape("scatter", "tensor", is, s, d);
  index_shape("scatter", "values", is, vs, kMaxRank);
}

void index_range(const char* op, std::span<const std::int32_t> p, std::int64_t dim,
                 std::int64_t size, const Shape& shape) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] < 0 || p[i] >= size) {
      throw_error<IndexError>(op, ": index ", p[i], " (flat position ", i,
                              " of indices) is out of range for dim ", dim, " of size ", size,
                              " (shape ", shape, ", expected 0 <= index < ", size, ")");
    }
  }
}

Shape one_hot_shape(const Shape& s, std::int64_t num_classes) {
  if (num_classes < 1) {
    throw_error<ValueError>("one_hot: num_classes must be >= 1, got ", num_classes);
  }
  if (s.rank() + 1 > kMaxRank) {
    throw_error<LimitError>("one_hot: shape ", s, " plus the class dim exceeds the maximum rank ",
                            kMaxRank);
  }
  // the output [..., num_classes] must fit, checked before anything is allocated
  std::array<std::int64_t, kMaxRank> out_dims{};
  std::copy(s.begin(), s.end(), out_dims.begin());
  out_dims[s.rank()] = num_classes;
  const std::span<const std::int64_t> dims(out_dims.data(), s.rank() + 1);
  checked::numel("one_hot", dims, "output shape");
  return Shape(dims);
}

void one_hot_classes(DType dtype, const void* data, std::int64_t n, const Shape& shape,
                     std::int64_t num_classes, std::int64_t* classes) {
  switch (dtype) {
    case DType::F32:
      classes_of(static_cast<const float*>(data), n, shape, num_classes, classes);
      break;
    case DType::I32:
      classes_of(static_cast<const std::int32_t*>(data), n, shape, num_classes, classes);
      break;
    case DType::Bool:
      classes_of(static_cast<const std::uint8_t*>(data), n, shape, num_classes, classes);
      break;
  }
}

}  // namespace kiln::index_check
