// Shape and joining ops through the public Tensor API: reshape, flatten, (un)squeeze,
// swap_dims/transpose/permute, expand, repeat(_dim), flip, narrow, chunk, split,
// split_with_sizes, cat, stack, slice, slice_assign. Expected values come by hand, from
// the PyTorch cases (category shape_ops) or from a naive index loop written here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"
#include "support/cases.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

/// 0, 1, 2, ... in `shape`, converted to `dtype` (Bool: i % 2 != 0, i.e. a 0/1 pattern
/// that still tells positions apart by parity only, so Bool tests use `pattern`).
using test::iota;

/// A Bool pattern with no period along any small dim: true where (i * 7 + i / 3) % 5 < 2.
TensorData pattern(const Shape& shape) {
  std::vector<bool> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i * 7 + i / 3) % 5 < 2;
  return TensorData(shape, std::move(v));
}

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& s) {
  std::vector<std::int64_t> idx(s.rank());
  for (std::size_t d = s.rank(); d-- > 0;) {
    idx[d] = flat % s[d];
    flat /= s[d];
  }
  return idx;
}

std::int64_t ravel(const std::vector<std::int64_t>& idx, const Shape& s) {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < s.rank(); ++d) flat = flat * s[d] + idx[d];
  return flat;
}

/// Builds a tensor of `shape` and x's dtype whose element at multi-index `o` is
/// x[source(o)] (every naive reference below is one of these index maps).
template <class Source>
TensorData naive_map(const TensorData& x, const Shape& shape, Source source) {
  std::vector<float> out(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto o = unravel(static_cast<std::int64_t>(i), shape);
    out[i] =
        static_cast<float>(x.value_as_double(static_cast<std::size_t>(ravel(source(o), x.shape))));
  }
  return TensorData(shape, std::move(out)).convert(x.dtype);
}

TensorData naive_permute(const TensorData& x, const std::vector<std::int64_t>& axes) {
  std::vector<std::int64_t> dims;
  for (auto a : axes) dims.push_back(x.shape[static_cast<std::size_t>(a)]);
  return naive_map(x, Shape(dims), [&](const std::vector<std::int64_t>& o) {
    std::vector<std::int64_t> src(o.size());
    for (std::size_t i = 0; i < o.size(); ++i) src[static_cast<std::size_t>(axes[i])] = o[i];
    return src;
  });
}

/// Python-style start:end:step for a positive step, Burn's walk from the last element of
/// [start, end) for a negative one (all indices already in range).
std::vector<std::int64_t> naive_range(std::int64_t start, std::int64_t end, std::int64_t step) {
  std::vector<std::int64_t> out;
  if (step > 0) {
    for (std::int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    for (std::int64_t i = end - 1; i >= start; i += step) out.push_back(i);
  }
  return out;
}

using test::allocations;

}  // namespace

template <class B>
class ShapeTest : public ::testing::Test {
 protected:
  template <std::size_t D, class K = Float>
  static Tensor<B, D, K> make(const TensorData& data) {
    return Tensor<B, D, K>::from_data(data, test::device<B>());
  }
  template <std::size_t D, class K = Float>
  static Tensor<B, D, K> iota_tensor(const Shape& shape) {
    return make<D, K>(iota(shape, K::dtype));
  }
};
TYPED_TEST_SUITE(ShapeTest, test::AllBackends);

// ------------------------------------------------------------------ reshape

TYPED_TEST(ShapeTest, ReshapeKeepsRowMajorOrder) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  auto y = x.template reshape<2>({3, 2});  // a braced list picks the array overload
  y.to_data().assert_eq(TensorData::from<float>({{0.f, 1.f}, {2.f, 3.f}, {4.f, 5.f}}));
}

TYPED_TEST(ShapeTest, ReshapeInferDimMatchesPyTorch) {
  const auto c = test::load_case("reshape_infer_dim");
  auto x = TestFixture::template make<3>(c.input("x"));
  x.template reshape<2>(std::array<std::int64_t, 2>{-1, 6})
      .to_data()
      .assert_approx_eq(c.expected("x_r"), c.tolerance());
  auto e = TestFixture::template make<2>(c.input("e"));
  auto e_r = e.template reshape<2>(std::array<std::int64_t, 2>{3, -1});
  EXPECT_EQ(e_r.shape(), Shape({3, 0}));
  e_r.to_data().assert_approx_eq(c.expected("e_r"), c.tolerance());
}

TYPED_TEST(ShapeTest, ReshapeIntAndBoolKinds) {
  auto i = TestFixture::template iota_tensor<1, Int>({6});
  i.template reshape<3>(std::array<std::int64_t, 3>{3, 1, 2})
      .to_data()
      .assert_eq(TensorData::from<std::int32_t>({{{0, 1}}, {{2, 3}}, {{4, 5}}}));
  auto b = Tensor<TypeParam, 2, Bool>::from_bool({{true, false, false}, {false, true, true}});
  b.template reshape<1>(std::array<std::int64_t, 1>{-1})
      .to_data()
      .assert_eq(TensorData::from<bool>({true, false, false, false, true, true}));
}

TYPED_TEST(ShapeTest, ReshapeOfLvalueAllocatesNothing) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  const auto before = allocations();
  auto y = x.template reshape<1>(std::array<std::int64_t, 1>{6});
  EXPECT_EQ(allocations(), before);
  y.to_data().assert_eq(TensorData::from<float>({0.f, 1.f, 2.f, 3.f, 4.f, 5.f}));
  x.to_data().assert_eq(iota({2, 3}));
}

TYPED_TEST(ShapeTest, ReshapeOfRvalueSharesTheBuffer) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  const auto before = allocations();
  auto y = std::move(x).template reshape<2>({3, 2});
  EXPECT_EQ(allocations(), before);
  y.to_data().assert_eq(iota({3, 2}));
}

TYPED_TEST(ShapeTest, ReshapeCountMismatchWithInferredDimThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(
      [&] {
        x.template reshape<2>(std::array<std::int64_t, 2>{4, -1});
      },
      ThrowsMessage<ShapeError>(HasSubstr(
          "reshape: cannot view [2, 3] (6 elements) as [4, -1]: 6 is not divisible by 4")));
}

