#pragma once
/// SwiGlu (Burn's nn::SwiGlu) and its config: silu(linear_inner(x)) · linear_outer(x), the
/// gated feed-forward unit of Shazeer 2020 ("GLU Variants Improve Transformer"). Two
/// Linear layers d_input -> d_output, recorded under Burn's field names:
/// `linear_inner.weight`, `linear_outer.weight` (and `.bias` when bias is on), PyTorch's
/// Linear layout [d_output, d_input].
///
///   auto swiglu = nn::SwiGluConfig(/*d_input=*/64, /*d_output=*/128).init<Cpu>(device);
///   auto y = swiglu.forward(x);  // [..., 64] -> [..., 128]
#include <cmath>
#include <cstdint>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/initializer.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/linear.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct SwiGlu;

/// Configuration of SwiGlu (Burn's SwiGluConfig::new(d_input, d_output)).
struct SwiGluConfig {
  std::int64_t d_input;   ///< features per input sample
  std::int64_t d_output;  ///< features per output sample
  bool bias = false;      ///< both linears learn a bias (Burn's default: none)
  /// Both linears' initializer (Burn's default, PyTorch Linear's: U(±1/sqrt(d_input))).
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  SwiGluConfig(std::int64_t d_input, std::int64_t d_output)
      : d_input(d_input), d_output(d_output) {}
  KILN_CONFIG(SwiGluConfig, (d_input, d_output), (bias, initializer))

  /// Throws: ConfigError (naming SwiGluConfig) as LinearConfig::check.
  void check() const {
    try {
      linear().check();
    } catch (const Error& e) {
      throw ConfigError(sequential::replace_all(e.what(), "LinearConfig", "SwiGluConfig"));
    }
  }
  /// A new layer with freshly initialized parameters on `device`.
  /// Throws: ConfigError as check().
  template <Backend B>
  SwiGlu<B> init(const Device<B>& device = {}) const;

 private:
  LinearConfig linear() const {
    LinearConfig c(d_input, d_output);
    c.bias = bias;
    c.initializer = initializer;
    return c;
  }
};

/// In a Sequential ("swi_glu"): as a linear, the items' last dim d_input -> d_output.
template <>
struct SequentialRules<SwiGluConfig> {
  static SequentialItem item_shape(const SwiGluConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    return SequentialRules<LinearConfig>::item_shape(LinearConfig(c.d_input, c.d_output), in, at);
  }
  static SequentialInputSize input_item_size(const SwiGluConfig& c) {
    return SequentialInputSize::fixed(c.d_input);
  }
};
KILN_REGISTER_LAYER(SwiGluConfig, "swi_glu");

/// silu(x·W_innerᵀ + b_inner) ⊙ (x·W_outerᵀ + b_outer) (Burn's SwiGlu).
template <Backend B>
struct SwiGlu {
  Linear<B> linear_inner;  ///< the gate, passed through silu
  Linear<B> linear_outer;  ///< the value

  KILN_MODULE(SwiGlu, linear_inner, linear_outer)

  /// Shapes: input [..., d_input] -> [..., d_output].
  /// Throws: ShapeError if the last dim of input is not d_input (Linear::forward's message).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return activation::silu(linear_inner.forward(input)) * linear_outer.forward(input);
  }
};

template <Backend B>
SwiGlu<B> SwiGluConfig::init(const Device<B>& device) const {
  check();
  SwiGlu<B> out;
  out.linear_inner = linear().init<B>(device);
  out.linear_outer = linear().init<B>(device);
  return out;
}

}  // namespace kiln::nn
