#pragma once
/// Tensor kinds (Burn's `Float`, `Int`, `Bool`): the third template argument of
/// `Tensor<B, D, K>`. Each kind names its element type, dtype and the backend's
/// primitive type and ops struct for that kind.
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "kiln/core/dtype.hpp"

namespace kiln {

/// f32 elements.
struct Float {
  using Elem = float;
  static constexpr DType dtype = DType::F32;
  static constexpr std::string_view name = "Float";
  template <class B> using Primitive = typename B::FloatTensor;
  template <class B> using Ops = typename B::FloatOps;
};
/// i32 elements.
struct Int {
  using Elem = std::int32_t;
  static constexpr DType dtype = DType::I32;
  static constexpr std::string_view name = "Int";
  template <class B> using Primitive = typename B::IntTensor;
  template <class B> using Ops = typename B::IntOps;
};
/// bool elements (one byte each).
struct Bool {
  using Elem = bool;
  static constexpr DType dtype = DType::Bool;
  static constexpr std::string_view name = "Bool";
  template <class B> using Primitive = typename B::BoolTensor;
  template <class B> using Ops = typename B::BoolOps;
};

template <class K>
concept TensorKind = std::is_same_v<K, Float> || std::is_same_v<K, Int> || std::is_same_v<K, Bool>;
/// Float or Int (Burn's `Numeric`).
template <class K>
concept NumericKind = std::is_same_v<K, Float> || std::is_same_v<K, Int>;

}  // namespace kiln
