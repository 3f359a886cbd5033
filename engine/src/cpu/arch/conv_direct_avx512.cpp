// Explicit instantiations of the direct convolution kernels for AVX-512 (-mavx512f/bw/dq/vl -mfma);
// nothing else belongs here.
#include "cpu/kernels/conv_direct.hpp"

KILN_CONV_DIRECT_KERNELS(, ::kiln::cpu::Avx512)
