// Explicit instantiations of the direct convolution kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/conv_direct.hpp"

KILN_CONV_DIRECT_KERNELS(, ::kiln::cpu::Avx2)
