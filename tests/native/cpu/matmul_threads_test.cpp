// Thread-count invariance of the GEMM and of matmul: the packed SGEMM splits large products
// over the thread pool in blocks of whole register tiles (engine/src/cpu/gemm/gemm.hpp) and
// batched matmul spreads batch elements over it; results must be bit-identical for 1, 2, 3
// and 5 threads, forward and backward. The GEMM is also called with a per-thread work of 1
// multiply-add and tiny cache blocks, so even small products are cut into many blocks on
// every instruction set, and those results are checked against a double triple loop too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "../../../engine/src/cpu/gemm/gemm.hpp"
#include "kiln/kiln.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

namespace gemm = cpu::gemm;
using AD = Autodiff<Cpu>;

/// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

constexpr int kThreadCounts[] = {2, 3, 5};

std::vector<float> random_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> values(count);
  for (auto& v : values) v = static_cast<float>(gen() >> 8) * 0x1.0p-23f - 1.0f;
  return values;
}

#if defined(__EMSCRIPTEN__)
const char* const kArchs[] = {"sse4.1"};
#else
const char* const kArchs[] = {"avx512f", "fma3+avx2", "sse2"};
#endif

struct GemmCase {
  std::size_t m, n, k;
  bool a_transposed, b_transposed;
  float alpha, beta;
};

/// C = alpha·op(A)·op(B) + beta·C0 with `arch` and `blocking` (C's rows padded by 3);
/// empty if this machine lacks `arch`.
std::vector<float> run_gemm(const char* arch, const GemmCase& t, const gemm::Blocking& blocking) {
  const auto a = random_values(t.m * t.k, 1), b = random_values(t.k * t.n, 2);
  const std::size_t ldc = t.n + 3;
  std::vector<float> c = random_values(t.m * ldc, 3);
  const auto s = [](std::size_t x) { return static_cast<std::ptrdiff_t>(x); };
  gemm::SgemmArgs args;
  args.m = t.m;
  args.n = t.n;
  args.k = t.k;
  args.alpha = t.alpha;
  args.beta = t.beta;
  args.a = t.a_transposed ? gemm::ConstMatrixView{a.data(), 1, s(t.m)}
                          : gemm::ConstMatrixView{a.data(), s(t.k), 1};
  args.b = t.b_transposed ? gemm::ConstMatrixView{b.data(), 1, s(t.k)}
                          : gemm::ConstMatrixView{b.data(), s(t.n), 1};
  args.c = {c.data(), s(ldc), 1};
  if (!gemm::sgemm_with_arch(arch, args, blocking)) return {};

  // Independent check: a double triple loop, within the f32 bound of gemm_test.cpp.
  const std::vector<float> c0 = random_values(t.m * ldc, 3);
  const double u = std::ldexp(1.0, -24), gamma = (t.k + 3) * u / (1.0 - (t.k + 3) * u);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < t.m; ++i) {
    for (std::size_t j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= t.n) {
        bad += got != c0[i * ldc + j];  // the padding is untouched
        continue;
      }
      double sum = 0.0, abs_sum = 0.0;
      for (std::size_t p = 0; p < t.k; ++p) {
        const double x = t.a_transposed ? a[p * t.m + i] : a[i * t.k + p];
        const double y = t.b_transposed ? b[j * t.k + p] : b[p * t.n + j];
        sum += x * y;
        abs_sum += std::fabs(x * y);
      }
      const double expected = t.alpha * sum + t.beta * c0[i * ldc + j];
      const double bound =
          gamma * (std::fabs(t.alpha) * abs_sum + std::fabs(t.beta * c0[i * ldc + j]));
      bad += !(std::fabs(got - expected) <= bound);
    }
  }
  EXPECT_EQ(bad, 0u) << arch << " m=" << t.m << " n=" << t.n << " k=" << t.k << " with "
                     << num_threads() << " threads";
  return c;
}

