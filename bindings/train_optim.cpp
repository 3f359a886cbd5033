// Optimizers and learning-rate schedules in JS: the Embind class RawOptimizer over the
// engine's OptimizerAdaptor<Sgd | Adam | AdamW | RmsProp, Autodiff<Cpu>> with a scheduler,
// the step of a Sequential with them (optimizer.step), and the Learner's guarded training
// step (kiln::train::train_step), so that these templates are compiled in this TU only.
// Configs arrive as JS values of the C++ configs' JSON (snake_case; config_js.hpp), made by
// bindings/js/train/ (TypeScript); JSON text is parsed only for a saved state's schedule.
#include <emscripten/bind.h>

#include <cmath>
#include <limits>

#include "kiln/optim/adam.hpp"
#include "kiln/optim/adamw.hpp"
#include "kiln/optim/optimizer.hpp"
#include "kiln/optim/rmsprop.hpp"
#include "kiln/optim/sgd.hpp"
#include "kiln/train/checkpoint.hpp"
#include "../engine/src/core/apart.hpp"  // call_apart (the bindings do not see engine/src)
#include "config_js.hpp"
#include "train_common.hpp"
#include "module_params.hpp"  // optimizer_step_list (module: JS modules, lists of tensors)

using emscripten::val;

namespace kiln_js {

struct OptimizerImpl {
  std::variant<kiln::optim::OptimizerAdaptor<kiln::optim::Sgd, AD>,
               kiln::optim::OptimizerAdaptor<kiln::optim::Adam, AD>,
               kiln::optim::OptimizerAdaptor<kiln::optim::AdamW, AD>,
               kiln::optim::OptimizerAdaptor<kiln::optim::RmsProp, AD>>
      optim;
};

using OptimVariant = decltype(OptimizerImpl::optim);

namespace {

using Json = kiln::config::Value;

/// `Config: field ...` -> `<op>: field ...`.
template <class C>
C parse(const Json& j, const char* op) {
  try {
    return C::from_value(j);
  } catch (const kiln::ConfigError& e) {
    kiln::throw_error<kiln::ConfigError>(op, ": ", without_cpp_prefix(e.what()));
  }
}

/// Runs `f` (a config's init()); its ConfigError is reworded for the JS caller: the C++
/// type it starts with dropped, `op` (if any) prefixed.
template <class F>
auto with_op(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const kiln::ConfigError& e) {
    if (*op == '\0') throw kiln::ConfigError(without_cpp_prefix(e.what()));
    kiln::throw_error<kiln::ConfigError>(op, ": ", without_cpp_prefix(e.what()));
  }
}

/// One kind's schedule (schedule_from_value), a function of its own so that the split engine's
/// initial module holds only the kinds a page's workload makes (call_apart: each kind's config
/// parsing and checks are several KB of code).
template <class Config>
void schedule_of(const Json& body, const char* op, const char* init_op, Schedule& out) {
  const auto c = parse<Config>(body, op);
  out.scheduler = with_op(init_op, [&] { return c.init(); });
}

/// One kind's optimizer (optimizer_create), out of line for the same reason.
template <class Config>
std::shared_ptr<OptimizerImpl> optimizer_of(const Json& j, const char* op) {
  return std::make_shared<OptimizerImpl>(OptimizerImpl{parse<Config>(j, op).template init<AD>()});
}

}  // namespace

Schedule schedule_from_json(const std::string& text) {
  return schedule_from_value(kiln::config::parse(text, "schedule"));
}

