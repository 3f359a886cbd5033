// The rank-erased plans of the derived shape ops (kiln/tensor/derived.hpp), which the typed
// Tensor (tests in shape_test.cpp, sort_test.cpp) and the JS bindings both apply. Expected
// plans are worked out by hand from torch's definitions (torch.narrow, chunk, split,
// topk, flatten, squeeze, unsqueeze, permute, Tensor.repeat, stack).
#include "kiln/tensor/derived.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

using namespace kiln;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

using Ints = std::vector<std::int64_t>;
using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The pieces of a plan as {start, length} pairs, for one EXPECT_EQ.
Pairs pieces(const derived::SplitPlan& plan) {
  Pairs out;
  for (const auto& p : plan.pieces) out.emplace_back(p.start, p.length);
  return out;
}

}  // namespace

TEST(DerivedNarrow, RangesKeepLeadingDimsWholeAndCutTheDim) {
  const auto ranges = derived::narrow_ranges(Shape({2, 5}), -1, 1, 3);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].start, 0);
  EXPECT_FALSE(ranges[0].end.has_value());
  EXPECT_EQ(ranges[0].step, 1);
  EXPECT_EQ(ranges[1].start, 1);
  EXPECT_EQ(ranges[1].end, 4);
  EXPECT_EQ(ranges[1].step, 1);
}

TEST(DerivedNarrow, EmptyPieceAtTheEndIsAllowed) {
  const auto ranges = derived::narrow_ranges(Shape({4}), 0, 4, 0);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].start, 4);
  EXPECT_EQ(ranges[0].end, 4);
}

TEST(DerivedNarrow, OutOfBoundsNamesTheCallersOp) {
  EXPECT_THAT([] { derived::narrow_ranges(Shape({7}), 0, 5, 3); },
              ThrowsMessage<IndexError>(
                  HasSubstr("narrow: start 5 and length 3 are out of bounds for dim 0 of size 7")));
  EXPECT_THAT([] { derived::narrow_ranges(Shape({7}), 0, -1, 1, "myNarrow"); },
              ThrowsMessage<IndexError>(HasSubstr("myNarrow: start -1 and length 1")));
  EXPECT_THAT(
      [] { derived::narrow_ranges(Shape({7}), 1, 0, 1); },
      ThrowsMessage<IndexError>(HasSubstr(
          "narrow: dim 1 is out of range for a tensor of rank 1 (expected -1 <= dim < 1)")));
}

TEST(DerivedChunk, PiecesOfCeilSizeLastSmaller) {
  // torch.arange(7).chunk(3): sizes 3, 3, 1.
  const auto plan = derived::chunk_plan(Shape({2, 7}), 3, -1);
  EXPECT_EQ(plan.dim, 1);
  EXPECT_EQ(pieces(plan), (Pairs{{0, 3}, {3, 3}, {6, 1}}));
}