TYPED_TEST(ShapeTest, ReshapeCountMismatchThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(
      [&] {
        x.template reshape<2>(std::array<std::int64_t, 2>{4, 2});
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("reshape: cannot view [2, 3] (6 elements) as [4, 2] (8 elements)")));
}

TYPED_TEST(ShapeTest, ReshapeTwoInferredDimsThrow) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(
      [&] {
        x.template reshape<3>(std::array<std::int64_t, 3>{-1, 3, -1});
      },
      ThrowsMessage<ShapeError>(HasSubstr("only one dim may be -1")));
}

TYPED_TEST(ShapeTest, ReshapeNegativeDimThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(
      [&] {
        x.template reshape<2>(std::array<std::int64_t, 2>{-2, -3});
      },
      ThrowsMessage<ValueError>(HasSubstr("reshape: cannot view [2, 3] as [-2, -3]: dim 0 is -2")));
}

TYPED_TEST(ShapeTest, ReshapeInferringBesideZeroThrows) {
  auto x = TestFixture::template iota_tensor<2>({0, 3});
  EXPECT_THAT(
      [&] {
        x.template reshape<2>(std::array<std::int64_t, 2>{0, -1});
      },
      ThrowsMessage<ShapeError>(HasSubstr("the -1 is ambiguous")));
}

TYPED_TEST(ShapeTest, ReshapeByShapeChecksRank) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_EQ(x.template reshape<3>(Shape({1, 6, 1})).shape(), Shape({1, 6, 1}));
  EXPECT_THAT([&] { x.template reshape<2>(Shape({6})); },
              ThrowsMessage<RankError>(HasSubstr("reshape: expected a tensor of rank 2")));
}

// ------------------------------------------------------------------ flatten, (un)squeeze

TYPED_TEST(ShapeTest, FlattenMergesTheInnerDims) {
  auto x = TestFixture::template iota_tensor<3>({2, 3, 4});
  auto y = x.template flatten<2>(1, 2);
  EXPECT_EQ(y.shape(), Shape({2, 12}));
  y.to_data().assert_eq(iota({2, 12}));
  EXPECT_EQ(x.template flatten<1>(0, -1).shape(), Shape({24}));
  EXPECT_EQ(x.template flatten<2>(0, 1).shape(), Shape({6, 4}));
  EXPECT_EQ(x.template flatten<3>(1, 1).shape(), Shape({2, 3, 4}));
}

TYPED_TEST(ShapeTest, FlattenWithStartAfterEndThrows) {
  auto x = TestFixture::template iota_tensor<3>({2, 3, 4});
  EXPECT_THAT([&] { x.template flatten<2>(2, 1); },
              ThrowsMessage<IndexError>(HasSubstr("flatten: start dim 2 is after end dim 1")));
}

TYPED_TEST(ShapeTest, FlattenToWrongRankThrows) {
  auto x = TestFixture::template iota_tensor<3>({2, 3, 4});
  EXPECT_THAT([&] { x.template flatten<1>(1, 2); },
              ThrowsMessage<RankError>(HasSubstr("gives rank 2, not the requested 1")));
}

TYPED_TEST(ShapeTest, UnsqueezeDimInsertsSizeOne) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_EQ(x.template unsqueeze_dim<3>(0).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(x.template unsqueeze_dim<3>(1).shape(), Shape({2, 1, 3}));
  EXPECT_EQ(x.template unsqueeze_dim<3>(-1).shape(), Shape({2, 3, 1}));
  x.template unsqueeze_dim<3>(1).to_data().assert_eq(iota({2, 1, 3}));
  EXPECT_EQ(x.template unsqueeze<4>().shape(), Shape({1, 1, 2, 3}));
}

TYPED_TEST(ShapeTest, UnsqueezeDimOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT([&] { x.template unsqueeze_dim<3>(3); },
              ThrowsMessage<IndexError>(HasSubstr("unsqueeze_dim: dim 3 is out of range")));
}

TYPED_TEST(ShapeTest, SqueezeDimRemovesSizeOne) {
  auto x = TestFixture::template iota_tensor<3>({2, 1, 3});
  auto y = x.template squeeze_dim<2>(1);
  EXPECT_EQ(y.shape(), Shape({2, 3}));
  y.to_data().assert_eq(iota({2, 3}));
  EXPECT_EQ(x.template squeeze<2>(-2).shape(), Shape({2, 3}));
}

TYPED_TEST(ShapeTest, SqueezeDimOfNonOneThrows) {
  auto x = TestFixture::template iota_tensor<3>({2, 1, 3});
  EXPECT_THAT([&] { x.template squeeze_dim<2>(2); },
              ThrowsMessage<ShapeError>(HasSubstr("squeeze_dim: dim 2 has size 3, expected 1")));
}

// ------------------------------------------------------------------ transpose, permute

TYPED_TEST(ShapeTest, TransposeByHand) {
  auto x = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}},
                                           test::device<TypeParam>());
  x.transpose().to_data().assert_eq(TensorData::from<float>({{1.f, 4.f}, {2.f, 5.f}, {3.f, 6.f}}));
  x.swap_dims(0, 1).to_data().assert_eq(x.transpose().to_data());
  x.swap_dims(-1, -1).to_data().assert_eq(x.to_data());
}

TYPED_TEST(ShapeTest, TransposeSwapsTheLastTwoDimsOfEachBatch) {
  auto x = TestFixture::template iota_tensor<3>({2, 2, 3});
  x.transpose().to_data().assert_eq(TensorData::from<float>(
      {{{0.f, 3.f}, {1.f, 4.f}, {2.f, 5.f}}, {{6.f, 9.f}, {7.f, 10.f}, {8.f, 11.f}}}));
}

TYPED_TEST(ShapeTest, TransposeOfLargeMatricesMatchesNaiveLoop) {
  // Sizes around the 4x4 register blocks and 32x32 tiles, with ragged edges.
  for (const auto& [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {1, 7}, {7, 1}, {4, 4}, {5, 9}, {32, 32}, {33, 65}, {67, 45}, {128, 3}}) {
    const auto data = iota({m, n});
    TestFixture::template make<2>(data).transpose().to_data().assert_eq(
        naive_permute(data, {1, 0}));
  }
}

