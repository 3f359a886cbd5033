// kiln::activation: relu, leaky_relu, sigmoid, tanh, gelu (both forms), silu, softplus,
// softmax and log_softmax, against PyTorch's reference cases and double-precision formulas.
#include "kiln/tensor/activation.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"
#include "support/cases.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

using test::kInf;
using test::kNan;

using test::vec;

/// 101 inputs: special values at both ends (body and tail), a sweep of [-10, 10] between.
std::vector<float> inputs() {
  const std::vector<float> special = {0.f,   -0.f,   kInf,    -kInf,   kNan,   1e-30f, -1e-30f,
                                      0.5f,  -0.5f,  1.f,     -1.f,    20.f,   -20.f,  87.f,
                                      -87.f, 90.f,   -90.f,   100.f,   -100.f, 1e4f,   -1e4f,
                                      1e30f, -1e30f, 3.4e38f, -3.4e38f};
  std::vector<float> v = special;
  for (int i = -25; i <= 25; ++i) v.push_back(static_cast<float>(i) * 0.3971f);
  v.insert(v.end(), special.begin(), special.end());
  return v;
}

using test::reference;

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Softmax (or log_softmax) of a contiguous [outer, n, inner] block in double.
std::vector<float> softmax_ref(const std::vector<float>& x, std::size_t outer, std::size_t n,
                               std::size_t inner, bool log) {
  std::vector<float> out(x.size());
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t j = 0; j < inner; ++j) {
      auto at = [&](std::size_t k) { return (o * n + k) * inner + j; };
      double m = -INFINITY;
      for (std::size_t k = 0; k < n; ++k) m = std::max(m, static_cast<double>(x[at(k)]));
      double sum = 0;
      for (std::size_t k = 0; k < n; ++k) sum += std::exp(x[at(k)] - m);
      for (std::size_t k = 0; k < n; ++k) {
        out[at(k)] =
            static_cast<float>(log ? (x[at(k)] - m) - std::log(sum) : std::exp(x[at(k)] - m) / sum);
      }
    }
  }
  return out;
}

/// Deterministic logits in [-20, 20].
std::vector<float> logits(std::size_t count) {
  std::vector<float> v;
  for (std::size_t i = 0; i < count; ++i) {
    v.push_back(20.f * std::sin(static_cast<float>(i) * 1.37f + 0.3f));
  }
  return v;
}

constexpr Tolerance kComposite = Tolerance::rel_abs(1e-6, 1e-35);
constexpr Tolerance kSoftmax = Tolerance::rel_abs(2e-5, 1e-9);

template <class B>
class ActivationTest : public ::testing::Test {};
TYPED_TEST_SUITE(ActivationTest, test::AllBackends);

// ---------------------------------------------------------------- PyTorch cases

TYPED_TEST(ActivationTest, ReluAndLeakyReluAtZeroMatchPyTorch) {
  const auto c = test::load_case("abs_relu_grad_at_zero");
  auto x = Tensor<TypeParam, 1>::from_data(c.input("x"));
  activation::relu(x).into_data().assert_approx_eq(c.expected("relu"), c.tolerance());
  activation::leaky_relu(x, 0.1).into_data().assert_approx_eq(c.expected("leaky_relu"),
                                                              c.tolerance());
}

TYPED_TEST(ActivationTest, SigmoidTanhSiluAtExtremesMatchPyTorch) {
  const auto c = test::load_case("sigmoid_tanh_silu_extreme");
  auto x = Tensor<TypeParam, 1>::from_data(c.input("x"));
  activation::sigmoid(x).into_data().assert_approx_eq(c.expected("sigmoid"), c.tolerance());
  activation::tanh(x).into_data().assert_approx_eq(c.expected("tanh"), c.tolerance());
  activation::silu(x).into_data().assert_approx_eq(c.expected("silu"), c.tolerance());
}

TYPED_TEST(ActivationTest, GeluBothFormsMatchPyTorch) {
  const auto c = test::load_case("gelu_exact_and_tanh");
  auto x = Tensor<TypeParam, 1>::from_data(c.input("x"));
  activation::gelu(x).into_data().assert_approx_eq(c.expected("gelu_erf"), c.tolerance());
  activation::gelu(x, true).into_data().assert_approx_eq(c.expected("gelu_tanh"), c.tolerance());
}

