// Explicit instantiations of the unary kernels for AVX-512 (-mavx512f/bw/dq/vl -mfma);
// nothing else belongs here.
// GCC 12 reports -Wmaybe-uninitialized inside its own avx512fintrin.h (_mm512_undefined_*).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "cpu/kernels/unary.hpp"

#define KILN_INSTANCE_PREFIX
#define KILN_INSTANCE_ARCH ::kiln::cpu::Avx512
#include "cpu/kernels/unary_instances.inc"
