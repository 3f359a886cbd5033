// Reductions through the public Tensor API: sum mean prod max min (whole and _dim),
// max/min_dim_with_indices, argmax argmin, var / var_mean, any all. Every expected value is
// computed independently: by hand, by a plain double-precision loop over the flat data
// below, or by PyTorch (tests/native/cases).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/cases.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr double kU = 0x1.0p-24;  // f32 unit roundoff

using Dims3 = std::array<std::int64_t, 3>;

/// Shapes whose dims are not multiples of any vector width (tails everywhere), with rows
/// longer than 4 vectors of AVX-512, columns wider than the kernels' 256-position chunk,
/// many rows shorter than a vector (246 rows of 5, 60 rows of 1: the kernels' transposed
/// short-row path plus a remainder), and reductions over innermost and non-innermost dims.
const std::vector<Dims3> kShapes = {{3, 5, 7}, {2, 130, 67}, {3, 70, 530}, {41, 6, 5}, {20, 3, 1}};
const std::vector<std::int64_t> kDims = {0, 1, 2, -1};

/// Deterministic data (a 32-bit LCG), independent of Tensor::random.
class Lcg {
 public:
  explicit Lcg(std::uint32_t seed) : state_(seed) {}
  double next() {  // [0, 1)
    state_ = state_ * 1664525u + 1013904223u;
    return static_cast<double>(state_ >> 8) / static_cast<double>(1u << 24);
  }

 private:
  std::uint32_t state_;
};

std::vector<float> floats_in(std::size_t count, std::uint32_t seed, double lo, double hi) {
  Lcg rng(seed);
  std::vector<float> v(count);
  for (auto& x : v) x = static_cast<float>(lo + (hi - lo) * rng.next());
  return v;
}

/// Small integers as floats: many exact ties.
std::vector<float> tied_floats(std::size_t count, std::uint32_t seed, int levels) {
  Lcg rng(seed);
  std::vector<float> v(count);
  for (auto& x : v) x = static_cast<float>(static_cast<int>(rng.next() * levels));
  return v;
}

std::vector<std::int32_t> ints_in(std::size_t count, std::uint32_t seed, int lo, int hi) {
  Lcg rng(seed);
  std::vector<std::int32_t> v(count);
  for (auto& x : v) x = lo + static_cast<std::int32_t>(rng.next() * (hi - lo + 1));
  return v;
}

std::size_t count(const Dims3& d) { return static_cast<std::size_t>(d[0] * d[1] * d[2]); }

std::size_t positive(std::int64_t dim) { return static_cast<std::size_t>(dim < 0 ? dim + 3 : dim); }

Shape kept(const Dims3& d, std::int64_t dim) {
  Dims3 k = d;
  k[positive(dim)] = 1;
  return Shape(k);
}

/// The lines along `dim` of a row-major [d0, d1, d2] array, in the row-major order of the
/// result with that dim kept as 1. Plain index arithmetic, as a reference.
template <class T>
std::vector<std::vector<double>> lines(const std::vector<T>& x, const Dims3& d, std::int64_t dim) {
  const std::size_t p = positive(dim);
  std::vector<std::vector<double>> out;
  std::array<std::int64_t, 3> i{};
  const std::int64_t n = d[p];
  Dims3 rd = d;
  rd[p] = 1;
  for (i[0] = 0; i[0] < rd[0]; ++i[0]) {
    for (i[1] = 0; i[1] < rd[1]; ++i[1]) {
      for (i[2] = 0; i[2] < rd[2]; ++i[2]) {
        std::vector<double> line;
        auto j = i;
        for (j[p] = 0; j[p] < n; ++j[p]) {
          line.push_back(static_cast<double>(x[static_cast<std::size_t>((j[0] * d[1] + j[1]) * d[2] + j[2])]));
        }
        out.push_back(line);
      }
    }
  }
  return out;
}

double ref_sum(const std::vector<double>& l) {
  double s = 0;
  for (double v : l) s += v;
  return s;
}
double ref_abs_sum(const std::vector<double>& l) {
  double s = 0;
  for (double v : l) s += std::fabs(v);
  return s;
}
double ref_prod(const std::vector<double>& l) {
  double p = 1;
  for (double v : l) p *= v;
  return p;
}
/// Max (min) with nan propagation.
double ref_extremum(const std::vector<double>& l, bool is_max) {
  double m = l.at(0);
  for (double v : l) {
    if (std::isnan(v)) return v;
    if (is_max ? v > m : v < m) m = v;
  }
  return m;
}
/// First index of the max (min); the first nan wins.
double ref_arg(const std::vector<double>& l, bool is_max) {
  std::size_t best = 0;
  for (std::size_t k = 0; k < l.size(); ++k) {
    if (std::isnan(l[k])) return static_cast<double>(k);
    if (is_max ? l[k] > l[best] : l[k] < l[best]) best = k;
  }
  return static_cast<double>(best);
}
double ref_var(const std::vector<double>& l, bool unbiased) {
  const double mean = ref_sum(l) / static_cast<double>(l.size());
  double s = 0;
  for (double v : l) s += (v - mean) * (v - mean);
  return s / (static_cast<double>(l.size()) - (unbiased ? 1.0 : 0.0));
}

template <class Tn>
std::vector<double> values(const Tn& t) {
  const TensorData d = t.to_data();
  std::vector<double> out(static_cast<std::size_t>(d.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.value_as_double(i);
  return out;
}

/// Element-wise |got - expected| <= tolerance[i]; nan matches nan.
void expect_within(const std::vector<double>& got, const std::vector<double>& expected,
                   const std::vector<double>& tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i << ": got " << got[i];
    } else {
      EXPECT_LE(std::fabs(got[i] - expected[i]), tolerance[i])
          << what << " at " << i << ": got " << got[i] << ", expected " << expected[i];
    }
  }
}

