#pragma once
/// Configs (Burn's `#[derive(Config)]`): plain structs with required fields, fields with
/// defaults, `with_*` builders, equality, printing, and JSON save/load (config::Value; the text is parsed and printed by the JSON library
/// inside the engine, engine/src/config/json.cpp, so no public header includes it).
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
/// and the problem (a key given twice, JSON nested past ParseLimits::max_depth: see
/// config::parse). Field types: bool, integers, floating point, std::string, enums and other
/// types with a `config::Codec<T>` specialisation (kiln/nn/loss/reduction.hpp,
/// kiln/nn/padding.hpp), std::vector / std::array / std::optional of those, and other configs.
///
/// The generated `to_json()` / `from_json(j)` give and take the JSON library's own value type
/// when the caller includes the interop header <kiln/config/json_interop.hpp>
/// (engine/interop/, CMake target kiln_json_interop); the engine uses to_value() / from_value().
#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/config/value.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/preprocessor.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::config {

/// Types made with KILN_CONFIG (and configs with hand-written to_value / from_value).
template <class T>
concept IsConfig = requires(const T& c, const Value& v) {
  { c.to_value() } -> std::same_as<Value>;
  { T::from_value(v) } -> std::same_as<T>;
};

/// Declared here, defined by the interop header (engine/interop/kiln/config/
/// json_interop.hpp): how KILN_CONFIG's to_json() / from_json(j) convert. Not needed otherwise.
template <class J>
struct JsonInterop;

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

namespace detail {
template <class T> struct is_vector : std::false_type {};
template <class T, class A> struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_array : std::false_type {};
template <class T, std::size_t N> struct is_array<std::array<T, N>> : std::true_type {};

/// Throws ConfigError `<where>: expected <expected>, got <describe(v)>`.
[[noreturn]] void fail(std::string_view where, std::string_view expected, const Value& v);
/// Throws ConfigError `<where>: <message>`.
[[noreturn]] void rethrow_at(std::string_view where, const ConfigError& e);
/// The integer in [min, max] or a ConfigError naming `where` (out-of-line: one copy).
std::int64_t decode_int(const Value& v, const std::string& where, std::int64_t min,
                        std::uint64_t max);
}  // namespace detail

/// Reads a T from JSON; `where` names the config and field for errors ("LinearConfig.bias").
template <class T>
T decode(const Value& v, const std::string& where) {
  if constexpr (IsConfig<T>) {
    if (!v.is_object()) detail::fail(where, "an object", v);
    try {
      return T::from_value(v);
    } catch (const ConfigError& e) {
      detail::rethrow_at(where, e);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) detail::fail(where, "a boolean", v);
    return v.get_bool();
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(detail::decode_int(
        v, where, static_cast<std::int64_t>(std::numeric_limits<T>::min()),
        static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!v.is_number()) detail::fail(where, "a number", v);
    return static_cast<T>(v.get_double());
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) detail::fail(where, "a string", v);
    return v.get_string();
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
    static_assert(HasCodec<T>, "a config field's type needs a kiln::config::Codec<T>");
    // Enums and other types with a Codec (they report their own problems).
    try {
      return Codec<T>::decode(v);
    } catch (const ConfigError& e) {
      detail::rethrow_at(where, e);
    }
  }
}

/// Writes a T as JSON.
template <class T>
Value encode(const T& value) {
  if constexpr (IsConfig<T>) {
    return value.to_value();
  } else if constexpr (detail::is_optional<T>::value) {
    return value ? encode(*value) : Value();
  } else if constexpr (detail::is_vector<T>::value || detail::is_array<T>::value) {
    Value out = Value::array();
    for (const auto& x : value) out.push_back(encode(x));
    return out;
  } else if constexpr (std::is_same_v<T, bool> || std::is_arithmetic_v<T> ||
                       std::is_same_v<T, std::string>) {
    return Value(value);
  } else {
    static_assert(HasCodec<T>, "a config field's type needs a kiln::config::Codec<T>");
    return Codec<T>::encode(value);
  }
}

/// Reads a required field. Throws ConfigError `<type>: missing required field "<field>"`.
const Value& required_field(const Value& j, std::string_view type, std::string_view field);

/// Reads a required field.
template <class T>
T read_required(const Value& j, std::string_view type, std::string_view field) {
  return decode<T>(required_field(j, type, field), str_cat(type, ".", field));
}

/// Overwrites `value` if the field is present.
template <class T>
void read_default(const Value& j, std::string_view type, std::string_view field, T& value) {
  if (const Value* v = j.find(field)) value = decode<T>(*v, str_cat(type, ".", field));
}

/// Throws ConfigError unless `j` is an object whose keys are all in `fields`.
void check_object(const Value& j, std::string_view type,
                  std::initializer_list<std::string_view> fields);

/// `load` of a config: reads `path`, parses it and calls `from_value`; a ConfigError names
/// the file (`"<path>": <config's message>`).
template <class T, class FromValue>
T load_file(const std::string& path, std::string_view op, FromValue from_value,
            const ParseLimits& limits = {}) {
  const std::string text = io::read_file(path, op);
  const std::string name = str_cat("\"", path, "\"");
  try {
    return from_value(parse(text, name, limits));
  } catch (const ConfigError& e) {
    if (std::string_view(e.what()).rfind(name, 0) == 0) throw;
    throw_error<ConfigError>(name, ": ", e.what());
  }
}

}  // namespace kiln::config

