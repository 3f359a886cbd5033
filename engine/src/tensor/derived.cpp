// Derived shape ops, rank-erased (kiln/tensor/derived.hpp): shape logic, checks, messages.
#include "kiln/tensor/derived.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "kiln/core/check.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::derived {
namespace {

/// The dims of a shape being built (at most Shape::max_rank), without a heap allocation.
using Dims = std::array<std::int64_t, Shape::max_rank>;

std::int64_t size_of(const Shape& shape, std::int64_t dim) {
  return shape[static_cast<std::size_t>(dim)];
}

/// Consecutive pieces of `piece` entries (the last smaller) covering a dim of `size`; one
/// empty piece for an empty dim.
SplitPlan even_pieces(std::int64_t dim, std::int64_t size, std::int64_t piece) {
  SplitPlan plan;
  plan.dim = dim;
  for (std::int64_t start = 0; start < size; start += piece) {
    plan.pieces.push_back(Piece{start, std::min(piece, size - start)});
  }
  if (plan.pieces.empty()) plan.pieces.push_back(Piece{0, 0});
  return plan;
}

}  // namespace

std::vector<Slice> piece_ranges(std::int64_t dim, Piece piece) {
  std::vector<Slice> ranges(static_cast<std::size_t>(dim) + 1);
  ranges.back() = Slice(piece.start, piece.start + piece.length);
  return ranges;
}

std::vector<Slice> narrow_ranges(const Shape& shape, std::int64_t dim, std::int64_t start,
                                 std::int64_t length, const char* op) {
  const std::int64_t d = check::dim(op, dim, shape.rank());
  const std::int64_t size = size_of(shape, d);
  if (start < 0 || length < 0 || start > size || length > size - start) {
    throw_error<IndexError>(op, ": start ", start, " and length ", length,
                            " are out of bounds for dim ", dim, " of size ", size);
  }
  return piece_ranges(d, Piece{start, length});
}

std::vector<Slice> narrow_ranges_from_end(const Shape& shape, std::int64_t dim,
                                          std::int64_t start, std::int64_t length,
                                          const char* op) {
  const std::int64_t d = check::dim(op, dim, shape.rank());
  const std::int64_t size = size_of(shape, d);
  if (start < 0 && start >= -size) start += size;  // torch.narrow: start in [-n, n]
  return narrow_ranges(shape, dim, start, length, op);
}

SplitPlan chunk_plan(const Shape& shape, std::int64_t chunks, std::int64_t dim, const char* op) {
  if (chunks < 1) throw_error<ValueError>(op, ": chunks must be >= 1, got ", chunks);
  const std::int64_t d = check::dim(op, dim, shape.rank());
  const std::int64_t size = size_of(shape, d);
  // ceil(size / chunks) without overflow.
  const std::int64_t piece = size / chunks + (size % chunks != 0 ? 1 : 0);
  return even_pieces(d, size, std::max<std::int64_t>(piece, 1));
}

SplitPlan split_plan(const Shape& shape, std::int64_t split_size, std::int64_t dim,
                     const char* op) {
  if (split_size < 1) {
    throw_error<ValueError>(op, ": split_size must be >= 1, got ", split_size);
  }
  const std::int64_t d = check::dim(op, dim, shape.rank());
  return even_pieces(d, size_of(shape, d), split_size);
}

SplitPlan split_with_sizes_plan(const Shape& shape, std::span<const std::int64_t> sizes,
                                std::int64_t dim, const char* op) {
  const std::int64_t d = check::dim(op, dim, shape.rank());
  const std::int64_t size = size_of(shape, d);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0 || sizes[i] > size) {
      throw_error<ValueError>(op, ": size ", i, " is ", sizes[i], ", expected 0..", size, " (dim ",
                              dim, ")");
    }
    total += sizes[i];  // each <= size <= 2^31: no overflow for any realistic count
  }
  if (total != size) {
    throw_error<ShapeError>(op, ": sizes sum to ", total, ", dim ", dim, " has size ", size);
  }
  SplitPlan plan;
  plan.dim = d;
  std::int64_t start = 0;
  for (const std::int64_t s : sizes) {
    plan.pieces.push_back(Piece{start, s});
    start += s;
  }
  return plan;
}

