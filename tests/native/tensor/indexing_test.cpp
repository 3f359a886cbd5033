// Indexing ops through the public Tensor API: select (index_select), select_assign
// (index_add), gather, scatter (scatter_add), one_hot. Expected values by hand or from a
// naive index loop written here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

/// 0, 1, 2, ... in `shape`, converted to `dtype`.
using test::iota;

using test::allocations;

}  // namespace

template <class B>
class IndexingTest : public ::testing::Test {
 protected:
  template <std::size_t D, class K = Float>
  static Tensor<B, D, K> make(const TensorData& data) {
    return Tensor<B, D, K>::from_data(data, test::device<B>());
  }
  template <std::size_t D, class K = Float>
  static Tensor<B, D, K> iota_tensor(const Shape& shape) {
    return make<D, K>(iota(shape, K::dtype));
  }
  static Tensor<B, 1, Int> ints(std::initializer_list<std::int32_t> values) {
    return Tensor<B, 1, Int>::from_data(
        TensorData(Shape({static_cast<std::int64_t>(values.size())}),
                   std::vector<std::int32_t>(values)),
        test::device<B>());
  }
};
TYPED_TEST_SUITE(IndexingTest, test::AllBackends);

// ------------------------------------------------------------------ select

TYPED_TEST(IndexingTest, SelectRowsAlongDimZero) {
  auto x = TestFixture::template iota_tensor<2>({3, 2});
  x.select(0, TestFixture::ints({2, 0, 2}))
      .to_data()
      .assert_eq(TensorData::from<float>({{4.f, 5.f}, {0.f, 1.f}, {4.f, 5.f}}));
}

TYPED_TEST(IndexingTest, SelectColumnsAlongLastDim) {
  auto x = TestFixture::template iota_tensor<2>({2, 4});
  x.select(-1, TestFixture::ints({3, 1}))
      .to_data()
      .assert_eq(TensorData::from<float>({{3.f, 1.f}, {7.f, 5.f}}));
}

TYPED_TEST(IndexingTest, SelectMiddleDimMatchesNaiveLoop) {
  const auto data = iota({2, 5, 3}, DType::I32);
  const std::vector<std::int32_t> idx{4, 0, 0, 2};
  std::vector<std::int32_t> expected;
  for (std::int32_t i = 0; i < 2; ++i) {
    for (const std::int32_t j : idx) {
      for (std::int32_t k = 0; k < 3; ++k) expected.push_back(i * 15 + j * 3 + k);
    }
  }
  TestFixture::template make<3, Int>(data)
      .select(1, TestFixture::ints({4, 0, 0, 2}))
      .to_data()
      .assert_eq(TensorData(Shape({2, 4, 3}), expected));
}

TYPED_TEST(IndexingTest, SelectNegativeIndicesCountFromTheEnd) {
  auto x = TestFixture::template iota_tensor<1>({4});
  x.select(0, TestFixture::ints({-1, -4, 1}))
      .to_data()
      .assert_eq(TensorData::from<float>({3.f, 0.f, 1.f}));
}

TYPED_TEST(IndexingTest, SelectNoIndicesGivesEmptyDim) {
  auto x = TestFixture::template iota_tensor<2>({3, 2});
  EXPECT_EQ(x.select(0, TestFixture::ints({})).shape(), Shape({0, 2}));
  auto e = TestFixture::template iota_tensor<2>({0, 2});
  EXPECT_EQ(e.select(1, TestFixture::ints({1, 1, 0})).shape(), Shape({0, 3}));
}

TYPED_TEST(IndexingTest, SelectBoolKind) {
  auto b = Tensor<TypeParam, 2, Bool>::from_bool({{true, false}, {false, false}},
                                                 test::device<TypeParam>());
  b.select(1, TestFixture::ints({1, 0}))
      .to_data()
      .assert_eq(TensorData::from<bool>({{false, true}, {false, false}}));
}

TYPED_TEST(IndexingTest, SelectIndexOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({3, 2});
  EXPECT_THAT(
      [&] {
        x.select(0, TestFixture::ints({0, 3}));
      },
      ThrowsMessage<IndexError>(
          HasSubstr("select: index 3 (position 1) is out of range for dim 0 of size 3")));
  EXPECT_THAT([&] { x.select(1, TestFixture::ints({-3})); },
              ThrowsMessage<IndexError>(HasSubstr("select: index -3 (position 0) is out of range "
                                                  "for dim 1 of size 2")));
}

