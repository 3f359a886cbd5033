// Comparisons (-> Bool), is_nan / is_inf, Bool logic, mask_where and mask_fill.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

using test::kInf;
using test::kNan;

using test::vec;
template <class B>
Tensor<B, 1, Bool> bools(const std::vector<bool>& v) {
  return Tensor<B, 1, Bool>::from_data(TensorData(Shape{static_cast<std::int64_t>(v.size())}, v));
}
TensorData expect(const std::vector<bool>& v) {
  return TensorData(Shape{static_cast<std::int64_t>(v.size())}, v);
}

template <class B>
class ComparisonTest : public ::testing::Test {};
TYPED_TEST_SUITE(ComparisonTest, test::AllBackends);

TYPED_TEST(ComparisonTest, FloatComparisonsWithNan) {
  auto a = vec<TypeParam>({1.f, 2.f, 3.f, kNan, kNan, -0.f, kInf});
  auto b = vec<TypeParam>({2.f, 2.f, 1.f, 1.f, kNan, 0.f, kInf});
  a.equal(b).into_data().assert_eq(expect({false, true, false, false, false, true, true}));
  a.not_equal(b).into_data().assert_eq(expect({true, false, true, true, true, false, false}));
  a.greater(b).into_data().assert_eq(expect({false, false, true, false, false, false, false}));
  a.greater_equal(b).into_data().assert_eq(expect({false, true, true, false, false, true, true}));
  a.lower(b).into_data().assert_eq(expect({true, false, false, false, false, false, false}));
  a.lower_equal(b).into_data().assert_eq(expect({true, true, false, false, false, true, true}));
}

TYPED_TEST(ComparisonTest, ResultDTypeIsBool) {
  const auto out = vec<TypeParam>({1.f}).equal(vec<TypeParam>({1.f})).into_data();
  EXPECT_EQ(out.dtype, DType::Bool);
  EXPECT_EQ(out.bytes, (std::vector<std::uint8_t>{1}));
}

TYPED_TEST(ComparisonTest, LongComparisonCoversTheTail) {
  // 37 elements: every vector width leaves a tail.
  std::vector<float> a, b;
  std::vector<bool> gt, ne;
  for (int i = 0; i < 37; ++i) {
    a.push_back(static_cast<float>(i % 7));
    b.push_back(static_cast<float>(i % 5));
    gt.push_back(i % 7 > i % 5);
    ne.push_back(i % 7 != i % 5);
  }
  vec<TypeParam>(a).greater(vec<TypeParam>(b)).into_data().assert_eq(expect(gt));
  vec<TypeParam>(a).not_equal(vec<TypeParam>(b)).into_data().assert_eq(expect(ne));
  std::vector<bool> ge3;
  for (int i = 0; i < 37; ++i) ge3.push_back(i % 7 >= 3);
  vec<TypeParam>(a).greater_equal_elem(3.0).into_data().assert_eq(expect(ge3));
}

TYPED_TEST(ComparisonTest, BroadcastComparison) {
  auto col = Tensor<TypeParam, 2>::from_data({{1.f}, {2.f}, {3.f}});
  auto row = Tensor<TypeParam, 2>::from_data({{2.f, 1.f}});
  col.greater(row).into_data().assert_eq(
      TensorData::from<bool>({{false, false}, {false, true}, {true, true}}));
  row.lower_equal(col).into_data().assert_eq(
      TensorData::from<bool>({{false, true}, {true, true}, {true, true}}));
}

TYPED_TEST(ComparisonTest, ScalarComparisons) {
  auto a = vec<TypeParam>({-1.f, 0.5f, 2.f, kNan});
  a.equal_elem(2.0).into_data().assert_eq(expect({false, false, true, false}));
  a.not_equal_elem(2.0).into_data().assert_eq(expect({true, true, false, true}));
  a.greater_elem(0.5).into_data().assert_eq(expect({false, false, true, false}));
  a.greater_equal_elem(0.5).into_data().assert_eq(expect({false, true, true, false}));
  a.lower_elem(0.5).into_data().assert_eq(expect({true, false, false, false}));
  a.lower_equal_elem(0.5).into_data().assert_eq(expect({true, true, false, false}));
}

