// CpuOps::matmul_transposed(lhs, rhs, transpose_lhs, transpose_rhs), the product the
// backward pass of matmul uses (dA = dC·Bᵀ, dB = Aᵀ·dC): op(lhs)·op(rhs) where op swaps the
// last two dims when its flag is set, read by the GEMM with swapped strides (no copy).
//
// Each flag combination is checked against CpuOps::matmul of the explicitly transposed
// operands (swap_dims, a real copy into the new layout), itself tested against a double
// triple loop in tests/native/tensor/matmul_test.cpp, and by hand on a small product.
// Accuracy: both results lie within γ(k + 2)·Σ|a||b| of the exact product (Higham §3.1,
// see matmul_test.cpp), so they may differ by twice that; a wrong, missing or doubled term
// is off by about |a_ip·b_pj| and fails.
//
// Instruction sets: matmul_transposed runs the GEMM with the arch dispatch selects for the
// process. ctest runs this whole suite on the best arch of the machine and again under
// KILN_SIMD_ARCH=sse2 and =avx2 (CMakeLists.txt, kiln_tests_on_*); every failure message
// names the arch in use. The GEMM itself is run on every arch in one process by
// tests/native/cpu/gemm_test.cpp (strided and transposed views included).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

/// Uniform floats in [-1, 1) from a fixed seed.
TensorData random_data(const Shape& shape, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> values(static_cast<std::size_t>(shape.num_elements()));
  for (auto& v : values) v = static_cast<float>(gen() >> 8) * 0x1.0p-23f - 1.0f;
  return TensorData(shape, std::move(values));
}

CpuTensor make(const TensorData& data) { return CpuOps::from_data(data, DType::F32, CpuDevice{}); }

/// x with its last two dims swapped, copied into the new layout.
CpuTensor swap_last_dims(const CpuTensor& x) {
  const std::size_t rank = x.shape().rank();
  std::vector<std::int64_t> axes(rank);
  for (std::size_t i = 0; i < rank; ++i) axes[i] = static_cast<std::int64_t>(i);
  std::swap(axes[rank - 2], axes[rank - 1]);
  return CpuOps::permute(x, axes);
}

CpuTensor abs(const CpuTensor& x) { return CpuOps::unary(UnaryOp::Abs, x); }

/// Shape [batch..., rows, cols].
Shape with_matrix(std::vector<std::int64_t> batch, std::int64_t rows, std::int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return Shape(batch);
}

std::string describe(const Shape& lhs, const Shape& rhs, bool tl, bool tr) {
  return str_cat("lhs ", lhs, tl ? " (transposed)" : "", " x rhs ", rhs, tr ? " (transposed)" : "",
                 " on ", Cpu::simd_arch());
}

/// op(lhs)·op(rhs) for random operands stored as the flags say, against matmul of the
/// explicitly transposed operands: the logical A is [lhs_batch..., m, k], B is
/// [rhs_batch..., k, n].
::testing::AssertionResult matches_swapped(const std::vector<std::int64_t>& lhs_batch,
                                           const std::vector<std::int64_t>& rhs_batch,
                                           std::int64_t m, std::int64_t k, std::int64_t n, bool tl,
                                           bool tr, std::uint32_t seed) {
  const Shape ls = tl ? with_matrix(lhs_batch, k, m) : with_matrix(lhs_batch, m, k);
  const Shape rs = tr ? with_matrix(rhs_batch, n, k) : with_matrix(rhs_batch, k, n);
  const std::string what = describe(ls, rs, tl, tr);
  const CpuTensor lhs = make(random_data(ls, seed));
  const CpuTensor rhs = make(random_data(rs, seed + 1));
  const CpuTensor a = tl ? swap_last_dims(lhs) : lhs;
  const CpuTensor b = tr ? swap_last_dims(rhs) : rhs;

  const TensorData got = CpuOps::into_data(CpuOps::matmul_transposed(lhs, rhs, tl, tr));
  const TensorData want = CpuOps::into_data(CpuOps::matmul(a, b));
  // Σ|a||b| per element; a sum of non-negative terms, so its own f32 error is negligible.
  const auto abs_sum = CpuOps::into_data(CpuOps::matmul(abs(a), abs(b))).to_vec<float>();
  if (!(got.shape == want.shape)) {
    return ::testing::AssertionFailure()
           << what << ": shape " << got.shape << ", expected " << want.shape;
  }
  const double u = std::ldexp(1.0, -24);
  const double gamma = (k + 2) * u / (1.0 - (k + 2) * u);
  const auto g = got.to_vec<float>();
  const auto w = want.to_vec<float>();
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double bound = 2.0 * gamma * abs_sum[i] * (1.0 + 1e-6);
    if (!(std::fabs(static_cast<double>(g[i]) - w[i]) <= bound)) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << what << " (m=" << m << " k=" << k << " n=" << n << "): " << bad << " of " << g.size()
         << " elements differ; first at flat index " << first << ": got " << g[first]
         << ", expected " << w[first];
}

