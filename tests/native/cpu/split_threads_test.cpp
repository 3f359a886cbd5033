// The thread splits of the cheap kernels (engine/src/cpu/parallel_plan.hpp and the pooling,
// conv-bias and fused-optimizer splits): work counts (a large op runs as N ranges on N
// threads, a small one inline) and results bit-identical for 1, 2 and 3 threads (the
// element-wise kernels and pools are maps; the conv bias gradient sums each channel on one
// thread; no sum's order depends on the thread count). The reference for "bit-identical" is
// the 1-thread run; a few values are also checked by hand so that a split that dropped or
// doubled a chunk cannot pass by being wrong the same way on every thread count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "../../../engine/src/core/parallel.hpp"
#include "kiln/kiln.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;

/// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

/// The pool's split calls and ranges while `fn` runs.
template <class Fn>
detail::ParallelStats count_splits(Fn&& fn) {
  detail::reset_parallel_stats();
  fn();
  return detail::parallel_stats();
}

TEST(SplitThreads, LargeUnaryOpRunsAsOneRangePerThread) {
  ThreadCountGuard guard;
  const auto x = Tensor<Cpu, 2>::ones({300, 400});  // 120,000 elements: 7 grains
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const auto stats = count_splits([&] { (void)x.exp(); });
    EXPECT_EQ(stats.calls, threads == 1 ? 0 : 1) << threads << " threads";
    EXPECT_EQ(stats.ranges, threads == 1 ? 0 : threads) << threads << " threads";
  }
}

TEST(SplitThreads, SmallOpsStayOnTheCallingThread) {
  ThreadCountGuard guard;
  set_num_threads(2);
  // Below 2 · kElementwiseGrain elements: waking a thread would cost more than it saves.
  const auto x = Tensor<Cpu, 2>::ones({100, 300});  // 30,000 < 32,768
  const auto stats = count_splits([&] {
    (void)x.exp();
    (void)(x + x);
    (void)x.greater_elem(0.5);
    (void)nn::functional::max_pool2d(Tensor<Cpu, 4>::ones({2, 3, 40, 40}), MaxPool2dOptions{});
  });
  EXPECT_EQ(stats.calls, 0);
  EXPECT_EQ(detail::parallel_parts(2 * detail::kElementwiseGrain - 1, detail::kElementwiseGrain),
            1);
  EXPECT_EQ(detail::parallel_parts(2 * detail::kElementwiseGrain, detail::kElementwiseGrain), 2);
}

TEST(SplitThreads, TrainingStepKernelsAreSplit) {
  ThreadCountGuard guard;
  set_num_threads(2);
  // The MNIST CNN's first layer at batch 64: [64, 8, 26, 26] activations.
  const auto x = Tensor<Cpu, 4>::ones({64, 8, 26, 26});
  const auto b = Tensor<Cpu, 4>::ones({1, 8, 1, 1});
  auto one_split = [](auto&& fn) {
    const auto s = count_splits(fn);
    return s.calls == 1 && s.ranges == 2;
  };
  EXPECT_TRUE(one_split([&] { (void)activation::relu(x); })) << "relu";
  EXPECT_TRUE(one_split([&] { (void)(x * b); })) << "broadcast multiply (multi-run plan)";
  EXPECT_TRUE(one_split([&] { (void)x.greater_elem(0.0); })) << "compare";
  const auto mask = x.greater_elem(0.0);
  EXPECT_TRUE(one_split([&] { (void)x.mask_where(mask, b); })) << "where";
  EXPECT_TRUE(one_split([&] { (void)Tensor<Cpu, 4>::zeros({64, 8, 26, 26}); })) << "zeros";
  EXPECT_TRUE(one_split([&] { (void)nn::functional::max_pool2d(x, MaxPool2dOptions{}); }))
      << "max_pool2d";
}

TEST(SplitThreads, SplitResultsAreExactByHand) {
  ThreadCountGuard guard;
  set_num_threads(2);
  // 100,003 elements (a partial vector at the end): i + 0.5 and relu(i - 50,000) are exact
  // in f32 for these integers, so every element can be checked.
  const std::int64_t n = 100003;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const auto x = Tensor<Cpu, 1>::from_data(TensorData(Shape{n}, std::vector<float>(v)));
  const auto plus = (x + 0.5f).to_data().to_vec<float>();
  const auto relu = activation::relu(x - 50000.f).to_data().to_vec<float>();
  const auto zeros = Tensor<Cpu, 1>::full({n}, 3.5f).to_data().to_vec<float>();
  ASSERT_EQ(plus.size(), v.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    ASSERT_EQ(plus[k], static_cast<float>(i) + 0.5f) << i;
    ASSERT_EQ(relu[k], i > 50000 ? static_cast<float>(i - 50000) : 0.f) << i;
    ASSERT_EQ(zeros[k], 3.5f) << i;
  }
}