Schedule schedule_from_value(const Json& j) {
  Schedule out;
  if (j.is_number()) {
    const kiln::optim::ConstantLrSchedulerConfig c(j.get_double());
    out.scheduler = with_op("", [&] { return c.init(); });
    return out;
  }
  const Json* kind_value = j.find("kind");
  if (!kind_value || !kind_value->is_string()) {
    kiln::throw_error<kiln::ConfigError>("schedule: expected a number or {\"kind\": ...}, got ",
                                         kiln::config::describe(j));
  }
  const std::string kind = kind_value->get_string();
  Json body = j;
  body.erase("kind");
  namespace o = kiln::optim;
  using kiln::detail::call_apart;
  if (kind == "constant") {
    call_apart<&schedule_of<o::ConstantLrSchedulerConfig>>(body, "schedule.constant", "", out);
  } else if (kind == "step") {
    call_apart<&schedule_of<o::StepLrSchedulerConfig>>(body, "optim.schedule.step", "optim.schedule.step", out);
  } else if (kind == "exponential") {
    call_apart<&schedule_of<o::ExponentialLrSchedulerConfig>>(body, "optim.schedule.exponential",
                                                                "optim.schedule.exponential", out);
  } else if (kind == "linear") {
    call_apart<&schedule_of<o::LinearLrSchedulerConfig>>(body, "optim.schedule.linear", "optim.schedule.linear", out);
  } else if (kind == "cosine") {
    call_apart<&schedule_of<o::CosineAnnealingLrSchedulerConfig>>(body, "optim.schedule.cosine",
                                                                   "optim.schedule.cosine", out);
  } else if (kind == "noam") {
    call_apart<&schedule_of<o::NoamLrSchedulerConfig>>(body, "optim.schedule.noam", "optim.schedule.noam", out);
  } else if (kind == "one_cycle") {
    call_apart<&schedule_of<o::OneCycleLrSchedulerConfig>>(body, "optim.schedule.oneCycle",
                                                            "optim.schedule.oneCycle", out);
  } else {
    kiln::throw_error<kiln::ConfigError>(
        "schedule: unknown kind \"", kind,
        "\" (constant, step, exponential, linear, cosine, noam, one_cycle)");
  }
  return out;
}

void optimizer_step(OptimizerState& optimizer, ModelState& model,
                    kiln::optim::GradientsParams<AD> grads) {
  const double lr = optimizer.schedule.step();
  std::visit([&](auto& o) { model.model = o.step(lr, model.model, std::move(grads)); },
             optimizer.impl->optim);
  optimizer.last_lr = lr;
  ++optimizer.steps;
}

StepItem learner_step(OptimizerState& optimizer, ModelState& model,
                      const std::function<StepItem(const Model&)>& loss_fn,
                      const kiln::train::StepPosition& at) {
  Schedule schedule = optimizer.schedule;  // committed with the step
  const double lr = schedule.step();
  // train::train_step's loss-callback overload, with only the update (apply_checked_step)
  // inside the visit: the forward, the loss check, the backward and the gradients are one
  // copy for every optimizer kind instead of one per kind (issue 17: the initial module).
  StepItem item = loss_fn(std::as_const(model.model));
  kiln::train::detail::check_loss(static_cast<double>(item.loss.into_scalar()), at);
  auto grads = kiln::optim::GradientsParams<AD>::from_grads(item.loss.backward(), model.model);
  std::visit(
      [&](auto& o) {
        kiln::train::detail::apply_checked_step(model.model, o, lr, std::move(grads), at);
      },
      optimizer.impl->optim);
  optimizer.schedule = std::move(schedule);
  optimizer.last_lr = lr;
  ++optimizer.steps;
  return item;
}

#if defined(KILN_BACKEND_WGPU)  // the webgpu engine's Learner (train_learner.cpp)
StepItem learner_step_deferred(OptimizerState& optimizer, ModelState& model,
                               const std::function<StepItem(const Model&)>& loss_fn,
                               DeferredSteps& deferred, const kiln::train::StepPosition& at) {
  DeferredSteps::Counters before{optimizer.schedule, optimizer.last_lr, optimizer.steps};
  Schedule schedule = optimizer.schedule;  // committed with the step
  const double lr = schedule.step();
  StepItem item = std::visit(
      [&](auto& o) {
        return kiln::train::deferred_train_step(model.model, o, lr, loss_fn, deferred.guard, at);
      },
      optimizer.impl->optim);
  deferred.before.push_back(std::move(before));
  optimizer.schedule = std::move(schedule);
  optimizer.last_lr = lr;
  ++optimizer.steps;
  return item;
}

void learner_settle(OptimizerState& optimizer, DeferredSteps& deferred,
                    std::span<const float> status) {
  if (deferred.before.size() != deferred.guard.pending()) {
    kiln::throw_error<kiln::StateError>(
        "Learner: the optimizer was stepped while steps were pending");
  }
  const auto failure = std::visit(
      [&](auto& o) { return kiln::train::settle_deferred(o, deferred.guard, status); },
      optimizer.impl->optim);
  auto counters = std::move(deferred.before);
  deferred.before.clear();
  if (!failure) return;
  DeferredSteps::Counters& at_refusal = counters[failure->step];
  optimizer.schedule = std::move(at_refusal.schedule);
  optimizer.last_lr = at_refusal.last_lr;
  optimizer.steps = at_refusal.steps;
  kiln::train::detail::throw_refused_step(failure->at(), failure->what);
}

