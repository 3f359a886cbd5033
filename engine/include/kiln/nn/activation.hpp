#pragma once
/// Activation modules (Burn's `nn::Relu`, `nn::Gelu`, `nn::Sigmoid`, `nn::Tanh`,
/// `nn::LeakyRelu`, `nn::Silu`): parameterless layers wrapping kiln::activation, so that
/// models can hold them as fields and `nn::Sequential` as layers.
///
///   template <Backend B>
///   struct Mlp {
///     nn::Linear<B> fc1, fc2;
///     nn::Relu activation;
///     KILN_MODULE(Mlp, fc1, fc2, activation)
///     Tensor<B, 2> forward(Tensor<B, 2> x) const {
///       return fc2.forward(activation.forward(fc1.forward(x)));
///     }
///   };
///
/// They have no backend parameter (as in Burn) and no parameters, so KILN_MODULE treats them
/// as constants: copied by map/valid(), printed (`Relu`, `LeakyRelu {negative_slope: 0.01}`),
/// never recorded. `forward` works on any backend and rank: [...] -> [...].
#include <cmath>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

/// max(0, x) (torch.nn.ReLU).
struct Relu {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::relu(std::move(input));
  }
  friend bool operator==(const Relu&, const Relu&) = default;
  friend void append_to(std::string& kiln_text, const Relu&) { ::kiln::StrOut{kiln_text} << "Relu"; }
};
template <>
struct SequentialRules<Relu> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(Relu, "relu");

/// x·Φ(x) (torch.nn.GELU): exact erf form, or the tanh approximation when `approximate`
/// (PyTorch's approximate="tanh").
struct Gelu {
  bool approximate = false;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::gelu(std::move(input), approximate);
  }
  friend bool operator==(const Gelu&, const Gelu&) = default;
  /// `Gelu` (Burn's Display), `Gelu {approximate: true}` for the tanh form.
  friend void append_to(std::string& kiln_text, const Gelu& g) {
    ::kiln::StrOut{kiln_text} << (g.approximate ? "Gelu {approximate: true}" : "Gelu");
  }
};
/// In a Sequential: {"type": "gelu", "approximate": false}, the field optional.
template <>
struct SequentialRules<Gelu> : SequentialKeepsShape {
  static Gelu parse(const config::Value& body, std::string_view at) {
    Gelu gelu;
    for (std::size_t i = 0; i < body.size(); ++i) {
      const std::string& key = body.keys()[i];
      const config::Value& f = body.items()[i];
      if (key != "approximate") {
        throw_error<ConfigError>(at, "unknown field \"", key, "\" (fields: approximate)");
      }
      if (!f.is_boolean()) {
        throw_error<ConfigError>(at, "approximate: expected a boolean, got ", config::describe(f));
      }
      gelu.approximate = f.get_bool();
    }
    return gelu;
  }
  static config::Value to_json(const Gelu& g) {
    return config::Value::object({{"approximate", g.approximate}});
  }
  static std::vector<config::Field> fields() { return {{"approximate", false}}; }
};
KILN_REGISTER_LAYER(Gelu, "gelu");

/// 1 / (1 + exp(-x)) (torch.nn.Sigmoid).
struct Sigmoid {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::sigmoid(std::move(input));
  }
  friend bool operator==(const Sigmoid&, const Sigmoid&) = default;
  friend void append_to(std::string& kiln_text, const Sigmoid&) { ::kiln::StrOut{kiln_text} << "Sigmoid"; }
};
template <>
struct SequentialRules<Sigmoid> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(Sigmoid, "sigmoid");

/// tanh(x) (torch.nn.Tanh).
struct Tanh {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::tanh(std::move(input));
  }
  friend bool operator==(const Tanh&, const Tanh&) = default;
  friend void append_to(std::string& kiln_text, const Tanh&) { ::kiln::StrOut{kiln_text} << "Tanh"; }
};
template <>
struct SequentialRules<Tanh> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(Tanh, "tanh");

/// x·sigmoid(x) (torch.nn.SiLU).
struct Silu {
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::silu(std::move(input));
  }
  friend bool operator==(const Silu&, const Silu&) = default;
  friend void append_to(std::string& kiln_text, const Silu&) { ::kiln::StrOut{kiln_text} << "Silu"; }
};

struct LeakyRelu;

/// Configuration of LeakyRelu (Burn's LeakyReluConfig).
struct LeakyReluConfig {
  double negative_slope = 0.01;  ///< slope for x < 0 (torch's default 0.01)
  KILN_CONFIG(LeakyReluConfig, (), (negative_slope))
  /// Throws: ConfigError if negative_slope is not finite.
  void check() const {
    if (!std::isfinite(negative_slope)) {
      throw_error<ConfigError>("LeakyReluConfig::init: negative_slope must be finite, got ",
                               negative_slope);
    }
  }
  /// The layer. Throws: ConfigError as check().
  LeakyRelu init() const;
};

/// x for x >= 0, negative_slope·x otherwise (torch.nn.LeakyReLU).
struct LeakyRelu {
  double negative_slope = 0.01;
  template <Backend B, std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return activation::leaky_relu(std::move(input), negative_slope);
  }
  friend bool operator==(const LeakyRelu&, const LeakyRelu&) = default;
  /// `LeakyRelu {negative_slope: 0.01}` (Burn's Display).
  friend void append_to(std::string& kiln_text, const LeakyRelu& l) {
    ::kiln::StrOut{kiln_text} << "LeakyRelu {negative_slope: " << l.negative_slope << "}";
  }
};

inline LeakyRelu LeakyReluConfig::init() const {
  check();
  return LeakyRelu{negative_slope};
}

// In a Sequential, in the spec's order of type names (leaky_relu before silu).
template <>
struct SequentialRules<LeakyReluConfig> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(LeakyReluConfig, "leaky_relu");
template <>
struct SequentialRules<Silu> : SequentialKeepsShape {};
KILN_REGISTER_LAYER(Silu, "silu");

}  // namespace kiln::nn
