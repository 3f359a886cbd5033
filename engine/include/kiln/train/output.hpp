#pragma once
/// What a training or inference step returns (Burn's `burn::train::ClassificationOutput`,
/// `RegressionOutput` and `TrainOutput`), and the step concepts the Learner drives
/// (Burn's `TrainStep` / `InferenceStep` traits):
///
///   template <Backend B> struct Model {
///     ...
///     train::ClassificationOutput<B> forward_classification(images, targets) const;
///     // on Autodiff<Cpu>: one training step's gradients and outputs
///     train::TrainOutput<train::ClassificationOutput<B>> train_step(const MnistBatch<B>& b) const {
///       auto item = forward_classification(b.images, b.targets);
///       return {*this, item.loss.backward(), std::move(item)};
///     }
///     // on the inference backend (the valid() model): outputs only
///     train::ClassificationOutput<B> inference_step(const MnistBatch<B>& b) const {
///       return forward_classification(b.images, b.targets);
///     }
///   };
#include <concepts>
#include <utility>

#include "kiln/backend/backend.hpp"
#include "kiln/optim/grads.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::train {

/// A classification step's outputs: what AccuracyMetric and LossMetric read.
template <Backend B>
struct ClassificationOutput {
  using backend_type = B;
  Tensor<B, 1> loss;          ///< [1], the batch's mean loss
  Tensor<B, 2> output;        ///< [batch_size, num_classes], the logits
  Tensor<B, 1, Int> targets;  ///< [batch_size], the true classes
};

/// A regression step's outputs: what LossMetric reads.
template <Backend B>
struct RegressionOutput {
  using backend_type = B;
  Tensor<B, 1> loss;     ///< [1]
  Tensor<B, 2> output;   ///< [batch_size, d_output]
  Tensor<B, 2> targets;  ///< [batch_size, d_output]
};

/// A training step's result: the gradients of the model's parameters (by ParamId) and the
/// step's outputs `item` for the metrics. T names its backend as `T::backend_type` (an
/// AutodiffBackend), as ClassificationOutput and RegressionOutput do.
template <class T>
struct TrainOutput {
  using B = typename T::backend_type;
  static_assert(AutodiffBackend<B>, "TrainOutput: the item must live on an autodiff backend");

  optim::GradientsParams<B> grads;
  T item;

  /// Takes the gradients of `module`'s parameters out of `grads` (Burn's `TrainOutput::new`).
  template <class M>
  TrainOutput(const M& module, typename B::Gradients grads, T item)
      : grads(optim::GradientsParams<B>::from_grads(std::move(grads), module)),
        item(std::move(item)) {}
};

/// M trains on batches of type I: `m.train_step(batch)` returns a TrainOutput.
template <class M, class I>
concept TrainStep = requires(const M& model, const I& batch) {
  { model.train_step(batch).grads };
  { model.train_step(batch).item };
};

/// M infers on batches of type I: `m.inference_step(batch)` returns the outputs the
/// validation metrics read.
template <class M, class I>
concept InferenceStep = requires(const M& model, const I& batch) {
  { model.inference_step(batch) };
};

}  // namespace kiln::train
