#pragma once
/// The optimizer interface (Burn's `Optimizer::step(lr, module, grads) -> module`):
///
///   auto optim = AdamConfig().with_beta_1(0.9).init<B>();   // OptimizerAdaptor<Adam, B>
///   auto grads = GradientsParams<B>::from_grads(loss.backward(), model);
///   model = optim.step(lr, model, std::move(grads));
///
/// OptimizerAdaptor<O, B> (Burn's `OptimizerAdaptor`) turns a per-tensor rule O (Sgd, Adam,
/// AdamW, RmsProp: a "simple optimizer") into a module optimizer: it clips the gradients
/// (optional), then maps the module, replacing each Float parameter that requires a gradient
/// and has one by O's update computed on the inner backend (no graph); the result is a
/// tracked leaf again with the same ParamId. Parameters without a gradient, frozen ones and
/// Int/Bool ones are returned unchanged, and their optimizer state is left untouched. State
/// (momentum buffers, moments, step counts) lives in the adaptor keyed by ParamId, so it
/// follows its parameter through valid(), from_inner() and clone().
///
/// A simple optimizer O provides
///   template <Backend I> struct State;                       // per-parameter state on I
///   template <Backend I, std::size_t D>
///   Tensor<I, D> step(double lr, Tensor<I, D> param, Tensor<I, D> grad,
///                     std::optional<State<I>>& state) const; // creates/updates state
/// and may take a last argument `UpdateFinite* finite` (fused.hpp) that it sets when it
/// learns during the update whether the gradient and the updated parameter are all finite
/// (the fused Cpu paths of Sgd, Adam and AdamW do; stage checks for itself otherwise),
/// and State<I> (default-constructible) lists its fields for records with
///   template <class V> void visit(V&& v) const;  // v(name, field) per field
///   template <class V> void visit_mut(V&& v);
/// where a field is an `I::FloatTensor` of the parameter's shape (required), a
/// `std::optional<I::FloatTensor>` (optional) or a `std::int64_t` count (required).
/// A rule may also provide the same update on the rank-erased float primitives,
///   template <Backend I>
///   I::FloatTensor step_primitive(double lr, I::FloatTensor param, I::FloatTensor grad,
///                                 std::optional<State<I>>& state, UpdateFinite* finite) const;
/// (Sgd, Adam, AdamW and RmsProp do, their typed step<I, D> being a thin wrapper over it):
/// the adaptor then calls that, so one copy of the update's code serves parameters of every
/// rank (the per-rank parts of the adaptor only unwrap and rewrap the tensors).
///
/// Records of the state (for checkpoints, so a resumed run continues with the same moments):
/// `to_named_record(module)` gives every state field keyed by "<parameter path>.<field>"
/// ("fc1.weight.moment_1", "fc1.weight.time"), and `load_named_record(module, record)`
/// matches such a record against a module of the same structure, whatever its ParamIds.
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/module/module.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/fused.hpp"
#include "kiln/optim/grads.hpp"

namespace kiln::optim {

/// A learning rate: the step size of one optimizer step (Burn's `LearningRate`, f64).
using LearningRate = double;

/// Throws ValueError (`<op>: learning rate must be finite and >= 0, got <lr>`) unless lr is
/// finite and >= 0 (PyTorch rejects lr < 0; lr = 0 is allowed and changes nothing but the
/// state).
void check_learning_rate(std::string_view op, LearningRate lr);

/// One value of an optimizer state record: a float tensor's data (a moment or a buffer, f32,
/// of its parameter's shape) or an integer (Adam's step count `time`).
using StateValue = std::variant<TensorData, std::int64_t>;
/// An optimizer's state keyed by "<parameter path>.<state field>" ("fc1.weight.moment_1",
/// "fc1.weight.time"): Burn's optimizer record, keyed by the module's field paths instead of
/// ParamIds so that it loads into another process, whose parameters have other ids.
using NamedStateRecord = std::map<std::string, StateValue>;

namespace detail {
/// Whether every element of `t` is finite: one Sum reduction (a sum is finite only if every
/// term is), and a host scan only when the sum is not finite (nan/inf elements, or finite
/// ones whose sum overflows).
template <Backend I>
bool all_finite_primitive(const typename I::FloatTensor& t) {
  using Ops = typename I::FloatOps;
  // t.sum().into_scalar(): a whole-tensor Sum has one element.
  const float sum = Ops::into_data(Ops::reduce(ReduceOp::Sum, t)).template to_vec<float>()[0];
  if (std::isfinite(static_cast<double>(sum))) return true;
  for (const float x : Ops::into_data(t).template to_vec<float>()) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}
/// all_finite_primitive of a typed tensor.
template <Backend I, std::size_t D>
bool all_finite(const Tensor<I, D>& t) {
  return all_finite_primitive<I>(t.primitive());
}
}  // namespace detail

/// A module optimizer built from the per-tensor rule O (see the top of this file).
template <class O, AutodiffBackend B>
class OptimizerAdaptor {
 public:
  using Inner = typename B::Inner;
  using State = typename O::template State<Inner>;
  /// The per-parameter states (Burn's optimizer record), keyed by ParamId.
  using Record = std::unordered_map<ParamId, State>;

