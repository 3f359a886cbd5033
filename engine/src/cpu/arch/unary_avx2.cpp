// Explicit instantiations of the unary kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/unary.hpp"

#define KILN_INSTANCE_PREFIX
#define KILN_INSTANCE_ARCH ::kiln::cpu::Avx2
#include "cpu/kernels/unary_instances.inc"
