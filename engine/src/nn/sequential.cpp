// SequentialConfig: the JSON spec of nn::Sequential, its validation (the per-item shape
// followed from layer to layer) and its error messages.
#include "kiln/nn/sequential.hpp"

#include <cmath>

#include "kiln/backend/pool_options.hpp"
#include "kiln/core/io.hpp"

namespace kiln::nn {
namespace {

using Json = config::Json;
using Dims = std::vector<std::int64_t>;  // per-item dims; -1 where the spec does not fix one

std::string type_list() {
  std::string out;
  for (auto t : kSequentialLayerTypes) out += str_cat(out.empty() ? "" : ", ", t);
  return out;
}

std::string where(std::size_t index, std::string_view type) {
  return str_cat("SequentialConfig: layers[", index, "] (", type, "): ");
}

/// "LinearConfig: missing ..." -> "missing ...", "LinearConfig.bias: ..." -> "bias: ...",
/// "Conv2dConfig::init: ..." -> "...": the layer's position already names the config.
std::string strip_config_name(std::string_view message, std::string_view config_name) {
  if (message.rfind(config_name, 0) == 0) {
    message.remove_prefix(config_name.size());
    if (message.rfind("::init: ", 0) == 0) {
      message.remove_prefix(8);
    } else if (message.rfind(": ", 0) == 0) {
      message.remove_prefix(2);
    } else if (message.rfind(".", 0) == 0) {
      message.remove_prefix(1);
    }
  }
  return std::string(message);
}

/// Replaces every `from` in `text` by `to`.
std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

/// Parses `body` (the layer without "type") with C::from_json, errors prefixed by the layer.
template <class C>
C parse_config(const Json& body, std::size_t index, std::string_view type,
               std::string_view config_name) {
  try {
    return C::from_json(body);
  } catch (const ConfigError& e) {
    throw ConfigError(where(index, type) + strip_config_name(e.what(), config_name));
  }
}

/// Runs `check`; a ConfigError is re-thrown prefixed by the layer, `config_name` stripped.
template <class F>
void at_layer(std::size_t index, std::string_view type, std::string_view config_name, F&& check) {
  try {
    check();
  } catch (const ConfigError& e) {
    throw ConfigError(where(index, type) + strip_config_name(e.what(), config_name));
  }
}

/// A layer without fields: anything besides "type" is an error.
void no_fields(const Json& body, std::size_t index, std::string_view type) {
  if (!body.empty()) {
    throw ConfigError(str_cat(where(index, type), "unknown field \"", body.begin().key(), "\" (",
                              type, " takes no fields)"));
  }
}

/// Throws unless every field of body is in `fields`.
void known_fields(const Json& body, std::size_t index, std::string_view type,
                  std::initializer_list<std::string_view> fields) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    bool known = false;
    for (auto f : fields) known = known || f == it.key();
    if (!known) {
      std::string list;
      for (auto f : fields) list += str_cat(list.empty() ? "" : ", ", f);
      throw ConfigError(
          str_cat(where(index, type), "unknown field \"", it.key(), "\" (fields: ", list, ")"));
    }
  }
}

/// An integer given for a {height, width} field becomes [n, n] (PyTorch's int-or-tuple).
void widen_pair(Json& body, const char* field) {
  auto it = body.find(field);
  if (it != body.end() && it->is_number_integer()) *it = Json::array({*it, *it});
}

/// The spec's padding of a convolution ("valid", "same", [h, w] / n) -> Burn's JSON form
/// ("Valid", "Same", {"Explicit": [h, w]} / {"Explicit": n}) that PaddingConfig reads.
void spec_padding_to_config(Json& body, std::size_t index, std::string_view type, bool two_d) {
  auto it = body.find("padding");
  if (it == body.end()) return;
  Json& p = *it;
  if (p == "valid") {
    p = "Valid";
  } else if (p == "same") {
    p = "Same";
  } else if (two_d && p.is_number_integer()) {
    p = Json{{"Explicit", Json::array({p, p})}};
  } else if (two_d && p.is_array() && p.size() == 2 && p[0].is_number_integer() &&
             p[1].is_number_integer()) {
    p = Json{{"Explicit", p}};
  } else if (!two_d && p.is_number_integer()) {
    p = Json{{"Explicit", p}};
  } else {
    throw ConfigError(str_cat(where(index, type), "padding: expected \"valid\", \"same\" or ",
                              two_d ? "[height, width] (or one integer)" : "an integer", ", got ",
                              config::describe(p)));
  }
}

