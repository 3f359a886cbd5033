#pragma once
// Argument checks and shape inference of the shape, joining and matmul ops, shared by the
// Cpu backend (cpu/ops/shape_ops.cpp, matmul_ops.cpp) and the Wgpu backend (wgpu/shape_ops.cpp,
// matmul_ops.cpp), so both throw the same errors with the same messages. Each function
// checks its arguments (STYLE.md §7) and returns the output shape or the plan of the op;
// none allocates a tensor.
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "kiln/backend/backend.hpp"
#include "kiln/core/check.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::cpu::ops {

/// "[4, -1]" for dims that may hold -1 (Shape cannot).
std::string dims_str(std::span<const std::int64_t> dims);

/// The shape `from` viewed as `dims` (one -1 inferred). Throws LimitError (rank above
/// Shape::max_rank), ShapeError (two -1, an ambiguous or non-dividing -1, a different
/// element count), ValueError (a dim below -1).
Shape reshape_shape(const Shape& from, std::span<const std::int64_t> dims);

/// The shape of `s` permuted by `axes` (output dim i is input dim axes[i]). Throws
/// RankError (not one axis per dim), IndexError (not a permutation).
Shape permute_shape(const Shape& s, std::span<const std::int64_t> axes);

/// The shape of `s` expanded to `dims` (-1 keeps a dim, new dims lead). Throws RankError
/// (target rank below s's or above the maximum), ValueError (a negative new dim, a dim
/// below -1), ShapeError (a dim of size > 1 would change), LimitError (output too large).
Shape expand_shape(const Shape& s, std::span<const std::int64_t> dims);

/// The shape of `s` repeated `times` along dim (normalised into `*d`). Throws IndexError
/// (dim out of range), ValueError (times < 0), LimitError (the dim's size overflows int64).
Shape repeat_dim_shape(const Shape& s, std::int64_t dim, std::int64_t times, std::size_t* d);

/// Which dims of `s` flip. Throws IndexError (a dim out of range or repeated).
std::array<bool, Shape::max_rank> flip_dims(const Shape& s, std::span<const std::int64_t> dims);

/// The strided view of a tensor of shape `shape` selected by `ranges` (Burn's slice rules:
/// missing ranges are whole dims, a negative step walks [start, end) from its last element):
/// the slice's shape and, for every dim, the element offset of its first element and its
/// stride (possibly negative) in the tensor.
struct SliceView {
  Shape shape;
  std::int64_t offset = 0;
  std::array<std::int64_t, Shape::max_rank> strides{};
  bool whole = true;  ///< the slice is all of the tensor, in order
};
/// Throws RankError (more ranges than dims), ValueError (step 0), IndexError (a range
/// outside its dim or with start > end), naming `op`.
SliceView slice_view(const char* op, const Shape& shape, std::span<const Slice> ranges);

/// Throws DTypeError / ShapeError (slice_assign) unless `values` fit the slice `v` of a
/// tensor of shape `x_shape` and dtype `x_dtype`.
void check_slice_assign(const SliceView& v, const Shape& x_shape, DType x_dtype,
                        const Shape& values_shape, DType values_dtype);

/// Throws LimitError naming `op` when a dim of `dims` passes the element limit: an empty
/// result ([0, 2^40]) has no elements to count, but its dims still become strides.
void check_dims(const char* op, std::span<const std::int64_t> dims);

/// The output of cat: the shape and the (non-negative) dim joined along.
struct CatPlan {
  Shape shape;
  std::size_t dim = 0;
};
/// Throws ValueError (no tensors), IndexError (dim out of range), DTypeError and ShapeError
/// naming the first tensor that differs from tensor 0, LimitError (output too large; not
/// checked for one tensor, which is returned as it is). `Tensor` has shape() and dtype().
template <class Tensor>
CatPlan cat_plan(std::span<const Tensor> tensors, std::int64_t dim);

/// The output shape [broadcast(batch dims)..., m, n] of op(lhs)·op(rhs), op swapping the
/// last two dims when its flag is set. Throws RankError (a rank below 2, ranks differ),
/// DTypeError (not f32), ShapeError (inner dims differ, batch dims do not broadcast),
/// LimitError (output too large).
Shape matmul_shape(const Shape& ls, DType ld, const Shape& rs, DType rd, bool tl, bool tr);

// ------------------------------------------------------------------ cat_plan

template <class Tensor>
CatPlan cat_plan(std::span<const Tensor> tensors, std::int64_t dim) {
  if (tensors.empty()) throw_error<ValueError>("cat: expected at least one tensor, got none");
  const Tensor& first = tensors.front();
  const Shape& s0 = first.shape();
  const auto d = static_cast<std::size_t>(check::dim("cat", dim, s0.rank()));
  std::int64_t size = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dtype() != first.dtype()) {
      throw_error<DTypeError>("cat: tensor ", i, " has dtype ", t.dtype(), ", tensor 0 has ",
                              first.dtype());
    }
    const Shape& si = t.shape();
    bool same = si.rank() == s0.rank();
    for (std::size_t k = 0; same && k < s0.rank(); ++k) same = k == d || si[k] == s0[k];
    if (!same) {
      throw_error<ShapeError>("cat: tensor ", i, " has shape ", si, ", tensor 0 has shape ", s0,
                              ": they must match in every dim except dim ", dim);
    }
    size += si[d];  // each <= 2^31 elements: no overflow for any realistic list
  }
  CatPlan plan{s0, d};
  if (tensors.size() == 1) return plan;
  plan.shape[d] = size;
  checked::numel("cat", plan.shape.dims(), "output shape");
  check_dims("cat", plan.shape.dims());
  return plan;
}

}  // namespace kiln::cpu::ops