TYPED_TEST(IndexingTest, SelectIntoEmptyDimThrows) {
  auto e = TestFixture::template iota_tensor<2>({2, 0});
  EXPECT_THAT([&] { e.select(1, TestFixture::ints({0})); },
              ThrowsMessage<IndexError>(HasSubstr("out of range for dim 1 of size 0")));
}

TYPED_TEST(IndexingTest, SelectDimOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({3, 2});
  EXPECT_THAT([&] { x.select(2, TestFixture::ints({0})); },
              ThrowsMessage<IndexError>(HasSubstr("select: dim 2 is out of range")));
}

TEST(CpuSelect, FloatIndicesThrow) {
  const auto x = CpuOps::full(Shape({3}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({1}), 0.0, DType::F32, {});
  EXPECT_THAT([&] { CpuOps::select(x, 0, idx); },
              ThrowsMessage<DTypeError>(HasSubstr("select: indices must have dtype i32, got f32")));
}

TEST(CpuSelect, RankTwoIndicesThrow) {
  const auto x = CpuOps::full(Shape({3}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({1, 1}), 0.0, DType::I32, {});
  EXPECT_THAT(
      [&] { CpuOps::select(x, 0, idx); },
      ThrowsMessage<RankError>(HasSubstr("select: indices must have rank 1, got shape [1, 1]")));
}

// ------------------------------------------------------------------ select_assign

TYPED_TEST(IndexingTest, SelectAssignAddsIntoRows) {
  auto x = TestFixture::template iota_tensor<2>({3, 2});
  auto v = Tensor<TypeParam, 2>::from_data({{10.f, 20.f}, {30.f, 40.f}}, test::device<TypeParam>());
  x.select_assign(0, TestFixture::ints({2, 0}), v)
      .to_data()
      .assert_eq(TensorData::from<float>({{30.f, 41.f}, {2.f, 3.f}, {14.f, 25.f}}));
}

TYPED_TEST(IndexingTest, SelectAssignAccumulatesRepeatedIndices) {
  auto x = Tensor<TypeParam, 2, Int>::zeros({2, 3}, test::device<TypeParam>());
  auto v =
      Tensor<TypeParam, 2, Int>::from_ints({{1, 2, 4}, {8, 16, 32}}, test::device<TypeParam>());
  // Columns 0, 2, 0 of v go to columns 1, 1, -1 (= 2) of x.
  x.select_assign(1, TestFixture::ints({1, 1, -1}), v)
      .to_data()
      .assert_eq(TensorData::from<std::int32_t>({{0, 3, 4}, {0, 24, 32}}));
}

TYPED_TEST(IndexingTest, SelectAssignLeavesTheOriginalUnchanged) {
  auto x = TestFixture::template iota_tensor<1>({3});
  auto v = Tensor<TypeParam, 1>::from_data({5.f}, test::device<TypeParam>());
  auto y = x.select_assign(0, TestFixture::ints({1}), v);
  x.to_data().assert_eq(iota({3}));
  y.to_data().assert_eq(TensorData::from<float>({0.f, 6.f, 2.f}));
}

TYPED_TEST(IndexingTest, SelectAssignNoIndicesKeepsValues) {
  auto x = TestFixture::template iota_tensor<2>({2, 2});
  auto v = TestFixture::template iota_tensor<2>({0, 2});
  x.select_assign(0, TestFixture::ints({}), v).to_data().assert_eq(iota({2, 2}));
}

TYPED_TEST(IndexingTest, SelectAssignValuesShapeMismatchThrows) {
  auto x = TestFixture::template iota_tensor<2>({4, 3});
  auto v = TestFixture::template iota_tensor<2>({2, 2});
  EXPECT_THAT(
      [&] {
        x.select_assign(0, TestFixture::ints({0, 1}), v);
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("select_assign: values have shape [2, 2], expected [2, 3]")));
}

TYPED_TEST(IndexingTest, SelectAssignIndexOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({4, 3});
  auto v = TestFixture::template iota_tensor<2>({4, 1});
  EXPECT_THAT([&] { x.select_assign(1, TestFixture::ints({3}), v); },
              ThrowsMessage<IndexError>(HasSubstr(
                  "select_assign: index 3 (position 0) is out of range for dim 1 of size 3")));
}

TEST(CpuSelectAssign, ValuesDTypeMismatchThrows) {
  const auto x = CpuOps::full(Shape({3}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({1}), 0.0, DType::I32, {});
  const auto v = CpuOps::full(Shape({1}), 1.0, DType::I32, {});
  EXPECT_THAT([&] { CpuOps::select_assign(x, 0, idx, v); },
              ThrowsMessage<DTypeError>(
                  HasSubstr("select_assign: values have dtype i32, the tensor has f32")));
}

TEST(CpuSelectAssign, RvalueReusesTheBuffer) {
  auto x = CpuOps::full(Shape({3}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({2}), 2.0, DType::I32, {});
  const auto v = CpuOps::full(Shape({2}), 0.5, DType::F32, {});
  const float* buffer = x.data<float>();
  const auto before = allocations();
  auto y = CpuOps::select_assign(std::move(x), 0, idx, v);
  EXPECT_EQ(allocations(), before);
  EXPECT_EQ(y.data<float>(), buffer);
  CpuOps::into_data(y).assert_eq(TensorData::from<float>({1.f, 1.f, 2.f}));
}

// ------------------------------------------------------------------ gather

TYPED_TEST(IndexingTest, GatherAlongDimZeroByHand) {
  // out[i][j] = x[idx[i][j]][j]
  auto x = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}},
                                           test::device<TypeParam>());
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{2, 0}, {1, 1}}, test::device<TypeParam>());
  x.gather(0, idx).to_data().assert_eq(TensorData::from<float>({{5.f, 2.f}, {3.f, 4.f}}));
}

