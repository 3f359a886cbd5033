// Index arithmetic overflow for huge n / align (UBSan reports signed overflow).
#include <atomic>
#include <cstdio>
#include <cstdint>
#include <limits>
#include "core/parallel.hpp"
#include "kiln/core/thread_pool.hpp"
using namespace kiln;
int main(int argc, char**) {
  const bool only_align = argc > 1;
  set_num_threads(4);
  if (!only_align) {
    const std::int64_t n = std::int64_t{1} << 62;   // n * (p + 1) overflows for p = 3
    std::atomic<std::int64_t> cov{0};
    detail::parallel_for(n, [&](std::int64_t b, std::int64_t e) { cov += e - b; });
    std::printf("parallel_for(2^62): covered %lld of %lld\n", (long long)cov.load(), (long long)n);
  }
  {
    const std::int64_t n = 1000000, align = std::numeric_limits<std::int64_t>::max();
    std::atomic<std::int64_t> cov{0};
    detail::parallel_for(n, 1, align, [&](std::int64_t b, std::int64_t e) {
      std::printf("  piece [%lld, %lld)\n", (long long)b, (long long)e); cov += e - b; });
    std::printf("parallel_for(1e6, grain 1, align INT64_MAX): covered %lld of %lld\n", (long long)cov.load(), (long long)n);
  }
}
