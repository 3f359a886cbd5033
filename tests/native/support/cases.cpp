#include "support/cases.hpp"
#include "support/case_records.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace kiln::test {
namespace {

using nlohmann::json;

double number(const json& v) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw std::runtime_error("cases: unknown number string " + s);
  }
  return v.get<double>();
}

TensorData tensor(const json& t) {
  std::vector<std::int64_t> dims = t.at("shape").get<std::vector<std::int64_t>>();
  if (dims.empty()) dims.push_back(1);
  const Shape shape(dims);
  const std::string dtype = t.at("dtype").get<std::string>();
  const json& data = t.at("data");
  if (dtype == "float32" || dtype == "float64") {
    std::vector<float> v;
    for (const auto& x : data) v.push_back(static_cast<float>(number(x)));
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

}  // namespace

TensorData Case::input(const std::string& name) const {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) throw std::runtime_error("case " + id + ": no input " + name);
  return it->second;
}

TensorData Case::expected(const std::string& name) const {
  auto it = expected_.find(name);
  if (it == expected_.end()) throw std::runtime_error("case " + id + ": no expected " + name);
  return it->second;
}

bool Case::expects_error(const std::string& name) const {
  auto it = errors_.find(name);
  return it != errors_.end() && it->second;
}

std::vector<json> case_records() {
  std::ifstream in(KILN_CASES_FILE);
  if (!in) throw std::runtime_error(std::string("cannot open ") + KILN_CASES_FILE);
  std::vector<json> records;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) records.push_back(json::parse(line));
  }
  return records;
}

json case_record(const std::string& id) {
  for (auto& r : case_records()) {
    if (r.at("id") == id) return r;
  }
  throw std::runtime_error("case not found: " + id);
}

Case load_case(const std::string& id) {
  const json j = case_record(id);
  Case c;
  c.id = id;
  for (const auto& [name, t] : j.at("inputs").items()) c.inputs_.emplace(name, tensor(t));
  for (const auto& [name, t] : j.at("expected").items()) {
    if (t.contains("error")) {
      c.errors_[name] = true;
    } else {
      c.expected_.emplace(name, tensor(t));
    }
  }
  if (j.contains("tolerance")) {
    c.tolerance_ = Tolerance{j["tolerance"].value("abs", 0.0), j["tolerance"].value("rel", 0.0)};
  }
  return c;
}

}  // namespace kiln::test
