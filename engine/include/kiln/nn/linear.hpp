#pragma once
/// Linear: the fully connected layer y = x·Wᵀ + b (Burn's `nn::Linear`, PyTorch's `nn.Linear`)
/// and its config.
///
///   auto fc = nn::LinearConfig(784, 10).with_bias(false).init<Cpu>(device);
///   std::cout << fc;  // Linear {d_input: 784, d_output: 10, bias: false, params: 7840}
///   auto logits = fc.forward(images);  // [batch_size, 784] -> [batch_size, 10]
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/initializer.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct Linear;

/// Configuration of a fully connected layer; `init` builds a `Linear` (Burn's LinearConfig).
struct LinearConfig {
  std::int64_t d_input;   ///< features per input sample (PyTorch's in_features)
  std::int64_t d_output;  ///< features per output sample (PyTorch's out_features)
  bool bias = true;       ///< learn an additive bias of shape [d_output]
  /// PyTorch's nn.Linear default: kaiming_uniform_ with a = sqrt(5), i.e. gain 1/sqrt(3), so
  /// weight and bias are U(-k, k) with k = gain·sqrt(3/d_input) = 1/sqrt(d_input). The bias
  /// is drawn with the weight's fans (fan_in = d_input), as Burn and as PyTorch's bound.
  Initializer initializer = Initializer::kaiming_uniform(1.0 / std::sqrt(3.0));

  /// Required fields in the constructor, as Burn's `LinearConfig::new(d_input, d_output)`.
  LinearConfig(std::int64_t d_input, std::int64_t d_output)
      : d_input(d_input), d_output(d_output) {}
  KILN_CONFIG(LinearConfig, (d_input, d_output), (bias, initializer))

  /// Throws: config::FieldError if d_input < 1 or d_output < 1; ConfigError
  /// `LinearConfig::init: initializer: ...` as Initializer::sampling; LimitError if the
  /// weight [d_output, d_input] would pass 2^31 - 1 elements.
  void check() const {
    if (d_input < 1 || d_output < 1) {
      throw config::FieldError(
          str_cat("LinearConfig::init: d_input and d_output must be >= 1, got d_input = ", d_input,
                  ", d_output = ", d_output),
          d_input < 1 ? str_cat("d_input must be >= 1, got ", d_input)
                      : str_cat("d_output must be >= 1, got ", d_output));
    }
    // The weight [d_output, d_input] must fit in one tensor.
    checked::numel("LinearConfig::init", std::array<std::int64_t, 2>{d_output, d_input},
                   "weight shape");
    try {
      (void)initializer.sampling(d_input, d_output);
    } catch (const ConfigError& e) {
      throw_error<ConfigError>("LinearConfig::init: initializer: ", e.what());
    }
  }

  /// A new layer with freshly initialized parameters on `device`.
  /// Throws: ConfigError as check().
  template <Backend B>
  Linear<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: acts on the last dim, so it fixes the item's last dim (its d_input must
/// be the previous layer's) and, placed first, the model's input size.
template <>
struct SequentialRules<LinearConfig> {
  static SequentialItem item_shape(const LinearConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    const auto features = in.last_dim();
    if (features && *features != c.d_input) {
      throw_error<ConfigError>(
          at, "d_input is ", c.d_input, " but the previous layer outputs ", *features,
          in.dims && in.dims->size() > 1 ? str_cat(" (", in.describe(), ")") : std::string());
    }
    SequentialItem out = in;
    if (out.dims) {
      if (out.dims->empty()) out.dims->push_back(-1);
      out.dims->back() = c.d_output;
    } else {
      out.last = c.d_output;
    }
    return out;
  }
  static SequentialInputSize input_item_size(const LinearConfig& c) {
    return SequentialInputSize::fixed(c.d_input);
  }
};
KILN_REGISTER_LAYER(LinearConfig, "linear");

/// y = x·Wᵀ + b (PyTorch nn.Linear, Burn nn::Linear).
///
/// Layout: the weight is stored [d_output, d_input], PyTorch's layout, so a SafeTensors
/// record loads into torch.nn.Linear unchanged. Burn stores [d_input, d_output] and
/// computes x·W; a Burn user porting weights by hand must transpose them.
template <Backend B>
struct Linear {
  module::Param<Tensor<B, 2>> weight;               ///< [d_output, d_input]
  std::optional<module::Param<Tensor<B, 1>>> bias;  ///< [d_output]

  KILN_MODULE(Linear, weight, bias)

  /// Input features (the weight's dim 1). Throws StateError before init/load.
  std::int64_t d_input() const { return weight.shape()[1]; }
  /// Output features (the weight's dim 0). Throws StateError before init/load.
  std::int64_t d_output() const { return weight.shape()[0]; }

  /// Applies the layer to the last dim.
  ///
  /// Shapes:    input [..., d_input] -> [..., d_output] (any rank D >= 1; leading dims are
  ///            flattened into one batch dim for one GEMM, then restored).
  /// Throws:    ShapeError if the last dim of input is not d_input;
  ///            StateError if the layer was never initialized or loaded.
  /// Cost:      2·batch·d_input·d_output flops; Wᵀ is never materialised (matmul_transposed).
  /// Semantics: torch.nn.functional.linear.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    const Tensor<B, 2>& w = weight.val();
    const Shape in = input.shape();
    const std::int64_t d_in = w.shape()[1], d_out = w.shape()[0];
    if (in[D - 1] != d_in) {
      throw_error<ShapeError>("Linear::forward: expected input [..., ", d_in,
                              "] (last dim d_input = ", d_in, "), got ", in, " (last dim ",
                              in[D - 1], ")");
    }
    if constexpr (D == 2) {
      return affine(input, w);
    } else {
      std::int64_t rows = 1;
      for (std::size_t i = 0; i + 1 < D; ++i) rows *= in[i];
      const auto y = affine(input.template reshape<2>(std::array<std::int64_t, 2>{rows, d_in}), w);
      std::array<std::int64_t, D> out{};
      for (std::size_t i = 0; i + 1 < D; ++i) out[i] = in[i];
      out[D - 1] = d_out;
      return y.template reshape<D>(out);
    }
  }

  /// `d_input: 784, d_output: 10, bias: false` (Burn's Display of Linear).
  void describe_fields(::kiln::StrOut& out) const {
    if (!weight.is_initialized()) {
      out << "weight: <empty>, bias: " << (bias ? "true" : "false");
      return;
    }
    out << "d_input: " << d_input() << ", d_output: " << d_output()
        << ", bias: " << (bias ? "true" : "false");
  }

 private:
  /// x [n, d_input] · Wᵀ + b -> [n, d_output].
  Tensor<B, 2> affine(const Tensor<B, 2>& x, const Tensor<B, 2>& w) const {
    auto y = x.matmul_transposed(w, false, true);
    if (!bias) return y;
    return std::move(y) + bias->val().template unsqueeze<2>();
  }
};

template <Backend B>
Linear<B> LinearConfig::init(const Device<B>& device) const {
  check();
  Linear<B> out;
  out.weight = module::Param<Tensor<B, 2>>(
      initializer.init<B, 2>(Shape{d_output, d_input}, d_input, d_output, device));
  if (bias) {
    out.bias = module::Param<Tensor<B, 1>>(
        initializer.init<B, 1>(Shape{d_output}, d_input, d_output, device));
  }
  return out;
}

}  // namespace kiln::nn
