#pragma once
/// GradientsParams<B> (Burn's `GradientsParams`): the gradients of a module's parameters,
/// keyed by ParamId, on the inner backend. GradientsAccumulator<B> sums several of them
/// (gradient accumulation over micro-batches, Burn's `GradientsAccumulator`).
///
///   auto grads = model.forward(x).sum().backward();                 // B::Gradients
///   auto grads_params = GradientsParams<B>::from_grads(grads, model);  // by ParamId
///   model = optim.step(lr, model, std::move(grads_params));
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/module.hpp"
#include "kiln/module/param.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::optim {

using module::Param;
using module::ParamId;

/// Gradients of parameters, keyed by ParamId, stored on `B::Inner` (no graph) and
/// rank-erased (each entry keeps its own shape; `get<D>` names the rank).
template <AutodiffBackend B>
class GradientsParams {
 public:
  using Inner = typename B::Inner;
  /// The inner backend's rank-erased float tensor.
  using Primitive = typename Inner::FloatTensor;

  /// Empty.
  GradientsParams() = default;

  /// Takes the gradient of every Float parameter of `module` out of `grads` (Burn's
  /// `GradientsParams::from_grads`). Parameters without a gradient (frozen, not on the
  /// loss's path, empty) get no entry. Consumes `grads`.
  template <class M>
  static GradientsParams from_grads(typename B::Gradients grads, const M& module) {
    return from_module(grads, module);
  }

  /// As from_grads, removing the module's gradients from `grads` and leaving the others
  /// there (Burn's `from_module`: one backward, several modules with their own optimizers).
  template <class M>
  static GradientsParams from_module(typename B::Gradients& grads, const M& module) {
    GradientsParams out;
    auto take = [&](const std::string&, const auto& param) { out.take_grad(grads, param); };
    module.visit(take);
    return out;
  }

  /// The gradient of parameter `id` (nullopt if absent). Keeps it here (see remove).
  /// Throws: RankError if the stored gradient's rank is not D.
  template <std::size_t D>
  std::optional<Tensor<Inner, D>> get(ParamId id) const {
    auto grad = get_primitive(id, D);
    if (!grad) return std::nullopt;
    return Tensor<Inner, D>(std::move(*grad));
  }
  /// get with the rank a run-time value: the primitive of parameter `id`'s gradient.
  /// Throws: RankError if the stored gradient's rank is not `rank`.
  std::optional<Primitive> get_primitive(ParamId id, std::size_t rank) const {
    auto it = grads_.find(id);
    if (it == grads_.end()) return std::nullopt;
    check_rank("GradientsParams::get", id, it->second, rank);
    return it->second;
  }

  /// Takes the gradient of parameter `id` out (nullopt if absent).
  /// Throws: RankError if the stored gradient's rank is not D (the entry stays).
  template <std::size_t D>
  std::optional<Tensor<Inner, D>> remove(ParamId id) {
    auto grad = remove_primitive(id, D);
    if (!grad) return std::nullopt;
    return Tensor<Inner, D>(std::move(*grad));
  }
  /// remove with the rank a run-time value (one copy of the code for every rank: the
  /// optimizers use it): the primitive of parameter `id`'s gradient, taken out.
  /// Throws: RankError if the stored gradient's rank is not `rank` (the entry stays).
  std::optional<Primitive> remove_primitive(ParamId id, std::size_t rank) {
    auto it = grads_.find(id);
    if (it == grads_.end()) return std::nullopt;
    check_rank("GradientsParams::remove", id, it->second, rank);
    Primitive out(std::move(it->second));
    grads_.erase(it);
    return out;
  }

  /// Sets (replaces) the gradient of parameter `id` (Burn's `register`, a C++ keyword).
  template <std::size_t D>
  void insert(ParamId id, Tensor<Inner, D> grad) {
    insert_primitive(id, std::move(grad).into_primitive());
  }
  /// insert of a rank-erased primitive.
  void insert_primitive(ParamId id, Primitive grad) {
    grads_.insert_or_assign(id, std::move(grad));
  }