void optimizer_step_list_deferred(OptimizerState& optimizer, JsParamList& list,
                                  const Inner::FloatTensor& loss, kiln::optim::GradientsParams<AD> grads,
                                  DeferredSteps& deferred, const kiln::train::StepPosition& at) {
  DeferredSteps::Counters before{optimizer.schedule, optimizer.last_lr, optimizer.steps};
  Schedule schedule = optimizer.schedule;  // committed with the step
  const double lr = schedule.step();
  ParamList updated = list.list;
  std::visit(
      [&](auto& o) {
        kiln::train::deferred_step_with_grads(updated, o, lr, loss, std::move(grads), deferred.guard, at);
      },
      optimizer.impl->optim);
  write_back(list, std::move(updated));
  deferred.before.push_back(std::move(before));
  optimizer.schedule = std::move(schedule);
  optimizer.last_lr = lr;
  ++optimizer.steps;
}
#endif

// optimizer.step of a JS module or a list of tensors (module_params.hpp): the same
// OptimizerAdaptor step (state by ParamId) over a ParamList; guarded as train_step when `at`.
void optimizer_step_list(OptimizerState& optimizer, JsParamList& list,
                         kiln::optim::GradientsParams<AD> grads,
                         const kiln::train::StepPosition* at) {
  Schedule schedule = optimizer.schedule;  // committed with the step
  const double lr = schedule.step();
  ParamList updated = list.list;
  std::visit(
      [&](auto& o) {
        if (at != nullptr) {
          kiln::train::detail::apply_checked_step(updated, o, lr, std::move(grads), *at);
        } else {
          updated = o.step(lr, updated, std::move(grads));
        }
      },
      optimizer.impl->optim);
  write_back(list, std::move(updated));
  optimizer.schedule = std::move(schedule);
  optimizer.last_lr = lr;
  ++optimizer.steps;
}

namespace {

OptimizerState& state_of(const JsOptimizer& o) {
  if (!o.state) kiln::throw_error<kiln::StateError>("optimizer: it was disposed");
  return *o.state;
}

/// kind: "sgd" | "adam" | "adamW" | "rmsProp"; config: the C++ config as a JS value (its
/// JSON's tree, config_js.hpp); lr: a schedule (schedule_from_value) as a JS value.
JsOptimizer optimizer_create(const std::string& kind, const val& config, const val& lr) {
  return guarded([&] {
    namespace o = kiln::optim;
    const Json j = config_from_js(config, "optimizer");
    using kiln::detail::call_apart;
    std::shared_ptr<OptimizerImpl> impl;
    if (kind == "sgd") {
      impl = call_apart<&optimizer_of<o::SgdConfig>>(j, "optim.sgd");
    } else if (kind == "adam") {
      impl = call_apart<&optimizer_of<o::AdamConfig>>(j, "optim.adam");
    } else if (kind == "adamW") {
      impl = call_apart<&optimizer_of<o::AdamWConfig>>(j, "optim.adamW");
    } else if (kind == "rmsProp") {
      impl = call_apart<&optimizer_of<o::RmsPropConfig>>(j, "optim.rmsProp");
    } else {
      kiln::throw_error<kiln::ConfigError>("optim: unknown optimizer \"", kind, "\"");
    }
    auto state = std::make_shared<OptimizerState>();
    state->impl = std::move(impl);
    Json lr_spec;
    try {
      lr_spec = config_from_js(lr, "schedule");
      state->schedule = schedule_from_value(lr_spec);
    } catch (const kiln::ConfigError& e) {
      kiln::throw_error<kiln::ConfigError>("optim.", kind, ": lr: ", without_cpp_prefix(e.what()));
    }
    state->kind = kind;
    state->schedule_spec = std::move(lr_spec);
    state->last_lr = std::numeric_limits<double>::quiet_NaN();
    return JsOptimizer{std::move(state)};
  });
}

/// optimizer.step(model, grads): the model's parameters that have a gradient in `grads`
/// are updated (grads is not consumed: the JS Gradients stay usable).
void optimizer_step_js(const JsOptimizer& o, const JsModel& m, const Gradients& grads) {
  guarded([&] {
    if (!m.state) kiln::throw_error<kiln::StateError>("optimizer.step: the model was disposed");
    Gradients copy = grads;
    auto params = kiln::optim::GradientsParams<AD>::from_module(copy, m.state->model);
    optimizer_step(state_of(o), *m.state, std::move(params));
  });
}

double optimizer_last_lr(const JsOptimizer& o) {
  return guarded([&] { return state_of(o).last_lr; });
}
double optimizer_steps(const JsOptimizer& o) {
  return guarded([&] { return static_cast<double>(state_of(o).steps); });
}
void optimizer_release(JsOptimizer& o) { o.state.reset(); }

/// The first n rates of a schedule (kiln.optim.schedule.*(...).values(n)).
val schedule_values(const val& lr, double n) {
  return guarded([&] {
    if (!(n >= 0 && n <= 1e7) || std::floor(n) != n) {
      kiln::throw_error<kiln::ValueError>("schedule.values: n must be an integer in [0, 1e7], got ",
                                          n);
    }
    Schedule s = schedule_from_value(config_from_js(lr, "schedule"));
    val out = val::global("Float64Array").new_(static_cast<std::size_t>(n));
    try {
      for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) out.set(i, s.step());
    } catch (const kiln::StateError& e) {
      kiln::throw_error<kiln::StateError>("Schedule.values: ", without_cpp_prefix(e.what()));
    }
    return out;
  });
}


