// The engine side of JS modules (see module_params.hpp): the Embind classes RawParam (one
// kiln.Param: the C++ module::Param with its ParamId) and RawParamList (the named parameters
// of a JS module, built-in layers' ones included, gathered for one optimizer step: the step
// itself, optimizerStepParams, is in train_optim.cpp), and the SafeTensors encoding of named tensors (a JS module's saveSafetensors / loadSafetensors).
#include "module_params.hpp"

#include <emscripten/bind.h>

#include <map>
#include <set>
#include <span>
#include <unordered_map>

#include "kiln/record/recorder.hpp"
#include "kiln/record/safetensors.hpp"

using emscripten::val;

namespace kiln_js {

namespace {
template <std::size_t D>
AnyParam make_param(const FloatPrim& value, bool require_grad) {
  return AnyParam(FloatParam<D>(kiln::Tensor<AD, D>(FloatPrim(primitive_of(value))), require_grad));
}
}  // namespace

AnyParam any_param_from(const JsTensor& value, bool require_grad, const char* op) {
  if (value.dtype() != kiln::DType::F32) {
    kiln::throw_error<kiln::DTypeError>(op, ": a parameter must be a float32 tensor, got ",
                                        js_dtype_name(value.dtype()));
  }
  switch (value.shape().rank()) {
    case 1: return make_param<1>(value.value, require_grad);
    case 2: return make_param<2>(value.value, require_grad);
    case 3: return make_param<3>(value.value, require_grad);
    case 4: return make_param<4>(value.value, require_grad);
    case 5: return make_param<5>(value.value, require_grad);
    case 6: return make_param<6>(value.value, require_grad);
    default:
      kiln::throw_error<kiln::RankError>(
          op, ": a parameter has rank 1 to ", kMaxParamRank, ", got shape ", value.shape(),
          value.shape().rank() == 0 ? " (a scalar parameter: use shape [1])" : "");
  }
}

AnyParam any_param_with_value(const AnyParam& p, const JsTensor& value, const char* op) {
  return std::visit(
      [&](const auto& param) -> AnyParam {
        using P = std::remove_cvref_t<decltype(param)>;
        constexpr std::size_t D = P::Value::rank;
        if (value.dtype() != kiln::DType::F32) {
          kiln::throw_error<kiln::DTypeError>(op, ": expected a float32 tensor of shape ",
                                              param.shape(), ", got ",
                                              js_dtype_name(value.dtype()));
        }
        if (!(value.shape() == param.shape())) {
          kiln::throw_error<kiln::ShapeError>(op, ": expected shape ", param.shape(), ", got ",
                                              value.shape());
        }
        return AnyParam(param.with_value(kiln::Tensor<AD, D>(FloatPrim(value.primitive()))));
      },
      p);
}

JsTensor any_param_tensor(const AnyParam& p) {
  return std::visit([](const auto& param) { return JsTensor(param.val().primitive()); }, p);
}

kiln::module::ParamId any_param_id(const AnyParam& p) {
  return std::visit([](const auto& param) { return param.id(); }, p);
}

bool any_param_require_grad(const AnyParam& p) {
  return std::visit([](const auto& param) { return param.is_require_grad(); }, p);
}

#if KILN_JS_AUTODIFF
kiln::optim::GradientsParams<AD> list_gradients(JsParamList& list, const Gradients& grads) {
  kiln::optim::GradientsParams<AD> out;
  list.has_grad.assign(list.list.entries.size(), false);
  for (std::size_t i = 0; i < list.list.entries.size(); ++i) {
    const ParamOrigin& origin = list.origins[i];
    std::visit(
        [&](const auto& param) {
          using P = std::remove_cvref_t<decltype(param)>;
          constexpr std::size_t D = P::Value::rank;
          if (!param.is_require_grad() || !param.is_initialized()) return;
          const FloatPrim& node = origin.source ? *origin.source : param.val().primitive();
          auto g = AD::FloatOps::grad(node, grads);
          if (!g) return;
          if (!(g->shape() == param.shape())) {
            kiln::throw_error<kiln::ShapeError>("Optimizer.step: the gradient of \"",
                                                list.list.entries[i].name, "\" has shape ",
                                                g->shape(), ", the parameter ", param.shape());
          }
          out.insert(param.id(), kiln::Tensor<Inner, D>(std::move(*g)));
          list.has_grad[i] = true;
        },
        list.list.entries[i].param);
  }
  return out;
}
#endif

void write_back(JsParamList& list, ParamList updated) {
  // Built-in models: their parameters by id, replaced in one visit per model.
  std::unordered_map<ModelState*, std::unordered_map<kiln::module::ParamId, const AnyParam*>> by_model;
  for (std::size_t i = 0; i < updated.entries.size(); ++i) {
    ParamOrigin& origin = list.origins[i];
    if (origin.param) {
      *origin.param = updated.entries[i].param;
    } else if (origin.model) {
      by_model[origin.model.get()][any_param_id(updated.entries[i].param)] = &updated.entries[i].param;
    }
  }
  for (auto& entry : by_model) {
    ModelState* model = entry.first;
    const auto& params = entry.second;
    auto replace = [&](const std::string&, auto& param) {
      using P = std::remove_cvref_t<decltype(param)>;
      using T = typename P::Value;
      if constexpr (std::is_same_v<typename T::Kind, kiln::Float> && T::rank <= kMaxParamRank) {
        const auto it = params.find(param.id());
        if (it == params.end()) return;
        param = std::get<FloatParam<T::rank>>(*it->second);
      }
    };
    model->model.visit_mut(replace);
  }
  list.list = std::move(updated);
}

namespace {

AnyParam& param_of(const JsParam& p) {
  if (!p.param) kiln::throw_error<kiln::StateError>("Param: the parameter was disposed");
  return *p.param;
}

/// new RawParam: `value`'s values (not its graph), a fresh ParamId.
JsParam param_create(const JsTensor& value, bool require_grad) {
  return guarded([&] {
    return JsParam{std::make_shared<AnyParam>(any_param_from(value, require_grad, "Param"))};
  });
}

JsTensor param_tensor(const JsParam& p) {
  return guarded([&] { return any_param_tensor(param_of(p)); });
}

double param_id(const JsParam& p) {
  return guarded([&] { return static_cast<double>(any_param_id(param_of(p)).value()); });
}

bool param_require_grad(const JsParam& p) {
  return guarded([&] { return any_param_require_grad(param_of(p)); });
}

/// Freezes (false) or unfreezes the parameter; its tensor becomes a new leaf (or untracked).
void param_set_require_grad(const JsParam& p, bool require) {
  guarded([&] {
    std::visit([&](auto& param) { param.set_require_grad(require); }, param_of(p));
  });
}

/// Replaces the value, keeping id and flag. `op` names the caller in errors.
void param_assign(const JsParam& p, const JsTensor& value, const std::string& op) {
  guarded([&] { param_of(p) = any_param_with_value(param_of(p), value, op.c_str()); });
}

/// A new parameter with the same value and flag and a fresh ParamId (Module.clone()).
JsParam param_clone_new(const JsParam& p) {
  return guarded([&] {
    const AnyParam& src = param_of(p);
    return JsParam{std::make_shared<AnyParam>(
        any_param_from(any_param_tensor(src), any_param_require_grad(src), "Param.clone"))};
  });
}

void param_release(JsParam& p) { p.param.reset(); }

// ---------------------------------------------------------------- RawParamList

JsParamList list_create() { return JsParamList{}; }

/// A kiln.Param under `name`.
void list_add_param(JsParamList& l, const std::string& name, const JsParam& p) {
  guarded([&] {
    l.list.entries.push_back(ParamList::Entry{name, param_of(p)});
    l.origins.push_back(ParamOrigin{p.param, std::nullopt, nullptr});
  });
}

/// A plain tensor under `name`: `holder` keeps its ParamId (optimizer state) across steps and
/// takes its value now; the gradient is looked up by `value`'s graph node.
void list_add_tensor(JsParamList& l, const std::string& name, const JsParam& holder,
                     const JsTensor& value) {
  guarded([&] {
    AnyParam& h = param_of(holder);
    h = any_param_with_value(h, value, "Optimizer.step");
    l.list.entries.push_back(ParamList::Entry{name, h});
    l.origins.push_back(ParamOrigin{holder.param, value.value, nullptr});
  });
}

/// Every float parameter of a built-in model, named `prefix` + its record key.
void list_add_model(JsParamList& l, const std::string& prefix, const JsModel& m) {
  guarded([&] {
    if (!m.state)
      kiln::throw_error<kiln::StateError>("Module: the layer \"", prefix, "\" was disposed");
    const ModelState& s = *m.state;
    auto add = [&](const std::string& path, const auto& param) {
      using P = std::remove_cvref_t<decltype(param)>;
      using T = typename P::Value;
      if constexpr (std::is_same_v<typename T::Kind, kiln::Float> && T::rank <= kMaxParamRank) {
        if (!param.is_initialized()) return;
        const std::string key = s.single && path.rfind("0.", 0) == 0 ? path.substr(2) : path;
        l.list.entries.push_back(
            ParamList::Entry{prefix.empty() ? key : prefix + "." + key, AnyParam(param)});
        l.origins.push_back(ParamOrigin{nullptr, std::nullopt, m.state});
      }
    };
    s.model.visit(add);
  });
}

double list_size(const JsParamList& l) { return static_cast<double>(l.list.entries.size()); }

val list_names(const JsParamList& l) {
  return guarded([&] {
    val out = val::array();
    for (const auto& e : l.list.entries) out.call<void>("push", e.name);
    return out;
  });
}

/// [bool, ...]: per entry, whether the last step found its gradient (and so updated it).
val list_stepped(const JsParamList& l) {
  return guarded([&] {
    val out = val::array();
    for (std::size_t i = 0; i < l.list.entries.size(); ++i) {
      out.call<void>("push", i < l.has_grad.size() && l.has_grad[i]);
    }
    return out;
  });
}

void list_release(JsParamList& l) {
  l.list.entries.clear();
  l.origins.clear();
  l.has_grad.clear();
}

// ---------------------------------------------------------------- SafeTensors of named tensors

kiln::record::SafetensorsDType float_dtype(const std::string& dtype, const char* op) {
  if (dtype == "float32") return kiln::record::SafetensorsDType::F32;
  if (dtype == "float16") return kiln::record::SafetensorsDType::F16;
  if (dtype == "bfloat16") return kiln::record::SafetensorsDType::BF16;
  kiln::throw_error<kiln::ValueError>(
      op, ": dtype must be 'float32', 'float16' or 'bfloat16', got '", dtype, "'");
}

}  // namespace

/// The SafeTensors bytes of `file` with its F32 entries re-encoded as `dtype` (F16 / BF16).
std::vector<std::uint8_t> safetensors_bytes_as(kiln::record::SafetensorsFile file,
                                               kiln::record::SafetensorsDType dtype) {
  if (dtype != kiln::record::SafetensorsDType::F32) {
    for (auto& [key, t] : file.tensors) {
      if (t.dtype != kiln::record::SafetensorsDType::F32) continue;
      t = kiln::record::SafetensorsTensor::from_data(t.to_data(kiln::DType::F32), dtype);
    }
  }
  return kiln::record::write_safetensors(file);
}

/// The parsed dtype option of saveSafetensors ('float32' | 'float16' | 'bfloat16').
kiln::record::SafetensorsDType safetensors_float_dtype(const std::string& dtype, const char* op) {
  return float_dtype(dtype, op);
}

namespace {

/// [[name, RawTensor], ...] -> SafeTensors bytes: float32 as `dtype`, int32 as I64 (as
/// PyTorch's int64 buffers), bool as BOOL.
val safetensors_encode(val entries, const std::string& dtype) {
  return guarded([&] {
    const char* op = "Module.saveSafetensors";
    const auto target = float_dtype(dtype, op);
    kiln::record::SafetensorsFile file;
    const auto n = entries["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const std::string name = entries[i][0].as<std::string>();
      const JsTensor t = entries[i][1].as<JsTensor>();
      const kiln::TensorData data = InnerOps::into_data(t.primitive());
      if (!file.tensors
               .emplace(name, kiln::record::detail::encode_param(data, kiln::record::Precision::Full))
               .second) {
        kiln::throw_error<kiln::ValueError>(op, ": two tensors have the name \"", name, "\"");
      }
    }
    const auto bytes = safetensors_bytes_as(std::move(file), target);
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
  });
}

/// SafeTensors bytes -> [[name, RawTensor], ...] in key order: F32/F16/BF16 as float32,
/// I64/I32/U8 as int32 (I64 range-checked), BOOL as bool.
val safetensors_decode(val bytes) {
  return guarded([&] {
    const char* op = "Module.loadSafetensors";
    if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
      kiln::throw_error<kiln::TypeError>(op, ": bytes must be a Uint8Array, got ",
                                         bytes.typeOf().as<std::string>());
    }
    std::vector<std::uint8_t> data(bytes["length"].as<std::size_t>());
    if (!data.empty()) val(emscripten::typed_memory_view(data.size(), data.data())).call<void>("set", bytes);
    const auto file = kiln::record::read_safetensors(data, "bytes");
    // Decode everything first: a malformed entry throws before any tensor is made.
    std::vector<std::pair<std::string, kiln::TensorData>> decoded;
    for (const auto& [key, t] : file.tensors) {
      using SD = kiln::record::SafetensorsDType;
      const kiln::DType to = t.dtype == SD::F32 || t.dtype == SD::F16 || t.dtype == SD::BF16
                                 ? kiln::DType::F32
                             : t.dtype == SD::Bool ? kiln::DType::Bool
                                                   : kiln::DType::I32;
      decoded.emplace_back(key, t.to_data(to));
    }
    val out = val::array();
    for (auto& [key, d] : decoded) {
      val pair = val::array();
      pair.call<void>("push", key);
      pair.call<void>("push", val(JsTensor(InnerOps::from_data(d, d.dtype, InnerDevice{}))));
      out.call<void>("push", pair);
    }
    return out;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_module_params) {
  using namespace kiln_js;
  emscripten::class_<JsParam>("RawParam")
      .function("tensor", &param_tensor)
      .function("id", &param_id)
      .function("requiresGrad", &param_require_grad)
      .function("setRequiresGrad", &param_set_require_grad)
      .function("assign", &param_assign)
      .function("cloneNew", &param_clone_new)
      .function("release", &param_release);
  emscripten::class_<JsParamList>("RawParamList")
      .function("addParam", &list_add_param)
      .function("addTensor", &list_add_tensor)
      .function("addModel", &list_add_model)
      .function("size", &list_size)
      .function("names", &list_names)
      .function("stepped", &list_stepped)
      .function("release", &list_release);
  emscripten::function("paramCreate", &param_create);
  emscripten::function("paramListCreate", &list_create);
  emscripten::function("safetensorsEncode", &safetensors_encode);
  emscripten::function("safetensorsDecode", &safetensors_decode);
}
