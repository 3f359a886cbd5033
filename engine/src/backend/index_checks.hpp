#pragma once
// Argument checks of the indexing primitives (select, select_assign, gather, scatter,
// one_hot), shared by the Cpu backend (engine/src/cpu/ops/index_ops.cpp) and the Wgpu
// backend (engine/src/wgpu/index_ops.cpp), so both throw the same errors with the same
// messages. The shape and dtype checks take metadata only; the value checks (an index out
// of range, a one_hot value that is not a class) take the index values, which the Wgpu
// backend has only when the tensor keeps its host copy.
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"

namespace kiln::index_check {

/// Throws DTypeError unless the indices are i32.
void indices_dtype(const char* op, DType dtype, const Shape& indices);

/// Throws DTypeError unless values have the tensor's dtype (select_assign, scatter).
void same_dtype(const char* op, DType x, DType values);

/// select, select_assign: indices i32 (DTypeError) of rank 1 (RankError).
void rank1_indices(const char* op, DType dtype, const Shape& indices);

/// select, select_assign: every index in [-size, size) (IndexError naming the first one
/// that is not), returned normalised to [0, size) (negative ones count from the end).
/// `dim` is the user's dim (for the message), `shape` the tensor's.
std::vector<std::int64_t> normalized_rank1(const char* op, std::span<const std::int32_t> indices,
                                           std::int64_t dim, std::int64_t size, const Shape& shape);

/// select_assign: values must have the tensor's shape with dim `d` of size `count` (the
/// number of indices). Throws ShapeError.
void select_assign_values(const Shape& x, std::int64_t dim, std::size_t d, std::int64_t count,
                          const Shape& values);

/// gather: indices i32 of x's rank (RankError), no larger than x outside dim d (ShapeError).
void gather_indices(const Shape& x, std::size_t d, DType dtype, const Shape& indices);

/// scatter: indices i32, values of x's dtype, indices and values of x's rank (RankError);
/// indices no larger than x outside dim d nor than values in any dim (ShapeError).
void scatter_args(const Shape& x, DType x_dtype, std::size_t d, DType indices_dtype,
                  const Shape& indices, DType values_dtype, const Shape& values);

/// gather, scatter: every index in [0, size) (IndexError naming the first that is not; as
/// torch, no negative indices, so a stray -1 or -100 "ignore" label fails loudly).
void index_range(const char* op, std::span<const std::int32_t> indices, std::int64_t dim,
                 std::int64_t size, const Shape& shape);

/// one_hot: num_classes >= 1 (ValueError), the output [..., num_classes] within the rank
/// (LimitError) and element limits. Returns the output shape.
Shape one_hot_shape(const Shape& x, std::int64_t num_classes);

/// one_hot: the class of each of the `n` values of dtype `dtype` at `data` (f32 values
/// must be finite whole numbers: ValueError; every class in [0, num_classes): IndexError).
/// Writes the classes to `classes` when it is not null. `shape` is x's (for the message).
void one_hot_classes(DType dtype, const void* data, std::int64_t n, const Shape& shape,
                     std::int64_t num_classes, std::int64_t* classes);

}  // namespace kiln::index_check