// ---------------------------------------------------------------- schedules (issue 15)

/// The momentum of each of the first n steps of a schedule (OneCycle's cycled momentum; nan
/// for the other schedules).
val schedule_momentums(const val& lr, double n) {
  return guarded([&] {
    if (!(n >= 0 && n <= 1e7) || std::floor(n) != n) {
      kiln::throw_error<kiln::ValueError>(
          "schedule.momentumValues: n must be an integer in [0, 1e7], got ", n);
    }
    Schedule s = schedule_from_value(config_from_js(lr, "schedule"));
    val out = val::global("Float64Array").new_(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) {
      (void)s.step();
      const auto* one_cycle = std::get_if<kiln::optim::OneCycleLrScheduler>(&s.scheduler);
      out.set(i, one_cycle ? one_cycle->momentum() : std::numeric_limits<double>::quiet_NaN());
    }
    return out;
  });
}

const char* schedule_kind(const Schedule& s) {
  static constexpr const char* names[] = {"constant", "step",   "exponential", "linear",
                                          "cosine",   "noam",   "oneCycle"};
  return names[s.scheduler.index()];
}

/// The optimizer's rate when it is constant; ConfigError naming `op` otherwise.
double constant_lr_of(const OptimizerState& o, const char* op) {
  const auto* constant = std::get_if<kiln::optim::ConstantLr>(&o.schedule.scheduler);
  if (constant == nullptr) {
    kiln::throw_error<kiln::ConfigError>(op, ": the optimizer's lr is a schedule (",
                                         schedule_kind(o.schedule),
                                         "); a metric-driven rate needs a constant lr (a number)");
  }
  kiln::optim::ConstantLr copy = *constant;
  return copy.step();
}

/// Replaces the optimizer's schedule by `spec` (schedule_from_value) from the next step on.
void set_schedule(OptimizerState& o, Json spec) {
  Schedule next = schedule_from_value(spec);
  o.schedule = std::move(next);
  o.schedule_spec = std::move(spec);
  o.schedule_start = o.steps;
}

Json constant_spec(double lr) { return Json::object({{"kind", "constant"}, {"lr", lr}}); }

void optimizer_set_schedule(const JsOptimizer& o, const val& lr) {
  guarded([&] { set_schedule(state_of(o), config_from_js(lr, "schedule")); });
}

std::string optimizer_schedule_kind(const JsOptimizer& o) {
  return guarded([&] { return std::string(schedule_kind(state_of(o).schedule)); });
}

/// A ReduceLROnPlateau, alone or driving an optimizer's (constant) rate.
struct JsPlateau {
  std::shared_ptr<kiln::optim::ReduceLrOnPlateau> plateau;
  std::shared_ptr<OptimizerState> optimizer;  ///< null when standalone
};

JsPlateau& plateau_of(JsPlateau& p, const char* op) {
  if (!p.plateau) kiln::throw_error<kiln::StateError>(op, ": the scheduler was disposed");
  return p;
}

/// config: ReduceLrOnPlateauConfig as a JS value; with an optimizer, initial_lr is its rate.
JsPlateau plateau_create(const val& config, const JsOptimizer* optimizer) {
  constexpr const char* op = "optim.ReduceLROnPlateau";
  Json j = config_from_js(config, op);
  std::shared_ptr<OptimizerState> target;
  if (optimizer != nullptr) {
    target = optimizer->state;
    if (!target) kiln::throw_error<kiln::StateError>(op, ": the optimizer was disposed");
    j["initial_lr"] = Json(constant_lr_of(*target, op));
  }
  const auto c = parse<kiln::optim::ReduceLrOnPlateauConfig>(j, op);
  auto plateau = std::make_shared<kiln::optim::ReduceLrOnPlateau>(with_op(op, [&] { return c.init(); }));
  return JsPlateau{std::move(plateau), std::move(target)};
}