/// The reverse of spec_padding_to_config, for to_json.
void config_padding_to_spec(Json& j) {
  auto it = j.find("padding");
  if (it == j.end()) return;
  Json& p = *it;
  if (p == "Valid") {
    p = "valid";
  } else if (p == "Same") {
    p = "same";
  } else if (p.is_object() && p.contains("Explicit")) {
    p = Json(p["Explicit"]);
  }
}

/// Renames a field of an object (no-op when absent).
void rename_field(Json& j, const char* from, const char* to) {
  auto it = j.find(from);
  if (it == j.end()) return;
  Json value = *it;
  j.erase(from);
  j[to] = std::move(value);
}

std::int64_t read_int(const Json& v, std::size_t index, std::string_view type,
                      std::string_view field) {
  if (!v.is_number_integer()) {
    throw ConfigError(str_cat(where(index, type), field, ": expected an integer, got ",
                              config::describe(v)));
  }
  return v.get<std::int64_t>();
}

Reshape parse_reshape(const Json& body, std::size_t index, std::string_view type) {
  known_fields(body, index, type, {"shape"});
  auto it = body.find("shape");
  if (it == body.end()) {
    throw ConfigError(str_cat(where(index, type), "missing required field \"shape\""));
  }
  if (!it->is_array()) {
    throw ConfigError(str_cat(where(index, type), "shape: expected an array of integers, got ",
                              config::describe(*it)));
  }
  Reshape r;
  for (std::size_t d = 0; d < it->size(); ++d) {
    r.shape.push_back(read_int((*it)[d], index, type, str_cat("shape[", d, "]")));
  }
  return r;
}

Flatten parse_flatten(const Json& body, std::size_t index, std::string_view type) {
  known_fields(body, index, type, {"start_dim", "end_dim"});
  Flatten f;
  if (auto it = body.find("start_dim"); it != body.end()) {
    f.start_dim = read_int(*it, index, type, "start_dim");
  }
  if (auto it = body.find("end_dim"); it != body.end()) {
    f.end_dim = read_int(*it, index, type, "end_dim");
  }
  return f;
}

