// Explicit instantiations of the binary kernels for SSE2 (the x86-64 baseline flags);
// nothing else belongs here.
#include "cpu/kernels/binary.hpp"

#define KILN_INSTANCE_PREFIX
#define KILN_INSTANCE_ARCH ::kiln::cpu::Sse2
#include "cpu/kernels/binary_instances.inc"
