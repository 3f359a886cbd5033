// Explicit instantiations of the softmax kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/softmax.hpp"

KILN_SOFTMAX_KERNELS(, ::kiln::cpu::Avx2)
