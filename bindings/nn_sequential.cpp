// Models in JS: the Embind class RawModel over nn::Sequential<AD> (Autodiff<Cpu>; Cpu in
// kiln-dl/inference's engine, js_tensor.hpp) built from the
// C++ JSON spec (snake_case; bindings/js/nn.ts translates the package's camelCase), its
// forward in training and inference mode, records (SafeTensors bytes with PyTorch's keys),
// parameters and the summary; plus the tensor helpers of train_common.hpp.
#include <emscripten/bind.h>

#include <cmath>
#include <map>
#include <set>

#include "kiln/nn/embedding.hpp"
#include "kiln/record/recorder.hpp"
#include "config_js.hpp"
#include "module_params.hpp"
#include "train_common.hpp"

using emscripten::val;

namespace kiln_js {

// ---------------------------------------------------------------- tensor helpers

Activation activation_from(Prim p) {
  switch (p.shape().rank()) {
    case 2: return kiln::Tensor<AD, 2>(FloatPrim(std::move(p)));
    case 3: return kiln::Tensor<AD, 3>(FloatPrim(std::move(p)));
    case 4: return kiln::Tensor<AD, 4>(FloatPrim(std::move(p)));
    case 5: return kiln::Tensor<AD, 5>(FloatPrim(std::move(p)));
    default:
      kiln::throw_error<kiln::ShapeError>("model input: expected a tensor of rank 2 to 5 ",
                                          "([batch_size, ...]), got ", p.shape());
  }
}

JsTensor js_from_activation(const Activation& a) {
  return std::visit([](const auto& t) { return JsTensor(t.primitive()); }, a);
}

#if KILN_JS_AUTODIFF
JsTensor js_from_activation(const InferenceActivation& a) {
  return std::visit([](const auto& t) { return JsTensor(Prim(t.primitive())); }, a);
}
#endif

Activation activation_from_js(const JsTensor& t, const char* op) {
  check_dtype(op, t, kiln::DType::F32);
  const FloatPrim v = op_input(t);
  switch (t.shape().rank()) {
    case 2: return kiln::Tensor<AD, 2>(v);
    case 3: return kiln::Tensor<AD, 3>(v);
    case 4: return kiln::Tensor<AD, 4>(v);
    case 5: return kiln::Tensor<AD, 5>(v);
    default:
      kiln::throw_error<kiln::ShapeError>(
          op, ": expected input [batch_size, ...] of rank 2 to 5, got ", t.shape());
  }
}

val float32_array_from(const Prim& p) {
  const auto n = static_cast<std::size_t>(p.num_elements());
  if (n == 0) return val::global("Float32Array").new_(0);
  return val::global("Float32Array").new_(emscripten::typed_memory_view(n, host_values<float>(p, "Sequential.forward")));
}

Prim primitive_from_typed(const val& data, const kiln::Shape& shape, kiln::DType dtype,
                                     const char* op, const char* what) {
  const char* js_type = dtype == kiln::DType::F32 ? "Float32Array" : "Int32Array";
  if (!val::global(js_type)["prototype"].call<bool>("isPrototypeOf", data)) {
    kiln::throw_error<kiln::TypeError>(op, ": ", what, " must be a ", js_type, ", got ",
                                       data.typeOf().as<std::string>() == "object"
                                           ? data["constructor"]["name"].as<std::string>()
                                           : data.typeOf().as<std::string>());
  }
  const auto length = data["length"].as<double>();
  if (length != static_cast<double>(shape.num_elements())) {
    kiln::throw_error<kiln::ShapeError>(op, ": ", what, " has ", length, " values, shape ", shape,
                                        " needs ", shape.num_elements());
  }
  return primitive_from_js(data, shape, dtype);
}

namespace {

/// A single layer's record view: the layer's own keys ("weight", not "0.weight").
struct SingleLayerView {
  Model seq;
  template <class V>
  void visit(V& visitor, const std::string& prefix = "") const {
    kiln::module::visit_field(visitor, prefix, seq.layers.at(0));
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& prefix = "") {
    kiln::module::visit_field_mut(visitor, prefix, seq.layers.at(0));
  }
};

ModelState& state_of(const JsModel& m) {
  if (!m.state) kiln::throw_error<kiln::StateError>("Sequential: the model was disposed");
  return *m.state;
}

/// new RawModel from the C++ spec ({"layers": [...]}, SequentialConfig's JSON) as a JS value
/// (config_js.hpp); seed < 0: the generator as it is.
JsModel model_create(const val& spec, double seed, bool single) {
  return guarded([&] {
    // The limits SequentialConfig::from_json_string reads text with (no array longer than
    // max_layers, refused while the value is read).
    kiln::config::ParseLimits limits;
    limits.max_array_size = kiln::nn::SequentialConfig::max_layers;
    limits.array_limit_name = "SequentialConfig::max_layers";
    auto config = kiln::nn::SequentialConfig::from_value(config_from_js(spec, "JSON string", limits));
    if (single && config.layers.size() != 1) {
      kiln::throw_error<kiln::ConfigError>("layer: expected exactly one layer");
    }
    if (seed >= 0) {
      if (std::floor(seed) != seed || seed > 9007199254740991.0) {
        kiln::throw_error<kiln::ValueError>("sequential: seed must be an integer >= 0, got ", seed);
      }
      AD::seed(static_cast<std::uint64_t>(seed));
    }
    auto state = std::make_shared<ModelState>();
    state->model = config.init<AD>();
    state->config = std::move(config);
    state->single = single;
    return JsModel{std::move(state)};
  });
}

/// A new model with the layers of `parts` in order (kiln.nn.sequential([layer, ...])):
/// shares their parameters' values (copy-on-write: the parts are not changed by training).
JsModel model_concat(val parts) {
  return guarded([&] {
    auto state = std::make_shared<ModelState>();
    const auto n = parts["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const JsModel part = parts[i].as<JsModel>();
      const ModelState& s = state_of(part);
      for (const auto& l : s.config.layers) state->config.layers.push_back(l);
      for (const auto& l : s.model.layers) state->model.layers.push_back(l);
    }
    state->config.validate();
    return JsModel{std::move(state)};
  });
}

/// x, or (an int32 x for a model whose first layer is an embedding) its indices as the float
/// activation Sequential passes between layers, exact for |index| < 2^24 (the embedding checks
/// each against its table, whose rows are fewer).
JsTensor indices_as_activation(const ModelState& s, const JsTensor& x) {
  if (x.dtype() != kiln::DType::I32 || s.model.layers.empty() ||
      !s.model.layers[0].holds<kiln::nn::Embedding<AD>>()) {
    return x;
  }
  const Prim& p = x.primitive();
  const auto* v = host_values<std::int32_t>(p, "Sequential.forward");
  for (std::int64_t i = 0; i < p.num_elements(); ++i) {
    if (v[i] >= (1 << 24) || v[i] <= -(1 << 24)) {
      kiln::throw_error<kiln::IndexError>("Sequential.forward: embedding index ", v[i],
                                          " is too large (indices must be below 2^24)");
    }
  }
  return JsTensor(InnerOps::cast(p, kiln::DType::F32));
}

JsTensor model_forward(const JsModel& m, const JsTensor& x) {
  return guarded([&] {
    ModelState& s = state_of(m);
    Activation input = activation_from_js(indices_as_activation(s, x), "Sequential.forward");
#if KILN_JS_AUTODIFF
    if (!s.training) {
      const InferenceModel inference = s.model.valid();
      InferenceActivation in = std::visit(
          [](const auto& t) -> InferenceActivation { return t.inner(); }, input);
      return js_from_activation(inference.forward_any(std::move(in)));
    }
    Activation out = s.model.forward_any(std::move(input));
    if (!grad_enabled()) {
      return std::visit([](const auto& t) { return JsTensor(Prim(t.primitive().primitive)); },
                        out);
    }
    return js_from_activation(out);
#else
    // The model is on the inner backend already (Burn's inference): the same forward in
    // either mode (dropout is the identity on a backend without autodiff).
    return js_from_activation(s.model.forward_any(std::move(input)));
#endif
  });
}

double model_num_params(const JsModel& m) {
  return guarded([&] { return static_cast<double>(state_of(m).model.num_params()); });
}

std::string model_config_json(const JsModel& m) {
  return guarded([&] { return state_of(m).config.to_value().dump(); });
}

/// model_config_json's value as a JS object (config_to_js: no JSON text, so no serializer in
/// a page that reads `model.config`).
emscripten::val model_config_value(const JsModel& m) {
  return guarded([&] { return config_to_js(state_of(m).config.to_value()); });
}

std::string model_describe(const JsModel& m) {
  return guarded([&] {
    return kiln::str_cat(state_of(m).model);
  });
}

std::string dims_text(const std::optional<std::vector<std::int64_t>>& dims) {
  if (!dims) return "[batch_size, ...]";
  std::string out = "[batch_size";
  for (auto d : *dims) out += d < 0 ? ", ?" : ", " + std::to_string(d);
  return out + "]";
}

/// The summary's data: {rows: [[index, type, output shape, params], ...], input (shape text
/// or null), total, trainable}; output shapes as far as the spec fixes them, from
/// `input_item` when given, else from flat items of the size a first linear or reshape
/// takes. bindings/js/nn.ts formats the table.
val model_summary(const JsModel& m, val input_item) {
  return guarded([&] {
    const ModelState& s = state_of(m);
    std::optional<std::vector<std::int64_t>> item;
    if (!input_item.isUndefined() && !input_item.isNull()) {
      item = ints_from_js(input_item, "Sequential.summary", "inputShape");
      (void)s.config.output_item_shape(*item);  // errors name the layer
    } else if (const auto size = s.config.input_item_size()) {
      item = std::vector<std::int64_t>{*size};
    }
    const auto shapes = s.config.item_shapes(item);
    val rows = val::array();
    std::int64_t trainable = 0, total = 0;
    for (std::size_t i = 0; i < s.model.layers.size(); ++i) {
      std::int64_t params = 0;
      auto count = [&](const std::string&, const auto& p) {
        params += p.num_elements();
        total += p.num_elements();
        if (p.is_require_grad()) trainable += p.num_elements();
      };
      kiln::module::visit_field(count, std::to_string(i), s.model.layers[i]);
      val row = val::array();
      row.call<void>("push", static_cast<double>(i));
      row.call<void>("push", std::string(Model::type_of(s.model.layers[i])));
      row.call<void>("push", dims_text(shapes[i]));
      row.call<void>("push", static_cast<double>(params));
      rows.call<void>("push", row);
    }
    val out = val::object();
    out.set("rows", rows);
    out.set("input", item ? val(dims_text(item)) : val::null());
    out.set("total", static_cast<double>(total));
    out.set("trainable", static_cast<double>(trainable));
    return out;
  });
}

val model_save(const JsModel& m) {
  return guarded([&] {
    const ModelState& s = state_of(m);
    const auto bytes = s.single ? kiln::record::SafetensorsRecorder{}.to_bytes(SingleLayerView{s.model})
                                : kiln::record::SafetensorsRecorder{}.to_bytes(s.model);
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
  });
}

void model_load(const JsModel& m, val bytes) {
  guarded([&] {
    ModelState& s = state_of(m);
    if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
      kiln::throw_error<kiln::TypeError>(
          "Sequential.loadSafetensors: bytes must be a Uint8Array, got ",
          bytes.typeOf().as<std::string>());
    }
    std::vector<std::uint8_t> data(bytes["length"].as<std::size_t>());
    if (!data.empty()) {
      val(emscripten::typed_memory_view(data.size(), data.data())).call<void>("set", bytes);
    }
    const kiln::record::SafetensorsRecorder recorder;
    if (s.single) {
      s.model = recorder.from_bytes(SingleLayerView{s.model}, data, AD::Device{}).seq;
    } else {
      s.model = recorder.from_bytes(s.model, data, AD::Device{});
    }
  });
}

void model_set_training(const JsModel& m, bool training) {
  guarded([&] { state_of(m).training = training; });
}
bool model_training(const JsModel& m) {
  return guarded([&] { return state_of(m).training; });
}

/// {key: RawTensor}: the parameters (float: tracked leaves of this model's current values;
/// num_batches_tracked: int32), keys as in the records.
val model_parameters(const JsModel& m) {
  return guarded([&] {
    const ModelState& s = state_of(m);
    val out = val::object();
    auto add = [&](const std::string& path, const auto& p) {
      const std::string key = s.single && path.rfind("0.", 0) == 0 ? path.substr(2) : path;
      out.set(key, from_typed(p.val()));
    };
    s.model.visit(add);
    return out;
  });
}

/// The per-item input size the spec fixes (first linear's d_input, first reshape's element
/// count), or -1.
double model_input_item_size(const JsModel& m) {
  return guarded([&] {
    const auto n = state_of(m).config.input_item_size();
    return n ? static_cast<double>(*n) : -1.0;
  });
}

/// The per-item output shape for items of shape `item`. Throws ConfigError naming the layer.
val model_output_item_shape(const JsModel& m, val item) {
  return guarded([&] {
    const auto dims = state_of(m).config.output_item_shape(
        ints_from_js(item, "Sequential.outputShape", "inputShape"));
    val out = val::array();
    for (auto d : dims) out.call<void>("push", static_cast<double>(d));
    return out;
  });
}

/// The record key of a parameter path (a single layer's keys have no "0.").
std::string key_of(const ModelState& s, const std::string& path) {
  return s.single && path.rfind("0.", 0) == 0 ? path.substr(2) : path;
}

/// {key: {id, requiresGrad, float}}: each parameter's ParamId (the optimizer's state key),
/// whether it is trainable, and whether it is a float parameter (running statistics are;
/// num_batches_tracked is not), keys as in the records.
val model_parameter_info(const JsModel& m) {
  return guarded([&] {
    const ModelState& s = state_of(m);
    val out = val::object();
    auto add = [&](const std::string& path, const auto& p) {
      using P = std::remove_cvref_t<decltype(p)>;
      val info = val::object();
      info.set("id", static_cast<double>(p.id().value()));
      info.set("requiresGrad", p.is_require_grad());
      info.set("float", std::is_same_v<typename P::Value::Kind, kiln::Float>);
      out.set(key_of(s, path), info);
    };
    s.model.visit(add);
    return out;
  });
}

/// Replaces parameters by the tensors of `values` ({key: RawTensor}), keeping their ParamIds
/// and flags (Module.loadStateDict, an optimizer's write-back, slot.set). Every entry is
/// checked (key known, dtype and shape equal to the parameter's) before any is set: on error
/// nothing changes. `op` names the caller.
void model_set_parameters(const JsModel& m, val values, const std::string& op) {
  guarded([&] {
    ModelState& s = state_of(m);
    const val keys = val::global("Object").call<val>("keys", values);
    const auto n = keys["length"].as<std::size_t>();
    std::map<std::string, JsTensor> given;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string key = keys[i].as<std::string>();
      JsTensor t = values[key].as<JsTensor>();
      // PyTorch's scalar buffers (num_batches_tracked) are rank 0; Kiln's are [1].
      if (t.shape().rank() == 0) {
        const std::int64_t one[1] = {1};
        t = t.is_float() ? JsTensor(FloatPrim(InnerOps::reshape(t.primitive(), one)))
                         : JsTensor(InnerOps::reshape(t.primitive(), one));
      }
      given.emplace(key, std::move(t));
    }
    std::set<std::string> known;
    auto check = [&](const std::string& path, const auto& p) {
      using P = std::remove_cvref_t<decltype(p)>;
      using K = typename P::Value::Kind;
      const std::string key = key_of(s, path);
      known.insert(key);
      const auto it = given.find(key);
      if (it == given.end()) return;
      const JsTensor& t = it->second;
      if (t.dtype() != K::dtype) {
        kiln::throw_error<kiln::DTypeError>(op, ": \"", key, "\" is ", js_dtype_name(K::dtype),
                                            ", got a ", js_dtype_name(t.dtype()), " tensor");
      }
      if (!(t.shape() == p.shape())) {
        kiln::throw_error<kiln::ShapeError>(op, ": \"", key, "\" has shape ", p.shape(), ", got ",
                                            t.shape());
      }
    };
    s.model.visit(check);
    for (const auto& entry : given) {
      if (!known.count(entry.first)) {
        kiln::throw_error<kiln::ValueError>(op, ": the layer has no parameter \"", entry.first,
                                            '"');
      }
    }
    auto set = [&](const std::string& path, auto& p) {
      using P = std::remove_cvref_t<decltype(p)>;
      using T = typename P::Value;
      const auto it = given.find(key_of(s, path));
      if (it == given.end()) return;
      if constexpr (std::is_same_v<typename T::Kind, kiln::Float>) {
        p.set(T(FloatPrim(it->second.primitive())));
      } else {
        p.set(T(it->second.primitive()));
      }
    };
    s.model.visit_mut(set);
  });
}

