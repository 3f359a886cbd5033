#pragma once
/// config::Value: one JSON value as configs read and write it (a small tree of null,
/// booleans, numbers, strings, arrays and objects), so that no public header needs a JSON
/// library. Text is parsed and printed by the JSON library inside the engine
/// (engine/src/config/json.cpp: config::parse, Value::dump), with limits (nesting depth,
/// duplicate keys) checked while parsing.
///
///   config::Value v = config::parse(R"({"d_input": 784, "bias": false})", "JSON string");
///   v.find("d_input")->get_int();   // 784
///   v["bias"] = true;               // objects keep their keys sorted, as the JSON library does
///   v.dump();                       // {"bias":true,"d_input":784}
///
/// Numbers keep the parser's three kinds (a signed integer, an unsigned integer, a double) so
/// that messages and printed JSON read as before ("the integer 3", "2.0").
/// Interop with the JSON library's own value type (tests, tools):
/// engine/interop/kiln/config/json_interop.hpp.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln::config {

class Value {
 public:
  enum class Type { Null, Boolean, Integer, Unsigned, Float, String, Array, Object };

  /// null.
  Value() = default;
  Value(std::nullptr_t) {}  // NOLINT: implicit, as JSON's null
  Value(bool b) : type_(Type::Boolean), bool_(b) {}  // NOLINT
  /// A signed integer type gives an Integer, an unsigned one an Unsigned (as the JSON library).
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  Value(I i) {  // NOLINT
    if constexpr (std::is_signed_v<I>) {
      type_ = Type::Integer;
      int_ = static_cast<std::int64_t>(i);
    } else {
      type_ = Type::Unsigned;
      uint_ = static_cast<std::uint64_t>(i);
    }
  }
  Value(double d) : type_(Type::Float), double_(d) {}        // NOLINT
  Value(float f) : Value(static_cast<double>(f)) {}          // NOLINT
  Value(std::string s);                                      // NOLINT
  Value(std::string_view s);                                 // NOLINT
  Value(const char* s);                                      // NOLINT

  // Out of line (engine/src/config/value.cpp): one copy of the string and vector code, not
  // one per config field in every TU (it made the WebAssembly module 50 KB larger).
  Value(const Value& other);
  Value(Value&& other) noexcept;
  Value& operator=(const Value& other);
  Value& operator=(Value&& other) noexcept;
  ~Value();

  /// An empty array, or one holding `items`.
  static Value array(std::initializer_list<Value> items = {});
  /// An empty object, or one holding `members` (a repeated key keeps the last value).
  static Value object(std::initializer_list<std::pair<std::string_view, Value>> members = {});

  Type type() const noexcept { return type_; }
  bool is_null() const noexcept { return type_ == Type::Null; }
  bool is_boolean() const noexcept { return type_ == Type::Boolean; }
  /// An Integer or an Unsigned.
  bool is_number_integer() const noexcept {
    return type_ == Type::Integer || type_ == Type::Unsigned;
  }
  bool is_number_unsigned() const noexcept { return type_ == Type::Unsigned; }
  bool is_number_float() const noexcept { return type_ == Type::Float; }
  bool is_number() const noexcept { return is_number_integer() || is_number_float(); }
  bool is_string() const noexcept { return type_ == Type::String; }
  bool is_array() const noexcept { return type_ == Type::Array; }
  bool is_object() const noexcept { return type_ == Type::Object; }
  /// A string equal to `s`.
  bool is_string(std::string_view s) const noexcept { return is_string() && string_ == s; }

  // Accessors: the caller checks the type first (kiln::config::decode does); a wrong type
  // gives a value of the stored bits' meaning, never undefined behaviour.
  bool get_bool() const noexcept { return bool_; }
  /// The integer as int64 (an Unsigned above INT64_MAX wraps: check is_number_unsigned()).
  std::int64_t get_int() const noexcept {
    return type_ == Type::Unsigned ? static_cast<std::int64_t>(uint_) : int_;
  }
  std::uint64_t get_uint() const noexcept {
    return type_ == Type::Unsigned ? uint_ : static_cast<std::uint64_t>(int_);
  }
  /// Any number as a double.
  double get_double() const noexcept {
    switch (type_) {
      case Type::Integer: return static_cast<double>(int_);
      case Type::Unsigned: return static_cast<double>(uint_);
      default: return double_;
    }
  }
  const std::string& get_string() const noexcept { return string_; }

