// SequentialConfig: the JSON spec of nn::Sequential over the layer registry, its validation
// (each layer's config check(), then the per-item shape followed from layer to layer by the
// layers' own rules) and the helpers those rules share, with their error messages.
#include "kiln/nn/sequential.hpp"

#include "kiln/backend/pool_options.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/core/io.hpp"

namespace kiln::nn {

using Json = config::Value;
using Dims = std::vector<std::int64_t>;  // per-item dims; -1 where the spec does not fix one

// ---------------------------------------------------------------- helpers of the rules

std::string SequentialItem::describe() const {
  if (dims) return str_cat("items ", sequential::item_string(*dims));
  if (last) return str_cat("items [..., ", *last, "]");
  return "items of unknown shape";
}

namespace sequential {

std::string item_string(const Dims& dims) {
  std::string out = "[";
  for (std::size_t d = 0; d < dims.size(); ++d) {
    out += d ? ", " : "";
    out += dims[d] < 0 ? std::string("?") : std::to_string(dims[d]);
  }
  return out + "]";
}

std::optional<std::int64_t> product(const Dims& dims) {
  for (auto d : dims) {
    if (d < 0) return std::nullopt;
  }
  // An item past 2^31 - 1 elements can never be a tensor (a batch holds at least one).
  return checked::numel("SequentialConfig", dims, "items");
}

/// `at` without its trailing ": " (the op name of a LimitError).
static std::string_view op_of(std::string_view at) {
  if (at.size() >= 2 && at.substr(at.size() - 2) == ": ") at.remove_suffix(2);
  return at;
}

void need_item_rank(const SequentialItem& item, std::size_t rank, std::string_view at,
                    std::string_view expected_input) {
  if (item.dims && item.dims->size() != rank) {
    throw_error<ConfigError>(at, "expects input ", expected_input, " (items of rank ", rank,
                             ") but the previous layer outputs ", item.describe(),
                             rank > item.dims->size() ? "; add a reshape layer before it" : "");
  }
}

std::int64_t conv_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                      std::int64_t pad_total, std::int64_t dilation, std::string_view at,
                      std::string_view dim_name, const SequentialItem& item) {
  if (in < 0) return -1;
  const std::string_view op = op_of(at);
  const std::int64_t span =
      checked::add(op, checked::mul(op, dilation, checked::sub(op, kernel, 1, "kernel_size - 1"),
                                    str_cat("dilation · (kernel_size - 1) in the ", dim_name)),
                   1, str_cat("the dilated kernel's extent in the ", dim_name));
  const std::int64_t padded =
      checked::add(op, in, pad_total, str_cat("the padded input's ", dim_name));
  if (padded < span) {
    throw_error<ConfigError>(at, "the kernel (", span, " with dilation) is larger than the ",
                             dim_name, " of the padded input (", padded,
                             "): the previous layer outputs ", item.describe());
  }
  return (padded - span) / stride + 1;
}

std::int64_t pad_sum(std::int64_t begin, std::int64_t end, std::string_view at,
                     std::string_view dim_name) {
  return checked::add(op_of(at), begin, end, str_cat("the total padding of the ", dim_name));
}

std::int64_t pool_out(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                      std::int64_t padding, std::int64_t dilation, bool ceil_mode,
                      std::string_view at, std::string_view dim_name, const SequentialItem& item) {
  if (in < 0) return -1;
  const std::int64_t out =
      pool::output_size(in, kernel, stride, padding, dilation, ceil_mode, op_of(at));
  if (out < 1) {  // output_size checked these sums and products
    throw_error<ConfigError>(at, "the window (", dilation * (kernel - 1) + 1,
                             ") is larger than the ", dim_name, " of the padded input (",
                             in + 2 * padding, "): the previous layer outputs ", item.describe());
  }
  return out;
}

std::string where(std::size_t index, std::string_view type) {
  return str_cat("SequentialConfig: layers[", index, "] (", type, "): ");
}

std::string strip_config_name(std::string_view message, std::string_view config_name) {
  if (!config_name.empty() && message.rfind(config_name, 0) == 0) {
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

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

void known_fields(const Json& body, std::string_view at,
                  std::initializer_list<std::string_view> fields) {
  for (const std::string& key : body.keys()) {
    bool known = false;
    for (auto f : fields) known = known || f == key;
    if (!known) {
      std::string list;
      for (auto f : fields) list += str_cat(list.empty() ? "" : ", ", f);
      throw_error<ConfigError>(at, "unknown field \"", key, "\" (fields: ", list, ")");
    }
  }
}

std::int64_t read_int(const Json& v, std::string_view at, std::string_view field) {
  if (!v.is_number_integer()) {
    throw_error<ConfigError>(at, field, ": expected an integer, got ", config::describe(v));
  }
  return v.get_int();
}

void widen_pair(Json& body, const char* field) {
  Json* v = body.find(field);
  if (v && v->is_number_integer()) *v = Json::array({*v, *v});
}

void spec_padding_to_config(Json& body, std::string_view at, bool two_d) {
  Json* found = body.find("padding");
  if (!found) return;
  Json& p = *found;
  if (p.is_string("valid")) {
    p = "Valid";
  } else if (p.is_string("same")) {
    p = "Same";
  } else if (two_d && p.is_number_integer()) {
    p = Json::object({{"Explicit", Json::array({p, p})}});
  } else if (two_d && p.is_array() && p.size() == 2 && p[0].is_number_integer() &&
             p[1].is_number_integer()) {
    p = Json::object({{"Explicit", p}});
  } else if (!two_d && p.is_number_integer()) {
    p = Json::object({{"Explicit", p}});
  } else {
    throw_error<ConfigError>(at, "padding: expected \"valid\", \"same\" or ",
                             two_d ? "[height, width] (or one integer)" : "an integer", ", got ",
                             config::describe(p));
  }
}

void config_padding_to_spec(Json& j) {
  Json* found = j.find("padding");
  if (!found) return;
  Json& p = *found;
  if (p.is_string("Valid")) {
    p = "valid";
  } else if (p.is_string("Same")) {
    p = "same";
  } else if (const Json* sizes = p.find("Explicit")) {
    p = Json(*sizes);
  }
}

void throw_rank(std::string_view expected, std::size_t rank, const Shape& got) {
  throw_error<ShapeError>("expected input ", expected, " (rank ", rank, "), got ", got,
                          rank > got.rank() ? "; add a reshape layer before it" : "");
}

std::string_view rank_dims(std::size_t rank) {
  switch (rank) {
    case 2: return "[batch_size, features]";
    case 3: return "[batch_size, channels, length]";
    case 4: return "[batch_size, channels, height, width]";
    default: return "[batch_size, channels, depth, height, width]";
  }
}

void check_output_rank(const Shape& out, const Shape& in) {
  if (out.rank() < 2 || out.rank() > 5) {
    throw_error<ShapeError>("gives rank-", out.rank(), " outputs ", out,
                            " (Sequential supports ranks 2 to 5), input ", in);
  }
}

std::string_view layer_type_name(TypeKey layer) {
  const std::string* name = SequentialRegistry::instance().layer_name(layer);
  return name ? std::string_view(*name) : std::string_view("unregistered");
}

void (*find_from_inner(TypeKey layer, TypeKey target))() {
  for (const auto& e : SequentialRegistry::instance().entries()) {
    auto it = e.from_inner.find({layer, target});
    if (it != e.from_inner.end()) return it->second;
  }
  return nullptr;
}

}  // namespace sequential

// ---------------------------------------------------------------- the registry

namespace sequential {

SequentialLayerEntry make_entry(std::string_view type, const EntryHooks& hooks,
                                std::initializer_list<BackendHooks> backends) {
  SequentialLayerEntry e;
  e.type = std::string(type);
  e.fields = hooks.fields();
  e.config_type = hooks.config_type;
  e.parse = hooks.parse;
  e.to_json = hooks.to_json;
  e.check = hooks.check;
  e.item_shape = hooks.item_shape;
  e.input_item_size = hooks.input_item_size;
  for (const BackendHooks& b : backends) {
    e.builders[b.backend] = b.build;
    e.layer_types.push_back(b.layer_type);
    if (b.from_inner != nullptr) e.from_inner[{b.inner_layer, b.backend}] = b.from_inner;
  }
  return e;
}

bool register_entry(std::string_view type, const EntryHooks& hooks,
                    std::initializer_list<BackendHooks> backends) {
  return SequentialRegistry::instance().add(make_entry(type, hooks, backends));
}

}  // namespace sequential

bool SequentialRegistry::add(SequentialLayerEntry entry) {
  if (find(entry.type)) {
    throw_error<ConfigError>("SequentialRegistry::add: layer type \"", entry.type,
                             "\" is registered twice");
  }
  entries_.push_back(std::move(entry));
  return true;
}

const SequentialLayerEntry* SequentialRegistry::find(std::string_view type) const {
  for (const auto& e : entries_) {
    if (e.type == type) return &e;
  }
  return nullptr;
}

const SequentialLayerEntry* SequentialRegistry::find(TypeKey config_type) const {
  for (const auto& e : entries_) {
    if (e.config_type == config_type) return &e;
  }
  return nullptr;
}

const std::string* SequentialRegistry::layer_name(TypeKey layer_type) const {
  for (const auto& e : entries_) {
    for (const auto& t : e.layer_types) {
      if (t == layer_type) return &e.type;
    }
  }
  return nullptr;
}

std::string SequentialRegistry::type_list() const {
  std::string out;
  for (const auto& e : entries_) out += str_cat(out.empty() ? "" : ", ", e.type);
  return out;
}

const SequentialLayerEntry& sequential_entry(const SequentialLayerConfig& layer) {
  if (const auto* e = SequentialRegistry::instance().find(layer.type())) return *e;
  throw_error<ConfigError>("SequentialConfig: config type ", layer.type().name(),
                           " is not a registered layer type (KILN_REGISTER_LAYER)");
}

std::string_view layer_type(const SequentialLayerConfig& layer) {
  return sequential_entry(layer).type;
}

// ---------------------------------------------------------------- SequentialConfig

namespace {

/// config::parse's limits for a spec: no array longer than max_layers, checked while the
/// text is read (a million layers never become a million Values).
config::ParseLimits spec_limits() {
  config::ParseLimits limits;
  limits.max_array_size = SequentialConfig::max_layers;
  limits.array_limit_name = "SequentialConfig::max_layers";
  return limits;
}

SequentialLayerConfig parse_layer(const Json& j, std::size_t index) {
  const auto& registry = SequentialRegistry::instance();
  if (!j.is_object()) {
    throw_error<ConfigError>("SequentialConfig: layers[", index,
                             "]: expected an object such as {\"type\": \"relu\"}, got ",
                             config::describe(j));
  }
  const Json* it = j.find("type");
  if (!it) {
    throw_error<ConfigError>("SequentialConfig: layers[", index,
                             "]: missing required field \"type\" (one of: ", registry.type_list(),
                             ")");
  }
  if (!it->is_string()) {
    throw_error<ConfigError>("SequentialConfig: layers[", index, "].type: expected a string, got ",
                             config::describe(*it));
  }
  const std::string type = it->get_string();
  const SequentialLayerEntry* entry = registry.find(type);
  if (!entry) {
    throw_error<ConfigError>("SequentialConfig: layers[", index, "]: unknown layer type \"", type,
                             "\" (types: ", registry.type_list(), ")");
  }
  Json body = j;
  body.erase("type");
  return entry->parse(body, sequential::where(index, type), type);
}

/// Each layer's check(), then its shape rule from `item`; the items after each layer.
std::vector<SequentialItem> follow(const std::vector<SequentialLayerConfig>& layers,
                                   SequentialItem item) {
  std::vector<SequentialItem> out;
  out.reserve(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const SequentialLayerEntry& entry = sequential_entry(layers[i]);
    const std::string at = sequential::where(i, entry.type);
    entry.check(layers[i], at);
    item = entry.item_shape(layers[i], item, at);
    out.push_back(item);
  }
  return out;
}

}  // namespace

void SequentialConfig::validate() const { (void)follow(layers, SequentialItem{}); }

std::vector<std::int64_t> SequentialConfig::output_item_shape(
    const std::vector<std::int64_t>& item) const {
  for (auto d : item) {
    if (d < 1) {
      throw_error<ConfigError>("SequentialConfig::output_item_shape: item dims must be >= 1, got ",
                               detail::dims_string(item));
    }
  }
  if (item.empty() || item.size() > 4) {
    throw_error<ConfigError>("SequentialConfig::output_item_shape: items have 1 to 4 dims, got ",
                             detail::dims_string(item));
  }
  const auto items = follow(layers, SequentialItem{item, std::nullopt});
  if (items.empty()) return item;
  const SequentialItem& last = items.back();
  return last.dims ? *last.dims : Dims{};
}

std::vector<std::optional<std::vector<std::int64_t>>> SequentialConfig::item_shapes(
    const std::optional<std::vector<std::int64_t>>& input) const {
  std::vector<std::optional<Dims>> out;
  for (const SequentialItem& item : follow(layers, SequentialItem{input, std::nullopt})) {
    out.push_back(item.dims);
  }
  return out;
}

std::optional<std::int64_t> SequentialConfig::input_item_size() const {
  for (const auto& layer : layers) {
    const SequentialInputSize size = sequential_entry(layer).input_item_size(layer);
    switch (size.kind) {
      case SequentialInputSize::Kind::Fixed: return size.size;
      case SequentialInputSize::Kind::Opaque: return std::nullopt;
      case SequentialInputSize::Kind::Transparent: break;
    }
  }
  return std::nullopt;
}

Json SequentialConfig::to_value() const {
  Json list = Json::array();
  for (const auto& layer : layers) {
    const SequentialLayerEntry& entry = sequential_entry(layer);
    Json j = entry.to_json(layer);
    j["type"] = entry.type;
    list.push_back(std::move(j));
  }
  return Json::object({{"layers", std::move(list)}});
}

SequentialConfig SequentialConfig::from_value(const Json& j) {
  config::check_object(j, "SequentialConfig", {"layers"});
  const Json* it = j.find("layers");
  if (!it) {
    throw_error<ConfigError>("SequentialConfig: missing required field \"layers\"");
  }
  if (!it->is_array()) {
    throw_error<ConfigError>("SequentialConfig.layers: expected an array, got ",
                             config::describe(*it));
  }
  if (it->size() > max_layers) {
    throw_error<LimitError>("SequentialConfig.layers: ", it->size(), " layers exceed the limit of ",
                            max_layers, " (SequentialConfig::max_layers)");
  }
  SequentialConfig out;
  out.layers.reserve(it->size());
  for (std::size_t i = 0; i < it->size(); ++i) out.layers.push_back(parse_layer((*it)[i], i));
  out.validate();
  return out;
}

SequentialConfig SequentialConfig::from_json_string(std::string_view text) {
  return from_value(config::parse(text, "JSON string", spec_limits()));
}

void SequentialConfig::save(const std::string& path) const {
  io::write_file_atomic(path, to_json_string() + "\n", "SequentialConfig::save");
}

SequentialConfig SequentialConfig::load(const std::string& path) {
  return config::load_file<SequentialConfig>(path, "SequentialConfig::load", &from_value,
                                             spec_limits());
}

}  // namespace kiln::nn
