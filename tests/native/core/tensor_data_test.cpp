#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(TensorDataTest, FromNestedListsGivesShapeAndRowMajorValues) {
  const auto d = TensorData::from<float>({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(d.shape, Shape({2, 3}));
  EXPECT_EQ(d.dtype, DType::F32);
  EXPECT_EQ(d.to_vec<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(TensorDataTest, IntAndBoolNestedLists) {
  const auto i = TensorData::from<std::int32_t>({{1, -2}, {3, 4}});
  EXPECT_EQ(i.dtype, DType::I32);
  EXPECT_EQ(i.to_vec<std::int32_t>(), (std::vector<std::int32_t>{1, -2, 3, 4}));
  const auto b = TensorData::from<bool>({true, false, true});
  EXPECT_EQ(b.dtype, DType::Bool);
  EXPECT_EQ(b.shape, Shape({3}));
  EXPECT_EQ(b.value_as_double(1), 0.0);
  EXPECT_EQ(b.value_as_double(2), 1.0);
}

TEST(TensorDataTest, RaggedListIsRejected) {
  EXPECT_THAT([] { TensorData::from<float>({{1.f, 2.f}, {3.f}}); },
              ThrowsMessage<ShapeError>(HasSubstr("ragged nested list: expected 2 elements")));
}

TEST(TensorDataTest, WrongValueCountIsRejected) {
  EXPECT_THAT([] { TensorData(Shape({2, 2}), std::vector<float>{1.f, 2.f, 3.f}); },
              ThrowsMessage<ShapeError>(HasSubstr("shape [2, 2] needs 4 values, got 3")));
}

TEST(TensorDataTest, ToVecOfTheWrongTypeIsRejected) {
  const auto d = TensorData::from<float>({1.f});
  EXPECT_THAT([&] { d.to_vec<std::int32_t>(); },
              ThrowsMessage<DTypeError>(HasSubstr("expected dtype i32, the data is f32")));
}

TEST(TensorDataTest, ConvertTruncatesTowardZeroAndTestsNonZeroForBool) {
  const auto d = TensorData::from<float>({-1.7f, -0.5f, 0.f, 2.9f});
  EXPECT_EQ(d.convert(DType::I32).to_vec<std::int32_t>(), (std::vector<std::int32_t>{-1, 0, 0, 2}));
  const auto b = d.convert(DType::Bool);
  EXPECT_EQ(b.value_as_double(0), 1.0);
  EXPECT_EQ(b.value_as_double(2), 0.0);
}

TEST(TensorDataTest, ConvertOfNanToIntIsRejected) {
  const auto d = TensorData::from<float>({NAN});
  EXPECT_THAT([&] { d.convert(DType::I32); },
              ThrowsMessage<ValueError>(HasSubstr("does not fit in i32")));
}

TEST(TensorDataTest, ApproxEqAcceptsWithinToleranceAndMatchingNonFinite) {
  const auto got = TensorData::from<float>({1.0f, 100.f, NAN, INFINITY});
  const auto want = TensorData::from<float>({1.00001f, 100.009f, NAN, INFINITY});
  EXPECT_NO_THROW(got.assert_approx_eq(want, Tolerance::rel_abs(1e-4, 1e-4)));
}

TEST(TensorDataTest, ApproxEqRejectsOutsideToleranceNamingTheElement) {
  const auto got = TensorData::from<float>({1.f, 2.f, 3.f});
  const auto want = TensorData::from<float>({1.f, 2.5f, 3.f});
  EXPECT_THAT([&] { got.assert_approx_eq(want, Tolerance::absolute(0.1)); },
              ThrowsMessage<ValueError>(HasSubstr("1 of 3 elements differ")));
  EXPECT_THAT([&] { got.assert_approx_eq(want, Tolerance::absolute(0.1)); },
              ThrowsMessage<ValueError>(HasSubstr("first at flat index 1")));
}

TEST(TensorDataTest, ApproxEqRejectsNanAgainstNumberAndWrongInfinity) {
  const auto nan = TensorData::from<float>({NAN});
  const auto one = TensorData::from<float>({1.f});
  EXPECT_THROW(nan.assert_approx_eq(one, Tolerance::absolute(1e9)), ValueError);
  EXPECT_THROW(one.assert_approx_eq(nan, Tolerance::absolute(1e9)), ValueError);
  const auto pinf = TensorData::from<float>({INFINITY});
  const auto ninf = TensorData::from<float>({-INFINITY});
  EXPECT_THROW(pinf.assert_approx_eq(ninf, Tolerance::absolute(1e9)), ValueError);
}

TEST(TensorDataTest, ApproxEqRejectsDifferentShapes) {
  const auto a = TensorData::from<float>({1.f, 2.f});
  const auto b = TensorData::from<float>({{1.f, 2.f}});
  EXPECT_THAT([&] { a.assert_approx_eq(b, Tolerance::exact()); },
              ThrowsMessage<ValueError>(HasSubstr("shapes differ: got [2], expected [1, 2]")));
}

TEST(TensorDataTest, AssertEqChecksDtype) {
  const auto f = TensorData::from<float>({1.f});
  const auto i = TensorData::from<std::int32_t>({1});
  EXPECT_THAT([&] { f.assert_eq(i); },
              ThrowsMessage<ValueError>(HasSubstr("dtypes differ: got f32, expected i32")));
}

TEST(TensorDataTest, PrintsNestedByRank) {
  std::ostringstream out;
  out << TensorData::from<float>({{1.f, 2.5f}, {-3.f, 4.f}});
  EXPECT_EQ(out.str(), "[[1.0, 2.5],\n [-3.0, 4.0]]");
}
