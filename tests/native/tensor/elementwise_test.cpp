// Float element-wise ops: broadcasting, scalars on either side, every unary op against the
// std:: function in double, clamp, buffer reuse of rvalues, and the error paths.
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

/// 101 inputs (not a multiple of any vector width): the special values first and again at
/// the end (so both the vector body and the tail see them), a sweep of [-10, 10] between.
std::vector<float> unary_inputs() {
  const std::vector<float> special = {0.f,   -0.f,   kInf,    -kInf,   kNan,   1e-30f, -1e-30f,
                                      1e-7f, 0.5f,   -0.5f,   1.f,     -1.f,   2.5f,   -2.5f,
                                      3.5f,  87.f,   -87.f,   100.f,   -100.f, 1e4f,   -1e4f,
                                      1e30f, -1e30f, 3.4e38f, -3.4e38f};
  std::vector<float> v = special;
  for (int i = -25; i <= 25; ++i) v.push_back(static_cast<float>(i) * 0.3971f);
  v.insert(v.end(), special.begin(), special.end());
  return v;
}

using test::reference;

// Transcendentals: xsimd's are within ~1.5 ulp, plus 0.5 ulp for rounding the reference;
// exp flushes results below ~1e-38 to 0, hence the tiny absolute term.
constexpr Tolerance kUlps = Tolerance::rel_abs(4e-7, 1e-37);
// Composite activations (a few roundings in f32).
constexpr Tolerance kComposite = Tolerance::rel_abs(2e-6, 1e-35);

template <class B>
class ElementwiseTest : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseTest, test::AllBackends);

// ---------------------------------------------------------------- binary, broadcasting

TYPED_TEST(ElementwiseTest, AddSameShapeByHand) {
  auto a = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  auto b = Tensor<TypeParam, 2>::from_data({{10.f, 20.f, 30.f}, {40.f, 50.f, 60.f}});
  (a + b).into_data().assert_eq(TensorData::from<float>({{11.f, 22.f, 33.f}, {44.f, 55.f, 66.f}}));
}

TYPED_TEST(ElementwiseTest, SubMulDivByHand) {
  auto a = vec<TypeParam>({6.f, -3.f, 1.f, 0.f});
  auto b = vec<TypeParam>({2.f, 4.f, -0.5f, 0.f});
  (a - b).into_data().assert_eq(TensorData::from<float>({4.f, -7.f, 1.5f, 0.f}));
  (a * b).into_data().assert_eq(TensorData::from<float>({12.f, -12.f, -0.5f, 0.f}));
  (a / b).into_data().assert_eq(TensorData::from<float>({3.f, -0.75f, -2.f, kNan}));
}

TYPED_TEST(ElementwiseTest, DivByZeroFollowsIeee) {
  auto a = vec<TypeParam>({1.f, -1.f, 0.f});
  (a / 0.f).into_data().assert_eq(TensorData::from<float>({kInf, -kInf, kNan}));
}

