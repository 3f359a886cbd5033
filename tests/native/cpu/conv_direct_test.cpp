// The direct convolution kernels (engine/src/cpu/kernels/conv_direct.hpp: one group, stride
// 1, dilation 1, no padding, small channel counts) against naive loops summed in double,
// for shapes that exercise every block size (8/4/1 output rows, 4/1 taps), wrapped columns,
// a batch spread over several weight-gradient chunks and the read past the last image;
// their thread-count invariance; and the 2×2 max-pool path (ties, NaN) against the rule
// "strictly greater wins, a NaN becomes the max".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

struct Case {
  std::int64_t n, c, o, h, w, kh, kw;
};

struct Results {
  std::vector<float> y, dx, dw;
};

Results run_kiln(const Case& k, const TensorData& x, const TensorData& w, const TensorData& b,
                 const TensorData& g) {
  const ConvOptions<2> opt;
  auto xt = Tensor<Cpu, 4>::from_data(x).into_primitive();
  auto wt = Tensor<Cpu, 4>::from_data(w).into_primitive();
  auto bt = Tensor<Cpu, 1>::from_data(b).into_primitive();
  auto gt = Tensor<Cpu, 4>::from_data(g).into_primitive();
  auto y = CpuOps::conv2d(xt, wt, std::optional(bt), opt);
  auto dx = CpuOps::conv2d_x_backward(xt.shape(), wt, gt, opt);
  auto dw = CpuOps::conv2d_weight_backward(xt, wt.shape(), gt, opt);
  (void)k;
  return {Tensor<Cpu, 4>(y).to_data().to_vec<float>(), Tensor<Cpu, 4>(dx).to_data().to_vec<float>(),
          Tensor<Cpu, 4>(dw).to_data().to_vec<float>()};
}

Results run_naive(const Case& k, const std::vector<float>& x, const std::vector<float>& w,
                  const std::vector<float>& b, const std::vector<float>& g) {
  const std::int64_t ho = k.h - k.kh + 1, wo = k.w - k.kw + 1;
  std::vector<double> y(k.n * k.o * ho * wo), dx(k.n * k.c * k.h * k.w, 0.0),
      dw(k.o * k.c * k.kh * k.kw, 0.0);
  auto X = [&](std::int64_t n, std::int64_t c, std::int64_t i, std::int64_t j) {
    return ((n * k.c + c) * k.h + i) * k.w + j;
  };
  auto W = [&](std::int64_t o, std::int64_t c, std::int64_t i, std::int64_t j) {
    return ((o * k.c + c) * k.kh + i) * k.kw + j;
  };
  auto Y = [&](std::int64_t n, std::int64_t o, std::int64_t i, std::int64_t j) {
    return ((n * k.o + o) * ho + i) * wo + j;
  };
  for (std::int64_t n = 0; n < k.n; ++n)
    for (std::int64_t o = 0; o < k.o; ++o)
      for (std::int64_t p = 0; p < ho; ++p)
        for (std::int64_t q = 0; q < wo; ++q) {
          double acc = b[o];
          for (std::int64_t c = 0; c < k.c; ++c)
            for (std::int64_t i = 0; i < k.kh; ++i)
              for (std::int64_t j = 0; j < k.kw; ++j) {
                acc += double(w[W(o, c, i, j)]) * x[X(n, c, p + i, q + j)];
                dx[X(n, c, p + i, q + j)] += double(w[W(o, c, i, j)]) * g[Y(n, o, p, q)];
                dw[W(o, c, i, j)] += double(g[Y(n, o, p, q)]) * x[X(n, c, p + i, q + j)];
              }
          y[Y(n, o, p, q)] = acc;
        }
  auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  return {f(y), f(dx), f(dw)};
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::abs(want[i]))) << what << " at " << i;
  }
}

