#pragma once
/// One training step with its non-finite guard, the single one that SupervisedTraining
/// (learner.hpp) and the JS Learner (bindings/train_learner.cpp, through
/// bindings/train_optim.cpp) run:
///
///   // the model's TrainStep (forward, loss and backward in model.train_step(batch)):
///   auto item = train::train_step(model, optimizer, lr, batch, {"MyLoop", epoch, batch_index});
///   // or a loss callback (forward and loss; train_step runs the backward):
///   auto item = train::train_step(model, optimizer, lr,
///                                 [&](const M& m) { return m.forward_classification(x, y); },
///                                 {"MyLoop", epoch, batch_index});
///
/// In order:
///   1. forward and loss: `model.train_step(batch)` (a TrainOutput: gradients and item), or
///      `loss_fn(model)` (an item with a `loss` tensor [1]);
///   2. the loss must be finite (before the backward for a loss callback);
///   3. backward (loss callback) and the gradients of the model's trainable parameters;
///      each gradient must be finite;
///   4. `optimizer.step(lr, model, grads)`: gradient clipping, when the optimizer has it
///      (OptimizerAdaptor clips the step's gradients together before updating:
///      optim/grad_clipping.hpp), then the update;
///   5. each updated parameter must be finite (a learning rate of 1e30 overflows weights on a
///      step whose loss and gradients were finite).
/// Only then is the step committed: `model` gets the updated parameters.
///
/// A refused step changes nothing: `model` keeps its weights and `optimizer` its state
/// (momentum buffers, Adam's moments and step counts). With an OptimizerAdaptor the step is
/// staged (OptimizerAdaptor::stage computes the updated model and the new state without
/// touching the optimizer; commit applies them), so nothing has to be restored and the
/// optimizer is never copied. Any other optimizer (StepOptimizer) is copied before stepping
/// and the copy put back when the step is refused. Any other exception from the step leaves
/// both as they were too.
///
/// Cost of the guard. On the Cpu backend, Adam, AdamW and SGD update each parameter in one
/// fused pass (kiln/optim/fused.hpp) that also tells whether the gradient it read and the
/// parameter it wrote are all finite, so the checks of steps 3 and 5 cost no pass of their
/// own; the new state goes to new buffers (the old state is kept until the commit). Measured
/// on the MNIST MLP of bench/native/bench_mnist_epoch.cpp (Adam, batch 64, 1 thread;
/// `--step manual|guarded`): the guarded step costs ~4-6 % more CPU than the manual one of
/// the same build (~8-14 % before the fused updates) and less than the manual step did
/// before; see bench/RESULTS.md. Other rules (RmsProp) and backends run their op chain out of place
/// and check with one Sum reduction per gradient and per updated parameter (a sum is finite
/// only if every term is; only a tensor whose sum is not finite is scanned on the host, to
/// count its nan and inf elements for the message). With gradient clipping the gradients
/// are checked by those sums before clipping (clipping by value would turn an inf finite).
///
/// PyTorch and Burn apply non-finite steps (PyTorch's clip_grad_norm_(error_if_nonfinite)
/// only checks the gradient norm); Kiln refuses them so that a run never continues from a
/// model it cannot recover.
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
#include "kiln/train/output.hpp"

