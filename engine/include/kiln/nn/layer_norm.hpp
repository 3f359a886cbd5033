#pragma once
/// LayerNorm (Burn's `nn::LayerNorm`, PyTorch's nn.LayerNorm over the last dim or several
/// trailing dims) and its config.
///
///   auto norm = nn::LayerNormConfig(512).init<Cpu>(device);
///   auto y = norm.forward(x);  // [batch_size, seq_length, 512] -> same shape
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/nn/sequential_rules.hpp"
#include "kiln/tensor/erased.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::nn {

template <Backend B>
struct LayerNorm;

/// Configuration of LayerNorm (Burn's LayerNormConfig; `elementwise_affine` and
/// `normalized_shape` are PyTorch's). Give `d_model` (the last dim, Burn's form) or
/// `normalized_shape` (1 to 3 trailing dims, PyTorch's form).
struct LayerNormConfig {
  std::int64_t d_model = 0;        ///< size of the normalised last dim (unless normalized_shape)
  double epsilon = 1e-5;           ///< added to the variance inside the square root
  bool elementwise_affine = true;  ///< learn weight (ones) and bias (zeros) of the normalised shape
  /// PyTorch's normalized_shape: the trailing dims normalised together (1 to 3 dims, each
  /// >= 1); weight and bias have this shape. When given, d_model is 0 or its last dim.
  std::optional<std::vector<std::int64_t>> normalized_shape;

  LayerNormConfig() = default;
  explicit LayerNormConfig(std::int64_t d_model) : d_model(d_model) {}
  KILN_CONFIG(LayerNormConfig, (), (d_model, epsilon, elementwise_affine, normalized_shape))

  /// The normalised trailing dims: normalized_shape, or [d_model].
  std::vector<std::int64_t> shape() const {
    return normalized_shape ? *normalized_shape : std::vector<std::int64_t>{d_model};
  }

  /// Throws: ConfigError if d_model < 1 (without normalized_shape), normalized_shape has
  ///         not 1 to 3 dims or a dim < 1, d_model disagrees with its last dim, or epsilon
  ///         < 0 (or NaN).
  void check() const {
    if (normalized_shape) {
      const auto& ns = *normalized_shape;
      bool ok = !ns.empty() && ns.size() <= 3;
      for (auto d : ns) ok = ok && d >= 1;
      if (!ok) {
        throw_error<ConfigError>(
            "LayerNormConfig::init: normalized_shape must have 1 to 3 dims, "
            "each >= 1, got ",
            sequential::item_string(ns));
      }
      if (d_model != 0 && d_model != ns.back()) {
        throw_error<ConfigError>("LayerNormConfig::init: d_model is ", d_model,
                                 " but normalized_shape ", sequential::item_string(ns), " ends in ",
                                 ns.back(), " (give one of them)");
      }
    } else if (d_model < 1) {
      throw_error<ConfigError>("LayerNormConfig::init: d_model must be >= 1, got ", d_model);
    }
    if (!(epsilon >= 0.0)) {
      throw_error<ConfigError>("LayerNormConfig::init: epsilon must be >= 0, got ", epsilon);
    }
  }

  /// Throws: ConfigError as check().
  template <Backend B>
  LayerNorm<B> init(const Device<B>& device = {}) const;
};

/// In a Sequential: over the trailing dims, which must be normalized_shape (or d_model).
template <>
struct SequentialRules<LayerNormConfig> {
  static SequentialItem item_shape(const LayerNormConfig& c, const SequentialItem& in,
                                   std::string_view at) {
    if (!c.normalized_shape) {
      const auto features = in.last_dim();
      if (features && *features != c.d_model) {
        throw_error<ConfigError>(at, "d_model is ", c.d_model, " but the previous layer outputs ",
                                 in.describe());
      }
      return in;
    }
    const auto& ns = *c.normalized_shape;
    if (in.dims) {
      const auto& d = *in.dims;
      bool fits = d.size() >= ns.size();
      for (std::size_t i = 0; fits && i < ns.size(); ++i) {
        const auto got = d[d.size() - ns.size() + i];
        fits = got < 0 || got == ns[i];
      }
      if (!fits) {
        throw_error<ConfigError>(at, "normalized_shape is ", sequential::item_string(ns),
                                 " but the previous layer outputs ", in.describe());
      }
    } else if (const auto last = in.last_dim(); last && *last != ns.back()) {
      throw_error<ConfigError>(at, "normalized_shape is ", sequential::item_string(ns),
                               " but the previous layer outputs ", in.describe());
    }
    return in;
  }
};
KILN_REGISTER_LAYER(LayerNormConfig, "layer_norm");

