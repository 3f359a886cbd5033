#pragma once
/// The engine side of JS modules (bindings/js/module*.ts): a rank-erased list of named C++
/// parameters that is a kiln module (visit, visit_mut, map), so that the one optimizer code
/// path (kiln::optim::OptimizerAdaptor::step / stage, kiln::train::train_step's checks)
/// steps any JS model: a user module's kiln.Param objects, built-in layers' parameters (in
/// their RawModel, keeping their ParamIds) and plain tensors, all in one step.
///
///   ParamList list;                                  // or JsParamList (the Embind builder)
///   list.entries.push_back({"fc1.weight", AnyParam(FloatParam<2>(w))});
///   list = optimizer.step(lr, list, std::move(grads));  // OptimizerAdaptor: state by ParamId
///
/// Shared by bindings/module_params.cpp (the Embind classes RawParam and RawParamList),
/// bindings/nn_sequential.cpp and bindings/train_optim.cpp (the optimizer's step over a
/// list, where the optimizer templates are compiled).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/record/safetensors.hpp"
#include "train_common.hpp"

namespace kiln_js {

/// The highest rank of a JS parameter (kiln.Param): conv3d weights are rank 5.
inline constexpr std::size_t kMaxParamRank = 6;

template <std::size_t D>
using FloatParam = kiln::module::Param<kiln::Tensor<AD, D>>;

/// A float parameter of rank 1 to kMaxParamRank on Autodiff<Cpu> (rank-erased).
using AnyParam = std::variant<FloatParam<1>, FloatParam<2>, FloatParam<3>, FloatParam<4>,
                              FloatParam<5>, FloatParam<6>>;

/// A float parameter holding `value` (untracked copy of its primitive), rank from its shape.
/// Throws RankError naming `op` unless 1 <= rank <= kMaxParamRank, DTypeError unless f32.
AnyParam any_param_from(const JsTensor& value, bool require_grad, const char* op);
/// The same parameter (id, flag) with a new value of the same shape.
AnyParam any_param_with_value(const AnyParam& p, const JsTensor& value, const char* op);
/// The parameter's tensor as a JsTensor (a tracked leaf when it requires gradients).
JsTensor any_param_tensor(const AnyParam& p);
kiln::module::ParamId any_param_id(const AnyParam& p);
bool any_param_require_grad(const AnyParam& p);

/// Named float parameters as one kiln module: visit(visitor, prefix) calls
/// visitor("<prefix>.<name>", param) for each entry in order; map(mapper) returns the list
/// with each parameter mapped on the same backend (optimizer steps, no_grad).
struct ParamList {
  using kiln_module_tag = void;
  struct Entry {
    std::string name;
    AnyParam param;
  };
  std::vector<Entry> entries;

  template <class V>
  void visit(V& visitor, const std::string& prefix = "") const {
    for (const auto& e : entries) {
      kiln::module::visit_field(visitor, kiln::module::join_path(prefix, e.name), e.param);
    }
  }
  template <class V>
  void visit_mut(V& visitor, const std::string& prefix = "") {
    for (auto& e : entries) {
      kiln::module::visit_field_mut(visitor, kiln::module::join_path(prefix, e.name), e.param);
    }
  }
  /// The list with every parameter mapped. Same-backend mappers only (an optimizer step,
  /// no_grad): the list lives on Autodiff<Cpu>.
  template <class M>
  ParamList map(M& mapper) const {
    static_assert(std::is_same_v<typename M::template Target<AD>, AD>,
                  "ParamList::map: only mappers that keep the backend");
    ParamList out;
    out.entries.reserve(entries.size());
    for (const auto& e : entries) {
      out.entries.push_back(Entry{e.name, kiln::module::map_field(mapper, e.param)});
    }
    return out;
  }
  std::int64_t num_params() const {
    kiln::module::CountParams counter;
    visit(counter);
    return counter.count;
  }
};

/// The JS handle of one kiln.Param (Embind class "RawParam"): the C++ parameter, shared so
/// that a step writes the updated value where the JS Param reads it.
struct JsParam {
  std::shared_ptr<AnyParam> param;
};

/// Where an entry of a JsParamList came from, so a step can write its value back.
struct ParamOrigin {
  std::shared_ptr<AnyParam> param;          ///< a kiln.Param or a plain tensor's id holder
  std::optional<FloatPrim> source;          ///< plain tensor: the value its graph used
  std::shared_ptr<ModelState> model;        ///< a built-in layer's model (param null)
};

/// The Embind class "RawParamList": a ParamList being gathered from JS (addParam,
/// addTensor, addModel), the origin of each entry beside it.
struct JsParamList {
  ParamList list;
  std::vector<ParamOrigin> origins;
  /// Per entry: whether the last list_gradients found a gradient for it (what a step updates).
  std::vector<bool> has_grad;
};

#if KILN_JS_AUTODIFF  // training only: kiln-dl/inference's engine records no graph
/// The gradients in `grads` of the list's trainable entries, by ParamId (a plain tensor's by
/// the graph node of the value its forward used). `grads` is not changed.
/// Also records in list.has_grad which entries have one.
kiln::optim::GradientsParams<AD> list_gradients(JsParamList& list, const Gradients& grads);
#endif

/// Writes `updated` (the list after a step: same entries, same order) back to the origins:
/// kiln.Params and id holders take their new parameter, built-in models the parameters of
/// theirs with matching ids.
void write_back(JsParamList& list, ParamList updated);

#if KILN_JS_AUTODIFF
/// One optimizer step over the list at the schedule's next rate (train_optim.cpp, where the
/// optimizer templates are compiled): optimizer.step(module | tensors, grads). When `at` is
/// given, the step is guarded as kiln::train::train_step's (non-finite gradient or update:
/// NonFiniteError, nothing applied, schedule not advanced). Writes the updated values back.
/// Throws: as OptimizerAdaptor::step; then nothing is written back.
void optimizer_step_list(OptimizerState& optimizer, JsParamList& list,
                         kiln::optim::GradientsParams<AD> grads,
                         const kiln::train::StepPosition* at = nullptr);
#endif

/// The parsed dtype option of saveSafetensors: 'float32' | 'float16' | 'bfloat16'.
/// Throws ValueError naming `op` otherwise.
kiln::record::SafetensorsDType safetensors_float_dtype(const std::string& dtype, const char* op);
/// The bytes of `file` with its F32 entries re-encoded as `dtype` (F16 rounds to nearest even,
/// BF16 too); other entries unchanged.
std::vector<std::uint8_t> safetensors_bytes_as(kiln::record::SafetensorsFile file,
                                               kiln::record::SafetensorsDType dtype);

}  // namespace kiln_js