TYPED_TEST(ShapeTest, PermuteEveryAxisOrderOfRank4MatchesNaiveLoop) {
  const auto data = iota({2, 3, 4, 5});
  auto x = TestFixture::template make<4>(data);
  std::array<std::int64_t, 4> axes{0, 1, 2, 3};
  int count = 0;
  do {
    SCOPED_TRACE(::testing::PrintToString(axes));
    x.permute(axes).to_data().assert_eq(
        naive_permute(data, std::vector<std::int64_t>(axes.begin(), axes.end())));
    ++count;
  } while (std::next_permutation(axes.begin(), axes.end()));
  EXPECT_EQ(count, 24);
}

TYPED_TEST(ShapeTest, PermuteNchwToNhwcMatchesNaiveLoop) {
  const auto data = iota({2, 3, 17, 19});
  TestFixture::template make<4>(data)
      .permute({0, 2, 3, 1})
      .to_data()
      .assert_eq(naive_permute(data, {0, 2, 3, 1}));
  const auto back = iota({2, 17, 19, 3});
  TestFixture::template make<4>(back)
      .permute({0, 3, 1, 2})
      .to_data()
      .assert_eq(naive_permute(back, {0, 3, 1, 2}));
}

TYPED_TEST(ShapeTest, PermuteAcceptsNegativeAxes) {
  const auto data = iota({2, 3, 4});
  TestFixture::template make<3>(data)
      .permute({-1, 0, -2})
      .to_data()
      .assert_eq(naive_permute(data, {2, 0, 1}));
}

TYPED_TEST(ShapeTest, PermuteIntKind) {
  const auto data = iota({3, 37, 70}, DType::I32);
  TestFixture::template make<3, Int>(data).permute({0, 2, 1}).to_data().assert_eq(
      naive_permute(data, {0, 2, 1}));
}

TYPED_TEST(ShapeTest, PermuteBoolKind) {
  // 40 x 35 reaches the 16 x 16 byte blocks and their edges.
  for (const Shape& s : {Shape({40, 35}), Shape({3, 5})}) {
    const auto data = pattern(s);
    TestFixture::template make<2, Bool>(data).transpose().to_data().assert_eq(
        naive_permute(data, {1, 0}));
  }
}

TYPED_TEST(ShapeTest, PermuteWithSizeOneAndEmptyDims) {
  auto row = TestFixture::template iota_tensor<2>({1, 4});
  row.transpose().to_data().assert_eq(
      TensorData::from_nested<float, 2>({{0.f}, {1.f}, {2.f}, {3.f}}));
  const auto data = iota({3, 1, 2, 1});
  TestFixture::template make<4>(data)
      .permute({3, 2, 1, 0})
      .to_data()
      .assert_eq(naive_permute(data, {3, 2, 1, 0}));
  auto empty = TestFixture::template iota_tensor<2>({0, 3});
  auto t = empty.transpose();
  EXPECT_EQ(t.shape(), Shape({3, 0}));
  EXPECT_EQ(t.num_elements(), 0);
}

TYPED_TEST(ShapeTest, PermuteWithRepeatedAxisThrows) {
  auto x = TestFixture::template iota_tensor<3>({2, 3, 4});
  EXPECT_THAT(
      [&] {
        x.permute({0, 1, -2});
      },
      ThrowsMessage<IndexError>(HasSubstr("permute: dim -2 appears twice in the axes")));
}

TYPED_TEST(ShapeTest, PermuteWithAxisOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<3>({2, 3, 4});
  EXPECT_THAT(
      [&] {
        x.permute({0, 1, 3});
      },
      ThrowsMessage<IndexError>(HasSubstr("permute: dim 3 is out of range")));
}

TYPED_TEST(ShapeTest, SwapDimsOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT([&] { x.swap_dims(0, 2); },
              ThrowsMessage<IndexError>(HasSubstr("swap_dims: dim 2 is out of range")));
}

// ------------------------------------------------------------------ expand

TYPED_TEST(ShapeTest, ExpandStretchesSizeOneDims) {
  auto x = Tensor<TypeParam, 2>::from_data({{1.f}, {2.f}, {3.f}}, test::device<TypeParam>());
  x.template expand<2>({3, 4}).to_data().assert_eq(
      TensorData::from<float>({{1.f, 1.f, 1.f, 1.f}, {2.f, 2.f, 2.f, 2.f}, {3.f, 3.f, 3.f, 3.f}}));
}

TYPED_TEST(ShapeTest, ExpandAddsLeadingDimsAndKeepsMinusOne) {
  auto x = Tensor<TypeParam, 2>::from_data({{1.f, 2.f, 3.f}}, test::device<TypeParam>());
  x.template expand<3>({2, -1, 3})
      .to_data()
      .assert_eq(TensorData::from<float>({{{1.f, 2.f, 3.f}}, {{1.f, 2.f, 3.f}}}));
  x.template expand<3>({2, 2, -1})
      .to_data()
      .assert_eq(TensorData::from<float>(
          {{{1.f, 2.f, 3.f}, {1.f, 2.f, 3.f}}, {{1.f, 2.f, 3.f}, {1.f, 2.f, 3.f}}}));
}

TYPED_TEST(ShapeTest, ExpandMiddleDimMatchesNaiveLoop) {
  const auto data = iota({2, 1, 3});
  TestFixture::template make<3>(data)
      .template expand<4>({2, 2, 4, 3})
      .to_data()
      .assert_eq(naive_map(data, Shape({2, 2, 4, 3}), [](const std::vector<std::int64_t>& o) {
        return std::vector<std::int64_t>{o[1], 0, o[3]};
      }));
}

TYPED_TEST(ShapeTest, ExpandToSameShapeKeepsValues) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  x.template expand<2>({2, 3}).to_data().assert_eq(iota({2, 3}));
  x.template expand<2>({-1, -1}).to_data().assert_eq(iota({2, 3}));
}

TYPED_TEST(ShapeTest, ExpandSizeOneToZero) {
  auto x = TestFixture::template iota_tensor<2>({1, 3});
  auto y = x.template expand<2>({0, 3});
  EXPECT_EQ(y.shape(), Shape({0, 3}));
  EXPECT_EQ(y.num_elements(), 0);
}

TYPED_TEST(ShapeTest, ExpandIntAndBoolKinds) {
  auto i = Tensor<TypeParam, 1, Int>::from_ints({7, 8}, test::device<TypeParam>());
  i.template expand<2>({2, 2}).to_data().assert_eq(
      TensorData::from<std::int32_t>({{7, 8}, {7, 8}}));
  auto b = Tensor<TypeParam, 2, Bool>::from_bool({{true}, {false}}, test::device<TypeParam>());
  b.template expand<2>({2, 3}).to_data().assert_eq(
      TensorData::from<bool>({{true, true, true}, {false, false, false}}));
}