  explicit OptimizerAdaptor(O optim, std::optional<GradientClipping> clipping = std::nullopt)
      : optim_(std::move(optim)), clipping_(std::move(clipping)) {}

  /// This optimizer with gradient clipping applied before each step (Burn's
  /// `with_grad_clipping`).
  OptimizerAdaptor with_grad_clipping(GradientClipping clipping) const {
    OptimizerAdaptor out = *this;
    out.clipping_ = std::move(clipping);
    return out;
  }
  bool has_gradient_clipping() const noexcept { return clipping_.has_value(); }

  /// One optimization step: `module` with every trainable parameter that has a gradient in
  /// `grads` updated by O's rule with learning rate `lr` (per step, not scaled by anything).
  /// Gradients of ids that are not trainable parameters of `module` are ignored.
  /// Throws: ValueError if lr is negative or not finite; ShapeError if a gradient's shape
  ///         differs from its parameter's; RankError if its rank does.
  template <class M>
  M step(LearningRate lr, const M& module, GradientsParams<B> grads) {
    check_learning_rate("Optimizer::step", lr);
    // The gradients this step uses, so that norm clipping sees exactly those.
    GradientsParams<B> used;
    auto select = [&](const std::string&, const auto& param) { select_grad(param, grads, used); };
    module.visit(select);
    if (clipping_) clipping_->clip(used);
    StepMapper mapper{this, lr, &used};
    return module.map(mapper);
  }

  /// What a stepped parameter's update looked like (stage with check_finite): its id, the
  /// gradient the rule was given (after clipping), the updated parameter, and whether each
  /// is all finite.
  struct ParamCheck {
    ParamId id;
    typename Inner::FloatTensor grad;
    typename Inner::FloatTensor update;
    bool grad_finite = true;
    bool update_finite = true;
  };
  /// A step computed by stage but not applied: the updated module, the new state of each
  /// stepped parameter (nullopt: the rule dropped it) and, with check_finite, one
  /// ParamCheck per stepped parameter in the module's visit order.
  template <class M>
  struct StagedStep {
    M module;
    std::vector<std::pair<ParamId, std::optional<State>>> states;
    std::vector<ParamCheck> checks;
  };

  /// The step of `step` computed without applying it: this optimizer is not changed until
  /// `commit(staged)`, and a staged step that is dropped changes nothing (train::train_step
  /// refuses a non-finite step so, with no copy of the optimizer). The old state is kept,
  /// so the new one goes to new buffers (on the Cpu backend the fused update writes it there
  /// in the same pass; other rules and backends run their op chain out of place).
  /// With `check_finite`, `checks` tells whether each gradient the rule was given and each
  /// updated parameter is all finite: from the fused Cpu kernels for free, else by one Sum
  /// reduction of each (a host scan only when a sum is not finite).
  /// Throws: as step.
  template <class M>
  StagedStep<M> stage(LearningRate lr, const M& module, GradientsParams<B> grads,
                      bool check_finite) const {
    check_learning_rate("Optimizer::step", lr);
    GradientsParams<B> used;
    auto select = [&](const std::string&, const auto& param) { select_grad(param, grads, used); };
    module.visit(select);
    if (clipping_) clipping_->clip(used);
    std::vector<std::pair<ParamId, std::optional<State>>> states;
    std::vector<ParamCheck> checks;
    StageMapper mapper{this, lr, &used, check_finite, &states, &checks};
    M updated = module.map(mapper);
    return StagedStep<M>{std::move(updated), std::move(states), std::move(checks)};
  }

