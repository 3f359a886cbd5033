// Explicit instantiations of the compare kernels for AVX2 + FMA (-mavx2 -mfma);
// nothing else belongs here.
#include "cpu/kernels/compare.hpp"

#define KILN_INSTANCE_PREFIX
#define KILN_INSTANCE_ARCH ::kiln::cpu::Avx2
#include "cpu/kernels/compare_instances.inc"
