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

void walk(const val& v, kiln::config::ValueBuilder& b, std::string_view source) {
  if (v.isNull()) {
    b.null();
  } else if (v.isTrue() || v.isFalse()) {
    b.boolean(v.isTrue());
  } else if (v.isNumber()) {
    const double d = v.as<double>();
    if (!std::isfinite(d)) {
      throw kiln::ConfigError(kiln::str_cat(source, ": expected a finite number, got ",
                                            std::isnan(d) ? "NaN"
                                            : d > 0       ? "Infinity"
                                                          : "-Infinity"));
    }
    // As JSON text of it reads: JSON.stringify writes an integer below 1e21 with its digits,
    // which the parser takes as an unsigned or signed 64-bit integer when it fits.
    if (d == std::floor(d) && d >= 0 && d < 18446744073709551616.0) {
      b.unsigned_integer(static_cast<std::uint64_t>(d));
    } else if (d == std::floor(d) && d < 0 && d >= -9223372036854775808.0) {
      b.integer(static_cast<std::int64_t>(d));
    } else {
      b.number(d);
    }
  } else if (v.isString()) {
    b.string(v.as<std::string>());
  } else if (v.isArray()) {
    b.start_array();
    const auto n = v["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) walk(v[i], b, source);
    b.end_array();
  } else if (v.typeOf().as<std::string>() == "object") {
    b.start_object();
    const val keys = val::global("Object").call<val>("keys", v);
    const auto n = keys["length"].as<unsigned>();
    for (unsigned i = 0; i < n; ++i) {
      std::string k = keys[i].as<std::string>();
      const val item = v[k];
      b.key(std::move(k));
      walk(item, b, source);
    }
    b.end_object();
  } else {
    throw kiln::ConfigError(kiln::str_cat(
        source, ": expected a JSON value (null, boolean, number, string, array or object), got ",
        v.typeOf().as<std::string>()));
  }
}

}  // namespace

kiln::config::Value config_from_js(const val& v, std::string_view source,
                                   const kiln::config::ParseLimits& limits) {
  kiln::config::ValueBuilder b(source, limits);
  walk(v, b, source);
  return b.take();
}

}  // namespace kiln_js
