// Activation modules (nn::Relu, Gelu, Sigmoid, Tanh, LeakyRelu, Silu): values by hand, printing,
// LeakyReluConfig, and parameterless modules as KILN_MODULE fields (map, valid(), paths).
#include "kiln/nn/activation.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

template <class B>
class ActivationModuleTest : public ::testing::Test {};
TYPED_TEST_SUITE(ActivationModuleTest, test::AllBackends);

std::vector<float> values(const auto& t) { return t.to_data().template to_vec<float>(); }

void expect_near(const std::vector<float>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-6 + 1e-6 * std::abs(want[i])) << "element " << i;
  }
}

TYPED_TEST(ActivationModuleTest, ValuesByHand) {
  using T1 = Tensor<TypeParam, 1>;
  const float ln2 = std::log(2.f), ln3 = std::log(3.f);
  EXPECT_EQ(values(nn::Relu{}.forward(T1::from_floats({-1.f, 0.f, 2.f}))),
            (std::vector<float>{0.f, 0.f, 2.f}));
  // sigmoid(ln 3) = 1/(1 + 1/3) = 0.75; tanh(ln 2) = (2 - 1/2)/(2 + 1/2) = 0.6.
  expect_near(values(nn::Sigmoid{}.forward(T1::from_floats({0.f, ln3}))), {0.5, 0.75});
  expect_near(values(nn::Tanh{}.forward(T1::from_floats({0.f, ln2}))), {0.0, 0.6});
  // silu(x) = x·sigmoid(x).
  expect_near(values(nn::Silu{}.forward(T1::from_floats({0.f, ln3}))), {0.0, ln3 * 0.75});
  EXPECT_EQ(values(nn::LeakyRelu{0.1}.forward(T1::from_floats({-2.f, 3.f}))),
            (std::vector<float>{-0.2f, 3.f}));
  // gelu(x) = x·Φ(x) = x·(1 + erf(x/√2))/2; the tanh form 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))).
  const auto exact = [](double x) { return x * 0.5 * (1 + std::erf(x / std::sqrt(2.0))); };
  const auto approx = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  const auto x = T1::from_floats({-1.f, 0.5f, 2.f});
  expect_near(values(nn::Gelu{}.forward(x)), {exact(-1), exact(0.5), exact(2)});
  expect_near(values(nn::Gelu{true}.forward(x)), {approx(-1), approx(0.5), approx(2)});
}

TYPED_TEST(ActivationModuleTest, AnyRankKeepsTheShape) {
  const auto x = Tensor<TypeParam, 3>::from_floats({{{-1.f, 1.f}}, {{2.f, -3.f}}});
  const auto y = nn::Relu{}.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 1, 2}));
  EXPECT_EQ(values(y), (std::vector<float>{0.f, 1.f, 2.f, 0.f}));
}

TEST(ActivationGradTest, GradientsFlowThroughTheModules) {
  const auto x = Tensor<AD, 1>::from_floats({-2.f, 3.f}).require_grad();
  auto grads = nn::LeakyRelu{0.1}.forward(x).sum().backward();
  EXPECT_EQ(values(*x.grad(grads)), (std::vector<float>{0.1f, 1.f}));
}

TEST(ActivationPrintTest, BurnsDisplay) {
  const auto print = [](const auto& m) {
    std::ostringstream out;
    out << m;
    return out.str();
  };
  EXPECT_EQ(print(nn::Relu{}), "Relu");
  EXPECT_EQ(print(nn::Gelu{}), "Gelu");
  EXPECT_EQ(print(nn::Gelu{true}), "Gelu {approximate: true}");
  EXPECT_EQ(print(nn::Sigmoid{}), "Sigmoid");
  EXPECT_EQ(print(nn::Tanh{}), "Tanh");
  EXPECT_EQ(print(nn::Silu{}), "Silu");
  EXPECT_EQ(print(nn::LeakyRelu{}), "LeakyRelu {negative_slope: 0.01}");
}

