// The PyTorch reference cases of categories pooling and norm and the embedding case of
// nn_misc (tests/native/cases/cases.jsonl): forward values on Cpu and Autodiff<Cpu>, and
// every expected gradient on Autodiff<Cpu>, with each case's tolerance. The objective of
// output o is sum(o · dy_o), back-propagated through a graph of its own; every expected key
// of a case must be checked (the checker fails otherwise).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "kiln/kiln.hpp"
#include "support/case_records.hpp"
#include "support/cases.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using nlohmann::json;

/// Compares values with a case's expected keys and fails for keys left unchecked.
class Checker {
 public:
  explicit Checker(const std::string& id) : case_(test::load_case(id)), record_(test::case_record(id)) {}
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;
  ~Checker() {
    for (const auto& [key, value] : record_.at("expected").items()) {
      EXPECT_TRUE(checked_.count(key)) << case_.id << ": expected \"" << key << "\" not checked";
    }
  }
  const test::Case& c() const { return case_; }
  void check(const std::string& key, const TensorData& got) {
    checked_.insert(key);
    try {
      got.assert_approx_eq(case_.expected(key), case_.tolerance());
    } catch (const std::exception& e) {
      ADD_FAILURE() << case_.id << ": " << key << ": " << e.what();
    }
  }
  template <std::size_t D>
  Tensor<AD, D> leaf(const std::string& name) const {
    return Tensor<AD, D>::from_data(case_.input(name)).require_grad();
  }
  template <std::size_t D>
  Tensor<AD, D> constant(const std::string& name) const {
    return Tensor<AD, D>::from_data(case_.input(name));
  }

 private:
  test::Case case_;
  json record_;
  std::set<std::string> checked_;
};

const std::set<std::string> kTested = {
    "maxpool2d_ties_overlapping",       "avgpool2d_count_include_pad",
    "adaptive_avgpool2d_non_divisible", "batchnorm1d_running_var_unbiased",
    "layernorm_eps_inside_sqrt",        "embedding_repeated_indices_grad"};

TEST(LayerCasesTest, EveryPoolingNormAndEmbeddingCaseIsTested) {
  std::set<std::string> in_scope;
  for (const auto& r : test::case_records()) {
    const auto category = r.at("category").get<std::string>();
    const auto id = r.at("id").get<std::string>();
    if (category == "pooling" || category == "norm" || id.rfind("embedding", 0) == 0) {
      in_scope.insert(id);
    }
  }
  EXPECT_EQ(in_scope, kTested);
}

TEST(LayerCasesTest, MaxPool2dTiesOverlapping) {
  Checker check("maxpool2d_ties_overlapping");
  const MaxPool2dOptions options{{2, 2}, {1, 1}};
  // Forward on the inference backend too.
  EXPECT_NO_THROW(nn::functional::max_pool2d(Tensor<Cpu, 4>::from_data(check.c().input("x")),
                                             options)
                      .to_data()
                      .assert_approx_eq(check.c().expected("out"), check.c().tolerance()));
  auto x = check.leaf<4>("x");
  auto out = nn::functional::max_pool2d(x, options);
  check.check("out", out.to_data());
  auto grads = (out * check.constant<4>("dy_out")).sum().backward();
  check.check("grad_x", x.grad(grads)->to_data());
}

TEST(LayerCasesTest, AvgPool2dCountIncludePad) {
  Checker check("avgpool2d_count_include_pad");
  for (const bool include : {true, false}) {
    const std::string name = include ? "include_pad" : "exclude_pad";
    const AvgPool2dOptions options{{3, 3}, {2, 2}, {1, 1}, include};
    auto x = check.leaf<4>("x");
    auto out = nn::functional::avg_pool2d(x, options);
    check.check(name, out.to_data());
    nn::functional::avg_pool2d(Tensor<Cpu, 4>::from_data(check.c().input("x")), options)
        .to_data()
        .assert_approx_eq(check.c().expected(name), check.c().tolerance());
    auto grads = (out * check.constant<4>("dy_" + name)).sum().backward();
    check.check("grad_x__" + name, x.grad(grads)->to_data());
  }
}

