// Int (i32) arithmetic with PyTorch's semantics: floor vs truncating division, remainder vs
// fmod, exact power, two's-complement wrap-around, and the division-by-zero errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

template <class B>
Tensor<B, 1, Int> ints(const std::vector<std::int32_t>& v) {
  return Tensor<B, 1, Int>::from_data(TensorData(Shape{static_cast<std::int64_t>(v.size())}, v),
                                      test::device<B>());
}

TensorData expect(const std::vector<std::int32_t>& v) {
  return TensorData(Shape{static_cast<std::int64_t>(v.size())}, v);
}

template <class B>
class IntOpsTest : public ::testing::Test {};
TYPED_TEST_SUITE(IntOpsTest, test::AllBackends);

TYPED_TEST(IntOpsTest, FloorAndTruncDivisionMatchPyTorch) {
  const auto c = test::load_case("int_division_floor_vs_trunc");
  auto a = Tensor<TypeParam, 1, Int>::from_data(c.input("a"));
  auto b = Tensor<TypeParam, 1, Int>::from_data(c.input("b"));
  (a / b).into_data().assert_eq(c.expected("floor_div"));
  a.div_trunc(b).into_data().assert_eq(c.expected("trunc_div"));
}

TYPED_TEST(IntOpsTest, RemainderAndFmodMatchPyTorch) {
  const auto c = test::load_case("remainder_vs_fmod_sign");
  auto a = Tensor<TypeParam, 1, Int>::from_data(c.input("a"));
  auto b = Tensor<TypeParam, 1, Int>::from_data(c.input("b"));
  (a % b).into_data().assert_eq(c.expected("remainder_int"));
  a.fmod(b).into_data().assert_eq(c.expected("fmod_int"));
}

TYPED_TEST(IntOpsTest, ArithmeticByHand) {
  auto a = ints<TypeParam>({7, -3, 0, 12});
  auto b = ints<TypeParam>({2, 5, -4, -12});
  (a + b).into_data().assert_eq(expect({9, 2, -4, 0}));
  (a - b).into_data().assert_eq(expect({5, -8, 4, 24}));
  (a * b).into_data().assert_eq(expect({14, -15, 0, -144}));
  a.max_pair(b).into_data().assert_eq(expect({7, 5, 0, 12}));
  a.min_pair(b).into_data().assert_eq(expect({2, -3, -4, -12}));
}

TYPED_TEST(IntOpsTest, ScalarsOnEitherSide) {
  auto a = ints<TypeParam>({-7, 7, 1, 3});
  (a / 2).into_data().assert_eq(expect({-4, 3, 0, 1}));
  (20 / a).into_data().assert_eq(expect({-3, 2, 20, 6}));
  (a % 3).into_data().assert_eq(expect({2, 1, 1, 0}));
  (a % -3).into_data().assert_eq(expect({-1, -2, -2, 0}));
  (10 - a).into_data().assert_eq(expect({17, 3, 9, 7}));
  (a * 3).into_data().assert_eq(expect({-21, 21, 3, 9}));
  (a + 1.0).into_data().assert_eq(expect({-6, 8, 2, 4}));  // an integral double is fine
}

TYPED_TEST(IntOpsTest, LongVectorsCoverTheTail) {
  std::vector<std::int32_t> a, b, sum, floor_div;
  for (int i = 0; i < 37; ++i) {
    a.push_back(i * 7 - 100);
    b.push_back(i % 4 + 1);
  }
  for (int i = 0; i < 37; ++i) {
    sum.push_back(a[i] + b[i]);
    const std::int32_t q = a[i] / b[i];
    floor_div.push_back((a[i] % b[i] != 0 && a[i] < 0) ? q - 1 : q);
  }
  (ints<TypeParam>(a) + ints<TypeParam>(b)).into_data().assert_eq(expect(sum));
  (ints<TypeParam>(a) / ints<TypeParam>(b)).into_data().assert_eq(expect(floor_div));
}

