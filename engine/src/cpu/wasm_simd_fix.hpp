#pragma once
// WebAssembly only: vector replacements for the two SSE2 float -> int32 conversions that
// Emscripten 3.1.6's emmintrin.h emulates lane by lane through lrint() ("TODO: optimize").
// xsimd 8.1 uses them inside exp, log, sin, cos, tanh, erf, ... (to_int, ldexp, range
// reduction), which made those ~50x slower than the rest of the SIMD128 code (measured:
// exp of 1M floats 15.8 ms instead of ~0.4 ms in Node 20).
//
// Must be included before <xsimd/xsimd.hpp> (the macros redirect the intrinsic names that
// xsimd's headers call). Semantics are x86's: lanes that are nan or outside the int32 range
// give INT32_MIN (0x80000000), in-range lanes truncate (cvtt) or round half to even (cvt).
#if defined(__EMSCRIPTEN__)
#include <emmintrin.h>
#include <wasm_simd128.h>

static __inline__ __m128i __attribute__((__always_inline__, __nodebug__))
kiln_wasm_mm_cvttps_epi32(__m128 a) {
  const v128_t v = (v128_t)a;
  const v128_t in_range = wasm_v128_and(wasm_f32x4_lt(v, wasm_f32x4_splat(2147483648.f)),
                                        wasm_f32x4_ge(v, wasm_f32x4_splat(-2147483648.f)));
  return (__m128i)wasm_v128_bitselect(wasm_i32x4_trunc_sat_f32x4(v),
                                      wasm_i32x4_splat((int)0x80000000), in_range);
}

static __inline__ __m128i __attribute__((__always_inline__, __nodebug__))
kiln_wasm_mm_cvtps_epi32(__m128 a) {
  return kiln_wasm_mm_cvttps_epi32((__m128)wasm_f32x4_nearest((v128_t)a));
}

#define _mm_cvttps_epi32 kiln_wasm_mm_cvttps_epi32
#define _mm_cvtps_epi32 kiln_wasm_mm_cvtps_epi32
#endif
