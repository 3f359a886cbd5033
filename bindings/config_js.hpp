#pragma once
/// Configs and specs crossing from JS as values, not JSON text (issue 17): the JS layer hands
/// the engine a plain JSON tree (bindings/js/tensor/checks.ts `engineValue`: only null,
/// booleans, finite numbers, strings, arrays and plain objects), and this turns it into the
/// config::Value that the C++ configs read (from_value). So a page that builds and trains a
/// model runs no JSON parser in the engine; JSON text (a saved optimizer state, a user's
/// config file) still goes through config::parse.
#include <emscripten/val.h>

#include <string_view>

#include "kiln/config/value.hpp"

namespace kiln_js {

/// The config::Value of a JS value, read as JSON text of it would be (JSON.stringify, then
/// config::parse): an integer-valued number is an Unsigned when >= 0 (-0 too) and below 2^64,
/// an Integer when negative and >= -2^63, otherwise a Float. Checked by config::ValueBuilder
/// with `limits`, as config::parse checks text (nesting depth, number of values, array length,
/// a key repeated: impossible in a JS object).
/// @throws kiln::ConfigError "<source>: expected a JSON value (null, boolean, number, string,
///   array or object), got <typeof>" for undefined, a function, a symbol or a BigInt;
///   "<source>: expected a finite number, got NaN" (JSON has no NaN or ±Infinity);
///   kiln::LimitError as config::parse.
kiln::config::Value config_from_js(const emscripten::val& v, std::string_view source,
                                   const kiln::config::ParseLimits& limits = {});

/// The JS value of a config::Value: what JSON.parse(v.dump()) gives, built without the JSON
/// text (so a page that reads a model's config runs no JSON serializer in the engine): objects
/// with their keys in the Value's (sorted) order, integers as the nearest double, NaN and
/// ±Infinity as null (as dump() writes them), -0 kept.
emscripten::val config_to_js(const kiln::config::Value& v);

}  // namespace kiln_js