void expect_equal(const std::vector<double>& got, const std::vector<double>& expected,
                  const std::string& what) {
  expect_within(got, expected, std::vector<double>(expected.size(), 0.0), what);
}

/// The documented bound of the blocked f32 sum (engine/src/cpu/kernels/reduce.hpp):
/// |got - sum| <= 2.9e-6·Σ|x| + u·|sum| (+ u·|sum| again for the mean's final division).
double sum_bound(const std::vector<double>& line) {
  return 2.9e-6 * ref_abs_sum(line) + 2 * kU * std::fabs(ref_sum(line)) + 1e-30;
}

std::string where(const Dims3& d, std::int64_t dim) {
  return str_cat("shape ", Shape(d), " dim ", dim);
}

}  // namespace

template <class B>
class ReductionTest : public ::testing::Test {
 protected:
  using F3 = Tensor<B, 3>;
  using I3 = Tensor<B, 3, Int>;
  using Bool3 = Tensor<B, 3, Bool>;
  static F3 floats(const std::vector<float>& v, const Dims3& d) {
    return F3::from_data(TensorData(Shape(d), v), test::device<B>());
  }
  static I3 ints(const std::vector<std::int32_t>& v, const Dims3& d) {
    return I3::from_data(TensorData(Shape(d), v), test::device<B>());
  }
};
TYPED_TEST_SUITE(ReductionTest, test::AllBackends);

// ------------------------------------------------------------------ every dim vs reference

