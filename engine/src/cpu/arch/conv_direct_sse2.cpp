// Explicit instantiations of the direct convolution kernels for SSE2;
// nothing else belongs here.
#include "cpu/kernels/conv_direct.hpp"

KILN_CONV_DIRECT_KERNELS(, ::kiln::cpu::Sse2)
