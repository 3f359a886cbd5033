// config::Value's object access and equality (the tree itself is in the public header;
// parsing and printing, which need nlohmann-json, are in json.cpp).
#include "kiln/config/value.hpp"

#include <algorithm>

namespace kiln::config {

Value::Value(std::string s) : type_(Type::String), string_(std::move(s)) {}
Value::Value(std::string_view s) : type_(Type::String), string_(s) {}
Value::Value(const char* s) : type_(Type::String), string_(s) {}
Value::Value(const Value& other) = default;
Value::Value(Value&& other) noexcept = default;
Value& Value::operator=(const Value& other) = default;
Value& Value::operator=(Value&& other) noexcept = default;
Value::~Value() = default;

Value Value::array(std::initializer_list<Value> items) {
  Value v;
  v.type_ = Type::Array;
  v.items_.assign(items.begin(), items.end());
  return v;
}

Value Value::object(std::initializer_list<std::pair<std::string_view, Value>> members) {
  Value v;
  v.type_ = Type::Object;
  for (const auto& [key, value] : members) v[key] = value;
  return v;
}

void Value::push_back(Value v) {
  if (type_ == Type::Null) type_ = Type::Array;
  items_.push_back(std::move(v));
}

std::size_t Value::lower_bound(std::string_view key) const {
  return static_cast<std::size_t>(
      std::lower_bound(keys_.begin(), keys_.end(), key,
                       [](const std::string& k, std::string_view x) { return k < x; }) -
      keys_.begin());
}

const Value* Value::find(std::string_view key) const {
  if (type_ != Type::Object) return nullptr;
  const std::size_t i = lower_bound(key);
  return i < keys_.size() && keys_[i] == key ? &items_[i] : nullptr;
}

Value* Value::find(std::string_view key) {
  return const_cast<Value*>(static_cast<const Value&>(*this).find(key));
}

Value& Value::operator[](std::string_view key) {
  if (type_ == Type::Null) type_ = Type::Object;
  const std::size_t i = lower_bound(key);
  if (i < keys_.size() && keys_[i] == key) return items_[i];
  keys_.insert(keys_.begin() + static_cast<std::ptrdiff_t>(i), std::string(key));
  return *items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(i), Value());
}

void Value::erase(std::string_view key) {
  if (type_ != Type::Object) return;
  const std::size_t i = lower_bound(key);
  if (i < keys_.size() && keys_[i] == key) {
    keys_.erase(keys_.begin() + static_cast<std::ptrdiff_t>(i));
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

bool operator==(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) return a.get_double() == b.get_double();
    if (a.is_number_unsigned() == b.is_number_unsigned()) return a.get_uint() == b.get_uint();
    // One signed, one unsigned: equal only when the signed one is not negative.
    const Value& s = a.is_number_unsigned() ? b : a;
    const Value& u = a.is_number_unsigned() ? a : b;
    return s.get_int() >= 0 && s.get_uint() == u.get_uint();
  }
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case Value::Type::Null: return true;
    case Value::Type::Boolean: return a.bool_ == b.bool_;
    case Value::Type::String: return a.string_ == b.string_;
    default: return a.keys_ == b.keys_ && a.items_ == b.items_;
  }
}

}  // namespace kiln::config
