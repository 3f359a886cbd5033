#pragma once
// The PyTorch fixtures of Lstm and Gru (tests/native/nn/rnn_fixtures.json, written by
// make_rnn_fixtures.py): reading them, loading a fixture's state_dict into a Kiln module by
// its PyTorch keys, and comparing tensors with the reference cases' tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/paths.hpp"

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

/// The parameter `key` of `module` as TensorData (visit by PyTorch's key).
template <class M>
TensorData param_data(const M& module, const std::string& key) {
  TensorData out;
  auto get = [&](const std::string& path, const auto& p) {
    if (path == key) out = p.val().to_data();
  };
  module.visit(get);
  return out;
}

/// `module` with the parameter `key` set to `value`.
template <class M>
M with_param(M module, const std::string& key, const TensorData& value) {
  auto set = [&](const std::string& path, auto& p) {
    using T = std::decay_t<decltype(p.val())>;
    if (path == key) p = p.with_value(T::from_data(value));
  };
  module.visit_mut(set);
  return module;
}

/// Gradients of the parameter `key` against central differences (a parameter is a fresh
/// leaf of the module, so test::gradcheck cannot feed it): L = Σ_k w_k·y_k with fixed
/// weights w_k in ±[0.5, 1.5), y = run(module) flattened; numeric by Richardson
/// extrapolation of central differences at h = 1e-2 and h/2 (as support/gradcheck.hpp),
/// L accumulated in double. Tolerance 1e-4 + 1e-3·|numeric| (float32 roundoff of a
/// ~50-term sum over recurrent steps).
template <class M, class F>
void expect_param_grad_matches_differences(const M& module, const std::string& key, F run) {
  const auto y0 = run(module);
  const auto n = y0.num_elements();
  std::vector<float> w(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) {
    w[static_cast<std::size_t>(k)] = (k % 2 ? -1.f : 1.f) * (0.5f + static_cast<float>((k * 7) % 10) / 10.f);
  }
  const auto loss = [&](const M& m) {
    const auto v = run(m).to_data().template to_vec<float>();
    double l = 0;
    for (std::size_t k = 0; k < v.size(); ++k) l += static_cast<double>(w[k]) * v[k];
    return l;
  };
  using T = std::decay_t<decltype(y0)>;
  const auto grads = (y0 * T::from_data(TensorData(y0.shape(), w))).sum().backward();
  std::optional<TensorData> analytic;
  auto get = [&](const std::string& path, const auto& p) {
    if (path == key) analytic = p.val().grad(grads)->to_data();
  };
  module.visit(get);
  ASSERT_TRUE(analytic.has_value()) << key;
  const auto a = analytic->to_vec<float>();
  const TensorData base = param_data(module, key);
  auto values = base.to_vec<float>();
  for (std::size_t j = 0; j < values.size(); ++j) {
    const auto central = [&](float h) {
      auto plus = values, minus = values;
      plus[j] = values[j] + h;
      minus[j] = values[j] - h;
      const double lp = loss(with_param(module, key, TensorData(base.shape, plus)));
      const double lm = loss(with_param(module, key, TensorData(base.shape, minus)));
      return (lp - lm) / (static_cast<double>(plus[j]) - static_cast<double>(minus[j]));
    };
    const double numeric = (4 * central(5e-3f) - central(1e-2f)) / 3;
    EXPECT_NEAR(a[j], numeric, 1e-4 + 1e-3 * std::abs(numeric)) << key << " element " << j;
  }
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
