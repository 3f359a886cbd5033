#include "cpu/dispatch.hpp"

#include "kiln/cpu/cpu.hpp"

namespace kiln::cpu {

const char* best_arch_name() noexcept {
#if defined(__EMSCRIPTEN__)
  return xsimd::default_arch::name();
#else
  const unsigned best = xsimd::available_architectures().best;
  if (Avx512::version() <= best) return Avx512::name();
  if (Avx2::version() <= best) return Avx2::name();
  return Sse2::name();
#endif
}

}  // namespace kiln::cpu

namespace kiln {
std::string_view Cpu::simd_arch() { return cpu::best_arch_name(); }
}  // namespace kiln