TYPED_TEST(IntOpsTest, BroadcastColumnByRow) {
  auto col = Tensor<TypeParam, 2, Int>::from_data({{10}, {-10}});
  auto row = Tensor<TypeParam, 2, Int>::from_data({{3, -3, 4}});
  (col / row).into_data().assert_eq(TensorData::from<std::int32_t>({{3, -4, 2}, {-4, 3, -3}}));
  (col % row).into_data().assert_eq(TensorData::from<std::int32_t>({{1, -2, 2}, {2, -1, 2}}));
}

TYPED_TEST(IntOpsTest, OverflowWraps) {
  auto a = ints<TypeParam>({kMax, kMin, 65536, kMin});
  auto b = ints<TypeParam>({1, -1, 65536, kMin});
  (a + b).into_data().assert_eq(expect({kMin, kMax, 131072, 0}));
  (a * b).into_data().assert_eq(expect({kMax, kMin, 0, 0}));
  (a - b).into_data().assert_eq(expect({kMax - 1, kMin + 1, 0, 0}));
}

TYPED_TEST(IntOpsTest, MinDividedByMinusOneWraps) {
  auto a = ints<TypeParam>({kMin, kMin, 5});
  auto b = ints<TypeParam>({-1, -1, -1});
  (a / b).into_data().assert_eq(expect({kMin, kMin, -5}));
  a.div_trunc(b).into_data().assert_eq(expect({kMin, kMin, -5}));
  (a % b).into_data().assert_eq(expect({0, 0, 0}));
  a.fmod(b).into_data().assert_eq(expect({0, 0, 0}));
}

TYPED_TEST(IntOpsTest, PowiIsExact) {
  auto a = ints<TypeParam>({3, -2, 0, 7, -1, 2, 46341});
  a.powi_scalar(0).into_data().assert_eq(expect({1, 1, 1, 1, 1, 1, 1}));
  a.powi_scalar(3).into_data().assert_eq(
      expect({27, -8, 0, 343, -1, 8,
              static_cast<std::int32_t>(static_cast<std::uint32_t>(46341u * 46341u * 46341u))}));
  ints<TypeParam>({3}).powi_scalar(19).into_data().assert_eq(expect({1162261467}));
  // Beyond i32: wraps as PyTorch's int32 pow does.
  ints<TypeParam>({2, -2}).powi_scalar(31).into_data().assert_eq(expect({kMin, kMin}));
  ints<TypeParam>({2}).powi_scalar(32).into_data().assert_eq(expect({0}));
}

TYPED_TEST(IntOpsTest, NegAbsSign) {
  auto a = ints<TypeParam>({-5, 0, 7, kMin, kMax});
  a.neg().into_data().assert_eq(expect({5, 0, -7, kMin, -kMax}));
  a.abs().into_data().assert_eq(expect({5, 0, 7, kMin, kMax}));
  a.sign().into_data().assert_eq(expect({-1, 0, 1, -1, 1}));
  (-a).into_data().assert_eq(expect({5, 0, -7, kMin, -kMax}));
}

TYPED_TEST(IntOpsTest, Clamp) {
  auto a = ints<TypeParam>({-5, 0, 7, kMin, kMax});
  a.clamp(-1, 3).into_data().assert_eq(expect({-1, 0, 3, -1, 3}));
  a.clamp_min(0).into_data().assert_eq(expect({0, 0, 7, 0, kMax}));
  a.clamp_max(0).into_data().assert_eq(expect({-5, 0, 0, kMin, 0}));
}

TYPED_TEST(IntOpsTest, RvalueReusesTheBuffer) {
  auto a = ints<TypeParam>({1, 2, 3});
  const auto before = memory_stats().total_allocations;
  auto b = std::move(a) * 4;
  auto c = std::move(b).neg();
  EXPECT_EQ(memory_stats().total_allocations, before);
  c.into_data().assert_eq(expect({-4, -8, -12}));
}

