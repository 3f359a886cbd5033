#include "cpu/dispatch.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kiln/cpu/cpu.hpp"

namespace kiln::cpu {

unsigned selected_arch_version() noexcept {
#if defined(__EMSCRIPTEN__)
  return xsimd::default_arch::version();
#else
  static const unsigned selected = [] {
    unsigned best = xsimd::available_architectures().best;
    const char* forced = std::getenv("KILN_SIMD_ARCH");
    if (forced == nullptr || *forced == '\0') return best;
    const std::string_view name(forced);
    unsigned cap = best;
    if (name == "sse2") {
      cap = Sse2::version();
    } else if (name == "avx2") {
      cap = Avx2::version();
    } else if (name == "avx512") {
      cap = Avx512::version();
    } else {
      std::fprintf(stderr, "kiln: ignoring KILN_SIMD_ARCH=%s (expected sse2, avx2 or avx512)\n",
                   forced);
    }
    return cap < best ? cap : best;
  }();
  return selected;
#endif
}

const char* best_arch_name() noexcept {
#if defined(__EMSCRIPTEN__)
  return xsimd::default_arch::name();
#else
  const unsigned best = selected_arch_version();
  if (Avx512::version() <= best) return Avx512::name();
  if (Avx2::version() <= best) return Avx2::name();
  return Sse2::name();
#endif
}

}  // namespace kiln::cpu

namespace kiln {
std::string_view Cpu::simd_arch() { return cpu::best_arch_name(); }
}  // namespace kiln
