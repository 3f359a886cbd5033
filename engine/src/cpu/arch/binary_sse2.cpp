// Explicit instantiations of the binary kernels for SSE2 (the x86-64 baseline flags);
// nothing else belongs here.
#include "cpu/kernels/binary.hpp"

KILN_BINARY_KERNELS(, ::kiln::cpu::Sse2)