SequentialLayerConfig parse_layer(const Json& j, std::size_t index) {
  if (!j.is_object()) {
    throw ConfigError(str_cat("SequentialConfig: layers[", index,
                              "]: expected an object such as {\"type\": \"relu\"}, got ",
                              config::describe(j)));
  }
  auto it = j.find("type");
  if (it == j.end()) {
    throw ConfigError(str_cat("SequentialConfig: layers[", index,
                              "]: missing required field \"type\" (one of: ", type_list(), ")"));
  }
  if (!it->is_string()) {
    throw ConfigError(str_cat("SequentialConfig: layers[", index, "].type: expected a string, got ",
                              config::describe(*it)));
  }
  const std::string type = it->get<std::string>();
  Json body = j;
  body.erase("type");
  if (type == "linear") return parse_config<LinearConfig>(body, index, type, "LinearConfig");
  if (type == "dropout") return parse_config<DropoutConfig>(body, index, type, "DropoutConfig");
  if (type == "leaky_relu") {
    return parse_config<LeakyReluConfig>(body, index, type, "LeakyReluConfig");
  }
  if (type == "gelu") {
    Gelu gelu;
    for (auto f = body.begin(); f != body.end(); ++f) {
      if (f.key() != "approximate") {
        throw ConfigError(
            str_cat(where(index, type), "unknown field \"", f.key(), "\" (fields: approximate)"));
      }
      if (!f->is_boolean()) {
        throw ConfigError(str_cat(where(index, type), "approximate: expected a boolean, got ",
                                  config::describe(*f)));
      }
      gelu.approximate = f->get<bool>();
    }
    return gelu;
  }
  if (type == "relu" || type == "sigmoid" || type == "tanh" || type == "silu") {
    no_fields(body, index, type);
    if (type == "relu") return Relu{};
    if (type == "sigmoid") return Sigmoid{};
    if (type == "tanh") return Tanh{};
    return Silu{};
  }
  if (type == "reshape") return parse_reshape(body, index, type);
  if (type == "flatten") return parse_flatten(body, index, type);
  if (type == "conv2d") {
    for (const char* f : {"kernel_size", "stride", "dilation"}) widen_pair(body, f);
    spec_padding_to_config(body, index, type, true);
    return parse_config<Conv2dConfig>(body, index, type, "Conv2dConfig");
  }
  if (type == "conv1d") {
    spec_padding_to_config(body, index, type, false);
    return parse_config<Conv1dConfig>(body, index, type, "Conv1dConfig");
  }
  if (type == "max_pool2d" || type == "avg_pool2d") {
    // The spec says "stride" (as conv2d and PyTorch); the configs' field is Burn's "strides".
    if (body.contains("strides")) {
      throw ConfigError(str_cat(where(index, type), "unknown field \"strides\" (the spec's name is "
                                                    "\"stride\")"));
    }
    for (const char* f : {"kernel_size", "stride", "padding", "dilation"}) widen_pair(body, f);
    rename_field(body, "stride", "strides");
    try {
      if (type == "max_pool2d") {
        return parse_config<MaxPool2dConfig>(body, index, type, "MaxPool2dConfig");
      }
      return parse_config<AvgPool2dConfig>(body, index, type, "AvgPool2dConfig");
    } catch (const ConfigError& e) {
      throw ConfigError(replace_all(e.what(), "strides", "stride"));
    }
  }
  if (type == "adaptive_avg_pool2d") {
    widen_pair(body, "output_size");
    return parse_config<AdaptiveAvgPool2dConfig>(body, index, type, "AdaptiveAvgPool2dConfig");
  }
  if (type == "batch_norm") {
    return parse_config<BatchNormConfig>(body, index, type, "BatchNormConfig");
  }
  if (type == "layer_norm") {
    return parse_config<LayerNormConfig>(body, index, type, "LayerNormConfig");
  }
  throw ConfigError(str_cat("SequentialConfig: layers[", index, "]: unknown layer type \"", type,
                            "\" (types: ", type_list(), ")"));
}

// ---------------------------------------------------------------- shape propagation

/// `[8, 26, 26]` with `?` for dims the spec does not fix.
std::string item_string(const Dims& dims) {
  std::string out = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    out += d ? ", " : "";
    out += dims[d] < 0 ? std::string("?") : std::to_string(dims[d]);
  }
  return out + "]";
}

/// What the spec knows of the items between two layers: their dims (rank known, -1 where a
/// dim is not), or only their last dim (after a linear on items of unknown rank), or nothing.
struct Item {
  std::optional<Dims> dims;
  std::optional<std::int64_t> last;

  std::optional<std::int64_t> last_dim() const {
    if (dims) {
      if (!dims->empty() && dims->back() >= 0) return dims->back();
      return std::nullopt;
    }
    return last;
  }
  std::string describe() const {
    if (dims) return str_cat("items ", item_string(*dims));
    if (last) return str_cat("items [..., ", *last, "]");
    return "items of unknown shape";
  }
};

std::optional<std::int64_t> product(const Dims& dims) {
  std::int64_t n = 1;
  for (auto d : dims) {
    if (d < 0) return std::nullopt;
    n *= d;
  }
  return n;
}

/// Requires items of rank `rank` (without the batch dim) when the rank is known.
void need_item_rank(const Item& item, std::size_t rank, std::string_view at,
                    std::string_view expected_input) {
  if (item.dims && item.dims->size() != rank) {
    throw ConfigError(str_cat(at, "expects input ", expected_input, " (items of rank ", rank,
                              ") but the previous layer outputs ", item.describe(),
                              rank > item.dims->size() ? "; add a reshape layer before it" : ""));
  }
}