JsPlateau plateau_create_alone(const val& config) {
  return guarded([&] { return plateau_create(config, nullptr); });
}
JsPlateau plateau_create_for(const val& config, const JsOptimizer& optimizer) {
  return guarded([&] { return plateau_create(config, &optimizer); });
}

/// step(metric): the new rate; set as the optimizer's (constant) rate when there is one.
double plateau_step(JsPlateau& p, double metric) {
  return guarded([&] {
    constexpr const char* op = "ReduceLROnPlateau.step";
    JsPlateau& s = plateau_of(p, op);
    if (s.optimizer) (void)constant_lr_of(*s.optimizer, op);  // checked before anything changes
    const double lr = s.plateau->step(metric);
    if (s.optimizer && constant_lr_of(*s.optimizer, op) != lr) set_schedule(*s.optimizer, constant_spec(lr));
    return lr;
  });
}

double plateau_lr(JsPlateau& p) {
  return guarded([&] { return plateau_of(p, "ReduceLROnPlateau.lr").plateau->lr(); });
}

val plateau_state(JsPlateau& p) {
  return guarded([&] {
    const auto& st = plateau_of(p, "ReduceLROnPlateau.state").plateau->state();
    val out = val::object();
    out.set("lr", st.lr);
    out.set("best", st.best);
    out.set("numBadEpochs", static_cast<double>(st.num_bad_epochs));
    out.set("cooldownCounter", static_cast<double>(st.cooldown_counter));
    out.set("steps", static_cast<double>(st.steps));
    return out;
  });
}

/// lr, best, numBadEpochs, cooldownCounter, steps: numbers (checked in JS).
void plateau_load_state(JsPlateau& p, double lr, double best, double bad, double cooldown, double steps) {
  guarded([&] {
    constexpr const char* op = "ReduceLROnPlateau.loadState";
    JsPlateau& s = plateau_of(p, op);
    kiln::optim::ReduceLrOnPlateau::State st;
    st.lr = lr;
    st.best = best;
    st.num_bad_epochs = static_cast<std::int64_t>(bad);
    st.cooldown_counter = static_cast<std::int64_t>(cooldown);
    st.steps = static_cast<std::int64_t>(steps);
    if (s.optimizer) (void)constant_lr_of(*s.optimizer, op);
    try {
      s.plateau->load_state(st);
    } catch (const kiln::ValueError& e) {
      kiln::throw_error<kiln::ValueError>(op, ": ", without_cpp_prefix(e.what()));
    }
    if (s.optimizer && constant_lr_of(*s.optimizer, op) != lr) set_schedule(*s.optimizer, constant_spec(lr));
  });
}

void plateau_release(JsPlateau& p) {
  p.plateau.reset();
  p.optimizer.reset();
}

/// An empty Gradients (kiln.optim.GradientsAccumulator fills it with tGradReplace).
Gradients gradients_empty() { return Gradients{}; }

// ---------------------------------------------------------------- clipping (issue 15)

/// The Cpu primitives of a JS array of float tensors (their values; a tracked tensor's graph
/// is not used).
kiln::optim::GradientList<Inner> gradient_list(const val& tensors, const char* op) {
  kiln::optim::GradientList<Inner> list;
  const auto n = tensors["length"].as<std::size_t>();
  list.grads.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const JsTensor t = tensors[i].as<JsTensor>();
    if (!t.is_float()) {
      kiln::throw_error<kiln::DTypeError>(op, ": grads[", i, "] must be a float32 tensor, got ",
                                          kiln::dtype_name(t.dtype()));
    }
    list.grads.push_back(t.primitive());
  }
  return list;
}

val tensors_of(const kiln::optim::GradientList<Inner>& list) {
  val out = val::array();
  for (std::size_t i = 0; i < list.grads.size(); ++i) out.set(i, val(JsTensor(list.grads[i])));
  return out;
}

/// clipGradNorm on gradient tensors: {totalNorm, tensors} (the clipped values, new handles).
val clip_grad_norm_js(val tensors, double max_norm, double norm_type, bool error_if_nonfinite) {
  return guarded([&] {
    auto list = gradient_list(tensors, "optim.clipGradNorm");
    const double total = kiln::optim::clip_grad_norm(
        list, max_norm, kiln::optim::ClipGradNormOptions{norm_type, error_if_nonfinite});
    val out = val::object();
    out.set("totalNorm", total);
    out.set("tensors", tensors_of(list));
    return out;
  });
}

