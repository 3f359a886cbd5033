// config::ValueBuilder (kiln/config/value_builder.hpp): ParseLimits and the duplicate-key
// rule, checked while a Value is built from events, whoever sends them.
#include "kiln/config/value_builder.hpp"

#include <algorithm>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::config {

void ValueBuilder::open(Value container) {
  count();
  if (stack_.size() >= limits_.max_depth) {
    throw_error<LimitError>(source_, ": JSON nested deeper than ", limits_.max_depth,
                            " arrays/objects (the limit of config::ParseLimits::max_depth)",
                            path(stack_.size()));
  }
  stack_.push_back(Frame{std::move(container), {}, {}});
}

void ValueBuilder::close() {
  Frame& f = stack_.back();
  if (f.value.is_object()) {
    std::sort(f.members.begin(), f.members.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 1; i < f.members.size(); ++i) {
      if (f.members[i].first == f.members[i - 1].first) {
        throw_error<ConfigError>(source_, ": duplicate key \"", f.members[i].first,
                                 "\" in the object", path(stack_.size() - 1),
                                 " (each key may appear once)");
      }
    }
    for (auto& [k, v] : f.members) f.value[k] = std::move(v);  // appends: keys ascend
  }
  Value done = std::move(f.value);
  stack_.pop_back();
  put(std::move(done));
}

void ValueBuilder::count() {
  if (++values_ > limits_.max_values) {
    throw_error<LimitError>(source_, ": JSON holds more than ", limits_.max_values,
                            " values (the limit of config::ParseLimits::max_values)");
  }
  if (!stack_.empty() && stack_.back().value.is_array() &&
      stack_.back().value.size() >= limits_.max_array_size) {
    throw_error<LimitError>(source_, ": the array", path(stack_.size() - 1), " has more than ",
                            limits_.max_array_size, " elements (the limit of ",
                            limits_.array_limit_name, ")");
  }
}

void ValueBuilder::put(Value v) {
  if (stack_.empty()) {
    root_ = std::move(v);
  } else if (Frame& f = stack_.back(); f.value.is_array()) {
    f.value.push_back(std::move(v));
  } else {
    f.members.emplace_back(std::move(f.key), std::move(v));
  }
}

std::string ValueBuilder::path(std::size_t frames) const {
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

}  // namespace kiln::config