TEST(MatmulThreads, SgemmSplitIntoManyBlocksIsBitIdentical) {
  ThreadCountGuard guard;
  const GemmCase cases[] = {
      // m, n, k, op(A) = Aᵀ, op(B) = Bᵀ, alpha, beta
      {37, 45, 29, false, false, 1.0f, 0.0f},  {43, 65, 22, true, false, 1.5f, -1.0f},
      {13, 130, 9, false, true, 1.0f, 1.0f},   {130, 13, 31, true, true, -2.0f, 0.5f},
      {100, 3, 17, false, false, 1.0f, 0.0f},  // thin: computed as Cᵀ = Bᵀ·Aᵀ
      {1, 77, 40, false, false, 1.0f, 0.0f},   {64, 1, 40, false, true, 1.0f, 0.0f},
  };
  gemm::Blocking tiny;  // several KC slabs and MC / NC blocks, every product split
  tiny.kc = 7;
  tiny.mc = 1;
  tiny.nc = 1;
  tiny.thread_work = 1;
  gemm::Blocking defaults;  // default blocks, every product split
  defaults.thread_work = 1;
  int ran = 0;
  for (const char* arch : kArchs) {
    for (const auto& blocking : {tiny, defaults}) {
      for (const GemmCase& t : cases) {
        set_num_threads(1);
        const auto reference = run_gemm(arch, t, blocking);
        if (reference.empty()) continue;  // this machine lacks the arch
        ++ran;
        for (const int threads : kThreadCounts) {
          set_num_threads(threads);
          const auto got = run_gemm(arch, t, blocking);
          ASSERT_EQ(got.size(), reference.size());
          EXPECT_EQ(std::memcmp(got.data(), reference.data(), got.size() * sizeof(float)), 0)
              << arch << " m=" << t.m << " n=" << t.n << " k=" << t.k << " with " << threads
              << " threads";
        }
      }
    }
  }
  EXPECT_GT(ran, 0);
}

/// Forward values and every gradient of products big enough for the default split: the
/// MNIST MLP's first layer (64x784 · 784x128, both ways of its backward), odd sizes, a thin
/// output, batched matmuls with many small and with few large batch elements, and a
/// broadcast batch dim.
std::vector<TensorData> matmul_results() {
  test::Sampler rng(11);
  std::vector<TensorData> results;
  const auto product = [&](const Shape& ls, const Shape& rs, bool tl, bool tr) {
    auto x = Tensor<AD, 4>::from_data(rng.uniform_data(ls, -1, 1)).require_grad();
    auto w = Tensor<AD, 4>::from_data(rng.uniform_data(rs, -1, 1)).require_grad();
    auto y = x.matmul_transposed(w, tl, tr);
    auto grads = (y * y).sum().backward();
    results.push_back(y.to_data());
    results.push_back(x.grad(grads)->to_data());
    results.push_back(w.grad(grads)->to_data());
  };
  product({1, 1, 64, 784}, {1, 1, 128, 784}, false, true);  // nn::Linear: x·Wᵀ
  product({1, 1, 64, 784}, {1, 1, 784, 128}, false, false);
  product({1, 1, 97, 301}, {1, 1, 301, 203}, false, false);
  product({1, 1, 401, 600}, {1, 1, 401, 10}, true, false);  // thin output
  product({2, 5, 37, 129}, {2, 5, 129, 71}, false, false);  // 10 small elements
  product({1, 2, 150, 200}, {1, 2, 200, 170}, false, false);  // 2 large elements
  product({3, 1, 60, 90}, {1, 4, 90, 80}, false, false);      // broadcast batch dims
  return results;
}

TEST(MatmulThreads, MatmulAndGradientsAreIdenticalForAnyThreadCount) {
  ThreadCountGuard guard;
  set_num_threads(1);
  const auto reference = matmul_results();
  for (const int threads : kThreadCounts) {
    set_num_threads(threads);
    const auto got = matmul_results();
    ASSERT_EQ(got.size(), reference.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].shape, reference[i].shape);
      EXPECT_TRUE(got[i].bytes == reference[i].bytes)
          << "result " << i << " differs with " << threads << " threads";
    }
  }
}

TEST(MatmulThreads, SplitProductMatchesAnIndependentSum) {
  // 64x784 · 784x128 (the MNIST layer) on 3 threads, against a double sum per element.
  ThreadCountGuard guard;
  set_num_threads(3);
  test::Sampler rng(3);
  const auto a = rng.uniform_data(Shape{64, 784}, -1, 1);
  const auto b = rng.uniform_data(Shape{784, 128}, -1, 1);
  const auto c = Tensor<Cpu, 2>::from_data(a).matmul(Tensor<Cpu, 2>::from_data(b)).to_data();
  const auto av = a.to_vec<float>(), bv = b.to_vec<float>(), cv = c.to_vec<float>();
  const double u = std::ldexp(1.0, -24), gamma = 787 * u / (1.0 - 787 * u);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < 64; ++i) {
    for (std::size_t j = 0; j < 128; ++j) {
      double sum = 0.0, abs_sum = 0.0;
      for (std::size_t p = 0; p < 784; ++p) {
        const double t = static_cast<double>(av[i * 784 + p]) * bv[p * 128 + j];
        sum += t;
        abs_sum += std::fabs(t);
      }
      bad += !(std::fabs(cv[i * 128 + j] - sum) <= gamma * abs_sum);
    }
  }
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace kiln