TYPED_TEST(IndexingTest, GatherAlongLastDimByHand) {
  // out[i][j] = x[i][idx[i][j]]
  auto x = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}},
                                           test::device<TypeParam>());
  auto idx =
      Tensor<TypeParam, 2, Int>::from_ints({{2, 2, 0, 1}, {1, 0, 0, 0}}, test::device<TypeParam>());
  x.gather(1, idx).to_data().assert_eq(
      TensorData::from<float>({{3.f, 3.f, 1.f, 2.f}, {5.f, 4.f, 4.f, 4.f}}));
}

TYPED_TEST(IndexingTest, GatherRank3MatchesNaiveLoop) {
  const auto data = iota({3, 4, 5}, DType::I32);
  // Indices smaller than x outside dim 1 (PyTorch allows it): shape [2, 6, 3].
  std::vector<std::int32_t> idx(2 * 6 * 3);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::int32_t>((i * 7) % 4);
  std::vector<std::int32_t> expected(idx.size());
  for (std::int32_t a = 0; a < 2; ++a) {
    for (std::int32_t b = 0; b < 6; ++b) {
      for (std::int32_t c = 0; c < 3; ++c) {
        const auto p = static_cast<std::size_t>((a * 6 + b) * 3 + c);
        expected[p] = a * 20 + idx[p] * 5 + c;
      }
    }
  }
  auto x = TestFixture::template make<3, Int>(data);
  auto indices = TestFixture::template make<3, Int>(TensorData(Shape({2, 6, 3}), idx));
  x.gather(1, indices).to_data().assert_eq(TensorData(Shape({2, 6, 3}), expected));
}

TYPED_TEST(IndexingTest, GatherBoolAndEmpty) {
  auto b = Tensor<TypeParam, 1, Bool>::from_bool({true, false}, test::device<TypeParam>());
  auto idx = Tensor<TypeParam, 1, Int>::from_ints({1, 1, 0}, test::device<TypeParam>());
  b.gather(0, idx).to_data().assert_eq(TensorData::from<bool>({false, false, true}));
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto none =
      TestFixture::template make<2, Int>(TensorData(Shape({2, 0}), std::vector<std::int32_t>{}));
  EXPECT_EQ(x.gather(1, none).shape(), Shape({2, 0}));
}

TYPED_TEST(IndexingTest, GatherIndexOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{0, 3}}, test::device<TypeParam>());
  EXPECT_THAT([&] { x.gather(1, idx); },
              ThrowsMessage<IndexError>(HasSubstr(
                  "gather: index 3 (flat position 1 of indices) is out of range for dim 1 of "
                  "size 3")));
}