TYPED_TEST(ComparisonTest, IntComparisons) {
  auto a = Tensor<TypeParam, 1, Int>::from_ints({-3, 0, 5, 2147483647});
  auto b = Tensor<TypeParam, 1, Int>::from_ints({-3, 1, 4, -2147483647 - 1});
  a.equal(b).into_data().assert_eq(expect({true, false, false, false}));
  a.greater(b).into_data().assert_eq(expect({false, false, true, true}));
  a.lower_equal(b).into_data().assert_eq(expect({true, true, false, false}));
  a.greater_elem(0).into_data().assert_eq(expect({false, false, true, true}));
}

TYPED_TEST(ComparisonTest, IntComparedWithNonIntegerScalar) {
  // Exact, as in PyTorch (the int is promoted, not the scalar truncated).
  auto a = Tensor<TypeParam, 1, Int>::from_ints({1, 2, 3});
  a.greater_elem(2.5).into_data().assert_eq(expect({false, false, true}));
  a.lower_equal_elem(2.5).into_data().assert_eq(expect({true, true, false}));
  a.equal_elem(2.5).into_data().assert_eq(expect({false, false, false}));
  a.not_equal_elem(2.5).into_data().assert_eq(expect({true, true, true}));
  a.lower_elem(1e10).into_data().assert_eq(expect({true, true, true}));
  a.greater_elem(std::numeric_limits<double>::quiet_NaN())
      .into_data()
      .assert_eq(expect({false, false, false}));
}

TYPED_TEST(ComparisonTest, BoolEquality) {
  auto a = bools<TypeParam>({true, false, true, false});
  auto b = bools<TypeParam>({true, true, false, false});
  a.equal(b).into_data().assert_eq(expect({true, false, false, true}));
  a.not_equal(b).into_data().assert_eq(expect({false, true, true, false}));
  a.equal_elem(1.0).into_data().assert_eq(expect({true, false, true, false}));
}

TYPED_TEST(ComparisonTest, IsNanIsInf) {
  std::vector<float> x;
  std::vector<bool> nan, inf;
  for (int i = 0; i < 37; ++i) {
    const float v =
        i % 3 == 0 ? kNan : (i % 3 == 1 ? (i % 2 ? kInf : -kInf) : static_cast<float>(i));
    x.push_back(v);
    nan.push_back(i % 3 == 0);
    inf.push_back(i % 3 == 1);
  }
  vec<TypeParam>(x).is_nan().into_data().assert_eq(expect(nan));
  vec<TypeParam>(x).is_inf().into_data().assert_eq(expect(inf));
}

TYPED_TEST(ComparisonTest, EmptyComparison) {
  auto a = Tensor<TypeParam, 2>::zeros({0, 4});
  EXPECT_EQ(a.equal(a).num_elements(), 0);
  EXPECT_EQ(a.greater_elem(1.0).dims(), (std::array<std::int64_t, 2>{0, 4}));
  EXPECT_EQ(a.is_nan().num_elements(), 0);
}

// ---------------------------------------------------------------- Bool logic

TYPED_TEST(ComparisonTest, BoolLogic) {
  auto a = bools<TypeParam>({true, true, false, false});
  auto b = bools<TypeParam>({true, false, true, false});
  a.bool_not().into_data().assert_eq(expect({false, false, true, true}));
  a.bool_and(b).into_data().assert_eq(expect({true, false, false, false}));
  a.bool_or(b).into_data().assert_eq(expect({true, true, true, false}));
  a.bool_xor(b).into_data().assert_eq(expect({false, true, true, false}));
}

TYPED_TEST(ComparisonTest, BoolLogicBroadcastsAndCoversTheTail) {
  std::vector<bool> row, expected_and, expected_not;
  for (int j = 0; j < 70; ++j) row.push_back(j % 3 == 0);
  auto r = Tensor<TypeParam, 2, Bool>::from_data(TensorData(Shape{1, 70}, row));
  auto c = Tensor<TypeParam, 2, Bool>::from_bool({{true}, {false}});
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 70; ++j) expected_and.push_back(i == 0 && row[j]);
  }
  for (int j = 0; j < 70; ++j) expected_not.push_back(!row[j]);
  r.bool_and(c).into_data().assert_eq(TensorData(Shape{2, 70}, expected_and));
  r.bool_not().into_data().assert_eq(TensorData(Shape{1, 70}, expected_not));
}

TYPED_TEST(ComparisonTest, BoolNotReusesAnRvalueBuffer) {
  auto a = bools<TypeParam>({true, false});
  const auto before = memory_stats().total_allocations;
  auto b = Tensor<TypeParam, 1, Bool>(TypeParam::BoolOps::bool_not(std::move(a).into_primitive()));
  EXPECT_EQ(memory_stats().total_allocations, before);
  b.into_data().assert_eq(expect({false, true}));
}