TYPED_TEST(ElementwiseTest, BroadcastRank3WithSize1Dims) {
  // [2, 1, 3] + [1, 4, 1] -> [2, 4, 3] (the right-aligned [4, 1] of NumPy's example).
  auto a = Tensor<TypeParam, 3>::from_data({{{1.f, 2.f, 3.f}}, {{4.f, 5.f, 6.f}}});
  auto b = Tensor<TypeParam, 3>::from_data({{{10.f}, {20.f}, {30.f}, {40.f}}});
  std::vector<float> expected;
  const float av[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const float bv[4] = {10, 20, 30, 40};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(av[i][k] + bv[j]);
  const auto out = a + b;
  EXPECT_EQ(out.dims(), (std::array<std::int64_t, 3>{2, 4, 3}));
  out.into_data().assert_eq(TensorData(Shape{2, 4, 3}, expected));
}

TYPED_TEST(ElementwiseTest, BroadcastColumnTimesRow) {
  auto col = Tensor<TypeParam, 2>::from_data({{1.f}, {2.f}, {3.f}});
  auto row = Tensor<TypeParam, 2>::from_data({{1.f, 10.f, 100.f, 1000.f}});
  (col * row).into_data().assert_eq(TensorData::from<float>(
      {{1.f, 10.f, 100.f, 1000.f}, {2.f, 20.f, 200.f, 2000.f}, {3.f, 30.f, 300.f, 3000.f}}));
  (row - col).into_data().assert_eq(TensorData::from<float>(
      {{0.f, 9.f, 99.f, 999.f}, {-1.f, 8.f, 98.f, 998.f}, {-2.f, 7.f, 97.f, 997.f}}));
}

TYPED_TEST(ElementwiseTest, BroadcastLongRowsCoverTheTail) {
  // [3, 37] / [1, 37] and [3, 37] / [3, 1]: runs of 37, not a multiple of the vector width.
  std::vector<float> av, bv, cv;
  for (int i = 0; i < 3 * 37; ++i) av.push_back(static_cast<float>(i + 1));
  for (int j = 0; j < 37; ++j) bv.push_back(static_cast<float>(j % 5 + 1));
  for (int i = 0; i < 3; ++i) cv.push_back(static_cast<float>(i + 2));
  auto a = Tensor<TypeParam, 2>::from_data(TensorData(Shape{3, 37}, av));
  auto b = Tensor<TypeParam, 2>::from_data(TensorData(Shape{1, 37}, bv));
  auto c = Tensor<TypeParam, 2>::from_data(TensorData(Shape{3, 1}, cv));
  std::vector<float> by_row, by_col;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 37; ++j) {
      by_row.push_back(av[i * 37 + j] / bv[j]);
      by_col.push_back(av[i * 37 + j] / cv[i]);
    }
  }
  (a / b).into_data().assert_eq(TensorData(Shape{3, 37}, by_row));
  (a / c).into_data().assert_eq(TensorData(Shape{3, 37}, by_col));
  (b / a).into_data().assert_approx_eq(TensorData(Shape{3, 37},
                                                  [&] {
                                                    std::vector<float> v;
                                                    for (int i = 0; i < 3; ++i)
                                                      for (int j = 0; j < 37; ++j)
                                                        v.push_back(bv[j] / av[i * 37 + j]);
                                                    return v;
                                                  }()),
                                       Tolerance::exact());
}

TYPED_TEST(ElementwiseTest, BroadcastOfTwoSize1OperandsFillsTheRun) {
  // [2, 1] + [2, 1] broadcast against nothing: and [1, 1] + [1, 5] (scalar-vector run).
  auto a = Tensor<TypeParam, 2>::from_data({{1.f}, {2.f}});
  auto b = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f, 4.f, 5.f}});
  auto s = Tensor<TypeParam, 2>::from_data({{0.5f}});
  (s + b).into_data().assert_eq(TensorData::from<float>({{1.5f, 2.5f, 3.5f, 4.5f, 5.5f}}));
  (a * s).into_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{0.5f, 1.f}));
}

TYPED_TEST(ElementwiseTest, BroadcastWithEmptyDims) {
  auto empty = Tensor<TypeParam, 2>::zeros({0, 3});
  auto row = Tensor<TypeParam, 2>::ones({1, 3});
  const auto out = empty + row;
  EXPECT_EQ(out.dims(), (std::array<std::int64_t, 2>{0, 3}));
  EXPECT_EQ(out.num_elements(), 0);
  auto no_cols = Tensor<TypeParam, 2>::zeros({2, 0});
  auto col = Tensor<TypeParam, 2>::ones({2, 1});
  EXPECT_EQ((col * no_cols).dims(), (std::array<std::int64_t, 2>{2, 0}));
  EXPECT_EQ((no_cols - 1.f).num_elements(), 0);
  EXPECT_EQ(no_cols.exp().num_elements(), 0);
}

TYPED_TEST(ElementwiseTest, ScalarOnEitherSide) {
  auto a = vec<TypeParam>({1.f, 2.f, 4.f, -8.f});
  (a + 1.f).into_data().assert_eq(TensorData::from<float>({2.f, 3.f, 5.f, -7.f}));
  (1.f + a).into_data().assert_eq(TensorData::from<float>({2.f, 3.f, 5.f, -7.f}));
  (a - 2.f).into_data().assert_eq(TensorData::from<float>({-1.f, 0.f, 2.f, -10.f}));
  (2.f - a).into_data().assert_eq(TensorData::from<float>({1.f, 0.f, -2.f, 10.f}));
  (a * 3).into_data().assert_eq(TensorData::from<float>({3.f, 6.f, 12.f, -24.f}));
  (a / 2.f).into_data().assert_eq(TensorData::from<float>({0.5f, 1.f, 2.f, -4.f}));
  (2.f / a).into_data().assert_eq(TensorData::from<float>({2.f, 1.f, 0.5f, -0.25f}));
}

