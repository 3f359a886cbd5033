#pragma once
/// L2 weight decay added to the gradient (Burn's `WeightDecayConfig`; PyTorch's
/// `weight_decay` argument of SGD, Adam and RMSprop): grad += penalty · param, before any
/// momentum or moment. AdamW's decoupled decay is a plain number of AdamWConfig instead.
#include "kiln/config/config.hpp"

namespace kiln::optim {

/// Configuration of L2 weight decay.
struct WeightDecayConfig {
  double penalty;  ///< L2 penalty λ (>= 0): grad += λ · param

  explicit WeightDecayConfig(double penalty) : penalty(penalty) {}
  KILN_CONFIG(WeightDecayConfig, (penalty), ())

  /// Throws: ConfigError `<op>: <prefix>penalty must be finite and >= 0, got ...`.
  void check(std::string_view op, std::string_view prefix = "weight_decay.") const;
};

}  // namespace kiln::optim