/// clipGradNormAsync's device step: {totalNorm, tensors}, the total norm as a [1] float32
/// tensor (computed on the device, unread) and the clipped values (new handles); JS reads the
/// norm before it gives the gradients their new handles (its errorIfNonfinite).
val clip_grad_norm_device_js(val tensors, double max_norm, double norm_type) {
  return guarded([&] {
    auto list = gradient_list(tensors, "optim.clipGradNormAsync");
    auto total = kiln::optim::clip_grad_norm_on_device(list, max_norm, norm_type);
    val out = val::object();
    out.set("totalNorm", val(JsTensor(std::move(total))));
    out.set("tensors", tensors_of(list));
    return out;
  });
}

val clip_grad_value_js(val tensors, double clip_value) {
  return guarded([&] {
    auto list = gradient_list(tensors, "optim.clipGradValue");
    kiln::optim::clip_grad_value(list, clip_value);
    return tensors_of(list);
  });
}

// ---------------------------------------------------------------- state records (issue 15)

std::string number_text(double v) { return kiln::config::Value(v).dump(); }

/// optimizer.saveState(model): SafeTensors bytes of the per-parameter state keyed by
/// "<parameter path>.<field>" (OptimizerAdaptor::to_named_record), the step count and the
/// schedule in the metadata. M: a ParamList (any JS model: module_params.hpp).
/// saveState's metadata of `s` (the step count and the schedule, as save_state_of writes them).
std::map<std::string, std::string> state_meta(const OptimizerState& s) {
  std::map<std::string, std::string> meta;
  meta["optimizer"] = s.kind;
  meta["steps"] = std::to_string(s.steps);
  meta["schedule"] = s.schedule_spec.dump();
  meta["schedule_start"] = std::to_string(s.schedule_start);
  meta["last_lr"] = std::isnan(s.last_lr) ? "nan" : number_text(s.last_lr);
  return meta;
}

template <class M>
val save_state_of(const OptimizerState& s, const M& module) {
  const auto record = std::visit([&](const auto& a) { return a.to_named_record(module); }, s.impl->optim);
  const auto bytes = kiln::train::detail::optimizer_state_to_bytes(record, state_meta(s));
  return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
}

val optimizer_save_state_list(const JsOptimizer& o, const JsParamList& list) {
  return guarded([&] { return save_state_of(state_of(o), list.list); });
}

#if defined(KILN_BACKEND_WGPU)
/// optimizer.saveStateAsync's first half on the webgpu engine, whose state tensors are read
/// asynchronously: what to_named_record would hold, with the tensors unread: {keys, tensors}
/// (float state fields, in key order), {countKeys, counts} (integer fields such as Adam's
/// `time`) and meta (saveState's metadata, as of now). JS reads the tensors, then calls
/// optimizerStateBytes with their values.
val optimizer_state_parts_list(const JsOptimizer& o, const JsParamList& list) {
  return guarded([&] {
    const OptimizerState& s = state_of(o);
    val keys = val::array(), tensors = val::array(), count_keys = val::array(), counts = val::array();
    std::visit(
        [&](const auto& a) {
          const auto states = a.to_record();
          auto collect = [&](const std::string& path, const auto& param) {
            using P = std::remove_cvref_t<decltype(param)>;
            if constexpr (std::is_same_v<typename P::Value::Kind, kiln::Float>) {
              const auto it = states.find(param.id());
              if (it == states.end()) return;
              auto field = [&](std::string_view name, const auto& value) {
                using T = std::remove_cvref_t<decltype(value)>;
                const std::string key = kiln::str_cat(path, ".", name);
                if constexpr (std::is_same_v<T, std::int64_t>) {
                  count_keys.call<void>("push", key);
                  counts.call<void>("push", static_cast<double>(value));
                } else if constexpr (std::is_same_v<T, std::optional<Inner::FloatTensor>>) {
                  if (value) {
                    keys.call<void>("push", key);
                    tensors.call<void>("push", val(JsTensor(*value)));
                  }
                } else {
                  keys.call<void>("push", key);
                  tensors.call<void>("push", val(JsTensor(value)));
                }
              };
              it->second.visit(field);
            }
          };
          list.list.visit(collect);
        },
        s.impl->optim);
    val meta = val::object();
    for (const auto& [k, v] : state_meta(s)) meta.set(k, v);
    val out = val::object();
    out.set("keys", keys);
    out.set("tensors", tensors);
    out.set("countKeys", count_keys);
    out.set("counts", counts);
    out.set("meta", meta);
    return out;
  });
}

