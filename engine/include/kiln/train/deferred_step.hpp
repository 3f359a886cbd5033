#pragma once
/// The training step with its non-finite guard on the device (issue 21): what train_step
/// (step.hpp) does, without reading anything back to the host, for backends whose reads are
/// asynchronous (Wgpu in the browser, where a GPU read is a promise). The JS Learner of the
/// webgpu engine runs it (bindings/train_optim.cpp) and reads the guard's status together
/// with the loss every N steps:
///
///   train::DeferredGuard<I> guard;
///   for (batch ...) train::deferred_train_step(model, optimizer, lr, loss_fn, guard, at);
///   F status = guard.status();                 // f32 [4] on the device, read it (async)
///   if (auto failure = train::settle_deferred(optimizer, guard, host_values_of_status)) {
///     // failure->step of the guard's steps was refused; so were all after it
///     train::detail::throw_refused_step(failure->at, failure->what);
///   }
///
/// Each step computes, on the device, whether its loss, each gradient (before clipping) and
/// each updated parameter is finite: a probe sum(x · 0) is 0 when every element of x is
/// finite and NaN otherwise (inf · 0 is NaN), and never overflows. The probes of a step,
/// concatenated in train_step's order (loss, then the gradients in visit order, then the
/// updates), give the first failing check by argmax (NaN counts as the max, first on ties).
/// A sticky flag `ok` (Bool [1]) is true while every step since the last settle passed; the
/// step commits `ok ? updated : old` for each stepped parameter and each state tensor of the
/// optimizer (mask_where), so a failing step, and every step after it until the status is
/// read, changes no tensor: the model and the moments are those of the step before the first
/// failure, as train_step leaves them. The optimizer's host-side counts (Adam's `time`) and
/// the states a refused step created are put back by settle_deferred, from what the guard
/// recorded on the host about each step (which parameters it stepped, which had no state).
///
/// Cost per step: two small dispatches per probed tensor (a scalar product and a sum), one
/// concatenation, argmax, sum and is_nan of the probes, four Bool [1] ops, and one mask_where
/// per stepped parameter and state tensor; no read. The status is one f32 [4] tensor.
///
/// Against train_step: the refused-step message names the same check ("loss is NaN", "the
/// gradient of parameter fc1.weight is not finite", "the update of parameter fc1.weight with
/// learning rate 1e+30 is not finite") but not the count of non-finite elements, which would
/// cost a read per tensor; and the error arrives when the status is read, not at the step.
/// Gradient clipping by norm runs on the device there too (optim::clip_grad_norm_on_device).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/param.hpp"
#include "kiln/optim/grads.hpp"
#include "kiln/optim/optimizer.hpp"
#include "kiln/tensor/tensor.hpp"
#include "kiln/train/step.hpp"

namespace kiln::train {

/// The device-side guard of deferred_train_step's steps since the last settle_deferred.
template <Backend I>
class DeferredGuard {
 public:
  using FloatPrimitive = typename I::FloatTensor;
  using BoolPrimitive = typename I::BoolTensor;

  /// What the host knows of one step: where it ran, what its checks were, which parameters
  /// it stepped and which of them had no optimizer state before it.
  struct StepRecord {
    std::string op;
    std::int64_t epoch = 0, batch = 0;
    std::vector<std::string> checks;  ///< per probe: "loss", "the gradient of ...", ...
    std::vector<module::ParamId> stepped;
    std::vector<module::ParamId> created;
  };

  /// Steps recorded since the last settle.
  std::size_t pending() const noexcept { return steps_.size(); }
  const std::vector<StepRecord>& steps() const noexcept { return steps_; }

  /// f32 [4] on the device: (1 if every pending step passed else 0, the index of the first
  /// failing step among the pending ones, the index of its first failing check, that step's
  /// loss). [1, 0, 0, 0] with no pending step. Shapes: [4].
  FloatPrimitive status(const typename I::Device& device) const {
    using F = typename I::FloatOps;
    if (!ok_) return F::from_data(TensorData(Shape{4}, std::vector<float>{1, 0, 0, 0}), DType::F32, device);
    const FloatPrimitive ok = F::cast(*ok_, DType::F32);
    return F::cat(std::vector<FloatPrimitive>{ok, *failure_}, 0);
  }

  /// Forgets the pending steps (settle_deferred calls it).
  void clear() {
    ok_.reset();
    failure_.reset();
    steps_.clear();
  }

