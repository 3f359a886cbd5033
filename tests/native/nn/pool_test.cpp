// Pooling: nn::functional::{max,avg,adaptive_avg}_pool{1,2}d and the layers of nn/pool.hpp.
// Values by hand and against a naive reference written here (the padded input materialised,
// every window tap visited), on Cpu and Autodiff<Cpu>; gradients by gradcheck over seeded
// random shapes with stride/padding/dilation/ceil-mode variety and permuted inputs; errors;
// configs and printing. The PyTorch cases are in layer_cases_test.cpp.
#include "kiln/nn/pool.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;
namespace F = nn::functional;

// ------------------------------------------------------------------ naive reference

struct Naive {
  std::vector<float> out;
  std::vector<std::int32_t> idx;
};

/// Max or average pooling by the definition: pad the plane, visit every tap.
Naive naive_pool(const TensorData& x, bool max, std::array<std::int64_t, 2> k,
                 std::array<std::int64_t, 2> s, std::array<std::int64_t, 2> p,
                 std::array<std::int64_t, 2> d, bool ceil_mode, bool include_pad) {
  const auto v = x.to_vec<float>();
  const std::int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  auto size = [&](std::int64_t in, int i) {
    const double raw = double(in + 2 * p[i] - d[i] * (k[i] - 1) - 1) / double(s[i]);
    std::int64_t o = std::int64_t(ceil_mode ? std::ceil(raw) : std::floor(raw)) + 1;
    if (ceil_mode && (o - 1) * s[i] >= in + p[i]) --o;
    return o;
  };
  const std::int64_t oh = size(h, 0), ow = size(w, 1);
  Naive r;
  for (std::int64_t plane = 0; plane < n * c; ++plane) {
    for (std::int64_t i = 0; i < oh; ++i) {
      for (std::int64_t j = 0; j < ow; ++j) {
        float best = -std::numeric_limits<float>::infinity();
        std::int32_t best_at = -1;
        double sum = 0;
        std::int64_t inside = 0, padded = 0;
        for (std::int64_t a = 0; a < k[0]; ++a) {
          for (std::int64_t b = 0; b < k[1]; ++b) {
            const std::int64_t y = i * s[0] - p[0] + a * d[0], z = j * s[1] - p[1] + b * d[1];
            if (y < h + p[0] && z < w + p[1]) ++padded;  // inside the padded input
            if (y < 0 || y >= h || z < 0 || z >= w) continue;
            ++inside;
            const float val = v[plane * h * w + y * w + z];
            sum += val;
            if (val > best) {
              best = val;
              best_at = std::int32_t(y * w + z);
            }
          }
        }
        if (max) {
          r.out.push_back(best);
          r.idx.push_back(best_at);
        } else {
          r.out.push_back(inside == 0 ? 0.f : float(sum / double(include_pad ? padded : inside)));
        }
      }
    }
  }
  return r;
}

template <class B>
class PoolTest : public ::testing::Test {};
TYPED_TEST_SUITE(PoolTest, test::AllBackends);

TYPED_TEST(PoolTest, MaxPool2dByHandWithDilationAndTies) {
  using B = TypeParam;
  // [3, 1, 4, 1, 5], kernel 2 dilated by 2, stride 1: taps (0,2), (1,3), (2,4).
  auto x = Tensor<B, 4>::from_data({{{{3.f, 1.f, 4.f, 1.f, 5.f}}}});
  const MaxPool2dOptions o{{1, 2}, {1, 1}, {0, 0}, {1, 2}};
  auto [out, idx] = F::max_pool2d_with_indices(x, o);
  EXPECT_EQ(out.to_data().template to_vec<float>(), (std::vector<float>{4.f, 1.f, 5.f}));
  // The tie 1 = 1 goes to the first (index 1).
  EXPECT_EQ(idx.to_data().template to_vec<std::int32_t>(), (std::vector<std::int32_t>{2, 1, 4}));
}

