// nn::Dropout and DropoutConfig: the PyTorch reference case dropout_inverted_scaling (given
// keep-mask), the statistics of the random mask, training only on autodiff backends, p = 0
// and p = 1, config errors and printing.
#include "kiln/nn/dropout.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/cases.hpp"

namespace kiln {
namespace {

using nn::Dropout;
using nn::DropoutConfig;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

TEST(DropoutCaseTest, InvertedScalingWithTheCasesMask) {
  const auto c = test::load_case("dropout_inverted_scaling");
  const auto tol = c.tolerance();
  const auto mask = Tensor<AD, 2>::from_data(c.input("mask"));

  // Training, p = 0.25: x·mask/(1 - p); gradient mask/(1 - p)·dy.
  {
    const auto x = Tensor<AD, 2>::from_data(c.input("x")).require_grad();
    const auto out = DropoutConfig(0.25).init().forward_with_mask(x, mask);
    out.to_data().assert_approx_eq(c.expected("train_p0.25"), tol);
    const auto dy = Tensor<AD, 2>::from_data(c.input("dy_train_p0.25"));
    auto grads = (out * dy).sum().backward();
    x.grad(grads)->to_data().assert_approx_eq(c.expected("grad_x__train_p0.25"), tol);
  }
  // p = 1: zeros, not nan from 1/0, and a zero gradient.
  {
    const auto x = Tensor<AD, 2>::from_data(c.input("x")).require_grad();
    const auto out = DropoutConfig(1.0).init().forward_with_mask(x, mask);
    out.to_data().assert_approx_eq(c.expected("train_p1.0"), tol);
    const auto dy = Tensor<AD, 2>::from_data(c.input("dy_train_p1.0"));
    auto grads = (out * dy).sum().backward();
    x.grad(grads)->to_data().assert_approx_eq(c.expected("grad_x__train_p1.0"), tol);
    // The random path too.
    const auto random = DropoutConfig(1.0).init().forward(x);
    random.to_data().assert_approx_eq(c.expected("train_p1.0"), tol);
  }
  // Eval: on the inference backend (what model.valid() maps to) Dropout is the identity.
  {
    const auto x = Tensor<Cpu, 2>::from_data(c.input("x"));
    DropoutConfig(0.25).init().forward(x).to_data().assert_approx_eq(c.expected("eval"), tol);
    // Its gradient, the identity's, is dy: on the autodiff backend p = 0 is the identity.
    const auto xa = Tensor<AD, 2>::from_data(c.input("x")).require_grad();
    const auto dy = Tensor<AD, 2>::from_data(c.input("dy_eval"));
    auto grads = (DropoutConfig(0.0).init().forward(xa) * dy).sum().backward();
    xa.grad(grads)->to_data().assert_approx_eq(c.expected("grad_x__eval"), tol);
  }
}

TEST(DropoutTest, RandomMaskStatisticsOnAutodiff) {
  // 200000 ones, p = 0.3: each output is 0 (probability p) or exactly 1/(1 - p).
  // Dropped fraction within 6·sqrt(p(1-p)/n) = 0.0061; mean within 6·sqrt(p/(1-p))/sqrt(n)
  // = 0.0088 of 1 (inverted scaling keeps the expectation).
  const double p = 0.3;
  const std::size_t n = 200000;
  Cpu::seed(99);
  const auto x = Tensor<AD, 2>::ones(Shape{1000, 200}).require_grad();
  const auto out = Dropout{p}.forward(x);
  const auto values = out.to_data().to_vec<float>();
  const float kept = static_cast<float>(1.0 / (1.0 - p));
  std::size_t dropped = 0;
  double sum = 0;
  for (float v : values) {
    ASSERT_TRUE(v == 0.f || v == kept) << v;
    dropped += v == 0.f;
    sum += v;
  }
  EXPECT_NEAR(static_cast<double>(dropped) / n, p, 6 * std::sqrt(p * (1 - p) / n));
  EXPECT_NEAR(sum / n, 1.0, 6 * std::sqrt(p / (1 - p) / n));
  // d out/dx = mask/(1 - p), which for x = 1 is the output itself.
  auto grads = out.sum().backward();
  EXPECT_EQ(x.grad(grads)->to_data().to_vec<float>(), values);
}

TEST(DropoutTest, MaskFollowsTheSeed) {
  const auto x = Tensor<AD, 1>::ones(Shape{64});
  Cpu::seed(1);
  const auto a = Dropout{0.5}.forward(x).to_data().to_vec<float>();
  const auto b = Dropout{0.5}.forward(x).to_data().to_vec<float>();
  Cpu::seed(1);
  const auto c = Dropout{0.5}.forward(x).to_data().to_vec<float>();
  EXPECT_EQ(a, c);
  EXPECT_NE(a, b);  // two 64-element masks agree with probability 2^-64
}

TEST(DropoutTest, IdentityOnInferenceBackendsAndForPZero) {
  const auto x = Tensor<Cpu, 3>::from_floats({{{1.f, -2.f}, {3.f, 4.f}}});
  EXPECT_EQ(Dropout{0.9}.forward(x).to_data().to_vec<float>(), x.to_data().to_vec<float>());
  const auto xa = Tensor<AD, 3>::from_inner(x);
  EXPECT_EQ(Dropout{0.0}.forward(xa).to_data().to_vec<float>(), x.to_data().to_vec<float>());
}

TEST(DropoutTest, ForwardWithMaskBroadcastsTheMask) {
  // A [1, 3] mask over [2, 3]: the same columns dropped in every row, kept ones scaled by 2.
  const auto x = Tensor<Cpu, 2>::from_floats({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  const auto mask = Tensor<Cpu, 2>::from_floats({{1.f, 0.f, 1.f}});
  EXPECT_EQ(Dropout{0.5}.forward_with_mask(x, mask).to_data().to_vec<float>(),
            (std::vector<float>{2.f, 0.f, 6.f, 8.f, 0.f, 12.f}));
  EXPECT_THROW((void)Dropout{0.5}.forward_with_mask(x, Tensor<Cpu, 2>::ones(Shape{2, 2})),
               ShapeError);
}

TEST(DropoutConfigTest, ProbabilityOutsideZeroOneIsAConfigError) {
  EXPECT_EQ(DropoutConfig(0.1).init(), Dropout{0.1});
  EXPECT_EQ(DropoutConfig(0.0).init().prob, 0.0);
  EXPECT_EQ(DropoutConfig(1.0).init().prob, 1.0);
  EXPECT_THAT([] { (void)DropoutConfig(1.5).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("DropoutConfig::init: prob must be in [0, 1], got 1.5")));
  EXPECT_THROW((void)DropoutConfig(-0.1).init(), ConfigError);
  EXPECT_THROW((void)DropoutConfig(NAN).init(), ConfigError);
  // A Dropout built by hand is checked when used.
  EXPECT_THAT(
      [] { (void)Dropout{2.0}.forward(Tensor<AD, 1>::ones(Shape{2})); },
      ThrowsMessage<ValueError>(HasSubstr("Dropout::forward: prob must be in [0, 1], got 2")));
}

TEST(DropoutConfigTest, JsonAndPrinting) {
  EXPECT_EQ(DropoutConfig::from_json_string(R"({"prob": 0.25})"), DropoutConfig(0.25));
  EXPECT_EQ(DropoutConfig(0.5).to_json().dump(), R"({"prob":0.5})");
  EXPECT_THAT([] { (void)DropoutConfig::from_json_string("{}"); },
              ThrowsMessage<ConfigError>(HasSubstr("missing required field \"prob\"")));
  std::ostringstream out;
  out << Dropout{0.5};
  EXPECT_EQ(out.str(), "Dropout {prob: 0.5}");
}

}  // namespace
}  // namespace kiln
