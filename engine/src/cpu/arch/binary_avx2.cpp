// Explicit instantiations of the binary kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/binary.hpp"

KILN_BINARY_KERNELS(, ::kiln::cpu::Avx2)
