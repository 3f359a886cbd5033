// nn::Sequential's forward (the run-time dispatch over layers and activation ranks) and
// module interface, instantiated once for the engine's two backends so that the many TUs
// that use a Sequential do not each compile it (sequential.hpp declares them extern).
#include "kiln/autodiff/autodiff.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/sequential.hpp"

namespace kiln::nn {

template struct Sequential<Cpu>;
template struct Sequential<Autodiff<Cpu>>;

}  // namespace kiln::nn
