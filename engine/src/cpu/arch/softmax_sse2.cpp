// Explicit instantiations of the softmax kernels for SSE2 (the x86-64 baseline flags);
// nothing else belongs here.
#include "cpu/kernels/softmax.hpp"

KILN_SOFTMAX_KERNELS(, ::kiln::cpu::Sse2)