TYPED_TEST(ReductionTest, SumDimMatchesDoubleReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = floats_in(count(d), 1, -1.0, 1.0);
    for (auto dim : kDims) {
      const auto out = this->floats(x, d).sum_dim(dim);
      EXPECT_EQ(out.shape(), kept(d, dim)) << where(d, dim);
      std::vector<double> expected, tol;
      for (const auto& l : lines(x, d, dim)) {
        expected.push_back(ref_sum(l));
        tol.push_back(sum_bound(l));
      }
      expect_within(values(out), expected, tol, where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, MeanDimMatchesDoubleReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = floats_in(count(d), 2, -1.0, 3.0);
    for (auto dim : kDims) {
      const auto out = this->floats(x, d).mean_dim(dim);
      EXPECT_EQ(out.shape(), kept(d, dim)) << where(d, dim);
      std::vector<double> expected, tol;
      for (const auto& l : lines(x, d, dim)) {
        expected.push_back(ref_sum(l) / static_cast<double>(l.size()));
        tol.push_back(sum_bound(l) / static_cast<double>(l.size()));
      }
      expect_within(values(out), expected, tol, where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, ProdDimMatchesDoubleReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = floats_in(count(d), 3, 0.9, 1.1);
    for (auto dim : kDims) {
      const auto out = this->floats(x, d).prod_dim(dim);
      EXPECT_EQ(out.shape(), kept(d, dim)) << where(d, dim);
      std::vector<double> expected, tol;
      for (const auto& l : lines(x, d, dim)) {
        const double p = ref_prod(l);
        expected.push_back(p);
        tol.push_back(static_cast<double>(l.size() + 1) * kU * std::fabs(p));  // n·u relative
      }
      expect_within(values(out), expected, tol, where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, MaxDimAndMinDimMatchReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = floats_in(count(d), 4, -100.0, 100.0);
    for (auto dim : kDims) {
      std::vector<double> max_expected, min_expected;
      for (const auto& l : lines(x, d, dim)) {
        max_expected.push_back(ref_extremum(l, true));
        min_expected.push_back(ref_extremum(l, false));
      }
      const auto t = this->floats(x, d);
      EXPECT_EQ(t.max_dim(dim).shape(), kept(d, dim));
      expect_equal(values(t.max_dim(dim)), max_expected, "max " + where(d, dim));
      expect_equal(values(t.min_dim(dim)), min_expected, "min " + where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, ArgmaxAndArgminGiveFirstIndexOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = tied_floats(count(d), 5, 4);  // values 0..3: ties in every line
    for (auto dim : kDims) {
      std::vector<double> amax, amin;
      for (const auto& l : lines(x, d, dim)) {
        amax.push_back(ref_arg(l, true));
        amin.push_back(ref_arg(l, false));
      }
      const auto t = this->floats(x, d);
      EXPECT_EQ(t.argmax(dim).shape(), kept(d, dim));
      expect_equal(values(t.argmax(dim)), amax, "argmax " + where(d, dim));
      expect_equal(values(t.argmin(dim)), amin, "argmin " + where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, MaxDimWithIndicesMatchesReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = tied_floats(count(d), 6, 9);
    for (auto dim : kDims) {
      std::vector<double> vmax, imax, vmin, imin;
      for (const auto& l : lines(x, d, dim)) {
        vmax.push_back(ref_extremum(l, true));
        imax.push_back(ref_arg(l, true));
        vmin.push_back(ref_extremum(l, false));
        imin.push_back(ref_arg(l, false));
      }
      const auto t = this->floats(x, d);
      const auto [max_values, max_indices] = t.max_dim_with_indices(dim);
      const auto [min_values, min_indices] = t.min_dim_with_indices(dim);
      EXPECT_EQ(max_indices.shape(), kept(d, dim));
      expect_equal(values(max_values), vmax, "max values " + where(d, dim));
      expect_equal(values(max_indices), imax, "max indices " + where(d, dim));
      expect_equal(values(min_values), vmin, "min values " + where(d, dim));
      expect_equal(values(min_indices), imin, "min indices " + where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, VarMeanMatchesDoubleReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = floats_in(count(d), 7, -2.0, 5.0);
    for (auto dim : kDims) {
      for (bool unbiased : {true, false}) {
        std::vector<double> var, mean, var_tol, mean_tol;
        for (const auto& l : lines(x, d, dim)) {
          var.push_back(ref_var(l, unbiased));
          var_tol.push_back(1e-5 * std::fabs(var.back()) + 1e-6);
          mean.push_back(ref_sum(l) / static_cast<double>(l.size()));
          mean_tol.push_back(sum_bound(l) / static_cast<double>(l.size()));
        }
        const auto [v, m] = this->floats(x, d).var_mean(dim, unbiased);
        EXPECT_EQ(v.shape(), kept(d, dim));
        EXPECT_EQ(m.shape(), kept(d, dim));
        expect_within(values(v), var, var_tol, str_cat("var unbiased=", unbiased, " ", where(d, dim)));
        expect_within(values(m), mean, mean_tol, "mean " + where(d, dim));
      }
    }
  }
}

TYPED_TEST(ReductionTest, IntSumMeanProdMatchExactReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = ints_in(count(d), 8, -50, 50);
    for (auto dim : kDims) {
      std::vector<double> sum, mean;
      for (const auto& l : lines(x, d, dim)) {
        sum.push_back(ref_sum(l));
        mean.push_back(std::floor(ref_sum(l) / static_cast<double>(l.size())));  // floor mean
      }
      const auto t = this->ints(x, d);
      EXPECT_EQ(t.sum_dim(dim).shape(), kept(d, dim));
      expect_equal(values(t.sum_dim(dim)), sum, "sum " + where(d, dim));
      expect_equal(values(t.mean_dim(dim)), mean, "mean " + where(d, dim));
    }
  }
  const Dims3 small = {3, 5, 7};  // products of up to 7 factors in [-3, 3] fit in i32
  const auto x = ints_in(count(small), 9, -3, 3);
  for (auto dim : kDims) {
    std::vector<double> prod;
    for (const auto& l : lines(x, small, dim)) prod.push_back(ref_prod(l));
    expect_equal(values(this->ints(x, small).prod_dim(dim)), prod, "prod " + where(small, dim));
  }
}

TYPED_TEST(ReductionTest, IntMaxMinArgmaxArgminMatchReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto x = ints_in(count(d), 10, -5, 5);
    for (auto dim : kDims) {
      std::vector<double> vmax, vmin, amax, amin;
      for (const auto& l : lines(x, d, dim)) {
        vmax.push_back(ref_extremum(l, true));
        vmin.push_back(ref_extremum(l, false));
        amax.push_back(ref_arg(l, true));
        amin.push_back(ref_arg(l, false));
      }
      const auto t = this->ints(x, d);
      expect_equal(values(t.max_dim(dim)), vmax, "max " + where(d, dim));
      expect_equal(values(t.min_dim(dim)), vmin, "min " + where(d, dim));
      expect_equal(values(t.argmax(dim)), amax, "argmax " + where(d, dim));
      expect_equal(values(t.argmin(dim)), amin, "argmin " + where(d, dim));
      const auto [mv, mi] = t.max_dim_with_indices(dim);
      expect_equal(values(mv), vmax, "max_dim_with_indices values " + where(d, dim));
      expect_equal(values(mi), amax, "max_dim_with_indices indices " + where(d, dim));
    }
  }
}

TYPED_TEST(ReductionTest, AnyDimAndAllDimMatchReferenceOnEveryDimForEveryKind) {
  for (const auto& d : kShapes) {
    // Mostly non-zero with rare zeros (all varies), and mostly zero with rare non-zeros
    // (any varies).
    Lcg rng(11);
    std::vector<float> dense(count(d)), sparse(count(d));
    for (std::size_t i = 0; i < dense.size(); ++i) {
      dense[i] = rng.next() < 0.005 ? 0.0f : 1.5f;
      sparse[i] = rng.next() < 0.005 ? -2.0f : 0.0f;
    }
    for (auto dim : kDims) {
      std::vector<double> all_expected, any_expected;
      for (const auto& l : lines(dense, d, dim)) {
        bool all = true;
        for (double v : l) all = all && v != 0.0;
        all_expected.push_back(all);
      }
      for (const auto& l : lines(sparse, d, dim)) {
        bool any = false;
        for (double v : l) any = any || v != 0.0;
        any_expected.push_back(any);
      }
      const auto fd = this->floats(dense, d);
      const auto fs = this->floats(sparse, d);
      EXPECT_EQ(fd.all_dim(dim).shape(), kept(d, dim));
      expect_equal(values(fd.all_dim(dim)), all_expected, "f32 all " + where(d, dim));
      expect_equal(values(fs.any_dim(dim)), any_expected, "f32 any " + where(d, dim));
      expect_equal(values(fd.int_().all_dim(dim)), all_expected, "i32 all " + where(d, dim));
      expect_equal(values(fs.int_().any_dim(dim)), any_expected, "i32 any " + where(d, dim));
      expect_equal(values(fd.bool_().all_dim(dim)), all_expected, "bool all " + where(d, dim));
      expect_equal(values(fs.bool_().any_dim(dim)), any_expected, "bool any " + where(d, dim));
    }
  }
}

// ------------------------------------------------------------------ whole tensor, by hand

TYPED_TEST(ReductionTest, WholeTensorReductionsHaveShapeOne) {
  const auto t = Tensor<TypeParam, 2>::from_data({{1.f, -2.f, 3.f}, {4.f, 5.f, -6.f}},
                                                 test::device<TypeParam>());
  EXPECT_EQ(t.sum().shape(), Shape({1}));
  t.sum().to_data().assert_eq(TensorData::from<float>({5.f}));
  t.mean().to_data().assert_approx_eq(TensorData::from<float>({5.f / 6.f}), Tolerance::default_f32());
  t.prod().to_data().assert_eq(TensorData::from<float>({720.f}));
  t.max().to_data().assert_eq(TensorData::from<float>({5.f}));
  t.min().to_data().assert_eq(TensorData::from<float>({-6.f}));
}

TYPED_TEST(ReductionTest, WholeIntTensorReductionsByHand) {
  const auto t = Tensor<TypeParam, 2, Int>::from_ints({{1, -2, 3}, {4, 5, -7}},
                                                      test::device<TypeParam>());
  t.sum().to_data().assert_eq(TensorData::from<std::int32_t>({4}));
  t.mean().to_data().assert_eq(TensorData::from<std::int32_t>({0}));  // floor(4 / 6)
  t.prod().to_data().assert_eq(TensorData::from<std::int32_t>({840}));
  t.max().to_data().assert_eq(TensorData::from<std::int32_t>({5}));
  t.min().to_data().assert_eq(TensorData::from<std::int32_t>({-7}));
}

TYPED_TEST(ReductionTest, AnyAndAllOfWholeTensorAreBoolOfShapeOne) {
  const auto some = Tensor<TypeParam, 2>::from_data({{0.f, 0.f}, {0.f, 3.f}}, test::device<TypeParam>());
  const auto none = Tensor<TypeParam, 2>::zeros({2, 2}, test::device<TypeParam>());
  EXPECT_EQ(some.any().shape(), Shape({1}));
  some.any().to_data().assert_eq(TensorData::from<bool>({true}));
  some.all().to_data().assert_eq(TensorData::from<bool>({false}));
  none.any().to_data().assert_eq(TensorData::from<bool>({false}));
  some.ones_like().all().to_data().assert_eq(TensorData::from<bool>({true}));
}

TYPED_TEST(ReductionTest, AnyCountsNanAsTrueAndNegativeZeroAsFalse) {
  const auto nan = Tensor<TypeParam, 1>::from_data({0.f, kNan, 0.f}, test::device<TypeParam>());
  const auto neg_zero = Tensor<TypeParam, 1>::from_data({-0.f, -0.f}, test::device<TypeParam>());
  nan.any().to_data().assert_eq(TensorData::from<bool>({true}));
  neg_zero.any().to_data().assert_eq(TensorData::from<bool>({false}));
  Tensor<TypeParam, 1>::from_data({kNan, 1.f}, test::device<TypeParam>())
      .all()
      .to_data()
      .assert_eq(TensorData::from<bool>({true}));
}

// ------------------------------------------------------------------ size-1 and empty dims

TYPED_TEST(ReductionTest, ReducingASizeOneDimKeepsTheValues) {
  const Dims3 d = {4, 1, 3};
  const auto x = floats_in(count(d), 12, -1.0, 1.0);
  const auto t = this->floats(x, d);
  const std::vector<double> expected(x.begin(), x.end());
  expect_equal(values(t.sum_dim(1)), expected, "sum");
  expect_equal(values(t.mean_dim(1)), expected, "mean");
  expect_equal(values(t.prod_dim(1)), expected, "prod");
  expect_equal(values(t.max_dim(1)), expected, "max");
  expect_equal(values(t.min_dim(1)), expected, "min");
  expect_equal(values(t.argmax(1)), std::vector<double>(12, 0.0), "argmax");
  EXPECT_EQ(t.sum_dim(1).shape(), Shape({4, 1, 3}));
}

TYPED_TEST(ReductionTest, VarOfOneElementIsNanUnbiasedAndZeroBiased) {
  const auto t = Tensor<TypeParam, 2>::from_data({{3.f}, {-1.f}}, test::device<TypeParam>());
  t.var(1, true).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{kNan, kNan}));
  t.var(1, false).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{0.f, 0.f}));
}

TYPED_TEST(ReductionTest, SumOfEmptyIsZeroAndProdOfEmptyIsOne) {
  const auto t = Tensor<TypeParam, 2>::zeros({2, 0}, test::device<TypeParam>());
  t.sum().to_data().assert_eq(TensorData::from<float>({0.f}));
  t.prod().to_data().assert_eq(TensorData::from<float>({1.f}));
  t.sum_dim(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{0.f, 0.f}));
  t.prod_dim(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{1.f, 1.f}));
  const auto i = Tensor<TypeParam, 2, Int>::zeros({2, 0}, test::device<TypeParam>());
  i.sum_dim(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<std::int32_t>{0, 0}));
  i.prod().to_data().assert_eq(TensorData::from<std::int32_t>({1}));
}

TYPED_TEST(ReductionTest, MeanOfEmptyIsNan) {
  const auto t = Tensor<TypeParam, 2>::zeros({2, 0}, test::device<TypeParam>());
  t.mean().to_data().assert_eq(TensorData::from<float>({kNan}));
  t.mean_dim(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{kNan, kNan}));
}

TYPED_TEST(ReductionTest, VarMeanOfEmptyDimIsNan) {
  const auto t = Tensor<TypeParam, 2>::zeros({2, 0}, test::device<TypeParam>());
  const auto [v, m] = t.var_mean(1, false);
  v.to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{kNan, kNan}));
  m.to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{kNan, kNan}));
}