  /// Elements of an array or members of an object; 0 for anything else.
  std::size_t size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }

  // Arrays.
  /// The array's element i (any integer type: v[0] is not a key).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  const Value& operator[](I i) const {
    return items_[static_cast<std::size_t>(i)];
  }
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  Value& operator[](I i) {
    return items_[static_cast<std::size_t>(i)];
  }
  /// Appends (a null becomes an empty array first, as the JSON library).
  void push_back(Value v);
  /// The array's elements, or the object's values (in key order).
  const std::vector<Value>& items() const noexcept { return items_; }

  // Objects: keys sorted, unique.
  /// The object's keys, sorted; keys()[i] names items()[i].
  const std::vector<std::string>& keys() const noexcept { return keys_; }
  /// The member named `key`, or nullptr (also when this is not an object).
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  /// The member named `key`, inserted as null if absent (a null becomes an empty object
  /// first, as the JSON library).
  Value& operator[](std::string_view key);
  Value& operator[](const char* key) { return (*this)[std::string_view(key)]; }
  /// Removes the member named `key` if present.
  void erase(std::string_view key);

  /// The JSON text: on one line (indent < 0) or indented (the JSON library's, so numbers print
  /// as before: 2.0, 1e-05). Defined in engine/src/config/json.cpp.
  std::string dump(int indent = -1) const;

  /// Same type family and value (numbers compare by value across kinds, as the JSON library).
  friend bool operator==(const Value& a, const Value& b);

 private:
  std::size_t lower_bound(std::string_view key) const;

  Type type_ = Type::Null;
  bool bool_ = false;
  std::int64_t int_ = 0;
  std::uint64_t uint_ = 0;
  double double_ = 0.0;
  std::string string_;
  std::vector<std::string> keys_;  // objects
  std::vector<Value> items_;       // arrays, and objects' values beside keys_
};

/// The JSON form of a field type that is neither a number, string, bool, container nor
/// config (an enum such as nn::loss::Reduction, a variant-like type such as
/// nn::Initializer): specialise it beside the type, before any config uses it, with
///   static Value encode(const T&);
///   static T decode(const Value&);  // throws ConfigError naming the problem only
///                                   // ("expected \"mean\" or \"sum\", got ..."); decode()
///                                   // below prefixes the config and field.
template <class T>
struct Codec {};

/// T has a Codec specialisation.
template <class T>
concept HasCodec = requires(const T& t, const Value& v) {
  { Codec<T>::encode(t) } -> std::same_as<Value>;
  { Codec<T>::decode(v) } -> std::same_as<T>;
};

/// Limits of config::parse (issue 14: a config cannot stall or exhaust the engine).
struct ParseLimits {
  /// Arrays and objects nested deeper than this are rejected (LimitError). Configs nest a
  /// handful of levels; a SequentialConfig spec three.
  std::size_t max_depth = 64;
  /// At most this many values (scalars, arrays and objects) in the whole text (LimitError):
  /// memory stays bounded (a Value is ~130 bytes) whatever the text's length.
  std::size_t max_values = std::size_t{1} << 20;
  /// At most this many elements in one array (LimitError naming `array_limit_name`), e.g.
  /// SequentialConfig's layers (max_layers), checked as the text is read.
  std::size_t max_array_size = std::size_t{1} << 20;
  std::string_view array_limit_name = "config::ParseLimits::max_array_size";
};

/// Parses JSON text. Throws ConfigError naming `source` (a file name or "JSON string") and
/// the position of a syntax error (also for a number out of double's range, 1e999, and for a
/// key repeated in one object, which the library's DOM parser would take silently), LimitError naming
/// the cap when arrays/objects nest deeper than limits.max_depth, or there are more values
/// or array elements than limits allow (checked while reading, before building more). Defined in
/// engine/src/config/json.cpp (a SAX parser: no recursion, linear time).
Value parse(std::string_view text, std::string_view source, const ParseLimits& limits = {});

/// "the integer 3", "the string \"a\"", "an array", ... for error messages.
std::string describe(const Value& v);

}  // namespace kiln::config
