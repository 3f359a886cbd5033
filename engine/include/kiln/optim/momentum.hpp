#pragma once
/// Momentum of SGD (Burn's `MomentumConfig`), with PyTorch's update rule (torch.optim.SGD):
///   step 1:  buf = grad                                  (no dampening on the first step)
///   later:   buf = momentum · buf + (1 - dampening) · grad
///   update:  nesterov ? grad + momentum · buf : buf
/// Defaults are Burn's (momentum 0.9, dampening 0.1, nesterov false); PyTorch's SGD has
/// momentum 0 and dampening 0. PyTorch refuses nesterov with dampening != 0; Burn and Kiln
/// accept it and apply the formula above.
#include "kiln/config/config.hpp"

namespace kiln::optim {

/// Configuration of SGD momentum.
struct MomentumConfig {
  double momentum = 0.9;   ///< momentum factor (>= 0)
  double dampening = 0.1;  ///< dampening of the gradient's share from step 2 on
  bool nesterov = false;   ///< Nesterov momentum (PyTorch's form: step along grad + m · buf)

  KILN_CONFIG(MomentumConfig, (), (momentum, dampening, nesterov))

  /// Throws: ConfigError `<op>: momentum.momentum must be finite and >= 0, got ...` (and
  /// dampening must be finite).
  void check(std::string_view op) const;
};

}  // namespace kiln::optim