std::int64_t topk_dim(const Shape& shape, std::int64_t k, std::int64_t dim, const char* op) {
  const std::int64_t d = check::dim(op, dim, shape.rank());
  const std::int64_t size = size_of(shape, d);
  if (k < 0 || k > size) {
    throw_error<IndexError>(op, ": k = ", k, " is out of range for dim ", dim, " of size ", size,
                            " (shape ", shape, ")");
  }
  return d;
}

FlattenPlan flatten_plan(const Shape& shape, std::int64_t start, std::int64_t end, const char* op) {
  const std::size_t rank = shape.rank();
  const std::int64_t a = check::dim(op, start, std::max<std::size_t>(rank, 1));
  const std::int64_t b = check::dim(op, end, std::max<std::size_t>(rank, 1));
  if (a > b) throw_error<IndexError>(op, ": start dim ", start, " is after end dim ", end);
  if (rank == 0) return FlattenPlan{0, 0, Shape{1}};
  Dims dims;
  std::size_t n = 0;
  for (std::size_t i = 0; i < rank; ++i) {
    const auto s = static_cast<std::int64_t>(i);
    if (s <= a || s > b) {
      dims[n++] = shape[i];
    } else {
      dims[n - 1] *= shape[i];
    }
  }
  return FlattenPlan{a, b, Shape(std::span<const std::int64_t>(dims.data(), n))};
}

Shape unsqueeze_dim_shape(const Shape& shape, std::int64_t dim, const char* op) {
  const std::int64_t d = check::dim(op, dim, shape.rank() + 1);
  const auto at = static_cast<std::size_t>(d);
  std::array<std::int64_t, Shape::max_rank + 1> dims{};
  std::copy(shape.begin(), shape.begin() + at, dims.begin());
  dims[at] = 1;
  std::copy(shape.begin() + at, shape.end(), dims.begin() + at + 1);
  // rank max_rank + 1 throws Shape's LimitError, as any shape of that rank
  return Shape(std::span<const std::int64_t>(dims.data(), shape.rank() + 1));
}

Shape unsqueeze_shape(const Shape& shape, std::size_t rank, const char* op) {
  if (rank < shape.rank()) {
    throw_error<RankError>(op, ": cannot unsqueeze shape ", shape, " (rank ", shape.rank(),
                           ") to rank ", rank, " (expected a rank >= ", shape.rank(), ")");
  }
  if (rank > Shape::max_rank) {  // Shape's own message for a shape of that rank
    throw_error<LimitError>("Shape: rank ", rank, " exceeds the maximum rank ", Shape::max_rank);
  }
  Dims dims;
  const std::size_t lead = rank - shape.rank();
  std::fill(dims.begin(), dims.begin() + lead, 1);
  std::copy(shape.begin(), shape.end(), dims.begin() + lead);
  return Shape(std::span<const std::int64_t>(dims.data(), rank));
}

Shape squeeze_dim_shape(const Shape& shape, std::int64_t dim, const char* op) {
  const std::int64_t d = check::dim(op, dim, shape.rank());
  if (size_of(shape, d) != 1) {
    throw_error<ShapeError>(op, ": dim ", dim, " has size ", size_of(shape, d),
                            ", expected 1 (shape ", shape, ")");
  }
  Dims dims;
  std::size_t n = 0;
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (i != static_cast<std::size_t>(d)) dims[n++] = shape[i];
  }
  return Shape(std::span<const std::int64_t>(dims.data(), n));
}