  /// Applies a step of stage: this optimizer takes the staged states; returns the updated
  /// module.
  template <class M>
  M commit(StagedStep<M> staged) {
    for (auto& [id, state] : staged.states) {
      if (state) {
        states_.insert_or_assign(id, std::move(*state));
      } else {
        states_.erase(id);
      }
    }
    return std::move(staged.module);
  }

  /// A copy of every parameter's state (tensors are shared, not copied: cheap).
  Record to_record() const { return states_; }
  /// This optimizer with its state replaced by `record` (Burn's `load_record`).
  OptimizerAdaptor load_record(Record record) const {
    OptimizerAdaptor out = *this;
    out.states_ = std::move(record);
    return out;
  }
  /// Whether parameter `id` has state (it was updated at least once).
  bool has_state(ParamId id) const { return states_.count(id) != 0; }

  /// The state of `module`'s parameters keyed by "<path>.<field>" (see NamedStateRecord and
  /// the top of this file), the tensors copied to host data. A parameter without state
  /// (never updated, frozen, Int/Bool) has no entries, nor has an absent optional field
  /// (Adam's max_moment_2 without amsgrad). State of ids that are not `module`'s parameters
  /// is left out.
  template <class M>
  NamedStateRecord to_named_record(const M& module) const {
    NamedStateRecord out;
    auto collect = [&](const std::string& path, const auto& param) {
      save_state(path, param, out);
    };
    module.visit(collect);
    return out;
  }

  /// This optimizer with its state replaced by `record` (to_named_record's output, possibly
  /// of another process) matched against `module`'s parameters by path; the states take the
  /// ids of `module`'s parameters and their tensors are made on each parameter's device. A
  /// parameter with no entry gets no state (as if never updated). `source` names the record
  /// in errors (a quoted file path, say).
  /// Throws: FormatError `OptimizerAdaptor::load_named_record: <source>: N problems: ...`
  ///   listing every missing required field of a parameter that has entries, unexpected
  ///   entry (a path that is not a Float parameter of `module`, or a field O's state does not
  ///   have: the record of another optimizer), tensor whose shape differs from its
  ///   parameter's, and entry of the wrong kind (a tensor for a count or the reverse) or
  ///   negative count. Nothing is loaded when it throws.
  template <class M>
  OptimizerAdaptor load_named_record(const M& module, const NamedStateRecord& record,
                                     std::string_view source = "record") const {
    StateLoader loader{&record, {}, {}, {}};
    auto load = [&](const std::string& path, const auto& param) { loader.load(path, param); };
    module.visit(load);
    loader.finish(source);
    OptimizerAdaptor out = *this;
    out.states_ = std::move(loader.states);
    return out;
  }
  /// The rule O.
  const O& optimizer() const noexcept { return optim_; }

 private:
  using FloatPrimitive = typename Inner::FloatTensor;
  using AdPrimitive = typename B::FloatTensor;

  /// Whether O has the rank-erased rule `step_primitive<I>(lr, param, grad, state, finite)`
  /// on float primitives (Sgd, Adam, AdamW, RmsProp do): then each parameter's update runs
  /// through one copy of the code for every rank (step_erased, stage_erased). A rule with
  /// only the typed `step<I, D>` is called per rank.
  static constexpr bool kErased = requires(const O& o, LearningRate lr, FloatPrimitive p,
                                           std::optional<State>& s, UpdateFinite* f) {
    { o.template step_primitive<Inner>(lr, p, p, s, f) } -> std::same_as<FloatPrimitive>;
  };