TYPED_TEST(ActivationTest, SoftmaxPartialMaskMatchesPyTorch) {
  const auto c = test::load_case("softmax_partial_mask");
  auto x = Tensor<TypeParam, 2>::from_data(c.input("x"));
  const auto out = activation::softmax(x, 1).into_data();
  out.assert_approx_eq(c.expected("out"), c.tolerance());
  // Masked entries are exactly 0, not merely tiny.
  const auto v = out.template to_vec<float>();
  EXPECT_EQ(v[1], 0.f);
  EXPECT_EQ(v[3], 0.f);
  EXPECT_EQ(v[4], 0.f);
}

TYPED_TEST(ActivationTest, SoftmaxNonfiniteRowsMatchPyTorch) {
  const auto c = test::load_case("softmax_nonfinite_rows");
  auto x = Tensor<TypeParam, 2>::from_data(c.input("x"));
  activation::softmax(x, 1).into_data().assert_approx_eq(c.expected("softmax"), c.tolerance());
  activation::log_softmax(x, 1).into_data().assert_approx_eq(c.expected("log_softmax"),
                                                             c.tolerance());
}

TYPED_TEST(ActivationTest, SoftmaxNonfiniteColumnsAlongDim0) {
  // The same case transposed, through the strided path (dim 0 of a [3, 3]).
  const auto c = test::load_case("softmax_nonfinite_rows");
  const auto xv = c.input("x").template to_vec<float>();
  const auto sv = c.expected("softmax").template to_vec<float>();
  const auto lv = c.expected("log_softmax").template to_vec<float>();
  std::vector<float> xt(9), st(9), lt(9);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      xt[j * 3 + i] = xv[i * 3 + j];
      st[j * 3 + i] = sv[i * 3 + j];
      lt[j * 3 + i] = lv[i * 3 + j];
    }
  }
  auto x = Tensor<TypeParam, 2>::from_data(TensorData(Shape{3, 3}, xt));
  activation::softmax(x, 0).into_data().assert_approx_eq(TensorData(Shape{3, 3}, st),
                                                         c.tolerance());
  activation::log_softmax(x, 0).into_data().assert_approx_eq(TensorData(Shape{3, 3}, lt),
                                                             c.tolerance());
}

// ---------------------------------------------------------------- element-wise activations

TYPED_TEST(ActivationTest, SigmoidMatchesDoubleReference) {
  const auto x = inputs();
  activation::sigmoid(vec<TypeParam>(x))
      .into_data()
      .assert_approx_eq(reference(x, sigmoid_ref), kComposite);
}

TYPED_TEST(ActivationTest, SiluMatchesDoubleReference) {
  const auto x = inputs();
  activation::silu(vec<TypeParam>(x))
      .into_data()
      .assert_approx_eq(reference(x, [](double v) { return v / (1.0 + std::exp(-v)); }),
                        kComposite);
}

TYPED_TEST(ActivationTest, ReluMatchesDoubleReference) {
  const auto x = inputs();
  activation::relu(vec<TypeParam>(x))
      .into_data()
      .assert_approx_eq(reference(x, [](double v) { return std::isnan(v) ? v : std::max(v, 0.0); }),
                        Tolerance::exact());
}

TYPED_TEST(ActivationTest, LeakyReluMatchesDoubleReference) {
  const auto x = inputs();
  activation::leaky_relu(vec<TypeParam>(x), 0.2)
      .into_data()
      .assert_approx_eq(
          reference(x, [](double v) { return v > 0 ? v : v * static_cast<double>(0.2f); }),
          Tolerance::relative(1e-7));
}

TYPED_TEST(ActivationTest, TanhMatchesDoubleReference) {
  const auto x = inputs();
  activation::tanh(vec<TypeParam>(x))
      .into_data()
      .assert_approx_eq(reference(x, [](double v) { return std::tanh(v); }),
                        Tolerance::rel_abs(4e-7, 1e-37));
}

TYPED_TEST(ActivationTest, GeluMatchesDoubleReference) {
  // The erf form's tail: the error of x/√2 in f32 is amplified ~2t² by erfc(t).
  const auto x = inputs();
  activation::gelu(vec<TypeParam>(x))
      .into_data()
      .assert_approx_eq(
          reference(x, [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }),
          Tolerance::rel_abs(1e-5, 1e-35));
}

TYPED_TEST(ActivationTest, GeluTanhMatchesDoubleReference) {
  // 0.5x(1 + tanh(u)) = x / (1 + exp(-2u)); the f32 rounding of u is amplified by |2u|.
  const auto x = inputs();
  activation::gelu(vec<TypeParam>(x), true)
      .into_data()
      .assert_approx_eq(reference(x,
                                  [](double v) {
                                    const double u =
                                        std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v);
                                    return v / (1.0 + std::exp(-2.0 * u));
                                  }),
                        Tolerance::rel_abs(3e-5, 1e-35));
}

