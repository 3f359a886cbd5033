// Size overflow in the ops that compute an output extent: pools (1-D, 2-D, adaptive), conv1d,
// conv2d, conv_transpose2d, matmul's broadcast batch, one_hot, repeat, reshape. Each bad
// input is a LimitError (or the ShapeError it always was) naming the op, the operands and
// the limit, thrown before anything is allocated (memory_stats' allocation counter does not
// move), and the engine computes exactly afterwards. Extents are worked by hand in comments
// with PyTorch's formulas (torch.nn.functional.conv2d / pooling_output_shape).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"

namespace kiln {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
namespace F = nn::functional;

constexpr std::int64_t k2p62 = std::int64_t{1} << 62;  // 4611686018427387904
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

template <class B>
class SizeOverflowTest : public ::testing::Test {};
TYPED_TEST_SUITE(SizeOverflowTest, test::AllBackends);

/// [[1, 2], [3, 4]]² = [[7, 10], [15, 22]] exactly, and no buffer left behind by the error.
template <class B>
void expect_engine_exact(std::int64_t live_before) {
  {
    const auto a = Tensor<B, 2>::from_floats({{1.f, 2.f}, {3.f, 4.f}}, test::device<B>());
    a.matmul(a).into_data().assert_eq(TensorData::from({{7.f, 10.f}, {15.f, 22.f}}));
  }
  EXPECT_EQ(memory_stats().live_buffers, live_before);
}

/// Runs `bad` (which must throw E with every piece of `pieces`) and checks that it allocated
/// nothing and left the engine exact. Inputs are made before, by the caller.
template <class B, class E>
void expect_rejected(const std::function<void()>& bad, std::vector<std::string> pieces) {
  const MemoryStats before = memory_stats();
  try {
    bad();
    ADD_FAILURE() << "no error; expected " << ::testing::PrintToString(pieces);
  } catch (const E& e) {
    for (const auto& p : pieces) EXPECT_THAT(e.what(), HasSubstr(p));
  }
  EXPECT_EQ(memory_stats().total_allocations, before.total_allocations) << pieces[0];
  expect_engine_exact<B>(before.live_buffers);
}

template <class B>
Tensor<B, 4> ones4(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return Tensor<B, 4>::ones(Shape{n, c, h, w}, test::device<B>());
}

// ------------------------------------------------------------------ pools

TYPED_TEST(SizeOverflowTest, AdaptiveAvgPool2dOutputPastTheElementLimit) {
  using B = TypeParam;
  const auto x = ones4<B>(1, 1, 4, 4);
  // 65536 · 65536 = 4294967296 per channel (it wrapped to 0 in wasm32's size_t and the
  // kernel wrote out of bounds).
  expect_rejected<B, LimitError>([&] { F::adaptive_avg_pool2d(x, {65536, 65536}); },
                                 {"adaptive_avg_pool2d: output size [65536, 65536] per channel "
                                  "gives 4294967296 elements, more than the limit of 2147483647"});
  // 46341² = 2147488281: the first square past 2^31 - 1.
  expect_rejected<B, LimitError>([&] { F::adaptive_avg_pool2d(x, {46341, 46341}); },
                                 {"gives 2147488281 elements"});
  // Even with no batch (the scales of one plane would still be computed).
  const auto empty = ones4<B>(0, 3, 4, 4);
  expect_rejected<B, LimitError>([&] { F::adaptive_avg_pool2d(empty, {65536, 65536}); },
                                 {"adaptive_avg_pool2d: output size [65536, 65536] per channel"});
  // 2^62 · 4: the product itself overflows.
  expect_rejected<B, LimitError>([&] { F::adaptive_avg_pool2d(x, {k2p62, 4}); },
                                 {"adaptive_avg_pool2d: output size [4611686018427387904, 4] has "
                                  "more elements than int64 holds"});
  // 3 channels of 1024 · 1024 each fit per channel but [1, 3000, 1024, 1024] does not.
  const auto wide = ones4<B>(1, 3000, 1, 1);
  expect_rejected<B, LimitError>(
      [&] { F::adaptive_avg_pool2d(wide, {1024, 1024}); },
      {"adaptive_avg_pool2d: output shape [1, 3000, 1024, 1024] gives 3145728000 elements"});
}

TYPED_TEST(SizeOverflowTest, AdaptiveAvgPool1dOutputPastTheElementLimit) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::ones(Shape{1, 1, 4}, test::device<B>());
  expect_rejected<B, LimitError>([&] { F::adaptive_avg_pool1d(x, 2147483648); },
                                 {"adaptive_avg_pool2d: output size [1, 2147483648] per channel "
                                  "gives 2147483648 elements"});
}

