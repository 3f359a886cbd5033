// The pool's parallel_for (engine/src/core/thread_pool.cpp): each thread runs its own range
// in pieces and one that has finished takes pieces off the back of another's. Whatever the
// timing, the pieces cover [0, n) exactly once, start at multiples of `align`, and the first
// exception thrown by fn reaches the caller after every piece has run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "../../../engine/src/core/parallel.hpp"
#include "kiln/core/thread_pool.hpp"

namespace kiln {
namespace {

/// Restores the thread count a test changed.
class ThreadCountGuard {
 public:
  ThreadCountGuard() : saved_(num_threads()) {}
  ~ThreadCountGuard() { set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(ParallelFor, PiecesCoverEveryIndexOnceWhenAThreadIsSlow) {
  ThreadCountGuard guard;
  set_num_threads(2);
  const std::int64_t n = 64;
  const auto caller = std::this_thread::get_id();
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
  std::atomic<bool> caller_ran_second_half{false};
  // Indices of the second range are slow on a worker (2 ms each), so the caller finishes
  // its own range and takes pieces off the back of the worker's; if the worker never gets
  // a core, the caller runs everything. Either way the caller runs some of [32, 64).
  detail::parallel_for(n, [&](std::int64_t begin, std::int64_t end) {
    const bool on_caller = std::this_thread::get_id() == caller;
    for (std::int64_t i = begin; i < end; ++i) {
      runs[static_cast<std::size_t>(i)].fetch_add(1);
      if (i >= n / 2 && on_caller) caller_ran_second_half = true;
      if (i >= n / 2 && !on_caller) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  for (std::int64_t i = 0; i < n; ++i) EXPECT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << i;
  EXPECT_TRUE(caller_ran_second_half.load());
}

TEST(ParallelFor, ASingleRangeLeavesThePoolToANestedSplit) {
  // A parallel_for of one index is a plain call: a parallel_for inside it (a batch-1
  // convolution's GEMM) still gets both threads, once per outer call.
  ThreadCountGuard guard;
  set_num_threads(2);
  detail::reset_parallel_stats();
  std::atomic<int> inner{0};
  detail::parallel_for(1, [&](std::int64_t, std::int64_t) {
    detail::parallel_for(64, [&](std::int64_t begin, std::int64_t end) {
      inner.fetch_add(static_cast<int>(end - begin));
    });
  });
  EXPECT_EQ(inner.load(), 64);
  const detail::ParallelStats stats = detail::parallel_stats();
  EXPECT_EQ(stats.calls, 1);  // the inner call split; the outer one did not
  EXPECT_EQ(stats.ranges, 2);
}

TEST(ParallelFor, GrainedPiecesStartOnTheAlignment) {
  ThreadCountGuard guard;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    const std::int64_t n = 5 * detail::kElementwiseGrain + 37;
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
    std::mutex m;
    std::vector<std::pair<std::int64_t, std::int64_t>> pieces;
    detail::parallel_for(n, detail::kElementwiseGrain, 64, [&](std::int64_t begin, std::int64_t end) {
      {
        std::lock_guard<std::mutex> lock(m);
        pieces.emplace_back(begin, end);
      }
      for (std::int64_t i = begin; i < end; ++i) runs[static_cast<std::size_t>(i)].fetch_add(1);
    });
    for (const auto& [begin, end] : pieces) {
      EXPECT_EQ(begin % 64, 0) << threads << " threads: piece [" << begin << ", " << end << ")";
      EXPECT_LT(begin, end);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(runs[static_cast<std::size_t>(i)].load(), 1) << threads << " threads, index " << i;
    }
  }
}

TEST(ParallelFor, FirstExceptionReachesTheCallerAfterEveryPieceRan) {
  ThreadCountGuard guard;
  set_num_threads(2);
  const std::int64_t n = 256;
  std::atomic<std::int64_t> ran{0};
  EXPECT_THROW(detail::parallel_for(n,
                                    [&](std::int64_t begin, std::int64_t end) {
                                      ran.fetch_add(end - begin);
                                      if (begin <= 200 && 200 < end) throw std::runtime_error("200");
                                    }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), n);
  // The pool is usable afterwards.
  std::atomic<std::int64_t> again{0};
  detail::parallel_for(n, [&](std::int64_t begin, std::int64_t end) { again.fetch_add(end - begin); });
  EXPECT_EQ(again.load(), n);
}

}  // namespace
}  // namespace kiln
