#pragma once
// Type dispatch on a tensor's dtype for the dtype-generic ops (shape, index).
#include <cstdint>
#include <type_traits>

#include "core/apart.hpp"
#include "kiln/core/dtype.hpp"

namespace kiln::cpu {

/// f(T{}): the function visit_dtype calls for one dtype.
template <class T, class F>
decltype(auto) visit_one_dtype(F& f) {
  return f(T{});
}

/// Calls f(T{}) with T the element type of dtype (Bool is stored as uint8_t). Each dtype's
/// instance is a function of its own in WebAssembly (core/apart.hpp), so that wasm-split can
/// leave the dtypes a page never uses out of the primary module.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  using Fn = std::remove_reference_t<F>;
  switch (dtype) {
    case DType::F32:
      return kiln::detail::call_apart<&visit_one_dtype<float, Fn>>(f);
    case DType::I32:
      return kiln::detail::call_apart<&visit_one_dtype<std::int32_t, Fn>>(f);
    case DType::Bool:
      break;
  }
  return kiln::detail::call_apart<&visit_one_dtype<std::uint8_t, Fn>>(f);
}

}  // namespace kiln::cpu