TEST(DerivedChunk, MayGiveFewerPiecesAndOneForAnEmptyDim) {
  // torch.arange(4).chunk(6) has 4 pieces of 1; torch.zeros(0).chunk(2) has one empty piece.
  EXPECT_EQ(pieces(derived::chunk_plan(Shape({4}), 6, 0)), (Pairs{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
  EXPECT_EQ(pieces(derived::chunk_plan(Shape({0, 3}), 2, 0)), (Pairs{{0, 0}}));
}

TEST(DerivedChunk, ZeroChunksThrows) {
  EXPECT_THAT([] { derived::chunk_plan(Shape({4}), 0, 0); },
              ThrowsMessage<ValueError>(HasSubstr("chunk: chunks must be >= 1, got 0")));
}

TEST(DerivedSplit, PiecesOfSplitSizeLastSmaller) {
  EXPECT_EQ(pieces(derived::split_plan(Shape({7}), 4, 0)), (Pairs{{0, 4}, {4, 3}}));
  EXPECT_EQ(pieces(derived::split_plan(Shape({7}), 10, 0)), (Pairs{{0, 7}}));
  EXPECT_THAT([] { derived::split_plan(Shape({7}), 0, 0); },
              ThrowsMessage<ValueError>(HasSubstr("split: split_size must be >= 1, got 0")));
}

TEST(DerivedSplitWithSizes, PiecesInOrderEmptyOnesKept) {
  const Ints sizes{2, 0, 5};
  const auto plan = derived::split_with_sizes_plan(Shape({3, 7}), sizes, 1);
  EXPECT_EQ(plan.dim, 1);
  EXPECT_EQ(pieces(plan), (Pairs{{0, 2}, {2, 0}, {2, 5}}));
}

TEST(DerivedSplitWithSizes, WrongSumOrSizeThrows) {
  EXPECT_THAT(
      [] {
        derived::split_with_sizes_plan(Shape({7}), Ints{3, 3}, 0, "splitWithSizes");
      },
      ThrowsMessage<ShapeError>(HasSubstr("splitWithSizes: sizes sum to 6, dim 0 has size 7")));
  EXPECT_THAT(
      [] {
        derived::split_with_sizes_plan(Shape({7}), Ints{8, -1}, 0);
      },
      ThrowsMessage<ValueError>(HasSubstr("split_with_sizes: size 0 is 8, expected 0..7")));
}

TEST(DerivedTopk, NormalisesDimAndChecksK) {
  EXPECT_EQ(derived::topk_dim(Shape({2, 3}), 2, -1), 1);
  EXPECT_EQ(derived::topk_dim(Shape({2, 3}), 0, 0), 0);
  EXPECT_THAT(
      [] {
        derived::topk_dim(Shape({2, 3}), 4, -1);
      },
      ThrowsMessage<IndexError>(
          HasSubstr("topk: k = 4 is out of range for dim -1 of size 3 (shape [2, 3])")));
}

TEST(DerivedFlatten, MergesTheDimRange) {
  const auto plan = derived::flatten_plan(Shape({2, 3, 4}), -2, -1);
  EXPECT_EQ(plan.start, 1);
  EXPECT_EQ(plan.end, 2);
  EXPECT_EQ(plan.shape, Shape({2, 12}));
  EXPECT_EQ(derived::flatten_plan(Shape({2, 3, 4}), 0, -1).shape, Shape({24}));
  EXPECT_EQ(derived::flatten_plan(Shape({2, 3, 4}), 1, 1).shape, Shape({2, 3, 4}));
}

TEST(DerivedFlatten, RankZeroBecomesOneElementAndStartAfterEndThrows) {
  // torch.tensor(3.).flatten().shape == (1,)
  EXPECT_EQ(derived::flatten_plan(Shape(std::vector<std::int64_t>{}), 0, -1).shape, Shape({1}));
  EXPECT_THAT(
      [] {
        derived::flatten_plan(Shape({2, 3, 4}), 2, 1);
      },
      ThrowsMessage<IndexError>(HasSubstr("flatten: start dim 2 is after end dim 1")));
}

TEST(DerivedSqueeze, SqueezeAndUnsqueezeShapes) {
  EXPECT_EQ(derived::unsqueeze_dim_shape(Shape({2, 3}), 1), Shape({2, 1, 3}));
  EXPECT_EQ(derived::unsqueeze_dim_shape(Shape({2, 3}), -1), Shape({2, 3, 1}));
  EXPECT_EQ(derived::unsqueeze_dim_shape(Shape(std::vector<std::int64_t>{}), 0), Shape({1}));
  EXPECT_EQ(derived::unsqueeze_shape(Shape({3}), 3), Shape({1, 1, 3}));
  EXPECT_EQ(derived::squeeze_dim_shape(Shape({1, 3, 1, 2}), -2), Shape({1, 3, 2}));
  EXPECT_EQ(derived::squeeze_shape(Shape({1, 3, 1, 2})), Shape({3, 2}));
  EXPECT_EQ(derived::squeeze_shape(Shape({1})).rank(), 0u);
}

TEST(DerivedSqueeze, ErrorsNameTheOp) {
  EXPECT_THAT(
      [] {
        derived::squeeze_dim_shape(Shape({1, 3, 1, 2}), 1, "squeezeDim");
      },
      ThrowsMessage<ShapeError>(
          HasSubstr("squeezeDim: dim 1 has size 3, expected 1 (shape [1, 3, 1, 2])")));
  EXPECT_THAT(
      [] {
        derived::unsqueeze_dim_shape(Shape({2, 3, 4}), 4);
      },
      ThrowsMessage<IndexError>(
          HasSubstr("unsqueeze_dim: dim 4 is out of range for a tensor of rank 4 (expected -4 <= "
                    "dim < 4)")));
  EXPECT_THAT(
      [] {
        derived::unsqueeze_shape(Shape({2, 3}), 1);
      },
      ThrowsMessage<RankError>(HasSubstr("unsqueeze: cannot unsqueeze shape [2, 3]")));
}

TEST(DerivedPermute, AxesOfSwapTransposeAndPermute) {
  EXPECT_EQ(derived::swap_dims_axes(Shape({2, 3, 4}), 0, -1), (Ints{2, 1, 0}));
  EXPECT_EQ(derived::transpose_axes(Shape({2, 3, 4})), (Ints{0, 2, 1}));
  EXPECT_EQ(derived::permute_axes(Shape({2, 3, 4}), Ints{-1, 0, 1}), (Ints{2, 0, 1}));
}

TEST(DerivedPermute, BadAxesThrow) {
  EXPECT_THAT([] { derived::transpose_axes(Shape({3})); },
              ThrowsMessage<RankError>(HasSubstr("transpose: needs rank >= 2, got shape [3]")));
  EXPECT_THAT(
      [] {
        derived::permute_axes(Shape({2, 3, 4}), Ints{0, 0, 1});
      },
      ThrowsMessage<IndexError>(HasSubstr("permute: dim 0 appears twice in the axes")));
  EXPECT_THAT(
      [] {
        derived::permute_axes(Shape({2, 3, 4}), Ints{0, 1});
      },
      ThrowsMessage<RankError>(HasSubstr("permute: expected 3 axes for shape [2, 3, 4], got 2")));
  EXPECT_THAT(
      [] {
        derived::swap_dims_axes(Shape({2, 3}), 0, 2, "swapDims");
      },
      ThrowsMessage<IndexError>(HasSubstr("swapDims: dim 2 is out of range")));
}

TEST(DerivedRepeat, StepsSkipCountsOfOne) {
  const auto steps = derived::repeat_plan(Shape({2, 1, 3}), Ints{2, 1, 4});
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].dim, 0);
  EXPECT_EQ(steps[0].times, 2);
  EXPECT_EQ(steps[1].dim, 2);
  EXPECT_EQ(steps[1].times, 4);
  EXPECT_TRUE(derived::repeat_plan(Shape({2, 1}), Ints{1, 1}).empty());
}

TEST(DerivedRepeat, WrongCountOrNegativeThrows) {
  EXPECT_THAT(
      [] {
        derived::repeat_plan(Shape({2, 1}), Ints{2});
      },
      ThrowsMessage<RankError>(HasSubstr("repeat: expected 2 repeat counts, got 1")));
  EXPECT_THAT(
      [] {
        derived::repeat_plan(Shape({2, 1}), Ints{1, -1});
      },
      ThrowsMessage<ValueError>(HasSubstr("repeat: times[1] must be >= 0, got -1")));
}

TEST(DerivedFlip, DimsNormalised) {
  EXPECT_EQ(derived::flip_dims(Shape({2, 3}), Ints{0, -1}), (Ints{0, 1}));
  EXPECT_THAT(
      [] {
        derived::flip_dims(Shape({2, 3}), Ints{2});
      },
      ThrowsMessage<IndexError>(HasSubstr("flip: dim 2 is out of range")));
}

TEST(DerivedStack, NewDimAndUnsqueezedShape) {
  const std::vector<Shape> shapes{Shape({2, 3}), Shape({2, 3})};
  const auto plan = derived::stack_plan(shapes, -1);
  EXPECT_EQ(plan.dim, 2);
  EXPECT_EQ(plan.unsqueezed, Shape({2, 3, 1}));
  EXPECT_EQ(derived::stack_plan(shapes, 0).unsqueezed, Shape({1, 2, 3}));
}

TEST(DerivedStack, NoTensorsDifferentShapesOrBadDimThrow) {
  EXPECT_THAT(
      [] { derived::stack_plan({}, 0); },
      ThrowsMessage<ValueError>(HasSubstr("stack: expected at least one tensor, got none")));
  const std::vector<Shape> differ{Shape({1, 2}), Shape({2, 2})};
  EXPECT_THAT([&] { derived::stack_plan(differ, 0); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "stack: all tensors must have the same shape: tensor 0 is [1, 2], tensor 1 is "
                  "[2, 2]")));
  const std::vector<Shape> same{Shape({2}), Shape({2})};
  EXPECT_THAT(
      [&] { derived::stack_plan(same, 2); },
      ThrowsMessage<IndexError>(HasSubstr("stack: dim 2 is out of range for a tensor of rank 2")));
}
