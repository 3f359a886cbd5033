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
/// (snake_case, as the C++ configs; the JS package translates its camelCase). Sizes that are
/// pairs ({height, width}) may be given as one integer for both.
///   {"type": "linear", "d_input": 2, "d_output": 16, "bias": true, "initializer": ...}
///       d_input, d_output required; bias (default true), initializer (default PyTorch's,
///       Burn's JSON form, see kiln/module/initializer.hpp) optional
///   {"type": "dropout", "prob": 0.1}                          prob required, in [0, 1]
///   {"type": "relu"}, {"type": "sigmoid"}, {"type": "tanh"}, {"type": "silu"}
///   {"type": "gelu", "approximate": false}                    approximate optional
///   {"type": "leaky_relu", "negative_slope": 0.01}            negative_slope optional
///   {"type": "reshape", "shape": [1, 28, 28]}                 per-item dims (batch kept),
///       1 to 4 of them, one may be -1 (nn::Reshape; torch nn.Unflatten(1, shape))
///   {"type": "flatten", "start_dim": 1, "end_dim": -1}        both optional (nn::Flatten)
///   {"type": "conv2d", "channels": [1, 8], "kernel_size": [3, 3], "stride": [1, 1],
///    "padding": "valid" | "same" | [1, 1], "dilation": [1, 1], "groups": 1, "bias": true,
///    "initializer": ...}                                      channels, kernel_size required
///   {"type": "conv1d", "channels": [4, 8], "kernel_size": 3, "stride": 1,
///    "padding": "valid" | "same" | 1, "dilation": 1, "groups": 1, "bias": true}
///   {"type": "max_pool2d", "kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0],
///    "dilation": [1, 1], "ceil_mode": false}                  stride defaults to kernel_size
///   {"type": "avg_pool2d", "kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0],
///    "count_include_pad": true, "ceil_mode": false}
///   {"type": "adaptive_avg_pool2d", "output_size": [1, 1]}
///   {"type": "batch_norm", "num_features": 8, "epsilon": 1e-5, "momentum": 0.1}
///       over dim 1 of [batch_size, C] or [batch_size, C, ...] (torch BatchNorm1d/2d)
///   {"type": "layer_norm", "d_model": 64, "epsilon": 1e-5, "elementwise_affine": true}
/// Record keys are PyTorch's: "<index>.weight", "<index>.bias", and for batch_norm also
/// "<index>.running_mean", "<index>.running_var", "<index>.num_batches_tracked".
///
/// Shapes flow through the layers at run time (the activation between two layers is a
/// Tensor of rank 2 to 5): linear, activations, dropout and layer_norm keep the rank and
/// act on the last dim; conv2d and the 2-D pools take [batch_size, channels, height, width];
/// conv1d [batch_size, channels, length]; conv3d [batch_size, channels, depth, height,
/// width]; batch_norm ranks 2 to 4.
///
/// A bad spec throws ConfigError naming the layer index, type and field:
///   SequentialConfig: layers[2]: unknown layer type "lineer" (types: linear, dropout, ...)
///   SequentialConfig: layers[2] (linear): d_input is 32 but the previous layer outputs 16
///   SequentialConfig: layers[0] (linear): missing required field "d_output"
///   SequentialConfig: layers[3] (conv2d): channels[0] is 3 but the previous layer outputs
///       items [8, 26, 26] (8 channels)
/// validate() follows the per-item shape as far as the spec determines it (from the first
/// linear or reshape on), so mismatches between layers are caught before any data.
///
/// The layer types are an open registry (kiln/nn/sequential_layer.hpp): each layer header
/// registers its config with KILN_REGISTER_LAYER, and SequentialConfig reads, checks (with
/// the config's own check()) and follows the shapes of any registered type. The headers of
/// the built-in types are included here, so `SequentialConfig().add(LinearConfig(2, 16))`
/// needs nothing else.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/nn/activation.hpp"
#include "kiln/nn/batch_norm.hpp"
#include "kiln/nn/conv1d.hpp"
#include "kiln/nn/conv2d.hpp"
#include "kiln/nn/dropout.hpp"
#include "kiln/nn/layer_norm.hpp"
#include "kiln/nn/linear.hpp"
#include "kiln/nn/pool.hpp"
#include "kiln/nn/reshape.hpp"
#include "kiln/nn/sequential_layer.hpp"

