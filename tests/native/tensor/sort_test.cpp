// sort, sort_with_indices, argsort, topk through the public Tensor API. Expected values come
// from std::stable_sort over the flat data (a plain reference) or are written by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
using Dims3 = std::array<std::int64_t, 3>;

const std::vector<Dims3> kShapes = {{3, 5, 7}, {2, 70, 19}, {4, 3, 130}};
const std::vector<std::int64_t> kDims = {0, 1, 2, -1};

/// Small integers (as floats or ints) from a 32-bit LCG: many ties.
std::vector<float> tied(std::size_t count, std::uint32_t seed, int levels) {
  std::vector<float> v(count);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int>((seed >> 8) % static_cast<std::uint32_t>(levels)) - levels / 2);
  }
  return v;
}

std::size_t count(const Dims3& d) { return static_cast<std::size_t>(d[0] * d[1] * d[2]); }

/// Stable sort of every line along dim with std::stable_sort; nan last ascending, first
/// descending (PyTorch). Returns the sorted values and indices in the input's layout.
template <class T>
std::pair<std::vector<double>, std::vector<double>> reference_sort(const std::vector<T>& x,
                                                                  const Dims3& d,
                                                                  std::int64_t dim,
                                                                  bool descending) {
  const std::size_t p = static_cast<std::size_t>(dim < 0 ? dim + 3 : dim);
  std::vector<double> values(x.size()), indices(x.size());
  const auto at = [&](std::array<std::int64_t, 3> j) {
    return static_cast<std::size_t>((j[0] * d[1] + j[1]) * d[2] + j[2]);
  };
  Dims3 rd = d;
  rd[p] = 1;
  std::array<std::int64_t, 3> i{};
  for (i[0] = 0; i[0] < rd[0]; ++i[0]) {
    for (i[1] = 0; i[1] < rd[1]; ++i[1]) {
      for (i[2] = 0; i[2] < rd[2]; ++i[2]) {
        std::vector<std::int64_t> order(static_cast<std::size_t>(d[p]));
        std::iota(order.begin(), order.end(), 0);
        const auto value = [&](std::int64_t k) {
          auto j = i;
          j[p] = k;
          return static_cast<double>(x[at(j)]);
        };
        // nan compares as the largest value.
        const auto less = [&](std::int64_t a, std::int64_t b) {
          const double va = value(a), vb = value(b);
          if (std::isnan(vb)) return !std::isnan(va);
          return va < vb;
        };
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
          return descending ? less(b, a) : less(a, b);
        });
        for (std::size_t k = 0; k < order.size(); ++k) {
          auto j = i;
          j[p] = static_cast<std::int64_t>(k);
          values[at(j)] = value(order[k]);
          indices[at(j)] = static_cast<double>(order[k]);
        }
      }
    }
  }
  return {values, indices};
}

template <class Tn>
std::vector<double> values(const Tn& t) {
  const TensorData d = t.to_data();
  std::vector<double> out(static_cast<std::size_t>(d.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.value_as_double(i);
  return out;
}

/// Equal element-wise, nan matching nan.
void expect_same(const std::vector<double>& got, const std::vector<double>& expected,
                 const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expected[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else {
      EXPECT_EQ(got[i], expected[i]) << what << " at " << i;
    }
  }
}

}  // namespace

template <class B>
class SortTest : public ::testing::Test {};
TYPED_TEST_SUITE(SortTest, test::AllBackends);

TYPED_TEST(SortTest, SortWithIndicesMatchesStableReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    auto x = tied(count(d), 21, 7);
    x[3] = kNan;  // a nan in some line
    x[x.size() - 2] = kNan;
    const auto t = Tensor<TypeParam, 3>::from_data(TensorData(Shape(d), x), test::device<TypeParam>());
    for (auto dim : kDims) {
      for (bool descending : {false, true}) {
        const auto [v, i] = t.sort_with_indices(dim, descending);
        const auto [rv, ri] = reference_sort(x, d, dim, descending);
        const auto what = str_cat("shape ", Shape(d), " dim ", dim, " descending ", descending);
        EXPECT_EQ(v.shape(), Shape(d)) << what;
        EXPECT_EQ(i.shape(), Shape(d)) << what;
        expect_same(values(v), rv, "values " + what);
        expect_same(values(i), ri, "indices " + what);
      }
    }
  }
}

TYPED_TEST(SortTest, IntSortWithIndicesMatchesStableReferenceOnEveryDim) {
  for (const auto& d : kShapes) {
    const auto f = tied(count(d), 22, 5);
    const std::vector<std::int32_t> x(f.begin(), f.end());
    const auto t = Tensor<TypeParam, 3, Int>::from_data(TensorData(Shape(d), x), test::device<TypeParam>());
    for (auto dim : kDims) {
      for (bool descending : {false, true}) {
        const auto [v, i] = t.sort_with_indices(dim, descending);
        const auto [rv, ri] = reference_sort(x, d, dim, descending);
        const auto what = str_cat("shape ", Shape(d), " dim ", dim, " descending ", descending);
        expect_same(values(v), rv, "values " + what);
        expect_same(values(i), ri, "indices " + what);
      }
    }
  }
}

TYPED_TEST(SortTest, ArgsortKeepsTheOrderOfTiesInBothDirections) {
  const auto t = Tensor<TypeParam, 1>::from_data({3.f, 1.f, 3.f, 1.f, 2.f}, test::device<TypeParam>());
  t.argsort(0).to_data().assert_eq(TensorData::from<std::int32_t>({1, 3, 4, 0, 2}));
  t.argsort(0, true).to_data().assert_eq(TensorData::from<std::int32_t>({0, 2, 4, 1, 3}));
}