/// out = floor((in + pad_begin + pad_end - dilation·(kernel - 1) - 1) / stride) + 1, or an
/// error naming the dim when the kernel does not fit the padded input.
std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                      std::int64_t pad_total, std::int64_t dilation, std::string_view at,
                      std::string_view dim_name, const Item& item) {
  if (in < 0) return -1;
  const std::int64_t span = dilation * (kernel - 1) + 1;
  if (in + pad_total < span) {
    throw ConfigError(str_cat(at, "the kernel (", span, " with dilation) is larger than the ",
                              dim_name, " of the padded input (", in + pad_total,
                              "): the previous layer outputs ", item.describe()));
  }
  return (in + pad_total - span) / stride + 1;
}

std::int64_t pool_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                      std::int64_t padding, std::int64_t dilation, bool ceil_mode,
                      std::string_view at, std::string_view dim_name, const Item& item) {
  if (in < 0) return -1;
  const std::int64_t out = pool::output_size(in, kernel, stride, padding, dilation, ceil_mode);
  if (out < 1) {
    throw ConfigError(str_cat(at, "the window (", dilation * (kernel - 1) + 1,
                              ") is larger than the ", dim_name, " of the padded input (",
                              in + 2 * padding, "): the previous layer outputs ", item.describe()));
  }
  return out;
}

