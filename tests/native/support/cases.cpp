#include "support/cases.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "support/case_json.hpp"
#include "support/case_records.hpp"
#include "support/paths.hpp"

namespace kiln::test {

using nlohmann::json;

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
  for (const auto& [name, t] : j.at("inputs").items()) c.inputs_.emplace(name, case_tensor(t));
  for (const auto& [name, t] : j.at("expected").items()) {
    if (t.contains("error")) {
      c.errors_[name] = true;
    } else {
      c.expected_.emplace(name, case_tensor(t));
    }
  }
  if (j.contains("tolerance")) {
    c.tolerance_ = Tolerance{j["tolerance"].value("abs", 0.0), j["tolerance"].value("rel", 0.0)};
  }
  return c;
}

}  // namespace kiln::test
