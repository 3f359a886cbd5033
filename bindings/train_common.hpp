#pragma once
/// Shared by the model, optimizer, data and training TUs (bindings/nn_*.cpp,
/// bindings/train_*.cpp): the C++ state behind the JS objects `Sequential` (RawModel),
/// optimizers (RawOptimizer), `Dataset` (RawDataset) and the functions one TU defines for
/// another, so that each heavy template (Sequential's forward is in the engine; the
/// optimizers' step over a Sequential in train_optim.cpp) is compiled once.
#include <emscripten/val.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "js_tensor.hpp"
#include "kiln/data/vision/mnist.hpp"
#include "kiln/nn/sequential.hpp"
#include "kiln/optim/grads.hpp"
#include "kiln/optim/lr_scheduler.hpp"
#include "kiln/optim/lr_scheduler_cycle.hpp"
#include "kiln/train/deferred_step.hpp"
#include "kiln/train/step.hpp"

namespace kiln_js {

using Model = kiln::nn::Sequential<AD>;
using InferenceModel = kiln::nn::Sequential<Inner>;
using Activation = kiln::nn::SequentialActivation<AD>;
using InferenceActivation = kiln::nn::SequentialActivation<Inner>;

/// A model's state, shared by its JS handle and the Learners that train it (a Learner keeps
/// the model alive after the JS handle is disposed).
struct ModelState {
  kiln::nn::SequentialConfig config;
  Model model;
  bool training = true;  ///< model.train() / model.eval()
  bool single = false;   ///< a single layer (kiln.nn.linear(...)): keys without "0."
};

/// The Embind class "RawModel".
struct JsModel {
  std::shared_ptr<ModelState> state;
};

/// The learning rate of each optimizer step (kiln.optim.schedule.*): one of the engine's
/// schedulers; `step()` advances it.
struct Schedule {
  std::variant<kiln::optim::ConstantLr, kiln::optim::StepLrScheduler,
               kiln::optim::ExponentialLrScheduler, kiln::optim::LinearLrScheduler,
               kiln::optim::CosineAnnealingLrScheduler, kiln::optim::NoamLrScheduler,
               kiln::optim::OneCycleLrScheduler>
      scheduler{kiln::optim::ConstantLr(1e-3)};
  double step() {
    return std::visit([](auto& s) { return s.step(); }, scheduler);
  }
};

/// A schedule from its JSON's tree ({"kind": "cosine", "initial_lr": ..., ...}, snake_case; a
/// plain number is a constant rate). Throws ConfigError naming the field (train_optim.cpp).
Schedule schedule_from_value(const kiln::config::Value& spec);
/// schedule_from_value of JSON text (a saved state's); ConfigError also for malformed JSON.
Schedule schedule_from_json(const std::string& json);

struct OptimizerImpl;  // the engine's optimizer (variant of OptimizerAdaptor), train_optim.cpp

/// An optimizer with its schedule and per-parameter state (moments), shared by the JS
/// handle and the Learners that use it.
struct OptimizerState {
  std::shared_ptr<OptimizerImpl> impl;
  Schedule schedule;
  std::string kind;        ///< "sgd", "adam", "adamW", "rmsProp"
  double last_lr = 0.0;    ///< the rate of the last step (NaN before the first)
  std::int64_t steps = 0;  ///< optimizer steps taken
  /// The schedule's spec (schedule_from_value), so that a saved state can replay it: the
  /// schedule after `steps` steps is schedule_from_value(schedule_spec) stepped `steps` times.
  kiln::config::Value schedule_spec;
  /// Steps already taken when `schedule` was made from schedule_spec (set_lr, setSchedule).
  std::int64_t schedule_start = 0;
};

/// The Embind class "RawOptimizer".
struct JsOptimizer {
  std::shared_ptr<OptimizerState> state;
};

/// One optimizer step on `model` with `grads`, at the schedule's next rate (train_optim.cpp):
/// the JS optimizer.step(model, grads) of a hand-written loop (no guard, as PyTorch's).
/// Throws: as OptimizerAdaptor::step.
#if KILN_JS_AUTODIFF  // training only (train_optim.cpp); not in kiln-dl/inference's engine
void optimizer_step(OptimizerState& optimizer, ModelState& model,
                    kiln::optim::GradientsParams<AD> grads);
#endif

/// A Learner step's outputs: the batch's loss [1] (its graph is what the step's backward
/// runs) and its number of correct predictions (NaN when accuracy is not defined).
struct StepItem {
  kiln::Tensor<AD, 1> loss;
  double correct = 0;
  /// The correct predictions as f32 [1] on the device, instead of `correct`, on a backend
  /// without synchronous reads (the webgpu engine); absent when accuracy is not defined.
  std::optional<kiln::Tensor<Inner, 1>> correct_device;
};

/// One guarded training step of the Learner (kiln::train::train_step with the loss callback
/// `loss_fn`: forward and loss) at the schedule's next rate (train_optim.cpp). The schedule,
/// the step count and the last rate advance only when the step is applied.
/// Throws: NonFiniteError naming `at` when the loss, a gradient or an updated parameter is
///         not finite; then the model, the optimizer's state and its schedule are unchanged.
///         Whatever loss_fn and the optimizer throw (also leaving them unchanged).
StepItem learner_step(OptimizerState& optimizer, ModelState& model,
                      const std::function<StepItem(const Model&)>& loss_fn,
                      const kiln::train::StepPosition& at);

/// The Learner's steps guarded on the device (the webgpu engine, whose reads are
/// asynchronous: kiln/train/deferred_step.hpp): the guard, and the optimizer's host-side
/// counters before each pending step, to put back when the status read shows a refusal.
struct DeferredSteps {
  struct Counters {
    Schedule schedule;
    double last_lr = 0.0;
    std::int64_t steps = 0;
  };
  kiln::train::DeferredGuard<Inner> guard;
  std::vector<Counters> before;
};

/// learner_step guarded on the device: the step is recorded in `deferred` and committed
/// masked by its finiteness (no read). The schedule, step count and last rate advance at
/// once and are put back by learner_settle if the step turns out refused.
/// Throws: whatever loss_fn and the optimizer throw (then nothing changed).
StepItem learner_step_deferred(OptimizerState& optimizer, ModelState& model,
                               const std::function<StepItem(const Model&)>& loss_fn,
                               DeferredSteps& deferred, const kiln::train::StepPosition& at);

/// Settles the pending deferred steps with the guard's status read on the host (4 values).
/// Throws: NonFiniteError naming the first refused step (its position and check) after
///         putting the optimizer back as it was before that step (the model's tensors were
///         never changed by it); ValueError for a status that does not fit the guard.
void learner_settle(OptimizerState& optimizer, DeferredSteps& deferred,
                    std::span<const float> status);

struct JsParamList;
/// optimizer_step_list guarded on the device (the webgpu engine's trainStep path): the step of
/// the list's parameters with `grads` (list_gradients of the loss's backward), recorded in
/// `deferred` and committed masked by the finiteness of `loss` (the step's loss), each
/// gradient and each update (kiln::train::deferred_step_with_grads; no read). Writes the
/// (masked) values back; the schedule, step count and last rate advance at once and are put
/// back by learner_settle if the step turns out refused.
/// Throws: whatever the optimizer throws (then nothing changed).
#if KILN_JS_AUTODIFF
void optimizer_step_list_deferred(OptimizerState& optimizer, JsParamList& list,
                                  const Inner::FloatTensor& loss, kiln::optim::GradientsParams<AD> grads,
                                  DeferredSteps& deferred, const kiln::train::StepPosition& at);
#endif

// ---------------------------------------------------------------- data

/// The arrays of a dataset, in WebAssembly memory once (a JS Dataset and its shuffles,
/// splits and takes share them).
struct DataStore {
  std::vector<float> x;                                   ///< [n, item...] (fromArrays)
  std::optional<kiln::data::vision::MnistDataset> mnist;  ///< u8 pixels (mnist), normalised on use
  std::vector<std::int64_t> item_shape;                   ///< per item, 1 to 4 dims
  std::int64_t item_size = 0;
  std::vector<std::int32_t> labels;   ///< class targets [n] (int targets)
  std::vector<float> targets;         ///< float targets [n, target...] (float targets)
  std::vector<std::int64_t> target_shape;  ///< per item (float targets), 1 to 4 dims
  std::int64_t target_size = 0;
  std::int64_t num_classes = 0;  ///< 0: unknown (int targets: max label + 1 when not given)
  std::size_t count = 0;         ///< items
  bool int_targets() const noexcept { return target_size == 0; }
};

/// The Embind class "RawDataset": a view (item indices) of a DataStore.
struct JsDataset {
  std::shared_ptr<const DataStore> store;
  std::shared_ptr<const std::vector<std::uint32_t>> index;  ///< items of the view, in order
  std::size_t len() const noexcept { return index ? index->size() : 0; }
};

/// Writes the inputs of items index[begin, end) of `data`, row-major, to `out`
/// ((end - begin)·item_size floats; MNIST normalised as MnistBatcher) (train_data.cpp).
void gather_inputs(const JsDataset& data, std::size_t begin, std::size_t end, float* out);

// ---------------------------------------------------------------- tensors

/// A float AD tensor of shape [n, item...] from the Cpu primitive `p` (rank 2..5).
Activation activation_from(Prim p);
/// The JsTensor of an activation (graph node kept).
JsTensor js_from_activation(const Activation& a);
#if KILN_JS_AUTODIFF  // else InferenceActivation is Activation
/// The JsTensor (untracked) of an inference activation.
JsTensor js_from_activation(const InferenceActivation& a);
#endif
/// A JS float tensor of rank 2..5 -> an activation; ShapeError naming `op` otherwise.
Activation activation_from_js(const JsTensor& t, const char* op);

/// A copy of `p`'s floats in a new Float32Array.
emscripten::val float32_array_from(const Prim& p);
/// Copies a JS typed array (Float32Array / Int32Array) into a new Cpu primitive of `shape`.
/// Throws TypeError unless `data` is of the JS type of `dtype`; ShapeError on a length that
/// is not shape's element count. `op` and `what` name the call and argument.
Prim primitive_from_typed(const emscripten::val& data, const kiln::Shape& shape,
                                     kiln::DType dtype, const char* op, const char* what);

}  // namespace kiln_js