/// The JSON-library members of a config (to_json, from_json), usable once the caller
/// includes <kiln/config/json_interop.hpp>; a config with hand-written to_value / from_value
/// (nn::SequentialConfig, optim::GradientClippingConfig) adds them with this line.
#define KILN_CONFIG_JSON_MEMBERS(Type)                                                       \
  /** The config as the JSON library's value (needs <kiln/config/json_interop.hpp>). */     \
  template <class KilnJsonD_ = void>                                                         \
  typename ::kiln::config::JsonInterop<KilnJsonD_>::json to_json() const {                  \
    return ::kiln::config::JsonInterop<KilnJsonD_>::from_value(to_value());                  \
  }                                                                                          \
  /** from_value of the JSON library's value (needs <kiln/config/json_interop.hpp>). */    \
  template <class KilnJson_>                                                                 \
  static Type from_json(const KilnJson_& j) {                                                \
    return from_value(::kiln::config::JsonInterop<KilnJson_>::to_value(j));                  \
  }

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
/// Generates to_value / from_value (config::Value), to_json_string / from_json_string /
/// save / load, with_* for the defaulted fields, config_name() ("Type"), config_fields() (the
/// fields in order, required first), operator==, operator<<, and to_json / from_json for
/// the JSON library's value type (with <kiln/config/json_interop.hpp>; see above).
#define KILN_CONFIG(Type, required, defaulted)                                                \
 public:                                                                                     \
  /** The config's name in messages ("LinearConfig"). */                                     \
  static constexpr std::string_view config_name() { return #Type; }                          \
  /** Every field by name, required ones first (in the constructor's order). */              \
  static std::vector<::kiln::config::Field> config_fields() {                                \
    return {KILN_CONFIG_EACH_(KILN_CONFIG_FIELD_REQ_, Type, KILN_UNPAREN required)           \
                KILN_CONFIG_EACH_(KILN_CONFIG_FIELD_DEF_, Type, KILN_UNPAREN defaulted)};    \
  }                                                                                          \
  /** Every field by name, as a JSON object. */                                              \
  ::kiln::config::Value to_value() const {                                                   \
    ::kiln::config::Value j = ::kiln::config::Value::object();                               \
    KILN_CONFIG_EACH_(KILN_CONFIG_WRITE_, j, KILN_UNPAREN required)                          \
    KILN_CONFIG_EACH_(KILN_CONFIG_WRITE_, j, KILN_UNPAREN defaulted)                         \
    return j;                                                                                \
  }                                                                                          \
  /** Throws ConfigError for a missing required field, an unknown field or a wrong type. */  \
  static Type from_value(const ::kiln::config::Value& j) {                                   \
    ::kiln::config::check_object(                                                            \
        j, #Type, {KILN_CONFIG_EACH_(KILN_CONFIG_NAME_, Type, KILN_UNPAREN required)         \
                   KILN_CONFIG_EACH_(KILN_CONFIG_NAME_, Type, KILN_UNPAREN defaulted)});      \
    Type out = Type(KILN_CONFIG_LIST_(KILN_CONFIG_REQ_, Type, KILN_UNPAREN required));       \
    KILN_CONFIG_EACH_(KILN_CONFIG_DEF_, Type, KILN_UNPAREN defaulted)                        \
    return out;                                                                              \
  }                                                                                          \
  KILN_CONFIG_JSON_MEMBERS(Type)                                                             \
  std::string to_json_string(int indent = 2) const { return to_value().dump(indent); }       \
  /** Throws ConfigError for malformed JSON and as from_value; LimitError (config::parse). */\
  static Type from_json_string(std::string_view text) {                                      \
    return from_value(::kiln::config::parse(text, "JSON string"));                           \
  }                                                                                          \
  /** Writes the JSON atomically (temporary file + rename). Throws IoError. */               \
  void save(const std::string& path) const {                                                 \
    ::kiln::io::write_file_atomic(path, to_json_string() + "\n", #Type "::save");            \
  }                                                                                          \
  /** Throws IoError if the file cannot be read, ConfigError (naming the file) otherwise. */ \
  static Type load(const std::string& path) {                                                \
    return ::kiln::config::load_file<Type>(                                                  \
        path, #Type "::load", [](const ::kiln::config::Value& v) { return from_value(v); }); \
  }                                                                                          \
  KILN_CONFIG_EACH_(KILN_CONFIG_WITH_, Type, KILN_UNPAREN defaulted)                         \
  friend bool operator==(const Type&, const Type&) = default;                                \
  /** `Type {"field": value, ...}` (the JSON on one line). */                                \
  /** str_cat's hook (and `std::cout << c`, kiln/core/str_cat.hpp). */                      \
  friend void append_to(std::string& kiln_text_, const Type& c) {                            \
    kiln_text_ += #Type " ";                                                                 \
    kiln_text_ += c.to_value().dump();                                                       \
  }
