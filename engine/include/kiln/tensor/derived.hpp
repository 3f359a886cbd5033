#pragma once
/// Derived shape ops, rank-erased: the one place where the shape logic, the checks and the
/// error messages of the ops built from primitives live (narrow, chunk, split,
/// split_with_sizes, topk, flatten, squeeze, unsqueeze, swap_dims, transpose, permute,
/// repeat, flip, stack).
///
/// Each function reads a run-time Shape (and the op's arguments), checks them, and returns
/// a plan: the slice ranges, the new shape, the permutation, the pieces. The caller applies
/// the plan with existing primitives (`Ops::slice`, `reshape`, `permute`, `repeat_dim`,
/// `sort_with_indices`, `cat`), so these ops need no backward rule of their own. Two
/// callers: the typed front end `Tensor<B, D, K>` (kiln/tensor/tensor.hpp) and the JS
/// bindings (bindings/tensor_shape.cpp: tNarrow, tChunk, ...).
///
/// `op` names the op in messages; each function's default is its C++ name (snake_case).
/// The bindings pass the JS method's name, so one check gives "squeeze_dim: ..." in C++
/// and "squeezeDim: ..." in JS. Dims may be negative (counted from the end, PyTorch);
/// plans hold them normalised to [0, rank).
///
/// Example (what Tensor::narrow does):
///   const auto ranges = derived::narrow_ranges(x.shape(), 1, 2, 3);  // [{0..}, {2, 5}]
///   auto y = Ops::slice(x_primitive, ranges);
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/shape.hpp"

