#pragma once
/// Overflow-checked size arithmetic: every product, sum and difference of sizes, strides,
/// paddings, dilations and output extents that shape propagation or an allocation uses
/// goes through these, so that a huge argument becomes a LimitError naming the user's op
/// instead of a wrapped int64 (a wrong shape), a division by zero or a write out of bounds.
///
///   const std::int64_t span = checked::mul(op, dilation, kernel - 1, "dilation · (kernel - 1)");
///   checked::elements(op, checked::product(op, dims, "output size"), "output size [..]");
///
/// Limits (the same in every build):
///   - `checked::max_elements` (2^31 - 1): elements of one tensor or scratch buffer (kernels
///     index with int32 in places; JS typed arrays stop near 2^31);
///   - `checked::max_bytes`: bytes of one buffer, half of what size_t addresses (2 GiB in
///     wasm32, where a count that fits int64 may not fit a 32-bit allocation).
/// Every function throws LimitError `<op>: <what>: <operands> ... more than <limit>` and
/// does nothing else: the check comes before any allocation or write.
/// Core: depends on nothing but core/ (the backends and the nn headers include it).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::checked {

/// Largest element count of one tensor or scratch buffer (2^31 - 1).
inline constexpr std::int64_t max_elements = std::numeric_limits<std::int32_t>::max();
/// Largest byte size of one buffer: half of size_t's range (2^31 bytes in wasm32).
inline constexpr std::uint64_t max_bytes =
    static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 2);
/// int64's largest value, the limit every sum and product here is checked against.
inline constexpr std::int64_t max_int64 = std::numeric_limits<std::int64_t>::max();

/// a · b. Throws LimitError `<op>: <what> = a · b overflows int64 (more than 2^63 - 1)`.
inline std::int64_t mul(std::string_view op, std::int64_t a, std::int64_t b,
                        std::string_view what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw_error<LimitError>(op, ": ", what, " = ", a, " · ", b, " overflows int64 (more than ",
                            max_int64, ")");
  }
  return r;
}

/// a + b. Throws LimitError `<op>: <what> = a + b overflows int64 (...)`.
inline std::int64_t add(std::string_view op, std::int64_t a, std::int64_t b,
                        std::string_view what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    throw_error<LimitError>(op, ": ", what, " = ", a, " + ", b, " overflows int64 (more than ",
                            max_int64, ")");
  }
  return r;
}

/// a - b. Throws LimitError `<op>: <what> = a - b overflows int64 (...)`.
inline std::int64_t sub(std::string_view op, std::int64_t a, std::int64_t b,
                        std::string_view what) {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    throw_error<LimitError>(op, ": ", what, " = ", a, " - ", b, " overflows int64 (more than ",
                            max_int64, " in magnitude)");
  }
  return r;
}

/// "[a, b, c]" for dims that may hold -1 or any int64.
inline std::string dims_string(std::span<const std::int64_t> dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

/// The product of `dims` (each >= 0; 1 for none). Throws LimitError `<op>: <what> [dims]
/// has more than 2^63 - 1 elements` when it overflows int64 (a 0 anywhere gives 0, as the
/// tensor is empty, but a product before the 0 that overflows is still an error: every
/// prefix product is a stride).
inline std::int64_t product(std::string_view op, std::span<const std::int64_t> dims,
                            std::string_view what) {
  std::int64_t n = 1;
  for (const std::int64_t d : dims) {
    std::int64_t next;
    if (__builtin_mul_overflow(n, d, &next)) {
      throw_error<LimitError>(op, ": ", what, " ", dims_string(dims),
                              " has more elements than int64 holds (more than ", max_int64, ")");
    }
    n = next;
  }
  return n;
}

/// Throws LimitError `<op>: <what> gives <count> elements, more than the limit of 2^31 - 1`
/// unless 0 <= count <= max_elements.
inline void elements(std::string_view op, std::int64_t count, std::string_view what) {
  if (count > max_elements) {
    throw_error<LimitError>(op, ": ", what, " gives ", count, " elements, more than the limit of ",
                            max_elements);
  }
}

/// elements(op, product(op, dims, what), what) and returns the product.
inline std::int64_t numel(std::string_view op, std::span<const std::int64_t> dims,
                          std::string_view what) {
  const std::int64_t n = product(op, dims, what);
  elements(op, n, str_cat(what, " ", dims_string(dims)));
  return n;
}

/// Throws LimitError `<op>: <what> needs count · size bytes, more than the limit of
/// max_bytes` when a buffer of `count` elements of `size` bytes cannot be addressed (also
/// in wasm32, where size_t is 32 bits). Returns the byte count.
inline std::size_t bytes(std::string_view op, std::int64_t count, std::size_t size,
                         std::string_view what) {
  const auto n = static_cast<std::uint64_t>(count < 0 ? 0 : count);
  std::uint64_t total;
  if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(size), &total) || total > max_bytes) {
    throw_error<LimitError>(op, ": ", what, " needs ", count, " · ", size,
                            " bytes, more than the limit of ", max_bytes, " bytes");
  }
  return static_cast<std::size_t>(total);
}

/// A scratch buffer of `count` floats (or other elements of `size` bytes): elements() and
/// bytes() together, for buffers that are not tensors (im2col columns, pooling scales).
inline void buffer(std::string_view op, std::int64_t count, std::size_t size,
                   std::string_view what) {
  elements(op, count, what);
  bytes(op, count, size, what);
}

}  // namespace kiln::checked
