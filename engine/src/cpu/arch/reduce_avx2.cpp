// Explicit instantiations of the reduction kernels for kiln::cpu::Avx2 (flags set by CMake).
#include "cpu/kernels/reduce.hpp"

KILN_REDUCE_KERNEL_INSTANCES(, kiln::cpu::Avx2)
