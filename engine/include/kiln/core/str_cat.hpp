#pragma once
/// str_cat: concatenates anything streamable into a std::string (GCC 12 and libc++ 13 have
/// no <format>). Used to build error messages in STYLE.md §7's form.
#include <sstream>
#include <string>

namespace kiln {

template <class... Args>
std::string str_cat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace kiln