TYPED_TEST(ShapeTest, ExpandChangingNonOneDimThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(
      [&] {
        x.template expand<2>({2, 4});
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("expand: cannot expand [2, 3] to [2, 4]: dim 1 has size 3 and only size-1 "
                    "dims can grow (3 != 4)")));
}

TYPED_TEST(ShapeTest, ExpandNewDimOfMinusOneThrows) {
  auto x = TestFixture::template iota_tensor<1>({3});
  EXPECT_THAT(
      [&] {
        x.template expand<2>({-1, 3});
      },
      ThrowsMessage<ValueError>(HasSubstr("new dim 0 is -1")));
}

// ------------------------------------------------------------------ repeat

TYPED_TEST(ShapeTest, RepeatDimZeroStacksCopies) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  x.repeat_dim(0, 2).to_data().assert_eq(TensorData::from<float>(
      {{0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}, {0.f, 1.f, 2.f}, {3.f, 4.f, 5.f}}));
}

TYPED_TEST(ShapeTest, RepeatDimInnerRepeatsEachRow) {
  auto x = TestFixture::template iota_tensor<2>({2, 2});
  x.repeat_dim(-1, 3).to_data().assert_eq(
      TensorData::from<float>({{0.f, 1.f, 0.f, 1.f, 0.f, 1.f}, {2.f, 3.f, 2.f, 3.f, 2.f, 3.f}}));
}

TYPED_TEST(ShapeTest, RepeatDimZeroTimesGivesEmpty) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_EQ(x.repeat_dim(1, 0).shape(), Shape({2, 0}));
  EXPECT_EQ(x.repeat_dim(1, 1).shape(), Shape({2, 3}));
}

TYPED_TEST(ShapeTest, RepeatEveryDimMatchesNaiveLoop) {
  const auto data = iota({2, 1, 3}, DType::I32);
  TestFixture::template make<3, Int>(data).repeat({2, 3, 2}).to_data().assert_eq(
      naive_map(data, Shape({4, 3, 6}), [](const std::vector<std::int64_t>& o) {
        return std::vector<std::int64_t>{o[0] % 2, 0, o[2] % 3};
      }));
}

TYPED_TEST(ShapeTest, RepeatBoolKind) {
  auto b = Tensor<TypeParam, 1, Bool>::from_bool({true, false}, test::device<TypeParam>());
  b.repeat_dim(0, 2).to_data().assert_eq(TensorData::from<bool>({true, false, true, false}));
}

TYPED_TEST(ShapeTest, RepeatDimNegativeTimesThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT([&] { x.repeat_dim(0, -1); },
              ThrowsMessage<ValueError>(HasSubstr("repeat_dim: times must be >= 0, got -1")));
}

TYPED_TEST(ShapeTest, RepeatDimOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT([&] { x.repeat_dim(2, 2); },
              ThrowsMessage<IndexError>(HasSubstr("repeat_dim: dim 2 is out of range")));
}

// ------------------------------------------------------------------ flip

TYPED_TEST(ShapeTest, FlipEachDimByHand) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  x.flip({0}).to_data().assert_eq(TensorData::from<float>({{3.f, 4.f, 5.f}, {0.f, 1.f, 2.f}}));
  x.flip({1}).to_data().assert_eq(TensorData::from<float>({{2.f, 1.f, 0.f}, {5.f, 4.f, 3.f}}));
  x.flip({0, -1}).to_data().assert_eq(TensorData::from<float>({{5.f, 4.f, 3.f}, {2.f, 1.f, 0.f}}));
  x.flip({}).to_data().assert_eq(iota({2, 3}));
}

TYPED_TEST(ShapeTest, FlipRank3MatchesNaiveLoop) {
  const auto data = iota({3, 4, 5}, DType::I32);
  auto x = TestFixture::template make<3, Int>(data);
  x.flip({1}).to_data().assert_eq(naive_map(data, data.shape, [](const auto& o) {
    return std::vector<std::int64_t>{o[0], 3 - o[1], o[2]};
  }));
  x.flip({0, 2}).to_data().assert_eq(naive_map(data, data.shape, [](const auto& o) {
    return std::vector<std::int64_t>{2 - o[0], o[1], 4 - o[2]};
  }));
}

TYPED_TEST(ShapeTest, FlipBoolAndSizeOneAndEmpty) {
  auto b = Tensor<TypeParam, 2, Bool>::from_bool({{true, false, false}}, test::device<TypeParam>());
  b.flip({0, 1}).to_data().assert_eq(TensorData::from<bool>({{false, false, true}}));
  auto e = TestFixture::template iota_tensor<2>({0, 2});
  EXPECT_EQ(e.flip({0, 1}).shape(), Shape({0, 2}));
}

TYPED_TEST(ShapeTest, FlipRepeatedDimThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(
      [&] {
        x.flip({1, -1});
      },
      ThrowsMessage<IndexError>(HasSubstr("flip: dim 1 appears twice in dims [1, 1]")));
}

TYPED_TEST(ShapeTest, FlipDimOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT([&] { x.flip({2}); },
              ThrowsMessage<IndexError>(HasSubstr("flip: dim 2 is out of range")));
}

// ------------------------------------------------------------------ narrow, chunk, split

TYPED_TEST(ShapeTest, NarrowTakesARange) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  x.narrow(1, 1, 2).to_data().assert_eq(
      TensorData::from<float>({{1.f, 2.f}, {5.f, 6.f}, {9.f, 10.f}}));
  x.narrow(-2, 2, 1).to_data().assert_eq(TensorData::from<float>({{8.f, 9.f, 10.f, 11.f}}));
  EXPECT_EQ(x.narrow(0, 3, 0).shape(), Shape({0, 4}));
}

TYPED_TEST(ShapeTest, NarrowOutOfRangeThrows) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  EXPECT_THAT([&] { x.narrow(1, 3, 2); },
              ThrowsMessage<IndexError>(
                  HasSubstr("narrow: start 3 and length 2 are out of bounds for dim 1 of size 4")));
  EXPECT_THAT([&] { x.narrow(1, -1, 1); }, ThrowsMessage<IndexError>(HasSubstr("narrow:")));
}

