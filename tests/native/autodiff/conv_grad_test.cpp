// Gradients of conv1d, conv2d and conv_transpose2d on Autodiff<Cpu>: the PyTorch cases of
// category conv (forward and every gradient they give), and gradcheck (central finite
// differences, support/gradcheck.hpp) over seeded random configurations: stride, per-side
// padding, dilation, groups, bias or not, batch 1 and > 1, and inputs made by permute and
// slice (non-contiguous in the source tensor).
#include <gtest/gtest.h>

#include <vector>

#include "kiln/kiln.hpp"
#include "support/cases.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
template <std::size_t D>
using T = Tensor<AD, D>;
using test::gradcheck;

// ------------------------------------------------------------------ PyTorch cases

/// Builds the case's inputs as leaves, runs `f`, checks out and grad_x / grad_w /
/// grad_bias of sum(out · dy_out), and that every expected key was checked.
template <class F>
void check_case(const std::string& id, bool with_bias, F f) {
  const auto c = test::load_case(id);
  auto x = T<4>::from_data(c.input("x")).require_grad();
  auto w = T<4>::from_data(c.input("w")).require_grad();
  std::optional<T<1>> b;
  if (with_bias) b = T<1>::from_data(c.input("bias")).require_grad();
  auto out = f(x, w, b);
  out.to_data().assert_approx_eq(c.expected("out"), c.tolerance());
  auto grads = (out * T<4>::from_data(c.input("dy_out"))).sum().backward();
  x.grad(grads)->to_data().assert_approx_eq(c.expected("grad_x"), c.tolerance());
  w.grad(grads)->to_data().assert_approx_eq(c.expected("grad_w"), c.tolerance());
  if (with_bias) b->grad(grads)->to_data().assert_approx_eq(c.expected("grad_bias"), c.tolerance());
}

TEST(ConvCasesTest, DepthwiseStride2Grads) {
  check_case("conv2d_depthwise_stride2_grads", true, [](auto x, auto w, auto b) {
    return conv2d(x, w, b, ConvOptions<2>({2, 2}, {1, 1}, {1, 1}, 4));
  });
}

TEST(ConvCasesTest, Groups2Dilation2Grads) {
  check_case("conv2d_groups2_dilation2", false, [](auto x, auto w, auto b) {
    return conv2d(x, w, b, ConvOptions<2>({1, 1}, {1, 1}, {2, 2}, 2));
  });
}

TEST(ConvCasesTest, TransposeOutputPaddingGrads) {
  check_case("conv_transpose2d_output_padding", true, [](auto x, auto w, auto b) {
    return conv_transpose2d(x, w, b, ConvTransposeOptions<2>({2, 2}, {1, 1}, {1, 1}, {1, 1}, 1));
  });
}

// ------------------------------------------------------------------ gradcheck

/// One random conv2d configuration whose output is non-empty.
struct Conv2dConfig {
  std::int64_t batch, groups, cg, og, h, w, kh, kw;
  ConvOptions<2> options;
};

Conv2dConfig random_conv2d(test::Sampler& rng) {
  for (;;) {
    Conv2dConfig c{};
    c.batch = rng.integer(1, 3);
    c.groups = rng.integer(1, 3);
    c.cg = rng.integer(1, 2);
    c.og = rng.integer(1, 2);
    c.kh = rng.integer(1, 3);
    c.kw = rng.integer(1, 3);
    c.h = rng.integer(1, 6);
    c.w = rng.integer(1, 6);
    c.options = ConvOptions<2>({rng.integer(1, 3), rng.integer(1, 3)},
                               {rng.integer(0, 2), rng.integer(0, 2)},
                               {rng.integer(0, 2), rng.integer(0, 2)},
                               {rng.integer(1, 2), rng.integer(1, 2)}, c.groups);
    const auto& o = c.options;
    if (c.h + o.padding[0] + o.padding_end[0] >= o.dilation[0] * (c.kh - 1) + 1 &&
        c.w + o.padding[1] + o.padding_end[1] >= o.dilation[1] * (c.kw - 1) + 1) {
      return c;
    }
  }
}

TEST(ConvGradcheck, Conv2dRandomConfigs) {
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    test::Sampler rng(seed);
    const Conv2dConfig c = random_conv2d(rng);
    auto x = rng.uniform<4>(Shape{c.batch, c.groups * c.cg, c.h, c.w}, -2, 2);
    auto w = rng.uniform<4>(Shape{c.groups * c.og, c.cg, c.kh, c.kw}, -1, 1);
    auto b = rng.uniform<1>(Shape{c.groups * c.og}, -1, 1);
    const ConvOptions<2> o = c.options;
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": x " << x.shape() << ", w "
                                    << w.shape() << ", " << o);
    if (seed % 2) {
      EXPECT_TRUE(gradcheck(
          "conv2d+bias", [o](T<4> x, T<4> w, T<1> b) { return conv2d(x, w, std::optional(b), o); },
          x, w, b));
    } else {
      EXPECT_TRUE(gradcheck("conv2d", [o](T<4> x, T<4> w) { return conv2d(x, w, {}, o); }, x, w));
    }
  }
}

