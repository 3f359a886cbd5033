#pragma once
/// Argument checks shared by the backends, the front end and the bindings; each throws a
/// kiln::Error whose message names the op and both sides (STYLE.md §7). Core: depends on
/// nothing but core/ (the cpu backend's ops include it without the front end).
#include <cstdint>

#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::check {

/// Maps a dim in [-rank, rank) to [0, rank). Throws IndexError otherwise.
inline std::int64_t dim(const char* op, std::int64_t dim, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (dim < -r || dim >= r) {
    throw_error<IndexError>(op, ": dim ", dim, " is out of range for a tensor of rank ", rank,
                            " (expected ", -r, " <= dim < ", r, ")");
  }
  return dim < 0 ? dim + r : dim;
}

/// Throws RankError unless a primitive of rank `given` may become a Tensor of rank D.
inline void rank(const char* op, std::size_t expected, const Shape& given) {
  if (given.rank() != expected) {
    throw_error<RankError>(op, ": expected a tensor of rank ", expected, ", got shape ", given,
                           " (rank ", given.rank(), ")");
  }
}

}  // namespace kiln::check
