// Explicit instantiations of the unary kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/unary.hpp"

KILN_UNARY_KERNELS(, ::kiln::cpu::Avx2)