// Inputs built by permute and slice (their values sit strided in the source tensor) and a
// non-linear factor after the conv, so the gradient depends on where each value landed.
TEST(ConvGradcheck, Conv2dOfPermutedAndSlicedInputs) {
  test::Sampler rng(77);
  auto x_src = rng.uniform<4>(Shape{5, 3, 2, 4}, -2, 2);  // [h, c, n, w] before permute
  auto w_src = rng.uniform<4>(Shape{4, 2, 3, 4}, -1, 1);
  const ConvOptions<2> o({1, 2}, {1, 0}, {0, 1}, {1, 1}, 1);
  EXPECT_TRUE(gradcheck(
      "conv2d(permute, slice)",
      [o](T<4> xs, T<4> ws) {
        auto x = xs.permute({2, 1, 0, 3}).slice({Slice(), Slice(0, 2)});  // [2, 2, 5, 4]
        auto w = ws.slice({Slice(0, 4, 2), Slice(), Slice(), Slice(1, 4)})  // [2, 2, 3, 3]
                     .permute({0, 1, 3, 2})
                     .slice({Slice(), Slice(), Slice(), Slice(0, 2)});  // [2, 2, 3, 2]
        auto y = conv2d(x, w, {}, o);
        return y * y.sin();
      },
      x_src, w_src));
}

TEST(ConvGradcheck, Conv1dRandomConfigs) {
  for (std::uint64_t seed = 100; seed < 112; ++seed) {
    test::Sampler rng(seed);
    const std::int64_t groups = rng.integer(1, 2), cg = rng.integer(1, 2), og = rng.integer(1, 2);
    const std::int64_t k = rng.integer(1, 4), stride = rng.integer(1, 3);
    const std::int64_t dilation = rng.integer(1, 2), pad = rng.integer(0, 2),
                       pad_end = rng.integer(0, 2);
    const std::int64_t length = dilation * (k - 1) + 1 + rng.integer(0, 4);
    auto x = rng.uniform<3>(Shape{rng.integer(1, 3), groups * cg, length}, -2, 2);
    auto w = rng.uniform<3>(Shape{groups * og, cg, k}, -1, 1);
    auto b = rng.uniform<1>(Shape{groups * og}, -1, 1);
    const ConvOptions<1> o({stride}, {pad}, {pad_end}, {dilation}, groups);
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": x " << x.shape() << ", w "
                                    << w.shape() << ", " << o);
    EXPECT_TRUE(gradcheck(
        "conv1d", [o](T<3> x, T<3> w, T<1> b) { return conv1d(x, w, std::optional(b), o); }, x, w,
        b));
  }
}

TEST(ConvGradcheck, ConvTranspose2dRandomConfigs) {
  for (std::uint64_t seed = 200; seed < 216; ++seed) {
    test::Sampler rng(seed);
    const std::int64_t groups = rng.integer(1, 2), cg = rng.integer(1, 2), og = rng.integer(1, 2);
    const std::int64_t kh = rng.integer(1, 3), kw = rng.integer(1, 3);
    const std::array<std::int64_t, 2> stride{rng.integer(1, 3), rng.integer(1, 3)};
    const std::array<std::int64_t, 2> dilation{rng.integer(1, 2), rng.integer(1, 2)};
    const std::array<std::int64_t, 2> padding{rng.integer(0, 1), rng.integer(0, 1)};
    std::array<std::int64_t, 2> padding_out{};
    for (int d = 0; d < 2; ++d) {
      padding_out[d] = rng.integer(0, std::max(stride[d], dilation[d]) - 1);
    }
    const std::int64_t h = rng.integer(2, 4), w_ = rng.integer(2, 4);
    auto x = rng.uniform<4>(Shape{rng.integer(1, 2), groups * cg, h, w_}, -2, 2);
    auto w = rng.uniform<4>(Shape{groups * cg, og, kh, kw}, -1, 1);
    auto b = rng.uniform<1>(Shape{groups * og}, -1, 1);
    const ConvTransposeOptions<2> o(stride, padding, padding_out, dilation, groups);
    SCOPED_TRACE(testing::Message() << "seed " << seed << ": x " << x.shape() << ", w "
                                    << w.shape() << ", stride " << stride[0] << "," << stride[1]
                                    << ", padding_out " << padding_out[0] << ","
                                    << padding_out[1]);
    EXPECT_TRUE(gradcheck(
        "conv_transpose2d",
        [o](T<4> x, T<4> w, T<1> b) { return conv_transpose2d(x, w, std::optional(b), o); }, x, w,
        b));
  }
}

// Only the weight tracked (the first layer of a CNN): x gets no gradient, w and b do.
TEST(ConvGradcheck, UntrackedInputGetsNoGradient) {
  auto x = T<4>::ones(Shape{1, 1, 3, 3});
  auto w = T<4>::ones(Shape{1, 1, 2, 2}).require_grad();
  auto grads = conv2d(x, w).sum().backward();
  EXPECT_FALSE(x.grad(grads).has_value());
  // d/dw sum(conv) = number of windows each tap meets with value 1: 4.
  w.grad(grads)->to_data().assert_eq(TensorData(Shape{1, 1, 2, 2}, std::vector<float>{4, 4, 4, 4}));
}

}  // namespace
}  // namespace kiln