namespace kiln::nn {

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

  /// Checks every layer's fields, then follows the per-item shape from layer to layer as far
  /// as the spec determines it (a linear fixes the last dim, a reshape the whole item): a
  /// linear's d_input must equal the features before it, a conv's channels[0] / a
  /// batch_norm's num_features the channels, a layer_norm's d_model the last dim; conv2d and
  /// the 2-D pools need items of rank 3, conv1d of rank 2, batch_norm of rank 1 to 3; a
  /// kernel must fit its (padded) input; a reshape must keep the item's element count;
  /// activations between layers are rank 2 to 5 ([batch_size] plus 1 to 4 item dims).
  /// Throws: ConfigError naming the layer index, its type and the field.
  void validate() const;

  /// The item shape the model outputs for items of shape `item` (without the batch dim),
  /// or the layer that rejects it. Throws: ConfigError as validate.
  std::vector<std::int64_t> output_item_shape(const std::vector<std::int64_t>& item) const;

  /// The per-item shape after each layer as far as the spec fixes it, starting from items
  /// of shape `input` (unknown when nullopt): a -1 dim is not fixed, nullopt an unknown rank.
  /// Throws: ConfigError as validate (for `input`, as output_item_shape).
  std::vector<std::optional<std::vector<std::int64_t>>> item_shapes(
      const std::optional<std::vector<std::int64_t>>& input = std::nullopt) const;

  /// The per-item input size the spec fixes, if any: d_input of a first linear, the
  /// element count of a first reshape (after layers that keep the shape); nullopt otherwise.
  std::optional<std::int64_t> input_item_size() const;

  /// The model with fresh parameters on `device`. Throws: ConfigError as validate().
  template <Backend B>
  Sequential<B> init(const Device<B>& device = {}) const;

  /// At most this many layers (issue 14: a spec of a million layers is refused before any
  /// layer config is built).
  static constexpr std::size_t max_layers = 4096;

  /// {"layers": [{"type": "linear", ...}, ...]}.
  config::Value to_value() const;
  /// Throws ConfigError for a malformed spec (file comment), then as validate();
  /// LimitError for more than max_layers layers.
  static SequentialConfig from_value(const config::Value& j);
  KILN_CONFIG_JSON_MEMBERS(SequentialConfig)
  std::string to_json_string(int indent = 2) const { return to_value().dump(indent); }
  /// Throws ConfigError for malformed JSON and as from_value; LimitError (config::parse,
  /// max_layers).
  static SequentialConfig from_json_string(std::string_view text);
  /// Writes the JSON atomically. Throws IoError.
  void save(const std::string& path) const;
  /// Throws IoError if the file cannot be read, ConfigError naming the file otherwise.
  static SequentialConfig load(const std::string& path);

  friend bool operator==(const SequentialConfig&, const SequentialConfig&) = default;
  /// `SequentialConfig {"layers":[...]}` (the JSON on one line).
  friend void append_to(std::string& kiln_text, const SequentialConfig& c) {
    ::kiln::StrOut{kiln_text} << "SequentialConfig " << c.to_value().dump();
  }
};

/// Layers applied in order (PyTorch's nn.Sequential). A module: visit, map, valid(),
/// num_params(), printing and records as KILN_MODULE, with PyTorch's keys ("0.weight").
template <Backend B>
struct Sequential {
  using Layer = SequentialLayer<B>;
  using Activation = SequentialActivation<B>;
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

