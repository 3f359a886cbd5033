#pragma once
/// config::ValueBuilder: builds a config::Value from a stream of events (a scalar, the start
/// or end of an array or object, an object's key), checking config::ParseLimits as it goes.
/// It is the one place those limits and the duplicate-key rule live, whatever the source:
/// JSON text (config::parse, engine/src/config/json.cpp, feeds it the JSON library's SAX events)
/// or a JavaScript value handed to the WebAssembly engine (bindings/config_js.cpp walks it).
///
///   ValueBuilder b("optimizer", {});
///   b.start_object(); b.key("lr"); b.number(0.1); b.end_object();
///   Value v = b.take();   // {"lr": 0.1}
///
/// Errors (thrown by the call that breaks the rule, before anything more is built):
///   LimitError   nesting deeper than limits.max_depth, more than limits.max_values values in
///                all, more than limits.max_array_size elements in one array;
///   ConfigError  a key given twice in one object ("<source>: duplicate key \"k\" in the
///                object at layers[0] (each key may appear once)").
/// Events out of order (a key outside an object, end_array for an object) are a caller's bug;
/// the builder does not check them.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/config/value.hpp"

namespace kiln::config {

class ValueBuilder {
 public:
  /// `source` names the input in messages ("JSON string", a file name, "optimizer"); it and
  /// `limits` must outlive the builder.
  ValueBuilder(std::string_view source, const ParseLimits& limits)
      : source_(source), limits_(limits) {}

  void null() { scalar(Value()); }
  void boolean(bool b) { scalar(Value(b)); }
  void integer(std::int64_t i) { scalar(Value(i)); }
  void unsigned_integer(std::uint64_t u) { scalar(Value(u)); }
  void number(double d) { scalar(Value(d)); }
  void string(std::string s) { scalar(Value(std::move(s))); }

  void start_object() { open(Value::object()); }
  /// The key of the next value of the innermost open object.
  void key(std::string k) { stack_.back().key = std::move(k); }
  void end_object() { close(); }
  void start_array() { open(Value::array()); }
  void end_array() { close(); }

  /// The value built (call once, after the last event).
  Value take() { return std::move(root_); }

 private:
  struct Frame {
    Value value;      // arrays: the elements so far; objects: an empty object until closed
    std::string key;  // objects: the key of the next value
    // Objects: the members so far, in the input's order. Sorted into `value` once at the end,
    // where keys given twice are found side by side (a Value object keeps its keys sorted;
    // inserting each member in place would cost O(n) per key, O(n²) for n keys).
    std::vector<std::pair<std::string, Value>> members;
  };

  void open(Value container);
  void close();
  /// One more value read: checks max_values and the enclosing array's max_array_size.
  void count();
  void scalar(Value v) {
    count();
    put(std::move(v));
  }
  void put(Value v);
  /// " at layers[2].padding": where the container opened in frame `frames` sits.
  std::string path(std::size_t frames) const;

  std::string_view source_;
  const ParseLimits& limits_;
  std::vector<Frame> stack_;
  std::size_t values_ = 0;
  Value root_;
};

}  // namespace kiln::config