constexpr bool kFlags[2] = {false, true};

TEST(MatmulTransposedTest, EveryFlagCombinationByHand) {
  // A = [[1, 2, 3], [4, 5, 6]] [2, 3], B = [[1, 0], [-1, 2], [0.5, 1]] [3, 2]:
  // A·B = [[1 - 2 + 1.5, 4 + 3], [4 - 5 + 3, 10 + 6]] = [[0.5, 7], [2, 16]].
  const CpuTensor a = make(TensorData::from<float>({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}));
  const CpuTensor at = make(TensorData::from<float>({{1.f, 4.f}, {2.f, 5.f}, {3.f, 6.f}}));
  const CpuTensor b = make(TensorData::from<float>({{1.f, 0.f}, {-1.f, 2.f}, {0.5f, 1.f}}));
  const CpuTensor bt = make(TensorData::from<float>({{1.f, -1.f, 0.5f}, {0.f, 2.f, 1.f}}));
  const auto expected = TensorData::from<float>({{0.5f, 7.f}, {2.f, 16.f}});
  for (bool tl : kFlags) {
    for (bool tr : kFlags) {
      SCOPED_TRACE(describe(tl ? at.shape() : a.shape(), tr ? bt.shape() : b.shape(), tl, tr));
      CpuOps::into_data(CpuOps::matmul_transposed(tl ? at : a, tr ? bt : b, tl, tr))
          .assert_approx_eq(expected, Tolerance::exact());
    }
  }
}

TEST(MatmulTransposedTest, OddSizesWithoutBatch) {
  // Sizes around the register tiles and cache blocks of every arch; 1 (a vector) and 100.
  const std::int64_t sizes[] = {1, 7, 33, 100};
  std::uint32_t seed = 1;
  for (bool tl : kFlags) {
    for (bool tr : kFlags) {
      for (std::int64_t m : sizes) {
        for (std::int64_t k : sizes) {
          for (std::int64_t n : sizes) {
            EXPECT_TRUE(matches_swapped({}, {}, m, k, n, tl, tr, seed += 2));
          }
        }
      }
    }
  }
}

TEST(MatmulTransposedTest, BroadcastBatchDims) {
  struct Batches {
    std::vector<std::int64_t> lhs, rhs;
  };
  const Batches batches[] = {
      {{3}, {3}},              // no broadcast
      {{3}, {1}},              // rhs batch 1: one rhs matrix for every lhs matrix
      {{1}, {3}},              // lhs batch 1
      {{2, 1}, {1, 3}},        // both broadcast -> [2, 3]
      {{2, 1, 4}, {1, 3, 1}},  // rank 5 -> [2, 3, 4]
  };
  const std::int64_t sizes[][3] = {{1, 1, 1}, {7, 33, 1}, {33, 7, 100}, {100, 1, 7}, {1, 100, 33}};
  std::uint32_t seed = 1000;
  for (const auto& bd : batches) {
    for (const auto& s : sizes) {
      for (bool tl : kFlags) {
        for (bool tr : kFlags) {
          EXPECT_TRUE(matches_swapped(bd.lhs, bd.rhs, s[0], s[1], s[2], tl, tr, seed += 2));
        }
      }
    }
  }
}

TEST(MatmulTransposedTest, BroadcastBatchOutputShape) {
  // lhs [2, 1, 5, 3] transposed (op: [2, 1, 3, 5]) x rhs [1, 4, 7, 5] transposed (op:
  // [1, 4, 5, 7]) -> [2, 4, 3, 7].
  const CpuTensor lhs = make(random_data(Shape{2, 1, 5, 3}, 7));
  const CpuTensor rhs = make(random_data(Shape{1, 4, 7, 5}, 8));
  EXPECT_EQ(CpuOps::matmul_transposed(lhs, rhs, true, true).shape(), Shape({2, 4, 3, 7}));
}

TEST(MatmulTransposedTest, EmptyInnerDimGivesZeros) {
  // k = 0: every element is an empty sum, 0 (not uninitialised memory), for every flag,
  // without and with broadcast batch dims ([2, 1] and [1, 3] -> [2, 3]).
  const std::vector<std::int64_t> no_batch, lhs_batch{2, 1}, rhs_batch{1, 3}, out_batch{2, 3};
  for (bool batched : kFlags) {
    const auto& lb = batched ? lhs_batch : no_batch;
    const auto& rb = batched ? rhs_batch : no_batch;
    const Shape out = with_matrix(batched ? out_batch : no_batch, 7, 33);
    const TensorData zeros(out, std::vector<float>(static_cast<std::size_t>(out.num_elements())));
    for (bool tl : kFlags) {
      for (bool tr : kFlags) {
        const Shape ls = tl ? with_matrix(lb, 0, 7) : with_matrix(lb, 7, 0);
        const Shape rs = tr ? with_matrix(rb, 33, 0) : with_matrix(rb, 0, 33);
        SCOPED_TRACE(describe(ls, rs, tl, tr));
        const CpuTensor lhs = make(TensorData(ls, std::vector<float>{}));
        const CpuTensor rhs = make(TensorData(rs, std::vector<float>{}));
        CpuOps::into_data(CpuOps::matmul_transposed(lhs, rhs, tl, tr))
            .assert_approx_eq(zeros, Tolerance::exact());
      }
    }
  }
}