/// Checks `layer`'s own fields (not its fit with the previous layer).
void check_fields(const SequentialLayerConfig& layer, std::size_t i) {
  const std::string_view type = layer_type(layer);
  const std::string at = where(i, type);
  std::visit(
      [&](const auto& c) {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, LinearConfig>) {
          if (c.d_input < 1) throw ConfigError(str_cat(at, "d_input must be >= 1, got ", c.d_input));
          if (c.d_output < 1) {
            throw ConfigError(str_cat(at, "d_output must be >= 1, got ", c.d_output));
          }
          try {
            (void)c.initializer.sampling(c.d_input, c.d_output);
          } catch (const ConfigError& e) {
            throw ConfigError(str_cat(at, "initializer: ", e.what()));
          }
        } else if constexpr (std::is_same_v<C, DropoutConfig>) {
          if (!(c.prob >= 0.0 && c.prob <= 1.0)) {
            throw ConfigError(str_cat(at, "prob must be in [0, 1], got ", c.prob));
          }
        } else if constexpr (std::is_same_v<C, LeakyReluConfig>) {
          if (!std::isfinite(c.negative_slope)) {
            throw ConfigError(str_cat(at, "negative_slope must be finite, got ", c.negative_slope));
          }
        } else if constexpr (std::is_same_v<C, Reshape>) {
          at_layer(i, type, "Reshape", [&] { c.check(); });
          if (c.shape.size() > 3) {
            throw ConfigError(str_cat(at, "shape must have 1 to 3 dims (activations are ",
                                      "[batch_size] plus 1 to 3 dims), got ",
                                      detail::dims_string(c.shape)));
          }
        } else if constexpr (std::is_same_v<C, Flatten>) {
          at_layer(i, type, "Flatten", [&] { c.check(); });
        } else if constexpr (std::is_same_v<C, Conv2dConfig>) {
          at_layer(i, type, "Conv2dConfig", [&] {
            const char* op = "Conv2dConfig::init";
            check_conv_config(op, c.channels[0], c.channels[1], c.groups);
            check_positive(op, "kernel_size", c.kernel_size);
            check_positive(op, "stride", c.stride);
            check_positive(op, "dilation", c.dilation);
            c.padding.resolve(op, c.kernel_size, c.stride, c.dilation);
          });
          try {
            (void)c.initializer.sampling(c.channels[0] / c.groups * c.kernel_size[0] * c.kernel_size[1],
                                         c.channels[1] * c.kernel_size[0] * c.kernel_size[1]);
          } catch (const ConfigError& e) {
            throw ConfigError(str_cat(at, "initializer: ", e.what()));
          }
        } else if constexpr (std::is_same_v<C, Conv1dConfig>) {
          at_layer(i, type, "Conv1dConfig", [&] {
            const char* op = "Conv1dConfig::init";
            check_conv_config(op, c.channels[0], c.channels[1], c.groups);
            check_positive<1>(op, "kernel_size", {c.kernel_size});
            check_positive<1>(op, "stride", {c.stride});
            check_positive<1>(op, "dilation", {c.dilation});
            c.padding.resolve(op, {c.kernel_size}, {c.stride}, {c.dilation});
          });
          try {
            (void)c.initializer.sampling(c.channels[0] / c.groups * c.kernel_size,
                                         c.channels[1] * c.kernel_size);
          } catch (const ConfigError& e) {
            throw ConfigError(str_cat(at, "initializer: ", e.what()));
          }
        } else if constexpr (std::is_same_v<C, MaxPool2dConfig>) {
          try {
            (void)c.init();
          } catch (const ConfigError& e) {
            throw ConfigError(
                replace_all(at + strip_config_name(e.what(), "MaxPool2dConfig"), "strides", "stride"));
          }
        } else if constexpr (std::is_same_v<C, AvgPool2dConfig>) {
          try {
            (void)c.init();
          } catch (const ConfigError& e) {
            throw ConfigError(
                replace_all(at + strip_config_name(e.what(), "AvgPool2dConfig"), "strides", "stride"));
          }
        } else if constexpr (std::is_same_v<C, AdaptiveAvgPool2dConfig>) {
          at_layer(i, type, "AdaptiveAvgPool2dConfig", [&] { (void)c.init(); });
        } else if constexpr (std::is_same_v<C, BatchNormConfig>) {
          if (c.num_features < 1) {
            throw ConfigError(str_cat(at, "num_features must be >= 1, got ", c.num_features));
          }
          if (!(c.epsilon >= 0.0) || !std::isfinite(c.epsilon)) {
            throw ConfigError(str_cat(at, "epsilon must be finite and >= 0, got ", c.epsilon));
          }
          if (!(c.momentum >= 0.0 && c.momentum <= 1.0)) {
            throw ConfigError(str_cat(at, "momentum must be in [0, 1], got ", c.momentum));
          }
        } else if constexpr (std::is_same_v<C, LayerNormConfig>) {
          if (c.d_model < 1) throw ConfigError(str_cat(at, "d_model must be >= 1, got ", c.d_model));
          if (!(c.epsilon >= 0.0) || !std::isfinite(c.epsilon)) {
            throw ConfigError(str_cat(at, "epsilon must be finite and >= 0, got ", c.epsilon));
          }
        }
      },
      layer);
}

