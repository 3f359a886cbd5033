// Printing of TensorData, after Burn's Display for Tensor: values nested by rank
// (summarised with "..." past 1000 elements, 3 edge items per dim, as Burn and PyTorch).
// The tensor's frame around them (shape, device, backend, kind, dtype) is the tensor
// layer's: engine/src/tensor/print.cpp. Written into a std::string (no iostreams: issue
// 17); the ostream operators are in engine/src/core/ostream.cpp.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/core/tensor_data.hpp"

namespace kiln {
namespace {

constexpr std::int64_t kSummarizeAbove = 1000;
constexpr std::int64_t kEdgeItems = 3;

// Shortest decimal that reads back as the same float, with ".0" on integers (Rust's
// default float Display), unless a precision is asked for (precision >= 0: %.<p>f).
std::string format_float(float v, int precision) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  if (precision >= 0) {
    std::snprintf(buf, sizeof buf, "%.*f", precision, static_cast<double>(v));
    return buf;
  }
  int digits = 9;
  for (int p = 1; p <= 9; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) {
      digits = p;
      break;
    }
  }
  // Rust prints f32 in positional notation ("100.0", "0.001"); keep that for the usual
  // magnitudes and fall back to the exponent form for very large or small ones.
  const int exponent = v == 0.f ? 0 : static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (exponent >= -5 && exponent < 16) {
    const int decimals = std::max(0, digits - 1 - exponent);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(v));
    // log10 may round a value just below a power of ten up to it: then one more decimal.
    if (std::strtof(buf, nullptr) != v) {
      std::snprintf(buf, sizeof buf, "%.*f", decimals + 1, static_cast<double>(v));
    }
  }
  std::string s = buf;
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string format_value(const TensorData& data, std::size_t i, int precision) {
  switch (data.dtype) {
    case DType::F32: return format_float(static_cast<float>(data.value_as_double(i)), precision);
    case DType::I32: return std::to_string(static_cast<std::int64_t>(data.value_as_double(i)));
    case DType::Bool: return data.value_as_double(i) != 0.0 ? "true" : "false";
  }
  return "?";
}

void print_level(std::string& out, const TensorData& data, std::size_t depth,
                 std::int64_t offset, bool summarize, std::size_t indent, int precision) {
  const Shape& shape = data.shape;
  const std::int64_t n = shape[depth];
  std::int64_t stride = 1;
  for (std::size_t d = depth + 1; d < shape.rank(); ++d) stride *= shape[d];
  out += '[';
  for (std::int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      out += "...";
      i = n - kEdgeItems - 1;
      if (depth + 1 == shape.rank()) {
        out += ", ";
      } else {
        out += ",\n";
        out.append(indent + depth + 1, ' ');
      }
      continue;
    }
    if (depth + 1 == shape.rank()) {
      out += format_value(data, static_cast<std::size_t>(offset + i), precision);
      if (i + 1 < n) out += ", ";
    } else {
      print_level(out, data, depth + 1, offset + i * stride, summarize, indent, precision);
      if (i + 1 < n) {
        out += ",\n";
        out.append(indent + depth + 1, ' ');
      }
    }
  }
  out += ']';
}

}  // namespace

void append_values(std::string& out, const TensorData& data, int precision) {
  if (data.shape.rank() == 0) {
    if (data.num_elements() == 1) out += format_value(data, 0, precision);
    return;
  }
  if (data.num_elements() == 0) {  // the shape line that follows tells the dims
    out += "[]";
    return;
  }
  print_level(out, data, 0, 0, data.num_elements() > kSummarizeAbove, 0, precision);
}

}  // namespace kiln
