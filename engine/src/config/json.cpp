// JSON text <-> config::Value, with nlohmann-json: the only place configs meet a JSON
// library. Parsing goes through nlohmann's SAX interface (an explicit stack, no recursion,
// linear time) so that the limits of issue 14 hold before anything deep or large is built:
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
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::config {
namespace {

using Json = nlohmann::json;

/// Builds a Value from SAX events, one open container per stack frame.
class Builder final : public nlohmann::json_sax<Json> {
 public:
  Builder(std::string_view source, const ParseLimits& limits)
      : source_(source), limits_(limits) {}

  Value take() { return std::move(root_); }

  bool null() override { return scalar(Value()); }
  bool boolean(bool b) override { return scalar(Value(b)); }
  bool number_integer(number_integer_t i) override { return scalar(Value(static_cast<std::int64_t>(i))); }
  bool number_unsigned(number_unsigned_t u) override {
    return scalar(Value(static_cast<std::uint64_t>(u)));
  }
  bool number_float(number_float_t d, const string_t&) override { return scalar(Value(static_cast<double>(d))); }
  bool string(string_t& s) override { return scalar(Value(std::move(s))); }
  bool binary(binary_t&) override { return scalar(Value()); }  // not produced by JSON text

  bool start_object(std::size_t) override { return open(Value::object()); }
  bool key(string_t& k) override {
    stack_.back().key = std::move(k);
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Value::array()); }
  bool end_array() override { return close(); }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // Syntax errors, and numbers out of double's range (1e999: nlohmann's out_of_range.406).
    throw ConfigError(str_cat(source_, ": malformed JSON (", e.what(), ")"));
  }

 private:
  struct Frame {
    Value value;      // arrays: the elements so far; objects: an empty object until closed
    std::string key;  // objects: the key of the next value
    // Objects: the members so far, in the text's order. Sorted into `value` once at the end,
    // where keys given twice are found side by side (a Value object keeps its keys sorted;
    // inserting each member in place would cost O(n) per key, O(n²) for n keys).
    std::vector<std::pair<std::string, Value>> members;
  };

  bool open(Value container) {
    count();
    if (stack_.size() >= limits_.max_depth) {
      throw LimitError(str_cat(source_, ": JSON nested deeper than ", limits_.max_depth,
                               " arrays/objects (the limit of config::ParseLimits::max_depth)",
                               path(stack_.size())));
    }
    stack_.push_back(Frame{std::move(container), {}, {}});
    return true;
  }
  bool close() {
    Frame& f = stack_.back();
    if (f.value.is_object()) {
      std::sort(f.members.begin(), f.members.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t i = 1; i < f.members.size(); ++i) {
        if (f.members[i].first == f.members[i - 1].first) {
          throw ConfigError(str_cat(source_, ": duplicate key \"", f.members[i].first,
                                    "\" in the object", path(stack_.size() - 1),
                                    " (each key may appear once)"));
        }
      }
      for (auto& [k, v] : f.members) f.value[k] = std::move(v);  // appends: keys ascend
    }
    Value done = std::move(f.value);
    stack_.pop_back();
    return put(std::move(done));
  }
  /// One more value read: checks max_values and the enclosing array's max_array_size.
  void count() {
    if (++values_ > limits_.max_values) {
      throw LimitError(str_cat(source_, ": JSON holds more than ", limits_.max_values,
                               " values (the limit of config::ParseLimits::max_values)"));
    }
    if (!stack_.empty() && stack_.back().value.is_array() &&
        stack_.back().value.size() >= limits_.max_array_size) {
      throw LimitError(str_cat(source_, ": the array", path(stack_.size() - 1),
                               " has more than ", limits_.max_array_size,
                               " elements (the limit of ", limits_.array_limit_name, ")"));
    }
  }
  bool scalar(Value v) {
    count();
    return put(std::move(v));
  }
  bool put(Value v) {
    if (stack_.empty()) {
      root_ = std::move(v);
    } else if (Frame& f = stack_.back(); f.value.is_array()) {
      f.value.push_back(std::move(v));
    } else {
      f.members.emplace_back(std::move(f.key), std::move(v));
    }
    return true;
  }
  /// " at layers[2].padding": where the container opened in frame `frames` sits.
  std::string path(std::size_t frames) const {
    std::string out;
    for (std::size_t i = 0; i < frames; ++i) {
      const Frame& f = stack_[i];
      if (f.value.is_array()) {
        out += str_cat("[", f.value.size(), "]");
      } else {
        out += str_cat(out.empty() ? "" : ".", f.key);
      }
    }
    return out.empty() ? std::string() : str_cat(" at ", out);
  }

  std::string_view source_;
  const ParseLimits& limits_;
  std::vector<Frame> stack_;
  std::size_t values_ = 0;
  Value root_;
};

}  // namespace

Value parse(std::string_view text, std::string_view source, const ParseLimits& limits) {
  Builder builder(source, limits);
  Json::sax_parse(text.begin(), text.end(), &builder);
  return builder.take();
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
