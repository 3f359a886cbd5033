#pragma once
/// Configs (Burn's `#[derive(Config)]`): plain structs with required fields, fields with
/// defaults, `with_*` builders, equality, printing, and JSON save/load (nlohmann-json).
///
///   struct MlpConfig {
///     std::int64_t d_input;              // required: the constructor's arguments, in order
///     std::int64_t d_hidden = 64;        // defaults: in the struct
///     nn::LinearConfig head = nn::LinearConfig(64, 10);  // nested configs work
///     explicit MlpConfig(std::int64_t d_input) : d_input(d_input) {}
///     KILN_CONFIG(MlpConfig, (d_input), (d_hidden, head))
///   };
///   auto c = MlpConfig(784).with_d_hidden(128);  // with_<field> for every defaulted field
///   c.save("mlp.json");  auto back = MlpConfig::load("mlp.json");  // back == c
///
/// KILN_CONFIG(Type, (required...), (defaulted...)) goes inside the struct. Type's
/// constructor must take the required fields in the listed order (Burn's `Config::new`).
/// JSON holds every field by name; loading needs every required field, fills a missing
/// defaulted one with its default, and rejects unknown fields, values of the wrong type or
/// out of range and malformed JSON with a ConfigError naming the file, the config, the field
/// and the problem. Field types: bool, integers, floating point, std::string, enums and
/// other types with nlohmann `to_json`/`from_json`, std::vector / std::array /
/// std::optional of those, and other configs.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/preprocessor.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::config {

using Json = nlohmann::json;

/// Types made with KILN_CONFIG.
template <class T>
concept IsConfig = requires(const T& c, const Json& j) {
  { c.to_json() } -> std::same_as<Json>;
  { T::from_json(j) } -> std::same_as<T>;
};

/// One field of a config, as KILN_CONFIG lists it (and nn::Sequential's spec, for the JS
/// layer and messages): its JSON name and whether it must be given.
struct Field {
  std::string name;
  bool required = false;
  friend bool operator==(const Field&, const Field&) = default;
};

/// A ConfigError about one field of a config, with two wordings of the same problem:
/// what() is the config's own message ("LinearConfig::init: d_input and d_output must be
/// >= 1, got d_input = 0, d_output = 3"), field_message() the problem alone ("d_input must
/// be >= 1, got 0") for a container that names the config itself (nn::SequentialConfig:
/// "layers[0] (linear): d_input must be >= 1, got 0"). Thrown by a config's check().
class FieldError : public ConfigError {
 public:
  FieldError(const std::string& message, std::string field_message)
      : ConfigError(message), field_message_(std::move(field_message)) {}
  const std::string& field_message() const noexcept { return field_message_; }

 private:
  std::string field_message_;
};

/// "an integer", "a string", ... for error messages.
inline std::string describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return str_cat("the boolean ", v.dump());
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return str_cat("the integer ", v.dump());
    case Json::value_t::number_float: return str_cat("the number ", v.dump());
    case Json::value_t::string: return str_cat("the string ", v.dump());
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return "an unsupported JSON value";
  }
}

template <class T>
struct Codec;

namespace detail {
template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_array : std::false_type {};
template <class T, std::size_t N> struct is_array<std::array<T, N>> : std::true_type {};

[[noreturn]] inline void fail(std::string_view where, std::string_view expected, const Json& v) {
  throw ConfigError(str_cat(where, ": expected ", expected, ", got ", describe(v)));
}
}  // namespace detail

