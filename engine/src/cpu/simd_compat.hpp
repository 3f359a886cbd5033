#pragma once
// The one place that knows xsimd's version drift (Debian 12 ships 8.1): later xsimd
// renamed hadd -> reduce_add and made dispatch const. Kernels call these wrappers.
#include "cpu/wasm_simd_fix.hpp"  // WASM: vector float->int conversions, before xsimd
#include <xsimd/xsimd.hpp>

namespace kiln::cpu::simd {

/// Sum of the lanes of a batch.
template <class T, class A>
inline T reduce_add(const xsimd::batch<T, A>& x) noexcept {
  return xsimd::hadd(x);
}

/// Max / min of the lanes of a batch.
template <class T, class A>
inline T reduce_max(const xsimd::batch<T, A>& x) noexcept {
  alignas(64) T lanes[xsimd::batch<T, A>::size];
  x.store_aligned(lanes);
  T m = lanes[0];
  for (std::size_t i = 1; i < xsimd::batch<T, A>::size; ++i) m = lanes[i] > m ? lanes[i] : m;
  return m;
}
template <class T, class A>
inline T reduce_min(const xsimd::batch<T, A>& x) noexcept {
  alignas(64) T lanes[xsimd::batch<T, A>::size];
  x.store_aligned(lanes);
  T m = lanes[0];
  for (std::size_t i = 1; i < xsimd::batch<T, A>::size; ++i) m = lanes[i] < m ? lanes[i] : m;
  return m;
}

}  // namespace kiln::cpu::simd
