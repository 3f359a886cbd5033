// Autodiff<Cpu>: the one instantiation of the autodiff ops the engine ships (user code sees
// the declarations in kiln/autodiff/autodiff.hpp only, so it does not recompile them).
#include "kiln/autodiff/ops_impl.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
template struct AutodiffOps<Cpu>;
}  // namespace kiln
