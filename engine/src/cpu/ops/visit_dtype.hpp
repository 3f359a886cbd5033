#pragma once
// Type dispatch on a tensor's dtype for the dtype-generic ops (shape, index).
#include <cstdint>

#include "kiln/core/dtype.hpp"

namespace kiln::cpu {

/// Calls f(T{}) with T the element type of dtype (Bool is stored as uint8_t).
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32:
      return f(float{});
    case DType::I32:
      return f(std::int32_t{});
    case DType::Bool:
      break;
  }
  return f(std::uint8_t{});
}

}  // namespace kiln::cpu