TYPED_TEST(SizeOverflowTest, MaxPool2dWindowOverflow) {
  using B = TypeParam;
  const auto x = ones4<B>(1, 1, 4, 4);
  // dilation 4 · (kernel 2^62 - 1) = 2^64 - 4 overflows.
  MaxPool2dOptions o;
  o.kernel_size = {k2p62, 1};
  o.stride = {1, 1};
  o.dilation = {4, 1};
  expect_rejected<B, LimitError>(
      [&] { F::max_pool2d(x, o); },
      {"max_pool2d: dilation · (kernel_size - 1) = 4 · 4611686018427387903 overflows int64"});
  // kernel 2^63 - 1 allows padding up to kernel / 2 = 2^62 - 1 (so 2 · padding fits):
  // input 4 + 2 · (2^62 - 1) = 2^63 + 2 overflows the sum.
  o.kernel_size = {kMax, 1};
  o.padding = {k2p62 - 1, 0};
  o.dilation = {1, 1};
  expect_rejected<B, LimitError>(
      [&] { F::max_pool2d(x, o); },
      {"max_pool2d: input + 2 · padding = 4 + 9223372036854775806 overflows int64"});
  // the same through max_pool2d_with_indices
  expect_rejected<B, LimitError>([&] { F::max_pool2d_with_indices(x, o); },
                                 {"max_pool2d_with_indices: input + 2 · padding"});
}

TYPED_TEST(SizeOverflowTest, MaxPool2dHugeWindowIsNoFalseAlarm) {
  using B = TypeParam;
  // padding <= kernel / 2 keeps a pool's output no larger than its padded input, so the
  // checks must not reject a large window: kernel 60001, padding 30000 on a 1x1 input gives
  // out = floor((1 + 60000 - 60000 - 1) / 1) + 1 = 1 per dim, the max of the one element.
  const auto x = ones4<B>(1, 1, 1, 1);
  MaxPool2dOptions o;
  o.kernel_size = {60001, 60001};
  o.stride = {1, 1};
  o.padding = {30000, 30000};
  const auto y = F::max_pool2d(x, o);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(y.into_data().template to_vec<float>(), std::vector<float>{1.f});
}

TYPED_TEST(SizeOverflowTest, AvgPool2dCeilModeAndPaddingOverflow) {
  using B = TypeParam;
  const auto x = ones4<B>(1, 1, 4, 4);
  // ceil mode: span (4 - 0 - 1 = 3) + stride - 1 (2^63 - 2) overflows.
  AvgPool2dOptions o;
  o.kernel_size = {1, 1};
  o.stride = {kMax, 1};
  o.ceil_mode = true;
  expect_rejected<B, LimitError>(
      [&] { F::avg_pool2d(x, o); },
      {"avg_pool2d: the ceil mode's span + stride - 1 = 3 + 9223372036854775806 overflows"});
  o = AvgPool2dOptions{};
  o.kernel_size = {1, kMax};
  o.stride = {1, 1};
  o.padding = {0, k2p62 - 1};
  expect_rejected<B, LimitError>(
      [&] { F::avg_pool2d(x, o); },
      {"avg_pool2d: input + 2 · padding = 4 + 9223372036854775806 overflows"});
}

TYPED_TEST(SizeOverflowTest, Pool1dOverflowNamesThe2dOpItRunsOn) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::ones(Shape{1, 1, 4}, test::device<B>());
  F::MaxPool1dOptions o;
  o.kernel_size = k2p62;
  o.stride = 1;
  o.dilation = 4;
  expect_rejected<B, LimitError>([&] { F::max_pool1d(x, o); },
                                 {"max_pool2d: dilation · (kernel_size - 1) = 4 · "
                                  "4611686018427387903 overflows"});
}

// ------------------------------------------------------------------ convolutions

