#pragma once
/// Optional interop between Kiln's configs and nlohmann-json, for programs that already use
/// nlohmann::json (tests, tools, examples/cpp/mnist_infer.cpp). It lives outside the public
/// include tree (engine/include/kiln/ includes no JSON library): link the CMake target
/// kiln_json_interop (or add engine/interop to the include path) and include it.
///
/// It gives:
/// - kiln::config::Json, an alias of nlohmann::json;
/// - to_nlohmann(const Value&) and from_nlohmann(const nlohmann::json&) (exact: numbers keep
///   their kind, objects their keys);
/// - KILN_CONFIG's `c.to_json()` (an nlohmann::json) and `T::from_json(j)`;
/// - nlohmann::json conversions of every config and every type with a config::Codec
///   (`nlohmann::json(Reduction::Mean) == "mean"`, `j.get<Initializer>()`), in the same JSON
///   forms as the configs' files. A Codec's ConfigError passes through unchanged.
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

#include "kiln/config/config.hpp"
#include "kiln/config/value.hpp"

namespace kiln::config {

using Json = nlohmann::json;

/// A Value as a basic_json (nlohmann::json by default).
template <class J = nlohmann::json>
J to_nlohmann(const Value& v) {
  switch (v.type()) {
    case Value::Type::Null: return J(nullptr);
    case Value::Type::Boolean: return J(v.get_bool());
    case Value::Type::Integer: return J(static_cast<std::int64_t>(v.get_int()));
    case Value::Type::Unsigned: return J(static_cast<std::uint64_t>(v.get_uint()));
    case Value::Type::Float: return J(v.get_double());
    case Value::Type::String: return J(v.get_string());
    case Value::Type::Array: {
      J out = J::array();
      for (const Value& x : v.items()) out.push_back(to_nlohmann<J>(x));
      return out;
    }
    case Value::Type::Object: {
      J out = J::object();
      for (std::size_t i = 0; i < v.size(); ++i) out[v.keys()[i]] = to_nlohmann<J>(v.items()[i]);
      return out;
    }
  }
  return J();
}

/// A basic_json as a Value (binary values, which JSON text cannot hold, become null).
template <class J>
Value from_nlohmann(const J& j) {
  switch (j.type()) {
    case J::value_t::boolean: return Value(j.template get<bool>());
    case J::value_t::number_integer: return Value(j.template get<std::int64_t>());
    case J::value_t::number_unsigned: return Value(j.template get<std::uint64_t>());
    case J::value_t::number_float: return Value(j.template get<double>());
    case J::value_t::string: return Value(j.template get_ref<const std::string&>());
    case J::value_t::array: {
      Value out = Value::array();
      for (const auto& x : j) out.push_back(from_nlohmann(x));
      return out;
    }
    case J::value_t::object: {
      Value out = Value::object();
      for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = from_nlohmann(it.value());
      return out;
    }
    default: return Value();
  }
}

/// KILN_CONFIG_JSON_MEMBERS' conversions: to_json<void>() gives nlohmann::json,
/// from_json(j) takes any basic_json.
template <class J>
struct JsonInterop {
  using json = std::conditional_t<std::is_void_v<J>, nlohmann::json, J>;
  static json from_value(const Value& v) { return to_nlohmann<json>(v); }
  static Value to_value(const json& j) { return from_nlohmann(j); }
};

/// Types nlohmann::json converts through their Kiln JSON form.
template <class T>
concept NlohmannConvertible = IsConfig<T> || HasCodec<T>;

}  // namespace kiln::config

namespace nlohmann {
/// Configs and Codec types <-> nlohmann::json, through config::Value.
template <class T>
struct adl_serializer<T, std::enable_if_t<kiln::config::NlohmannConvertible<T>>> {
  static void to_json(json& j, const T& value) {
    j = kiln::config::to_nlohmann(kiln::config::encode(value));
  }
  static T from_json(const json& j) {
    const kiln::config::Value v = kiln::config::from_nlohmann(j);
    if constexpr (kiln::config::IsConfig<T>) {
      return T::from_value(v);
    } else {
      return kiln::config::Codec<T>::decode(v);
    }
  }
};
}  // namespace nlohmann
