#pragma once
// madd(a, b, c) = a·b + c on xsimd float batches: the multiply-add of the hot loops (GEMM
// micro-kernel, direct convolution), fused where the instruction set has an FMA.
//
// WebAssembly: SIMD128 has no FMA, so xsimd::fma is a mul and an add (two roundings). The
// relaxed-SIMD build (CMake KILN_WASM_RELAXED, build/wasm-relaxed -> dist/kiln-relaxed.wasm)
// compiles the kernel files that include this header with -mrelaxed-simd, and then madd is
// one f32x4.relaxed_madd (relaxed-simd Overview.md: relaxed_madd(a, b, c) = a·b + c, fused
// or not, as the engine chooses; V8 on x86-64 with FMA3 emits vfmadd231ps).
// clang 14 (Emscripten 3.1.6) does not know that instruction yet: __builtin_wasm_fma_f32x4
// emits the prototype opcode f32x4.fma (0xfd 0xaf 0x01), which current engines reject.
// scripts/relax_wasm.mjs rewrites each of those to the final opcode 0xfd 0x105 after the
// link. The operands stay where they are on the stack: builtin(a, b, c) pushes a, b, c,
// and the final instruction computes a·b + c from them (the prototype meant a + b·c:
// relaxed-simd issue #27, reordered in relaxed-simd PR #81), so madd passes (a, b, c).
//
// Always inlined: a TU compiled without -mrelaxed-simd must never share an out-of-line copy
// with one compiled with it (or the reverse).
#include "cpu/simd_compat.hpp"

namespace kiln::cpu::simd {

/// a·b + c lane by lane; one rounding where the arch fuses (FMA3, AVX-512, relaxed SIMD
/// on FMA hardware), two otherwise.
template <class A>
__attribute__((always_inline)) inline xsimd::batch<float, A> madd(
    const xsimd::batch<float, A>& a, const xsimd::batch<float, A>& b,
    const xsimd::batch<float, A>& c) noexcept {
#if defined(__wasm_relaxed_simd__)
  if constexpr (xsimd::batch<float, A>::size == 4) {
    using Reg = typename xsimd::batch<float, A>::register_type;
    return xsimd::batch<float, A>(static_cast<Reg>(__builtin_wasm_fma_f32x4(
        static_cast<Reg>(a), static_cast<Reg>(b), static_cast<Reg>(c))));
  } else {
    return xsimd::fma(a, b, c);
  }
#else
  return xsimd::fma(a, b, c);
#endif
}

/// true when madd compiles to f32x4.relaxed_madd in this translation unit.
constexpr bool madd_is_relaxed() noexcept {
#if defined(__wasm_relaxed_simd__)
  return true;
#else
  return false;
#endif
}

}  // namespace kiln::cpu::simd
