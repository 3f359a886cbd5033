// Explicit instantiations of the compare kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/compare.hpp"

KILN_COMPARE_KERNELS(, ::kiln::cpu::Avx2)