/// optimizer.saveStateAsync's second half: the bytes saveState writes, from the float fields'
/// values read by JS (`values[i]`: Float32Array of `shapes[i]`), the counts and the metadata
/// of optimizerStateParts.
val optimizer_state_bytes(val keys, val values, val shapes, val count_keys, val counts, val meta) {
  return guarded([&] {
    kiln::optim::NamedStateRecord record;
    const auto n = keys["length"].as<std::size_t>();
    for (std::size_t i = 0; i < n; ++i) {
      const val shape = shapes[i];
      std::vector<std::int64_t> dims(shape["length"].as<std::size_t>());
      for (std::size_t d = 0; d < dims.size(); ++d) dims[d] = static_cast<std::int64_t>(shape[d].as<double>());
      const val v = values[i];
      std::vector<float> data(v["length"].as<std::size_t>());
      if (!data.empty()) val(emscripten::typed_memory_view(data.size(), data.data())).call<void>("set", v);
      kiln::TensorData t(kiln::Shape(dims), std::move(data));
      if (t.shape.num_elements() != static_cast<std::int64_t>(t.bytes.size() / 4)) {
        kiln::throw_error<kiln::ShapeError>(
            "Optimizer.saveStateAsync: a state tensor's values do not fit its shape (an engine "
            "bug)");
      }
      record.insert_or_assign(keys[i].as<std::string>(), kiln::optim::StateValue(std::move(t)));
    }
    const auto m = count_keys["length"].as<std::size_t>();
    for (std::size_t i = 0; i < m; ++i) {
      record.insert_or_assign(count_keys[i].as<std::string>(),
                              kiln::optim::StateValue(static_cast<std::int64_t>(counts[i].as<double>())));
    }
    std::map<std::string, std::string> md;
    const val names = val::global("Object").call<val>("keys", meta);
    for (std::size_t i = 0; i < names["length"].as<std::size_t>(); ++i) {
      const auto k = names[i].as<std::string>();
      md[k] = meta[k].as<std::string>();
    }
    const auto bytes = kiln::train::detail::optimizer_state_to_bytes(record, md);
    return val::global("Uint8Array").new_(emscripten::typed_memory_view(bytes.size(), bytes.data()));
  });
}
#endif

std::int64_t meta_count(const std::map<std::string, std::string>& meta, const char* key, const char* op) {
  const auto it = meta.find(key);
  if (it == meta.end() || it->second.empty() ||
      it->second.find_first_not_of("0123456789") != std::string::npos || it->second.size() > 15) {
    kiln::throw_error<kiln::FormatError>(
        op, ": the state's metadata \"", key, "\" must be a count, got ",
        it == meta.end() ? std::string("nothing") : "\"" + it->second + "\"");
  }
  return std::stoll(it->second);
}

/// optimizer.loadState(model, bytes): everything checked before anything changes.
template <class M>
void load_state_into(OptimizerState& s, const M& module, val bytes) {
  {
    constexpr const char* op = "Optimizer.loadState";
    if (!val::global("Uint8Array")["prototype"].call<bool>("isPrototypeOf", bytes)) {
      kiln::throw_error<kiln::TypeError>(op, ": bytes must be a Uint8Array (from saveState), got ",
                                         bytes.typeOf().as<std::string>());
    }
    std::vector<std::uint8_t> data(bytes["length"].as<std::size_t>());
    if (!data.empty()) val(emscripten::typed_memory_view(data.size(), data.data())).call<void>("set", bytes);
    std::map<std::string, std::string> meta;
    const auto record = kiln::train::detail::optimizer_state_from_bytes(data, op, &meta);
    if (meta["format"] != "kiln optimizer state") {
      kiln::throw_error<kiln::FormatError>(op, ": not an optimizer state (metadata format \"",
                                           meta["format"],
                                           "\", expected \"kiln optimizer state\")");
    }
    if (meta["optimizer"] != s.kind) {
      kiln::throw_error<kiln::FormatError>(op, ": the state is of a \"", meta["optimizer"],
                                           "\" optimizer, this one is \"", s.kind, "\"");
    }
    const std::int64_t steps = meta_count(meta, "steps", op);
    const std::int64_t start = meta_count(meta, "schedule_start", op);
    if (start > steps) {
      kiln::throw_error<kiln::FormatError>(op, ": schedule_start ", start, " > steps ", steps);
    }
    Schedule schedule;
    Json schedule_spec;
    try {
      schedule_spec = kiln::config::parse(meta["schedule"], "schedule");
      schedule = schedule_from_value(schedule_spec);
      for (std::int64_t i = start; i < steps; ++i) (void)schedule.step();
    } catch (const kiln::Error& e) {
      kiln::throw_error<kiln::FormatError>(
          op, ": the state's schedule: ", without_cpp_prefix(e.what()));
    }
    const double last_lr = meta["last_lr"] == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                                   : kiln::config::parse(meta["last_lr"], op).get_double();
    // Matched by parameter path; throws (FormatError listing every problem) before anything changes.
    OptimVariant next = [&] {
      try {
        return std::visit(
            [&](const auto& a) {
              return OptimVariant(a.load_named_record(module, record, "the state does not fit the model"));
            },
            s.impl->optim);
      } catch (const kiln::FormatError& e) {
        kiln::throw_error<kiln::FormatError>(op, ": ", without_cpp_prefix(e.what()));
      }
    }();
    s.impl->optim = std::move(next);
    s.schedule = std::move(schedule);
    s.schedule_spec = std::move(schedule_spec);
    s.schedule_start = start;
    s.steps = steps;
    s.last_lr = last_lr;
  }
}