/// Reads a T from JSON; `where` names the config and field for errors ("LinearConfig.bias").
template <class T>
T decode(const Json& v, const std::string& where) {
  if constexpr (IsConfig<T>) {
    if (!v.is_object()) detail::fail(where, "an object", v);
    try {
      return T::from_json(v);
    } catch (const ConfigError& e) {
      throw ConfigError(str_cat(where, ": ", e.what()));
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) detail::fail(where, "a boolean", v);
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer()) detail::fail(where, "an integer", v);
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        detail::fail(where, str_cat("an integer in [", std::numeric_limits<T>::min(), ", ",
                                    std::numeric_limits<T>::max(), "]"), v);
      }
      return static_cast<T>(u);
    }
    const auto i = v.get<std::int64_t>();
    if (i < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        (i > 0 && static_cast<std::uint64_t>(i) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
      detail::fail(where, str_cat("an integer in [", std::numeric_limits<T>::min(), ", ",
                                  std::numeric_limits<T>::max(), "]"), v);
    }
    return static_cast<T>(i);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) detail::fail(where, "a number", v);
    return v.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) detail::fail(where, "a string", v);
    return v.get<std::string>();
  } else if constexpr (detail::is_optional<T>::value) {
    if (v.is_null()) return std::nullopt;
    return decode<typename T::value_type>(v, where);
  } else if constexpr (detail::is_vector<T>::value) {
    if (!v.is_array()) detail::fail(where, "an array", v);
    T out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      out.push_back(decode<typename T::value_type>(v[i], str_cat(where, "[", i, "]")));
    }
    return out;
  } else if constexpr (detail::is_array<T>::value) {
    if (!v.is_array() || v.size() != std::tuple_size_v<T>) {
      detail::fail(where, str_cat("an array of ", std::tuple_size_v<T>, " elements"), v);
    }
    T out{};
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = decode<typename T::value_type>(v[i], str_cat(where, "[", i, "]"));
    }
    return out;
  } else {
    // Enums and other types with nlohmann from_json (they report their own problems).
    try {
      return v.get<T>();
    } catch (const ConfigError& e) {
      throw ConfigError(str_cat(where, ": ", e.what()));
    } catch (const nlohmann::json::exception& e) {
      throw ConfigError(str_cat(where, ": ", e.what()));
    }
  }
}

/// Writes a T as JSON.
template <class T>
Json encode(const T& value) {
  if constexpr (IsConfig<T>) {
    return value.to_json();
  } else if constexpr (detail::is_optional<T>::value) {
    return value ? encode(*value) : Json(nullptr);
  } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
    Json out = Json::array();
    for (const auto& x : value) out.push_back(encode(x));
    return out;
  } else {
    return Json(value);
  }
}

/// Reads a required field.
template <class T>
T read_required(const Json& j, std::string_view type, std::string_view field) {
  auto it = j.find(std::string(field));
  if (it == j.end()) {
    throw ConfigError(str_cat(type, ": missing required field \"", field, "\""));
  }
  return decode<T>(*it, str_cat(type, ".", field));
}

/// Overwrites `value` if the field is present.
template <class T>
void read_default(const Json& j, std::string_view type, std::string_view field, T& value) {
  auto it = j.find(std::string(field));
  if (it != j.end()) value = decode<T>(*it, str_cat(type, ".", field));
}

/// Throws ConfigError unless `j` is an object whose keys are all in `fields`.
inline void check_object(const Json& j, std::string_view type,
                         std::initializer_list<std::string_view> fields) {
  if (!j.is_object()) {
    throw ConfigError(str_cat(type, ": expected a JSON object, got ", describe(j)));
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (auto f : fields) known = known || f == it.key();
    if (!known) {
      std::string list;
      for (auto f : fields) list += str_cat(list.empty() ? "" : ", ", f);
      throw ConfigError(str_cat(type, ": unknown field \"", it.key(), "\" (fields: ", list, ")"));
    }
  }
}

/// Parses JSON text. Throws ConfigError naming `source` (a file name or "JSON string") and
/// the position of the syntax error, also for a number out of double's range (1e999, which
/// nlohmann reports as out_of_range.406 rather than as a parse_error).
inline Json parse(std::string_view text, std::string_view source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(str_cat(source, ": malformed JSON (", e.what(), ")"));
  }
}

}  // namespace kiln::config