TYPED_TEST(ReductionTest, AnyOfEmptyIsFalseAndAllOfEmptyIsTrue) {
  const auto t = Tensor<TypeParam, 2, Bool>::from_data(TensorData(Shape{3, 0}, std::vector<bool>{}),
                                                       test::device<TypeParam>());
  t.any().to_data().assert_eq(TensorData::from<bool>({false}));
  t.all().to_data().assert_eq(TensorData::from<bool>({true}));
  t.any_dim(1).to_data().assert_eq(TensorData(Shape{3, 1}, std::vector<bool>{false, false, false}));
  t.all_dim(1).to_data().assert_eq(TensorData(Shape{3, 1}, std::vector<bool>{true, true, true}));
}

TYPED_TEST(ReductionTest, ReducingANonEmptyDimOfAnEmptyTensorGivesAnEmptyResult) {
  const auto t = Tensor<TypeParam, 2>::zeros({3, 0}, test::device<TypeParam>());
  EXPECT_EQ(t.max_dim(0).shape(), Shape({1, 0}));
  EXPECT_EQ(t.sum_dim(0).shape(), Shape({1, 0}));
  EXPECT_EQ(t.argmin(0).shape(), Shape({1, 0}));
  EXPECT_EQ(t.var(0).shape(), Shape({1, 0}));
  EXPECT_EQ(t.any_dim(0).shape(), Shape({1, 0}));
}