/// The items after `layer` given the items before it. Throws ConfigError naming the layer.
Item propagate(const SequentialLayerConfig& layer, std::size_t i, const Item& in) {
  const std::string_view type = layer_type(layer);
  const std::string at = where(i, type);
  return std::visit(
      [&](const auto& c) -> Item {
        using C = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<C, LinearConfig>) {
          const auto features = in.last_dim();
          if (features && *features != c.d_input) {
            throw ConfigError(str_cat(at, "d_input is ", c.d_input,
                                      " but the previous layer outputs ", *features,
                                      in.dims && in.dims->size() > 1
                                          ? str_cat(" (", in.describe(), ")")
                                          : std::string()));
          }
          Item out = in;
          if (out.dims) {
            if (out.dims->empty()) out.dims->push_back(-1);
            out.dims->back() = c.d_output;
          } else {
            out.last = c.d_output;
          }
          return out;
        } else if constexpr (std::is_same_v<C, Reshape>) {
          Dims dims = c.shape;
          const auto count = in.dims ? product(*in.dims) : std::nullopt;
          std::int64_t known = 1;
          std::size_t inferred = dims.size();
          for (std::size_t d = 0; d < dims.size(); ++d) {
            if (dims[d] == -1) inferred = d; else known *= dims[d];
          }
          if (count) {
            if (inferred < dims.size()) {
              if (*count % known != 0) {
                throw ConfigError(str_cat(at, "shape ", detail::dims_string(c.shape),
                                          " does not divide the previous layer's ", in.describe(),
                                          " (", *count, " elements)"));
              }
              dims[inferred] = *count / known;
            } else if (known != *count) {
              throw ConfigError(str_cat(at, "shape ", detail::dims_string(c.shape), " has ", known,
                                        " elements but the previous layer outputs ",
                                        in.describe(), " (", *count, " elements)"));
            }
          }
          return Item{dims, std::nullopt};
        } else if constexpr (std::is_same_v<C, Flatten>) {
          if (!in.dims) {
            if (c.start_dim == 1 && c.end_dim == -1) return Item{Dims{-1}, std::nullopt};
            return Item{};
          }
          const std::size_t rank = in.dims->size() + 1;  // with the batch dim
          std::pair<std::size_t, std::size_t> range;
          try {
            range = c.resolve(rank);
          } catch (const ShapeError&) {
            throw ConfigError(str_cat(at, "start_dim ", c.start_dim, " and end_dim ", c.end_dim,
                                      " do not fit the previous layer's ", in.describe(),
                                      " (input rank ", rank, ")"));
          }
          Dims out;
          for (std::size_t d = 1; d < range.first; ++d) out.push_back((*in.dims)[d - 1]);
          Dims merged((*in.dims).begin() + static_cast<std::ptrdiff_t>(range.first - 1),
                      (*in.dims).begin() + static_cast<std::ptrdiff_t>(range.second));
          out.push_back(product(merged).value_or(-1));
          for (std::size_t d = range.second + 1; d < rank; ++d) out.push_back((*in.dims)[d - 1]);
          return Item{out, std::nullopt};
        } else if constexpr (std::is_same_v<C, Conv2dConfig>) {
          need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
          const auto [begin, end] =
              c.padding.resolve("Conv2dConfig::init", c.kernel_size, c.stride, c.dilation);
          Dims out{c.channels[1], -1, -1};
          if (in.dims) {
            const Dims& d = *in.dims;
            if (d[0] >= 0 && d[0] != c.channels[0]) {
              throw ConfigError(str_cat(at, "channels[0] is ", c.channels[0],
                                        " but the previous layer outputs ", in.describe(), " (",
                                        d[0], " channels)"));
            }
            out[1] = conv_out(d[1], c.kernel_size[0], c.stride[0], begin[0] + end[0],
                              c.dilation[0], at, "height", in);
            out[2] = conv_out(d[2], c.kernel_size[1], c.stride[1], begin[1] + end[1],
                              c.dilation[1], at, "width", in);
          }
          return Item{out, std::nullopt};
        } else if constexpr (std::is_same_v<C, Conv1dConfig>) {
          need_item_rank(in, 2, at, "[batch_size, channels, length]");
          const auto [begin, end] =
              c.padding.resolve("Conv1dConfig::init", {c.kernel_size}, {c.stride}, {c.dilation});
          Dims out{c.channels[1], -1};
          if (in.dims) {
            const Dims& d = *in.dims;
            if (d[0] >= 0 && d[0] != c.channels[0]) {
              throw ConfigError(str_cat(at, "channels[0] is ", c.channels[0],
                                        " but the previous layer outputs ", in.describe(), " (",
                                        d[0], " channels)"));
            }
            out[1] = conv_out(d[1], c.kernel_size, c.stride, begin[0] + end[0], c.dilation, at,
                              "length", in);
          }
          return Item{out, std::nullopt};
        } else if constexpr (std::is_same_v<C, MaxPool2dConfig> ||
                             std::is_same_v<C, AvgPool2dConfig>) {
          need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
          if (!in.dims) return Item{Dims{-1, -1, -1}, std::nullopt};
          std::array<std::int64_t, 2> dilation{1, 1};
          if constexpr (std::is_same_v<C, MaxPool2dConfig>) dilation = c.dilation;
          const Dims& d = *in.dims;
          return Item{Dims{d[0],
                           pool_out(d[1], c.kernel_size[0], c.strides[0], c.padding[0],
                                    dilation[0], c.ceil_mode, at, "height", in),
                           pool_out(d[2], c.kernel_size[1], c.strides[1], c.padding[1],
                                    dilation[1], c.ceil_mode, at, "width", in)},
                      std::nullopt};
        } else if constexpr (std::is_same_v<C, AdaptiveAvgPool2dConfig>) {
          need_item_rank(in, 3, at, "[batch_size, channels, height, width]");
          return Item{Dims{in.dims ? (*in.dims)[0] : -1, c.output_size[0], c.output_size[1]},
                      std::nullopt};
        } else if constexpr (std::is_same_v<C, BatchNormConfig>) {
          if (in.dims && (in.dims->empty() || in.dims->size() > 3)) {
            throw ConfigError(str_cat(at, "expects input [batch_size, num_features, ...] (items of "
                                          "rank 1 to 3) but the previous layer outputs ",
                                      in.describe()));
          }
          if (in.dims && (*in.dims)[0] >= 0 && (*in.dims)[0] != c.num_features) {
            throw ConfigError(str_cat(at, "num_features is ", c.num_features,
                                      " but the previous layer outputs ", in.describe(), " (",
                                      (*in.dims)[0], " features in dim 1)"));
          }
          return in;  // items of unknown rank: dim 1 is unknown (the last dim may not be it)
        } else if constexpr (std::is_same_v<C, LayerNormConfig>) {
          const auto features = in.last_dim();
          if (features && *features != c.d_model) {
            throw ConfigError(str_cat(at, "d_model is ", c.d_model,
                                      " but the previous layer outputs ", in.describe()));
          }
          return in;
        } else {
          return in;  // activations and dropout keep the shape
        }
      },
      layer);
}

}  // namespace