TYPED_TEST(SortTest, NegativeZeroAndZeroAreTies) {
  const auto t = Tensor<TypeParam, 1>::from_data({0.f, -0.f, -1.f, 0.f}, test::device<TypeParam>());
  t.argsort(0).to_data().assert_eq(TensorData::from<std::int32_t>({2, 0, 1, 3}));
}

TYPED_TEST(SortTest, NanSortsLastAscendingAndFirstDescending) {
  const auto t = Tensor<TypeParam, 1>::from_data({kNan, 1.f, kNan, 0.f, -1.f}, test::device<TypeParam>());
  const auto [up, up_index] = t.sort_with_indices(0);
  up.to_data().assert_eq(TensorData::from<float>({-1.f, 0.f, 1.f, kNan, kNan}));
  up_index.to_data().assert_eq(TensorData::from<std::int32_t>({4, 3, 1, 0, 2}));
  const auto [down, down_index] = t.sort_with_indices(0, true);
  down.to_data().assert_eq(TensorData::from<float>({kNan, kNan, 1.f, 0.f, -1.f}));
  down_index.to_data().assert_eq(TensorData::from<std::int32_t>({0, 2, 1, 3, 4}));
}

TYPED_TEST(SortTest, SortAndSortDescendingByHand) {
  const auto t = Tensor<TypeParam, 2>::from_data({{3.f, -1.f, 2.f}, {0.f, 5.f, 4.f}}, test::device<TypeParam>());
  t.sort(1).to_data().assert_eq(TensorData::from<float>({{-1.f, 2.f, 3.f}, {0.f, 4.f, 5.f}}));
  t.sort_descending(0).to_data().assert_eq(TensorData::from<float>({{3.f, 5.f, 4.f}, {0.f, -1.f, 2.f}}));
}

TYPED_TEST(SortTest, SortAlongASizeOneDimKeepsValuesWithIndexZero) {
  const auto t = Tensor<TypeParam, 2>::from_data({{3.f, -1.f, 2.f}}, test::device<TypeParam>());
  const auto [v, i] = t.sort_with_indices(0);
  v.to_data().assert_eq(t.to_data());
  i.to_data().assert_eq(TensorData::from<std::int32_t>({{0, 0, 0}}));
}

TYPED_TEST(SortTest, SortOfAnEmptyTensorIsEmpty) {
  const auto t = Tensor<TypeParam, 2>::zeros({3, 0}, test::device<TypeParam>());
  const auto [v, i] = t.sort_with_indices(1);
  EXPECT_EQ(v.shape(), Shape({3, 0}));
  EXPECT_EQ(i.shape(), Shape({3, 0}));
  EXPECT_EQ(t.sort(0).shape(), Shape({3, 0}));
}

TYPED_TEST(SortTest, TopkGivesTheLargestFirstWithIndices) {
  const auto t = Tensor<TypeParam, 2>::from_data({{1.f, 9.f, 3.f, 9.f, 5.f}, {0.f, -2.f, 7.f, 6.f, 8.f}},
                                                 test::device<TypeParam>());
  const auto [v, i] = t.topk_with_indices(3, 1);
  v.to_data().assert_eq(TensorData::from<float>({{9.f, 9.f, 5.f}, {8.f, 7.f, 6.f}}));
  i.to_data().assert_eq(TensorData::from<std::int32_t>({{1, 3, 4}, {4, 2, 3}}));
  t.topk(1, 0).to_data().assert_eq(TensorData::from<float>({{1.f, 9.f, 7.f, 9.f, 8.f}}));
}

TYPED_TEST(SortTest, TopkOfIntTensor) {
  const auto t = Tensor<TypeParam, 1, Int>::from_ints({4, -1, 7, 4}, test::device<TypeParam>());
  t.topk(2, 0).to_data().assert_eq(TensorData::from<std::int32_t>({7, 4}));
  t.topk_with_indices(3, 0).second.to_data().assert_eq(TensorData::from<std::int32_t>({2, 0, 3}));
}

TYPED_TEST(SortTest, BadDimThrowsIndexError) {
  const auto t = Tensor<TypeParam, 2>::zeros({2, 3}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.sort(2); },
              ThrowsMessage<IndexError>(HasSubstr("sort: dim 2 is out of range for a tensor of rank 2")));
  EXPECT_THAT([&] { t.argsort(-3); },
              ThrowsMessage<IndexError>(HasSubstr("sort: dim -3 is out of range for a tensor of rank 2")));
  EXPECT_THAT([&] { t.topk(1, 2); },
              ThrowsMessage<IndexError>(HasSubstr("topk: dim 2 is out of range for a tensor of rank 2")));
}

TYPED_TEST(SortTest, TopkWithKOutOfRangeThrowsIndexError) {
  const auto t = Tensor<TypeParam, 2>::zeros({2, 3}, test::device<TypeParam>());
  EXPECT_THAT([&] { t.topk(4, 1); },
              ThrowsMessage<IndexError>(HasSubstr("topk: k = 4 is out of range for dim 1 of size 3")));
  EXPECT_THAT([&] { t.topk(-1, 0); },
              ThrowsMessage<IndexError>(HasSubstr("topk: k = -1 is out of range for dim 0 of size 2")));
}

TEST(SortErrors, SortRejectsBoolWithDTypeError) {
  const auto b = CpuOps::full(Shape{2, 2}, 1.0, DType::Bool, CpuDevice{});
  EXPECT_THAT([&] { CpuOps::sort_with_indices(b, 0, false); },
              ThrowsMessage<DTypeError>(HasSubstr("sort: expected an f32 or i32 tensor, got bool")));
}
