// kiln::set_num_threads and the thread-count invariance of the convolution kernels: the
// forward value and all gradients are bit-identical for 1, 2, 3 and 5 threads (the batch
// split never changes the order of a floating-point sum; engine/src/cpu/conv/conv.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kiln/kiln.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

/// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(ThreadPool, SetNumThreadsIsReadBack) {
  ThreadCountGuard guard;
  set_num_threads(3);
  EXPECT_EQ(num_threads(), 3);
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
}

TEST(ThreadPool, ZeroThreadsIsAConfigError) {
  EXPECT_THAT([] { set_num_threads(0); },
              ThrowsMessage<ConfigError>(HasSubstr("set_num_threads: the number of threads must "
                                                   "be >= 1, got 0")));
}

/// out, grad_x, grad_w, grad_b of a conv2d (7 images, 3x3, stride 2, padding 1, groups 2)
/// and of a conv_transpose2d on the same inputs.
std::vector<TensorData> conv_results() {
  test::Sampler rng(5);
  const auto x_data = rng.uniform_data(Shape{7, 4, 9, 11}, -1, 1);
  const auto w_data = rng.uniform_data(Shape{6, 2, 3, 3}, -1, 1);
  const auto b_data = rng.uniform_data(Shape{6}, -1, 1);
  const auto wt_data = rng.uniform_data(Shape{4, 3, 3, 3}, -1, 1);
  std::vector<TensorData> results;
  {
    auto x = Tensor<AD, 4>::from_data(x_data).require_grad();
    auto w = Tensor<AD, 4>::from_data(w_data).require_grad();
    auto b = Tensor<AD, 1>::from_data(b_data).require_grad();
    auto y = conv2d(x, w, std::optional(b), ConvOptions<2>({2, 2}, {1, 1}, {1, 1}, 2));
    auto grads = (y * y).sum().backward();
    results = {y.to_data(), x.grad(grads)->to_data(), w.grad(grads)->to_data(),
               b.grad(grads)->to_data()};
  }
  {
    auto x = Tensor<AD, 4>::from_data(x_data).require_grad();
    auto w = Tensor<AD, 4>::from_data(wt_data).require_grad();
    auto y = conv_transpose2d(x, w, std::nullopt,
                              ConvTransposeOptions<2>({2, 2}, {1, 1}, {1, 1}, {1, 1}, 2));
    auto grads = (y * y).sum().backward();
    results.push_back(y.to_data());
    results.push_back(x.grad(grads)->to_data());
    results.push_back(w.grad(grads)->to_data());
  }
  return results;
}

TEST(ThreadPool, ConvResultsAreIdenticalForAnyThreadCount) {
  ThreadCountGuard guard;
  set_num_threads(1);
  const auto reference = conv_results();
  for (int threads : {2, 3, 5}) {
    set_num_threads(threads);
    const auto got = conv_results();
    ASSERT_EQ(got.size(), reference.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_NO_THROW(got[i].assert_eq(reference[i])) << "result " << i << " with " << threads
                                                      << " threads";
    }
  }
}

}  // namespace
}  // namespace kiln
