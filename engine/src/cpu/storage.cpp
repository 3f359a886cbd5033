// CPU buffers: 64-byte aligned, counted for kiln::memory_stats().
#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "kiln/core/error.hpp"
#include "kiln/core/memory.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {
constexpr std::size_t kAlignment = 64;
// Tensors index with int32 in kernels' inner loops and JS typed arrays cap near 2^31.
constexpr std::int64_t kMaxElements = std::numeric_limits<std::int32_t>::max();

std::atomic<std::int64_t> g_live_buffers{0};
std::atomic<std::int64_t> g_live_bytes{0};
std::atomic<std::int64_t> g_total_allocations{0};
std::atomic<std::int64_t> g_peak_bytes{0};

#if defined(__GLIBC__)
// glibc serves blocks above its mmap threshold (128 KiB at first) with a fresh mmap each
// time, so every large tensor costs page faults on first touch (measured: ~8 ms for 4 MB,
// ~300 ms for 64 MB on these VMs) and a training loop pays them on every step. Keeping
// blocks up to 256 MiB in the heap lets freed buffers be reused at once.
const bool g_malloc_tuned = [] {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  return true;
}();
#endif
}  // namespace

MemoryStats memory_stats() noexcept {
  MemoryStats s;
  s.live_buffers = g_live_buffers.load();
  s.live_bytes = g_live_bytes.load();
  s.total_allocations = g_total_allocations.load();
  s.peak_bytes = g_peak_bytes.load();
  return s;
}

namespace cpu {

Storage::Storage(std::size_t bytes) : bytes_(bytes) {
  // Round up so that a SIMD kernel may read a whole vector past the end of small buffers.
  const std::size_t padded = ((bytes + kAlignment - 1) / kAlignment) * kAlignment + kAlignment;
  data_ = ::operator new(padded, std::align_val_t(kAlignment), std::nothrow);
  if (data_ == nullptr) {
    throw_error<OutOfMemoryError>("Storage: cannot allocate ", bytes, " bytes");
  }
  g_live_buffers.fetch_add(1, std::memory_order_relaxed);
  const auto live = g_live_bytes.fetch_add(static_cast<std::int64_t>(bytes)) +
                    static_cast<std::int64_t>(bytes);
  g_total_allocations.fetch_add(1, std::memory_order_relaxed);
  auto peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak && !g_peak_bytes.compare_exchange_weak(peak, live)) {
  }
}

Storage::~Storage() {
  ::operator delete(data_, std::align_val_t(kAlignment));
  g_live_buffers.fetch_sub(1, std::memory_order_relaxed);
  g_live_bytes.fetch_sub(static_cast<std::int64_t>(bytes_), std::memory_order_relaxed);
}

void check_allocation(std::string_view op, const Shape& shape, DType dtype) {
  // Kernels index with int64 strides computed from every dim, so each dim (also in an
  // empty tensor such as [0, 2^40, 2^40]) must stay within the element limit.
  for (std::size_t i = 0; i < shape.rank(); ++i) {
    if (shape[i] > kMaxElements) {
      throw_error<LimitError>(op, ": dim ", i, " of shape ", shape, " is ", shape[i],
                              ", more than the limit of ", kMaxElements);
    }
  }
  const std::int64_t n = shape.num_elements();
  if (n > kMaxElements) {
    throw_error<LimitError>(op, ": shape ", shape, " has ", n, " elements, more than the limit of ",
                            kMaxElements);
  }
  // In bytes, in 64 bits: size_t is 32 bits in wasm32, where 2^30 floats would wrap to 0.
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(dtype_size(dtype));
  if (bytes > static_cast<std::uint64_t>(std::numeric_limits<std::size_t>::max() / 2)) {
    throw_error<OutOfMemoryError>(op, ": shape ", shape, " of ", dtype, " needs ", bytes,
                                  " bytes, more than this platform can address");
  }
}

}  // namespace cpu

CpuTensor::CpuTensor(Shape shape, DType dtype)
    : shape_(shape), dtype_(dtype), num_elements_(shape.num_elements()) {
  cpu::check_allocation("tensor", shape, dtype);
  const std::uint64_t bytes =
      static_cast<std::uint64_t>(num_elements_) * static_cast<std::uint64_t>(dtype_size(dtype));
  storage_ = std::make_shared<cpu::Storage>(static_cast<std::size_t>(bytes));
}

void CpuTensor::throw_no_buffer() {
  throw_error<StateError>(
      "tensor: this handle has no buffer (it was moved from, or default-constructed)");
}

}  // namespace kiln
