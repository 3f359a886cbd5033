#pragma once
// The tensor encoding of the PyTorch reference cases (tests/native/cases/README.md), shared by
// the native tests (support/cases.cpp) and the Wgpu harness (tests/webgpu/ops_shared_cases.cpp,
// which gets the records from its page, as the wasm has no file system): header-only.
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"

namespace kiln::test {

/// A number of a case: a JSON number, or "nan", "inf", "-inf".
inline double case_number(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("cases: unknown number string " + s);
  }
  return v.get<double>();
}

/// A tensor of a case, `{"shape", "dtype", "data"}`: shape [] becomes [1] (Kiln has no rank 0),
/// float32/float64 become f32, int64/int32 become i32.
inline TensorData case_tensor(const nlohmann::json& t) {
  std::vector<std::int64_t> dims = t.at("shape").get<std::vector<std::int64_t>>();
  if (dims.empty()) dims.push_back(1);
  const Shape shape(dims);
  const std::string dtype = t.at("dtype").get<std::string>();
  const nlohmann::json& data = t.at("data");
  if (dtype == "float32" || dtype == "float64") {
    std::vector<float> v;
    for (const auto& x : data) v.push_back(static_cast<float>(case_number(x)));
    return TensorData(shape, std::move(v));
  }
  if (dtype == "int64" || dtype == "int32") {
    std::vector<std::int32_t> v;
    for (const auto& x : data) v.push_back(static_cast<std::int32_t>(x.get<std::int64_t>()));
    return TensorData(shape, std::move(v));
  }
  if (dtype == "bool") {
    std::vector<bool> v;
    for (const auto& x : data) v.push_back(x.get<bool>());
    return TensorData(shape, std::move(v));
  }
  throw std::runtime_error("cases: unknown dtype " + dtype);
}

}  // namespace kiln::test
