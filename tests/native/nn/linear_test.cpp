// nn::Linear and LinearConfig: forward by hand for ranks 1-3, PyTorch's default init,
// gradients through the layer (closed forms and finite differences), config JSON and errors,
// printing, num_params and valid().
#include "kiln/nn/linear.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using module::Param;
using nn::Linear;
using nn::LinearConfig;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

// W = [[1, 2, 3], [-1, 0, 2]] ([d_output 2, d_input 3]), b = [0.5, -1].
template <class B>
Linear<B> small_linear(bool with_bias = true) {
  Linear<B> lin;
  lin.weight = Param<Tensor<B, 2>>(Tensor<B, 2>::from_floats({{1.f, 2.f, 3.f}, {-1.f, 0.f, 2.f}}));
  if (with_bias) lin.bias = Param<Tensor<B, 1>>(Tensor<B, 1>::from_floats({0.5f, -1.f}));
  return lin;
}

template <class B>
class LinearTest : public ::testing::Test {};
TYPED_TEST_SUITE(LinearTest, test::AllBackends);

TYPED_TEST(LinearTest, ForwardRank2ByHand) {
  const auto lin = small_linear<TypeParam>();
  const auto x = Tensor<TypeParam, 2>::from_floats({{1.f, 0.f, -1.f}, {2.f, 1.f, 0.f}});
  // [1, 0, -1]·Wᵀ = [1 - 3, -1 - 2] = [-2, -3]; + b = [-1.5, -4].
  // [2, 1, 0]·Wᵀ = [2 + 2, -2] = [4, -2];      + b = [4.5, -3].
  const auto y = lin.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_data().template to_vec<float>(), (std::vector<float>{-1.5f, -4.f, 4.5f, -3.f}));
  const auto no_bias = small_linear<TypeParam>(false).forward(x);
  EXPECT_EQ(no_bias.to_data().template to_vec<float>(),
            (std::vector<float>{-2.f, -3.f, 4.f, -2.f}));
}

TYPED_TEST(LinearTest, ForwardRank3And1FlattenTheLeadingDims) {
  const auto lin = small_linear<TypeParam>();
  const auto x = Tensor<TypeParam, 3>::from_floats(
      {{{1.f, 0.f, -1.f}, {2.f, 1.f, 0.f}}, {{0.f, 0.f, 1.f}, {1.f, 1.f, 1.f}}});
  // [0, 0, 1] -> [3, 2] + b = [3.5, 1]; [1, 1, 1] -> [6, 1] + b = [6.5, 0].
  const auto y = lin.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(y.to_data().template to_vec<float>(),
            (std::vector<float>{-1.5f, -4.f, 4.5f, -3.f, 3.5f, 1.f, 6.5f, 0.f}));
  const auto v = lin.forward(Tensor<TypeParam, 1>::from_floats({1.f, 0.f, -1.f}));
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_EQ(v.to_data().template to_vec<float>(), (std::vector<float>{-1.5f, -4.f}));
  // An empty batch gives an empty batch.
  EXPECT_EQ(lin.forward(Tensor<TypeParam, 3>::zeros(Shape{0, 4, 3})).shape(), (Shape{0, 4, 2}));
}

TYPED_TEST(LinearTest, WrongLastDimThrowsShapeErrorNamingLinear) {
  const auto lin = small_linear<TypeParam>();
  EXPECT_THAT(
      [&] {
        (void)lin.forward(Tensor<TypeParam, 2>::zeros(Shape{2, 4}));
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("Linear::forward: expected input [..., 3] (last dim d_input = 3), got [2, 4] "
                    "(last dim 4)")));
  Linear<TypeParam> empty;
  EXPECT_THROW((void)empty.forward(Tensor<TypeParam, 2>::zeros(Shape{1, 3})), StateError);
}

// U(-k, k) checks on the host (k = 1/sqrt(d_input), PyTorch's nn.Linear): all samples inside,
// the extremes beyond ±(1 - edge)·k (each missed with probability (1 - edge/2)^n), mean and
// variance k²/3 within 6 standard errors.
void expect_uniform_bound(const std::vector<float>& v, double k, double edge) {
  const double n = static_cast<double>(v.size());
  double mean = 0, var = 0, lo = k, hi = -k;
  for (float x : v) {
    mean += x;
    lo = std::min(lo, double(x));
    hi = std::max(hi, double(x));
  }
  mean /= n;
  for (float x : v) var += (x - mean) * (x - mean);
  var /= n;
  EXPECT_GE(lo, -k);
  EXPECT_LT(hi, k);
  EXPECT_LT(lo, -(1 - edge) * k);
  EXPECT_GT(hi, (1 - edge) * k);
  EXPECT_NEAR(mean, 0.0, 6 * 2 * k / std::sqrt(12 * n));
  EXPECT_NEAR(var, k * k / 3, 6 * (k * k / 3) * std::sqrt(0.8 / n));
}

