#pragma once
// Small builders and references shared by the op-conformance suites.
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

namespace kiln::test {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

/// A rank-1 Float tensor of the given values.
template <class B>
Tensor<B, 1> vec(const std::vector<float>& values) {
  return Tensor<B, 1>::from_data(
      TensorData(Shape{static_cast<std::int64_t>(values.size())}, values), device<B>());
}

/// 0, 1, 2, ... in row-major order, converted to dtype.
inline TensorData iota(const Shape& shape, DType dtype = DType::F32) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  std::iota(v.begin(), v.end(), 0.f);
  return TensorData(shape, std::move(v)).convert(dtype);
}

/// Expected values of a unary op: the double-precision reference rounded to f32.
template <class F>
TensorData reference(const std::vector<float>& x, F f) {
  std::vector<float> out;
  for (float v : x) out.push_back(static_cast<float>(f(static_cast<double>(v))));
  return TensorData(Shape{static_cast<std::int64_t>(x.size())}, out);
}

/// Buffers allocated so far (kiln::memory_stats), to test that rvalue ops reuse theirs.
inline std::int64_t allocations() { return memory_stats().total_allocations; }

}  // namespace kiln::test