TEST(MatmulTransposedTest, EmptyOuterDims) {
  // m = 0 or n = 0: an empty result of the right shape.
  for (bool tl : kFlags) {
    for (bool tr : kFlags) {
      const CpuTensor lhs = make(TensorData(tl ? Shape{5, 0} : Shape{0, 5}, std::vector<float>{}));
      const CpuTensor rhs = make(random_data(tr ? Shape{4, 5} : Shape{5, 4}, 3));
      EXPECT_EQ(CpuOps::matmul_transposed(lhs, rhs, tl, tr).shape(), Shape({0, 4}));
      const CpuTensor lhs2 = make(random_data(tl ? Shape{5, 4} : Shape{4, 5}, 4));
      const CpuTensor rhs2 = make(TensorData(tr ? Shape{0, 5} : Shape{5, 0}, std::vector<float>{}));
      EXPECT_EQ(CpuOps::matmul_transposed(lhs2, rhs2, tl, tr).shape(), Shape({4, 0}));
    }
  }
}

TEST(MatmulTransposedTest, InnerDimsMismatchNamesTheTransposedOperands) {
  // op(lhs) is [m, k_lhs], op(rhs) is [k_rhs, n]; k_lhs = 3, k_rhs = 4 in every case.
  const auto zeros = [](Shape s) { return CpuOps::full(s, 0.0, DType::F32, CpuDevice{}); };
  EXPECT_THAT(
      [&] {
        CpuOps::matmul_transposed(zeros({2, 3}), zeros({4, 5}), false, false);
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("matmul: inner dimensions differ: lhs [2, 3] vs rhs [4, 5] (3 != 4)")));
  EXPECT_THAT(
      [&] {
        CpuOps::matmul_transposed(zeros({3, 2}), zeros({4, 5}), true, false);
      },
      ThrowsMessage<ShapeError>(HasSubstr(
          "matmul: inner dimensions differ: lhs [3, 2] (transposed) vs rhs [4, 5] (3 != 4)")));
  EXPECT_THAT(
      [&] {
        CpuOps::matmul_transposed(zeros({2, 3}), zeros({5, 4}), false, true);
      },
      ThrowsMessage<ShapeError>(HasSubstr(
          "matmul: inner dimensions differ: lhs [2, 3] vs rhs [5, 4] (transposed) (3 != 4)")));
  EXPECT_THAT(
      [&] {
        CpuOps::matmul_transposed(zeros({6, 3, 2}), zeros({6, 5, 4}), true, true);
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("matmul: inner dimensions differ: lhs [6, 3, 2] (transposed) vs rhs "
                    "[6, 5, 4] (transposed) (3 != 4)")));
}

TEST(MatmulTransposedTest, ShapesThatOnlyMatchWithoutTheFlagsAreRejected) {
  // [2, 3] x [3, 4] is a valid plain product; with a flag set the inner dims are 2 vs 3 or
  // 3 vs 4, so the flags are really read by the shape check.
  const auto zeros = [](Shape s) { return CpuOps::full(s, 0.0, DType::F32, CpuDevice{}); };
  const CpuTensor lhs = zeros({2, 3}), rhs = zeros({3, 4});
  EXPECT_THROW(CpuOps::matmul_transposed(lhs, rhs, true, false), ShapeError);
  EXPECT_THROW(CpuOps::matmul_transposed(lhs, rhs, false, true), ShapeError);
  EXPECT_EQ(CpuOps::matmul_transposed(lhs, rhs, false, false).shape(), Shape({2, 4}));
}

TEST(MatmulTransposedTest, BatchDimsThatDoNotBroadcast) {
  const auto zeros = [](Shape s) { return CpuOps::full(s, 0.0, DType::F32, CpuDevice{}); };
  EXPECT_THAT(
      [&] {
        CpuOps::matmul_transposed(zeros({2, 3, 4}), zeros({3, 3, 5}), true, false);
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("matmul: batch dims do not broadcast: lhs [2, 3, 4] vs rhs [3, 3, 5] (dim 0: "
                    "2 vs 3)")));
}

}  // namespace
}  // namespace kiln
