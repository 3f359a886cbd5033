#pragma once
// The PyTorch 1.13 cases of tests/native/nn/resample_fixtures.json (written by
// make_resample_fixtures.py beside it): 3-D pools and interpolate, each with its arguments,
// x, the upstream gradient dy and the expected out and grad_x = d[sum(out * dy)]/dx.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/paths.hpp"

namespace kiln::test {

/// Every case whose op is `op` ("max_pool3d", "interpolate", ...).
inline std::vector<nlohmann::json> resample_cases(const std::string& op) {
  std::string path = KILN_CASES_FILE;  // tests/native/cases/cases.jsonl
  path = path.substr(0, path.rfind('/'));
  path = path.substr(0, path.rfind('/')) + "/nn/resample_fixtures.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<nlohmann::json> out;
  const nlohmann::json all = nlohmann::json::parse(text.str());
  for (const auto& c : all.at("cases")) {
    if (c.at("op").get<std::string>() == op) out.push_back(c);
  }
  if (out.empty()) throw std::runtime_error("no case for " + op + " in " + path);
  return out;
}

/// A fixture tensor ({shape, data}) as f32 TensorData.
inline TensorData fixture_tensor(const nlohmann::json& t) {
  return TensorData(Shape(t.at("shape").get<std::vector<std::int64_t>>()),
                    t.at("data").get<std::vector<float>>());
}

}  // namespace kiln::test
