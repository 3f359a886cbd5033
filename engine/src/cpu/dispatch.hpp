#pragma once
// Runs a kernel functor with the best instruction set of this machine.
//
// The pattern (STYLE.md §5), for a kernel family `foo`:
//   engine/src/cpu/kernels/foo.hpp   functors `struct FooF32 { template <class Arch> void
//                                    operator()(Arch, ...) const; };` defined out of class
//                                    in the header, then `KILN_EXTERN_KERNELS_FOO` below
//                                    (extern template declarations, native only).
//   engine/src/cpu/arch/foo_sse2.cpp, foo_avx2.cpp, foo_avx512.cpp
//                                    nothing but explicit instantiations for one arch;
//                                    CMake compiles *_avx2.cpp with -mavx2 -mfma and
//                                    *_avx512.cpp with -mavx512f/bw/dq/vl -mfma.
//   call site (an ops .cpp file):    cpu::dispatch(kernels::FooF32{}, args...);
// In WebAssembly there is one arch, xsimd::default_arch (SSE4.1 lowered to SIMD128), and
// the kernel is instantiated at the call site.
#include "cpu/wasm_simd_fix.hpp"  // WASM: vector float->int conversions, before xsimd
#include <xsimd/xsimd.hpp>

#include <utility>

#include "core/apart.hpp"
#include "cpu/simd_compat.hpp"

// Before a loop that finishes what a vector loop left (fewer elements than a vector holds): it
// stays a plain loop. Clang cannot know its trip count is that short and would otherwise
// vectorize and unroll it, with run-time overlap checks, in every instantiation (several KB
// of the WebAssembly a page loads; issue 17) for code that never runs a vector iteration.
#if defined(__clang__)
#define KILN_TAIL_LOOP _Pragma("clang loop vectorize(disable) interleave(disable) unroll(disable)")
#else
#define KILN_TAIL_LOOP
#endif

namespace kiln::cpu {

#if defined(__EMSCRIPTEN__)
using Sse2 = xsimd::default_arch;
using Avx2 = xsimd::default_arch;
using Avx512 = xsimd::default_arch;
#else
using Sse2 = xsimd::sse2;
using Avx2 = xsimd::fma3<xsimd::avx2>;
using Avx512 = xsimd::avx512f;
/// The native instruction sets kernels are compiled for, best first.
using NativeArchs = xsimd::arch_list<Avx512, Avx2, Sse2>;
#endif

/// xsimd version number of the arch kernels run with: the best this CPU supports, or a
/// lower one named by the environment variable KILN_SIMD_ARCH ("sse2", "avx2", "avx512")
/// so that tests can run every kernel family on every instruction set (read once).
unsigned selected_arch_version() noexcept;

/// Calls `kernel(arch, args...)` with the selected arch.
template <class Kernel, class... Args>
inline decltype(auto) dispatch(Kernel kernel, Args&&... args) {
#if defined(__EMSCRIPTEN__)
  return kernel(xsimd::default_arch{}, std::forward<Args>(args)...);
#else
  static const unsigned best = selected_arch_version();
  if (Avx512::version() <= best) return kernel(Avx512{}, std::forward<Args>(args)...);
  if (Avx2::version() <= best) return kernel(Avx2{}, std::forward<Args>(args)...);
  return kernel(Sse2{}, std::forward<Args>(args)...);
#endif
}

/// `dispatch(Kernel{}, args...)`, the function dispatch_apart calls.
template <class Kernel, class... Args>
decltype(auto) dispatch_body(Args&&... args) {
  return dispatch(Kernel{}, std::forward<Args>(args)...);
}

/// `dispatch(kernel, args...)` kept out of line in WebAssembly: one function per kernel type
/// (and argument types), called, never inlined into its caller (core/apart.hpp). For the
/// switches that run one of many kernels by a run-time op (a row of kiln/backend/ops.def, a
/// reduction): each case is then a call to a function of its own, which wasm-split can leave
/// out of the primary module when the page never runs it. Kernel is a stateless functor.
template <class Kernel, class... Args>
inline decltype(auto) dispatch_apart(Kernel, Args&&... args) {
  return kiln::detail::call_apart<&dispatch_body<Kernel, Args...>>(std::forward<Args>(args)...);
}

/// Name of the arch `dispatch` picks ("avx512f", "fma3+avx2", "sse2", "sse4.1" in WASM).
const char* best_arch_name() noexcept;

}  // namespace kiln::cpu

/// Declares (PREFIX = extern) or defines (PREFIX empty) the explicit instantiation of
/// `Kernel::operator()<Arch>` with the given parameter types.
#define KILN_KERNEL_INSTANCE(PREFIX, Kernel, Arch, ...) \
  PREFIX template void Kernel::operator()<Arch>(Arch, __VA_ARGS__) const;
