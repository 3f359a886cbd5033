// Explicit instantiations of the unary kernels for SSE2 (the x86-64 baseline flags);
// nothing else belongs here.
#include "cpu/kernels/unary.hpp"

KILN_UNARY_KERNELS(, ::kiln::cpu::Sse2)