TYPED_TEST(PoolTest, MaxPool2dPaddingIsMinusInfinity) {
  using B = TypeParam;
  auto x = Tensor<B, 4>::from_data({{{{-1.f, -2.f}, {-3.f, -4.f}}}});
  const MaxPool2dOptions o{{2, 2}, {1, 1}, {1, 1}};
  EXPECT_EQ(F::max_pool2d(x, o).to_data().template to_vec<float>(),
            (std::vector<float>{-1.f, -1.f, -2.f, -1.f, -1.f, -2.f, -3.f, -3.f, -4.f}));
}

TYPED_TEST(PoolTest, AvgPool1dCeilModeDivisorsByHand) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::from_data({{{1.f, 2.f, 3.f, 4.f, 5.f}}});
  // kernel 2, stride 2, ceil: windows [1, 2], [3, 4], [5] (the last runs off the input,
  // no padding, so the divisor is 1 either way).
  EXPECT_EQ(F::avg_pool1d(x, {2, 2, 0, true, true}).to_data().template to_vec<float>(),
            (std::vector<float>{1.5f, 3.5f, 5.f}));
  // kernel 3, stride 2, padding 1, ceil: windows [pad, 1, 2], [2, 3, 4], [4, 5, pad].
  EXPECT_EQ(F::avg_pool1d(x, {3, 2, 1, true, true}).to_data().template to_vec<float>(),
            (std::vector<float>{1.f, 3.f, 3.f}));
  EXPECT_EQ(F::avg_pool1d(x, {3, 2, 1, false, true}).to_data().template to_vec<float>(),
            (std::vector<float>{1.5f, 3.f, 4.5f}));
}

TYPED_TEST(PoolTest, AdaptiveAvgPool1dOverlappingWindows) {
  using B = TypeParam;
  // 5 -> 3: windows [0, 2), [1, 4), [3, 5).
  auto x = Tensor<B, 3>::from_data({{{1.f, 2.f, 3.f, 4.f, 6.f}}});
  F::adaptive_avg_pool1d(x, 3).to_data().assert_approx_eq(
      TensorData::from_nested<float, 3>({{{1.5f, 3.f, 5.f}}}), Tolerance::rel_abs(1e-6, 1e-6));
}

TYPED_TEST(PoolTest, MaxPool1dMatchesByHand) {
  using B = TypeParam;
  auto x = Tensor<B, 3>::from_data({{{0.f, 5.f, 2.f, 7.f, 1.f}, {9.f, 8.f, 7.f, 6.f, 5.f}}});
  auto [out, idx] = F::max_pool1d_with_indices(x, {3, 2, 1, 1, false});
  EXPECT_EQ(out.to_data().template to_vec<float>(),
            (std::vector<float>{5.f, 7.f, 7.f, 9.f, 8.f, 6.f}));
  EXPECT_EQ(idx.to_data().template to_vec<std::int32_t>(),
            (std::vector<std::int32_t>{1, 3, 3, 0, 1, 3}));
}

TYPED_TEST(PoolTest, RandomShapesMatchTheNaiveReference) {
  using B = TypeParam;
  test::Sampler rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const std::array<std::int64_t, 2> k{rng.integer(1, 4), rng.integer(1, 4)};
    const std::array<std::int64_t, 2> s{rng.integer(1, 3), rng.integer(1, 3)};
    const std::array<std::int64_t, 2> p{rng.integer(0, k[0] / 2), rng.integer(0, k[1] / 2)};
    const std::array<std::int64_t, 2> d{rng.integer(1, 2), rng.integer(1, 2)};
    const bool ceil_mode = rng.integer(0, 1) == 1, include = rng.integer(0, 1) == 1;
    const Shape shape{rng.integer(1, 2), rng.integer(1, 3), rng.integer(k[0] * d[0], 9),
                      rng.integer(k[1] * d[1], 9)};
    const TensorData data = rng.uniform_data(shape, -2, 2);
    const auto x = Tensor<B, 4>::from_data(data);
    SCOPED_TRACE(testing::Message() << "trial " << trial << " shape " << shape);

    const MaxPool2dOptions mo{k, s, p, d, ceil_mode};
    const Naive mx = naive_pool(data, true, k, s, p, d, ceil_mode, true);
    auto [out, idx] = F::max_pool2d_with_indices(x, mo);
    EXPECT_EQ(out.to_data().template to_vec<float>(), mx.out);
    EXPECT_EQ(idx.to_data().template to_vec<std::int32_t>(), mx.idx);
    EXPECT_EQ(F::max_pool2d(x, mo).to_data().template to_vec<float>(), mx.out);

    const AvgPool2dOptions ao{k, s, p, include, ceil_mode};
    const Naive av = naive_pool(data, false, k, s, p, {1, 1}, ceil_mode, include);
    F::avg_pool2d(x, ao).to_data().assert_approx_eq(
        TensorData(F::avg_pool2d(x, ao).shape(), av.out), Tolerance::rel_abs(1e-5, 1e-6));
  }
}

