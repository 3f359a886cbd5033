#pragma once
// Argument checks of the reductions, softmax and sort, shared by the Cpu backend
// (cpu/ops/reduce_ops.cpp, softmax_ops.cpp, sort_ops.cpp) and the Wgpu backend
// (wgpu/reduce_ops.cpp, softmax_ops.cpp), so that both throw the same errors with the same
// messages. Value-independent: they look at dtypes, shapes and dims only.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "kiln/backend/backend.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"

namespace kiln::cpu::ops {

/// The name of a reduction in messages: ops.def's snake name ("sum"), "sum_dim" along a dim.
const char* reduce_op_name(ReduceOp op, bool along_dim);

/// Checks a reduction `name` (reduce_op_name) of a tensor of `dtype` and `shape` whose
/// results each reduce `n` elements (`dim`: the reduced dim, already in [0, rank), or none
/// for the whole tensor). Any/All accept every dtype. The others: DTypeError unless f32 or
/// i32; Max/Min of zero elements and the Int Mean of zero elements throw ShapeError.
void check_reduce(ReduceOp op, const char* name, DType dtype, const Shape& shape, std::size_t n,
                  std::optional<std::size_t> dim);

/// max/min_dim_with_indices, argmax, argmin (`name`): the dim in [0, rank). Throws IndexError
/// for a dim out of range, DTypeError unless f32 or i32, ShapeError if the dim has size 0.
std::size_t check_arg_extremum(const char* name, bool is_max, DType dtype, const Shape& shape,
                               std::int64_t dim);

/// var_mean: the dim in [0, rank). Throws IndexError, or DTypeError unless f32.
std::size_t check_var_mean(DType dtype, const Shape& shape, std::int64_t dim);

/// sort_with_indices ("sort" in messages): the dim in [0, rank). Throws IndexError, or
/// DTypeError unless f32 or i32.
std::size_t check_sort(DType dtype, const Shape& shape, std::int64_t dim);

/// softmax / log_softmax (`name`): the dim in [0, rank). Throws DTypeError unless f32, then
/// IndexError for a dim out of range.
std::size_t check_softmax(const char* name, DType dtype, const Shape& shape, std::int64_t dim);

}  // namespace kiln::cpu::ops