  template <Backend BB, std::size_t D, TensorKind K>
  static void select_grad(const Param<Tensor<BB, D, K>>& param, GradientsParams<B>& from,
                          GradientsParams<B>& to) {
    static_assert(std::is_same_v<BB, B>,
                  "Optimizer::step: the module must live on the optimizer's autodiff backend B");
    if constexpr (std::is_same_v<K, Float>) {
      if (!param.is_initialized() || !param.is_require_grad()) return;
      select_grad_erased(param.id(), param.val().primitive(), D, from, to);
    }
  }
  /// select_grad of one initialized trainable parameter of rank `rank`, rank-erased.
  static void select_grad_erased(ParamId id, const AdPrimitive& value, std::size_t rank,
                                 GradientsParams<B>& from, GradientsParams<B>& to) {
    auto grad = from.remove_primitive(id, rank);
    if (!grad) return;
    const Shape grad_shape = Inner::FloatOps::shape(*grad);
    const Shape param_shape = B::FloatOps::shape(value);
    if (!(grad_shape == param_shape)) {
      throw_error<ShapeError>("Optimizer::step: the gradient of parameter ", id, " has shape ",
                              grad_shape, ", the parameter ", param_shape);
    }
    to.insert_primitive(id, std::move(*grad));
  }

  template <Backend BB, std::size_t D, TensorKind K>
  void save_state(const std::string& path, const Param<Tensor<BB, D, K>>& param,
                  NamedStateRecord& out) const {
    if constexpr (std::is_same_v<K, Float>) save_state_erased(path, param.id(), out);
  }
  /// save_state of one Float parameter, rank-erased (a state tensor has its parameter's
  /// shape, so its data carries the rank).
  void save_state_erased(const std::string& path, ParamId id, NamedStateRecord& out) const {
    const auto it = states_.find(id);
    if (it == states_.end()) return;
    auto write = [&](std::string_view field, const auto& value) {
      using T = std::remove_cvref_t<decltype(value)>;
      const std::string key = str_cat(path, ".", field);
      if constexpr (std::is_same_v<T, std::int64_t>) {
        out.insert_or_assign(key, StateValue(value));
      } else if constexpr (std::is_same_v<T, std::optional<FloatPrimitive>>) {
        if (value) out.insert_or_assign(key, StateValue(Inner::FloatOps::into_data(*value)));
      } else {
        static_assert(std::is_same_v<T, FloatPrimitive>,
                      "optimizer state fields are FloatTensor, optional<FloatTensor> or int64_t");
        out.insert_or_assign(key, StateValue(Inner::FloatOps::into_data(value)));
      }
    };
    it->second.visit(write);
  }

  /// load_named_record's matching: states by ParamId, the keys it used and every problem.
  struct StateLoader {
    const NamedStateRecord* record;
    Record states;
    std::set<std::string> used;
    std::vector<std::string> problems;

    template <Backend BB, std::size_t D, TensorKind K>
    void load(const std::string& path, const Param<Tensor<BB, D, K>>& param) {
      if constexpr (std::is_same_v<K, Float>) {
        load_erased(path, param.id(), param.is_initialized() ? &param.val().primitive() : nullptr);
      }
    }

    /// load of one Float parameter (`value` null when it is empty), rank-erased: a state
    /// tensor must have the parameter's shape, which carries the rank.
    void load_erased(const std::string& path, ParamId id, const AdPrimitive* value) {
      State state{};
      std::size_t found = 0;
      std::vector<std::string> missing;
      auto read = [&](std::string_view field, auto& slot) {
        using T = std::remove_cvref_t<decltype(slot)>;
        constexpr bool is_count = std::is_same_v<T, std::int64_t>;
        constexpr bool is_optional = std::is_same_v<T, std::optional<FloatPrimitive>>;
        const std::string key = str_cat(path, ".", field);
        const auto it = record->find(key);
        if (it == record->end()) {
          if (!is_optional) missing.push_back(key);
          return;
        }
        ++found;
        used.insert(key);
        if constexpr (is_count) {
          const auto* count = std::get_if<std::int64_t>(&it->second);
          if (count == nullptr || *count < 0) {
            problems.push_back(
                count == nullptr
                    ? str_cat('"', key, "\" is a tensor, expected a count")
                    : str_cat('"', key, "\" is ", *count, ", expected a count >= 0"));
            return;
          }
          slot = *count;
        } else {
          const auto* data = std::get_if<TensorData>(&it->second);
          if (data == nullptr) {
            problems.push_back(str_cat('"', key, "\" is a count, expected a tensor"));
            return;
          }
          if (value == nullptr) {
            problems.push_back(str_cat('"', key, "\" belongs to an empty parameter"));
            return;
          }
          const Shape param_shape = B::FloatOps::shape(*value);
          if (!(data->shape == param_shape)) {
            problems.push_back(str_cat('"', key, "\" has shape ", data->shape,
                                       ", the parameter ", param_shape));
            return;
          }
          // The shapes are equal, so the data has the parameter's rank (as from_data checks).
          slot = Inner::FloatOps::from_data(*data, Float::dtype,
                                            Inner::FloatOps::device(B::FloatOps::inner(*value)));
        }
      };
      state.visit_mut(read);
      if (found == 0) return;  // never updated: no state
      for (const auto& key : missing) problems.push_back(str_cat("missing \"", key, '"'));
      if (missing.empty()) states.insert_or_assign(id, std::move(state));
    }

