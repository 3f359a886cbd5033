// The convolution ops of Autodiff<Cpu>, instantiated apart from the other autodiff ops
// (engine/src/autodiff/autodiff_cpu.cpp) to keep both translation units small.
#include "kiln/autodiff/conv_impl.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv1d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<1>&);
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv2d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<2>&);
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv_transpose2d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<2>&);
}  // namespace kiln