void optimizer_load_state_list(const JsOptimizer& o, const JsParamList& list, val bytes) {
  guarded([&] { load_state_into(state_of(o), list.list, bytes); });
}
/// optimizer.step(moduleOrTensors, grads): one step of the list (see optimizer_step_list).
void optimizer_step_params(const JsOptimizer& o, JsParamList& l, const Gradients& grads) {
  guarded([&] {
    if (!o.state) kiln::throw_error<kiln::StateError>("Optimizer.step: the optimizer was disposed");
    optimizer_step_list(*o.state, l, list_gradients(l, grads));
  });
}

/// The Learner's step of any module (learner helper): as optimizer_step_params, guarded as
/// kiln::train::train_step (a non-finite gradient or updated parameter throws NonFiniteError
/// naming `op`, the epoch and batch (epoch 0: "at step <batch>") and the parameter's dotted
/// name; then nothing is applied and the schedule does not advance).
void optimizer_step_params_guarded(const JsOptimizer& o, JsParamList& l, const Gradients& grads,
                                   const std::string& op, double epoch, double batch) {
  guarded([&] {
    if (!o.state) kiln::throw_error<kiln::StateError>(op, ": the optimizer was disposed");
    const kiln::train::StepPosition at{op, static_cast<std::int64_t>(epoch),
                                       static_cast<std::int64_t>(batch)};
    optimizer_step_list(*o.state, l, list_gradients(l, grads), &at);
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_train_optim) {
  using namespace kiln_js;
  emscripten::function("optimizerStepParams", &optimizer_step_params);
  emscripten::function("optimizerStepParamsGuarded", &optimizer_step_params_guarded);
  emscripten::class_<JsOptimizer>("RawOptimizer")
      .function("step", &optimizer_step_js)
      .function("lastLr", &optimizer_last_lr)
      .function("steps", &optimizer_steps)
      .function("release", &optimizer_release);
  emscripten::function("optimizerCreate", &optimizer_create);
  emscripten::function("scheduleValues", &schedule_values);
  // issue 15
  emscripten::class_<JsPlateau>("RawPlateau")
      .function("step", &plateau_step)
      .function("lr", &plateau_lr)
      .function("state", &plateau_state)
      .function("loadState", &plateau_load_state)
      .function("release", &plateau_release);
  emscripten::function("plateauCreate", &plateau_create_alone);
  emscripten::function("plateauCreateFor", &plateau_create_for);
  emscripten::function("scheduleMomentums", &schedule_momentums);
  emscripten::function("clipGradNorm", &clip_grad_norm_js);
  emscripten::function("clipGradNormDevice", &clip_grad_norm_device_js);
  emscripten::function("clipGradValue", &clip_grad_value_js);
  emscripten::function("optimizerSetSchedule", &optimizer_set_schedule);
  emscripten::function("optimizerScheduleKind", &optimizer_schedule_kind);
  emscripten::function("optimizerSaveStateList", &optimizer_save_state_list);
#if defined(KILN_BACKEND_WGPU)
  emscripten::function("optimizerStatePartsList", &optimizer_state_parts_list);
  emscripten::function("optimizerStateBytes", &optimizer_state_bytes);
#endif
  emscripten::function("optimizerLoadStateList", &optimizer_load_state_list);
  emscripten::function("gradientsEmpty", &gradients_empty);
}