// ------------------------------------------------------------------ accuracy

TYPED_TEST(ReductionTest, SumOfAMillionOnesIsExact) {
  const auto t = Tensor<TypeParam, 1>::ones({1000000}, test::device<TypeParam>());
  t.sum().to_data().assert_eq(TensorData::from<float>({1e6f}));
  t.mean().to_data().assert_eq(TensorData::from<float>({1.f}));
}

TYPED_TEST(ReductionTest, SumDimOfAMillionOnesIsExactAlongRowsAndColumns) {
  const auto rows = Tensor<TypeParam, 2>::ones({2, 1000000}, test::device<TypeParam>());
  rows.sum_dim(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<float>{1e6f, 1e6f}));
  // Columns: 17 wide covers a full vector of every width plus a scalar tail.
  const auto cols = Tensor<TypeParam, 2>::ones({1000000, 17}, test::device<TypeParam>());
  cols.sum_dim(0).to_data().assert_eq(TensorData(Shape{1, 17}, std::vector<float>(17, 1e6f)));
  cols.mean_dim(0).to_data().assert_eq(TensorData(Shape{1, 17}, std::vector<float>(17, 1.f)));
}

TYPED_TEST(ReductionTest, LargeValueFollowedByManyOnesSumsCloseToDoubleSum) {
  // Naive f32 accumulation returns 1e8: every 1 is lost against 1e8 (ulp 8).
  const std::size_t n = 1000001;
  std::vector<float> x(n, 1.0f);
  x[0] = 1e8f;
  const double exact = 1e8 + 1e6;
  const double bound = 2.9e-6 * exact + kU * exact;  // the documented bound, ~300
  const auto row = Tensor<TypeParam, 1>::from_data(TensorData(Shape{static_cast<std::int64_t>(n)}, x),
                                                   test::device<TypeParam>());
  EXPECT_NEAR(row.sum().into_scalar(), exact, bound);
  // The same along a non-innermost dim: [n, 17] with 1e8 in the first row.
  std::vector<float> cols(n * 17, 1.0f);
  for (std::size_t i = 0; i < 17; ++i) cols[i] = 1e8f;
  const auto t = Tensor<TypeParam, 2>::from_data(
      TensorData(Shape{static_cast<std::int64_t>(n), 17}, cols), test::device<TypeParam>());
  for (double v : values(t.sum_dim(0))) EXPECT_NEAR(v, exact, bound);
}

TYPED_TEST(ReductionTest, AlternatingLargeAndSmallValuesSumCloseToDoubleSum) {
  // 1e6 and 0.1 alternating: each 0.1 is below the ulp of the running f32 sum after a few
  // steps, and the large terms are rounded at every addition.
  const std::size_t n = 1000000;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = i % 2 ? 0.1f : 1e6f;
  double exact = 0;
  for (float v : x) exact += static_cast<double>(v);
  const auto rows = Tensor<TypeParam, 2>::from_data(TensorData(Shape{1, 1000000}, x), test::device<TypeParam>());
  EXPECT_NEAR(rows.sum().into_scalar(), exact, 1e-6 * exact);
  EXPECT_NEAR(rows.sum_dim(1).into_scalar(), exact, 1e-6 * exact);
  const auto cols = Tensor<TypeParam, 2>::from_data(TensorData(Shape{500000, 2}, x), test::device<TypeParam>());
  // Column 0 holds the 1e6 values, column 1 the 0.1 values.
  const auto sums = values(cols.sum_dim(0));
  EXPECT_NEAR(sums[0], 5e11, 1e-6 * 5e11);
  EXPECT_NEAR(sums[1], 500000 * static_cast<double>(0.1f), 1e-6 * 5e4);
}

TYPED_TEST(ReductionTest, VarIsStableForALargeOffset) {
  // 1e4 + (0, 1, 2, 3) repeated: biased variance exactly 1.25, unbiased 1.25·n/(n - 1).
  // E[x²] - E[x]² in f32 loses every digit here (1e8 against an ulp of 8).
  const std::size_t n = 4000;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = 1e4f + static_cast<float>(i % 4);
  const auto t = Tensor<TypeParam, 2>::from_data(TensorData(Shape{1, 4000}, x), test::device<TypeParam>());
  EXPECT_NEAR(t.var(1, false).into_scalar(), 1.25, 1e-6);
  EXPECT_NEAR(t.var(1, true).into_scalar(), 1.25 * 4000.0 / 3999.0, 1e-6);
  // Along a non-innermost dim: [4000, 19], every column holding the same values.
  std::vector<float> cols(n * 19);
  for (std::size_t i = 0; i < cols.size(); ++i) cols[i] = x[i / 19];
  const auto c = Tensor<TypeParam, 2>::from_data(TensorData(Shape{4000, 19}, cols), test::device<TypeParam>());
  for (double v : values(c.var(0, false))) EXPECT_NEAR(v, 1.25, 1e-6);
}

