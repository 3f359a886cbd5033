#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/kiln.hpp"

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(ShapeTest, NumElementsIsTheProductOfDims) {
  EXPECT_EQ(Shape({2, 3, 4}).num_elements(), 24);
  EXPECT_EQ(Shape({5, 0, 7}).num_elements(), 0);
  EXPECT_EQ(Shape().num_elements(), 1);
}

TEST(ShapeTest, RowMajorStrides) {
  const auto s = Shape({2, 3, 4}).strides();
  EXPECT_EQ(s[0], 12);
  EXPECT_EQ(s[1], 4);
  EXPECT_EQ(s[2], 1);
}

TEST(ShapeTest, PrintsAsBracketedList) {
  std::ostringstream out;
  out << Shape({2, 3});
  EXPECT_EQ(out.str(), "[2, 3]");
}

TEST(ShapeTest, EqualityComparesRankAndDims) {
  EXPECT_EQ(Shape({2, 3}), Shape({2, 3}));
  EXPECT_FALSE(Shape({2, 3}) == Shape({3, 2}));
  EXPECT_FALSE(Shape({2, 3}) == Shape({2, 3, 1}));
}

TEST(ShapeTest, NegativeDimIsRejected) {
  EXPECT_THAT([] { Shape({2, -1}); },
              ThrowsMessage<ValueError>(HasSubstr("Shape: dim 1 is negative: -1")));
}

TEST(ShapeTest, RankAboveTheLimitIsRejected) {
  EXPECT_THAT([] { Shape({1, 1, 1, 1, 1, 1, 1, 1, 1}); },
              ThrowsMessage<LimitError>(HasSubstr("rank 9 exceeds the maximum rank 8")));
}

TEST(ShapeTest, ElementCountOverflowIsRejected) {
  const Shape huge({1ll << 40, 1ll << 40});
  EXPECT_THAT([&] { (void)huge.num_elements(); },
              ThrowsMessage<LimitError>(HasSubstr("overflows int64")));
}

TEST(ErrorTest, EveryErrorCarriesItsCode) {
  try {
    throw ShapeError("x");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Shape);
    EXPECT_EQ(error_code_name(e.code()), "Shape");
  }
  EXPECT_EQ(error_code_name(IndexError("x").code()), "Index");
  EXPECT_EQ(error_code_name(OutOfMemoryError("x").code()), "OutOfMemory");
}