TYPED_TEST(PoolTest, PermutedInputGivesTheSameResult) {
  using B = TypeParam;
  test::Sampler rng(3);
  // [N, H, W, C] permuted to [N, C, H, W] vs the same values built contiguous.
  const auto nhwc = Tensor<B, 4>::from_data(rng.uniform_data(Shape{2, 5, 6, 3}, -1, 1));
  const auto nchw = nhwc.permute({0, 3, 1, 2});
  const auto contiguous = Tensor<B, 4>::from_data(nchw.to_data());
  const MaxPool2dOptions mo{{3, 2}, {2, 1}, {1, 1}};
  EXPECT_EQ(F::max_pool2d(nchw, mo).to_data().template to_vec<float>(),
            F::max_pool2d(contiguous, mo).to_data().template to_vec<float>());
  const AvgPool2dOptions ao{{2, 3}, {1, 2}, {1, 1}, false, true};
  EXPECT_EQ(F::avg_pool2d(nchw, ao).to_data().template to_vec<float>(),
            F::avg_pool2d(contiguous, ao).to_data().template to_vec<float>());
}

// ------------------------------------------------------------------ gradients

TEST(PoolGradcheckTest, MaxPool2dRandomShapes) {
  test::Sampler rng(11);
  for (int trial = 0; trial < 12; ++trial) {
    const std::array<std::int64_t, 2> k{rng.integer(1, 3), rng.integer(1, 3)};
    const std::array<std::int64_t, 2> s{rng.integer(1, 2), rng.integer(1, 2)};
    const std::array<std::int64_t, 2> p{rng.integer(0, k[0] / 2), rng.integer(0, k[1] / 2)};
    const std::array<std::int64_t, 2> d{rng.integer(1, 2), rng.integer(1, 2)};
    const MaxPool2dOptions o{k, s, p, d, rng.integer(0, 1) == 1};
    const Shape shape{rng.integer(1, 2), rng.integer(1, 2), k[0] * d[0] + rng.integer(0, 2),
                      k[1] * d[1] + rng.integer(0, 2)};
    // Distinct values 0.1 apart: no ties within a finite-difference step.
    const auto x = Tensor<AD, 4>::from_data(rng.distinct(shape, 0.1));
    EXPECT_TRUE(test::gradcheck(
        "max_pool2d", [o](Tensor<AD, 4> t) { return F::max_pool2d(t, o); }, x))
        << o << " shape " << shape;
  }
}

TEST(PoolGradcheckTest, AvgPool2dRandomShapes) {
  test::Sampler rng(12);
  for (int trial = 0; trial < 12; ++trial) {
    const std::array<std::int64_t, 2> k{rng.integer(1, 3), rng.integer(1, 3)};
    const std::array<std::int64_t, 2> s{rng.integer(1, 2), rng.integer(1, 2)};
    const std::array<std::int64_t, 2> p{rng.integer(0, k[0] / 2), rng.integer(0, k[1] / 2)};
    const AvgPool2dOptions o{k, s, p, rng.integer(0, 1) == 1, rng.integer(0, 1) == 1};
    const Shape shape{rng.integer(1, 2), rng.integer(1, 2), rng.integer(k[0], 5),
                      rng.integer(k[1], 5)};
    const auto x = rng.uniform<4>(shape, -2, 2);
    EXPECT_TRUE(test::gradcheck(
        "avg_pool2d", [o](Tensor<AD, 4> t) { return F::avg_pool2d(t, o); }, x))
        << o << " shape " << shape;
  }
}

