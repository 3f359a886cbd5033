// The non-template parts of KILN_CONFIG's reading: one copy of each message.
#include "kiln/config/config.hpp"

namespace kiln::config {
namespace detail {

void fail(std::string_view where, std::string_view expected, const Value& v) {
  throw_error<ConfigError>(where, ": expected ", expected, ", got ", describe(v));
}

void rethrow_at(std::string_view where, const ConfigError& e) {
  throw_error<ConfigError>(where, ": ", e.what());
}

std::int64_t decode_int(const Value& v, const std::string& where, std::int64_t min,
                        std::uint64_t max) {
  if (!v.is_number_integer()) fail(where, "an integer", v);
  const auto out_of_range = [&] {
    fail(where, str_cat("an integer in [", min, ", ", max, "]"), v);
  };
  if (v.is_number_unsigned()) {
    if (v.get_uint() > max) out_of_range();
    return static_cast<std::int64_t>(v.get_uint());
  }
  const std::int64_t i = v.get_int();
  if (i < min || (i > 0 && static_cast<std::uint64_t>(i) > max)) out_of_range();
  return i;
}

}  // namespace detail

const Value& required_field(const Value& j, std::string_view type, std::string_view field) {
  const Value* v = j.find(field);
  if (!v) throw_error<ConfigError>(type, ": missing required field \"", field, "\"");
  return *v;
}

void check_object(const Value& j, std::string_view type,
                  std::initializer_list<std::string_view> fields) {
  if (!j.is_object()) {
    throw_error<ConfigError>(type, ": expected a JSON object, got ", describe(j));
  }
  for (const std::string& key : j.keys()) {
    bool known = false;
    for (auto f : fields) known = known || f == key;
    if (!known) {
      std::string list;
      for (auto f : fields) list += str_cat(list.empty() ? "" : ", ", f);
      throw_error<ConfigError>(type, ": unknown field \"", key, "\" (fields: ", list, ")");
    }
  }
}

}  // namespace kiln::config
