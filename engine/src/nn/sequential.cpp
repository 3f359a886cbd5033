// SequentialConfig: the JSON spec of nn::Sequential, its validation and its error messages.
#include "kiln/nn/sequential.hpp"

#include <cmath>

#include "kiln/core/io.hpp"

namespace kiln::nn {
namespace {

using Json = config::Json;

constexpr const char* kTypes = "linear, dropout, relu, gelu, sigmoid, tanh, leaky_relu, silu";

std::string where(std::size_t index, std::string_view type) {
  return str_cat("SequentialConfig: layers[", index, "] (", type, "): ");
}

/// "LinearConfig: missing ..." -> "missing ...", "LinearConfig.bias: ..." -> "bias: ...":
/// the layer's position already names the config.
std::string strip_config_name(std::string_view message, std::string_view config_name) {
  if (message.rfind(config_name, 0) == 0) {
    message.remove_prefix(config_name.size());
    if (message.rfind(": ", 0) == 0) {
      message.remove_prefix(2);
    } else if (message.rfind(".", 0) == 0) {
      message.remove_prefix(1);
    }
  }
  return std::string(message);
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

/// A layer without fields: anything besides "type" is an error.
void no_fields(const Json& body, std::size_t index, std::string_view type) {
  if (!body.empty()) {
    throw ConfigError(str_cat(where(index, type), "unknown field \"", body.begin().key(), "\" (",
                              type, " takes no fields)"));
  }
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
                              "]: missing required field \"type\" (one of: ", kTypes, ")"));
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
  throw ConfigError(str_cat("SequentialConfig: layers[", index, "]: unknown layer type \"", type,
                            "\" (types: ", kTypes, ")"));
}

}  // namespace

std::string_view layer_type(const SequentialLayerConfig& layer) {
  static constexpr std::string_view names[] = {"linear",  "dropout", "relu",       "gelu",
                                               "sigmoid", "tanh",    "leaky_relu", "silu"};
  return names[layer.index()];
}

void SequentialConfig::validate() const {
  std::optional<std::int64_t> features;  // output of the last Linear so far
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string at = where(i, layer_type(layers[i]));
    if (const auto* linear = std::get_if<LinearConfig>(&layers[i])) {
      if (linear->d_input < 1) {
        throw ConfigError(str_cat(at, "d_input must be >= 1, got ", linear->d_input));
      }
      if (linear->d_output < 1) {
        throw ConfigError(str_cat(at, "d_output must be >= 1, got ", linear->d_output));
      }
      if (features && linear->d_input != *features) {
        throw ConfigError(str_cat(at, "d_input is ", linear->d_input,
                                  " but the previous layer outputs ", *features));
      }
      try {
        (void)linear->initializer.sampling(linear->d_input, linear->d_output);
      } catch (const ConfigError& e) {
        throw ConfigError(str_cat(at, "initializer: ", e.what()));
      }
      features = linear->d_output;
    } else if (const auto* dropout = std::get_if<DropoutConfig>(&layers[i])) {
      if (!(dropout->prob >= 0.0 && dropout->prob <= 1.0)) {
        throw ConfigError(str_cat(at, "prob must be in [0, 1], got ", dropout->prob));
      }
    } else if (const auto* leaky = std::get_if<LeakyReluConfig>(&layers[i])) {
      if (!std::isfinite(leaky->negative_slope)) {
        throw ConfigError(
            str_cat(at, "negative_slope must be finite, got ", leaky->negative_slope));
      }
    }
  }
}

Json SequentialConfig::to_json() const {
  Json list = Json::array();
  for (const auto& layer : layers) {
    Json j = Json::object();
    std::visit(
        [&](const auto& c) {
          using C = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<C, LinearConfig> || std::is_same_v<C, DropoutConfig> ||
                        std::is_same_v<C, LeakyReluConfig>) {
            j = c.to_json();
          } else if constexpr (std::is_same_v<C, Gelu>) {
            j["approximate"] = c.approximate;
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