TYPED_TEST(ActivationTest, SigmoidAndSiluAtPlusMinus1e4) {
  auto x = vec<TypeParam>({-1e4f, 1e4f, -kInf, kInf});
  activation::sigmoid(x).into_data().assert_eq(TensorData::from<float>({0.f, 1.f, 0.f, 1.f}));
  activation::silu(x).into_data().assert_eq(TensorData::from<float>({-0.f, 1e4f, kNan, kInf}));
  activation::gelu(x).into_data().assert_eq(TensorData::from<float>({-0.f, 1e4f, kNan, kInf}));
  activation::gelu(x, true).into_data().assert_eq(
      TensorData::from<float>({-0.f, 1e4f, kNan, kInf}));
}

TYPED_TEST(ActivationTest, SoftplusMatchesTorchFormula) {
  const auto x = inputs();
  for (double beta : {1.0, 2.0}) {
    activation::softplus(vec<TypeParam>(x), beta)
        .into_data()
        .assert_approx_eq(reference(x,
                                    [&](double v) {
                                      const double bx =
                                          static_cast<double>(static_cast<float>(beta)) * v;
                                      return bx > 20.0 ? v : std::log1p(std::exp(bx)) / beta;
                                    }),
                          kComposite);
  }
}

TYPED_TEST(ActivationTest, SoftplusDoesNotOverflowPastAHugeThreshold) {
  auto x = vec<TypeParam>({100.f, 1e4f, -1e4f, 0.f});
  activation::softplus(x, 1.0, 1e30)
      .into_data()
      .assert_approx_eq(TensorData::from<float>({100.f, 1e4f, 0.f, std::log(2.f)}),
                        Tolerance::relative(1e-7));
}

TYPED_TEST(ActivationTest, SoftplusNonPositiveBetaThrows) {
  auto x = vec<TypeParam>({1.f});
  EXPECT_THAT(
      [&] { (void)activation::softplus(x, 0.0); },
      ThrowsMessage<ValueError>(HasSubstr("softplus: beta must be positive and finite, got 0")));
}

TYPED_TEST(ActivationTest, LeakyReluNanSlopeThrows) {
  auto x = vec<TypeParam>({1.f});
  EXPECT_THAT([&] { (void)activation::leaky_relu(x, std::nan("")); },
              ThrowsMessage<ValueError>(HasSubstr("leaky_relu: negative_slope must be finite")));
}

// ---------------------------------------------------------------- softmax

TYPED_TEST(ActivationTest, SoftmaxLastDimLongRows) {
  const auto xv = logits(3 * 1037);
  auto x = Tensor<TypeParam, 2>::from_data(TensorData(Shape{3, 1037}, xv));
  activation::softmax(x, 1).into_data().assert_approx_eq(
      TensorData(Shape{3, 1037}, softmax_ref(xv, 3, 1037, 1, false)), kSoftmax);
  activation::log_softmax(x, -1).into_data().assert_approx_eq(
      TensorData(Shape{3, 1037}, softmax_ref(xv, 3, 1037, 1, true)), kSoftmax);
}

TYPED_TEST(ActivationTest, SoftmaxRowsSumToOne) {
  const auto xv = logits(4 * 37);
  const auto out =
      activation::softmax(Tensor<TypeParam, 2>::from_data(TensorData(Shape{4, 37}, xv)), 1)
          .into_data()
          .template to_vec<float>();
  for (int r = 0; r < 4; ++r) {
    double sum = 0;
    for (int j = 0; j < 37; ++j) sum += out[r * 37 + j];
    EXPECT_NEAR(sum, 1.0, 1e-6) << "row " << r;
  }
}

TYPED_TEST(ActivationTest, SoftmaxAlongDim0) {
  const auto xv = logits(5 * 19);
  auto x = Tensor<TypeParam, 2>::from_data(TensorData(Shape{5, 19}, xv));
  activation::softmax(x, 0).into_data().assert_approx_eq(
      TensorData(Shape{5, 19}, softmax_ref(xv, 1, 5, 19, false)), kSoftmax);
  activation::log_softmax(x, 0).into_data().assert_approx_eq(
      TensorData(Shape{5, 19}, softmax_ref(xv, 1, 5, 19, true)), kSoftmax);
}

