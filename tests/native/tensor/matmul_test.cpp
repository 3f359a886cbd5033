// Tensor::matmul / CpuOps::matmul: values by hand, against a double-precision triple loop
// over every tile and cache-block edge of the packed GEMM, broadcasting, and the errors.
//
// Accuracy: the GEMM accumulates in f32 (as OpenBLAS's SGEMM and PyTorch's CPU matmul do),
// so a result is compared with the exact product (a double triple loop over the same f32
// inputs) using the standard bound for a recursively summed dot product (Higham, "Accuracy
// and Stability of Numerical Algorithms", §3.1): |c - ĉ| <= γ(k)·Σ_p |a_ip|·|b_pj| with
// γ(k) = k·u / (1 - k·u), u = 2^-24. The kernel's fused multiply-adds only round less. We
// allow γ(k + 2) (the alpha scale and the C update add a rounding each): any real defect
// (a wrong, missing or doubled term) is off by about |a_ip·b_pj| and fails it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

/// Uniform floats in [-1, 1) from a fixed seed (same values every run).
std::vector<float> random_values(std::int64_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (auto& v : values) v = static_cast<float>(gen() >> 8) * 0x1.0p-23f - 1.0f;
  return values;
}

/// The exact product (double) of row-major a [batch, m, k] and b [batch, k, n], and the
/// per-element error bound γ(k + 2)·Σ|a||b| described at the top of this file.
struct Reference {
  std::vector<double> value;
  std::vector<double> bound;
};

Reference naive_matmul(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m,
                       std::int64_t k, std::int64_t n) {
  Reference ref{std::vector<double>(static_cast<std::size_t>(m * n)),
                std::vector<double>(static_cast<std::size_t>(m * n))};
  const double u = std::ldexp(1.0, -24);
  const double gamma = (k + 2) * u / (1.0 - (k + 2) * u);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      double sum = 0.0, abs_sum = 0.0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double term = static_cast<double>(a[i * k + p]) * b[p * n + j];
        sum += term;
        abs_sum += std::fabs(term);
      }
      ref.value[i * n + j] = sum;
      ref.bound[i * n + j] = gamma * abs_sum;
    }
  }
  return ref;
}

/// Multiplies random [m, k] x [k, n] with Tensor::matmul and checks every element against
/// the double reference within its bound. Returns a description of the first failure.
template <class B>
::testing::AssertionResult matches_reference(std::int64_t m, std::int64_t k, std::int64_t n,
                                             std::uint32_t seed) {
  const auto a = random_values(m * k, seed);
  const auto b = random_values(k * n, seed + 1);
  const auto lhs = Tensor<B, 2>::from_data(TensorData(Shape{m, k}, a), test::device<B>());
  const auto rhs = Tensor<B, 2>::from_data(TensorData(Shape{k, n}, b), test::device<B>());
  const TensorData out = lhs.matmul(rhs).into_data();
  if (!(out.shape == Shape{m, n})) {
    return ::testing::AssertionFailure()
           << "shape " << out.shape << " for m=" << m << " k=" << k << " n=" << n;
  }
  const auto got = out.to_vec<float>();
  const Reference ref = naive_matmul(a, b, m, k, n);
  std::int64_t bad = 0;
  std::int64_t first = -1;
  for (std::int64_t i = 0; i < m * n; ++i) {
    if (!(std::fabs(got[i] - ref.value[i]) <= ref.bound[i])) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << m * n << " elements off for m=" << m << " k=" << k << " n=" << n
         << "; first at (" << first / n << ", " << first % n << "): got " << got[first]
         << ", expected " << ref.value[first] << " +- " << ref.bound[first];
}

}  // namespace

template <class B>
class MatmulTest : public ::testing::Test {};
TYPED_TEST_SUITE(MatmulTest, test::AllBackends);

TYPED_TEST(MatmulTest, SquareMatrixByHand) {
  auto a = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, test::device<TypeParam>());
  a.matmul(a).into_data().assert_approx_eq(TensorData::from<float>({{7.f, 10.f}, {15.f, 22.f}}),
                                           Tolerance::exact());
}

