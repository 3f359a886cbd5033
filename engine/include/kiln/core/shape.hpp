#pragma once
/// Shape: the runtime dims of a tensor, row-major. Ranks up to `Shape::max_rank` (8).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kiln/core/str_cat.hpp"

namespace kiln {

class Shape {
 public:
  /// Largest rank Kiln supports (PyTorch allows 64; 8 covers every layer Kiln has).
  static constexpr std::size_t max_rank = 8;

  Shape() = default;
  /// Throws: LimitError if more than max_rank dims; ValueError if a dim is negative.
  Shape(std::initializer_list<std::int64_t> dims);
  explicit Shape(std::span<const std::int64_t> dims);
  template <std::size_t N>
  Shape(const std::array<std::int64_t, N>& dims)  // NOLINT: implicit, like Burn's From<[usize; D]>
      : Shape(std::span<const std::int64_t>(dims.data(), N)) {}
  explicit Shape(const std::vector<std::int64_t>& dims)
      : Shape(std::span<const std::int64_t>(dims.data(), dims.size())) {}

  std::size_t rank() const noexcept { return rank_; }
  std::int64_t operator[](std::size_t i) const noexcept { return dims_[i]; }
  std::int64_t& operator[](std::size_t i) noexcept { return dims_[i]; }
  const std::int64_t* begin() const noexcept { return dims_.data(); }
  const std::int64_t* end() const noexcept { return dims_.data() + rank_; }
  std::span<const std::int64_t> dims() const noexcept { return {dims_.data(), rank_}; }
  std::vector<std::int64_t> to_vector() const { return {begin(), end()}; }

  /// Product of the dims (1 for rank 0). Throws LimitError on int64 overflow.
  std::int64_t num_elements() const;

  /// Row-major (contiguous) strides in elements.
  std::array<std::int64_t, max_rank> strides() const noexcept;

  friend bool operator==(const Shape& a, const Shape& b) noexcept;

 private:
  std::array<std::int64_t, max_rank> dims_{};
  std::size_t rank_ = 0;
};

/// Appends `[2, 3]` (str_cat's hook; `std::cout << shape` prints the same).
void append_to(std::string& out, const Shape& shape);

}  // namespace kiln
