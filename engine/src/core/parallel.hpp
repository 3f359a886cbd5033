#pragma once
// The kernels' thread pool (engine/src/core/thread_pool.cpp): kiln::num_threads() - 1
// persistent workers plus the calling thread.
#include <cstdint>
#include <functional>

namespace kiln::detail {

/// False in a WebAssembly build without pthreads, where every kernel runs on the calling
/// thread: templates that split work drop their split path there (`if constexpr`), so the
/// single-threaded engine carries no code for it.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
inline constexpr bool kHasThreads = false;
#else
inline constexpr bool kHasThreads = true;
#endif

/// Splits [0, n) into at most num_threads() contiguous ranges, one per thread (the calling
/// thread takes the first), and calls fn(begin, end) on disjoint contiguous pieces that
/// cover [0, n) once: a thread runs its own range from the front in pieces, and one that has
/// finished takes pieces off the back of another's (thread_pool.cpp); returns when all have
/// run. How many pieces there are and which thread runs which is unspecified, so fn must
/// make each index's result independent of the split (write disjoint outputs; no shared
/// accumulation). Runs inline (one call fn(0, n)) with
/// one thread, when n <= 1, when called from inside a pool task, or when another thread is
/// using the pool. The first exception thrown by fn is rethrown after all ranges finish.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn);

/// parallel_for for cheap per-index work: splits [0, n) into parallel_parts(n, grain)
/// contiguous ranges (each of at least `grain` indices), so that an op too small to repay
/// waking a thread runs inline as one call fn(0, n). Every piece starts at a multiple of
/// `align` (>= 1; the last one ends at n), so that a kernel whose vector body and scalar
/// tail differ sees the same body/tail split as a serial call when align is a multiple of
/// its vector width. Same guarantees as parallel_for otherwise.
void parallel_for(std::int64_t n, std::int64_t grain, std::int64_t align,
                  const std::function<void(std::int64_t, std::int64_t)>& fn);

/// The number of ranges parallel_for(n, grain, align, fn) splits into on this thread count:
/// min(num_threads(), n / grain), at least 1 (n <= 0: 0).
std::int64_t parallel_parts(std::int64_t n, std::int64_t grain) noexcept;

/// The index count below which element-wise and pooling kernels run on one thread: about
/// 20 µs of memory-bound work natively, more than a wake-up of the pool costs.
inline constexpr std::int64_t kElementwiseGrain = 16384;

/// Counts of the pool's work since the last reset_parallel_stats(), for tests (that a large
/// op is split into N ranges on N threads, and a small one is not). `calls`: parallel_for
/// calls that ran more than one range; `ranges`: the ranges those calls ran.
struct ParallelStats {
  std::int64_t calls = 0;
  std::int64_t ranges = 0;
};
ParallelStats parallel_stats() noexcept;
void reset_parallel_stats() noexcept;

}  // namespace kiln::detail