TYPED_TEST(ShapeTest, ChunkSplitsIntoNearlyEqualPieces) {
  auto x = TestFixture::template iota_tensor<1>({5});
  const auto pieces = x.chunk(2, 0);
  ASSERT_EQ(pieces.size(), 2u);
  pieces[0].to_data().assert_eq(TensorData::from<float>({0.f, 1.f, 2.f}));
  pieces[1].to_data().assert_eq(TensorData::from<float>({3.f, 4.f}));
  // torch.chunk may return fewer pieces: 5 in chunks of ceil(5/4) = 2 is three pieces.
  const auto fewer = x.chunk(4, 0);
  ASSERT_EQ(fewer.size(), 3u);
  fewer[2].to_data().assert_eq(TensorData::from<float>({4.f}));
}

TYPED_TEST(ShapeTest, ChunkOfEmptyDimIsOnePiece) {
  auto x = TestFixture::template iota_tensor<2>({2, 0});
  const auto pieces = x.chunk(3, 1);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].shape(), Shape({2, 0}));
}

TYPED_TEST(ShapeTest, ChunkOfZeroPiecesThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT([&] { x.chunk(0, 0); },
              ThrowsMessage<ValueError>(HasSubstr("chunk: chunks must be >= 1, got 0")));
}

TYPED_TEST(ShapeTest, SplitGivesFixedSizePiecesAlongDim) {
  auto x = TestFixture::template iota_tensor<2>({2, 5});
  const auto pieces = x.split(2, 1);
  ASSERT_EQ(pieces.size(), 3u);
  pieces[0].to_data().assert_eq(TensorData::from<float>({{0.f, 1.f}, {5.f, 6.f}}));
  pieces[1].to_data().assert_eq(TensorData::from<float>({{2.f, 3.f}, {7.f, 8.f}}));
  pieces[2].to_data().assert_eq(TensorData::from_nested<float, 2>({{4.f}, {9.f}}));
}

TYPED_TEST(ShapeTest, SplitOfZeroSizeThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT([&] { x.split(0, 0); },
              ThrowsMessage<ValueError>(HasSubstr("split: split_size must be >= 1, got 0")));
}

TYPED_TEST(ShapeTest, SplitWithSizesAllowsEmptyPieces) {
  auto x = TestFixture::template iota_tensor<1, Int>({5});
  const auto pieces = x.split_with_sizes({1, 0, 4}, 0);
  ASSERT_EQ(pieces.size(), 3u);
  pieces[0].to_data().assert_eq(TensorData::from<std::int32_t>({0}));
  EXPECT_EQ(pieces[1].shape(), Shape({0}));
  pieces[2].to_data().assert_eq(TensorData::from<std::int32_t>({1, 2, 3, 4}));
}

TYPED_TEST(ShapeTest, SplitWithSizesNotSummingToDimThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT(
      [&] {
        x.split_with_sizes({2, 2}, 0);
      },
      ThrowsMessage<ShapeError>(HasSubstr("split_with_sizes: sizes sum to 4, dim 0 has size 5")));
}

TYPED_TEST(ShapeTest, SplitWithNegativeSizeThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT(
      [&] {
        x.split_with_sizes({2, -1, 4}, 0);
      },
      ThrowsMessage<ValueError>(HasSubstr("split_with_sizes: size 1 is -1")));
}

// ------------------------------------------------------------------ cat, stack

TYPED_TEST(ShapeTest, CatWithEmptyMatchesPyTorch) {
  const auto c = test::load_case("cat_stack_with_empty");
  auto a = TestFixture::template make<2>(c.input("a"));
  auto e = TestFixture::template make<2>(c.input("e"));
  auto b = TestFixture::template make<2>(c.input("b"));
  Tensor<TypeParam, 2>::cat({a, e, b}, 1)
      .to_data()
      .assert_approx_eq(c.expected("cat"), c.tolerance());
}

TYPED_TEST(ShapeTest, StackMatchesPyTorch) {
  const auto c = test::load_case("cat_stack_with_empty");
  auto a0 = TestFixture::template make<1>(c.input("a0"));
  auto a1 = TestFixture::template make<1>(c.input("a1"));
  Tensor<TypeParam, 1>::template stack<2>({a0, a1}, 1)
      .to_data()
      .assert_approx_eq(c.expected("stack"), c.tolerance());
}

TYPED_TEST(ShapeTest, CatAlongDimZeroAndNegativeDim) {
  auto a = TestFixture::template iota_tensor<2>({1, 2});
  auto b = Tensor<TypeParam, 2>::from_data({{7.f, 8.f}, {9.f, 10.f}}, test::device<TypeParam>());
  Tensor<TypeParam, 2>::cat({a, b}, 0).to_data().assert_eq(
      TensorData::from<float>({{0.f, 1.f}, {7.f, 8.f}, {9.f, 10.f}}));
  auto c = TestFixture::template iota_tensor<2>({2, 1});
  Tensor<TypeParam, 2>::cat({b, c}, -1)
      .to_data()
      .assert_eq(TensorData::from<float>({{7.f, 8.f, 0.f}, {9.f, 10.f, 1.f}}));
}

TYPED_TEST(ShapeTest, CatMiddleDimMatchesNaiveLoop) {
  const auto a = iota({2, 3, 4});
  const auto b = iota({2, 1, 4});
  auto out = Tensor<TypeParam, 3>::cat(
      {TestFixture::template make<3>(a), TestFixture::template make<3>(b)}, 1);
  std::vector<float> expected;
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 4; ++j) {
      for (std::int64_t k = 0; k < 4; ++k) {
        expected.push_back(j < 3 ? static_cast<float>(i * 12 + j * 4 + k)
                                 : static_cast<float>(i * 4 + k));
      }
    }
  }
  out.to_data().assert_eq(TensorData(Shape({2, 4, 4}), expected));
}