/// Freezes (false) or unfreezes the float parameter `key`, or every one when key is empty.
void model_set_require_grad(const JsModel& m, const std::string& key, bool require) {
  guarded([&] {
    ModelState& s = state_of(m);
    bool found = key.empty();
    auto set = [&](const std::string& path, auto& p) {
      using P = std::remove_cvref_t<decltype(p)>;
      if constexpr (std::is_same_v<typename P::Value::Kind, kiln::Float>) {
        if (!key.empty() && key_of(s, path) != key) return;
        found = true;
        p.set_require_grad(require);
      }
    };
    s.model.visit_mut(set);
    if (!found) {
      kiln::throw_error<kiln::ValueError>("requiresGrad: the layer has no float parameter \"", key,
                                          '"');
    }
  });
}

/// saveSafetensors({dtype}): float parameters as F32, F16 or BF16 ('float32' | 'float16' |
/// 'bfloat16'); num_batches_tracked stays I64.
val model_save_as(const JsModel& m, const std::string& dtype) {
  return guarded([&] {
    const ModelState& s = state_of(m);
    const auto target = safetensors_float_dtype(dtype, "Sequential.saveSafetensors");
    const kiln::record::SafetensorsRecorder recorder;
    auto file = s.single ? recorder.to_record(SingleLayerView{s.model}) : recorder.to_record(s.model);
    const auto bytes = safetensors_bytes_as(std::move(file), target);
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
  });
}