TYPED_TEST(SizeOverflowTest, Conv2dDilationOrPaddingNear2To63) {
  using B = TypeParam;
  const auto x = ones4<B>(1, 1, 5, 5);
  const auto w = ones4<B>(1, 1, 3, 3);
  // dilation 2^62 · (kernel 3 - 1) = 2^63: it wrapped negative and gave a wrong shape.
  const ConvOptions<2> dilated({1, 1}, {0, 0}, {k2p62, 1}, 1);
  expect_rejected<B, LimitError>(
      [&] { conv2d(x, w, std::nullopt, dilated); },
      {"conv2d: dilation · (kernel - 1) in spatial dim 0 = 4611686018427387904 · 2 overflows "
       "int64 (more than 9223372036854775807)"});
  // padding 2^62 on both sides: 5 + 2^62 + 2^62 > 2^63 - 1.
  const ConvOptions<2> padded({1, 1}, {k2p62, 0}, {k2p62, 0}, {1, 1}, 1);
  expect_rejected<B, LimitError>(
      [&] { conv2d(x, w, std::nullopt, padded); },
      {"conv2d: input + padding + padding_end in spatial dim 0 = 4611686018427387909 + "
       "4611686018427387904 overflows"});
  // one side at 2^63 - 1: 5 + (2^63 - 1) overflows.
  const ConvOptions<2> one_side({1, 1}, {0, kMax}, {0, 0}, {1, 1}, 1);
  expect_rejected<B, LimitError>(
      [&] { conv2d(x, w, std::nullopt, one_side); },
      {"conv2d: input + padding in spatial dim 1 = 5 + 9223372036854775807 overflows"});
  // dilation 2^62 + dilation-only extent + 1: (2^62 - 1)·2 + 1 = 2^63 - 1 fits, then is
  // larger than the padded input: the ShapeError it always was.
  const ConvOptions<2> fits({1, 1}, {0, 0}, {k2p62 - 1, 1}, 1);
  expect_rejected<B, ShapeError>([&] { conv2d(x, w, std::nullopt, fits); },
                                 {"conv2d: kernel [1, 1, 3, 3]", "spans 9223372036854775807"});
}

TYPED_TEST(SizeOverflowTest, Conv2dOutputAndColumnBufferPastTheLimit) {
  using B = TypeParam;
  const auto x = ones4<B>(1, 1, 1, 1);
  const auto w = ones4<B>(1, 1, 1, 1);
  // padding 30000: out = 1 + 60000 - 1 + 1 = 60001 per dim; 60001² = 3600120001 elements.
  const ConvOptions<2> big({1, 1}, {30000, 30000}, {1, 1}, 1);
  expect_rejected<B, LimitError>([&] { conv2d(x, w, std::nullopt, big); },
                                 {"conv2d: output shape [1, 1, 60001, 60001] gives 3600120001 "
                                  "elements, more than the limit of 2147483647"});
  // The output [1, 1, 5999, 5999] (35988001) fits, the im2col buffer 64·9 rows by 5999²
  // = 20729088576 floats does not: out = 1 + 6000 - 3 + 1 = 5999.
  const auto x64 = ones4<B>(1, 64, 1, 1);
  const auto w64 = ones4<B>(1, 64, 3, 3);
  const ConvOptions<2> cols({1, 1}, {3000, 3000}, {1, 1}, 1);
  expect_rejected<B, LimitError>(
      [&] { conv2d(x64, w64, std::nullopt, cols); },
      {"conv2d: the column buffer (im2col) of 64 · 9 kernel taps by 5999 · 5999 output "
       "positions gives 20729088576 elements"});
  // groups 2^63 - 1 with weight dim 1 = 2: weight dim 1 · groups overflows: a ShapeError.
  const auto x2 = ones4<B>(1, 2, 4, 4);
  const auto w2 = ones4<B>(1, 2, 3, 3);
  const ConvOptions<2> groups({1, 1}, {0, 0}, {1, 1}, kMax);
  expect_rejected<B, ShapeError>([&] { conv2d(x2, w2, std::nullopt, groups); },
                                 {"conv2d: x [1, 2, 4, 4] has 2 channels", "expects more than 2^63"});
}

TYPED_TEST(SizeOverflowTest, Conv1dDilationPaddingAndOutput) {
  using B = TypeParam;
  const auto x = Tensor<B, 3>::ones(Shape{1, 1, 5}, test::device<B>());
  const auto w = Tensor<B, 3>::ones(Shape{1, 1, 3}, test::device<B>());
  expect_rejected<B, LimitError>(
      [&] { conv1d(x, w, std::nullopt, ConvOptions<1>({1}, {0}, {k2p62}, 1)); },
      {"conv1d: dilation · (kernel - 1) in spatial dim 0 = 4611686018427387904 · 2 overflows"});
  expect_rejected<B, LimitError>(
      [&] { conv1d(x, w, std::nullopt, ConvOptions<1>({1}, {kMax}, {0}, {1}, 1)); },
      {"conv1d: input + padding in spatial dim 0 = 5 + 9223372036854775807 overflows"});
  // length_out = 5 + 2·2^31 - 3 + 1 = 4294967299 > 2^31 - 1.
  expect_rejected<B, LimitError>(
      [&] { conv1d(x, w, std::nullopt, ConvOptions<1>({1}, {2147483648}, {1}, 1)); },
      {"conv1d: output shape [1, 1, 4294967299] gives 4294967299 elements"});
}