namespace detail {

void throw_sequential_rank(std::string_view expected, std::size_t rank, const Shape& got) {
  throw ShapeError(str_cat("expected input ", expected, " (rank ", rank, "), got ", got,
                           rank > got.rank() ? "; add a reshape layer before it" : ""));
}

std::size_t sequential_reshape_rank(const Reshape& r, const Shape& input) {
  r.check();
  const std::size_t rank = r.shape.size() + 1;
  if (rank < 2 || rank > 4) {
    throw ShapeError(str_cat("shape ", dims_string(r.shape), " gives rank-", rank,
                             " outputs (Sequential supports ranks 2 to 4), input ", input));
  }
  return rank;
}

std::size_t sequential_flatten_rank(const Flatten& f, const Shape& input) {
  const auto [start, end] = f.resolve(input.rank());
  return input.rank() - (end - start);
}

}  // namespace detail

std::string_view layer_type(const SequentialLayerConfig& layer) {
  return kSequentialLayerTypes[layer.index()];
}

namespace {
/// Fields, then shapes from `input` (nullopt: unknown), layer by layer; the items after each.
std::vector<Item> follow(const std::vector<SequentialLayerConfig>& layers, Item item) {
  std::vector<Item> out;
  out.reserve(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    check_fields(layers[i], i);
    item = propagate(layers[i], i, item);
    out.push_back(item);
  }
  return out;
}
}  // namespace

void SequentialConfig::validate() const { (void)follow(layers, Item{}); }

std::vector<std::int64_t> SequentialConfig::output_item_shape(
    const std::vector<std::int64_t>& item) const {
  for (auto d : item) {
    if (d < 1) {
      throw ConfigError(str_cat("SequentialConfig::output_item_shape: item dims must be >= 1, got ",
                                detail::dims_string(item)));
    }
  }
  if (item.empty() || item.size() > 3) {
    throw ConfigError(str_cat("SequentialConfig::output_item_shape: items have 1 to 3 dims, got ",
                              detail::dims_string(item)));
  }
  const auto items = follow(layers, Item{item, std::nullopt});
  if (items.empty()) return item;
  const Item& last = items.back();
  return last.dims ? *last.dims : Dims{};
}