TYPED_TEST(ElementwiseTest, ScalarOpsCoverTheTail) {
  std::vector<float> x, expected;
  for (int i = 0; i < 37; ++i) {
    x.push_back(static_cast<float>(i) - 18.f);
    expected.push_back(10.f - (static_cast<float>(i) - 18.f));
  }
  (10.f - vec<TypeParam>(x)).into_data().assert_eq(TensorData(Shape{37}, expected));
}

TYPED_TEST(ElementwiseTest, UnaryMinus) {
  (-vec<TypeParam>({1.f, -2.f, 0.f}))
      .into_data()
      .assert_eq(TensorData::from<float>({-1.f, 2.f, -0.f}));
}

TYPED_TEST(ElementwiseTest, NamedForms) {
  auto a = vec<TypeParam>({1.f, 2.f});
  auto b = vec<TypeParam>({3.f, 5.f});
  a.add(b).into_data().assert_eq(TensorData::from<float>({4.f, 7.f}));
  a.sub_scalar(1.0).into_data().assert_eq(TensorData::from<float>({0.f, 1.f}));
  a.mul_scalar(2.0).into_data().assert_eq(TensorData::from<float>({2.f, 4.f}));
  b.div(a).into_data().assert_eq(TensorData::from<float>({3.f, 2.5f}));
}

TYPED_TEST(ElementwiseTest, MaxMinPairPropagateNan) {
  auto a = vec<TypeParam>({1.f, kNan, 3.f, -kInf, 2.f});
  auto b = vec<TypeParam>({2.f, 0.f, kNan, 5.f, 2.f});
  a.max_pair(b).into_data().assert_eq(TensorData::from<float>({2.f, kNan, kNan, 5.f, 2.f}));
  a.min_pair(b).into_data().assert_eq(TensorData::from<float>({1.f, kNan, kNan, -kInf, 2.f}));
}

TYPED_TEST(ElementwiseTest, PowfFollowsStdPow) {
  const std::vector<float> x = {2.f, -2.f, -8.f, 0.f, -0.f, 10.f, 1.f, kNan, kInf, 0.5f};
  const std::vector<float> y = {10.f, 3.f, 1.f / 3.f, -1.f, -1.f, 30.f, kNan, 0.f, -2.f, kInf};
  std::vector<float> expected;
  for (std::size_t i = 0; i < x.size(); ++i) {
    expected.push_back(
        static_cast<float>(std::pow(static_cast<double>(x[i]), static_cast<double>(y[i]))));
  }
  vec<TypeParam>(x)
      .powf(vec<TypeParam>(y))
      .into_data()
      .assert_approx_eq(TensorData(Shape{10}, expected), Tolerance::relative(2e-7));
}

TYPED_TEST(ElementwiseTest, PowfScalar) {
  auto x = vec<TypeParam>({3.f, -1.5f, kNan, 0.f, 4.f});
  x.powf_scalar(2.0).into_data().assert_eq(TensorData::from<float>({9.f, 2.25f, kNan, 0.f, 16.f}));
  x.powf_scalar(1.0).into_data().assert_eq(TensorData::from<float>({3.f, -1.5f, kNan, 0.f, 4.f}));
  x.powf_scalar(0.0).into_data().assert_eq(TensorData::from<float>({1.f, 1.f, 1.f, 1.f, 1.f}));
  x.powf_scalar(0.5).into_data().assert_approx_eq(
      TensorData::from<float>({std::sqrt(3.f), kNan, kNan, 0.f, 2.f}), Tolerance::relative(2e-7));
  x.powf_scalar(-1.0).into_data().assert_approx_eq(
      TensorData::from<float>({1.f / 3.f, -1.f / 1.5f, kNan, kInf, 0.25f}),
      Tolerance::relative(2e-7));
}