  // Internal state, written by deferred_train_step.
  std::optional<BoolPrimitive> ok_;        ///< Bool [1]: every pending step passed
  std::optional<FloatPrimitive> failure_;  ///< f32 [3]: (step, check, loss) of the first failure
  std::vector<StepRecord> steps_;
};

/// A refused step found by settle_deferred.
struct DeferredFailure {
  std::string op;           ///< StepPosition::op of the step
  std::int64_t epoch = 0;   ///< StepPosition::epoch
  std::int64_t batch = 0;   ///< StepPosition::batch
  std::string what;         ///< "loss is NaN", "the gradient of parameter fc1.weight is not finite"
  std::size_t step = 0;     ///< index of the refused step among the settled ones
  std::size_t skipped = 0;  ///< steps not applied: the refused one and all after it
  StepPosition at() const { return StepPosition{op, epoch, batch}; }
};

namespace detail {

/// sum(x · 0) as f32 [1]: 0 when every element of x is finite, NaN otherwise.
template <Backend I>
typename I::FloatTensor finite_probe(const typename I::FloatTensor& x) {
  using F = typename I::FloatOps;
  return F::reduce(ReduceOp::Sum, F::binary_scalar(BinaryOp::Mul, x, 0.0));
}

/// `commit ? updated : old` (commit: Bool [1], broadcast).
template <Backend I>
typename I::FloatTensor committed(const typename I::FloatTensor& old,
                                  const typename I::BoolTensor& commit,
                                  typename I::FloatTensor updated) {
  return I::FloatOps::mask_where(old, commit, updated);
}

/// Maps a module to `commit ? its value : the value before the step` for the parameters in
/// `old_values` (deferred_train_step's masked commit).
template <Backend I>
struct CommitMasker {
  template <class BB>
  using Target = BB;
  const std::unordered_map<module::ParamId, typename I::FloatTensor>* old_values;
  const typename I::BoolTensor* commit;
  template <Backend BB, std::size_t D, TensorKind K>
  module::Param<Tensor<BB, D, K>> operator()(const module::Param<Tensor<BB, D, K>>& param) {
    if constexpr (!std::is_same_v<K, Float>) {
      return param;
    } else {
      const auto it = old_values->find(param.id());
      if (it == old_values->end() || !param.is_initialized()) return param;
      typename I::FloatTensor value =
          committed<I>(it->second, *commit, BB::FloatOps::inner(param.val().primitive()));
      return param.with_value(Tensor<BB, D>(BB::FloatOps::from_inner(std::move(value))));
    }
  }
};

}  // namespace detail

/// The guarded step of deferred_train_step once the loss and its gradients are known: the
/// probes of the loss (`loss`, the step's loss as a primitive of I), of each gradient of
/// `grads` for a parameter of `model` and of each update, the optimizer's staged step and the
/// masked commit of parameters and state, recorded in `guard` (no read). For callers that
/// take the gradients themselves (the JS Learner's trainStep path over a parameter list,
/// bindings/train_learner.cpp).
/// Throws: as deferred_train_step.
template <class M, class O, AutodiffBackend B, Backend I>
void deferred_step_with_grads(M& model, O& optimizer, optim::LearningRate lr,
                              const typename I::FloatTensor& loss, optim::GradientsParams<B> grads,
                              DeferredGuard<I>& guard, const StepPosition& at) {
  static_assert(std::is_same_v<typename B::Inner, I>,
                "deferred_step_with_grads: the guard must live on the gradients' inner backend");
  using F = typename I::FloatOps;
  using FloatPrimitive = typename I::FloatTensor;
  optim::check_learning_rate(at.op, lr);

  typename DeferredGuard<I>::StepRecord record;
  record.op = std::string(at.op);
  record.epoch = at.epoch;
  record.batch = at.batch;
  std::vector<FloatPrimitive> probes;
  probes.push_back(detail::finite_probe<I>(loss));
  record.checks.emplace_back("loss");

  // The gradients in visit order (train_step's order), and the values to keep on a refusal.
  std::unordered_map<module::ParamId, FloatPrimitive> old_values;
  std::unordered_map<module::ParamId, std::string> names;
  auto probe_grad = [&](const std::string& path, const auto& param) {
    using P = std::remove_cvref_t<decltype(param)>;
    using T = typename P::Value;
    if constexpr (std::is_same_v<typename T::Kind, Float>) {
      if (!param.is_initialized() || !param.is_require_grad()) return;
      const auto grad = grads.get_primitive(param.id(), T::rank);
      if (!grad) return;
      probes.push_back(detail::finite_probe<I>(*grad));
      const std::string name = detail::param_name(path, param.id());
      record.checks.push_back(str_cat("the gradient of ", name, " is not finite"));
      record.stepped.push_back(param.id());
      if (!optimizer.has_state(param.id())) record.created.push_back(param.id());
      old_values.emplace(param.id(), B::FloatOps::inner(param.val().primitive()));
      names.emplace(param.id(), name);
    }
  };
  model.visit(probe_grad);

  auto staged = optimizer.stage(lr, model, std::move(grads), false);
  // The updates, in the same order as the gradients.
  std::unordered_map<module::ParamId, FloatPrimitive> updates;
  auto collect = [&](const std::string&, const auto& param) {
    using P = std::remove_cvref_t<decltype(param)>;
    if constexpr (std::is_same_v<typename P::Value::Kind, Float>) {
      if (old_values.count(param.id()) == 0) return;
      updates.emplace(param.id(), B::FloatOps::inner(param.val().primitive()));
    }
  };
  staged.module.visit(collect);
  for (const auto id : record.stepped) {
    const auto it = updates.find(id);
    if (it == updates.end()) continue;  // the optimizer left it (cannot happen for an adaptor)
    probes.push_back(detail::finite_probe<I>(it->second));
    record.checks.push_back(str_cat("the update of ", names.at(id), " with learning rate ", lr,
                                    " is not finite"));
  }

  // The step's verdict and the sticky flag.
  const typename I::Device device = F::device(loss);
  const FloatPrimitive flags = F::cat(probes, 0);  // [k]: 0 or NaN
  auto bad = F::is_nan(F::reduce(ReduceOp::Sum, flags));             // Bool [1]
  // A backend whose value checks run on the device (Wgpu: an index computed on the GPU out of
  // range) refuses the step too: its values came from an op that used 0 for the bad index.
  // The read of the status then reports that op (KilnError Index) before any refusal message.
  if constexpr (requires { I::device_checks_failed(); }) {
    if (auto failed = I::device_checks_failed()) bad = F::bool_or(bad, std::move(*failed));
  }
  const FloatPrimitive first = F::cast(F::argmax(flags, 0), DType::F32);  // [1]
  const auto ok_before = guard.ok_ ? *guard.ok_ : F::full(Shape{1}, 1.0, DType::Bool, device);
  const auto commit = F::bool_and(ok_before, F::bool_not(bad));
  const auto newly = F::bool_and(ok_before, bad);
  const FloatPrimitive failure_before =
      guard.failure_ ? *guard.failure_ : F::full(Shape{3}, 0.0, DType::F32, device);
  const FloatPrimitive this_failure = F::cat(
      std::vector<FloatPrimitive>{
          F::full(Shape{1}, static_cast<double>(guard.steps_.size()), DType::F32, device), first,
          F::reshape(loss, std::vector<std::int64_t>{1})},
      0);

  // The masked commit: parameters, then the optimizer's state tensors.
  detail::CommitMasker<I> masker{&old_values, &commit};
  staged.module = staged.module.map(masker);
  const auto before = optimizer.to_record();
  for (auto& [id, state] : staged.states) {
    if (!state) continue;
    const auto old = before.find(id);
    if (old == before.end()) continue;  // created by this step: settle drops it on a refusal
    std::vector<std::optional<FloatPrimitive>> old_fields;
    auto read_old = [&](std::string_view, const auto& field) {
      using T = std::remove_cvref_t<decltype(field)>;
      if constexpr (std::is_same_v<T, FloatPrimitive>) {
        old_fields.emplace_back(field);
      } else if constexpr (std::is_same_v<T, std::optional<FloatPrimitive>>) {
        old_fields.push_back(field);
      }
    };
    old->second.visit(read_old);
    std::size_t i = 0;
    auto mask_new = [&](std::string_view, auto& field) {
      using T = std::remove_cvref_t<decltype(field)>;
      if constexpr (std::is_same_v<T, FloatPrimitive>) {
        const auto& o = old_fields.at(i++);
        if (o) field = detail::committed<I>(*o, commit, std::move(field));
      } else if constexpr (std::is_same_v<T, std::optional<FloatPrimitive>>) {
        const auto& o = old_fields.at(i++);
        if (o && field) field = detail::committed<I>(*o, commit, std::move(*field));
      }
    };
    state->visit_mut(mask_new);
  }

  model = optimizer.commit(std::move(staged));
  guard.failure_ = F::mask_where(failure_before, newly, this_failure);
  guard.ok_ = commit;
  guard.steps_.push_back(std::move(record));
}

/// The training step of train_step with its guard on the device (see the file comment): the
/// loss of loss_fn(model), its backward, then deferred_step_with_grads.
/// The optimizer must stage its steps (optim::OptimizerAdaptor). Returns the item (its loss
/// and outputs stay on the device).
/// Throws: ValueError if lr is negative or not finite; whatever the model, the loss and the
/// optimizer throw (before anything is committed; the guard is unchanged then). A non-finite
/// step throws nothing here: settle_deferred reports it.
template <class M, class O, class LossFn, Backend I>
auto deferred_train_step(M& model, O& optimizer, optim::LearningRate lr, LossFn&& loss_fn,
                         DeferredGuard<I>& guard, const StepPosition& at) {
  using Item = std::invoke_result_t<LossFn&, const M&>;
  using B = typename decltype(std::declval<Item&>().loss)::Backend;
  static_assert(std::is_same_v<typename B::Inner, I>,
                "deferred_train_step: the guard must live on the loss's inner backend");
  optim::check_learning_rate(at.op, lr);
  Item item = loss_fn(std::as_const(model));
  auto grads = optim::GradientsParams<B>::from_grads(item.loss.backward(), model);
  deferred_step_with_grads(model, optimizer, lr, item.loss.inner().primitive(), std::move(grads), guard, at);
  return item;
}

/// Reads the guard's status (`status`: the 4 values of guard.status(), read on the host) and
/// forgets the pending steps. When a step was refused, puts back the optimizer's host-side
/// state as it was before that step (counts such as Adam's `time` lowered by the steps not
/// applied; the states those steps created dropped) and returns which step and check failed;
/// the caller throws (detail::throw_refused_step(failure.at(), failure.what)) and rewinds what
/// it counts itself (its schedule, its step count) by failure.skipped steps.
/// Throws: ValueError if `status` does not have 4 values or names a step or check that does
/// not exist (a status of another guard); the guard is unchanged then.
template <class O, Backend I>
std::optional<DeferredFailure> settle_deferred(O& optimizer, DeferredGuard<I>& guard,
                                               std::span<const float> status) {
  if (status.size() != 4) {
    throw_error<ValueError>("settle_deferred: the status has 4 values, got ", status.size());
  }
  if (status[0] == 1.0f) {
    guard.clear();
    return std::nullopt;
  }
  const auto& steps = guard.steps();
  const double step_value = status[1], check_value = status[2];
  if (!(step_value >= 0 && step_value < static_cast<double>(steps.size()))) {
    throw_error<ValueError>("settle_deferred: the status names step ", step_value, " of ",
                            steps.size(), " pending");
  }
  const auto k = static_cast<std::size_t>(step_value);
  const auto& refused = steps[k];
  if (!(check_value >= 0 && check_value < static_cast<double>(refused.checks.size()))) {
    throw_error<ValueError>("settle_deferred: the status names check ", check_value, " of ",
                            refused.checks.size());
  }
  const auto check = static_cast<std::size_t>(check_value);
  DeferredFailure out;
  out.op = refused.op;
  out.epoch = refused.epoch;
  out.batch = refused.batch;
  out.what = check == 0 ? str_cat("loss is ", detail::describe_non_finite(status[3]))
                        : refused.checks[check];
  out.step = k;
  out.skipped = steps.size() - k;
  // Per parameter: steps not applied, and whether its state was created by one of them.
  std::unordered_map<module::ParamId, std::int64_t> not_applied;
  std::unordered_set<module::ParamId> created;
  for (std::size_t s = k; s < steps.size(); ++s) {
    for (const auto id : steps[s].stepped) ++not_applied[id];
    for (const auto id : steps[s].created) created.insert(id);
  }
  auto record = optimizer.to_record();
  for (auto it = record.begin(); it != record.end();) {
    if (created.count(it->first) != 0) {
      it = record.erase(it);
      continue;
    }
    const auto n = not_applied.find(it->first);
    if (n != not_applied.end()) {
      auto rewind = [&](std::string_view, auto& field) {
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, std::int64_t>) {
          field = field >= n->second ? field - n->second : 0;
        }
      };
      it->second.visit_mut(rewind);
    }
    ++it;
  }
  optimizer = optimizer.load_record(std::move(record));
  guard.clear();
  return out;
}

}  // namespace kiln::train