  /// Applies every layer in order, the rank of the value changing where a layer changes it
  /// (reshape, flatten, ...). The generic entry point.
  /// Shapes: input [batch_size, ...] of rank 2 to 5 -> what the last layer gives; no
  ///         layers: the identity.
  /// Throws: ShapeError naming the layer (index and type) whose input does not fit, e.g.
  ///         `Sequential::forward: layer 0 (conv2d): expected input [batch_size, channels,
  ///         height, width] (rank 4), got [64, 784]`; StateError for a layer never
  ///         initialized or loaded.
  Activation forward_any(Activation input) const;

  /// forward_any from a typed input to a typed output of rank DOut.
  /// Throws: as forward_any; ShapeError if the output's rank is not DOut (naming it).
  template <std::size_t DOut, std::size_t DIn>
  Tensor<B, DOut> forward_as(Tensor<B, DIn> input) const {
    static_assert(DIn >= 2 && DIn <= 5 && DOut >= 2 && DOut <= 5,
                  "Sequential::forward: ranks 2 to 5 ([batch_size, ...])");
    Activation out = forward_any(Activation(std::move(input)));
    if (auto* t = std::get_if<Tensor<B, DOut>>(&out)) return std::move(*t);
    throw_error<ShapeError>("Sequential::forward: the model outputs ", activation_shape<B>(out),
                            " (rank ", activation_rank<B>(out), "), expected rank ", DOut);
  }

  /// The same-rank form (the usual [batch_size, d_input] -> [batch_size, d_output]).
  /// Shapes: input rank D (2 to 5) -> output rank D.
  /// Throws: as forward_as.
  template <std::size_t D>
  Tensor<B, D> forward(Tensor<B, D> input) const {
    return forward_as<D>(std::move(input));
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
  /// Number of parameter elements (BatchNorm's running statistics included, as PyTorch's
  /// state_dict; they are not trained).
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
  /// the identity there and batch_norm uses its running statistics.
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
  void describe(::kiln::StrOut& out) const {
    out << "Sequential {";
    for (std::size_t i = 0; i < layers.size(); ++i) {
      out << i << ": ";
      module::describe_field(out, layers[i]);
      out << ", ";
    }
    out << "params: " << num_params() << "}";
  }
  friend void append_to(std::string& kiln_text, const Sequential& m) {
    ::kiln::StrOut out(kiln_text);
    m.describe(out);
  }

  /// The spec's type name of a layer ("linear", "conv2d", ...).
  static std::string_view type_of(const Layer& layer) { return layer.type(); }

 private:
  void check_next(const Layer& layer) const {
    const auto next = layer.feature_dims();
    if (!next) return;
    for (std::size_t i = layers.size(); i-- > 0;) {
      if (const auto prev = layers[i].feature_dims()) {
        if (prev->second != next->first) {
          throw_error<ConfigError>("Sequential::add: layer ", layers.size(), " (", layer.type(),
                                   "): d_input is ", next->first,
                                   " but the previous layer outputs ", prev->second);
        }
        return;
      }
    }
  }
};

template <Backend B>
typename Sequential<B>::Activation Sequential<B>::forward_any(Activation input) const {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    try {
      input = layers[i].forward(std::move(input));
    } catch (const ShapeError& e) {
      throw_error<ShapeError>("Sequential::forward: layer ", i, " (", type_of(layers[i]),
                              "): ", e.what());
    } catch (const RankError& e) {
      throw_error<ShapeError>("Sequential::forward: layer ", i, " (", type_of(layers[i]),
                              "): ", e.what());
    }
  }
  return input;
}

template <Backend B>
Sequential<B> SequentialConfig::init(const Device<B>& device) const {
  validate();
  Sequential<B> out;
  out.layers.reserve(layers.size());
  for (const auto& layer : layers) out.layers.push_back(build_sequential_layer<B>(layer, device));
  return out;
}

}  // namespace kiln::nn