std::vector<std::optional<std::vector<std::int64_t>>> SequentialConfig::item_shapes(
    const std::optional<std::vector<std::int64_t>>& input) const {
  std::vector<std::optional<Dims>> out;
  for (const Item& item : follow(layers, Item{input, std::nullopt})) out.push_back(item.dims);
  return out;
}

std::optional<std::int64_t> SequentialConfig::input_item_size() const {
  for (const auto& layer : layers) {
    if (const auto* linear = std::get_if<LinearConfig>(&layer)) return linear->d_input;
    if (const auto* reshape = std::get_if<Reshape>(&layer)) {
      std::int64_t n = 1;
      for (auto d : reshape->shape) {
        if (d < 1) return std::nullopt;
        n *= d;
      }
      return n;
    }
    const bool keeps_shape = std::holds_alternative<DropoutConfig>(layer) ||
                             std::holds_alternative<Relu>(layer) ||
                             std::holds_alternative<Gelu>(layer) ||
                             std::holds_alternative<Sigmoid>(layer) ||
                             std::holds_alternative<Tanh>(layer) ||
                             std::holds_alternative<LeakyReluConfig>(layer) ||
                             std::holds_alternative<Silu>(layer);
    if (!keeps_shape) return std::nullopt;
  }
  return std::nullopt;
}

Json SequentialConfig::to_json() const {
  Json list = Json::array();
  for (const auto& layer : layers) {
    Json j = Json::object();
    std::visit(
        [&](const auto& c) {
          using C = std::decay_t<decltype(c)>;
          if constexpr (config::IsConfig<C>) {
            j = c.to_json();
            if constexpr (std::is_same_v<C, Conv2dConfig> || std::is_same_v<C, Conv1dConfig>) {
              config_padding_to_spec(j);
            } else if constexpr (std::is_same_v<C, MaxPool2dConfig> ||
                                 std::is_same_v<C, AvgPool2dConfig>) {
              rename_field(j, "strides", "stride");
            }
          } else if constexpr (std::is_same_v<C, Gelu>) {
            j["approximate"] = c.approximate;
          } else if constexpr (std::is_same_v<C, Reshape>) {
            j["shape"] = c.shape;
          } else if constexpr (std::is_same_v<C, Flatten>) {
            j["start_dim"] = c.start_dim;
            j["end_dim"] = c.end_dim;
          }
        },
        layer);
    j["type"] = std::string(layer_type(layer));
    list.push_back(std::move(j));
  }
  return Json{{"layers", std::move(list)}};
}

SequentialConfig SequentialConfig::from_json(const Json& j) {
  config::check_object(j, "SequentialConfig", {"layers"});
  auto it = j.find("layers");
  if (it == j.end()) {
    throw ConfigError("SequentialConfig: missing required field \"layers\"");
  }
  if (!it->is_array()) {
    throw ConfigError(
        str_cat("SequentialConfig.layers: expected an array, got ", config::describe(*it)));
  }
  SequentialConfig out;
  out.layers.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) out.layers.push_back(parse_layer((*it)[i], i));
  out.validate();
  return out;
}

SequentialConfig SequentialConfig::from_json_string(std::string_view text) {
  return from_json(config::parse(text, "JSON string"));
}

void SequentialConfig::save(const std::string& path) const {
  io::write_file_atomic(path, to_json_string() + "\n", "SequentialConfig::save");
}

SequentialConfig SequentialConfig::load(const std::string& path) {
  const std::string text = io::read_file(path, "SequentialConfig::load");
  const std::string name = str_cat("\"", path, "\"");
  try {
    return from_json(config::parse(text, name));
  } catch (const ConfigError& e) {
    if (std::string_view(e.what()).rfind(name, 0) == 0) throw;
    throw ConfigError(str_cat(name, ": ", e.what()));
  }
}

}  // namespace kiln::nn