// ------------------------------------------------------------------ var by hand

TYPED_TEST(ReductionTest, VarUnbiasedAndBiasedByHand) {
  // [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5.
  const auto t = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f, 4.f}, {2.f, 2.f, 2.f, 2.f}},
                                                 test::device<TypeParam>());
  t.var(1).to_data().assert_approx_eq(TensorData(Shape{2, 1}, std::vector<float>{5.f / 3.f, 0.f}),
                                      Tolerance::default_f32());
  t.var_bias(1).to_data().assert_approx_eq(TensorData(Shape{2, 1}, std::vector<float>{1.25f, 0.f}),
                                           Tolerance::default_f32());
  const auto [v, m] = t.var_mean(0, false);  // columns [1, 2], [2, 2], [3, 2], [4, 2]
  v.to_data().assert_approx_eq(TensorData::from<float>({{0.25f, 0.f, 0.25f, 1.f}}),
                               Tolerance::default_f32());
  m.to_data().assert_approx_eq(TensorData::from<float>({{1.5f, 2.f, 2.5f, 3.f}}),
                               Tolerance::default_f32());
}

// ------------------------------------------------------------------ nan and ties

TYPED_TEST(ReductionTest, MaxAndMinPropagateNanInRowsAndColumns) {
  for (std::size_t pos : {0u, 5u, 40u, 99u}) {  // vector body, lane 5, tail
    std::vector<float> x = floats_in(100, 13, -1.0, 1.0);
    x[pos] = kNan;
    const auto row = Tensor<TypeParam, 2>::from_data(TensorData(Shape{1, 100}, x), test::device<TypeParam>());
    EXPECT_TRUE(std::isnan(row.max().into_scalar())) << pos;
    EXPECT_TRUE(std::isnan(row.min().into_scalar())) << pos;
    EXPECT_TRUE(std::isnan(row.max_dim(1).into_scalar())) << pos;
    EXPECT_TRUE(std::isnan(row.min_dim(1).into_scalar())) << pos;
    // Along dim 0 of [100, 18] whose columns all hold x.
    std::vector<float> cols(100 * 18);
    for (std::size_t i = 0; i < cols.size(); ++i) cols[i] = x[i / 18];
    const auto col = Tensor<TypeParam, 2>::from_data(TensorData(Shape{100, 18}, cols), test::device<TypeParam>());
    for (double v : values(col.max_dim(0))) EXPECT_TRUE(std::isnan(v)) << pos;
    for (double v : values(col.min_dim(0))) EXPECT_TRUE(std::isnan(v)) << pos;
  }
}

TYPED_TEST(ReductionTest, NanColumnsOfAWideTensorPropagateOnlyThere) {
  // [50, 40]: nan in column 3 (row 10) and column 37 (row 49, the last row, in the tail).
  std::vector<float> x = floats_in(2000, 14, -1.0, 1.0);
  x[10 * 40 + 3] = kNan;
  x[49 * 40 + 37] = kNan;
  const auto t = Tensor<TypeParam, 2>::from_data(TensorData(Shape{50, 40}, x), test::device<TypeParam>());
  const auto mx = values(t.max_dim(0));
  const auto [mv, mi] = t.max_dim_with_indices(0);
  const auto idx = values(mi);
  for (std::size_t i = 0; i < 40; ++i) {
    const bool nan_col = i == 3 || i == 37;
    EXPECT_EQ(std::isnan(mx[i]), nan_col) << i;
    EXPECT_EQ(std::isnan(values(mv)[i]), nan_col) << i;
  }
  EXPECT_EQ(idx[3], 10);
  EXPECT_EQ(idx[37], 49);
}

TYPED_TEST(ReductionTest, SumAndMeanPropagateNan) {
  std::vector<float> x(70, 1.0f);
  x[66] = kNan;
  const auto t = Tensor<TypeParam, 1>::from_data(TensorData(Shape{70}, x), test::device<TypeParam>());
  EXPECT_TRUE(std::isnan(t.sum().into_scalar()));
  EXPECT_TRUE(std::isnan(t.mean().into_scalar()));
}

TYPED_TEST(ReductionTest, ArgmaxAndArgminCountNanAsExtremeAndTheFirstNanWins) {
  const auto t = Tensor<TypeParam, 2>::from_data({{1.f, kNan, 3.f, kNan}, {-5.f, 2.f, -5.f, 2.f}},
                                                 test::device<TypeParam>());
  t.argmax(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<std::int32_t>{1, 1}));
  t.argmin(1).to_data().assert_eq(TensorData(Shape{2, 1}, std::vector<std::int32_t>{1, 0}));
}

TYPED_TEST(ReductionTest, ArgmaxFirstNanWinsAcrossVectorLanes) {
  std::vector<float> x = floats_in(200, 15, -1.0, 1.0);
  x[77] = kNan;   // lane 13 of an AVX-512 vector, lane 5 of AVX2, lane 1 of SSE
  x[130] = kNan;
  x[161] = kNan;
  const auto t = Tensor<TypeParam, 2>::from_data(TensorData(Shape{1, 200}, x), test::device<TypeParam>());
  EXPECT_EQ(t.argmax(1).into_scalar(), 77);
  EXPECT_EQ(t.argmin(1).into_scalar(), 77);
  EXPECT_TRUE(std::isnan(t.max_dim_with_indices(1).first.into_scalar()));
}

