// Explicit instantiations of the compare kernels for AVX-512 (-mavx512f/bw/dq/vl -mfma);
// nothing else belongs here.
// GCC 12 reports -Wmaybe-uninitialized inside its own avx512fintrin.h (_mm512_undefined_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "cpu/kernels/compare.hpp"

KILN_COMPARE_KERNELS(, ::kiln::cpu::Avx512)