TYPED_TEST(IndexingTest, GatherNegativeIndexThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{-1}}, test::device<TypeParam>());
  EXPECT_THAT([&] { x.gather(1, idx); },
              ThrowsMessage<IndexError>(HasSubstr("gather: index -1 (flat position 0")));
}

TYPED_TEST(IndexingTest, GatherIndicesLargerOutsideDimThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto idx = TestFixture::template make<2, Int>(
      TensorData(Shape({3, 1}), std::vector<std::int32_t>{0, 0, 0}));
  EXPECT_THAT(
      [&] { x.gather(1, idx); },
      ThrowsMessage<ShapeError>(HasSubstr(
          "gather: indices shape [3, 1] is larger than tensor shape [2, 3] in dim 0 (3 > 2)")));
}

TEST(CpuGather, RankMismatchThrows) {
  const auto x = CpuOps::full(Shape({2, 3}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({2}), 0.0, DType::I32, {});
  EXPECT_THAT(
      [&] { CpuOps::gather(x, 0, idx); },
      ThrowsMessage<RankError>(HasSubstr("gather: indices must have the rank of the tensor")));
}

TEST(CpuGather, BoolIndicesThrow) {
  const auto x = CpuOps::full(Shape({2}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({2}), 0.0, DType::Bool, {});
  EXPECT_THAT(
      [&] { CpuOps::gather(x, 0, idx); },
      ThrowsMessage<DTypeError>(HasSubstr("gather: indices must have dtype i32, got bool")));
}

// ------------------------------------------------------------------ scatter

TYPED_TEST(IndexingTest, ScatterAlongDimZeroAccumulates) {
  // x[idx[i][j]][j] += v[i][j]
  auto x = Tensor<TypeParam, 2>::zeros({3, 2}, test::device<TypeParam>());
  auto idx =
      Tensor<TypeParam, 2, Int>::from_ints({{2, 0}, {2, 1}, {0, 0}}, test::device<TypeParam>());
  auto v = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}},
                                           test::device<TypeParam>());
  x.scatter(0, idx, v).to_data().assert_eq(
      TensorData::from<float>({{5.f, 8.f}, {0.f, 4.f}, {4.f, 0.f}}));
}

TYPED_TEST(IndexingTest, ScatterAlongLastDimAddsToExisting) {
  // x[i][idx[i][j]] += v[i][j]
  auto x = Tensor<TypeParam, 2, Int>::from_ints({{1, 1, 1}, {2, 2, 2}}, test::device<TypeParam>());
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{2, 2}, {0, 1}}, test::device<TypeParam>());
  auto v = Tensor<TypeParam, 2, Int>::from_ints({{10, 20}, {30, 40}}, test::device<TypeParam>());
  x.scatter(1, idx, v).to_data().assert_eq(
      TensorData::from<std::int32_t>({{1, 1, 31}, {32, 42, 2}}));
}

TYPED_TEST(IndexingTest, ScatterUsesTheIndexShapedPartOfValues) {
  // PyTorch: values may be larger than indices; only values[:2, :1] is used here.
  auto x = Tensor<TypeParam, 2>::zeros({2, 2}, test::device<TypeParam>());
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{1}, {0}}, test::device<TypeParam>());
  auto v = Tensor<TypeParam, 2>::from_data({{1.f, 100.f, 100.f}, {2.f, 100.f, 100.f}},
                                           test::device<TypeParam>());
  x.scatter(1, idx, v).to_data().assert_eq(TensorData::from<float>({{0.f, 1.f}, {2.f, 0.f}}));
}

TYPED_TEST(IndexingTest, ScatterRank3MatchesNaiveLoop) {
  const Shape xs({2, 3, 4});
  const Shape is({2, 5, 4});
  std::vector<std::int32_t> idx(static_cast<std::size_t>(is.num_elements()));
  std::vector<float> vals(idx.size());
  for (std::size_t i = 0; i < idx.size(); ++i) {
    idx[i] = static_cast<std::int32_t>((i * 5 + 1) % 3);
    vals[i] = static_cast<float>(i % 7) - 3.f;
  }
  std::vector<float> expected(static_cast<std::size_t>(xs.num_elements()), 0.f);
  for (std::size_t a = 0; a < 2; ++a) {
    for (std::size_t b = 0; b < 5; ++b) {
      for (std::size_t c = 0; c < 4; ++c) {
        const std::size_t p = (a * 5 + b) * 4 + c;
        expected[(a * 3 + static_cast<std::size_t>(idx[p])) * 4 + c] += vals[p];
      }
    }
  }
  auto x = Tensor<TypeParam, 3>::zeros(xs, test::device<TypeParam>());
  auto indices = TestFixture::template make<3, Int>(TensorData(is, idx));
  auto values = TestFixture::template make<3>(TensorData(is, vals));
  x.scatter(1, indices, values).to_data().assert_eq(TensorData(xs, expected));
}