namespace kiln::derived {

/// `length` entries of one dim from `start` (a piece of a split, the kept part of narrow).
struct Piece {
  std::int64_t start = 0;
  std::int64_t length = 0;
};

/// The pieces of a split along `dim` (in [0, rank)), in order; together they cover the dim.
/// An empty dim gives one empty piece (the whole tensor, as torch.split).
struct SplitPlan {
  std::int64_t dim = 0;
  std::vector<Piece> pieces;
};

/// The slice ranges (one per dim up to `dim`) that select `piece` of `dim`: whole dims
/// before it, [start, start + length) on it. Input of `Ops::slice`.
std::vector<Slice> piece_ranges(std::int64_t dim, Piece piece);

/// torch.narrow: `length` entries of `dim` from `start`, as slice ranges.
/// Shapes:  [..., n, ...] -> [..., length, ...]
/// Throws:  IndexError if dim is out of range, or unless 0 <= start, 0 <= length and
///          start + length <= n ("narrow: start 5 and length 3 are out of bounds for dim 0
///          of size 7").
std::vector<Slice> narrow_ranges(const Shape& shape, std::int64_t dim, std::int64_t start,
                                 std::int64_t length, const char* op = "narrow");
/// narrow_ranges where a negative `start` counts from the end of the dim as in torch.narrow
/// (start in [-n, n]; -1 is the last entry): the JS `narrow`. Kiln's C++ `narrow` keeps
/// rejecting a negative start (its tests pin that).
/// Throws:  IndexError as narrow_ranges, for start < -n after the same check of dim.
std::vector<Slice> narrow_ranges_from_end(const Shape& shape, std::int64_t dim,
                                          std::int64_t start, std::int64_t length,
                                          const char* op = "narrow");

/// torch.chunk: pieces of ceil(n / chunks) along dim, the last smaller; may give fewer than
/// `chunks` pieces (arange(4).chunk(6) has 4).
/// Throws:  ValueError if chunks < 1; IndexError if dim is out of range.
SplitPlan chunk_plan(const Shape& shape, std::int64_t chunks, std::int64_t dim,
                     const char* op = "chunk");

/// torch.split with an int: pieces of `split_size` along dim, the last smaller.
/// Throws:  ValueError if split_size < 1; IndexError if dim is out of range.
SplitPlan split_plan(const Shape& shape, std::int64_t split_size, std::int64_t dim,
                     const char* op = "split");

/// torch.split with sizes: one piece per entry of `sizes`, in order.
/// Throws:  IndexError if dim is out of range; ValueError for a size outside [0, n];
///          ShapeError unless the sizes sum to n.
SplitPlan split_with_sizes_plan(const Shape& shape, std::span<const std::int64_t> sizes,
                                std::int64_t dim, const char* op = "split_with_sizes");

/// torch.topk's checks: returns dim normalised. The caller sorts along it, descending
/// (stable), and narrows values and indices to [0, k).
/// Throws:  IndexError if dim is out of range or k is outside [0, n].
std::int64_t topk_dim(const Shape& shape, std::int64_t k, std::int64_t dim,
                      const char* op = "topk");

/// The plan of flatten: dims start..=end (normalised) merged into one.
struct FlattenPlan {
  std::int64_t start = 0;
  std::int64_t end = 0;
  Shape shape;  ///< the output shape, of rank rank - (end - start)
};

/// Merges dims start..=end into one (torch.flatten). A rank-0 shape becomes [1] (dims are
/// then checked against rank 1, as torch).
/// Throws:  IndexError if a dim is out of range or start is after end.
FlattenPlan flatten_plan(const Shape& shape, std::int64_t start, std::int64_t end,
                         const char* op = "flatten");

/// Inserts a size-1 dim at `dim` of the output (in [-(rank + 1), rank + 1)): [2, 3] ->
/// [2, 1, 3] for dim 1 (torch.unsqueeze).
/// Throws:  IndexError if dim is out of range; LimitError past Shape::max_rank.
Shape unsqueeze_dim_shape(const Shape& shape, std::int64_t dim, const char* op = "unsqueeze_dim");

/// Leading size-1 dims up to `rank` (Burn's unsqueeze): [3] -> [1, 1, 3] for rank 3.
/// Throws:  RankError if rank is below the shape's; LimitError past Shape::max_rank.
Shape unsqueeze_shape(const Shape& shape, std::size_t rank, const char* op = "unsqueeze");

/// Removes the size-1 dim `dim`: [2, 1, 3] -> [2, 3] for dim 1.
/// Throws:  IndexError if dim is out of range; ShapeError if that dim is not 1.
Shape squeeze_dim_shape(const Shape& shape, std::int64_t dim, const char* op = "squeeze_dim");

/// Removes every size-1 dim (torch.squeeze without a dim): [1, 3, 1, 2] -> [3, 2].
Shape squeeze_shape(const Shape& shape);

/// The permutation that exchanges dims dim1 and dim2 (an input of `Ops::permute`).
/// Throws:  IndexError if a dim is out of range.
std::vector<std::int64_t> swap_dims_axes(const Shape& shape, std::int64_t dim1, std::int64_t dim2,
                                         const char* op = "swap_dims");

/// The permutation that swaps the last two dims (Burn's transpose): [..., m, n] -> [..., n, m].
/// Throws:  RankError if the rank is below 2.
std::vector<std::int64_t> transpose_axes(const Shape& shape, const char* op = "transpose");

/// `axes` checked and normalised: output dim i is input dim axes[i] (torch.permute).
/// Throws:  RankError unless there is one axis per dim; IndexError for an axis out of
///          range or one that appears twice.
std::vector<std::int64_t> permute_axes(const Shape& shape, std::span<const std::int64_t> axes,
                                       const char* op = "permute");

/// One step of repeat: `Ops::repeat_dim(x, dim, times)`.
struct RepeatStep {
  std::int64_t dim = 0;
  std::int64_t times = 1;
};

/// torch.Tensor.repeat with one count per dim: the repeat_dim steps, dims whose count is 1
/// left out (no steps: the tensor itself).
/// Throws:  RankError unless there is one count per dim; ValueError for a negative count;
///          LimitError (naming `op`) if a dim · its count overflows or the output would have
///          more than 2^31 - 1 elements (checked before the first step allocates).
std::vector<RepeatStep> repeat_plan(const Shape& shape, std::span<const std::int64_t> times,
                                    const char* op = "repeat");

/// The dims of flip, normalised (an input of `Ops::flip`).
/// Throws:  IndexError if a dim is out of range.
std::vector<std::int64_t> flip_dims(const Shape& shape, std::span<const std::int64_t> dims,
                                    const char* op = "flip");

/// The plan of stack: each input reshaped to `unsqueezed`, then concatenated along `dim`.
struct StackPlan {
  std::int64_t dim = 0;  ///< in [0, rank + 1)
  Shape unsqueezed;      ///< the inputs' shape with a size-1 dim at `dim`
};

/// torch.stack's checks: tensors of one shape joined along a new dim `dim` (in
/// [-(rank + 1), rank + 1)).
/// Throws:  ValueError for no tensors; ShapeError naming the first shape that differs
///          from tensor 0's; IndexError if dim is out of range.
StackPlan stack_plan(std::span<const Shape> shapes, std::int64_t dim, const char* op = "stack");

}  // namespace kiln::derived
