#pragma once
// The kernels' thread pool (engine/src/core/thread_pool.cpp): kiln::num_threads() - 1
// persistent workers plus the calling thread.
#include <cstdint>
#include <functional>

namespace kiln::detail {

/// Splits [0, n) into at most num_threads() contiguous ranges and calls fn(begin, end) once
/// per range, the calling thread taking one; returns when all have run. Which range a
/// thread gets is unspecified, so fn must make each index's result independent of the split
/// (write disjoint outputs; no shared accumulation). Runs inline (one call fn(0, n)) with
/// one thread, when n <= 1, when called from inside a pool task, or when another thread is
/// using the pool. The first exception thrown by fn is rethrown after all ranges finish.
void parallel_for(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn);

}  // namespace kiln::detail