/// A deep copy (Module.clone()): same spec, values and modes, new ParamIds (so an
/// optimizer's state does not follow the copy). The values are shared copy-on-write.
JsModel model_clone_new(const JsModel& m) {
  return guarded([&] {
    auto state = std::make_shared<ModelState>(state_of(m));
    auto renew = [](const std::string&, auto& p) {
      using P = std::remove_cvref_t<decltype(p)>;
      if (p.is_initialized()) p = P(p.val(), p.is_require_grad());
    };
    state->model.visit_mut(renew);
    return JsModel{std::move(state)};
  });
}

void model_dispose(JsModel& m) { m.state.reset(); }

/// The layer types of the engine's registry, in registry order (the order of the types in
/// SequentialConfig's messages): [{type: 'linear', fields: [{name: 'd_input', required:
/// true}, {name: 'd_output', required: true}, {name: 'bias', required: false}, ...]}, ...],
/// names in the spec's snake_case. bindings/js/nn.ts builds kiln.nn's layer functions from it.
val layer_types() {
  return guarded([] {
    val out = val::array();
    for (const auto& entry : kiln::nn::SequentialRegistry::instance().entries()) {
      val fields = val::array();
      for (const auto& f : entry.fields) {
        val field = val::object();
        field.set("name", f.name);
        field.set("required", f.required);
        fields.call<void>("push", field);
      }
      val type = val::object();
      type.set("type", entry.type);
      type.set("fields", fields);
      out.call<void>("push", type);
    }
    return out;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_nn_sequential) {
  using namespace kiln_js;
  emscripten::class_<JsModel>("RawModel")
      .function("forward", &model_forward)
      .function("numParams", &model_num_params)
      .function("configJson", &model_config_json)
      .function("configValue", &model_config_value)
      .function("describe", &model_describe)
      .function("summary", &model_summary)
      .function("saveSafetensors", &model_save)
      .function("loadSafetensors", &model_load)
      .function("setTraining", &model_set_training)
      .function("training", &model_training)
      .function("parameters", &model_parameters)
      .function("inputItemSize", &model_input_item_size)
      .function("outputItemShape", &model_output_item_shape)
      .function("parameterInfo", &model_parameter_info)
      .function("setParameters", &model_set_parameters)
      .function("setRequireGrad", &model_set_require_grad)
      .function("saveSafetensorsAs", &model_save_as)
      .function("cloneNew", &model_clone_new)
      .function("release", &model_dispose);
  emscripten::function("modelCreate", &model_create);
  emscripten::function("modelConcat", &model_concat);
  emscripten::function("layerTypes", &layer_types);
}
