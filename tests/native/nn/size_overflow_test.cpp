// Size overflow in the layers and in Sequential specs: the shape rules that follow the item
// shape from layer to layer (reshape, flatten, conv1d/conv2d output sizes and paddings,
// pools), the layer configs' weight shapes (linear, embedding, conv1d, conv2d,
// conv_transpose2d) and embedding's output. Each is a LimitError naming the layer and the
// operands (the reshape spec [2^32, 2^32, -1] divided by zero: SIGFPE natively, a trap in
// WebAssembly), and the engine works exactly afterwards. Sizes worked by hand in comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using nn::SequentialConfig;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

/// A small spec still builds and computes exactly after the errors: [1, 2] -> linear with
/// weights 0.5 and bias 0.5 -> 0.5·3 + 0.5 = 2 per unit (by hand).
void expect_sequential_exact() {
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 2, "d_output": 3, "initializer": {"Constant": {"value": 0.5}}}
  ]})")
                         .init<Cpu>();
  const auto y = model.forward(Tensor<Cpu, 2>::from_floats({{1.f, 2.f}}));
  EXPECT_EQ(y.to_data().to_vec<float>(), (std::vector<float>{2.f, 2.f, 2.f}));
}

std::string spec(const std::string& layers) { return R"({"layers": [)" + layers + "]}"; }

TEST(SequentialSizeOverflow, ReshapeSpecWhoseProductWrapsToZero) {
  // items [16], then [2^32, 2^32, -1]: 2^64 wrapped to 0 and `16 % 0` was SIGFPE.
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [16]},
            {"type": "reshape", "shape": [4294967296, 4294967296, -1]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr(
          "SequentialConfig: layers[1] (reshape): the product of shape [4294967296, 4294967296, "
          "-1] = 4294967296 · 4294967296 overflows int64")));
  // The same without a -1 and with no known input (first layer).
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(
            spec(R"({"type": "reshape", "shape": [4294967296, 4294967296, 4294967296]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("layers[0] (reshape): the product of shape")));
  expect_sequential_exact();
}

TEST(SequentialSizeOverflow, ItemsPastTheElementLimit) {
  // adaptive pooling 65536 channels to [65536, 65536]: items of 2^48 elements, which no
  // batch can hold; the flatten after it counts them and stops.
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [65536, 1, 1]},
            {"type": "adaptive_avg_pool2d", "output_size": [65536, 65536]},
            {"type": "flatten"})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("SequentialConfig: items [65536, 65536, 65536] gives "
                                          "281474976710656 elements, more than the limit of "
                                          "2147483647")));
  // a reshape of items whose product is past the limit: [2^16, 2^16] (2^32) to [-1].
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [65536, 65536]},
            {"type": "reshape", "shape": [-1]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("SequentialConfig: items [65536, 65536] gives "
                                          "4294967296 elements")));
  // a linear whose weight [2, 2^48] is past the limit.
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(
            spec(R"({"type": "linear", "d_input": 281474976710656, "d_output": 2})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("LinearConfig::init: weight shape [2, 281474976710656] "
                                          "gives 562949953421312 elements")));
  expect_sequential_exact();
}

TEST(SequentialSizeOverflow, ConvSpecDilationAndPaddingNear2To63) {
  // dilation 2^62 · (3 - 1) = 2^63: it wrapped negative and propagated a wrong item shape.
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [1, 6, 6]},
            {"type": "conv2d", "channels": [1, 2], "kernel_size": 3,
             "dilation": [4611686018427387904, 1]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr(
          "SequentialConfig: layers[1] (conv2d): dilation · (kernel_size - 1) in the height = "
          "4611686018427387904 · 2 overflows int64")));
  // explicit padding 2^62 on both sides: the total 2^63 overflows.
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [1, 6, 6]},
            {"type": "conv2d", "channels": [1, 2], "kernel_size": 3,
             "padding": [0, 4611686018427387904]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr(
          "layers[1] (conv2d): the total padding of the width = 4611686018427387904 + "
          "4611686018427387904 overflows")));
  // padding 2^62 - 1 per side: the total fits, input 6 + 2^63 - 2 does not.
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [1, 6, 6]},
            {"type": "conv2d", "channels": [1, 2], "kernel_size": 3,
             "padding": [4611686018427387903, 0]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr(
          "layers[1] (conv2d): the padded input's height = 6 + 9223372036854775806 overflows")));
  // conv1d: dilation 2^62 on items [1, 8].
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [1, 8]},
            {"type": "conv1d", "channels": [1, 2], "kernel_size": 3,
             "dilation": 4611686018427387904})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("layers[1] (conv1d): dilation · (kernel_size - 1) in "
                                          "the length = 4611686018427387904 · 2 overflows")));
  // padding "same" with dilation 2^62: the Same padding's total overflows (checked with the
  // config, before the shape rule).
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [1, 6, 6]},
            {"type": "conv2d", "channels": [1, 2], "kernel_size": 3, "padding": "same",
             "dilation": [4611686018427387904, 1]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("Conv2dConfig::init: Same padding's dilation · "
                                          "(kernel_size - 1) = 4611686018427387904 · 2")));
  expect_sequential_exact();
}