TEST(LeakyReluConfigTest, DefaultsBuilderJsonAndErrors) {
  EXPECT_EQ(nn::LeakyReluConfig().init(), nn::LeakyRelu{0.01});
  EXPECT_EQ(nn::LeakyReluConfig().with_negative_slope(0.2).init().negative_slope, 0.2);
  EXPECT_EQ(nn::LeakyReluConfig::from_json_string(R"({"negative_slope": 0.3})").negative_slope,
            0.3);
  EXPECT_EQ(nn::LeakyReluConfig::from_json_string("{}"), nn::LeakyReluConfig());
  EXPECT_THAT([] { (void)nn::LeakyReluConfig().with_negative_slope(INFINITY).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("LeakyReluConfig::init: negative_slope must be finite, got inf")));
}

// A model holding parameterless modules as plain fields.
template <Backend B>
struct Mlp {
  nn::Linear<B> fc1;
  nn::Relu activation;
  nn::LeakyRelu leaky;
  nn::Dropout dropout;
  nn::Linear<B> fc2;
  KILN_MODULE(Mlp, fc1, activation, leaky, dropout, fc2)

  template <std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> x) const {
    x = dropout.forward(activation.forward(fc1.forward(x)));
    return fc2.forward(leaky.forward(std::move(x)));
  }
};

template <Backend B>
Mlp<B> make_mlp() {
  Mlp<B> m;
  m.fc1 = nn::LinearConfig(2, 3).with_initializer(nn::Initializer::ones()).init<B>();
  m.leaky = nn::LeakyRelu{0.5};
  m.dropout = nn::Dropout{0.5};
  m.fc2 =
      nn::LinearConfig(3, 1).with_bias(false).with_initializer(nn::Initializer::ones()).init<B>();
  return m;
}

TEST(ParameterlessFieldsTest, OnlyLinearParametersAreVisited) {
  const auto m = make_mlp<Cpu>();
  EXPECT_EQ(m.param_paths(), (std::vector<std::string>{"fc1.weight", "fc1.bias", "fc2.weight"}));
  EXPECT_EQ(m.num_params(), 6 + 3 + 3);
  std::ostringstream out;
  out << m;
  EXPECT_EQ(out.str(),
            "Mlp {fc1: Linear {d_input: 2, d_output: 3, bias: true, params: 9}, activation: Relu, "
            "leaky: LeakyRelu {negative_slope: 0.5}, dropout: Dropout {prob: 0.5}, fc2: Linear "
            "{d_input: 3, d_output: 1, bias: false, params: 3}, params: 12}");
}

TEST(ParameterlessFieldsTest, ValidCopiesThemAndTurnsDropoutOff) {
  const auto trained = make_mlp<AD>();
  const Mlp<Cpu> inference = trained.valid();
  EXPECT_EQ(inference.leaky, nn::LeakyRelu{0.5});
  EXPECT_EQ(inference.dropout, nn::Dropout{0.5});
  EXPECT_EQ(inference.fc1.weight.id(), trained.fc1.weight.id());
  // x = [1, -3]: fc1 (ones, bias 1) -> [-1, -1, -1], relu -> 0, leaky -> 0, fc2 -> 0;
  // x = [2, 1]: fc1 -> [4, 4, 4], relu, dropout identity (inference), fc2 -> 12.
  const auto x = Tensor<Cpu, 2>::from_floats({{1.f, -3.f}, {2.f, 1.f}});
  EXPECT_EQ(values(inference.forward(x)), (std::vector<float>{0.f, 12.f}));
  // On the autodiff backend dropout is active: each of the 3 hidden units is 0 or 8, so the
  // output is 0, 8, 16 or 24.
  const auto y = values(trained.forward(Tensor<AD, 2>::from_floats({{2.f, 1.f}})));
  ASSERT_EQ(y.size(), 1u);
  EXPECT_TRUE(y[0] == 0.f || y[0] == 8.f || y[0] == 16.f || y[0] == 24.f) << y[0];
}

}  // namespace
}  // namespace kiln
