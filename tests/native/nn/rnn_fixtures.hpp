#pragma once
// The PyTorch fixtures of Lstm and Gru (tests/native/nn/rnn_fixtures.json, written by
// make_rnn_fixtures.py): reading them, loading a fixture's state_dict into a Kiln module by
// its PyTorch keys, and comparing tensors with the reference cases' tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test::rnn {

using Json = nlohmann::json;
using AD = Autodiff<Cpu>;

/// The fixture file (beside KILN_CASES_FILE's folder: tests/native/nn/rnn_fixtures.json).
inline const Json& fixtures() {
  static const Json j = [] {
    std::string path = KILN_CASES_FILE;
    path.replace(path.rfind("cases/cases.jsonl"), std::string("cases/cases.jsonl").size(),
                 "nn/rnn_fixtures.json");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return Json::parse(in);
  }();
  return j;
}

/// The module fixture named `name`.
inline const Json& module_fixture(const std::string& name) {
  for (const auto& m : fixtures().at("modules")) {
    if (m.at("name") == name) return m;
  }
  throw std::runtime_error("rnn_fixtures.json: no module " + name);
}

/// {"shape": [...], "data": [...]} as TensorData.
inline TensorData data(const Json& t) {
  return TensorData(Shape(t.at("shape").get<std::vector<std::int64_t>>()),
                    t.at("data").get<std::vector<float>>());
}

template <Backend B, std::size_t D>
Tensor<B, D> tensor(const Json& t) {
  return Tensor<B, D>::from_data(data(t));
}

/// Sets every parameter of `module` from the state_dict (by PyTorch's key) and checks that
/// the module's keys are exactly the state_dict's, in its order.
template <class M>
void load_state_dict(M& module, const Json& state_dict) {
  std::vector<std::string> torch_keys;
  for (const auto& [key, value] : state_dict.items()) torch_keys.push_back(key);
  // nlohmann::json sorts object keys; PyTorch's order is checked by the tests that need it.
  std::vector<std::string> kiln_keys;
  auto set = [&](const std::string& path, auto& p) {
    kiln_keys.push_back(path);
    using T = std::decay_t<decltype(p.val())>;
    p = p.with_value(T::from_data(data(state_dict.at(path))));
  };
  module.visit_mut(set);
  std::sort(kiln_keys.begin(), kiln_keys.end());
  EXPECT_EQ(kiln_keys, torch_keys);
}

inline void expect_close(const TensorData& got, const Json& expected, const std::string& what,
                         Tolerance tol = {1e-5, 1e-4}) {
  try {
    got.assert_approx_eq(data(expected), tol);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
  }
}

}  // namespace kiln::test::rnn