// ---------------------------------------------------------------- mask_where, mask_fill

TYPED_TEST(ComparisonTest, MaskWhereSameShape) {
  auto x = vec<TypeParam>({1.f, 2.f, 3.f, 4.f});
  auto v = vec<TypeParam>({-1.f, -2.f, -3.f, -4.f});
  auto m = bools<TypeParam>({true, false, false, true});
  x.mask_where(m, v).into_data().assert_eq(TensorData::from<float>({-1.f, 2.f, 3.f, -4.f}));
}

TYPED_TEST(ComparisonTest, MaskWhereBroadcastsAllThree) {
  // x [2, 1], mask [1, 3], value [2, 3] -> [2, 3].
  auto x = Tensor<TypeParam, 2>::from_data({{1.f}, {2.f}});
  auto m = Tensor<TypeParam, 2, Bool>::from_bool({{true, false, true}});
  auto v = Tensor<TypeParam, 2>::from_data({{10.f, 20.f, 30.f}, {40.f, 50.f, 60.f}});
  x.mask_where(m, v).into_data().assert_eq(
      TensorData::from<float>({{10.f, 1.f, 30.f}, {40.f, 2.f, 60.f}}));
  // and a broadcast value: x [2, 3], mask [2, 1], value [1, 1]
  auto m2 = Tensor<TypeParam, 2, Bool>::from_bool({{false}, {true}});
  auto s = Tensor<TypeParam, 2>::from_data({{0.f}});
  v.mask_where(m2, s).into_data().assert_eq(
      TensorData::from<float>({{10.f, 20.f, 30.f}, {0.f, 0.f, 0.f}}));
}

TYPED_TEST(ComparisonTest, MaskWhereLongRowsCoverTheTail) {
  std::vector<float> x, v, expected;
  std::vector<bool> m;
  for (int i = 0; i < 37; ++i) {
    x.push_back(static_cast<float>(i));
    v.push_back(static_cast<float>(-i));
    m.push_back(i % 4 == 1);
    expected.push_back(i % 4 == 1 ? static_cast<float>(-i) : static_cast<float>(i));
  }
  vec<TypeParam>(x)
      .mask_where(bools<TypeParam>(m), vec<TypeParam>(v))
      .into_data()
      .assert_eq(TensorData(Shape{37}, expected));
}

TYPED_TEST(ComparisonTest, MaskWhereIntAndBool) {
  auto x = Tensor<TypeParam, 1, Int>::from_ints({1, 2, 3});
  auto v = Tensor<TypeParam, 1, Int>::from_ints({7, 8, 9});
  auto m = bools<TypeParam>({false, true, true});
  x.mask_where(m, v).into_data().assert_eq(TensorData::from<std::int32_t>({1, 8, 9}));
  auto bx = bools<TypeParam>({true, true, false});
  auto bv = bools<TypeParam>({false, false, true});
  bx.mask_where(m, bv).into_data().assert_eq(expect({true, false, true}));
}

TYPED_TEST(ComparisonTest, MaskFill) {
  auto x = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}});
  auto m = Tensor<TypeParam, 2, Bool>::from_bool({{true, false}});  // broadcast over rows
  x.mask_fill(m, -kInf).into_data().assert_eq(
      TensorData::from<float>({{-kInf, 2.f}, {-kInf, 4.f}}));
  auto xi = Tensor<TypeParam, 1, Int>::from_ints({1, 2, 3});
  xi.mask_fill(bools<TypeParam>({false, true, false}), -5)
      .into_data()
      .assert_eq(TensorData::from<std::int32_t>({1, -5, 3}));
}

TYPED_TEST(ComparisonTest, MaskFillRvalueReusesTheBuffer) {
  auto x = vec<TypeParam>({1.f, 2.f, 3.f});
  auto m = bools<TypeParam>({true, false, true});
  const auto before = memory_stats().total_allocations;
  auto y = Tensor<TypeParam, 1>(
      TypeParam::FloatOps::mask_fill(std::move(x).into_primitive(), m.primitive(), 0.0));
  EXPECT_EQ(memory_stats().total_allocations, before);
  y.into_data().assert_eq(TensorData::from<float>({0.f, 2.f, 0.f}));
}