TYPED_TEST(SizeOverflowTest, ConvTranspose2dStrideDilationPaddingAndOutput) {
  using B = TypeParam;
  const auto x = ones4<B>(1, 1, 3, 3);
  const auto w = ones4<B>(1, 1, 3, 3);
  // (3 - 1) · 2^62 = 2^63 overflows.
  const ConvTransposeOptions<2> strided({k2p62, 1}, {0, 0}, {0, 0}, {1, 1}, 1);
  expect_rejected<B, LimitError>(
      [&] { conv_transpose2d(x, w, std::nullopt, strided); },
      {"conv_transpose2d: (input - 1) · stride in spatial dim 0 = 2 · 4611686018427387904 "
       "overflows"});
  const ConvTransposeOptions<2> dilated({1, 1}, {0, 0}, {0, 0}, {1, k2p62}, 1);
  expect_rejected<B, LimitError>(
      [&] { conv_transpose2d(x, w, std::nullopt, dilated); },
      {"conv_transpose2d: dilation · (kernel - 1) in spatial dim 1 = 4611686018427387904 · 2"});
  const ConvTransposeOptions<2> padded({1, 1}, {k2p62, 0}, {0, 0}, {1, 1}, 1);
  expect_rejected<B, LimitError>([&] { conv_transpose2d(x, w, std::nullopt, padded); },
                                 {"conv_transpose2d: 2 · padding in spatial dim 0"});
  // stride 50000 on 2x2 with a 1x1 kernel: out = (2 - 1)·50000 + 1 = 50001 per dim;
  // 50001² = 2500100001 > 2^31 - 1.
  const auto x2 = ones4<B>(1, 1, 2, 2);
  const auto w1 = ones4<B>(1, 1, 1, 1);
  const ConvTransposeOptions<2> wide({50000, 50000}, {0, 0}, {0, 0}, {1, 1}, 1);
  expect_rejected<B, LimitError>([&] { conv_transpose2d(x2, w1, std::nullopt, wide); },
                                 {"conv_transpose2d: output shape [1, 1, 50001, 50001] gives "
                                  "2500100001 elements"});
  // groups larger than the input's channels: a ShapeError before any product.
  const ConvTransposeOptions<2> groups({1, 1}, {0, 0}, {0, 0}, {1, 1}, kMax);
  expect_rejected<B, ShapeError>(
      [&] { conv_transpose2d(x, w, std::nullopt, groups); },
      {"conv_transpose2d: x [1, 1, 3, 3] has 1 channels, not divisible by groups"});
  // no input channels: 0 % groups passes, weight dim 1 · groups overflows.
  const auto x0 = ones4<B>(1, 0, 3, 3);
  const auto w0 = ones4<B>(0, 2, 3, 3);
  expect_rejected<B, LimitError>(
      [&] { conv_transpose2d(x0, w0, std::nullopt, groups); },
      {"conv_transpose2d: channels_out = weight dim 1 · groups = 2 · 9223372036854775807"});
}

TYPED_TEST(SizeOverflowTest, ConvStillExactAfterTheErrors) {
  using B = TypeParam;
  // x = 0..8 as 3x3, 2x2 ones: window sums [[8, 12], [20, 24]] (by hand).
  const auto x = Tensor<B, 4>::from_data(test::iota(Shape{1, 1, 3, 3}), test::device<B>());
  const auto w = ones4<B>(1, 1, 2, 2);
  const auto w3 = ones4<B>(1, 1, 3, 3);  // 2^62 · (3 - 1) overflows (a 2x2 kernel would not)
  EXPECT_THROW(conv2d(x, w3, std::nullopt, ConvOptions<2>({1, 1}, {0, 0}, {k2p62, 1}, 1)),
               LimitError);
  conv2d(x, w).into_data().assert_eq(
      TensorData(Shape{1, 1, 2, 2}, std::vector<float>{8, 12, 20, 24}));
}

// ------------------------------------------------------------------ other ops

TYPED_TEST(SizeOverflowTest, MatmulBroadcastBatchPastTheLimit) {
  using B = TypeParam;
  const auto a = Tensor<B, 4>::ones(Shape{65536, 1, 1, 1}, test::device<B>());
  const auto b = Tensor<B, 4>::ones(Shape{1, 65536, 1, 1}, test::device<B>());
  expect_rejected<B, LimitError>([&] { a.matmul(b); },
                                 {"matmul: output shape [65536, 65536, 1, 1] gives 4294967296 "
                                  "elements, more than the limit of 2147483647"});
}

