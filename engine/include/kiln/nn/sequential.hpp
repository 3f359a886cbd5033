#pragma once
/// Sequential: an ordered list of layers applied one after the other (PyTorch's
/// `nn.Sequential`), built in code or from a JSON spec, and its config.
///
///   auto model = nn::Sequential<B>()
///                    .add(nn::LinearConfig(2, 16).init<B>(device))
///                    .add(nn::Relu{})
///                    .add(nn::LinearConfig(16, 2).init<B>(device));
///   auto same = nn::SequentialConfig::from_json_string(R"({"layers": [
///       {"type": "linear", "d_input": 2, "d_output": 16},
///       {"type": "relu"},
///       {"type": "linear", "d_input": 16, "d_output": 2}]})").init<B>(device);
///
/// Records use PyTorch nn.Sequential's keys: the layer's index, then its field ("0.weight",
/// "0.bias", "2.weight", "2.bias" above; activations and dropout count as layers), so a
/// SafeTensors file loads into the same torch.nn.Sequential with load_state_dict.
///
/// JSON spec: {"layers": [layer, ...]}, each layer an object with "type" and its fields
/// (snake_case, as the C++ configs; the JS package translates its camelCase):
///   {"type": "linear", "d_input": 2, "d_output": 16, "bias": true, "initializer": ...}
///       d_input, d_output required; bias (default true), initializer (default PyTorch's,
///       Burn's JSON form, see kiln/module/initializer.hpp) optional
///   {"type": "dropout", "prob": 0.1}                          prob required, in [0, 1]
///   {"type": "relu"}, {"type": "sigmoid"}, {"type": "tanh"}, {"type": "silu"}
///   {"type": "gelu", "approximate": false}                    approximate optional
///   {"type": "leaky_relu", "negative_slope": 0.01}            negative_slope optional
/// A bad spec throws ConfigError naming the layer index and field:
///   SequentialConfig: layers[2]: unknown layer type "lineer" (types: linear, dropout, ...)
///   SequentialConfig: layers[2] (linear): d_input is 32 but the previous layer outputs 16
///   SequentialConfig: layers[0] (linear): missing required field "d_output"
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/activation.hpp"
#include "kiln/nn/dropout.hpp"
#include "kiln/nn/linear.hpp"

namespace kiln::nn {

/// One layer of a Sequential.
template <Backend B>
using SequentialLayer =
    std::variant<Linear<B>, Dropout, Relu, Gelu, Sigmoid, Tanh, LeakyRelu, Silu>;

/// The configuration of one layer of a SequentialConfig (parameterless activations are
/// their own config).
using SequentialLayerConfig =
    std::variant<LinearConfig, DropoutConfig, Relu, Gelu, Sigmoid, Tanh, LeakyReluConfig, Silu>;

/// The spec's "type" of a layer: "linear", "dropout", "relu", "gelu", "sigmoid", "tanh",
/// "leaky_relu", "silu".
std::string_view layer_type(const SequentialLayerConfig& layer);

template <Backend B>
struct Sequential;

/// Configuration of a Sequential: its layers' configs in order. Same interface as a
/// KILN_CONFIG config (to/from JSON string and file, save/load, ==, <<), written by hand so
/// that errors name the layer ("layers[2] (linear): ...").
struct SequentialConfig {
  std::vector<SequentialLayerConfig> layers;

  SequentialConfig() = default;
  explicit SequentialConfig(std::vector<SequentialLayerConfig> layers)
      : layers(std::move(layers)) {}

  /// A copy with `layer` appended: SequentialConfig().add(LinearConfig(2, 16)).add(Relu{}).
  SequentialConfig add(SequentialLayerConfig layer) const {
    SequentialConfig out = *this;
    out.layers.push_back(std::move(layer));
    return out;
  }

  /// Checks every layer and that each Linear's d_input equals the features the previous
  /// Linear outputs (activations and dropout keep the feature count).
  /// Throws: ConfigError naming the layer index, its type and the field.
  void validate() const;

  /// The model with fresh parameters on `device`. Throws: ConfigError as validate().
  template <Backend B>
  Sequential<B> init(const Device<B>& device = {}) const;

  /// {"layers": [{"type": "linear", ...}, ...]}.
  config::Json to_json() const;
  /// Throws ConfigError for a malformed spec (file comment), then as validate().
  static SequentialConfig from_json(const config::Json& j);
  std::string to_json_string(int indent = 2) const { return to_json().dump(indent); }
  /// Throws ConfigError for malformed JSON and as from_json.
  static SequentialConfig from_json_string(std::string_view text);
  /// Writes the JSON atomically. Throws IoError.
  void save(const std::string& path) const;
  /// Throws IoError if the file cannot be read, ConfigError naming the file otherwise.
  static SequentialConfig load(const std::string& path);

  friend bool operator==(const SequentialConfig&, const SequentialConfig&) = default;
  /// `SequentialConfig {"layers":[...]}` (the JSON on one line).
  friend std::ostream& operator<<(std::ostream& out, const SequentialConfig& c) {
    return out << "SequentialConfig " << c.to_json().dump();
  }
};

/// Layers applied in order (PyTorch's nn.Sequential). A module: visit, map, valid(),
/// num_params(), printing and records as KILN_MODULE, with PyTorch's keys ("0.weight").
template <Backend B>
struct Sequential {
  using Layer = SequentialLayer<B>;
  using kiln_module_tag = void;

  std::vector<Layer> layers;

  Sequential() = default;
  explicit Sequential(std::vector<Layer> layers) : layers(std::move(layers)) {}

