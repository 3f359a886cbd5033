// SGEMM in WebAssembly (SIMD128, no FMA: mul + add), run under Node: checks a few products
// against a double triple loop, then times C = A·B for n = 128 .. 1024, single thread.
// Built and run by bench/wasm/run_sgemm.sh against build/wasm/libkiln.a. V8 compiles a
// function with its baseline tier first, so every size is warmed up before timing. Rates
// use the process's CPU time.
#include <emscripten.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"

// CPU seconds of the Node process (user + system), so that time spent waiting for a core
// on a shared machine does not count (native benchmarks use CPU time too).
EM_JS(double, cpu_seconds, (), {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e-6;
});

namespace gemm = kiln::cpu::gemm;

namespace {

std::vector<float> random_values(std::size_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<float> v(count);
  for (auto& x : v) x = static_cast<float>(gen() >> 8) * 0x1.0p-23f - 1.0f;
  return v;
}

void multiply(std::size_t m, std::size_t n, std::size_t k, const float* a, const float* b,
              float* c) {
  gemm::SgemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {a, static_cast<std::ptrdiff_t>(k), 1};
  args.b = {b, static_cast<std::ptrdiff_t>(n), 1};
  args.c = {c, static_cast<std::ptrdiff_t>(n), 1};
  gemm::sgemm(args);
}

/// 0 if every element is within γ(k + 2)·Σ|a||b| of the exact product.
int check(std::size_t m, std::size_t n, std::size_t k) {
  const auto a = random_values(m * k, 1), b = random_values(k * n, 2);
  std::vector<float> c(m * n);
  multiply(m, n, k, a.data(), b.data(), c.data());
  const double u = std::ldexp(1.0, -24), gamma = (k + 2) * u / (1 - (k + 2) * u);
  int bad = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double sum = 0, abs_sum = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double t = static_cast<double>(a[i * k + p]) * b[p * n + j];
        sum += t;
        abs_sum += std::fabs(t);
      }
      bad += !(std::fabs(c[i * n + j] - sum) <= gamma * abs_sum);
    }
  }
  std::printf("check m=%zu n=%zu k=%zu: %s\n", m, n, k, bad ? "FAILED" : "ok");
  return bad;
}

}  // namespace

int main() {
  int bad = 0;
  for (std::size_t s : {1u, 5u, 6u, 7u, 8u, 9u, 17u, 63u, 100u}) bad += check(s, s + 3, s + 1);
  bad += check(257, 513, 129);
  bad += check(3, 40, 600);

  for (std::size_t n : {128u, 256u, 512u, 1024u}) {
    const auto a = random_values(n * n, 3), b = random_values(n * n, 4);
    std::vector<float> c(n * n);
    const double flops = 2.0 * n * n * n;
    for (int i = 0; i < 3; ++i) multiply(n, n, n, a.data(), b.data(), c.data());  // warm up
    std::vector<double> rates;
    for (int rep = 0; rep < 5; ++rep) {
      int calls = 0;
      const double t0 = cpu_seconds();
      double elapsed = 0;
      do {
        multiply(n, n, n, a.data(), b.data(), c.data());
        ++calls;
        elapsed = cpu_seconds() - t0;
      } while (elapsed < 0.2);
      rates.push_back(flops * calls / elapsed * 1e-9);
    }
    std::sort(rates.begin(), rates.end());
    std::printf("n=%zu gflops=%.2f (median of 5, max %.2f)\n", n, rates[2], rates[4]);
  }
  return bad ? 1 : 0;
}
