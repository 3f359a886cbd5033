#pragma once
/// PRelu (torch.nn.PReLU, Burn's nn::PRelu) and its config: a leaky ReLU whose negative
/// slope is learned, one per channel (dim 1) or one shared (He et al. 2015, "Delving Deep
/// into Rectifiers"). The parameter is recorded as PyTorch's `weight` [num_parameters]
/// (Burn names it alpha).
///
///   auto prelu = nn::PReluConfig().with_num_parameters(16).init<Cpu>(device);
///   auto y = prelu.forward(x);  // [batch_size, 16, ...] -> same shape
#include <cmath>
#include <cstdint>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/activation_more.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct PRelu;

/// Configuration of PRelu (Burn's PReluConfig; PyTorch's num_parameters and init).
struct PReluConfig {
  std::int64_t num_parameters = 1;  ///< 1 (shared) or C, the channels of dim 1
  double alpha = 0.25;              ///< the initial slope (PyTorch's init=0.25)
  KILN_CONFIG(PReluConfig, (), (num_parameters, alpha))

  /// Throws: ConfigError if num_parameters < 1 or alpha is not finite.
  void check() const {
    if (num_parameters < 1 || !std::isfinite(alpha)) {
      throw_error<ConfigError>(
          "PReluConfig::init: num_parameters must be >= 1 and alpha "
          "finite, got num_parameters = ",
          num_parameters, ", alpha = ", alpha);
    }
  }
  /// A layer whose weight is alpha everywhere. Throws: ConfigError as check().
  template <Backend B>
  PRelu<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential ("prelu"): items keep their shape; num_parameters is 1 or the item's
/// dim 0 (the model's dim 1, channels).
template <>
struct SequentialRules<PReluConfig> : SequentialKeepsShape {
  static SequentialItem item_shape(const PReluConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (c.num_parameters != 1 && in.dims && !in.dims->empty() && (*in.dims)[0] >= 0 &&
        (*in.dims)[0] != c.num_parameters) {
      throw_error<ConfigError>(at, "num_parameters is ", c.num_parameters,
                               " but the previous layer outputs ", in.describe(), " (",
                               (*in.dims)[0], " channels in dim 1)");
    }
    return in;
  }
};
KILN_REGISTER_LAYER(PReluConfig, "prelu");

/// x for x > 0, weight·x otherwise, weight over dim 1 (torch.nn.PReLU).
template <Backend B>
struct PRelu {
  module::Param<Tensor<B, 1>> weight;  ///< [num_parameters], PyTorch's key and layout

  KILN_MODULE(PRelu, weight)

  /// Shapes: input [batch_size, C, ...] (any rank; below rank 2 num_parameters must be 1)
  ///         -> the same shape.
  /// Throws: ShapeError unless num_parameters is 1 or C.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return Tensor<B, D>(activation::prim::prelu<B>("PRelu::forward", input.primitive(),
                                                   weight.val().primitive()));
  }

  /// `num_parameters: 16`.
  void describe_fields(::kiln::StrOut& out) const {
    if (!weight.is_initialized()) {
      out << "weight: <empty>";
      return;
    }
    out << "num_parameters: " << weight.shape()[0];
  }
};

template <Backend B>
PRelu<B> PReluConfig::init(const Device<B>& device) const {
  check();
  PRelu<B> out;
  out.weight = module::Param<Tensor<B, 1>>(Tensor<B, 1>::full(Shape{num_parameters}, alpha, device));
  return out;
}

}  // namespace kiln::nn