TYPED_TEST(ElementwiseTest, DivTruncAndFmodOnFloats) {
  auto a = vec<TypeParam>({7.f, -7.f, 7.5f, -0.5f});
  auto b = vec<TypeParam>({2.f, 2.f, -2.f, 3.f});
  a.div_trunc(b).into_data().assert_eq(TensorData::from<float>({3.f, -3.f, -3.f, -0.f}));
  a.fmod(b).into_data().assert_eq(TensorData::from<float>({1.f, -1.f, 1.5f, -0.5f}));
  a.fmod_scalar(2.0).into_data().assert_eq(TensorData::from<float>({1.f, -1.f, 1.5f, -0.5f}));
}

TYPED_TEST(ElementwiseTest, FloatRemainderFollowsDivisorSign) {
  auto a = vec<TypeParam>({5.5f, -5.5f, 5.5f, -5.5f, 1e10f, 3.f, kInf, 2.f});
  auto b = vec<TypeParam>({2.f, 2.f, -2.f, -2.f, 3.f, 0.f, 2.f, kInf});
  (a % b).into_data().assert_eq(
      TensorData::from<float>({1.5f, 0.5f, -0.5f, -1.5f, 1.f, kNan, kNan, 2.f}));
  (a % 2.f).into_data().assert_eq(
      TensorData::from<float>({1.5f, 0.5f, 1.5f, 0.5f, 0.f, 1.f, kNan, 0.f}));
}

TYPED_TEST(ElementwiseTest, RemainderVsFmodMatchesPyTorch) {
  const auto c = test::load_case("remainder_vs_fmod_sign");
  auto a = Tensor<TypeParam, 1>::from_data(c.input("af"));
  auto b = Tensor<TypeParam, 1>::from_data(c.input("bf"));
  (a % b).into_data().assert_approx_eq(c.expected("remainder_float"), c.tolerance());
  a.fmod(b).into_data().assert_approx_eq(c.expected("fmod_float"), c.tolerance());
}

// ---------------------------------------------------------------- unary vs std::

#define KILN_UNARY_CASE(Name, method, ref, tol)                                      \
  TYPED_TEST(ElementwiseTest, Name##MatchesStd) {                                    \
    const auto x = unary_inputs();                                                   \
    vec<TypeParam>(x).method().into_data().assert_approx_eq(reference(x, ref), tol); \
  }

KILN_UNARY_CASE(
    Neg, neg, [](double v) { return -v; }, Tolerance::exact())
KILN_UNARY_CASE(
    Abs, abs, [](double v) { return std::fabs(v); }, Tolerance::exact())
KILN_UNARY_CASE(
    Sign, sign, [](double v) { return std::isnan(v) ? v : double((v > 0) - (v < 0)); },
    Tolerance::exact())
KILN_UNARY_CASE(
    Exp, exp, [](double v) { return std::exp(v); }, kUlps)
KILN_UNARY_CASE(
    Log, log, [](double v) { return std::log(v); }, kUlps)
KILN_UNARY_CASE(
    Log1p, log1p, [](double v) { return std::log1p(v); }, kUlps)
KILN_UNARY_CASE(
    Sqrt, sqrt, [](double v) { return std::sqrt(v); }, Tolerance::exact())
KILN_UNARY_CASE(
    Sin, sin, [](double v) { return std::sin(v); }, kUlps)
KILN_UNARY_CASE(
    Cos, cos, [](double v) { return std::cos(v); }, kUlps)
KILN_UNARY_CASE(
    Tanh, tanh, [](double v) { return std::tanh(v); }, kUlps)
KILN_UNARY_CASE(
    Ceil, ceil, [](double v) { return std::ceil(v); }, Tolerance::exact())
KILN_UNARY_CASE(
    Floor, floor, [](double v) { return std::floor(v); }, Tolerance::exact())
KILN_UNARY_CASE(
    Round, round, [](double v) { return std::nearbyint(v); }, Tolerance::exact())
KILN_UNARY_CASE(
    Recip, recip, [](double v) { return 1.0 / v; }, Tolerance::exact())
KILN_UNARY_CASE(
    Erf, erf, [](double v) { return std::erf(v); }, kUlps)
#undef KILN_UNARY_CASE

TYPED_TEST(ElementwiseTest, RoundHalfToEven) {
  vec<TypeParam>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 2.4999998f, 8388609.f})
      .round()
      .into_data()
      .assert_eq(TensorData::from<float>({0.f, 2.f, 2.f, -0.f, -2.f, -2.f, 2.f, 8388609.f}));
}