  /// Appends a layer (chainable). Throws ConfigError if it is a Linear whose d_input differs
  /// from the d_output of the previous Linear (both initialized).
  Sequential& add(Layer layer) & {
    check_next(layer);
    layers.push_back(std::move(layer));
    return *this;
  }
  Sequential&& add(Layer layer) && { return std::move(add(std::move(layer))); }

  /// Number of layers (activations and dropout included).
  std::size_t len() const noexcept { return layers.size(); }
  bool is_empty() const noexcept { return layers.empty(); }

  /// Applies every layer in order.
  /// Shapes: input [..., d_input of the first Linear] -> [..., d_output of the last Linear]
  ///         (usually [batch_size, d_input] -> [batch_size, d_output]); no layers: identity.
  /// Throws: ShapeError naming the layer (index and type) whose input does not fit;
  ///         StateError for a layer never initialized or loaded.
  template <std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      try {
        input = std::visit([&](const auto& layer) { return layer.forward(std::move(input)); },
                           layers[i]);
      } catch (const ShapeError& e) {
        throw ShapeError(
            str_cat("Sequential::forward: layer ", i, " (", type_of(layers[i]), "): ", e.what()));
      }
    }
    return input;
  }

  // ---- the module interface (KILN_MODULE's, with index keys)

  /// Calls visitor(path, param) for every parameter: "0.weight", "0.bias", "2.weight", ...
  template <class V>
  void visit(V& visitor, const std::string& prefix = "") const {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      module::visit_field(visitor, module::join_path(prefix, std::to_string(i)), layers[i]);
    }
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& prefix = "") {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      module::visit_field_mut(visitor, module::join_path(prefix, std::to_string(i)), layers[i]);
    }
  }
  /// The model with the mapper applied to every parameter (maybe onto another backend).
  template <class M>
  auto map(M& mapper) const {
    Sequential<typename M::template Target<B>> out;
    out.layers = module::map_field(mapper, layers);
    return out;
  }
  /// Number of parameter elements.
  std::int64_t num_params() const {
    module::CountParams counter;
    visit(counter);
    return counter.count;
  }
  /// Parameter paths in order ("0.weight", "0.bias", ...).
  std::vector<std::string> param_paths() const {
    std::vector<std::string> paths;
    auto collect = [&paths](const std::string& path, const auto&) { paths.push_back(path); };
    visit(collect);
    return paths;
  }
  /// The inference model on the inner backend, no graph (Burn's valid()); dropout becomes
  /// the identity there.
  template <class BB = B>
  requires AutodiffBackend<BB> Sequential<typename BB::Inner> valid()
  const {
    module::ValidMapper mapper;
    return map(mapper);
  }
  /// The model on autodiff backend AD, parameters tracked again.
  template <class AD>
  Sequential<AD> from_inner() const {
    module::FromInnerMapper<AD> mapper;
    return map(mapper);
  }
  /// Every parameter on `device` (Burn's to_device; Kiln's backends have one device each).
  Sequential to_device(const Device<B>& device) const {
    module::ToDeviceMapper<Device<B>> mapper{&device};
    return map(mapper);
  }
  /// Every parameter frozen.
  Sequential no_grad() const {
    module::NoGradMapper mapper;
    return map(mapper);
  }
  /// Saves the parameters with `recorder`, keyed "0.weight", ...
  template <class R>
  void save_file(const std::string& path, const R& recorder) const {
    recorder.save_file(*this, path);
  }
  /// This model with the parameters loaded from `path`.
  template <class R>
  Sequential load_file(const std::string& path, const R& recorder,
                       const typename B::Device& device = {}) const {
    return recorder.load_file(*this, path, device);
  }
  /// A copy sharing the parameter buffers.
  Sequential clone() const { return *this; }
  /// `Sequential {0: Linear {d_input: 2, d_output: 16, bias: true, params: 48}, 1: Relu,
  /// params: 48}`.
  void describe(std::ostream& out) const {
    out << "Sequential {";
    for (std::size_t i = 0; i < layers.size(); ++i) {
      out << i << ": ";
      module::describe_field(out, layers[i]);
      out << ", ";
    }
    out << "params: " << num_params() << "}";
  }
  friend std::ostream& operator<<(std::ostream& out, const Sequential& m) {
    m.describe(out);
    return out;
  }

 private:
  static std::string_view type_of(const Layer& layer) {
    static constexpr std::string_view names[] = {"linear",  "dropout", "relu",       "gelu",
                                                 "sigmoid", "tanh",    "leaky_relu", "silu"};
    return names[layer.index()];
  }
  void check_next(const Layer& layer) const {
    const auto* next = std::get_if<Linear<B>>(&layer);
    if (!next || !next->weight.is_initialized()) return;
    for (std::size_t i = layers.size(); i-- > 0;) {
      if (const auto* prev = std::get_if<Linear<B>>(&layers[i])) {
        if (prev->weight.is_initialized() && prev->d_output() != next->d_input()) {
          throw ConfigError(str_cat("Sequential::add: layer ", layers.size(),
                                    " (linear): d_input is ", next->d_input(),
                                    " but the previous layer outputs ", prev->d_output()));
        }
        return;
      }
    }
  }
};

template <Backend B>
Sequential<B> SequentialConfig::init(const Device<B>& device) const {
  validate();
  Sequential<B> out;
  out.layers.reserve(layers.size());
  for (const auto& layer : layers) {
    std::visit(
        [&](const auto& c) {
          using C = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<C, LinearConfig>) {
            out.layers.emplace_back(c.template init<B>(device));
          } else if constexpr (std::is_same_v<C, DropoutConfig> ||
                               std::is_same_v<C, LeakyReluConfig>) {
            out.layers.emplace_back(c.init());
          } else {
            out.layers.emplace_back(c);
          }
        },
        layer);
  }
  return out;
}

}  // namespace kiln::nn