/// A LayerNorm weight or bias: a parameter of rank 1 to 3, the normalised shape (PyTorch's
/// layout). Visited, mapped and recorded as the parameter itself (key "weight", not
/// "weight.0"); `val()` / `set()` give the rank-1 parameter of Burn's d_model form.
template <Backend B>
struct LayerNormParam {
  using kiln_module_tag = void;
  using P1 = module::Param<Tensor<B, 1>>;
  std::variant<P1, module::Param<Tensor<B, 2>>, module::Param<Tensor<B, 3>>> param;

  LayerNormParam() = default;
  template <std::size_t D>
  explicit LayerNormParam(module::Param<Tensor<B, D>> p) : param(std::move(p)) {}

  /// The rank-1 parameter's tensor [d_model]. Throws StateError for a multi-dim one.
  const Tensor<B, 1>& val() const { return rank1("val").val(); }
  /// Replaces the rank-1 parameter's value. Throws StateError for a multi-dim one.
  void set(Tensor<B, 1> value) { const_cast<P1&>(rank1("set")).set(std::move(value)); }
  /// The rank-1 parameter. Throws StateError for a multi-dim one.
  const P1& rank1(const char* what) const {
    if (const auto* p = std::get_if<P1>(&param)) return *p;
    throw_error<StateError>("LayerNorm: ", what, ": the parameter has rank ", param.index() + 1,
                            " (normalized_shape); use std::visit on .param");
  }

  template <class V>
  void visit(V& visitor, const std::string& prefix = "") const {
    std::visit([&](const auto& p) { visitor(prefix, p); }, param);
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& prefix = "") {
    std::visit([&](auto& p) { visitor(prefix, p); }, param);
  }
  template <class M>
  auto map(M& mapper) const {
    using To = typename M::template Target<B>;
    LayerNormParam<To> out;
    std::visit([&](const auto& p) { out.param = mapper(p); }, param);
    return out;
  }
  void describe(::kiln::StrOut& out) const {
    std::visit([&](const auto& p) { module::describe_field(out, p); }, param);
  }
  std::int64_t num_params() const {
    return std::visit([](const auto& p) { return p.num_elements(); }, param);
  }
};

/// y = (x - mean) / sqrt(var + epsilon) · weight + bias over the trailing dims
/// normalized_shape (the last dim d_model in Burn's form), var biased (torch.nn.LayerNorm).
/// Composed of tensor ops, so Autodiff<B> differentiates it.
template <Backend B>
struct LayerNorm {
  std::optional<LayerNormParam<B>> weight;  ///< γ [normalized_shape]
  std::optional<LayerNormParam<B>> bias;    ///< β [normalized_shape]
  std::int64_t d_model = 0;                 ///< the last normalised dim
  std::vector<std::int64_t> normalized_shape;
  double epsilon = 1e-5;

  KILN_MODULE(LayerNorm, weight, bias, d_model, normalized_shape, epsilon)