TYPED_TEST(ReductionTest, ArgmaxGivesFirstIndexOnTiesAcrossVectorLanes) {
  std::vector<float> x(200, 0.0f);
  for (std::size_t i : {90u, 37u, 5u, 199u}) x[i] = 7.0f;   // max at 5 first
  for (std::size_t i : {150u, 64u, 33u}) x[i] = -7.0f;      // min at 33 first
  const auto row = Tensor<TypeParam, 2>::from_data(TensorData(Shape{1, 200}, x), test::device<TypeParam>());
  EXPECT_EQ(row.argmax(1).into_scalar(), 5);
  EXPECT_EQ(row.argmin(1).into_scalar(), 33);
  // The same along dim 0 of [200, 20] (every column equal): columns case.
  std::vector<float> cols(200 * 20);
  for (std::size_t k = 0; k < 200; ++k) {
    for (std::size_t i = 0; i < 20; ++i) cols[k * 20 + i] = x[k];
  }
  const auto t = Tensor<TypeParam, 2>::from_data(TensorData(Shape{200, 20}, cols), test::device<TypeParam>());
  expect_equal(values(t.argmax(0)), std::vector<double>(20, 5.0), "argmax columns");
  expect_equal(values(t.argmin(0)), std::vector<double>(20, 33.0), "argmin columns");
}

// ------------------------------------------------------------------ Int semantics

TYPED_TEST(ReductionTest, IntSumIsExactBeyondFloatPrecision) {
  const auto t = Tensor<TypeParam, 1, Int>::from_ints({16777217, 1, 2000000000, -2000000000},
                                                      test::device<TypeParam>());
  EXPECT_EQ(t.sum().into_scalar(), 16777218);
}

TYPED_TEST(ReductionTest, IntMeanIsTheFloorOfTheMean) {
  const auto t = Tensor<TypeParam, 2, Int>::from_ints({{-3, -4}, {3, 4}, {-4, 4}, {7, 7}},
                                                      test::device<TypeParam>());
  t.mean_dim(1).to_data().assert_eq(TensorData(Shape{4, 1}, std::vector<std::int32_t>{-4, 3, 0, 7}));
}

TYPED_TEST(ReductionTest, IntMeanOfLargeValuesDoesNotOverflow) {
  const auto t = Tensor<TypeParam, 1, Int>::from_ints({2147483647, 2147483647, 2147483645},
                                                      test::device<TypeParam>());
  EXPECT_EQ(t.mean().into_scalar(), 2147483646);
}

TYPED_TEST(ReductionTest, IntSumOutsideI32ThrowsLimitError) {
  const auto t = Tensor<TypeParam, 2, Int>::from_ints({{2147483647, 1}, {0, 1}}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.sum(); },
              ThrowsMessage<LimitError>(HasSubstr("sum: the result does not fit in i32: 2147483649")));
  EXPECT_THAT([&] { t.sum_dim(1); },
              ThrowsMessage<LimitError>(HasSubstr("sum_dim: the result does not fit in i32")));
}

TYPED_TEST(ReductionTest, IntProdOverflowThrowsLimitError) {
  const auto t = Tensor<TypeParam, 1, Int>::from_ints({65536, 65536}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.prod(); },
              ThrowsMessage<LimitError>(HasSubstr("prod: the result does not fit in i32: 4294967296")));
  // Overflowing int64 on the way is reported too.
  const auto big = Tensor<TypeParam, 1, Int>::from_ints({2147483647, 2147483647, 2147483647},
                                                        test::device<TypeParam>());
  EXPECT_THAT([&] { big.prod(); },
              ThrowsMessage<LimitError>(HasSubstr("prod: the result does not fit in i32")));
}

TYPED_TEST(ReductionTest, IntProdIsZeroWhenAZeroFollowsAnOverflow) {
  const auto t = Tensor<TypeParam, 1, Int>::from_ints({2147483647, 2147483647, 2147483647, 0},
                                                      test::device<TypeParam>());
  EXPECT_EQ(t.prod().into_scalar(), 0);
}

// ------------------------------------------------------------------ errors

TYPED_TEST(ReductionTest, EmptyMaxAndMinThrowShapeError) {
  const auto t = Tensor<TypeParam, 2>::zeros({2, 0}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.max(); },
              ThrowsMessage<ShapeError>(HasSubstr("max: cannot take the max of zero elements: shape [2, 0]")));
  EXPECT_THAT([&] { t.min(); }, ThrowsMessage<ShapeError>(HasSubstr("min: cannot take the min")));
  EXPECT_THAT([&] { t.max_dim(1); },
              ThrowsMessage<ShapeError>(HasSubstr("max_dim: cannot take the max of zero elements: dim 1 of shape [2, 0] has size 0")));
  EXPECT_THAT([&] { t.min_dim(-1); }, ThrowsMessage<ShapeError>(HasSubstr("min_dim: cannot take the min")));
}

TYPED_TEST(ReductionTest, EmptyArgmaxAndMaxDimWithIndicesThrowShapeError) {
  const auto t = Tensor<TypeParam, 2>::zeros({0, 3}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.argmax(0); },
              ThrowsMessage<ShapeError>(HasSubstr("argmax: cannot take the max of zero elements: dim 0 of shape [0, 3]")));
  EXPECT_THAT([&] { t.argmin(0); }, ThrowsMessage<ShapeError>(HasSubstr("argmin: cannot take the min")));
  EXPECT_THAT([&] { t.max_dim_with_indices(0); },
              ThrowsMessage<ShapeError>(HasSubstr("max_dim_with_indices: cannot take the max")));
  EXPECT_THAT([&] { t.min_dim_with_indices(0); },
              ThrowsMessage<ShapeError>(HasSubstr("min_dim_with_indices: cannot take the min")));
}

TYPED_TEST(ReductionTest, IntMeanOfEmptyThrowsShapeError) {
  const auto t = Tensor<TypeParam, 2, Int>::zeros({2, 0}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.mean(); },
              ThrowsMessage<ShapeError>(HasSubstr("mean: cannot take the Int mean of zero elements: shape [2, 0]")));
  EXPECT_THAT([&] { t.mean_dim(1); },
              ThrowsMessage<ShapeError>(HasSubstr("mean_dim: cannot take the Int mean of zero elements")));
}

