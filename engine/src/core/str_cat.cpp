// The out-of-line appenders of str_cat (kiln/core/str_cat.hpp): one copy of each in the
// engine rather than one per message.
#include "kiln/core/str_cat.hpp"

#include <charconv>
#include <cstdio>
#include <string>

namespace kiln::detail {

void append_float_g(std::string& out, double value, int precision) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.*g", precision, value);
  if (n > 0) out.append(buf, static_cast<std::size_t>(n) < sizeof buf ? n : sizeof buf - 1);
}

void append_float_g(std::string& out, long double value, int precision) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof buf, "%.*Lg", precision, value);
  if (n > 0) out.append(buf, static_cast<std::size_t>(n) < sizeof buf ? n : sizeof buf - 1);
}

void append_signed(std::string& out, long long value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

void append_unsigned(std::string& out, unsigned long long value) {
  char buf[24];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

}  // namespace kiln::detail