TYPED_TEST(SizeOverflowTest, BroadcastAndExpandPastTheLimit) {
  using B = TypeParam;
  const auto col = Tensor<B, 2>::ones(Shape{65536, 1}, test::device<B>());
  const auto row = Tensor<B, 2>::ones(Shape{1, 65536}, test::device<B>());
  // 65536 · 65536 = 2^32 elements from two 256 KiB operands.
  expect_rejected<B, LimitError>([&] { col.add(row); },
                                 {"broadcast shape [65536, 65536] gives 4294967296 elements"});
  expect_rejected<B, LimitError>([&] { col.greater(row); },
                                 {"broadcast shape [65536, 65536] gives 4294967296"});
  const auto one = Tensor<B, 2>::ones(Shape{1, 1}, test::device<B>());
  // 2^40 · 2^40 overflows int64.
  expect_rejected<B, LimitError>(
      [&] { one.template expand<2>({std::int64_t{1} << 40, std::int64_t{1} << 40}); },
      {"expand: output shape [1099511627776, 1099511627776] has more elements than int64"});
  expect_rejected<B, LimitError>([&] { one.template expand<2>({65536, 65536}); },
                                 {"expand: output shape [65536, 65536] gives 4294967296"});
  // An empty result has no elements to count, but a dim of 2^40 would still be a stride.
  const auto empty = Tensor<B, 2>::ones(Shape{0, 1}, test::device<B>());
  expect_rejected<B, LimitError>(
      [&] { empty.template expand<2>({0, std::int64_t{1} << 40}); },
      {"expand: dim 1 of the output shape [0, 1099511627776] is 1099511627776, more than the "
       "limit of 2147483647"});
  // cat of two empty [0, 2^31 - 1] along dim 1: [0, 2^32 - 2].
  const auto wide = Tensor<B, 2>::zeros(Shape{0, 2147483647}, test::device<B>());
  expect_rejected<B, LimitError>(
      [&] { Tensor<B, 2>::cat({wide, wide}, 1); },
      {"cat: dim 1 of the output shape [0, 4294967294] is 4294967294, more than the limit"});
}

TYPED_TEST(SizeOverflowTest, OneHotClassCountPastTheLimit) {
  using B = TypeParam;
  const auto x = Tensor<B, 1, Int>::from_ints({0, 1, 2, 3}, test::device<B>());
  // 4 · 2^62 = 2^64 overflows.
  expect_rejected<B, LimitError>(
      [&] { x.template one_hot<2>(k2p62); },
      {"one_hot: output shape [4, 4611686018427387904] has more elements than int64 holds"});
  // 4 · 2^30 = 2^32 > 2^31 - 1.
  expect_rejected<B, LimitError>([&] { x.template one_hot<2>(std::int64_t{1} << 30); },
                                 {"one_hot: output shape [4, 1073741824] gives 4294967296"});
}

TYPED_TEST(SizeOverflowTest, RepeatCheckedBeforeTheFirstStep) {
  using B = TypeParam;
  const auto x = Tensor<B, 2>::ones(Shape{2, 3}, test::device<B>());
  // 2 · 2^62 overflows.
  expect_rejected<B, LimitError>([&] { x.repeat({k2p62, 1}); },
                                 {"repeat: dim 0 · times[0] = 2 · 4611686018427387904 overflows"});
  // [2·2^20, 3·2^20] = 6·2^40 elements; the first step alone ([2^21, 3], 24 MiB) used to be
  // allocated before the second failed: nothing is allocated now.
  expect_rejected<B, LimitError>([&] { x.repeat({1 << 20, 1 << 20}); },
                                 {"repeat: output shape [2097152, 3145728] gives 6597069766656"});
}

TYPED_TEST(SizeOverflowTest, ReshapeOfAnOverflowingSpec) {
  using B = TypeParam;
  const auto x = Tensor<B, 1>::ones(Shape{16}, test::device<B>());
  // 2^32 · 2^32 wraps to 0 in int64: it divided by zero (SIGFPE) in the layer; the op
  // rejects the overflowing product as a ShapeError.
  expect_rejected<B, ShapeError>(
      [&] { x.template reshape<3>(std::array<std::int64_t, 3>{1ll << 32, 1ll << 32, -1}); },
      {"reshape: cannot view [16] (16 elements) as [4294967296, 4294967296, -1]",
       "an overflowing product"});
  expect_rejected<B, ShapeError>(
      [&] { x.template reshape<2>(std::array<std::int64_t, 2>{kMax, 2}); },
      {"more than 2^63"});
}

}  // namespace
}  // namespace kiln