TYPED_TEST(ActivationTest, SoftmaxAlongMiddleDim) {
  const auto xv = logits(2 * 5 * 37);
  auto x = Tensor<TypeParam, 3>::from_data(TensorData(Shape{2, 5, 37}, xv));
  activation::softmax(x, 1).into_data().assert_approx_eq(
      TensorData(Shape{2, 5, 37}, softmax_ref(xv, 2, 5, 37, false)), kSoftmax);
  activation::log_softmax(x, -2).into_data().assert_approx_eq(
      TensorData(Shape{2, 5, 37}, softmax_ref(xv, 2, 5, 37, true)), kSoftmax);
}

TYPED_TEST(ActivationTest, SoftmaxBeforeTrailingSize1Dims) {
  const auto xv = logits(4 * 3);
  auto x = Tensor<TypeParam, 3>::from_data(TensorData(Shape{4, 3, 1}, xv));
  activation::softmax(x, 1).into_data().assert_approx_eq(
      TensorData(Shape{4, 3, 1}, softmax_ref(xv, 4, 3, 1, false)), kSoftmax);
  activation::softmax(x, 2).into_data().assert_eq(
      TensorData(Shape{4, 3, 1}, std::vector<float>(12, 1.f)));
}

TYPED_TEST(ActivationTest, SoftmaxOfHugeLogitsIsStable) {
  auto x =
      Tensor<TypeParam, 2>::from_data({{1e4f, -1e4f, 0.f, 1e4f}, {-1e4f, -1e4f, -1e4f, -1e4f}});
  activation::softmax(x, 1).into_data().assert_approx_eq(
      TensorData::from<float>({{0.5f, 0.f, 0.f, 0.5f}, {0.25f, 0.25f, 0.25f, 0.25f}}),
      Tolerance::exact());
  const float ln2 = std::log(2.f), ln4 = std::log(4.f);
  activation::log_softmax(x, 1).into_data().assert_approx_eq(
      TensorData::from<float>({{-ln2, -2e4f - ln2, -1e4f - ln2, -ln2}, {-ln4, -ln4, -ln4, -ln4}}),
      Tolerance::relative(1e-6));
  activation::softmax(x, 0).into_data().assert_approx_eq(
      TensorData::from<float>({{1.f, 0.5f, 1.f, 1.f}, {0.f, 0.5f, 0.f, 0.f}}), Tolerance::exact());
}

TYPED_TEST(ActivationTest, SoftmaxOfEmptyTensors) {
  EXPECT_EQ(activation::softmax(Tensor<TypeParam, 2>::zeros({0, 3}), 1).num_elements(), 0);
  EXPECT_EQ(activation::softmax(Tensor<TypeParam, 2>::zeros({3, 0}), 1).num_elements(), 0);
  EXPECT_EQ(activation::log_softmax(Tensor<TypeParam, 2>::zeros({3, 0}), 0).num_elements(), 0);
}

TYPED_TEST(ActivationTest, SoftmaxRvalueReusesTheBuffer) {
  auto x = Tensor<TypeParam, 2>::from_data({{0.f, 0.f}});
  const auto before = memory_stats().total_allocations;
  auto y = Tensor<TypeParam, 2>(TypeParam::FloatOps::softmax(std::move(x).into_primitive(), 1));
  EXPECT_EQ(memory_stats().total_allocations, before);
  y.into_data().assert_eq(TensorData::from<float>({{0.5f, 0.5f}}));
}

TYPED_TEST(ActivationTest, SoftmaxSharedInputIsUntouched) {
  auto x = Tensor<TypeParam, 2>::from_data({{0.f, 0.f}});
  const auto before = memory_stats().total_allocations;
  auto y = activation::softmax(x, 1);
  EXPECT_EQ(memory_stats().total_allocations, before + 1);
  x.into_data().assert_eq(TensorData::from<float>({{0.f, 0.f}}));
}

TYPED_TEST(ActivationTest, SoftmaxDimOutOfRangeThrows) {
  auto x = Tensor<TypeParam, 2>::zeros({2, 3});
  EXPECT_THAT(
      [&] { (void)activation::softmax(x, 2); },
      ThrowsMessage<IndexError>(HasSubstr(
          "softmax: dim 2 is out of range for a tensor of rank 2 (expected -2 <= dim < 2)")));
  EXPECT_THAT([&] { (void)activation::log_softmax(x, -3); },
              ThrowsMessage<IndexError>(HasSubstr("log_softmax: dim -3 is out of range")));
}

TEST(ActivationPrimitiveErrors, SoftmaxOfIntThrows) {
  auto x = CpuOps::full(Shape{2, 2}, 1.0, DType::I32, {});
  EXPECT_THAT([&] { (void)CpuOps::softmax(x, 1); },
              ThrowsMessage<DTypeError>(HasSubstr("softmax: expected a f32 tensor, got i32")));
}

}  // namespace
