// Tutorial Step 2 (web/tutorial/content/02-ownership.md): who owns a tensor's memory.
// Burn moves tensors into ops and clones to keep them; Kiln's C++ tensors are reference-
// counted handles, freed when the last handle goes (RAII), so the same code needs no
// clone() to stay usable. The engine's buffer counters (kiln::memory_stats) check each
// claim; the program exits 1 if one is wrong.
#include <cmath>
#include <iostream>
#include <utility>

#include "kiln/kiln.hpp"

using namespace kiln;
using B = Cpu;

int main() {
  try {
    const Device<B> device;
    const auto live_at_start = memory_stats().live_buffers;
    {
      // [reuse]
      const auto x = Tensor<B, 1>::from_floats({1.f, 2.f, 3.f}, device);
      const auto y = x.exp();  // x is still usable: ops take const references
      const auto z = x.log();
      const auto w = x + y;  // [1 + e, 2 + e^2, 3 + e^3]
      // [/reuse]
      w.to_data().assert_approx_eq(
          TensorData::from<float>({1.f + std::exp(1.f), 2.f + std::exp(2.f), 3.f + std::exp(3.f)}),
          Tolerance::default_f32());
      z.to_data().assert_approx_eq(TensorData::from<float>({0.f, std::log(2.f), std::log(3.f)}),
                                   Tolerance::default_f32());
      if (memory_stats().live_buffers != live_at_start + 4) return 1;  // x, y, z, w

      // [clone]
      const auto buffers_before = memory_stats().live_buffers;
      const auto x2 = x.clone();  // a second handle to the same buffer: nothing is copied
      const bool shared = memory_stats().live_buffers == buffers_before;  // true
      // [/clone]
      if (!shared) return 1;
      x2.to_data().assert_eq(x.to_data());

      // [move]
      auto t = Tensor<B, 1>::from_floats({0.f, 1.f, 2.f}, device);
      const auto allocations = memory_stats().total_allocations;
      const auto e = std::move(t).exp();  // t's last handle is given up: exp may write in place
      const bool in_place = memory_stats().total_allocations == allocations;
      // [/move]
      e.to_data().assert_approx_eq(TensorData::from<float>({1.f, std::exp(1.f), std::exp(2.f)}),
                                   Tolerance::default_f32());
      if (!in_place) return 1;
    }
    // Every handle of the block above went out of scope at its closing brace: freed.
    if (memory_stats().live_buffers != live_at_start) return 1;

    // [scope]
    const auto live_before = memory_stats().live_buffers;
    const auto kept = [&] {
      const auto t = Tensor<B, 1>::from_floats({1.f, 2.f, 3.f}, device);
      const auto doubled = t * 2.f;  // freed when the lambda returns: its only handle ends
      return doubled + 1.f;          // kept: the caller receives this handle
    }();  // t and doubled went out of scope at the lambda's closing brace
    const auto alive = memory_stats().live_buffers - live_before;  // 1: only kept's buffer
    // [/scope]
    kept.to_data().assert_eq(TensorData::from<float>({3.f, 5.f, 7.f}));
    if (alive != 1) return 1;
  } catch (const Error& e) {
    std::cerr << "02_ownership: check failed: " << e.what() << "\n";
    return 1;
  }
  std::cout << "All checks passed.\n";
  return 0;
}