    void finish(std::string_view source) {
      std::vector<std::string> all;
      for (const auto& entry : *record) {
        if (!used.count(entry.first)) all.push_back(str_cat("unexpected \"", entry.first, '"'));
      }
      all.insert(all.end(), problems.begin(), problems.end());
      if (all.empty()) return;
      std::string message = str_cat("OptimizerAdaptor::load_named_record: ", source, ": ",
                                    all.size(), all.size() == 1 ? " problem: " : " problems: ");
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (i) message += "; ";
        message += all[i];
      }
      throw FormatError(message);
    }
  };

  /// step's update of one parameter (its inner value and its gradient), rank-erased: O's
  /// rule with the parameter's state moved out of states_ and the new one put back.
  FloatPrimitive step_erased(LearningRate lr, ParamId id, FloatPrimitive value,
                             FloatPrimitive grad) {
    std::optional<State> state;
    auto it = states_.find(id);
    if (it != states_.end()) {
      state = std::move(it->second);
      states_.erase(it);
    }
    FloatPrimitive updated = optim_.template step_primitive<Inner>(lr, std::move(value),
                                                                   std::move(grad), state, nullptr);
    if (state) states_.insert_or_assign(id, std::move(*state));
    return updated;
  }

  /// stage's update of one parameter, rank-erased: as step_erased with the state copied, the
  /// new state and (with check_finite) the ParamCheck appended to `states` and `checks`.
  FloatPrimitive stage_erased(LearningRate lr, ParamId id, FloatPrimitive value,
                              FloatPrimitive grad, bool check_finite,
                              std::vector<std::pair<ParamId, std::optional<State>>>& states,
                              std::vector<ParamCheck>& checks) const {
    std::optional<State> state;
    const auto it = states_.find(id);
    if (it != states_.end()) state = it->second;
    if (!check_finite) {
      FloatPrimitive updated = optim_.template step_primitive<Inner>(
          lr, std::move(value), std::move(grad), state, nullptr);
      states.emplace_back(id, std::move(state));
      return updated;
    }
    const FloatPrimitive given = std::move(grad);  // kept for the check
    UpdateFinite finite;
    FloatPrimitive updated =
        optim_.template step_primitive<Inner>(lr, std::move(value), given, state, &finite);
    if (!finite.known) {
      finite.grad = detail::all_finite_primitive<Inner>(given);
      finite.param = detail::all_finite_primitive<Inner>(updated);
    }
    checks.push_back(ParamCheck{id, given, updated, finite.grad, finite.param});
    states.emplace_back(id, std::move(state));
    return updated;
  }

  struct StepMapper {
    template <class BB>
    using Target = BB;
    OptimizerAdaptor* self;
    LearningRate lr;
    GradientsParams<B>* grads;

