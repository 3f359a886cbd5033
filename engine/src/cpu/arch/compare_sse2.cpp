// Explicit instantiations of the compare kernels for SSE2 (the x86-64 baseline flags);
// nothing else belongs here.
#include "cpu/kernels/compare.hpp"

KILN_COMPARE_KERNELS(, ::kiln::cpu::Sse2)
