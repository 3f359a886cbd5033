#pragma once
/// TypeKey: a C++ type's identity without RTTI, for the type-erased registries
/// (SequentialLayerConfig, SequentialLayer, SequentialRegistry). The wasm engine is built
/// with -fno-rtti (issue 17: no type_info objects and names), where typeid and
/// std::type_index do not exist; natively both builds give the same keys' behaviour.
///
/// The key of T is the address of a per-type tag (an inline variable template: one object
/// program-wide, so equal in every translation unit), compared, ordered and hashed as a
/// pointer. name() is typeid(T).name() when RTTI is on (as before), else the type as the
/// compiler spells it in __PRETTY_FUNCTION__ ("kiln::nn::LinearConfig"): for messages only.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
#include <typeinfo>
#endif

namespace kiln {

namespace detail {

/// "T" out of a __PRETTY_FUNCTION__ that contains "[T = T]" (clang) or "[with T = T]" (GCC).
inline std::string type_name_from_signature(std::string_view signature) {
  const std::size_t start = signature.find("T = ");
  if (start == std::string_view::npos) return std::string(signature);
  std::size_t end = signature.find_first_of(";]", start);
  if (end == std::string_view::npos) end = signature.size();
  return std::string(signature.substr(start + 4, end - start - 4));
}

template <class T>
const char* type_key_name() {
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
  return typeid(T).name();
#else
  static const std::string name = type_name_from_signature(__PRETTY_FUNCTION__);
  return name.c_str();
#endif
}

struct TypeKeyTag {
  const char* (*name)();
};

template <class T>
inline constexpr TypeKeyTag type_key_tag{&type_key_name<T>};

}  // namespace detail

/// The identity of a C++ type (std::type_index's role, without RTTI). Build it with
/// TypeKey::of<T>(); cv-qualifiers are ignored (as typeid).
class TypeKey {
 public:
  template <class T>
  static TypeKey of() noexcept {
    return TypeKey(&detail::type_key_tag<std::remove_cv_t<T>>);
  }
  /// The key of no type (TypeKey::of<void>()).
  TypeKey() noexcept : TypeKey(of<void>()) {}

  /// typeid(T).name() with RTTI, else the compiler's spelling of T (messages only).
  const char* name() const { return tag_->name(); }
  std::size_t hash_code() const noexcept { return std::hash<const void*>{}(tag_); }

  friend bool operator==(TypeKey a, TypeKey b) noexcept { return a.tag_ == b.tag_; }
  friend bool operator<(TypeKey a, TypeKey b) noexcept {
    return std::less<const detail::TypeKeyTag*>{}(a.tag_, b.tag_);
  }

 private:
  explicit TypeKey(const detail::TypeKeyTag* tag) noexcept : tag_(tag) {}
  const detail::TypeKeyTag* tag_;
};

}  // namespace kiln

template <>
struct std::hash<kiln::TypeKey> {
  std::size_t operator()(kiln::TypeKey key) const noexcept { return key.hash_code(); }
};