#define KILN_CONFIG_WRITE_(j, field) j[#field] = ::kiln::config::encode(field);
#define KILN_CONFIG_NAME_(ctx, field) #field,
#define KILN_CONFIG_FIELD_REQ_(ctx, field) ::kiln::config::Field{#field, true},
#define KILN_CONFIG_FIELD_DEF_(ctx, field) ::kiln::config::Field{#field, false},
#define KILN_CONFIG_REQ_(ctx, field) \
  ::kiln::config::read_required<decltype(ctx::field)>(j, #ctx, #field)
#define KILN_CONFIG_DEF_(ctx, field) \
  ::kiln::config::read_default<decltype(ctx::field)>(j, #ctx, #field, out.field);
#define KILN_CONFIG_WITH_(Type, field)                                 \
  /** A copy with `field` set (Burn's `with_<field>`). */              \
  Type with_##field(decltype(Type::field) value) const {               \
    Type out = *this;                                                  \
    out.field = std::move(value);                                      \
    return out;                                                        \
  }
#define KILN_CONFIG_EACH_(m, ctx, ...) KILN_FOR_EACH(m, ctx, __VA_ARGS__)
#define KILN_CONFIG_LIST_(m, ctx, ...) KILN_FOR_EACH_LIST(m, ctx, __VA_ARGS__)

/// Registers a config's fields (inside the struct): KILN_CONFIG(Type, (required...), (defaulted...)).
/// Generates to_json / from_json / to_json_string / from_json_string / save / load, with_*
/// for the defaulted fields, config_name() ("Type"), config_fields() (the fields in order,
/// required first), operator== and operator<< (see kiln/config/config.hpp).
#define KILN_CONFIG(Type, required, defaulted)                                                \
 public:                                                                                     \
  /** The config's name in messages ("LinearConfig"). */                                     \
  static constexpr std::string_view config_name() { return #Type; }                          \
  /** Every field by name, required ones first (in the constructor's order). */              \
  static std::vector<::kiln::config::Field> config_fields() {                                \
    return {KILN_CONFIG_EACH_(KILN_CONFIG_FIELD_REQ_, Type, KILN_UNPAREN required)           \
                KILN_CONFIG_EACH_(KILN_CONFIG_FIELD_DEF_, Type, KILN_UNPAREN defaulted)};    \
  }                                                                                          \
  /** Every field by name. */                                                                \
  ::kiln::config::Json to_json() const {                                                     \
    ::kiln::config::Json j = ::kiln::config::Json::object();                                 \
    KILN_CONFIG_EACH_(KILN_CONFIG_WRITE_, j, KILN_UNPAREN required)                          \
    KILN_CONFIG_EACH_(KILN_CONFIG_WRITE_, j, KILN_UNPAREN defaulted)                         \
    return j;                                                                                \
  }                                                                                          \
  /** Throws ConfigError for a missing required field, an unknown field or a wrong type. */  \
  static Type from_json(const ::kiln::config::Json& j) {                                     \
    ::kiln::config::check_object(                                                            \
        j, #Type, {KILN_CONFIG_EACH_(KILN_CONFIG_NAME_, Type, KILN_UNPAREN required)         \
                   KILN_CONFIG_EACH_(KILN_CONFIG_NAME_, Type, KILN_UNPAREN defaulted)});      \
    Type out = Type(KILN_CONFIG_LIST_(KILN_CONFIG_REQ_, Type, KILN_UNPAREN required));       \
    KILN_CONFIG_EACH_(KILN_CONFIG_DEF_, Type, KILN_UNPAREN defaulted)                        \
    return out;                                                                              \
  }                                                                                          \
  std::string to_json_string(int indent = 2) const { return to_json().dump(indent); }        \
  /** Throws ConfigError for malformed JSON and as from_json. */                             \
  static Type from_json_string(std::string_view text) {                                      \
    return from_json(::kiln::config::parse(text, "JSON string"));                            \
  }                                                                                          \
  /** Writes the JSON atomically (temporary file + rename). Throws IoError. */               \
  void save(const std::string& path) const {                                                 \
    ::kiln::io::write_file_atomic(path, to_json_string() + "\n", #Type "::save");            \
  }                                                                                          \
  /** Throws IoError if the file cannot be read, ConfigError (naming the file) otherwise. */ \
  static Type load(const std::string& path) {                                                \
    const std::string text = ::kiln::io::read_file(path, #Type "::load");                    \
    try {                                                                                    \
      return from_json(::kiln::config::parse(text, ::kiln::str_cat("\"", path, "\"")));      \
    } catch (const ::kiln::ConfigError& e) {                                                \
      if (std::string_view(e.what()).rfind("\"" + path + "\"", 0) == 0) throw;               \
      throw ::kiln::ConfigError(::kiln::str_cat("\"", path, "\": ", e.what()));              \
    }                                                                                        \
  }                                                                                          \
  KILN_CONFIG_EACH_(KILN_CONFIG_WITH_, Type, KILN_UNPAREN defaulted)                         \
  friend bool operator==(const Type&, const Type&) = default;                                \
  /** `Type {"field": value, ...}` (the JSON on one line). */                                \
  friend std::ostream& operator<<(std::ostream& os, const Type& c) {                         \
    return os << #Type " " << c.to_json().dump();                                            \
  }
