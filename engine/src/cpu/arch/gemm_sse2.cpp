// Explicit instantiation of the GEMM driver for Sse2 (compiled with that arch's flags;
// nothing else may live here, STYLE.md §5).
#include "cpu/gemm/driver.hpp"

namespace kiln::cpu::gemm {
KILN_GEMM_INSTANCES(, Sse2)
}  // namespace kiln::cpu::gemm
