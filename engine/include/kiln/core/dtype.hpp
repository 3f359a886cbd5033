#pragma once
/// Element types of Kiln tensors: f32 (kind Float), i32 (kind Int), bool (kind Bool, one
/// byte per element, 0 or 1).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/core/str_cat.hpp"

namespace kiln {

enum class DType : std::uint8_t { F32, I32, Bool };

/// "f32", "i32" or "bool" (Burn's names).
constexpr std::string_view dtype_name(DType dtype) noexcept {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::I32: return "i32";
    case DType::Bool: return "bool";
  }
  return "?";
}

/// Bytes per element: 4, 4, 1.
constexpr std::size_t dtype_size(DType dtype) noexcept {
  return dtype == DType::Bool ? 1 : 4;
}

/// Appends dtype_name(dtype) (str_cat's hook; `std::cout << dtype` prints the same).
inline void append_to(std::string& out, DType dtype) { out += dtype_name(dtype); }

/// The DType of a C++ element type: float -> F32, int32_t -> I32, bool -> Bool.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <class T> inline constexpr DType dtype_of_v = dtype_of<T>::value;

}  // namespace kiln
