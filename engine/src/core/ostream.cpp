// The std::ostream side of printing, for C++ programs that stream engine values
// (`std::cout << data`). Everything else formats into std::string (kiln/core/str_cat.hpp),
// so the wasm engine, which never streams, links no iostream code (issue 17): keep every
// use of <ostream> in this file.
#include <ios>
#include <ostream>
#include <string>

#include "kiln/core/tensor_data.hpp"

namespace kiln {

int detail::stream_precision(const std::ostream& out) {
  const bool custom =
      (out.flags() & std::ios::floatfield) == std::ios::fixed || out.precision() != 6;
  return custom ? static_cast<int>(out.precision()) : -1;
}

std::ostream& operator<<(std::ostream& out, const TensorData& data) {
  std::string text;
  append_values(text, data, detail::stream_precision(out));
  return out << text;
}

}  // namespace kiln
