// Explicit instantiations of the fused optimizer kernels for SSE2, compiled with
// -ffp-contract=off (CMakeLists.txt: the kernels must round every op as the separate
// element-wise kernels do); nothing else belongs here.
#include "cpu/kernels/optim.hpp"

#define KILN_INSTANCE_PREFIX
#define KILN_INSTANCE_ARCH ::kiln::cpu::Sse2
#include "cpu/kernels/optim_instances.inc"