// ---------------------------------------------------------------- errors

TYPED_TEST(IntOpsTest, DivisionByZeroThrows) {
  auto a = ints<TypeParam>({1, 2, 3});
  auto b = ints<TypeParam>({1, 0, 3});
  EXPECT_THAT(
      [&] { (void)(a / b); },
      ThrowsMessage<ValueError>(HasSubstr("div: integer division by zero: divisor element 1")));
  EXPECT_THAT([&] { (void)a.div_trunc(b); },
              ThrowsMessage<ValueError>(HasSubstr("div_trunc: integer division by zero")));
  EXPECT_THAT([&] { (void)(a % b); },
              ThrowsMessage<ValueError>(HasSubstr("remainder: integer division by zero")));
  EXPECT_THAT([&] { (void)a.fmod(b); },
              ThrowsMessage<ValueError>(HasSubstr("fmod: integer division by zero")));
}

TYPED_TEST(IntOpsTest, DivisionByZeroScalarThrows) {
  auto a = ints<TypeParam>({1, 2, 3});
  EXPECT_THAT([&] { (void)(a / 0); },
              ThrowsMessage<ValueError>(
                  HasSubstr("div: integer division by zero: the scalar divisor is 0")));
  EXPECT_THAT([&] { (void)(a % 0); },
              ThrowsMessage<ValueError>(HasSubstr("remainder: integer division by zero")));
  auto z = ints<TypeParam>({4, 0});
  EXPECT_THAT(
      [&] { (void)(8 / z); },
      ThrowsMessage<ValueError>(HasSubstr("div: integer division by zero: divisor element 1")));
}

TYPED_TEST(IntOpsTest, EmptyDivisionByZeroIsFine) {
  auto a = Tensor<TypeParam, 1, Int>::zeros({0});
  EXPECT_EQ((a / 0).num_elements(), 0);
}

TYPED_TEST(IntOpsTest, NegativeExponentThrows) {
  auto a = ints<TypeParam>({2, 3});
  EXPECT_THAT([&] { (void)a.powi_scalar(-1); },
              ThrowsMessage<ValueError>(HasSubstr(
                  "powi: integers to negative integer powers are not allowed: exponent -1")));
}

TYPED_TEST(IntOpsTest, NonIntegerScalarThrows) {
  auto a = ints<TypeParam>({2, 3});
  EXPECT_THAT([&] { (void)(a + 2.5); },
              ThrowsMessage<ValueError>(HasSubstr(
                  "add: an Int tensor needs an integer scalar in the i32 range, got 2.5")));
  EXPECT_THAT([&] { (void)(a * 1e10); },
              ThrowsMessage<ValueError>(HasSubstr("mul: an Int tensor needs an integer scalar")));
}

TEST(IntOpsPrimitiveErrors, NegativeExponentTensorThrows) {
  auto a = CpuOps::full(Shape{3}, 2.0, DType::I32, {});
  auto e = CpuOps::from_data(TensorData::from<std::int32_t>({1, -2, 3}), DType::I32, {});
  EXPECT_THAT(
      [&] { (void)CpuOps::binary(BinaryOp::Pow, a, e); },
      ThrowsMessage<ValueError>(HasSubstr(
          "powi: integers to negative integer powers are not allowed: exponent element 1")));
}

TEST(IntOpsPrimitive, PowTensorExponents) {
  auto a = CpuOps::from_data(TensorData::from<std::int32_t>({2, -3, 5, 0}), DType::I32, {});
  auto e = CpuOps::from_data(TensorData::from<std::int32_t>({10, 3, 0, 0}), DType::I32, {});
  CpuOps::into_data(CpuOps::binary(BinaryOp::Pow, a, e))
      .assert_eq(TensorData::from<std::int32_t>({1024, -27, 1, 1}));
}

}  // namespace