    template <Backend BB, std::size_t D, TensorKind K>
    Param<Tensor<BB, D, K>> operator()(const Param<Tensor<BB, D, K>>& param) {
      if constexpr (!std::is_same_v<K, Float>) {
        return param;
      } else if constexpr (kErased) {
        auto grad = grads->remove_primitive(param.id(), D);
        if (!grad) return param;  // frozen, no gradient, or empty: unchanged
        FloatPrimitive updated = self->step_erased(
            lr, param.id(), B::FloatOps::inner(param.val().primitive()), std::move(*grad));
        return param.with_value(Tensor<B, D>(B::FloatOps::from_inner(std::move(updated))));
      } else {
        auto grad = grads->template remove<D>(param.id());
        if (!grad) return param;  // frozen, no gradient, or empty: unchanged
        std::optional<State> state;
        auto it = self->states_.find(param.id());
        if (it != self->states_.end()) {
          state = std::move(it->second);
          self->states_.erase(it);
        }
        Tensor<Inner, D> updated =
            self->optim_.step(lr, param.val().inner(), std::move(*grad), state);
        if (state) self->states_.insert_or_assign(param.id(), std::move(*state));
        return param.with_value(Tensor<B, D>::from_inner(updated));
      }
    }
  };

  /// stage's per-parameter update: as StepMapper, but the state is copied (its tensors
  /// shared) instead of moved out of states_, and the result goes to `states`.
  struct StageMapper {
    template <class BB>
    using Target = BB;
    const OptimizerAdaptor* self;
    LearningRate lr;
    GradientsParams<B>* grads;
    bool check_finite;
    std::vector<std::pair<ParamId, std::optional<State>>>* states;
    std::vector<ParamCheck>* checks;

    template <Backend BB, std::size_t D, TensorKind K>
    Param<Tensor<BB, D, K>> operator()(const Param<Tensor<BB, D, K>>& param) {
      if constexpr (!std::is_same_v<K, Float>) {
        return param;
      } else if constexpr (kErased) {
        auto grad = grads->remove_primitive(param.id(), D);
        if (!grad) return param;  // frozen, no gradient, or empty: unchanged
        FloatPrimitive updated = self->stage_erased(
            lr, param.id(), B::FloatOps::inner(param.val().primitive()), std::move(*grad),
            check_finite, *states, *checks);
        return param.with_value(Tensor<B, D>(B::FloatOps::from_inner(std::move(updated))));
      } else {
        auto grad = grads->template remove<D>(param.id());
        if (!grad) return param;  // frozen, no gradient, or empty: unchanged
        std::optional<State> state;
        const auto it = self->states_.find(param.id());
        if (it != self->states_.end()) state = it->second;
        if (!check_finite) {
          Tensor<Inner, D> updated =
              self->optim_.step(lr, param.val().inner(), std::move(*grad), state);
          states->emplace_back(param.id(), std::move(state));
          return param.with_value(Tensor<B, D>::from_inner(updated));
        }
        const Tensor<Inner, D> given = std::move(*grad);  // kept for the check
        UpdateFinite finite;
        constexpr bool reports = requires(const O& o, Tensor<Inner, D> t,
                                          std::optional<State>& s, UpdateFinite* f) {
          o.step(LearningRate{}, t, t, s, f);
        };
        Tensor<Inner, D> updated = [&] {
          if constexpr (reports) {
            return self->optim_.step(lr, param.val().inner(), given, state, &finite);
          } else {
            return self->optim_.step(lr, param.val().inner(), given, state);
          }
        }();
        if (!finite.known) {
          finite.grad = detail::all_finite(given);
          finite.param = detail::all_finite(updated);
        }
        checks->push_back(ParamCheck{param.id(), given.primitive(), updated.primitive(),
                                     finite.grad, finite.param});
        states->emplace_back(param.id(), std::move(state));
        return param.with_value(Tensor<B, D>::from_inner(updated));
      }
    }
  };

  O optim_;
  std::optional<GradientClipping> clipping_;
  Record states_;
};

namespace detail {
/// Config checks shared by the optimizer configs (engine/src/optim/optimizer.cpp). Each throws
/// ConfigError `<op>: <field> must be <range>, got <value>`.
void check_finite_min(std::string_view op, std::string_view field, double value, double min);
void check_unit_interval(std::string_view op, std::string_view field, double value,
                         bool include_one);
}  // namespace detail

}  // namespace kiln::optim