TYPED_TEST(IndexingTest, ScatterLeavesTheOriginalUnchanged) {
  auto x = TestFixture::template iota_tensor<1>({3});
  auto idx = Tensor<TypeParam, 1, Int>::from_ints({0}, test::device<TypeParam>());
  auto v = Tensor<TypeParam, 1>::from_data({10.f}, test::device<TypeParam>());
  auto y = x.scatter(0, idx, v);
  x.to_data().assert_eq(iota({3}));
  y.to_data().assert_eq(TensorData::from<float>({10.f, 1.f, 2.f}));
}

TYPED_TEST(IndexingTest, ScatterIndexOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{2, 0}}, test::device<TypeParam>());
  auto v = TestFixture::template iota_tensor<2>({1, 2});
  EXPECT_THAT([&] { x.scatter(0, idx, v); },
              ThrowsMessage<IndexError>(HasSubstr(
                  "scatter: index 2 (flat position 0 of indices) is out of range for dim 0 of "
                  "size 2")));
}

TYPED_TEST(IndexingTest, ScatterValuesSmallerThanIndicesThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto idx = Tensor<TypeParam, 2, Int>::from_ints({{0, 0}}, test::device<TypeParam>());
  auto v = TestFixture::template iota_tensor<2>({1, 1});
  EXPECT_THAT([&] { x.scatter(0, idx, v); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "scatter: indices shape [1, 2] is larger than values shape [1, 1] in dim 1")));
}

TYPED_TEST(IndexingTest, ScatterIndicesLargerThanTensorOutsideDimThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto idx = TestFixture::template make<2, Int>(
      TensorData(Shape({1, 4}), std::vector<std::int32_t>{0, 0, 0, 0}));
  auto v = TestFixture::template iota_tensor<2>({1, 4});
  EXPECT_THAT([&] { x.scatter(0, idx, v); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "scatter: indices shape [1, 4] is larger than tensor shape [2, 3] in dim 1")));
}

TEST(CpuScatter, RvalueReusesTheBuffer) {
  auto x = CpuOps::full(Shape({2}), 1.0, DType::I32, {});
  const auto idx = CpuOps::full(Shape({2}), 1.0, DType::I32, {});
  const auto v = CpuOps::full(Shape({2}), 3.0, DType::I32, {});
  const auto before = allocations();
  auto y = CpuOps::scatter(std::move(x), 0, idx, v);
  EXPECT_EQ(allocations(), before);
  CpuOps::into_data(y).assert_eq(TensorData::from<std::int32_t>({1, 7}));
}

TEST(CpuScatter, ValuesDTypeMismatchThrows) {
  const auto x = CpuOps::full(Shape({2}), 1.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({2}), 1.0, DType::I32, {});
  const auto v = CpuOps::full(Shape({2}), 3.0, DType::I32, {});
  EXPECT_THAT(
      [&] { CpuOps::scatter(x, 0, idx, v); },
      ThrowsMessage<DTypeError>(HasSubstr("scatter: values have dtype i32, the tensor has f32")));
}

// ------------------------------------------------------------------ one_hot

TYPED_TEST(IndexingTest, OneHotOfInts) {
  auto x = Tensor<TypeParam, 1, Int>::from_ints({0, 2, 1, 2}, test::device<TypeParam>());
  x.one_hot(3).to_data().assert_eq(
      TensorData::from<std::int32_t>({{1, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 0, 1}}));
}

TYPED_TEST(IndexingTest, OneHotOfFloatsKeepsTheKind) {
  auto x = Tensor<TypeParam, 2>::from_data({{1.f}, {0.f}}, test::device<TypeParam>());
  auto y = x.one_hot(2);
  EXPECT_EQ(y.shape(), Shape({2, 1, 2}));
  y.to_data().assert_eq(TensorData::from<float>({{{0.f, 1.f}}, {{1.f, 0.f}}}));
}