TYPED_TEST(ElementwiseTest, RoundingToZeroKeepsTheSignOfTheInput) {
  // ceil(-0.5), round(-0.4) and floor(-0.0) are -0 (IEEE, torch); 1/x tells the sign.
  // Nine values, so the SIMD body runs too, not only the scalar tail.
  auto x = vec<TypeParam>({-0.5f, -0.4f, -0.f, 0.3f, -0.5f, -0.4f, -0.f, 0.3f, -0.9f});
  x.ceil().recip().into_data().assert_eq(TensorData::from<float>(
      {-kInf, -kInf, -kInf, 1.f, -kInf, -kInf, -kInf, 1.f, -kInf}));
  x.round().recip().into_data().assert_eq(TensorData::from<float>(
      {-kInf, -kInf, -kInf, kInf, -kInf, -kInf, -kInf, kInf, -1.f}));
  x.floor().recip().into_data().assert_eq(TensorData::from<float>(
      {-1.f, -1.f, -kInf, kInf, -1.f, -1.f, -kInf, kInf, -1.f}));
}

TYPED_TEST(ElementwiseTest, SignedZerosSurvive) {
  // Sign bits are checked through 1/x: 1/(-0) = -inf.
  auto z = vec<TypeParam>({-0.f, 0.f});
  z.neg().recip().into_data().assert_eq(TensorData::from<float>({kInf, -kInf}));
  z.sqrt().recip().into_data().assert_eq(TensorData::from<float>({-kInf, kInf}));
  z.abs().recip().into_data().assert_eq(TensorData::from<float>({kInf, kInf}));
}

TYPED_TEST(ElementwiseTest, LongInputMatchesElementByElement) {
  // 1000 + 37 elements: results must not depend on where an element sits (body or tail).
  std::vector<float> x;
  for (int i = 0; i < 1037; ++i) x.push_back(std::sin(static_cast<float>(i)) * 20.f);
  auto t = vec<TypeParam>(x);
  const auto all = t.exp().into_data().template to_vec<float>();
  for (std::size_t i : {0u, 1u, 1029u, 1036u}) {
    const auto one = vec<TypeParam>({x[i]}).exp().into_data().template to_vec<float>();
    EXPECT_EQ(all[i], one[0]) << "element " << i;
  }
}

// ---------------------------------------------------------------- clamp

TYPED_TEST(ElementwiseTest, ClampKeepsNan) {
  auto x = vec<TypeParam>({-2.f, 0.f, 0.5f, 1.f, 3.f, kNan, -kInf, kInf});
  x.clamp(0.f, 1.f).into_data().assert_eq(
      TensorData::from<float>({0.f, 0.f, 0.5f, 1.f, 1.f, kNan, 0.f, 1.f}));
  x.clamp_min(0.5f).into_data().assert_eq(
      TensorData::from<float>({0.5f, 0.5f, 0.5f, 1.f, 3.f, kNan, 0.5f, kInf}));
  x.clamp_max(0.f).into_data().assert_eq(
      TensorData::from<float>({-2.f, 0.f, 0.f, 0.f, 0.f, kNan, -kInf, 0.f}));
}

TYPED_TEST(ElementwiseTest, ClampMatchesPyTorch) {
  const auto c = test::load_case("clamp_grad_at_bounds");
  auto x = Tensor<TypeParam, 1>::from_data(c.input("x"));
  x.clamp(0.f, 1.f).into_data().assert_approx_eq(c.expected("out"), c.tolerance());
}

TYPED_TEST(ElementwiseTest, ClampMinAboveMaxThrows) {
  auto x = vec<TypeParam>({1.f});
  EXPECT_THAT(
      [&] { (void)x.clamp(2.f, 1.f); },
      ThrowsMessage<ValueError>(HasSubstr("clamp: min must be <= max, got min = 2, max = 1")));
}

TYPED_TEST(ElementwiseTest, ClampNanBoundThrows) {
  auto x = vec<TypeParam>({1.f});
  EXPECT_THAT([&] { (void)x.clamp_min(kNan); },
              ThrowsMessage<ValueError>(HasSubstr("clamp: bounds must not be nan")));
}

// ---------------------------------------------------------------- cases

TYPED_TEST(ElementwiseTest, SqrtAtZeroMatchesPyTorch) {
  const auto c = test::load_case("sqrt_grad_at_zero");
  Tensor<TypeParam, 1>::from_data(c.input("x"))
      .sqrt()
      .into_data()
      .assert_approx_eq(c.expected("out"), c.tolerance());
}

