// The checked size arithmetic of kiln/core/checked.hpp and its use in core (TensorData,
// Shape): every sum, product and difference that overflows int64, every element count past
// 2^31 - 1 and every byte count past half of size_t's range is a LimitError naming the op,
// the operands and the limit. Expected values are worked by hand in the comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "kiln/core/checked.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();  // 9223372036854775807

TEST(CheckedArithmetic, ExactResultsBelowTheLimits) {
  // 3037000499² = 9223372030926249001 <= 2^63 - 1 (and 3037000500² is not).
  EXPECT_EQ(checked::mul("op", 3037000499, 3037000499, "x"), 9223372030926249001);
  EXPECT_EQ(checked::add("op", kMax - 1, 1, "x"), kMax);
  EXPECT_EQ(checked::sub("op", -kMax, 1, "x"), std::numeric_limits<std::int64_t>::min());
  const std::array<std::int64_t, 3> dims{1024, 1024, 2047};  // 2^20 · 2047 = 2146435072
  EXPECT_EQ(checked::numel("op", dims, "shape"), 2146435072);
  const std::array<std::int64_t, 3> empty{0, kMax, 1};
  EXPECT_EQ(checked::product("op", empty, "shape"), 0);
  EXPECT_EQ(checked::bytes("op", 1000, 4, "buffer"), 4000u);
}

TEST(CheckedArithmetic, ProductOverflowNamesOpOperandsAndLimit) {
  EXPECT_THAT([] { checked::mul("conv2d", 3037000500, 3037000500, "dilation · kernel"); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "conv2d: dilation · kernel = 3037000500 · 3037000500 overflows int64 (more than "
                  "9223372036854775807)")));
  EXPECT_THAT([] { checked::mul("op", -4611686018427387905, 2, "x"); },  // -(2^62 + 1) · 2
              ThrowsMessage<LimitError>(HasSubstr("op: x = -4611686018427387905 · 2 overflows")));
}

TEST(CheckedArithmetic, SumAndDifferenceOverflow) {
  EXPECT_THAT([] { checked::add("pad", kMax, 1, "input + padding"); },
              ThrowsMessage<LimitError>(
                  HasSubstr("pad: input + padding = 9223372036854775807 + 1 overflows int64")));
  EXPECT_THAT([] { checked::sub("op", std::numeric_limits<std::int64_t>::min(), 1, "x"); },
              ThrowsMessage<LimitError>(HasSubstr("op: x = -9223372036854775808 - 1 overflows")));
}

TEST(CheckedArithmetic, ProductOfDimsOverflowsEvenBeforeAZero) {
  // 2^32 · 2^32 = 2^64 overflows before the 0 is reached: the prefix is a stride.
  const std::array<std::int64_t, 3> dims{4294967296, 4294967296, 0};
  EXPECT_THAT([&] { checked::product("reshape", dims, "shape"); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "reshape: shape [4294967296, 4294967296, 0] has more elements than int64 holds")));
}

TEST(CheckedArithmetic, ElementCountPastTheLimit) {
  // 65536² = 4294967296 > 2^31 - 1 = 2147483647.
  const std::array<std::int64_t, 2> dims{65536, 65536};
  EXPECT_THAT([&] { checked::numel("adaptive_avg_pool2d", dims, "output size"); },
              ThrowsMessage<LimitError>(
                  HasSubstr("adaptive_avg_pool2d: output size [65536, 65536] gives 4294967296 "
                            "elements, more than the limit of 2147483647")));
  // 2^31 exactly: one past the limit.
  EXPECT_THAT([] { checked::elements("op", 2147483648, "x"); },
              ThrowsMessage<LimitError>(HasSubstr("more than the limit of 2147483647")));
  EXPECT_NO_THROW(checked::elements("op", 2147483647, "x"));
}

TEST(CheckedArithmetic, ByteCountPastWhatSizeTAddresses) {
  // 2^62 · 4 = 2^64 wraps in uint64; the limit is SIZE_MAX / 2 (2^63 - 1 natively, 2^31 - 1
  // in wasm32).
  EXPECT_THAT([] { checked::bytes("op", std::int64_t{1} << 62, 4, "the scratch buffer"); },
              ThrowsMessage<LimitError>(AllOf(
                  HasSubstr("op: the scratch buffer needs 4611686018427387904 · 4 bytes"),
                  HasSubstr("more than the limit of"))));
  const auto limit = static_cast<std::int64_t>(std::numeric_limits<std::size_t>::max() / 2);
  EXPECT_THAT([&] { checked::bytes("op", limit, 2, "b"); },
              ThrowsMessage<LimitError>(HasSubstr("op: b needs")));
  EXPECT_THAT([] { checked::buffer("op", 2147483648, 1, "b"); },  // the element limit first
              ThrowsMessage<LimitError>(HasSubstr("op: b gives 2147483648 elements")));
}

TEST(CheckedTensorData, ByteCountsAreComparedWithoutWrapping) {
  // Shape [2^30] of f32 needs 2^32 bytes: in wasm32 a size_t product wrapped to 0 and an
  // empty buffer was accepted. Compared by division now, everywhere.
  EXPECT_THAT(([] { TensorData(Shape{std::int64_t{1} << 30}, DType::F32, {}); }),
              ThrowsMessage<ShapeError>(
                  HasSubstr("TensorData: shape [1073741824] of f32 needs 4294967296 bytes, got 0")));
  // 2^62 · 4 overflows 64 bits.
  EXPECT_THAT(([] { TensorData(Shape{std::int64_t{1} << 62}, DType::I32, {}); }),
              ThrowsMessage<ShapeError>(HasSubstr("needs more than 2^64 bytes, got 0")));
  // 3 bytes for one f32: not a whole element.
  EXPECT_THAT(([] { TensorData(Shape{1}, DType::F32, std::vector<std::uint8_t>(3)); }),
              ThrowsMessage<ShapeError>(HasSubstr("needs 4 bytes, got 3")));
  EXPECT_THAT(([] { TensorData(Shape{std::int64_t{1} << 32}, std::vector<float>{}); }),
              ThrowsMessage<ShapeError>(HasSubstr("shape [4294967296] needs 4294967296 values, got 0")));
}

TEST(CheckedShape, StridesOfAHugeEmptyShapeDoNotOverflow) {
  // [0, 2^31 - 1 (x4)]: the product of the last four dims is ~2^124; strides saturate
  // instead of overflowing (they address nothing: the tensor is empty).
  const Shape s{0, 2147483647, 2147483647, 2147483647, 2147483647};
  EXPECT_EQ(s.num_elements(), 0);
  const auto st = s.strides();
  EXPECT_EQ(st[4], 1);
  EXPECT_EQ(st[3], 2147483647);
  EXPECT_EQ(st[2], 4611686014132420609);  // (2^31 - 1)²
  EXPECT_EQ(st[1], kMax);                 // saturated
  EXPECT_EQ(st[0], kMax);
}

}  // namespace
}  // namespace kiln