TEST(PoolGradcheckTest, AdaptiveAvgPool2dRandomShapes) {
  test::Sampler rng(13);
  for (int trial = 0; trial < 8; ++trial) {
    const Shape shape{rng.integer(1, 2), rng.integer(1, 2), rng.integer(1, 6), rng.integer(1, 6)};
    const std::array<std::int64_t, 2> out{rng.integer(1, 4), rng.integer(1, 4)};
    const auto x = rng.uniform<4>(shape, -2, 2);
    EXPECT_TRUE(test::gradcheck(
        "adaptive_avg_pool2d",
        [out](Tensor<AD, 4> t) { return F::adaptive_avg_pool2d(t, out); }, x))
        << "shape " << shape << " out " << out[0] << "x" << out[1];
  }
}

TEST(PoolGradcheckTest, OneDimensionalFormsAndPermutedInput) {
  test::Sampler rng(14);
  const auto x = Tensor<AD, 3>::from_data(rng.distinct(Shape{2, 3, 7}, 0.1));
  EXPECT_TRUE(test::gradcheck(
      "max_pool1d", [](Tensor<AD, 3> t) { return F::max_pool1d(t, {3, 2, 1, 2, true}); }, x));
  EXPECT_TRUE(test::gradcheck(
      "avg_pool1d", [](Tensor<AD, 3> t) { return F::avg_pool1d(t, {3, 2, 1, false, true}); }, x));
  EXPECT_TRUE(test::gradcheck(
      "adaptive_avg_pool1d", [](Tensor<AD, 3> t) { return F::adaptive_avg_pool1d(t, 4); }, x));
  // A permuted (non-contiguous in the front end's view) input: [N, L, C] -> [N, C, L].
  const auto nlc = Tensor<AD, 3>::from_data(rng.distinct(Shape{2, 6, 3}, 0.1));
  EXPECT_TRUE(test::gradcheck(
      "max_pool1d(permute)",
      [](Tensor<AD, 3> t) { return F::max_pool1d(t.permute({0, 2, 1}), {2, 1, 1, 1, false}); },
      nlc));
  EXPECT_TRUE(test::gradcheck(
      "avg_pool2d(permute)",
      [](Tensor<AD, 3> t) {
        auto x4 = t.permute({0, 2, 1}).template unsqueeze_dim<4>(2);  // [N, C, 1, L]
        return F::avg_pool2d(x4, AvgPool2dOptions{{1, 3}, {1, 2}, {0, 1}, true, true});
      },
      nlc));
}

// ------------------------------------------------------------------ errors

TEST(PoolErrorsTest, WrongRankKernelTooLargeAndBadPadding) {
  const auto x = Tensor<Cpu, 4>::zeros(Shape{1, 1, 3, 3});
  EXPECT_THAT([&] { F::max_pool2d(x, MaxPool2dOptions{{4, 4}, {1, 1}}); },
              ThrowsMessage<ShapeError>(HasSubstr("max_pool2d: the window")));
  EXPECT_THAT([&] { F::avg_pool2d(x, AvgPool2dOptions{{6, 6}, {1, 1}, {1, 1}}); },
              ThrowsMessage<ShapeError>(HasSubstr("larger than the padded input")));
  // PyTorch: "pad should be at most half of kernel size".
  EXPECT_THAT([&] { F::max_pool2d(x, MaxPool2dOptions{{2, 2}, {1, 1}, {2, 0}}); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("max_pool2d: padding must be in [0, kernel_size / 2]")));
  EXPECT_THAT([&] { F::avg_pool2d(x, AvgPool2dOptions{{2, 2}, {0, 1}}); },
              ThrowsMessage<ConfigError>(HasSubstr("must be >= 1")));
  EXPECT_THAT([&] { F::adaptive_avg_pool2d(x, {0, 2}); },
              ThrowsMessage<ConfigError>(HasSubstr("adaptive_avg_pool2d: output_size")));
  // A rank-3 primitive handed to the 2-D op (the typed front end cannot do it).
  EXPECT_THAT([&] { CpuOps::max_pool2d(CpuOps::full(Shape{1, 3, 3}, 0, DType::F32, {}), {}); },
              ThrowsMessage<RankError>(HasSubstr("max_pool2d: expected a tensor of rank 4")));
  EXPECT_THAT([&] { CpuOps::avg_pool2d(CpuOps::full(Shape{1, 1, 4, 4}, 0, DType::I32, {}), {}); },
              ThrowsMessage<DTypeError>(HasSubstr("avg_pool2d: expected a Float")));
}

