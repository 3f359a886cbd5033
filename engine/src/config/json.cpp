// JSON text <-> config::Value, with nlohmann-json: the only place configs meet a JSON
// library. Parsing goes through nlohmann's SAX interface (an explicit stack, no recursion,
// linear time) into config::ValueBuilder, so that the limits of issue 14 hold before
// anything deep or large is built:
// nesting depth (ParseLimits::max_depth), the number of values and array elements
// (max_values, max_array_size), and keys repeated in one object (nlohmann's DOM parser keeps
// the last one silently; the reference SafeTensors reader and Kiln reject them).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/config/json_interop.hpp"
#include "kiln/config/value.hpp"
#include "kiln/config/value_builder.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::config {
namespace {

using Json = nlohmann::json;

/// nlohmann's SAX events, handed to the ValueBuilder (which checks the limits).
class Sax final : public nlohmann::json_sax<Json> {
 public:
  Sax(std::string_view source, const ParseLimits& limits) : source_(source), builder_(source, limits) {}

  Value take() { return builder_.take(); }

  bool null() override { builder_.null(); return true; }
  bool boolean(bool b) override { builder_.boolean(b); return true; }
  bool number_integer(number_integer_t i) override {
    builder_.integer(static_cast<std::int64_t>(i)); return true;
  }
  bool number_unsigned(number_unsigned_t u) override {
    builder_.unsigned_integer(static_cast<std::uint64_t>(u)); return true;
  }
  bool number_float(number_float_t d, const string_t&) override {
    builder_.number(static_cast<double>(d)); return true;
  }
  bool string(string_t& s) override { builder_.string(std::move(s)); return true; }
  bool binary(binary_t&) override { builder_.null(); return true; }  // not produced by JSON text

  bool start_object(std::size_t) override { builder_.start_object(); return true; }
  bool key(string_t& k) override { builder_.key(std::move(k)); return true; }
  bool end_object() override { builder_.end_object(); return true; }
  bool start_array(std::size_t) override { builder_.start_array(); return true; }
  bool end_array() override { builder_.end_array(); return true; }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // Syntax errors, and numbers out of double's range (1e999: nlohmann's out_of_range.406).
    throw_error<ConfigError>(source_, ": malformed JSON (", e.what(), ")");
  }

 private:
  std::string_view source_;
  ValueBuilder builder_;
};

}  // namespace

Value parse(std::string_view text, std::string_view source, const ParseLimits& limits) {
  Sax sax(source, limits);
  Json::sax_parse(text.begin(), text.end(), &sax);
  return sax.take();
}

std::string Value::dump(int indent) const {
  return to_nlohmann(*this).dump(indent, ' ', false, Json::error_handler_t::replace);
}

std::string describe(const Value& v) {
  switch (v.type()) {
    case Value::Type::Null: return "null";
    case Value::Type::Boolean: return str_cat("the boolean ", v.dump());
    case Value::Type::Integer:
    case Value::Type::Unsigned: return str_cat("the integer ", v.dump());
    case Value::Type::Float: return str_cat("the number ", v.dump());
    case Value::Type::String: return str_cat("the string ", v.dump());
    case Value::Type::Array: return "an array";
    case Value::Type::Object: return "an object";
  }
  return "an unsupported JSON value";
}

}  // namespace kiln::config