TYPED_TEST(MatmulTest, NonSquareByHand) {
  // [2, 3] x [3, 4]: row i of the result is sum_p a[i][p] * b[p][:].
  auto a = Tensor<TypeParam, 2>::from_data({{1.f, 0.f, 2.f}, {-1.f, 3.f, 1.f}},
                                           test::device<TypeParam>());
  auto b = Tensor<TypeParam, 2>::from_data(
      {{1.f, 2.f, 3.f, 4.f}, {0.f, 1.f, 0.f, -1.f}, {5.f, 6.f, 7.f, 8.f}},
      test::device<TypeParam>());
  a.matmul(b).into_data().assert_approx_eq(
      TensorData::from<float>({{11.f, 14.f, 17.f, 20.f}, {4.f, 7.f, 4.f, 1.f}}),
      Tolerance::exact());
}

TYPED_TEST(MatmulTest, InnerDimOneIsOuterProduct) {
  auto col = Tensor<TypeParam, 2>::from_data({{1.f}, {2.f}, {3.f}}, test::device<TypeParam>());
  auto row = Tensor<TypeParam, 2>::from_data({{4.f, 5.f}}, test::device<TypeParam>());
  col.matmul(row).into_data().assert_approx_eq(
      TensorData::from<float>({{4.f, 5.f}, {8.f, 10.f}, {12.f, 15.f}}), Tolerance::exact());
}

TYPED_TEST(MatmulTest, RowTimesColumnIsDotProduct) {
  auto row = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f}}, test::device<TypeParam>());
  auto col = Tensor<TypeParam, 2>::from_data({{4.f}, {5.f}, {6.f}}, test::device<TypeParam>());
  row.matmul(col).into_data().assert_approx_eq(TensorData(Shape{1, 1}, std::vector<float>{32.f}),
                                               Tolerance::exact());
}

TYPED_TEST(MatmulTest, EmptyInnerDimGivesZeros) {
  const auto dev = test::device<TypeParam>();
  auto a = Tensor<TypeParam, 2>::zeros({2, 0}, dev);
  auto b = Tensor<TypeParam, 2>::zeros({0, 3}, dev);
  a.matmul(b).into_data().assert_eq(TensorData(Shape{2, 3}, std::vector<float>(6, 0.0f)));
}

TYPED_TEST(MatmulTest, EmptyOuterDimsGiveEmptyResults) {
  const auto dev = test::device<TypeParam>();
  using T2 = Tensor<TypeParam, 2>;
  using T3 = Tensor<TypeParam, 3>;
  const Shape no_rows = T2::zeros({0, 4}, dev).matmul(T2::ones({4, 3}, dev)).shape();
  const Shape no_cols = T2::ones({2, 4}, dev).matmul(T2::zeros({4, 0}, dev)).shape();
  const Shape no_batch = T3::ones({0, 2, 4}, dev).matmul(T3::ones({1, 4, 3}, dev)).shape();
  EXPECT_EQ(no_rows, (Shape{0, 3}));
  EXPECT_EQ(no_cols, (Shape{2, 0}));
  EXPECT_EQ(no_batch, (Shape{0, 2, 3}));
}

TYPED_TEST(MatmulTest, BroadcastBatchMatchesPerMatrixProduct) {
  // [2, 1, m, k] x [1, 3, k, n] -> [2, 3, m, n]; out[i][j] = lhs[i][0] · rhs[0][j].
  const std::int64_t m = 5, k = 7, n = 9;
  const auto a = random_values(2 * m * k, 11);
  const auto b = random_values(3 * k * n, 12);
  const auto dev = test::device<TypeParam>();
  const auto lhs = Tensor<TypeParam, 4>::from_data(TensorData(Shape{2, 1, m, k}, a), dev);
  const auto rhs = Tensor<TypeParam, 4>::from_data(TensorData(Shape{1, 3, k, n}, b), dev);
  const TensorData out = lhs.matmul(rhs).into_data();
  ASSERT_EQ(out.shape, (Shape{2, 3, m, n}));
  const auto got = out.to_vec<float>();
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) {
      const std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
      const std::vector<float> bj(b.begin() + j * k * n, b.begin() + (j + 1) * k * n);
      const Reference ref = naive_matmul(ai, bj, m, k, n);
      for (std::int64_t e = 0; e < m * n; ++e) {
        ASSERT_NEAR(got[(i * 3 + j) * m * n + e], ref.value[e], ref.bound[e])
            << "batch (" << i << ", " << j << "), element " << e;
      }
    }
  }
}