// ---------------------------------------------------------------- errors

TYPED_TEST(ComparisonTest, CompareShapeMismatchThrows) {
  auto a = Tensor<TypeParam, 2>::zeros({2, 3});
  auto b = Tensor<TypeParam, 2>::zeros({3, 3});
  EXPECT_THAT([&] { (void)a.greater(b); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "greater: shapes do not broadcast: lhs [2, 3] vs rhs [3, 3] (dim 0: 2 vs 3)")));
}

TYPED_TEST(ComparisonTest, BoolLogicShapeMismatchThrows) {
  auto a = bools<TypeParam>({true, false});
  auto b = bools<TypeParam>({true, false, true});
  EXPECT_THAT(
      [&] { (void)a.bool_or(b); },
      ThrowsMessage<ShapeError>(HasSubstr("bool_or: shapes do not broadcast: lhs [2] vs rhs [3]")));
}

TYPED_TEST(ComparisonTest, MaskWhereShapeMismatchNamesAllThree) {
  auto x = Tensor<TypeParam, 2>::zeros({2, 3});
  auto m = Tensor<TypeParam, 2, Bool>::from_bool({{true, false}});
  auto v = Tensor<TypeParam, 2>::zeros({1, 3});
  EXPECT_THAT([&] { (void)x.mask_where(m, v); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "mask_where: shapes do not broadcast: x [2, 3] vs mask [1, 2] vs value [1, 3] "
                  "(dim 1: x 3 vs mask 2)")));
}

TYPED_TEST(ComparisonTest, MaskFillNonIntegerOnIntThrows) {
  auto x = Tensor<TypeParam, 1, Int>::from_ints({1});
  auto m = bools<TypeParam>({true});
  EXPECT_THAT(
      [&] { (void)TypeParam::IntOps::mask_fill(x.primitive(), m.primitive(), 0.5); },
      ThrowsMessage<ValueError>(HasSubstr("mask_fill: an Int tensor needs an integer scalar")));
}

TEST(ComparisonPrimitiveErrors, DTypeMismatchThrows) {
  auto a = CpuOps::full(Shape{2}, 1.0, DType::F32, {});
  auto b = CpuOps::full(Shape{2}, 1.0, DType::I32, {});
  EXPECT_THAT([&] { (void)CpuOps::compare(CompareOp::Equal, a, b); },
              ThrowsMessage<DTypeError>(HasSubstr("equal: dtypes differ: lhs f32 vs rhs i32")));
}

TEST(ComparisonPrimitiveErrors, BoolOpsNeedBool) {
  auto f = CpuOps::full(Shape{2}, 1.0, DType::F32, {});
  auto b = CpuOps::full(Shape{2}, 1.0, DType::Bool, {});
  EXPECT_THAT(
      [&] { (void)CpuOps::bool_not(f); },
      ThrowsMessage<DTypeError>(HasSubstr("bool_not: the input must be a bool tensor, got f32")));
  EXPECT_THAT([&] { (void)CpuOps::bool_and(b, f); },
              ThrowsMessage<DTypeError>(HasSubstr("bool_and: rhs must be a bool tensor, got f32")));
}

TEST(ComparisonPrimitiveErrors, MaskMustBeBool) {
  auto x = CpuOps::full(Shape{2}, 1.0, DType::F32, {});
  auto m = CpuOps::full(Shape{2}, 1.0, DType::I32, {});
  EXPECT_THAT(
      [&] { (void)CpuOps::mask_where(x, m, x); },
      ThrowsMessage<DTypeError>(HasSubstr("mask_where: mask must be a bool tensor, got i32")));
  EXPECT_THAT(
      [&] { (void)CpuOps::mask_fill(x, m, 0.0); },
      ThrowsMessage<DTypeError>(HasSubstr("mask_fill: mask must be a bool tensor, got i32")));
}

TEST(ComparisonPrimitiveErrors, MaskWhereValueDTypeMustMatch) {
  auto x = CpuOps::full(Shape{2}, 1.0, DType::F32, {});
  auto m = CpuOps::full(Shape{2}, 1.0, DType::Bool, {});
  auto v = CpuOps::full(Shape{2}, 1.0, DType::I32, {});
  EXPECT_THAT(
      [&] { (void)CpuOps::mask_where(x, m, v); },
      ThrowsMessage<DTypeError>(HasSubstr("mask_where: dtypes differ: x f32 vs value i32")));
}

}  // namespace