TYPED_TEST(ShapeTest, CatIntAndBoolKinds) {
  auto a = Tensor<TypeParam, 1, Int>::from_ints({1, 2}, test::device<TypeParam>());
  auto b = Tensor<TypeParam, 1, Int>::from_ints({3}, test::device<TypeParam>());
  Tensor<TypeParam, 1, Int>::cat({a, b, a}, 0)
      .to_data()
      .assert_eq(TensorData::from<std::int32_t>({1, 2, 3, 1, 2}));
  auto t = Tensor<TypeParam, 2, Bool>::from_bool({{true}, {false}}, test::device<TypeParam>());
  auto f = Tensor<TypeParam, 2, Bool>::from_bool({{false}, {true}}, test::device<TypeParam>());
  Tensor<TypeParam, 2, Bool>::cat({t, f}, 1).to_data().assert_eq(
      TensorData::from<bool>({{true, false}, {false, true}}));
}

TYPED_TEST(ShapeTest, CatOfOneTensorAndOfAllEmpty) {
  auto a = TestFixture::template iota_tensor<2>({2, 2});
  Tensor<TypeParam, 2>::cat({a}, 1).to_data().assert_eq(iota({2, 2}));
  auto e = TestFixture::template iota_tensor<2>({0, 2});
  EXPECT_EQ((Tensor<TypeParam, 2>::cat({e, e}, 0).shape()), Shape({0, 2}));
  EXPECT_EQ((Tensor<TypeParam, 2>::cat({e, e}, 1).shape()), Shape({0, 4}));
}

TYPED_TEST(ShapeTest, CatShapeMismatchNamesTensorAndShapes) {
  auto a = TestFixture::template iota_tensor<2>({2, 3});
  auto b = TestFixture::template iota_tensor<2>({2, 3});
  auto c = TestFixture::template iota_tensor<2>({3, 3});
  EXPECT_THAT(([&] {
                Tensor<TypeParam, 2>::cat({a, b, c}, 1);
              }),
              ThrowsMessage<ShapeError>(HasSubstr(
                  "cat: tensor 2 has shape [3, 3], tensor 0 has shape [2, 3]: they must match "
                  "in every dim except dim 1")));
}

TYPED_TEST(ShapeTest, CatOfNothingThrows) {
  EXPECT_THAT(([&] { Tensor<TypeParam, 2>::cat({}, 0); }),
              ThrowsMessage<ValueError>(HasSubstr("cat: expected at least one tensor")));
}

TYPED_TEST(ShapeTest, CatDimOutOfRangeThrows) {
  auto a = TestFixture::template iota_tensor<2>({2, 3});
  EXPECT_THAT(([&] {
                Tensor<TypeParam, 2>::cat({a, a}, 2);
              }),
              ThrowsMessage<IndexError>(HasSubstr("cat: dim 2 is out of range")));
}

TEST(CpuCat, DTypeMismatchThrows) {
  const std::vector<CpuTensor> prims{CpuOps::full(Shape({2}), 1.0, DType::F32, {}),
                                     CpuOps::full(Shape({2}), 1.0, DType::I32, {})};
  EXPECT_THAT(
      [&] { CpuOps::cat(prims, 0); },
      ThrowsMessage<DTypeError>(HasSubstr("cat: tensor 1 has dtype i32, tensor 0 has f32")));
}

TYPED_TEST(ShapeTest, StackAlongDimZeroAndLast) {
  auto a = Tensor<TypeParam, 1, Int>::from_ints({1, 2}, test::device<TypeParam>());
  auto b = Tensor<TypeParam, 1, Int>::from_ints({3, 4}, test::device<TypeParam>());
  Tensor<TypeParam, 1, Int>::template stack<2>({a, b}, 0).to_data().assert_eq(
      TensorData::from<std::int32_t>({{1, 2}, {3, 4}}));
  Tensor<TypeParam, 1, Int>::template stack<2>({a, b}, -1)
      .to_data()
      .assert_eq(TensorData::from<std::int32_t>({{1, 3}, {2, 4}}));
}

TYPED_TEST(ShapeTest, StackShapeMismatchThrows) {
  auto a = TestFixture::template iota_tensor<1>({2});
  auto b = TestFixture::template iota_tensor<1>({3});
  EXPECT_THAT(
      ([&] {
        Tensor<TypeParam, 1>::template stack<2>({a, b}, 0);
      }),
      ThrowsMessage<ShapeError>(HasSubstr(
          "stack: all tensors must have the same shape: tensor 0 is [2], tensor 1 is [3]")));
}

TYPED_TEST(ShapeTest, StackDimOutOfRangeThrows) {
  auto a = TestFixture::template iota_tensor<1>({2});
  EXPECT_THAT(([&] {
                Tensor<TypeParam, 1>::template stack<2>({a, a}, 2);
              }),
              ThrowsMessage<IndexError>(HasSubstr("stack: dim 2 is out of range")));
}

// ------------------------------------------------------------------ slice

TYPED_TEST(ShapeTest, SliceStepsMatchPyTorch) {
  const auto c = test::load_case("slice_steps_positive_and_negative");
  auto v = TestFixture::template make<1>(c.input("v"));
  v.slice({Slice(1, 8, 3)}).to_data().assert_approx_eq(c.expected("v_slice"), c.tolerance());
  auto m = TestFixture::template make<2>(c.input("m"));
  m.slice({Slice::all(), Slice(0, 5, 2)})
      .to_data()
      .assert_approx_eq(c.expected("m_slice"), c.tolerance());
  auto w = TestFixture::template make<1>(c.input("w"));
  w.slice({Slice(1, 6, -2)}).to_data().assert_approx_eq(c.expected("w_negstep"), c.tolerance());
}

TYPED_TEST(ShapeTest, SliceRangesAndOpenEnds) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  x.slice({{0, 1}, {0, 3}}).to_data().assert_eq(TensorData::from<float>({{0.f, 1.f, 2.f}}));
  x.slice({Slice::all(), Slice::from(-2)})
      .to_data()
      .assert_eq(TensorData::from<float>({{2.f, 3.f}, {6.f, 7.f}, {10.f, 11.f}}));
  x.slice({Slice::to(-1)})
      .to_data()
      .assert_eq(TensorData::from<float>({{0.f, 1.f, 2.f, 3.f}, {4.f, 5.f, 6.f, 7.f}}));
  x.slice({Slice::index(-1), Slice::index(1)})
      .to_data()
      .assert_eq(TensorData::from_nested<float, 2>({{9.f}}));
  x.slice({}).to_data().assert_eq(iota({3, 4}));
}

