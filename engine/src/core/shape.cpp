#include "kiln/core/shape.hpp"

#include <limits>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln {

Shape::Shape(std::initializer_list<std::int64_t> dims)
    : Shape(std::span<const std::int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const std::int64_t> dims) {
  if (dims.size() > max_rank) {
    throw_error<LimitError>("Shape: rank ", dims.size(), " exceeds the maximum rank ", max_rank);
  }
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      throw_error<ValueError>("Shape: dim ", i, " is negative: ", dims[i]);
    }
    dims_[i] = dims[i];
  }
  rank_ = dims.size();
}

std::int64_t Shape::num_elements() const {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < rank_; ++i) {
    if (dims_[i] != 0 && n > std::numeric_limits<std::int64_t>::max() / dims_[i]) {
      throw_error<LimitError>("Shape: the number of elements of ", *this, " overflows int64");
    }
    n *= dims_[i];
  }
  return n;
}

std::array<std::int64_t, Shape::max_rank> Shape::strides() const noexcept {
  std::array<std::int64_t, max_rank> s{};
  std::int64_t acc = 1;
  for (std::size_t i = rank_; i-- > 0;) {
    s[i] = acc;
    // Saturates instead of overflowing: only an empty shape ([0, 2^31 - 1, ...], whose
    // strides address nothing) can pass 2^63 here, as a tensor holds < 2^31 elements.
    if (__builtin_mul_overflow(acc, dims_[i], &acc)) acc = std::numeric_limits<std::int64_t>::max();
  }
  return s;
}

bool operator==(const Shape& a, const Shape& b) noexcept {
  if (a.rank_ != b.rank_) return false;
  for (std::size_t i = 0; i < a.rank_; ++i) {
    if (a.dims_[i] != b.dims_[i]) return false;
  }
  return true;
}

void append_to(std::string& out, const Shape& shape) {
  out += '[';
  for (std::size_t i = 0; i < shape.rank(); ++i) str_append(out, i ? ", " : "", shape[i]);
  out += ']';
}

}  // namespace kiln