TYPED_TEST(IndexingTest, OneHotOfEmptyAndSingleClass) {
  auto e = TestFixture::template make<1, Int>(TensorData(Shape({0}), std::vector<std::int32_t>{}));
  EXPECT_EQ(e.one_hot(4).shape(), Shape({0, 4}));
  auto z = Tensor<TypeParam, 1, Int>::from_ints({0, 0}, test::device<TypeParam>());
  z.one_hot(1).to_data().assert_eq(TensorData::from_nested<std::int32_t, 2>({{1}, {1}}));
}

TYPED_TEST(IndexingTest, OneHotValueOutOfRangeThrows) {
  auto x = Tensor<TypeParam, 1, Int>::from_ints({0, 3}, test::device<TypeParam>());
  EXPECT_THAT([&] { x.one_hot(3); },
              ThrowsMessage<IndexError>(HasSubstr(
                  "one_hot: value 3 at flat position 1 is out of range for num_classes = 3")));
  auto n = Tensor<TypeParam, 1>::from_data({-1.f}, test::device<TypeParam>());
  EXPECT_THAT([&] { n.one_hot(3); },
              ThrowsMessage<IndexError>(HasSubstr("one_hot: value -1 at flat position 0")));
}

TYPED_TEST(IndexingTest, OneHotOfFractionThrows) {
  auto x = Tensor<TypeParam, 1>::from_data({0.5f}, test::device<TypeParam>());
  EXPECT_THAT([&] { x.one_hot(3); },
              ThrowsMessage<ValueError>(HasSubstr("one_hot: value 0.5 at flat position 0 is not a "
                                                  "whole number")));
}

TYPED_TEST(IndexingTest, OneHotOfZeroClassesThrows) {
  auto x = Tensor<TypeParam, 1, Int>::from_ints({0}, test::device<TypeParam>());
  EXPECT_THAT([&] { x.one_hot(0); },
              ThrowsMessage<ValueError>(HasSubstr("one_hot: num_classes must be >= 1, got 0")));
}

TEST(CpuOneHot, PastMaxRankThrows) {
  const auto x = CpuOps::full(Shape({1, 1, 1, 1, 1, 1, 1, 1}), 0.0, DType::I32, {});
  EXPECT_THAT(
      [&] { CpuOps::one_hot(x, 2); },
      ThrowsMessage<LimitError>(HasSubstr("one_hot: shape [1, 1, 1, 1, 1, 1, 1, 1] plus the "
                                          "class dim exceeds the maximum rank 8")));
}

TEST(CpuOneHot, NonFiniteValueThrows) {
  const auto x = CpuOps::full(Shape({1}), std::numeric_limits<double>::quiet_NaN(), DType::F32, {});
  EXPECT_THAT([&] { CpuOps::one_hot(x, 2); },
              ThrowsMessage<ValueError>(HasSubstr("one_hot: value nan at flat position 0")));
}

TEST(CpuOneHot, BoolInputKeepsBoolOutput) {
  const auto x = CpuOps::from_data(TensorData::from<bool>({true, false}), DType::Bool, {});
  CpuOps::into_data(CpuOps::one_hot(x, 2))
      .assert_eq(TensorData::from<bool>({{false, true}, {true, false}}));
}

TEST(CpuScatter, RankMismatchThrows) {
  const auto x = CpuOps::full(Shape({2, 2}), 0.0, DType::F32, {});
  const auto idx = CpuOps::full(Shape({2}), 0.0, DType::I32, {});
  const auto v = CpuOps::full(Shape({2, 2}), 1.0, DType::F32, {});
  EXPECT_THAT([&] { CpuOps::scatter(x, 0, idx, v); },
              ThrowsMessage<RankError>(HasSubstr(
                  "scatter: indices and values must have the rank of the tensor: tensor [2, 2], "
                  "indices [2], values [2, 2]")));
}

TEST(CpuScatter, IntSumsWrapAroundLikePyTorch) {
  auto x = CpuOps::full(Shape({1}), 2147483647.0, DType::I32, {});
  const auto idx = CpuOps::full(Shape({1}), 0.0, DType::I32, {});
  const auto v = CpuOps::full(Shape({1}), 1.0, DType::I32, {});
  CpuOps::into_data(CpuOps::scatter(x, 0, idx, v))
      .assert_eq(TensorData::from<std::int32_t>({-2147483647 - 1}));
}