TYPED_TEST(ShapeTest, SliceNegativeStepWalksBackwards) {
  auto x = TestFixture::template iota_tensor<1>({5});
  x.slice({Slice(0, 5, -1)})
      .to_data()
      .assert_eq(TensorData::from<float>({4.f, 3.f, 2.f, 1.f, 0.f}));
  x.slice({Slice::from(0, -2)}).to_data().assert_eq(TensorData::from<float>({4.f, 2.f, 0.f}));
  // A step longer than the range takes only its first (last, backwards) element.
  x.slice({Slice(1, 4, 10)}).to_data().assert_eq(TensorData::from<float>({1.f}));
  x.slice({Slice(1, 4, -10)}).to_data().assert_eq(TensorData::from<float>({3.f}));
}

TYPED_TEST(ShapeTest, SliceRank3WithStepsMatchesNaiveLoop) {
  const auto data = iota({4, 5, 6}, DType::I32);
  const std::vector<Slice> ranges{Slice(3, 4, 1), Slice(0, 5, -2), Slice(1, 6, 2)};
  const auto r0 = naive_range(3, 4, 1);
  const auto r1 = naive_range(0, 5, -2);
  const auto r2 = naive_range(1, 6, 2);
  const Shape out_shape({static_cast<std::int64_t>(r0.size()), static_cast<std::int64_t>(r1.size()),
                         static_cast<std::int64_t>(r2.size())});
  TestFixture::template make<3, Int>(data).slice(ranges).to_data().assert_eq(
      naive_map(data, out_shape, [&](const auto& o) {
        return std::vector<std::int64_t>{r0[static_cast<std::size_t>(o[0])],
                                         r1[static_cast<std::size_t>(o[1])],
                                         r2[static_cast<std::size_t>(o[2])]};
      }));
}

TYPED_TEST(ShapeTest, SliceEmptyRangeGivesEmptyDim) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  EXPECT_EQ(x.slice({{2, 2}}).shape(), Shape({0, 4}));
  EXPECT_EQ(x.slice({Slice::all(), Slice(4, 4, -1)}).shape(), Shape({3, 0}));
  auto e = TestFixture::template iota_tensor<2>({0, 4});
  EXPECT_EQ(e.slice({Slice::all(), {1, 3}}).shape(), Shape({0, 2}));
}

TYPED_TEST(ShapeTest, SliceBoolKind) {
  auto b = Tensor<TypeParam, 2, Bool>::from_bool({{true, false, true}, {false, false, true}},
                                                 test::device<TypeParam>());
  b.slice({Slice::all(), Slice(0, 3, -2)})
      .to_data()
      .assert_eq(TensorData::from<bool>({{true, true}, {true, false}}));
}

TYPED_TEST(ShapeTest, SliceOutOfBoundsThrows) {
  auto x = TestFixture::template iota_tensor<2>({3, 5});
  EXPECT_THAT(
      [&] {
        x.slice({Slice::all(), {0, 7}});
      },
      ThrowsMessage<IndexError>(
          HasSubstr("slice: range [0, 7) is out of bounds for dim 1 of size 5")));
  EXPECT_THAT([&] { x.slice({Slice::from(-4)}); },
              ThrowsMessage<IndexError>(
                  HasSubstr("slice: range [-4, end) is out of bounds for dim 0 of size 3")));
}

TYPED_TEST(ShapeTest, SliceStartAfterEndThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT(
      [&] {
        x.slice({{3, 1}});
      },
      ThrowsMessage<IndexError>(HasSubstr("starts after it ends (3 > 1)")));
}

TYPED_TEST(ShapeTest, SliceMoreRangesThanDimsThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT(
      [&] {
        x.slice({Slice::all(), Slice::all()});
      },
      ThrowsMessage<RankError>(HasSubstr("slice: got 2 ranges for a tensor of rank 1")));
}

TYPED_TEST(ShapeTest, SliceStepZeroThrows) {
  auto x = TestFixture::template iota_tensor<1>({5});
  EXPECT_THAT([&] { x.slice({Slice(0, 5, 0)}); },
              ThrowsMessage<ValueError>(HasSubstr("slice: step of dim 0 is 0")));
}

// ------------------------------------------------------------------ slice_assign

TYPED_TEST(ShapeTest, SliceAssignReplacesTheSlice) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  auto v = Tensor<TypeParam, 2>::from_data({{-1.f, -2.f}, {-3.f, -4.f}}, test::device<TypeParam>());
  x.slice_assign({{1, 3}, {1, 3}}, v)
      .to_data()
      .assert_eq(TensorData::from<float>(
          {{0.f, 1.f, 2.f, 3.f}, {4.f, -1.f, -2.f, 7.f}, {8.f, -3.f, -4.f, 11.f}}));
}

TYPED_TEST(ShapeTest, SliceAssignLeavesTheOriginalUnchanged) {
  auto x = TestFixture::template iota_tensor<1>({4});
  auto v = Tensor<TypeParam, 1>::from_data({9.f}, test::device<TypeParam>());
  auto y = x.slice_assign({Slice::index(0)}, v);
  x.to_data().assert_eq(iota({4}));
  y.to_data().assert_eq(TensorData::from<float>({9.f, 1.f, 2.f, 3.f}));
}

TYPED_TEST(ShapeTest, SliceAssignWithStepsMatchesNaiveLoop) {
  auto x = TestFixture::template iota_tensor<2, Int>({4, 6});
  auto v =
      Tensor<TypeParam, 2, Int>::from_ints({{-1, -2, -3}, {-4, -5, -6}}, test::device<TypeParam>());
  // rows 3, 1 (backwards over [0, 4) by 2); columns 0, 2, 4
  const std::vector<Slice> ranges{Slice(0, 4, -2), Slice(0, 6, 2)};
  std::vector<std::int32_t> expected(24);
  std::iota(expected.begin(), expected.end(), 0);
  const std::int64_t rows[] = {3, 1};
  for (std::int64_t i = 0; i < 2; ++i) {
    for (std::int64_t j = 0; j < 3; ++j) {
      expected[static_cast<std::size_t>(rows[i] * 6 + j * 2)] =
          static_cast<std::int32_t>(-(i * 3 + j + 1));
    }
  }
  x.slice_assign(ranges, v).to_data().assert_eq(TensorData(Shape({4, 6}), expected));
}

