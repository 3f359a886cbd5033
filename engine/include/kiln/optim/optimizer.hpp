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
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/optim/grads.hpp"

namespace kiln::optim {

/// A learning rate: the step size of one optimizer step (Burn's `LearningRate`, f64).
using LearningRate = double;

/// Throws ValueError (`<op>: learning rate must be finite and >= 0, got <lr>`) unless lr is
/// finite and >= 0 (PyTorch rejects lr < 0; lr = 0 is allowed and changes nothing but the
/// state).
void check_learning_rate(std::string_view op, LearningRate lr);

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
  /// The rule O.
  const O& optimizer() const noexcept { return optim_; }

 private:
  template <Backend BB, std::size_t D, TensorKind K>
  static void select_grad(const Param<Tensor<BB, D, K>>& param, GradientsParams<B>& from,
                          GradientsParams<B>& to) {
    static_assert(std::is_same_v<BB, B>,
                  "Optimizer::step: the module must live on the optimizer's autodiff backend B");
    if constexpr (std::is_same_v<K, Float>) {
      if (!param.is_initialized() || !param.is_require_grad()) return;
      auto grad = from.template remove<D>(param.id());
      if (!grad) return;
      if (!(grad->shape() == param.shape())) {
        throw ShapeError(str_cat("Optimizer::step: the gradient of parameter ", param.id(),
                                 " has shape ", grad->shape(), ", the parameter ", param.shape()));
      }
      to.insert(param.id(), std::move(*grad));
    }
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

  O optim_;
  std::optional<GradientClipping> clipping_;
  Record states_;
};

namespace detail {
/// Config checks shared by the optimizer configs (engine/src/optim/checks.cpp). Each throws
/// ConfigError `<op>: <field> must be <range>, got <value>`.
void check_finite_min(std::string_view op, std::string_view field, double value, double min);
void check_unit_interval(std::string_view op, std::string_view field, double value,
                         bool include_one);
}  // namespace detail

}  // namespace kiln::optim
