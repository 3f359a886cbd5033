// Optimizers and learning-rate schedules in JS: the Embind class RawOptimizer over the
// engine's OptimizerAdaptor<Sgd | Adam | AdamW | RmsProp, Autodiff<Cpu>> with a scheduler,
// the step of a Sequential with them (optimizer.step), and the Learner's guarded training
// step (kiln::train::train_step), so that these templates are compiled in this TU only.
// Configs arrive as the C++ configs' JSON (snake_case), made by bindings/js/train/ (TypeScript).
#include <emscripten/bind.h>

#include <cmath>
#include <limits>

#include "kiln/optim/adam.hpp"
#include "kiln/optim/adamw.hpp"
#include "kiln/optim/optimizer.hpp"
#include "kiln/optim/rmsprop.hpp"
#include "kiln/optim/sgd.hpp"
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

namespace {

using Json = kiln::config::Value;

/// `Config: field ...` -> `<op>: field ...`.
template <class C>
C parse(const Json& j, const char* op) {
  try {
    return C::from_value(j);
  } catch (const kiln::ConfigError& e) {
    throw kiln::ConfigError(kiln::str_cat(op, ": ", without_cpp_prefix(e.what())));
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
    throw kiln::ConfigError(kiln::str_cat(op, ": ", without_cpp_prefix(e.what())));
  }
}

}  // namespace

Schedule schedule_from_json(const std::string& text) {
  const Json j = kiln::config::parse(text, "schedule");
  Schedule out;
  if (j.is_number()) {
    const kiln::optim::ConstantLrSchedulerConfig c(j.get_double());
    out.scheduler = with_op("", [&] { return c.init(); });
    return out;
  }
  const Json* kind_value = j.find("kind");
  if (!kind_value || !kind_value->is_string()) {
    throw kiln::ConfigError(kiln::str_cat("schedule: expected a number or {\"kind\": ...}, got ",
                                          kiln::config::describe(j)));
  }
  const std::string kind = kind_value->get_string();
  Json body = j;
  body.erase("kind");
  namespace o = kiln::optim;
  if (kind == "constant") {
    const auto c = parse<o::ConstantLrSchedulerConfig>(body, "schedule.constant");
    out.scheduler = with_op("", [&] { return c.init(); });
  } else if (kind == "step") {
    const auto c = parse<o::StepLrSchedulerConfig>(body, "optim.schedule.step");
    out.scheduler = with_op("optim.schedule.step", [&] { return c.init(); });
  } else if (kind == "exponential") {
    const auto c = parse<o::ExponentialLrSchedulerConfig>(body, "optim.schedule.exponential");
    out.scheduler = with_op("optim.schedule.exponential", [&] { return c.init(); });
  } else if (kind == "linear") {
    const auto c = parse<o::LinearLrSchedulerConfig>(body, "optim.schedule.linear");
    out.scheduler = with_op("optim.schedule.linear", [&] { return c.init(); });
  } else if (kind == "cosine") {
    const auto c = parse<o::CosineAnnealingLrSchedulerConfig>(body, "optim.schedule.cosine");
    out.scheduler = with_op("optim.schedule.cosine", [&] { return c.init(); });
  } else if (kind == "noam") {
    const auto c = parse<o::NoamLrSchedulerConfig>(body, "optim.schedule.noam");
    out.scheduler = with_op("optim.schedule.noam", [&] { return c.init(); });
  } else {
    throw kiln::ConfigError(kiln::str_cat("schedule: unknown kind \"", kind,
                                          "\" (constant, step, exponential, linear, cosine, noam)"));
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
  StepItem item = std::visit(
      [&](auto& o) { return kiln::train::train_step(model.model, o, lr, loss_fn, at); },
      optimizer.impl->optim);
  optimizer.schedule = std::move(schedule);
  optimizer.last_lr = lr;
  ++optimizer.steps;
  return item;
}

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
  if (!o.state) throw kiln::StateError("optimizer: it was disposed");
  return *o.state;
}

/// kind: "sgd" | "adam" | "adamW" | "rmsProp"; config: the C++ config's JSON; lr: a schedule
/// JSON (schedule_from_json).
JsOptimizer optimizer_create(const std::string& kind, const std::string& config_json,
                             const std::string& lr_json) {
  return guarded([&] {
    namespace o = kiln::optim;
    const Json j = kiln::config::parse(config_json, "optimizer");
    const auto make = [](auto optim) {
      return std::make_shared<OptimizerImpl>(OptimizerImpl{std::move(optim)});
    };
    std::shared_ptr<OptimizerImpl> impl;
    if (kind == "sgd") {
      impl = make(parse<o::SgdConfig>(j, "optim.sgd").init<AD>());
    } else if (kind == "adam") {
      impl = make(parse<o::AdamConfig>(j, "optim.adam").init<AD>());
    } else if (kind == "adamW") {
      impl = make(parse<o::AdamWConfig>(j, "optim.adamW").init<AD>());
    } else if (kind == "rmsProp") {
      impl = make(parse<o::RmsPropConfig>(j, "optim.rmsProp").init<AD>());
    } else {
      throw kiln::ConfigError(kiln::str_cat("optim: unknown optimizer \"", kind, "\""));
    }
    auto state = std::make_shared<OptimizerState>();
    state->impl = std::move(impl);
    try {
      state->schedule = schedule_from_json(lr_json);
    } catch (const kiln::ConfigError& e) {
      throw kiln::ConfigError(kiln::str_cat("optim.", kind, ": lr: ", without_cpp_prefix(e.what())));
    }
    state->kind = kind;
    state->last_lr = std::numeric_limits<double>::quiet_NaN();
    return JsOptimizer{std::move(state)};
  });
}

/// optimizer.step(model, grads): the model's parameters that have a gradient in `grads`
/// are updated (grads is not consumed: the JS Gradients stay usable).
void optimizer_step_js(const JsOptimizer& o, const JsModel& m, const Gradients& grads) {
  guarded([&] {
    if (!m.state) throw kiln::StateError("optimizer.step: the model was disposed");
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
val schedule_values(const std::string& lr_json, double n) {
  return guarded([&] {
    if (!(n >= 0 && n <= 1e7) || std::floor(n) != n) {
      throw kiln::ValueError(kiln::str_cat("schedule.values: n must be an integer in [0, 1e7], got ", n));
    }
    Schedule s = schedule_from_json(lr_json);
    val out = val::global("Float64Array").new_(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i) out.set(i, s.step());
    return out;
  });
}

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_train_optim) {
  using namespace kiln_js;
  emscripten::class_<JsOptimizer>("RawOptimizer")
      .function("step", &optimizer_step_js)
      .function("lastLr", &optimizer_last_lr)
      .function("steps", &optimizer_steps)
      .function("release", &optimizer_release);
  emscripten::function("optimizerCreate", &optimizer_create);
  emscripten::function("scheduleValues", &schedule_values);
}