TEST(LinearInitTest, DefaultIsPyTorchsUniformOneOverSqrtDInput) {
  Cpu::seed(5);
  const auto lin = LinearConfig(400, 500).init<Cpu>();
  EXPECT_EQ(lin.weight.shape(), (Shape{500, 400}));
  ASSERT_TRUE(lin.bias.has_value());
  EXPECT_EQ(lin.bias->shape(), (Shape{500}));
  // 200000 samples: extremes within 1% of the bound (missed with probability 0.995^200000).
  expect_uniform_bound(lin.weight.val().to_data().to_vec<float>(), 1.0 / 20, 0.01);
  // The bias, 500 samples: extremes within 5% (missed with probability 0.975^500 = 3e-6).
  expect_uniform_bound(lin.bias->val().to_data().to_vec<float>(), 1.0 / 20, 0.05);
  EXPECT_EQ(lin.d_input(), 400);
  EXPECT_EQ(lin.d_output(), 500);
}

TEST(LinearInitTest, ConfigOptionsAndErrors) {
  const LinearConfig c(784, 10);
  EXPECT_TRUE(c.bias);
  EXPECT_EQ(c.initializer, nn::Initializer::kaiming_uniform(1 / std::sqrt(3.0)));
  const auto zeros = c.with_bias(false).with_initializer(nn::Initializer::zeros()).init<Cpu>();
  EXPECT_FALSE(zeros.bias.has_value());
  EXPECT_EQ(zeros.num_params(), 7840);
  EXPECT_EQ(zeros.weight.val().sum().into_scalar(), 0.f);
  EXPECT_EQ(c.init<Cpu>().num_params(), 7850);
  const auto on_ad = c.init<AD>();
  EXPECT_TRUE(on_ad.weight.val().is_require_grad());
  EXPECT_TRUE(on_ad.bias->val().is_require_grad());

  EXPECT_THAT([] { (void)LinearConfig(0, 3).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "LinearConfig::init: d_input and d_output must be >= 1, got d_input = 0, "
                  "d_output = 3")));
  EXPECT_THROW((void)LinearConfig(3, -1).init<Cpu>(), ConfigError);
}

TEST(LinearInitTest, ConfigJsonRoundTrip) {
  const auto c = LinearConfig(2, 16).with_initializer(nn::Initializer::xavier_normal(2.0));
  EXPECT_EQ(LinearConfig::from_json_string(c.to_json_string()), c);
  EXPECT_EQ(c.to_json()["initializer"].dump(), R"({"XavierNormal":{"gain":2.0}})");
  const auto d = LinearConfig::from_json_string(R"({"d_input": 2, "d_output": 3})");
  EXPECT_EQ(d, LinearConfig(2, 3));
  EXPECT_THAT(
      [] {
        (void)LinearConfig::from_json_string(
            R"({"d_input": 2, "d_output": 3, "initializer": "Twos"})");
      },
      ThrowsMessage<ConfigError>(
          HasSubstr("LinearConfig.initializer: Initializer: unknown variant \"Twos\"")));
}

TEST(LinearPrintTest, BurnsDisplay) {
  std::ostringstream out;
  out << LinearConfig(784, 10).with_bias(false).init<Cpu>();
  EXPECT_EQ(out.str(), "Linear {d_input: 784, d_output: 10, bias: false, params: 7840}");
  std::ostringstream small;
  small << small_linear<AD>();
  EXPECT_EQ(small.str(), "Linear {d_input: 3, d_output: 2, bias: true, params: 8}");
  std::ostringstream empty;
  empty << Linear<Cpu>{};
  EXPECT_EQ(empty.str(), "Linear {weight: <empty>, bias: false, params: 0}");
}

TEST(LinearModuleTest, ValidKeepsIdsValuesAndPaths) {
  const auto lin = small_linear<AD>();
  EXPECT_EQ(lin.param_paths(), (std::vector<std::string>{"weight", "bias"}));
  const Linear<Cpu> inference = lin.valid();
  EXPECT_EQ(inference.weight.id(), lin.weight.id());
  EXPECT_EQ(inference.bias->id(), lin.bias->id());
  const auto x = Tensor<Cpu, 2>::from_floats({{1.f, 0.f, -1.f}});
  EXPECT_EQ(inference.forward(x).to_data().to_vec<float>(), (std::vector<float>{-1.5f, -4.f}));
}

// ---- gradients