  /// Shapes:    input [..., normalized_shape] (rank D >= its dims) -> the same shape.
  /// Throws:    ShapeError if the trailing dims are not normalized_shape (or the last not
  ///            d_model).
  /// Semantics: torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps).
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& input) const {
    return forward_erased(kiln::detail::ErasedFloat<B>(input), D).template typed<D>();
  }

  /// `d_model: 512, epsilon: 0.00001, elementwise_affine: true` (and `normalized_shape:
  /// [3, 4]` when it has several dims)
  void describe_fields(::kiln::StrOut& out) const {
    if (normalized_shape.size() > 1) {
      out << "normalized_shape: " << sequential::item_string(normalized_shape) << ", ";
    }
    out << "d_model: " << d_model << ", epsilon: " << epsilon
        << ", elementwise_affine: " << (weight ? "true" : "false");
  }

 private:
  using Erased = kiln::detail::ErasedFloat<B>;

  /// forward of an input of rank D, rank-erased (one copy of the code for every rank; the
  /// same ops in the same order as written on Tensor<B, D>).
  Erased forward_erased(const Erased& input, std::size_t D) const {
    const Shape s = input.shape();
    const std::size_t k = normalized_shape.empty() ? 1 : normalized_shape.size();
    if (k <= 1) {
      if (s[D - 1] != d_model) {
        throw_error<ShapeError>("LayerNorm::forward: expected input [..., ", d_model,
                                "] (d_model = ", d_model, "), got ", s);
      }
      const auto last = static_cast<std::int64_t>(D - 1);
      const auto [var, mean] = input.var_mean(last, /*unbiased=*/false);
      return affine((input - mean) / (var + epsilon).sqrt(), D);
    }
    bool fits = D >= k;
    for (std::size_t i = 0; fits && i < k; ++i) fits = s[D - k + i] == normalized_shape[i];
    if (!fits) {
      throw_error<ShapeError>("LayerNorm::forward: expected input [..., ",
                              sequential::item_string(normalized_shape).substr(1),
                              " (normalized_shape = ", sequential::item_string(normalized_shape),
                              "), got ", s);
    }
    // Means over the k trailing dims, kept (equal-size groups: the mean of means).
    auto mean_trailing = [k, D](const Erased& t) {
      Erased out = t;
      for (std::size_t i = 0; i < k; ++i) out = out.mean_dim(static_cast<std::int64_t>(D - 1 - i));
      return out;
    };
    const auto centered = input - mean_trailing(input);
    const auto var = mean_trailing(centered * centered);
    return affine(centered / (var + epsilon).sqrt(), D);
  }

  /// p [normalized_shape] as rank D [1, ..., 1, normalized_shape].
  static Erased broadcast(const LayerNormParam<B>& lp, std::size_t D) {
    return std::visit(
        [D](const auto& param) {
          const Shape ps = param.val().shape();
          std::vector<std::int64_t> dims(D, 1);
          for (std::size_t i = 0; i < ps.rank(); ++i) dims[D - ps.rank() + i] = ps[i];
          return Erased(param.val()).reshape(dims);
        },
        lp.param);
  }
  Erased affine(Erased y, std::size_t D) const {
    if (weight) y = y * broadcast(*weight, D);
    if (bias) y = y + broadcast(*bias, D);
    return y;
  }
};

template <Backend B>
LayerNorm<B> LayerNormConfig::init(const Device<B>& device) const {
  check();
  LayerNorm<B> out;
  const auto ns = shape();
  out.d_model = ns.back();
  out.normalized_shape = ns;
  out.epsilon = epsilon;
  if (elementwise_affine) {
    auto make = [&](float value) -> LayerNormParam<B> {
      switch (ns.size()) {
        case 1:
          return LayerNormParam<B>(
              module::Param<Tensor<B, 1>>(Tensor<B, 1>::full(Shape{ns[0]}, value, device)));
        case 2:
          return LayerNormParam<B>(
              module::Param<Tensor<B, 2>>(Tensor<B, 2>::full(Shape{ns[0], ns[1]}, value, device)));
        default:
          return LayerNormParam<B>(module::Param<Tensor<B, 3>>(
              Tensor<B, 3>::full(Shape{ns[0], ns[1], ns[2]}, value, device)));
      }
    };
    out.weight = make(1.0);
    out.bias = make(0.0);
  }
  return out;
}

}  // namespace kiln::nn