TYPED_TEST(ShapeTest, SliceAssignBoolKind) {
  auto b = Tensor<TypeParam, 1, Bool>::from_bool({false, false, false}, test::device<TypeParam>());
  auto t = Tensor<TypeParam, 1, Bool>::from_bool({true, true}, test::device<TypeParam>());
  b.slice_assign({Slice::from(1)}, t)
      .to_data()
      .assert_eq(TensorData::from<bool>({false, true, true}));
}

TYPED_TEST(ShapeTest, SliceAssignEmptySliceKeepsValues) {
  auto x = TestFixture::template iota_tensor<2>({2, 2});
  auto v = TestFixture::template iota_tensor<2>({0, 2});
  x.slice_assign({{1, 1}}, v).to_data().assert_eq(iota({2, 2}));
}

TYPED_TEST(ShapeTest, SliceAssignOfRvalueReusesTheBuffer) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  auto v = TestFixture::template iota_tensor<2>({1, 4});
  const auto before = allocations();
  auto y = std::move(x).slice_assign({Slice::index(2)}, v);
  EXPECT_EQ(allocations(), before);
  y.to_data().assert_eq(
      TensorData::from<float>({{0.f, 1.f, 2.f, 3.f}, {4.f, 5.f, 6.f, 7.f}, {0.f, 1.f, 2.f, 3.f}}));
}

TYPED_TEST(ShapeTest, SliceAssignShapeMismatchThrows) {
  auto x = TestFixture::template iota_tensor<2>({3, 4});
  auto v = TestFixture::template iota_tensor<2>({2, 2});
  EXPECT_THAT(
      [&] {
        x.slice_assign({{0, 2}, {0, 3}}, v);
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("slice_assign: values have shape [2, 2], the slice has shape [2, 3]")));
}

TYPED_TEST(ShapeTest, SliceAssignOutOfBoundsThrows) {
  auto x = TestFixture::template iota_tensor<1>({3});
  auto v = TestFixture::template iota_tensor<1>({2});
  EXPECT_THAT(
      [&] {
        x.slice_assign({{2, 4}}, v);
      },
      ThrowsMessage<IndexError>(
          HasSubstr("slice_assign: range [2, 4) is out of bounds for dim 0 of size 3")));
}

TEST(CpuSliceAssign, DTypeMismatchThrows) {
  const auto x = CpuOps::full(Shape({3}), 0.0, DType::F32, {});
  const auto v = CpuOps::full(Shape({1}), 1.0, DType::I32, {});
  const std::vector<Slice> ranges{Slice::index(0)};
  EXPECT_THAT([&] { CpuOps::slice_assign(x, ranges, v); },
              ThrowsMessage<DTypeError>(
                  HasSubstr("slice_assign: values have dtype i32, the tensor has f32")));
}

// ------------------------------------------------------------------ backend-only checks
// Errors the typed front end rules out at compile time or before the call, which the Cpu
// primitives still check for other callers (bindings, Autodiff).

TEST(CpuShapeErrors, ReshapePastMaxRankThrows) {
  const auto x = CpuOps::full(Shape({1}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> dims(9, 1);
  EXPECT_THAT([&] { CpuOps::reshape(x, dims); },
              ThrowsMessage<LimitError>(HasSubstr("rank 9 exceeds the maximum rank 8")));
}

TEST(CpuShapeErrors, ReshapeOverflowingDimsThrows) {
  const auto x = CpuOps::full(Shape({2}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> dims{1LL << 40, 1LL << 40};
  EXPECT_THAT([&] { CpuOps::reshape(x, dims); },
              ThrowsMessage<ShapeError>(HasSubstr("(more than 2^63 elements)")));
}

TEST(CpuShapeErrors, PermuteWithWrongAxisCountThrows) {
  const auto x = CpuOps::full(Shape({2, 3}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> axes{0};
  EXPECT_THAT(
      [&] { CpuOps::permute(x, axes); },
      ThrowsMessage<RankError>(HasSubstr("permute: expected 2 axes for shape [2, 3], got 1")));
}

TEST(CpuShapeErrors, PermuteWithNonPermutationThrows) {
  const auto x = CpuOps::full(Shape({2, 3}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> axes{1, 1};
  EXPECT_THAT(
      [&] { CpuOps::permute(x, axes); },
      ThrowsMessage<IndexError>(HasSubstr("permute: axes [1, 1] are not a permutation of 0..1")));
}

TEST(CpuShapeErrors, ExpandToLowerRankThrows) {
  const auto x = CpuOps::full(Shape({2, 3}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> dims{3};
  EXPECT_THAT([&] { CpuOps::expand(x, dims); },
              ThrowsMessage<RankError>(HasSubstr("expand: cannot expand [2, 3] to [3]")));
}

TEST(CpuShapeErrors, ExpandToNegativeSizeThrows) {
  const auto x = CpuOps::full(Shape({1, 3}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> dims{-2, 3};
  EXPECT_THAT(
      [&] { CpuOps::expand(x, dims); },
      ThrowsMessage<ValueError>(HasSubstr("dim 0 is -2 (dims must be >= 0, or -1 to keep)")));
}

TEST(CpuShapeErrors, RepeatDimOverflowThrows) {
  const auto x = CpuOps::full(Shape({4}), 0.0, DType::F32, {});
  EXPECT_THAT([&] { CpuOps::repeat_dim(x, 0, 1LL << 62); },
              ThrowsMessage<LimitError>(HasSubstr("repeat_dim: repeating dim 0 of [4]")));
}

TEST(CpuShapeErrors, CatRankMismatchThrows) {
  const std::vector<CpuTensor> prims{CpuOps::full(Shape({2, 1}), 1.0, DType::F32, {}),
                                     CpuOps::full(Shape({2}), 1.0, DType::F32, {})};
  EXPECT_THAT([&] { CpuOps::cat(prims, 0); },
              ThrowsMessage<ShapeError>(
                  HasSubstr("cat: tensor 1 has shape [2], tensor 0 has shape [2, 1]")));
}

TEST(CpuShapeErrors, FlipDimOutOfRangeThrows) {
  const auto x = CpuOps::full(Shape({2}), 0.0, DType::F32, {});
  const std::vector<std::int64_t> dims{1};
  EXPECT_THAT([&] { CpuOps::flip(x, dims); },
              ThrowsMessage<IndexError>(HasSubstr("flip: dim 1 is out of range")));
}