TEST(ConvDirect, MatchesNaiveLoops) {
  const std::vector<Case> cases = {
      {11, 3, 13, 9, 7, 3, 2},   // 8 + 4 + 1 output rows, 4 + 1 + 1 taps, 11 images > 8 chunks
      {3, 1, 8, 28, 28, 3, 3},   // the anchor CNN's conv1
      {2, 8, 16, 13, 13, 3, 3},  // and conv2
      {1, 2, 3, 1, 40, 1, 5},    // a conv1d as conv2d (height 1), one image
      {5, 4, 2, 6, 6, 6, 6},     // kernel as large as the input: 1×1 output
  };
  test::Sampler rng(11);
  for (const Case& k : cases) {
    const Shape ys{k.n, k.o, k.h - k.kh + 1, k.w - k.kw + 1};
    const auto x = rng.uniform_data(Shape{k.n, k.c, k.h, k.w}, -1, 1);
    const auto w = rng.uniform_data(Shape{k.o, k.c, k.kh, k.kw}, -1, 1);
    const auto b = rng.uniform_data(Shape{k.o}, -1, 1);
    const auto g = rng.uniform_data(ys, -1, 1);
    const Results got = run_kiln(k, x, w, b, g);
    const Results want =
        run_naive(k, x.to_vec<float>(), w.to_vec<float>(), b.to_vec<float>(), g.to_vec<float>());
    SCOPED_TRACE(testing::Message() << "case n=" << k.n << " c=" << k.c << " o=" << k.o);
    expect_near(got.y, want.y, "forward");
    expect_near(got.dx, want.dx, "grad_x");
    expect_near(got.dw, want.dw, "grad_w");
  }
}

TEST(ConvDirect, ThreadCountDoesNotChangeBits) {
  const int saved = num_threads();
  const Case k{19, 3, 9, 10, 12, 3, 3};
  test::Sampler rng(3);
  const auto x = rng.uniform_data(Shape{k.n, k.c, k.h, k.w}, -1, 1);
  const auto w = rng.uniform_data(Shape{k.o, k.c, k.kh, k.kw}, -1, 1);
  const auto b = rng.uniform_data(Shape{k.o}, -1, 1);
  const auto g = rng.uniform_data(Shape{k.n, k.o, 8, 10}, -1, 1);
  set_num_threads(1);
  const Results one = run_kiln(k, x, w, b, g);
  for (int threads : {2, 3, 5}) {
    set_num_threads(threads);
    const Results many = run_kiln(k, x, w, b, g);
    EXPECT_EQ(many.y, one.y) << threads;
    EXPECT_EQ(many.dx, one.dx) << threads;
    EXPECT_EQ(many.dw, one.dw) << threads;
  }
  set_num_threads(saved);
}

TEST(MaxPool2x2, TiesNanAndTailsFollowTheScalarRule) {
  // 2 planes of 5 × 11 (out 2 × 5: one 4-wide SSE step and a scalar tail; the last row and
  // column are not in any window). Small integers make ties; a few NaNs.
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  const std::int64_t h = 5, w = 11, oh = 2, ow = 5;
  std::vector<float> v(2 * h * w);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 5);
  v[3] = kNan;            // plane 0, window (0, 1), first tap
  v[w + 7] = kNan;        // plane 0, window (0, 3), tap (1, 1)
  v[h * w + 2] = kNan;    // plane 1, window (0, 1)
  v[h * w + 3] = kNan;    // same window: the later NaN wins
  v[2 * w + 9] = -std::numeric_limits<float>::infinity();
  auto x = Tensor<Cpu, 4>::from_data(TensorData(Shape{1, 2, h, w}, v)).into_primitive();
  auto [out, idx] = CpuOps::max_pool2d_with_indices(x, MaxPool2dOptions{});
  const auto got = Tensor<Cpu, 4>(out).to_data().to_vec<float>();
  const auto got_idx = Tensor<Cpu, 4, Int>(idx).to_data().to_vec<std::int32_t>();
  ASSERT_EQ(got.size(), static_cast<std::size_t>(2 * oh * ow));
  for (std::int64_t p = 0; p < 2; ++p) {
    for (std::int64_t i = 0; i < oh; ++i) {
      for (std::int64_t j = 0; j < ow; ++j) {
        float best = -std::numeric_limits<float>::infinity();
        std::int64_t at = 2 * i * w + 2 * j;
        for (std::int64_t a = 0; a < 2; ++a) {
          for (std::int64_t c = 0; c < 2; ++c) {
            const std::int64_t pos = (2 * i + a) * w + 2 * j + c;
            const float e = v[p * h * w + pos];
            if (e > best || std::isnan(e)) best = e, at = pos;
          }
        }
        const std::size_t o = (p * oh + i) * ow + j;
        if (std::isnan(best)) {
          EXPECT_TRUE(std::isnan(got[o])) << o;
        } else {
          EXPECT_EQ(got[o], best) << o;
        }
        EXPECT_EQ(got_idx[o], at) << o;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
