#pragma once
/// Counters of the tensor buffers the engine has allocated, for leak tests and
/// `kiln.memory()` in JS. Counts every CPU buffer (64-byte aligned) ever allocated.
#include <cstdint>

namespace kiln {

struct MemoryStats {
  std::int64_t live_buffers = 0;       ///< buffers allocated and not yet freed
  std::int64_t live_bytes = 0;         ///< bytes held by those buffers
  std::int64_t total_allocations = 0;  ///< buffers allocated since start
  std::int64_t peak_bytes = 0;         ///< largest live_bytes seen
};

/// A snapshot of the counters (thread-safe).
MemoryStats memory_stats() noexcept;

}  // namespace kiln