TYPED_TEST(MatmulTest, SharedRhsBroadcastsOverLhsBatch) {
  // [3, m, k] x [1, k, n]: the rhs matrix is reused for every lhs matrix.
  const std::int64_t m = 4, k = 6, n = 17;
  const auto a = random_values(3 * m * k, 21);
  const auto b = random_values(k * n, 22);
  const auto dev = test::device<TypeParam>();
  const auto lhs = Tensor<TypeParam, 3>::from_data(TensorData(Shape{3, m, k}, a), dev);
  const auto rhs = Tensor<TypeParam, 3>::from_data(TensorData(Shape{1, k, n}, b), dev);
  const TensorData out = lhs.matmul(rhs).into_data();
  const auto got = out.to_vec<float>();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(3 * m * n));
  for (std::int64_t i = 0; i < 3; ++i) {
    const std::vector<float> ai(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
    const Reference ref = naive_matmul(ai, b, m, k, n);
    for (std::int64_t e = 0; e < m * n; ++e) {
      ASSERT_NEAR(got[i * m * n + e], ref.value[e], ref.bound[e]) << "batch " << i;
    }
  }
}

TYPED_TEST(MatmulTest, SharedLhsBroadcastsOverRhsBatch) {
  // [1, m, k] x [2, k, n]
  const std::int64_t m = 15, k = 3, n = 33;
  const auto a = random_values(m * k, 31);
  const auto b = random_values(2 * k * n, 32);
  const auto dev = test::device<TypeParam>();
  const auto lhs = Tensor<TypeParam, 3>::from_data(TensorData(Shape{1, m, k}, a), dev);
  const auto rhs = Tensor<TypeParam, 3>::from_data(TensorData(Shape{2, k, n}, b), dev);
  const TensorData out = lhs.matmul(rhs).into_data();
  const auto got = out.to_vec<float>();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(2 * m * n));
  for (std::int64_t j = 0; j < 2; ++j) {
    const std::vector<float> bj(b.begin() + j * k * n, b.begin() + (j + 1) * k * n);
    const Reference ref = naive_matmul(a, bj, m, k, n);
    for (std::int64_t e = 0; e < m * n; ++e) {
      ASSERT_NEAR(got[j * m * n + e], ref.value[e], ref.bound[e]) << "batch " << j;
    }
  }
}

TYPED_TEST(MatmulTest, EveryRowCountUpTo70) {
  // Crosses the register tile's row edge (MR = 12 on AVX-512, 6 on AVX2/SSE/WASM).
  for (std::int64_t m = 1; m <= 70; ++m) {
    EXPECT_TRUE(matches_reference<TypeParam>(m, 19, 37, static_cast<std::uint32_t>(m)));
  }
}

TYPED_TEST(MatmulTest, EveryColumnCountUpTo70) {
  // Crosses the register tile's column edge (NR = 32 / 16 / 8).
  for (std::int64_t n = 1; n <= 70; ++n) {
    EXPECT_TRUE(matches_reference<TypeParam>(29, 23, n, static_cast<std::uint32_t>(100 + n)));
  }
}

TYPED_TEST(MatmulTest, EveryInnerDimUpTo70) {
  for (std::int64_t k = 1; k <= 70; ++k) {
    EXPECT_TRUE(matches_reference<TypeParam>(15, k, 33, static_cast<std::uint32_t>(200 + k)));
  }
}

TYPED_TEST(MatmulTest, AllDimsTogetherUpTo70) {
  for (std::int64_t s = 1; s <= 70; ++s) {
    EXPECT_TRUE(matches_reference<TypeParam>(s, s, s, static_cast<std::uint32_t>(300 + s)));
    EXPECT_TRUE(matches_reference<TypeParam>(71 - s, s, (s * 7) % 70 + 1,
                                             static_cast<std::uint32_t>(400 + s)));
  }
}