TYPED_TEST(ReductionTest, BadDimThrowsIndexErrorNamingTheOp) {
  const auto t = Tensor<TypeParam, 3>::zeros({2, 3, 4}, test::device<TypeParam>());
  const auto range = [](const std::string& op, int dim) {
    return ThrowsMessage<IndexError>(
        HasSubstr(op + ": dim " + std::to_string(dim) + " is out of range for a tensor of rank 3"));
  };
  EXPECT_THAT([&] { t.sum_dim(3); }, range("sum_dim", 3));
  EXPECT_THAT([&] { t.mean_dim(-4); }, range("mean_dim", -4));
  EXPECT_THAT([&] { t.prod_dim(5); }, range("prod_dim", 5));
  EXPECT_THAT([&] { t.max_dim(3); }, range("max_dim", 3));
  EXPECT_THAT([&] { t.min_dim(3); }, range("min_dim", 3));
  EXPECT_THAT([&] { t.any_dim(3); }, range("any_dim", 3));
  EXPECT_THAT([&] { t.all_dim(-4); }, range("all_dim", -4));
  EXPECT_THAT([&] { t.argmax(3); }, range("argmax", 3));
  EXPECT_THAT([&] { t.argmin(-4); }, range("argmin", -4));
  EXPECT_THAT([&] { t.max_dim_with_indices(3); }, range("max_dim_with_indices", 3));
  EXPECT_THAT([&] { t.min_dim_with_indices(3); }, range("min_dim_with_indices", 3));
  EXPECT_THAT([&] { t.var(3); }, range("var_mean", 3));
  EXPECT_THAT([&] { t.var_mean(-4); }, range("var_mean", -4));
}

TEST(ReductionErrors, NumericReductionsRejectBoolWithDTypeError) {
  const auto b = CpuOps::full(Shape{2, 2}, 1.0, DType::Bool, CpuDevice{});
  EXPECT_THAT([&] { CpuOps::reduce(ReduceOp::Sum, b); },
              ThrowsMessage<DTypeError>(HasSubstr("sum: expected an f32 or i32 tensor, got bool")));
  EXPECT_THAT([&] { CpuOps::reduce_dim(ReduceOp::Max, b, 0); },
              ThrowsMessage<DTypeError>(HasSubstr("max_dim: expected an f32 or i32 tensor, got bool")));
  EXPECT_THAT([&] { CpuOps::argmax(b, 0); },
              ThrowsMessage<DTypeError>(HasSubstr("argmax: expected an f32 or i32 tensor, got bool")));
}

TEST(ReductionErrors, VarMeanRejectsIntWithDTypeError) {
  const auto i = CpuOps::full(Shape{2, 2}, 1.0, DType::I32, CpuDevice{});
  EXPECT_THAT([&] { CpuOps::var_mean(i, 0, true); },
              ThrowsMessage<DTypeError>(HasSubstr("var_mean: expected an f32 tensor, got i32")));
}

// ------------------------------------------------------------------ PyTorch reference cases

TYPED_TEST(ReductionTest, ArgmaxTiesFirstIndexMatchesPyTorch) {
  const auto c = test::load_case("argmax_ties_first_index");
  const auto xi = Tensor<TypeParam, 2, Int>::from_data(c.input("xi"), test::device<TypeParam>());
  const auto xf = Tensor<TypeParam, 2>::from_data(c.input("xf"), test::device<TypeParam>());
  // PyTorch drops the reduced dim; Kiln keeps it with size 1.
  const auto keep = [&](const std::string& name, Shape shape) {
    TensorData e = c.expected(name);
    e.shape = shape;
    return e;
  };
  xi.argmax(1).to_data().assert_approx_eq(keep("argmax_i_dim1", {3, 1}), Tolerance::exact());
  xi.argmax(0).to_data().assert_approx_eq(keep("argmax_i_dim0", {1, 4}), Tolerance::exact());
  xi.argmin(1).to_data().assert_approx_eq(keep("argmin_i_dim1", {3, 1}), Tolerance::exact());
  xf.argmax(1).to_data().assert_approx_eq(keep("argmax_f_dim1", {3, 1}), Tolerance::exact());
  xf.argmin(0).to_data().assert_approx_eq(keep("argmin_f_dim0", {1, 3}), Tolerance::exact());
}

TYPED_TEST(ReductionTest, MeanSumEmptyAxisMatchesPyTorch) {
  const auto c = test::load_case("mean_sum_empty_axis");
  const auto x = Tensor<TypeParam, 2>::from_data(c.input("x"), test::device<TypeParam>());
  const auto keep = [&](const std::string& name, Shape shape) {
    TensorData e = c.expected(name);
    e.shape = shape;
    return e;
  };
  x.mean_dim(1).to_data().assert_approx_eq(keep("mean_dim1", {2, 1}), c.tolerance());
  x.sum_dim(1).to_data().assert_approx_eq(keep("sum_dim1", {2, 1}), c.tolerance());
  x.mean_dim(0).to_data().assert_approx_eq(keep("mean_dim0", {1, 0}), c.tolerance());
  x.mean().to_data().assert_approx_eq(c.expected("mean_all"), c.tolerance());
}

TYPED_TEST(ReductionTest, MaxAllTiesForwardMatchesPyTorch) {
  const auto c = test::load_case("max_all_ties_grad");  // the gradient is issue 3
  const auto x = Tensor<TypeParam, 2>::from_data(c.input("x"), test::device<TypeParam>());
  x.max().to_data().assert_approx_eq(c.expected("out"), c.tolerance());
}
