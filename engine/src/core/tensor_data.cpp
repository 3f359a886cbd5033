#include "kiln/core/tensor_data.hpp"

#include <cmath>
#include <limits>

namespace kiln {
namespace {

template <class T>
std::vector<std::uint8_t> to_bytes(const std::vector<T>& values) {
  std::vector<std::uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Compared in 64 bits: in wasm32 a count of 2^32 would wrap to 0 in size_t and match.
void check_count(const char* op, const Shape& shape, std::size_t given) {
  if (static_cast<std::uint64_t>(shape.num_elements()) != static_cast<std::uint64_t>(given)) {
    throw_error<ShapeError>(op, ": shape ", shape, " needs ", shape.num_elements(), " values, got ",
                            given);
  }
}

bool same_value(double got, double expected) {
  if (std::isnan(expected)) return std::isnan(got);
  return got == expected;
}

}  // namespace

TensorData::TensorData(Shape shape_, std::vector<float> values)
    : shape(shape_), dtype(DType::F32) {
  check_count("TensorData", shape, values.size());
  bytes = to_bytes(values);
}

TensorData::TensorData(Shape shape_, std::vector<std::int32_t> values)
    : shape(shape_), dtype(DType::I32) {
  check_count("TensorData", shape, values.size());
  bytes = to_bytes(values);
}

TensorData::TensorData(Shape shape_, std::vector<bool> values)
    : shape(shape_), dtype(DType::Bool) {
  check_count("TensorData", shape, values.size());
  bytes.assign(values.begin(), values.end());
}

TensorData::TensorData(Shape shape_, DType dtype_, std::vector<std::uint8_t> bytes_)
    : shape(shape_), dtype(dtype_), bytes(std::move(bytes_)) {
  // By division, in 64 bits: a product could wrap (size_t is 32 bits in wasm32).
  const auto size = static_cast<std::uint64_t>(dtype_size(dtype));
  const auto given = static_cast<std::uint64_t>(bytes.size());
  if (given % size != 0 || given / size != static_cast<std::uint64_t>(shape.num_elements())) {
    std::uint64_t product;
    const std::string expected =
        __builtin_mul_overflow(static_cast<std::uint64_t>(shape.num_elements()), size, &product)
            ? std::string("more than 2^64")
            : str_cat(product);
    throw_error<ShapeError>("TensorData: shape ", shape, " of ", dtype, " needs ", expected,
                            " bytes, got ", bytes.size());
  }
}

void TensorData::check_dtype(DType wanted, const char* op) const {
  if (dtype != wanted) {
    throw_error<DTypeError>(op, ": expected dtype ", wanted, ", the data is ", dtype);
  }
}

double TensorData::value_as_double(std::size_t i) const {
  switch (dtype) {
    case DType::F32: {
      float v;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      return v;
    }
    case DType::I32: {
      std::int32_t v;
      std::memcpy(&v, bytes.data() + i * 4, 4);
      return v;
    }
    case DType::Bool: return bytes[i] ? 1.0 : 0.0;
  }
  return 0.0;
}

TensorData TensorData::convert(DType to) const {
  if (to == dtype) return *this;
  const auto n = static_cast<std::size_t>(num_elements());
  switch (to) {
    case DType::F32: {
      std::vector<float> out(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(value_as_double(i));
      return TensorData(shape, std::move(out));
    }
    case DType::I32: {
      std::vector<std::int32_t> out(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double v = value_as_double(i);
        if (!(v > -2147483649.0 && v < 2147483648.0)) {  // also rejects nan
          throw_error<ValueError>("TensorData::convert: element ", i, " = ", v,
                                  " does not fit in i32");
        }
        out[i] = static_cast<std::int32_t>(v);
      }
      return TensorData(shape, std::move(out));
    }
    case DType::Bool: {
      std::vector<bool> out(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = value_as_double(i) != 0.0;
      return TensorData(shape, std::move(out));
    }
  }
  return *this;
}

void TensorData::assert_eq(const TensorData& expected) const {
  if (!(shape == expected.shape)) {
    throw_error<ValueError>("assert_eq: shapes differ: got ", shape, ", expected ", expected.shape);
  }
  if (dtype != expected.dtype) {
    throw_error<ValueError>("assert_eq: dtypes differ: got ", dtype, ", expected ", expected.dtype);
  }
  const auto n = static_cast<std::size_t>(num_elements());
  for (std::size_t i = 0; i < n; ++i) {
    if (!same_value(value_as_double(i), expected.value_as_double(i))) {
      throw_error<ValueError>("assert_eq: element ", i, " differs: got ", value_as_double(i),
                              ", expected ", expected.value_as_double(i), "\n  got:      ", *this,
                              "\n  expected: ", expected);
    }
  }
}

void TensorData::assert_approx_eq(const TensorData& expected, Tolerance tolerance) const {
  if (!(shape == expected.shape)) {
    throw_error<ValueError>("assert_approx_eq: shapes differ: got ", shape, ", expected ",
                            expected.shape);
  }
  const auto n = static_cast<std::size_t>(num_elements());
  std::size_t bad = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double got = value_as_double(i);
    const double want = expected.value_as_double(i);
    bool ok;
    if (std::isnan(want) || std::isnan(got)) {
      ok = std::isnan(want) && std::isnan(got);
    } else if (std::isinf(want) || std::isinf(got)) {
      ok = got == want;
    } else {
      ok = std::abs(got - want) <= tolerance.abs + tolerance.rel * std::abs(want);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (bad > 0) {
    // Past "got": the digits of std::setprecision(9) (values as %.9g, tensors as %.9f).
    std::string message = str_cat(
        "assert_approx_eq: ", bad, " of ", n, " elements differ beyond abs ", tolerance.abs,
        " + rel ", tolerance.rel, "; first at flat index ", first, ": got ",
        fmt_g(value_as_double(first), 9), ", expected ", fmt_g(expected.value_as_double(first), 9),
        "\n  got:      ");
    append_values(message, *this, 9);
    message += "\n  expected: ";
    append_values(message, expected, 9);
    throw ValueError(message);
  }
}

bool operator==(const TensorData& a, const TensorData& b) {
  return a.shape == b.shape && a.dtype == b.dtype && a.bytes == b.bytes;
}

}  // namespace kiln