TYPED_TEST(MatmulTest, CrossesCacheBlocks) {
  // k past KC (256 / 512), m past MC (96..168 rows), n past NC (2048 / 4096 columns).
  EXPECT_TRUE(matches_reference<TypeParam>(3, 1100, 40, 501));
  EXPECT_TRUE(matches_reference<TypeParam>(337, 20, 35, 502));
  EXPECT_TRUE(matches_reference<TypeParam>(2, 3, 8200, 503));
}

TYPED_TEST(MatmulTest, LargeNonSquare) {
  EXPECT_TRUE(matches_reference<TypeParam>(257, 513, 129, 601));
}

TYPED_TEST(MatmulTest, SpecialValuesPropagate) {
  // inf·0 = nan, and nan anywhere in a row (column) reaches the whole row (column) of C.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto a = Tensor<TypeParam, 2>::from_data({{1.f, inf}, {1.f, 1.f}}, test::device<TypeParam>());
  auto b = Tensor<TypeParam, 2>::from_data({{1.f, 1.f}, {0.f, nan}}, test::device<TypeParam>());
  a.matmul(b).into_data().assert_eq(TensorData::from<float>({{nan, nan}, {1.f, nan}}));
}

// Through the front end, on every backend (Autodiff reports the inner op's error).
template <class B>
class MatmulErrorsTest : public ::testing::Test {};
TYPED_TEST_SUITE(MatmulErrorsTest, test::AllBackends);

TYPED_TEST(MatmulErrorsTest, InnerDimsMismatchNamesBothShapes) {
  auto lhs = Tensor<TypeParam, 2>::zeros({2, 3});
  auto rhs = Tensor<TypeParam, 2>::zeros({4, 5});
  EXPECT_THAT([&] { lhs.matmul(rhs); },
              ThrowsMessage<ShapeError>(
                  HasSubstr("matmul: inner dimensions differ: lhs [2, 3] vs rhs [4, 5] (3 != 4)")));
}

TYPED_TEST(MatmulErrorsTest, BatchDimsThatDoNotBroadcastNameBothShapes) {
  auto lhs = Tensor<TypeParam, 3>::zeros({2, 3, 4});
  auto rhs = Tensor<TypeParam, 3>::zeros({3, 4, 5});
  EXPECT_THAT([&] { lhs.matmul(rhs); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "matmul: batch dims do not broadcast: lhs [2, 3, 4] vs rhs [3, 4, 5]")));
}

// The primitive's own checks, which the typed front end rules out before the call.
TEST(MatmulErrors, RankBelowTwoIsRankError) {
  const auto vec = CpuOps::full(Shape{3}, 1.0, DType::F32, CpuDevice{});
  const auto mat = CpuOps::full(Shape{3, 2}, 1.0, DType::F32, CpuDevice{});
  EXPECT_THAT([&] { CpuOps::matmul(vec, mat); },
              ThrowsMessage<RankError>(HasSubstr("matmul: expected tensors of rank >= 2")));
}

TEST(MatmulErrors, DifferentRanksAreRankError) {
  const auto lhs = CpuOps::full(Shape{2, 2, 3}, 1.0, DType::F32, CpuDevice{});
  const auto rhs = CpuOps::full(Shape{3, 2}, 1.0, DType::F32, CpuDevice{});
  EXPECT_THAT([&] { CpuOps::matmul(lhs, rhs); },
              ThrowsMessage<RankError>(HasSubstr(
                  "matmul: ranks differ: lhs [2, 2, 3] (rank 3) vs rhs [3, 2] (rank 2)")));
}

TEST(MatmulErrors, IntTensorsAreDTypeError) {
  const auto lhs = CpuOps::full(Shape{2, 3}, 1.0, DType::I32, CpuDevice{});
  const auto rhs = CpuOps::full(Shape{3, 2}, 1.0, DType::F32, CpuDevice{});
  EXPECT_THAT([&] { CpuOps::matmul(lhs, rhs); },
              ThrowsMessage<DTypeError>(HasSubstr("matmul: expected f32 tensors, got lhs i32")));
}