TEST(PoolErrorsTest, LayerConfigsRejectBadValues) {
  EXPECT_THAT([] { nn::MaxPool2dConfig({3, 3}).with_padding({2, 1}).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("MaxPool2dConfig::init: padding")));
  EXPECT_THAT([] { nn::AvgPool2dConfig({0, 2}).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("AvgPool2dConfig::init: kernel_size")));
  EXPECT_THAT([] { nn::MaxPool1dConfig(2).with_dilation(0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("MaxPool1dConfig::init")));
  EXPECT_THAT([] { nn::AdaptiveAvgPool1dConfig(0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("AdaptiveAvgPool1dConfig::init")));
}

// ------------------------------------------------------------------ layers

TEST(PoolLayerTest, ConfigDefaultsJsonAndPrinting) {
  const auto c = nn::MaxPool2dConfig({3, 3});
  EXPECT_EQ(c.strides, (std::array<std::int64_t, 2>{3, 3}));  // Burn: strides = kernel_size
  const auto c2 = c.with_strides({2, 2}).with_padding({1, 1});
  EXPECT_EQ(nn::MaxPool2dConfig::from_json(c2.to_json()), c2);
  std::ostringstream os;
  os << c2.init();
  EXPECT_EQ(os.str(),
            "MaxPool2d {kernel_size: [3, 3], stride: [2, 2], padding: [1, 1], dilation: [1, 1], "
            "ceil_mode: false}");
  std::ostringstream os2;
  os2 << nn::AvgPool1dConfig(3).init() << "; " << nn::AdaptiveAvgPool2dConfig({1, 1}).init();
  EXPECT_EQ(os2.str(),
            "AvgPool1d {kernel_size: 3, stride: 3, padding: 0, count_include_pad: true, "
            "ceil_mode: false}; AdaptiveAvgPool2d {output_size: [1, 1]}");
}

TEST(PoolLayerTest, LayersForwardAsTheirFunctions) {
  test::Sampler rng(5);
  const auto x = Tensor<AD, 4>::from_data(rng.uniform_data(Shape{2, 3, 8, 8}, -1, 1));
  const auto pool = nn::MaxPool2dConfig({2, 2}).init();
  EXPECT_EQ(pool.forward(x).shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(pool.forward(x).to_data().to_vec<float>(),
            F::max_pool2d(x, MaxPool2dOptions{{2, 2}, {2, 2}}).to_data().to_vec<float>());
  EXPECT_EQ(nn::AvgPool2dConfig({3, 3}).with_strides({1, 1}).with_padding({1, 1}).init()
                .forward(x).shape(),
            (Shape{2, 3, 8, 8}));
  EXPECT_EQ(nn::AdaptiveAvgPool2dConfig({1, 1}).init().forward(x).shape(), (Shape{2, 3, 1, 1}));
  const auto x1 = Tensor<Cpu, 3>::from_data(rng.uniform_data(Shape{2, 3, 9}, -1, 1));
  EXPECT_EQ(nn::MaxPool1dConfig(3).init().forward(x1).shape(), (Shape{2, 3, 3}));
  EXPECT_EQ(nn::AvgPool1dConfig(2).with_ceil_mode(true).init().forward(x1).shape(),
            (Shape{2, 3, 5}));
  EXPECT_EQ(nn::AdaptiveAvgPool1dConfig(4).init().forward(x1).shape(), (Shape{2, 3, 4}));
}

}  // namespace
}  // namespace kiln