Shape squeeze_shape(const Shape& shape) {
  Dims dims;
  std::size_t n = 0;
  for (const std::int64_t s : shape) {
    if (s != 1) dims[n++] = s;
  }
  return Shape(std::span<const std::int64_t>(dims.data(), n));
}

std::vector<std::int64_t> swap_dims_axes(const Shape& shape, std::int64_t dim1, std::int64_t dim2,
                                         const char* op) {
  const std::int64_t a = check::dim(op, dim1, shape.rank());
  const std::int64_t b = check::dim(op, dim2, shape.rank());
  std::vector<std::int64_t> axes(shape.rank());
  for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<std::int64_t>(i);
  std::swap(axes[static_cast<std::size_t>(a)], axes[static_cast<std::size_t>(b)]);
  return axes;
}

std::vector<std::int64_t> transpose_axes(const Shape& shape, const char* op) {
  const std::size_t rank = shape.rank();
  if (rank < 2) throw_error<RankError>(op, ": needs rank >= 2, got shape ", shape);
  return swap_dims_axes(shape, static_cast<std::int64_t>(rank) - 2,
                        static_cast<std::int64_t>(rank) - 1, op);
}

std::vector<std::int64_t> permute_axes(const Shape& shape, std::span<const std::int64_t> axes,
                                       const char* op) {
  const std::size_t rank = shape.rank();
  if (axes.size() != rank) {
    throw_error<RankError>(op, ": expected ", rank, " axes for shape ", shape, ", got ",
                           axes.size());
  }
  std::vector<std::int64_t> norm(rank);
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < rank; ++i) {
    norm[i] = check::dim(op, axes[i], rank);
    if (seen[static_cast<std::size_t>(norm[i])]) {
      throw_error<IndexError>(op, ": dim ", axes[i], " appears twice in the axes");
    }
    seen[static_cast<std::size_t>(norm[i])] = true;
  }
  return norm;
}

std::vector<RepeatStep> repeat_plan(const Shape& shape, std::span<const std::int64_t> times,
                                    const char* op) {
  const std::size_t rank = shape.rank();
  if (times.size() != rank) {
    throw_error<RankError>(op, ": expected ", rank, " repeat counts, got ", times.size());
  }
  std::vector<RepeatStep> steps;
  for (std::size_t i = 0; i < rank; ++i) {
    if (times[i] < 0) {
      throw_error<ValueError>(op, ": times[", i, "] must be >= 0, got ", times[i]);
    }
    if (times[i] != 1) steps.push_back(RepeatStep{static_cast<std::int64_t>(i), times[i]});
  }
  // The final shape, checked before the first step allocates (each step only grows).
  std::array<std::int64_t, Shape::max_rank> out{};
  for (std::size_t i = 0; i < rank; ++i) {
    out[i] = checked::mul(op, shape[i], times[i], str_cat("dim ", i, " · times[", i, "]"));
  }
  checked::numel(op, std::span<const std::int64_t>(out.data(), rank), "output shape");
  return steps;
}

std::vector<std::int64_t> flip_dims(const Shape& shape, std::span<const std::int64_t> dims,
                                    const char* op) {
  std::vector<std::int64_t> norm;
  norm.reserve(dims.size());
  for (const std::int64_t d : dims) norm.push_back(check::dim(op, d, shape.rank()));
  return norm;
}

StackPlan stack_plan(std::span<const Shape> shapes, std::int64_t dim, const char* op) {
  if (shapes.empty()) throw_error<ValueError>(op, ": expected at least one tensor, got none");
  const Shape& first = shapes.front();
  for (std::size_t i = 1; i < shapes.size(); ++i) {
    if (!(shapes[i] == first)) {
      throw_error<ShapeError>(op, ": all tensors must have the same shape: tensor 0 is ", first,
                              ", tensor ", i, " is ", shapes[i]);
    }
  }
  const std::int64_t d = check::dim(op, dim, first.rank() + 1);
  return StackPlan{d, unsqueeze_dim_shape(first, d, op)};
}

}  // namespace kiln::derived