namespace kiln::train {

/// Where a step is in a run, for the messages of a refused step.
struct StepPosition {
  std::string_view op;     ///< who steps, first in messages: "SupervisedTraining", "Learner.fit"
  std::int64_t epoch = 0;  ///< 1-based; 0: not in an epoch (the message then names the step)
  std::int64_t batch = 0;  ///< 1-based batch of the epoch, or the step's number if epoch is 0
};

namespace detail {

/// "NaN", "inf" or "-inf" for a non-finite value (its number otherwise).
std::string describe_non_finite(double value);

/// How many elements of a tensor are nan, +inf and -inf, of `total`.
struct NonFiniteCount {
  std::size_t nan = 0, pos_inf = 0, neg_inf = 0, total = 0;
  bool any() const noexcept { return nan + pos_inf + neg_inf != 0; }
};
/// Counts the non-finite elements of `data[0, n)` (engine/src/train/step.cpp).
NonFiniteCount count_non_finite(const float* data, std::size_t n);
/// "2 NaN and 1 inf of 32 values" (the kinds present; engine/src/train/step.cpp).
std::string describe_count(const NonFiniteCount& count);

/// Throws NonFiniteError "<at.op>: <what> at epoch e, batch b (the step was not applied: the
/// model is that of the previous step)" ("at step b" when at.epoch is 0).
[[noreturn]] void throw_refused_step(const StepPosition& at, std::string_view what);

/// The non-finite elements of `t`, or nullopt if all are finite: one Sum reduction, and a
/// host scan only if the sum is not finite (see the top of this file).
template <Backend I, std::size_t D>
std::optional<NonFiniteCount> non_finite_elements(const Tensor<I, D>& t) {
  if (std::isfinite(static_cast<double>(t.sum().into_scalar()))) return std::nullopt;
  const auto host = t.to_data().template to_vec<float>();
  NonFiniteCount count = count_non_finite(host.data(), host.size());
  if (!count.any()) return std::nullopt;  // finite elements whose sum overflowed
  return count;
}

/// "fc1.weight" (the parameter's path in the module), or its id for an unnamed one.
inline std::string param_name(const std::string& path, module::ParamId id) {
  return path.empty() ? str_cat("parameter ", id) : str_cat("parameter ", path);
}

/// Whether an item type carries a loss to check for nan/inf.
template <class T>
concept HasLoss = requires(const T& t) { t.loss.into_scalar(); };

/// Throws the refused-step error if `loss` is not finite.
inline void check_loss(double loss, const StepPosition& at) {
  if (!std::isfinite(loss)) throw_refused_step(at, str_cat("loss is ", describe_non_finite(loss)));
}

/// Whether `O` can compute a step without applying it (OptimizerAdaptor::stage and commit):
/// then train_step needs no copy of it and takes the finiteness of the gradients and updated
/// parameters from the step.
template <class O, class M, class B>
concept StagedStepOptimizer =
    requires(O& o, const M& m, optim::GradientsParams<B> g) {
  { o.commit(o.stage(optim::LearningRate{}, m, std::move(g), true)) } -> std::convertible_to<M>;
  { o.has_gradient_clipping() } -> std::convertible_to<bool>;
};

/// Step 3's check: throws the refused-step error for the first trainable parameter (in
/// visit order) whose gradient in `grads` is not finite; returns the ids of those with a
/// gradient.
template <class M, AutodiffBackend B>
std::unordered_set<module::ParamId> check_grads(const M& model,
                                                const optim::GradientsParams<B>& grads,
                                                const StepPosition& at) {
  std::unordered_set<module::ParamId> stepped;
  auto check_grad = [&](const std::string& path, const auto& param) {
    using P = std::remove_cvref_t<decltype(param)>;
    using T = typename P::Value;
    if constexpr (std::is_same_v<typename T::Kind, Float>) {
      if (!param.is_initialized() || !param.is_require_grad()) return;
      const auto grad = grads.template get<T::rank>(param.id());
      if (!grad) return;
      if (const auto bad = non_finite_elements(*grad)) {
        throw_refused_step(at, str_cat("the gradient of ", param_name(path, param.id()),
                                       " is not finite (", describe_count(*bad), ")"));
      }
      stepped.insert(param.id());
    }
  };
  model.visit(check_grad);
  return stepped;
}

/// The non-finite elements of a staged gradient or update (a rank-erased primitive).
template <Backend I>
NonFiniteCount count_primitive(const typename I::FloatTensor& t) {
  const auto host = I::FloatOps::into_data(t).template to_vec<float>();
  return count_non_finite(host.data(), host.size());
}

/// Steps 3 to 5 with a staged optimizer: stage the step, read the checks it made in the same
/// pass, commit only if all passed. The messages and their order are those of the copying
/// path below: the first non-finite gradient in visit order, else the first non-finite
/// update. With gradient clipping the gradients are checked before staging (clipping by
/// value would hide an inf).
template <class M, class O, AutodiffBackend B>
void apply_staged_step(M& model, O& optimizer, optim::LearningRate lr,
                       optim::GradientsParams<B> grads, const StepPosition& at) {
  if (optimizer.has_gradient_clipping()) check_grads(model, grads, at);
  auto staged = optimizer.stage(lr, model, std::move(grads), true);
  bool grads_ok = true, updates_ok = true;
  for (const auto& c : staged.checks) {
    grads_ok = grads_ok && c.grad_finite;
    updates_ok = updates_ok && c.update_finite;
  }
  if (!grads_ok || !updates_ok) {
    using Check = typename std::remove_cvref_t<decltype(staged.checks)>::value_type;
    std::unordered_map<module::ParamId, const Check*> by_id;
    for (const auto& c : staged.checks) by_id.emplace(c.id, &c);
    auto report = [&](bool grad) {
      return [&, grad](const std::string& path, const auto& param) {
        using P = std::remove_cvref_t<decltype(param)>;
        if constexpr (std::is_same_v<typename P::Value::Kind, Float>) {
          const auto it = by_id.find(param.id());
          if (it == by_id.end() || (grad ? it->second->grad_finite : it->second->update_finite)) {
            return;
          }
          using I = typename B::Inner;
          const NonFiniteCount count =
              count_primitive<I>(grad ? it->second->grad : it->second->update);
          if (grad) {
            throw_refused_step(at, str_cat("the gradient of ", param_name(path, param.id()),
                                           " is not finite (", describe_count(count), ")"));
          }
          throw_refused_step(at, str_cat("the update of ", param_name(path, param.id()),
                                         " with learning rate ", lr, " is not finite (",
                                         describe_count(count), ")"));
        }
      };
    };
    auto report_grad = report(true);
    auto report_update = report(false);
    if (!grads_ok) model.visit(report_grad);
    model.visit(report_update);
  }
  model = optimizer.commit(std::move(staged));
}

/// Steps 3 to 5 of train_step (see the top of this file) with gradients already taken.
template <class M, class O, AutodiffBackend B>
void apply_checked_step(M& model, O& optimizer, optim::LearningRate lr,
                        optim::GradientsParams<B> grads, const StepPosition& at) {
  if constexpr (StagedStepOptimizer<O, M, B>) {
    apply_staged_step(model, optimizer, lr, std::move(grads), at);
  } else {
    // The trainable parameters that have a gradient: their gradients must be finite.
    const std::unordered_set<module::ParamId> stepped = check_grads(model, grads, at);
    O before = optimizer;  // the state to restore if the step is refused (shares its tensors)
    try {
      M updated = optimizer.step(lr, model, std::move(grads));
      auto check_param = [&](const std::string& path, const auto& param) {
        using P = std::remove_cvref_t<decltype(param)>;
        using T = typename P::Value;
        if constexpr (std::is_same_v<typename T::Kind, Float>) {
          if (!param.is_initialized() || stepped.count(param.id()) == 0) return;
          if (const auto bad = non_finite_elements(param.val().inner())) {
            throw_refused_step(at, str_cat("the update of ", param_name(path, param.id()),
                                           " with learning rate ", lr, " is not finite (",
                                           describe_count(*bad), ")"));
          }
        }
      };
      updated.visit(check_param);
      model = std::move(updated);
    } catch (...) {
      optimizer = std::move(before);
      throw;
    }
  }
}

}  // namespace detail

/// What train_step asks of an optimizer: `optimizer.step(lr, model, grads)` returns the
/// updated model (optim::OptimizerAdaptor does), and copies of the optimizer hold its state
/// (to restore it when a step is refused).
template <class O, class M, class B>
concept StepOptimizer = std::copyable<O> && requires(O& o, const M& m, optim::GradientsParams<B> g) {
  { o.step(optim::LearningRate{}, m, std::move(g)) } -> std::convertible_to<M>;
};

/// One training step of `model` on `batch` through the model's TrainStep
/// (`model.train_step(batch)`: forward, loss, backward), guarded as the top of this file
/// says, at learning rate `lr`. Returns the step's item (the outputs for the metrics).
/// Shapes: as the model's train_step.
/// Throws: NonFiniteError "<at.op>: loss is NaN at epoch e, batch b (the step was not
///         applied: the model is that of the previous step)", or naming the gradient
///         ("the gradient of parameter fc1.weight is not finite (2 NaN of 32 values)") or the
///         updated parameter ("the update of parameter fc1.weight with learning rate 1e+30 is
///         not finite (32 inf of 32 values)"); ValueError if lr is negative or not finite;
///         whatever the model's step and the optimizer throw. When it throws, `model` and
///         `optimizer` are as they were.
template <class M, class O, class I>
requires TrainStep<M, I> &&
    StepOptimizer<O, M, typename decltype(std::declval<const M&>().train_step(
                            std::declval<const I&>()))::B>
auto train_step(M& model, O& optimizer, optim::LearningRate lr, const I& batch,
                const StepPosition& at) {
  auto output = model.train_step(batch);
  if constexpr (detail::HasLoss<decltype(output.item)>) {
    detail::check_loss(static_cast<double>(output.item.loss.into_scalar()), at);
  }
  detail::apply_checked_step(model, optimizer, lr, std::move(output.grads), at);
  return std::move(output.item);
}

/// One training step of `model` with a loss callback: `loss_fn(model)` runs the forward
/// pass and returns an item whose `loss` is a tensor [1] on an autodiff backend (a
/// ClassificationOutput, say); train_step checks the loss, runs its backward, and guards and
/// applies the update as the other overload. Returns the item.
/// Throws: as the other overload; the loss is checked before the backward.
template <class M, class O, class LossFn>
requires std::invocable<LossFn&, const M&> &&
    requires(std::invoke_result_t<LossFn&, const M&> item) { item.loss.backward(); } &&
    StepOptimizer<O, M,
                  typename decltype(std::declval<std::invoke_result_t<LossFn&, const M&>&>()
                                        .loss)::Backend>
auto train_step(M& model, O& optimizer, optim::LearningRate lr, LossFn&& loss_fn,
                const StepPosition& at) {
  using Item = std::invoke_result_t<LossFn&, const M&>;
  using B = typename decltype(std::declval<Item&>().loss)::Backend;
  Item item = loss_fn(std::as_const(model));
  detail::check_loss(static_cast<double>(item.loss.into_scalar()), at);
  auto grads = optim::GradientsParams<B>::from_grads(item.loss.backward(), model);
  detail::apply_checked_step(model, optimizer, lr, std::move(grads), at);
  return item;
}

}  // namespace kiln::train