TYPED_TEST(ElementwiseTest, SqrtOfSquareMatchesPyTorch) {
  const auto c = test::load_case("sqrt_of_square_at_zero");
  auto x = Tensor<TypeParam, 1>::from_data(c.input("x"));
  (x * x).sqrt().into_data().assert_approx_eq(c.expected("out"), c.tolerance());
}

TYPED_TEST(ElementwiseTest, AbsMatchesPyTorch) {
  const auto c = test::load_case("abs_relu_grad_at_zero");
  Tensor<TypeParam, 1>::from_data(c.input("x"))
      .abs()
      .into_data()
      .assert_approx_eq(c.expected("abs"), c.tolerance());
}

// ---------------------------------------------------------------- buffer reuse

TYPED_TEST(ElementwiseTest, RvalueUnaryReusesTheBuffer) {
  auto x = vec<TypeParam>({1.f, 2.f, 3.f});
  const auto before = memory_stats().total_allocations;
  auto y = std::move(x).exp();
  EXPECT_EQ(memory_stats().total_allocations, before);
  y.into_data().assert_approx_eq(
      TensorData::from<float>({std::exp(1.f), std::exp(2.f), std::exp(3.f)}), kUlps);
}

TYPED_TEST(ElementwiseTest, SharedUnaryAllocates) {
  auto x = vec<TypeParam>({1.f, 2.f, 3.f});
  const auto before = memory_stats().total_allocations;
  auto y = x.exp();
  EXPECT_EQ(memory_stats().total_allocations, before + 1);
  x.into_data().assert_eq(TensorData::from<float>({1.f, 2.f, 3.f}));  // input untouched
}

TYPED_TEST(ElementwiseTest, RvalueBinaryReusesLhsOrRhs) {
  auto a = vec<TypeParam>({1.f, 2.f});
  auto b = vec<TypeParam>({3.f, 4.f});
  const auto before = memory_stats().total_allocations;
  auto c = std::move(a) + b;
  EXPECT_EQ(memory_stats().total_allocations, before);
  auto d = c * std::move(b);  // c is still held, b is not
  EXPECT_EQ(memory_stats().total_allocations, before);
  d.into_data().assert_eq(TensorData::from<float>({12.f, 24.f}));
  c.into_data().assert_eq(TensorData::from<float>({4.f, 6.f}));
}

TYPED_TEST(ElementwiseTest, SharedBinaryAllocates) {
  auto a = vec<TypeParam>({1.f, 2.f});
  auto b = vec<TypeParam>({3.f, 4.f});
  const auto before = memory_stats().total_allocations;
  auto c = a + b;
  EXPECT_EQ(memory_stats().total_allocations, before + 1);
  a.into_data().assert_eq(TensorData::from<float>({1.f, 2.f}));
  b.into_data().assert_eq(TensorData::from<float>({3.f, 4.f}));
}

TYPED_TEST(ElementwiseTest, BroadcastRvalueOfSmallerShapeAllocates) {
  // The rvalue [1, 2] cannot hold the [2, 2] result.
  auto row = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}});
  auto m = Tensor<TypeParam, 2>::from_data({{1.f, 1.f}, {2.f, 2.f}});
  const auto before = memory_stats().total_allocations;
  auto out = std::move(row) + m;
  EXPECT_EQ(memory_stats().total_allocations, before + 1);
  out.into_data().assert_eq(TensorData::from<float>({{2.f, 3.f}, {3.f, 4.f}}));
}

TYPED_TEST(ElementwiseTest, RvalueScalarOpReusesTheBuffer) {
  auto a = vec<TypeParam>({1.f, 2.f});
  const auto before = memory_stats().total_allocations;
  auto b = 3.f - (std::move(a) * 2.f);
  EXPECT_EQ(memory_stats().total_allocations, before);
  b.into_data().assert_eq(TensorData::from<float>({1.f, -1.f}));
}

// ---------------------------------------------------------------- errors