/// The conv bias gradient splits by whole images (each thread sums the rows of its own
/// images; the images are then added in order): with an upstream gradient of n + 1 on image
/// n, every channel's gradient is (1 + ... + 6) · 39 · 37 = 30,303, exact in f32, on 1, 2
/// and 3 threads; an image summed twice or dropped would change it.
TEST(SplitThreads, ConvBiasGradientSplitsByImageExactByHand) {
  ThreadCountGuard guard;
  std::vector<float> per_image;
  for (int n = 0; n < 6; ++n) per_image.push_back(static_cast<float>(n + 1));
  const auto scale = Tensor<AD, 4>::from_data(TensorData(Shape{6, 1, 1, 1}, per_image));
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    auto x = Tensor<AD, 4>::ones({6, 8, 41, 39});  // conv output [6, 4, 39, 37]
    auto w = Tensor<AD, 4>::ones({4, 8, 3, 3}).require_grad();
    auto b = Tensor<AD, 1>::zeros({4}).require_grad();
    auto c = conv2d(x, w, std::optional(b), ConvOptions<2>({1, 1}, {0, 0}, {1, 1}, 1));
    auto grads = (c * scale).sum().backward();
    const auto gb = b.grad(grads)->to_data().to_vec<float>();
    ASSERT_EQ(gb.size(), 4u);
    for (float v : gb) EXPECT_EQ(v, 30303.0f) << threads << " threads";
  }
  // 6 images of 4 · 1,443 outputs: 2 images a grain, so the sum splits on 2 threads.
  set_num_threads(2);
  const auto go = Tensor<Cpu, 4>::ones({6, 4, 39, 37});
  const auto stats = count_splits([&] { (void)CpuOps::conv_bias_backward(go.primitive()); });
  EXPECT_EQ(stats.calls, 1);
  EXPECT_EQ(stats.ranges, 2);
}

/// Outputs and gradients of the split kernels on inputs large enough to split: element-wise
/// maps with a transcendental (vector body vs scalar tail), broadcasts, compare/where, max
/// and avg pools (2x2 fast path and the generic window), conv2d's bias gradient, and three
/// Adam steps of a 400x300 linear layer (120,300 parameters).
std::vector<TensorData> split_results() {
  test::Sampler rng(17);
  const auto x_data = rng.uniform_data(Shape{6, 8, 41, 39}, -2, 2);  // 76,752 elements
  const auto s_data = rng.uniform_data(Shape{1, 8, 1, 39}, -1, 1);
  const auto w_data = rng.uniform_data(Shape{4, 8, 3, 3}, -1, 1);
  const auto b_data = rng.uniform_data(Shape{4}, -1, 1);
  std::vector<TensorData> out;
  {
    auto x = Tensor<AD, 4>::from_data(x_data).require_grad();
    auto s = Tensor<AD, 4>::from_data(s_data).require_grad();
    auto w = Tensor<AD, 4>::from_data(w_data).require_grad();
    auto b = Tensor<AD, 1>::from_data(b_data).require_grad();
    auto e = (x * s).tanh() + x.exp() * 0.25f;
    auto r = activation::relu(x - 0.1f);
    auto m2 = nn::functional::max_pool2d(e, MaxPool2dOptions{});
    MaxPool2dOptions generic;
    generic.kernel_size = {3, 3};
    generic.padding = {1, 1};
    auto m3 = nn::functional::max_pool2d(r, generic);
    AvgPool2dOptions avg;
    avg.kernel_size = {3, 3};
    avg.padding = {1, 1};
    auto a3 = nn::functional::avg_pool2d(x, avg);
    auto c = conv2d(x, w, std::optional(b), ConvOptions<2>({1, 1}, {0, 0}, {1, 1}, 1));
    auto loss = (m2 * m2).sum() + m3.sum() + (a3 * a3).sum() + (c * c).sum();
    auto grads = loss.backward();
    out = {e.to_data(), r.to_data(), m2.to_data(), m3.to_data(), a3.to_data(), c.to_data(),
           x.grad(grads)->to_data(), s.grad(grads)->to_data(), w.grad(grads)->to_data(),
           b.grad(grads)->to_data(), x.greater_elem(0.3).to_data()};
  }
  {
    AD::seed(3);
    auto fc = nn::LinearConfig(400, 300).init<AD>();
    auto optim = optim::AdamConfig().init<AD>();
    const auto in = Tensor<AD, 2>::from_data(rng.uniform_data(Shape{32, 400}, -1, 1));
    for (int step = 0; step < 3; ++step) {
      auto y = fc.forward(in);
      auto loss = (y * y).mean();
      fc = optim.step(1e-2, fc, optim::GradientsParams<AD>::from_grads(loss.backward(), fc));
    }
    out.push_back(fc.weight.val().to_data());
    out.push_back(fc.bias->val().to_data());
  }
  return out;
}

TEST(SplitThreads, ResultsAreIdenticalForAnyThreadCount) {
  ThreadCountGuard guard;
  set_num_threads(1);
  const auto reference = split_results();
  for (int threads : {2, 3}) {
    set_num_threads(threads);
    detail::reset_parallel_stats();
    const auto got = split_results();
    EXPECT_GT(detail::parallel_stats().calls, 10) << "the kernels did not split";
    ASSERT_EQ(got.size(), reference.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NO_THROW(got[i].assert_eq(reference[i]))
          << "result " << i << " with " << threads << " threads";
    }
  }
}

}  // namespace
}  // namespace kiln