TEST(LayerCasesTest, AdaptiveAvgPool2dNonDivisible) {
  Checker check("adaptive_avgpool2d_non_divisible");
  auto x = check.leaf<4>("x");
  auto out = nn::AdaptiveAvgPool2dConfig({3, 3}).init().forward(x);
  check.check("out", out.to_data());
  auto grads = (out * check.constant<4>("dy_out")).sum().backward();
  check.check("grad_x", x.grad(grads)->to_data());
}

TEST(LayerCasesTest, BatchNormRunningVarUnbiased) {
  Checker check("batchnorm1d_running_var_unbiased");
  const auto& c = check.c();
  auto bn = nn::BatchNormConfig(2).with_momentum(0.1).with_epsilon(1e-5).init<AD>();
  bn.weight.set(Tensor<AD, 1>::from_data(c.input("weight")));
  bn.bias.set(Tensor<AD, 1>::from_data(c.input("bias")));
  bn.running_mean.set(Tensor<AD, 1>::from_data(c.input("running_mean")));
  bn.running_var.set(Tensor<AD, 1>::from_data(c.input("running_var")));
  auto x = check.leaf<3>("x");
  auto y = bn.forward(x);  // training: Autodiff backend
  check.check("y", y.to_data());
  check.check("running_mean_after", bn.running_mean.val().to_data());
  check.check("running_var_after", bn.running_var.val().to_data());
  EXPECT_EQ(bn.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{1});
  auto grads = (y * check.constant<3>("dy_y")).sum().backward();
  check.check("grad_x", x.grad(grads)->to_data());
  check.check("grad_weight", bn.weight.val().grad(grads)->to_data());
  check.check("grad_bias", bn.bias.val().grad(grads)->to_data());
  EXPECT_FALSE(bn.running_mean.val().grad(grads).has_value());
  // Inference with the updated running statistics.
  const auto eval = bn.valid();
  check.check("y_eval", eval.forward(Tensor<Cpu, 3>::from_data(c.input("x_eval"))).to_data());
}

TEST(LayerCasesTest, LayerNormEpsInsideSqrt) {
  Checker check("layernorm_eps_inside_sqrt");
  const auto& c = check.c();
  auto ln = nn::LayerNormConfig(4).with_epsilon(0.5).init<AD>();
  ln.weight->set(Tensor<AD, 1>::from_data(c.input("weight")));
  ln.bias->set(Tensor<AD, 1>::from_data(c.input("bias")));
  auto x = check.leaf<2>("x");
  auto out = ln.forward(x);
  check.check("out", out.to_data());
  ln.valid()
      .forward(Tensor<Cpu, 2>::from_data(c.input("x")))
      .to_data()
      .assert_approx_eq(c.expected("out"), c.tolerance());
  auto grads = (out * check.constant<2>("dy_out")).sum().backward();
  check.check("grad_x", x.grad(grads)->to_data());
  check.check("grad_weight", ln.weight->val().grad(grads)->to_data());
  check.check("grad_bias", ln.bias->val().grad(grads)->to_data());
}

TEST(LayerCasesTest, EmbeddingRepeatedIndicesGrad) {
  Checker check("embedding_repeated_indices_grad");
  const auto& c = check.c();
  auto embed = nn::EmbeddingConfig(5, 3).init<AD>();
  embed.weight.set(Tensor<AD, 2>::from_data(c.input("weight")));
  const auto idx = Tensor<AD, 2, Int>::from_data(c.input("idx"));
  auto out = embed.forward(idx);
  check.check("out", out.to_data());
  auto grads = (out * check.constant<3>("dy_out")).sum().backward();
  check.check("grad_weight", embed.weight.val().grad(grads)->to_data());
}

}  // namespace
}  // namespace kiln