TEST(SequentialSizeOverflow, PoolSpecWindowOverflow) {
  EXPECT_THAT(
      [] {
        SequentialConfig::from_json_string(spec(R"({"type": "reshape", "shape": [1, 6, 6]},
            {"type": "max_pool2d", "kernel_size": [4611686018427387904, 1], "stride": 1,
             "dilation": [4, 1]})"));
      },
      ThrowsMessage<LimitError>(HasSubstr("SequentialConfig: layers[1] (max_pool2d): dilation · "
                                          "(kernel_size - 1) = 4 · 4611686018427387903 overflows")));
  expect_sequential_exact();
}

TEST(LayerSizeOverflow, ReshapeLayerOutputShape) {
  const nn::Reshape r{{std::int64_t{1} << 32, std::int64_t{1} << 32, -1}};
  EXPECT_THAT([&] { (void)r.output_shape(Shape{2, 16}); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "Reshape::forward: the product of shape [4294967296, 4294967296, -1] = "
                  "4294967296 · 4294967296 overflows int64")));
  const nn::Reshape fixed{{std::int64_t{1} << 32, std::int64_t{1} << 32}};
  EXPECT_THAT([&] { (void)nn::SequentialRules<nn::Reshape>::input_item_size(fixed); },
              ThrowsMessage<LimitError>(HasSubstr("reshape: the product of shape")));
  // forward on a real tensor: the same error, the tensor untouched.
  const auto x = Tensor<Cpu, 2>::ones(Shape{2, 16});
  EXPECT_THROW((r.forward<Cpu, 2, 4>(x)), LimitError);
  EXPECT_EQ((nn::Reshape{{4, -1}}.forward<Cpu, 2, 3>(x).shape()), (Shape{2, 4, 4}));
}

TEST(LayerSizeOverflow, FlattenOutputShape) {
  // An empty batch may hold dims up to 2^31 - 1 each; (2^31 - 1)³ overflows int64:
  // (2^31 - 1)² = 4611686014132420609, times 2^31 - 1 does not fit.
  const Shape s{0, 2147483647, 2147483647, 2147483647};
  EXPECT_THAT([&] { (void)nn::Flatten{}.output_shape(s); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "Flatten::forward: the product of the flattened dims = 4611686014132420609 · "
                  "2147483647 overflows int64")));
}

TEST(LayerSizeOverflow, ConfigWeightShapesPastTheLimits) {
  EXPECT_THAT([] { nn::LinearConfig(std::int64_t{1} << 40, std::int64_t{1} << 40).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "LinearConfig::init: weight shape [1099511627776, 1099511627776] has more "
                  "elements than int64 holds")));
  EXPECT_THAT([] { nn::LinearConfig(65536, 65536).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "LinearConfig::init: weight shape [65536, 65536] gives 4294967296 elements")));
  EXPECT_THAT([] { nn::EmbeddingConfig(std::int64_t{1} << 40, 1 << 30).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "EmbeddingConfig::init: weight shape [1099511627776, 1073741824] has more")));
  // [65536, 1, 256, 256] = 2^32 weights.
  EXPECT_THAT([] { nn::Conv2dConfig({1, 65536}, {256, 256}).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "Conv2dConfig::init: weight shape [65536, 1, 256, 256] gives 4294967296")));
  EXPECT_THAT([] { nn::Conv1dConfig({1, 65536}, 65536).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "Conv1dConfig::init: weight shape [65536, 1, 65536] gives 4294967296")));
  EXPECT_THAT([] { nn::ConvTranspose2dConfig({65536, 1}, {256, 256}).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "ConvTranspose2dConfig::init: weight shape [65536, 1, 256, 256] gives")));
  // kernel 2^62 · 2^62 overflows before the element limit.
  EXPECT_THAT([] { nn::Conv2dConfig({1, 1}, {kMax / 2 + 1, kMax / 2 + 1}).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr("has more elements than int64 holds")));
  expect_sequential_exact();
}

TEST(LayerSizeOverflow, EmbeddingOutputPastTheLimit) {
  const auto embed = nn::EmbeddingConfig(1, 65536).init<Cpu>();  // weight [1, 65536]
  const auto indices = Tensor<Cpu, 2, Int>::zeros(Shape{65536, 1});
  const MemoryStats before = memory_stats();
  // [65536, 1, 65536] = 2^32 elements: rejected before the lookup allocates.
  EXPECT_THAT([&] { embed.forward(indices); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "Embedding::forward: output shape [65536, 1, 65536] gives 4294967296 elements, "
                  "more than the limit of 2147483647")));
  EXPECT_EQ(memory_stats().live_buffers, before.live_buffers);
  const auto small = Tensor<Cpu, 2, Int>::zeros(Shape{2, 1});
  EXPECT_EQ(embed.forward(small).shape(), (Shape{2, 1, 65536}));
}

}  // namespace
}  // namespace kiln