TYPED_TEST(ElementwiseTest, ShapesThatDoNotBroadcastThrow) {
  auto a = Tensor<TypeParam, 2>::zeros({2, 3});
  auto b = Tensor<TypeParam, 2>::zeros({2, 4});
  EXPECT_THAT([&] { (void)(a + b); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "add: shapes do not broadcast: lhs [2, 3] vs rhs [2, 4] (dim 1: 3 vs 4)")));
  EXPECT_THAT([&] { (void)a.max_pair(b); },
              ThrowsMessage<ShapeError>(HasSubstr("max_pair: shapes do not broadcast")));
}

TYPED_TEST(ElementwiseTest, EmptyDoesNotBroadcastAgainstNonOne) {
  auto a = Tensor<TypeParam, 1>::zeros({0});
  auto b = Tensor<TypeParam, 1>::zeros({3});
  EXPECT_THAT(
      [&] { (void)(a * b); },
      ThrowsMessage<ShapeError>(HasSubstr("mul: shapes do not broadcast: lhs [0] vs rhs [3]")));
}

TEST(ElementwisePrimitiveErrors, RankMismatchNamesBothShapes) {
  auto a = CpuOps::full(Shape{2, 3}, 1.0, DType::F32, {});
  auto b = CpuOps::full(Shape{4}, 1.0, DType::F32, {});
  EXPECT_THAT([&] { (void)CpuOps::binary(BinaryOp::Add, a, b); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "add: shapes do not broadcast: lhs [2, 3] vs rhs [4] (dim 1: 3 vs 4)")));
}

TEST(ElementwisePrimitive, BroadcastsAcrossRanks) {
  // [2, 1, 3] + [4, 1] -> [2, 4, 3] at the primitive level (the front end keeps ranks equal).
  auto a = CpuOps::arange(0, 6, 1, DType::F32, {});
  a = CpuTensor(a).with_shape(Shape{2, 1, 3});
  auto b = CpuOps::from_data(
      TensorData(Shape{4, 1}, std::vector<float>{100.f, 200.f, 300.f, 400.f}), DType::F32, {});
  const auto out = CpuOps::into_data(CpuOps::binary(BinaryOp::Add, a, b));
  std::vector<float> expected;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) expected.push_back(static_cast<float>(100 * (j + 1) + 3 * i + k));
  out.assert_eq(TensorData(Shape{2, 4, 3}, expected));
}

TEST(ElementwisePrimitiveErrors, DTypeMismatchThrows) {
  auto a = CpuOps::full(Shape{2}, 1.0, DType::F32, {});
  auto b = CpuOps::full(Shape{2}, 1.0, DType::I32, {});
  EXPECT_THAT([&] { (void)CpuOps::binary(BinaryOp::Sub, a, b); },
              ThrowsMessage<DTypeError>(HasSubstr("sub: dtypes differ: lhs f32 vs rhs i32")));
}

TEST(ElementwisePrimitiveErrors, BoolArithmeticThrows) {
  auto a = CpuOps::full(Shape{2}, 1.0, DType::Bool, {});
  EXPECT_THAT([&] { (void)CpuOps::binary(BinaryOp::Add, a, a); },
              ThrowsMessage<DTypeError>(HasSubstr("add: expected f32 or i32 tensors, got bool")));
  EXPECT_THAT([&] { (void)CpuOps::binary_scalar(BinaryOp::Mul, a, 2.0); },
              ThrowsMessage<DTypeError>(HasSubstr("mul: expected a f32 or i32 tensor, got bool")));
  EXPECT_THAT([&] { (void)CpuOps::unary(UnaryOp::Neg, a); },
              ThrowsMessage<DTypeError>(HasSubstr("neg: expected a f32 or i32 tensor, got bool")));
}

TEST(ElementwisePrimitiveErrors, FloatOnlyUnaryOnIntThrows) {
  auto a = CpuOps::full(Shape{2}, 1.0, DType::I32, {});
  EXPECT_THAT([&] { (void)CpuOps::unary(UnaryOp::Exp, a); },
              ThrowsMessage<DTypeError>(HasSubstr("exp: expected a f32 tensor, got i32")));
  EXPECT_THAT([&] { (void)CpuOps::leaky_relu(a, 0.1); },
              ThrowsMessage<DTypeError>(HasSubstr("leaky_relu: expected a f32 tensor, got i32")));
  EXPECT_THAT([&] { (void)CpuOps::softplus(a, 1.0, 20.0); },
              ThrowsMessage<DTypeError>(HasSubstr("softplus: expected a f32 tensor, got i32")));
}

}  // namespace
