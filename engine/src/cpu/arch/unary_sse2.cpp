// Explicit instantiations of the unary kernels for SSE2 (the x86-64 baseline flags);
// nothing else belongs here.
#include "cpu/kernels/unary.hpp"

#define KILN_INSTANCE_PREFIX
#define KILN_INSTANCE_ARCH ::kiln::cpu::Sse2
#include "cpu/kernels/unary_instances.inc"