  /// Number of gradients (Burn's `len`).
  std::size_t len() const noexcept { return grads_.size(); }
  bool is_empty() const noexcept { return grads_.empty(); }
  bool contains(ParamId id) const { return grads_.count(id) != 0; }
  /// The ids that have a gradient, in no particular order.
  std::vector<ParamId> ids() const {
    std::vector<ParamId> out;
    out.reserve(grads_.size());
    for (const auto& entry : grads_) out.push_back(entry.first);
    return out;
  }

  /// Calls f(id, primitive) for every gradient (rank-erased; gradient clipping uses it).
  template <class F>
  void for_each_primitive(F&& f) const {
    for (const auto& [id, grad] : grads_) f(id, grad);
  }
  /// Replaces every gradient g by f(id, g); f must keep the shape.
  template <class F>
  void map_primitives(F&& f) {
    for (auto& [id, grad] : grads_) grad = f(id, std::move(grad));
  }

 private:
  template <Backend BB, std::size_t D, TensorKind K>
  void take_grad(typename B::Gradients& grads, const Param<Tensor<BB, D, K>>& param) {
    static_assert(std::is_same_v<BB, B>,
                  "GradientsParams<B>::from_grads: the module must live on the autodiff backend B");
    if constexpr (std::is_same_v<K, Float>) {
      if (!param.is_initialized()) return;
      if (auto grad = param.val().grad_remove(grads)) {
        grads_.insert_or_assign(param.id(), std::move(*grad).into_primitive());
      }
    }
  }

  static void check_rank(const char* op, ParamId id, const Primitive& grad, std::size_t rank) {
    const Shape shape = Inner::FloatOps::shape(grad);
    if (shape.rank() != rank) {
      throw_error<RankError>(op, ": the gradient of parameter ", id, " has rank ", shape.rank(),
                             " (shape ", shape, "), asked for rank ", rank);
    }
  }

  std::unordered_map<ParamId, Primitive> grads_;
};

/// Sums the gradients of several backward passes (Burn's `GradientsAccumulator`), e.g.
/// micro-batches of one large batch:
///
///   GradientsAccumulator<B> accumulator;
///   for (auto& micro : micro_batches) {
///     auto grads = loss(model, micro).backward();
///     accumulator.accumulate(model, GradientsParams<B>::from_grads(grads, model));
///   }
///   model = optim.step(lr, model, accumulator.grads());
template <AutodiffBackend B>
class GradientsAccumulator {
 public:
  using Inner = typename B::Inner;

  /// Adds `grads` to the running sums for each Float parameter of `module`; gradients of
  /// ids that are not parameters of `module` are dropped (as Burn's visitor does).
  /// Throws: ShapeError if a gradient's shape differs from the running sum's.
  template <class M>
  void accumulate(const M& module, GradientsParams<B> grads) {
    auto add = [&](const std::string&, const auto& param) { add_param(param, grads); };
    module.visit(add);
  }

  /// The sums, resetting the accumulator to empty.
  GradientsParams<B> grads() { return std::exchange(sums_, GradientsParams<B>()); }

 private:
  template <Backend BB, std::size_t D, TensorKind K>
  void add_param(const Param<Tensor<BB, D, K>>& param, GradientsParams<B>& grads) {
    if constexpr (std::is_same_v<K, Float>) add_erased(param.id(), D, grads);
  }
  /// add_param of a Float parameter of rank `rank`, rank-erased.
  void add_erased(ParamId id, std::size_t rank, GradientsParams<B>& grads) {
    using Ops = typename Inner::FloatOps;
    auto fresh = grads.remove_primitive(id, rank);
    if (!fresh) return;
    if (const auto sum = sums_.get_primitive(id, rank)) {
      const Shape sum_shape = Ops::shape(*sum);
      const Shape fresh_shape = Ops::shape(*fresh);
      if (!(sum_shape == fresh_shape)) {
        throw_error<ShapeError>("GradientsAccumulator::accumulate: the gradient of parameter ", id,
                                " has shape ", fresh_shape, ", the accumulated one ", sum_shape);
      }
    }
    auto sum = sums_.remove_primitive(id, rank);
    sums_.insert_primitive(id, sum ? Ops::binary(BinaryOp::Add, std::move(*sum), std::move(*fresh))
                                   : std::move(*fresh));
  }

  GradientsParams<B> sums_;
};

}  // namespace kiln::optim
