// config_from_js (config_js.hpp): a JS value -> config::Value through config::ValueBuilder.
#include "config_js.hpp"

#include <cmath>
#include <cstdint>
#include <string>

#include "kiln/config/value_builder.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

struct Walk {
  kiln::config::ValueBuilder& b;
  std::string_view source;
  std::string path;  // of the value being read: "", "layers[0]", "layers[0].kind"
  val object = val::global("Object");  // looked up once per walk, not per object
  val object_prototype = object["prototype"];

  [[noreturn]] void fail(std::string_view what) const {
    throw kiln::ConfigError(path.empty() ? kiln::str_cat(source, ": ", what)
                                         : kiln::str_cat(source, ": ", path, ": ", what));
  }

  val is_well_formed = val::global("String")["prototype"]["isWellFormed"];

  /// The string's UTF-8 bytes. A lone UTF-16 surrogate has none (config::parse refuses
  /// "\udc00"), and Emscripten's stringToUTF8 would write a lone high one as U+10000 or merge
  /// it with the next unit: refused first (String.prototype.isWellFormed, where the runtime
  /// has it; the package checks its own values in JS everywhere: engineJson).
  std::string utf8(const val& s) const {
    if (!is_well_formed.isUndefined() && !is_well_formed.call<bool>("call", s)) {
      fail("a string holds a lone UTF-16 surrogate (not valid Unicode text)");
    }
    return s.as<std::string>();
  }

  void value(const val& v) {
    if (v.isNull()) {
      b.null();
    } else if (v.isTrue() || v.isFalse()) {
      b.boolean(v.isTrue());
    } else if (v.isNumber()) {
      number(v.as<double>());
    } else if (v.isString()) {
      b.string(utf8(v));
    } else if (v.isArray()) {
      b.start_array();
      const auto n = v["length"].as<unsigned>();
      const std::size_t at = path.size();
      for (unsigned i = 0; i < n; ++i) {
        path += kiln::str_cat("[", i, "]");
        value(v[i]);  // a hole reads as undefined: refused below, with its index
        path.resize(at);
      }
      b.end_array();
    } else if (v.typeOf().as<std::string>() == "object") {
      // Plain objects only (Object.prototype or null): a Date, a Map, a boxed number... is no
      // JSON value, and JSON.stringify would have turned it into something else silently.
      const val proto = object.call<val>("getPrototypeOf", v);
      if (!proto.isNull() && !proto.strictlyEquals(object_prototype)) {
        fail(kiln::str_cat("expected a plain object or array, got ",
                           object_prototype["toString"].call<std::string>("call", v)));
      }
      b.start_object();
      const val keys = object.call<val>("keys", v);
      const auto n = keys["length"].as<unsigned>();
      const std::size_t at = path.size();
      for (unsigned i = 0; i < n; ++i) {
        const val key = keys[i];
        std::string k = utf8(key);
        const val item = v[key];
        path += at == 0 ? k : kiln::str_cat(".", k);
        b.key(std::move(k));
        value(item);
        path.resize(at);
      }
      b.end_object();
    } else {
      fail(kiln::str_cat("expected a JSON value (null, boolean, number, string, array or object), got ",
                         v.typeOf().as<std::string>()));
    }
  }

  void number(double d) {
    if (!std::isfinite(d)) fail(kiln::str_cat("expected a finite number, got ", std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity"));
    // As JSON text of it reads: JSON.stringify writes an integer below 1e21 with its digits,
    // which the parser takes as an unsigned or signed 64-bit integer when it fits.
    if (d == std::floor(d) && d >= 0 && d < 18446744073709551616.0) {
      b.unsigned_integer(static_cast<std::uint64_t>(d));
    } else if (d == std::floor(d) && d < 0 && d >= -9223372036854775808.0) {
      b.integer(static_cast<std::int64_t>(d));
    } else {
      b.number(d);
    }
  }
};

}  // namespace

val config_to_js(const kiln::config::Value& v) {
  using Type = kiln::config::Value::Type;
  switch (v.type()) {
    case Type::Null: return val::null();
    case Type::Boolean: return val(v.get_bool());
    case Type::Integer:
    case Type::Unsigned:
    case Type::Float: {
      const double d = v.get_double();
      return std::isfinite(d) ? val(d) : val::null();
    }
    case Type::String: return val(v.get_string());  // with its length: a NUL stays
    case Type::Array: {
      val out = val::array();
      for (const auto& item : v.items()) out.call<void>("push", config_to_js(item));
      return out;
    }
    case Type::Object: {
      val out = val::object();
      for (std::size_t i = 0; i < v.size(); ++i) out.set(v.keys()[i], config_to_js(v.items()[i]));
      return out;
    }
  }
  return val::null();
}

kiln::config::Value config_from_js(const val& v, std::string_view source,
                                   const kiln::config::ParseLimits& limits) {
  kiln::config::ValueBuilder b(source, limits);
  Walk{b, source}.value(v);
  return b.take();
}

}  // namespace kiln_js