// Host reference for y = x·Wᵀ + b with upstream g ([rows, d_out]) on rows = flattened x:
// dx = g·W, dW = gᵀ·x, db = Σ_rows g.
struct LinearGrads {
  std::vector<float> dx, dw, db;
};
LinearGrads reference_grads(const std::vector<float>& x, const std::vector<float>& w,
                            const std::vector<float>& g, int rows, int d_in, int d_out) {
  LinearGrads r{std::vector<float>(rows * d_in), std::vector<float>(d_out * d_in),
                std::vector<float>(d_out)};
  for (int i = 0; i < rows; ++i) {
    for (int o = 0; o < d_out; ++o) {
      const double go = g[i * d_out + o];
      r.db[o] += go;
      for (int k = 0; k < d_in; ++k) {
        r.dx[i * d_in + k] += go * w[o * d_in + k];
        r.dw[o * d_in + k] += go * x[i * d_in + k];
      }
    }
  }
  return r;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << "element " << i;
  }
}

TEST(LinearGradTest, ParameterAndInputGradientsMatchTheClosedForms) {
  test::Sampler rng(17);
  const int d_in = 5, d_out = 4;
  for (bool rank3 : {false, true}) {
    Linear<AD> lin;
    lin.weight = Param<Tensor<AD, 2>>(rng.uniform<2>(Shape{d_out, d_in}, -1, 1));
    lin.bias = Param<Tensor<AD, 1>>(rng.uniform<1>(Shape{d_out}, -1, 1));
    const std::vector<float> w = lin.weight.val().to_data().to_vec<float>();
    std::vector<float> xv, gv, dx;
    LinearGrads want;
    std::optional<Tensor<Cpu, 2>> dw;
    std::optional<Tensor<Cpu, 1>> db;
    if (rank3) {
      const auto x = rng.uniform<3>(Shape{2, 3, d_in}, -1, 1).require_grad();
      const auto g = rng.uniform<3>(Shape{2, 3, d_out}, -1, 1);
      auto grads = (lin.forward(x) * g).sum().backward();
      xv = x.to_data().to_vec<float>();
      gv = g.to_data().to_vec<float>();
      dx = x.grad(grads)->to_data().to_vec<float>();
      dw = lin.weight.val().grad(grads);
      db = lin.bias->val().grad(grads);
      want = reference_grads(xv, w, gv, 6, d_in, d_out);
    } else {
      const auto x = rng.uniform<2>(Shape{3, d_in}, -1, 1).require_grad();
      const auto g = rng.uniform<2>(Shape{3, d_out}, -1, 1);
      auto grads = (lin.forward(x) * g).sum().backward();
      xv = x.to_data().to_vec<float>();
      gv = g.to_data().to_vec<float>();
      dx = x.grad(grads)->to_data().to_vec<float>();
      dw = lin.weight.val().grad(grads);
      db = lin.bias->val().grad(grads);
      want = reference_grads(xv, w, gv, 3, d_in, d_out);
    }
    SCOPED_TRACE(rank3 ? "rank 3" : "rank 2");
    expect_close(dx, want.dx);
    ASSERT_TRUE(dw && db);
    EXPECT_EQ(dw->shape(), (Shape{d_out, d_in}));
    expect_close(dw->to_data().to_vec<float>(), want.dw);
    expect_close(db->to_data().to_vec<float>(), want.db);
  }
}

TEST(LinearGradTest, InputGradientPassesGradcheck) {
  test::Sampler rng(23);
  const auto w = rng.uniform_data(Shape{3, 4}, -1, 1);
  const auto b = rng.uniform_data(Shape{3}, -1, 1);
  const auto layer = [w, b](bool with_bias) {
    Linear<AD> lin;
    lin.weight = Param<Tensor<AD, 2>>(Tensor<AD, 2>::from_data(w));
    if (with_bias) lin.bias = Param<Tensor<AD, 1>>(Tensor<AD, 1>::from_data(b));
    return lin;
  };
  EXPECT_TRUE(test::gradcheck(
      "Linear rank 2", [&](Tensor<AD, 2> x) { return layer(true).forward(x); },
      rng.uniform<2>(Shape{5, 4}, -2, 2)));
  EXPECT_TRUE(test::gradcheck(
      "Linear rank 3, no bias", [&](Tensor<AD, 3> x) { return layer(false).forward(x); },
      rng.uniform<3>(Shape{2, 3, 4}, -2, 2)));
}

TEST(LinearGradTest, WeightAndBiasPassGradcheckThroughTheSameOps) {
  // Param detaches its tensor into a leaf of its own, so the parameters enter gradcheck through
  // the ops Linear::forward runs: x·Wᵀ via matmul_transposed plus the broadcast bias.
  test::Sampler rng(29);
  EXPECT_TRUE(test::gradcheck(
      "linear (x, W, b)",
      [](Tensor<AD, 2> x, Tensor<AD, 2> w, Tensor<AD, 1> b) {
        return x.matmul_transposed(w, false, true) + b.unsqueeze<2>();
      },
      rng.uniform<2>(Shape{4, 3}, -1, 1), rng.uniform<2>(Shape{5, 3}, -1, 1),
      rng.uniform<1>(Shape{5}, -1, 1)));
}

}  // namespace
}  // namespace kiln
