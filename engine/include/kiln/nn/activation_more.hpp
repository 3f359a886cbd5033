#pragma once
/// More activation modules with PyTorch's semantics: Selu, Mish, HardSigmoid, HardSwish
/// (parameterless, like nn::Relu) and Elu, Celu (one `alpha`, built by EluConfig /
/// CeluConfig like nn::LeakyRelu). Each wraps the function of the same name in
/// kiln/tensor/activation_more.hpp; no parameters, so records never hold them.
/// `forward` works on any backend and rank: [...] -> [...].
///
///   auto act = nn::EluConfig().with_alpha(0.5).init();
///   auto y = act.forward(x);  // x·1 for x > 0, 0.5·(e^x - 1) otherwise
#include <cmath>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation_more.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

/// scale·(max(0, x) + min(0, alpha·(e^x - 1))), alpha ≈ 1.6733, scale ≈ 1.0507
/// (torch.nn.SELU; Klambauer et al. 2017, "Self-Normalizing Neural Networks").
struct Selu {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::selu(std::move(input));
  }
  friend bool operator==(const Selu&, const Selu&) = default;
  friend void append_to(std::string& kiln_text, const Selu&) { ::kiln::StrOut{kiln_text} << "Selu"; }
};
template <>
struct SequentialRules<Selu> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(Selu, "selu");

/// x·tanh(softplus(x)) (torch.nn.Mish; Misra 2019, arXiv:1908.08681).
struct Mish {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::mish(std::move(input));
  }
  friend bool operator==(const Mish&, const Mish&) = default;
  friend void append_to(std::string& kiln_text, const Mish&) { ::kiln::StrOut{kiln_text} << "Mish"; }
};
template <>
struct SequentialRules<Mish> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(Mish, "mish");

/// clamp(x + 3, 0, 6) / 6 (torch.nn.Hardsigmoid; Burn's HardSigmoid has configurable
/// alpha/beta, this is PyTorch's fixed form).
struct HardSigmoid {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::hard_sigmoid(std::move(input));
  }
  friend bool operator==(const HardSigmoid&, const HardSigmoid&) = default;
  friend void append_to(std::string& kiln_text, const HardSigmoid&) {
    ::kiln::StrOut{kiln_text} << "HardSigmoid";
  }
};
template <>
struct SequentialRules<HardSigmoid> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(HardSigmoid, "hard_sigmoid");

/// x·clamp(x + 3, 0, 6) / 6 (torch.nn.Hardswish; Howard et al. 2019, MobileNetV3).
struct HardSwish {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::hard_swish(std::move(input));
  }
  friend bool operator==(const HardSwish&, const HardSwish&) = default;
  friend void append_to(std::string& kiln_text, const HardSwish&) {
    ::kiln::StrOut{kiln_text} << "HardSwish";
  }
};
template <>
struct SequentialRules<HardSwish> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(HardSwish, "hard_swish");

struct Elu;

/// Configuration of Elu (torch.nn.ELU(alpha=1.0)).
struct EluConfig {
  double alpha = 1.0;  ///< the negative saturation value is -alpha
  KILN_CONFIG(EluConfig, (), (alpha))
  /// Throws: ConfigError if alpha is not finite.
  void check() const {
    if (!std::isfinite(alpha)) {
      throw_error<ConfigError>("EluConfig::init: alpha must be finite, got ", alpha);
    }
  }
  /// The layer. Throws: ConfigError as check().
  Elu init() const;
};

/// x for x > 0, alpha·(e^x - 1) otherwise (torch.nn.ELU; Clevert et al. 2015).
struct Elu {
  double alpha = 1.0;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::elu(std::move(input), alpha);
  }
  friend bool operator==(const Elu&, const Elu&) = default;
  /// `Elu {alpha: 1}`.
  friend void append_to(std::string& kiln_text, const Elu& e) {
    ::kiln::StrOut{kiln_text} << "Elu {alpha: " << e.alpha << "}";
  }
};

inline Elu EluConfig::init() const {
  check();
  return Elu{alpha};
}
template <>
struct SequentialRules<EluConfig> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(EluConfig, "elu");

struct Celu;

/// Configuration of Celu (torch.nn.CELU(alpha=1.0)).
struct CeluConfig {
  double alpha = 1.0;  ///< the negative saturation value is -alpha; must not be 0
  KILN_CONFIG(CeluConfig, (), (alpha))
  /// Throws: ConfigError if alpha is 0 or not finite.
  void check() const {
    if (!std::isfinite(alpha) || alpha == 0.0) {
      throw_error<ConfigError>("CeluConfig::init: alpha must be finite and not 0, got ", alpha);
    }
  }
  /// The layer. Throws: ConfigError as check().
  Celu init() const;
};

/// max(0, x) + min(0, alpha·(e^(x/alpha) - 1)) (torch.nn.CELU; Barron 2017,
/// arXiv:1704.07483).
struct Celu {
  double alpha = 1.0;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::celu(std::move(input), alpha);
  }
  friend bool operator==(const Celu&, const Celu&) = default;
  /// `Celu {alpha: 1}`.
  friend void append_to(std::string& kiln_text, const Celu& c) {
    ::kiln::StrOut{kiln_text} << "Celu {alpha: " << c.alpha << "}";
  }
};

inline Celu CeluConfig::init() const {
  check();
  return Celu{alpha};
}
template <>
struct SequentialRules<CeluConfig> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(CeluConfig, "celu");

}  // namespace kiln::nn
