// Training in JS: the Embind class RawLearner. Each bound call runs whole steps in C++:
// gather the batch from the dataset's arrays in WebAssembly memory (or copy the typed arrays
// of trainBatch once), then kiln::train::train_step (forward, loss, the non-finite guard,
// backward, clipping, optimizer step: the step C++'s SupervisedTraining runs), loss and
// accuracy, so a JS training loop costs one call per batch (or per `batchesPerCall`
// batches). A step that is not finite is refused (NonFinite) and changes nothing. Also
// evaluation / prediction in inference mode (the model's valid(): dropout off, batch_norm on
// running statistics). The losses of kiln.loss are in train_loss.cpp.
#include <emscripten/bind.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/core/checked.hpp"
#include "kiln/data/rng.hpp"
#include "kiln/tensor/activation.hpp"
#include "config_js.hpp"
#include "module_params.hpp"
#include "train_common.hpp"
#include "train_loss.hpp"

using emscripten::val;

namespace kiln_js {
namespace {

using kiln::nn::loss::Reduction;

/// The targets of a batch on the host: class labels [n], or float values of `shape`
/// ([n, target...]).
struct HostTargets {
  std::vector<std::int32_t> labels;
  std::vector<float> values;
  kiln::Shape shape;  ///< of values
  bool has_labels = false;
};

/// A batch's loss (a [1] tensor on backend B) and its number of correct predictions.
template <kiln::Backend B>
struct LossOut {
  kiln::Tensor<B, 1> loss;
  double correct = 0;  ///< NaN when accuracy is not defined for the output
  /// The webgpu engine's correct predictions, f32 [1] on the device (no synchronous read);
  /// absent when accuracy is not defined.
  std::optional<kiln::Tensor<Inner, 1>> correct_device;
};

/// Whether this engine's reads are asynchronous (the webgpu engine): the Learner then keeps
/// its losses and counts on the device and guards its steps there (DeferredSteps), and JS
/// reads them every `batchesPerCall` steps (pendingTotals, settle).
#if defined(KILN_BACKEND_WGPU)
constexpr bool kDeviceTotals = true;
/// The webgpu engine reads asynchronously: Learner.predict (and evaluate, trainBatch), which
/// return values synchronously, throw StateError naming the asynchronous way.
[[noreturn]] void throw_sync_learner(const char* op, const char* instead) {
  kiln::throw_error<kiln::StateError>(
      op, ": the webgpu backend reads tensors asynchronously: ", instead);
}

#else
constexpr bool kDeviceTotals = false;
#endif

/// `t` on the inner backend (its value without the graph).
template <kiln::Backend B, std::size_t D, class K>
kiln::Tensor<Inner, D, K> inner_of(const kiln::Tensor<B, D, K>& t) {
  if constexpr (kiln::AutodiffBackend<B>) {
    return t.inner();
  } else {
    return t;
  }
}

/// A float batch [shape] whose values `fill(float*)` writes: in place on the Cpu, from a
/// host buffer uploaded on the webgpu backend.
template <class Fill>
Prim float_batch(const kiln::Shape& shape, Fill&& fill) {
#if defined(KILN_BACKEND_WGPU)
  std::vector<float> host(static_cast<std::size_t>(shape.num_elements()));
  fill(host.data());
  return InnerOps::from_data(kiln::TensorData(shape, std::move(host)), kiln::DType::F32, InnerDevice{});
#else
  Prim x(shape, kiln::DType::F32);
  fill(x.data<float>());
  return x;
#endif
}

/// Argmax per row of a [n, c] host buffer.
std::int64_t row_argmax(const float* row, std::int64_t c) {
  return std::max_element(row, row + c) - row;
}

template <kiln::Backend B>
LossOut<B> compute_loss(const LossSpec& spec, const kiln::nn::SequentialActivation<B>& out,
                        const HostTargets& t) {
  const kiln::Shape out_shape = kiln::nn::activation_shape<B>(out);
  const std::int64_t n = out_shape[0];
  if (spec.cross_entropy) {
    const auto* logits = std::get_if<kiln::Tensor<B, 2>>(&out);
    if (logits == nullptr) {
      kiln::throw_error<kiln::ShapeError>("crossEntropy: the model outputs ", out_shape,
                                          "; the loss needs logits [batch_size, num_classes]");
    }
    if (!t.has_labels) {
      kiln::throw_error<kiln::DTypeError>(
          "crossEntropy: targets must be int32 class labels (an Int32Array "
          "or a dataset with Int32Array y), got float32 targets");
    }
    const auto targets = kiln::Tensor<B, 1, kiln::Int>::from_data(
        kiln::TensorData(kiln::Shape{static_cast<std::int64_t>(t.labels.size())}, t.labels));
    LossOut<B> r{spec.ce.init<B>().forward(*logits, targets), 0.0};
    if constexpr (kDeviceTotals) {
      const auto predicted = inner_of(*logits).argmax(1).reshape(std::array<std::int64_t, 1>{n});
      r.correct_device = predicted.equal(inner_of(targets)).float_().sum();
      return r;
    }
    const auto host = logits->to_data().template to_vec<float>();
    const std::int64_t c = out_shape[1];
    for (std::int64_t i = 0; i < n; ++i) {
      r.correct += row_argmax(host.data() + i * c, c) == t.labels[static_cast<std::size_t>(i)];
    }
    return r;
  }
  // MSE: float targets of the output's shape, or class labels as one-hot rows.
  return std::visit(
      [&](const auto& y) -> LossOut<B> {
        using T = std::decay_t<decltype(y)>;
        constexpr std::size_t D = T::rank;
        std::vector<float> target_values;
        kiln::Shape target_shape;
        if (t.has_labels) {
          if constexpr (D != 2) {
            kiln::throw_error<kiln::ShapeError>("mse with class labels: the model outputs ",
                                                out_shape,
                                                "; one-hot targets need [batch_size, num_classes]");
          }
          const std::int64_t c = out_shape[1];
          target_values.assign(static_cast<std::size_t>(n * c), 0.f);
          for (std::int64_t i = 0; i < n; ++i) {
            const std::int32_t label = t.labels[static_cast<std::size_t>(i)];
            if (label < 0 || label >= c) {
              kiln::throw_error<kiln::IndexError>("mse with class labels: label ", label,
                                                  " at row ", i, " is not below the model's ", c,
                                                  " outputs");
            }
            target_values[static_cast<std::size_t>(i * c + label)] = 1.f;
          }
          target_shape = out_shape;
        } else {
          target_values = t.values;
          target_shape = t.shape;
        }
        if (!(target_shape == out_shape)) {
          kiln::throw_error<kiln::ShapeError>("mse: the model outputs ", out_shape,
                                              " but the targets are ", target_shape);
        }
        const auto targets = T::from_data(kiln::TensorData(target_shape, target_values));
        LossOut<B> r{kiln::nn::loss::reduce(spec.regression_no_reduction(y, targets), spec.reduction), 0.0};
        if constexpr (D == 2 && kDeviceTotals) {
          const auto out_values = inner_of(y);
          const auto want = inner_of(targets);
          r.correct_device = out_shape[1] == 1
                                 ? (out_values - want).abs().lower_elem(0.5).float_().sum()
                                 : out_values.argmax(1).equal(want.argmax(1)).float_().sum();
        } else if constexpr (D == 2) {
          const auto host = y.to_data().template to_vec<float>();
          const std::int64_t c = out_shape[1];
          for (std::int64_t i = 0; i < n; ++i) {
            const float* row = host.data() + i * c;
            const float* want = target_values.data() + i * c;
            if (c == 1) {
              r.correct += std::fabs(row[0] - want[0]) < 0.5f;
            } else {
              r.correct += row_argmax(row, c) == row_argmax(want, c);
            }
          }
        } else {
          r.correct = std::numeric_limits<double>::quiet_NaN();
        }
        return r;
      },
      out);
}

/// Sums over the batches of one call.
struct Totals {
  double loss_sum = 0;  ///< Σ batch loss · batch items
  double correct = 0;
  double items = 0;
  double batches = 0;
  double last_loss = std::numeric_limits<double>::quiet_NaN();
  void add(double loss, double correct_, std::size_t n) {
    loss_sum += loss * static_cast<double>(n);
    correct += correct_;
    items += static_cast<double>(n);
    batches += 1;
    last_loss = loss;
  }
  val to_js(bool done = false) const {
    val out = val::object();
    out.set("loss", items > 0 ? loss_sum / items : std::numeric_limits<double>::quiet_NaN());
    out.set("accuracy", items > 0 ? correct / items : std::numeric_limits<double>::quiet_NaN());
    out.set("lossSum", loss_sum);
    out.set("correct", correct);
    out.set("items", items);
    out.set("batches", batches);
    out.set("lastLoss", last_loss);
    out.set("done", done);
    return out;
  }
};

struct LearnerState {
  std::shared_ptr<ModelState> model;
  std::shared_ptr<OptimizerState> optimizer;
  LossSpec loss;
  std::vector<std::int64_t> input_shape;  ///< per item; empty: [x.length / n]
  std::uint64_t seed = 0;
  std::int64_t epoch = 0;  ///< epochs begun over the learner's life (the shuffle seeds)
  std::int64_t fit_epoch = 0;  ///< the epoch of the fit() in progress, 1-based (messages)
  // The epoch in progress (beginEpoch / trainBatches).
  JsDataset epoch_data;
  std::size_t batch_size = 32;
  std::size_t cursor = 0;
#if defined(KILN_BACKEND_WGPU)
  // The webgpu engine's totals since the last settle: sums on the device, counts on the host.
  DeferredSteps deferred;
  std::optional<kiln::Tensor<Inner, 1>> loss_sum, correct_sum, last_loss;
  Totals pending;
  bool accuracy = true;  ///< every pending batch had an accuracy
#endif
};

}  // namespace

/// The Embind class "RawLearner".
struct JsLearner {
  std::shared_ptr<LearnerState> state;
};

namespace {

LearnerState& state_of(const JsLearner& l) {
  if (!l.state) kiln::throw_error<kiln::StateError>("Learner: it was disposed");
  return *l.state;
}

/// One training step: kiln::train::train_step (forward in training mode, loss, the
/// non-finite guard, backward, clipping, optimizer step) through learner_step. `at` names the
/// step in the NonFiniteError of a refused step, after which nothing has changed.
#if defined(KILN_BACKEND_WGPU)
/// Adds a batch's loss and correct count to the pending device totals.
void add_pending(LearnerState& s, const kiln::Tensor<Inner, 1>& loss,
                 const std::optional<kiln::Tensor<Inner, 1>>& correct, std::size_t n) {
  const auto weighted = loss.mul_scalar(static_cast<double>(n));
  s.loss_sum = s.loss_sum ? *s.loss_sum + weighted : weighted;
  s.last_loss = loss;
  if (correct) {
    s.correct_sum = s.correct_sum ? *s.correct_sum + *correct : *correct;
  } else {
    s.accuracy = false;
  }
  s.pending.add(0.0, 0.0, n);
}
#endif

void train_step(LearnerState& s, Prim x, const HostTargets& t, Totals& totals,
                const kiln::train::StepPosition& at) {
  const std::size_t n = static_cast<std::size_t>(x.shape()[0]);
  const Activation input = activation_from(std::move(x));
#if defined(KILN_BACKEND_WGPU)
  (void)totals;
  const StepItem item = learner_step_deferred(
      *s.optimizer, *s.model,
      [&](const Model& model) {
        LossOut<AD> r = compute_loss<AD>(s.loss, model.forward_any(input), t);
        return StepItem{std::move(r.loss), 0.0, std::move(r.correct_device)};
      },
      s.deferred, at);
  add_pending(s, item.loss.inner(), item.correct_device, n);
#else
  const StepItem item = learner_step(
      *s.optimizer, *s.model,
      [&](const Model& model) {
        LossOut<AD> r = compute_loss<AD>(s.loss, model.forward_any(input), t);
        return StepItem{std::move(r.loss), r.correct};
      },
      at);
  totals.add(static_cast<double>(item.loss.inner().into_scalar()), item.correct, n);
#endif
}

/// The loss and correct predictions of one batch in inference mode.
void eval_step(LearnerState& s, const InferenceModel& model, Prim x,
               const HostTargets& t, Totals& totals) {
  const std::size_t n = static_cast<std::size_t>(x.shape()[0]);
  InferenceActivation in = std::visit(
      [](const auto& a) -> InferenceActivation { return a.inner(); }, activation_from(std::move(x)));
  const InferenceActivation out = model.forward_any(std::move(in));
  LossOut<Inner> r = compute_loss<Inner>(s.loss, out, t);
#if defined(KILN_BACKEND_WGPU)
  (void)totals;
  add_pending(s, r.loss, r.correct_device, n);
#else
  totals.add(static_cast<double>(r.loss.into_scalar()), r.correct, n);
#endif
}

std::size_t checked_count(double v, const char* op, const char* what) {
  if (!(v >= 0 && v <= 4294967295.0) || std::floor(v) != v) {
    kiln::throw_error<kiln::ValueError>(op, ": ", what, " must be an integer >= 0, got ", v);
  }
  return static_cast<std::size_t>(v);
}

/// [n, item...] for a batch of a dataset.
kiln::Shape batch_shape(std::size_t n, const std::vector<std::int64_t>& item) {
  std::vector<std::int64_t> dims{static_cast<std::int64_t>(n)};
  dims.insert(dims.end(), item.begin(), item.end());
  return kiln::Shape(dims);
}

/// Items [begin, end) of a dataset view: inputs as a Cpu primitive, targets on the host.
std::pair<Prim, HostTargets> gather(const JsDataset& data, std::size_t begin,
                                               std::size_t end) {
  const DataStore& s = *data.store;
  const std::size_t n = end - begin;
  Prim x = float_batch(batch_shape(n, s.item_shape),
                       [&](float* out) { gather_inputs(data, begin, end, out); });
  HostTargets t;
  const auto& index = *data.index;
  if (s.int_targets()) {
    t.has_labels = true;
    t.labels.resize(n);
    for (std::size_t i = 0; i < n; ++i) t.labels[i] = s.labels[index[begin + i]];
  } else {
    const auto size = static_cast<std::size_t>(s.target_size);
    t.values.resize(n * size);
    for (std::size_t i = 0; i < n; ++i) {
      std::copy_n(s.targets.data() + index[begin + i] * size, size, t.values.data() + i * size);
    }
    t.shape = batch_shape(n, s.target_shape);
  }
  return {std::move(x), std::move(t)};
}

JsLearner learner_create(const JsModel& model, const JsOptimizer& optimizer,
                         const val& loss, double seed, val input_shape) {
  return guarded([&] {
    if (!model.state) kiln::throw_error<kiln::StateError>("Learner: the model was disposed");
    if (!optimizer.state)
      kiln::throw_error<kiln::StateError>("Learner: the optimizer was disposed");
    auto s = std::make_shared<LearnerState>();
    s->model = model.state;
    s->optimizer = optimizer.state;
    s->loss = learner_loss_from_js(loss);
    if (!(seed >= 0) || std::floor(seed) != seed || seed > 9007199254740991.0) {
      kiln::throw_error<kiln::ValueError>("Learner: seed must be an integer >= 0, got ", seed);
    }
    s->seed = static_cast<std::uint64_t>(seed);
    AD::seed(s->seed);  // dropout masks
    if (!input_shape.isNull() && !input_shape.isUndefined()) {
      s->input_shape = ints_from_js(input_shape, "Learner", "inputShape");
      if (s->input_shape.empty() || s->input_shape.size() > 4) {
        kiln::throw_error<kiln::ShapeError>("Learner: inputShape must have 1 to 4 dims (per item)");
      }
      (void)s->model->config.output_item_shape(s->input_shape);  // errors name the layer
    }
    return JsLearner{std::move(s)};
  });
}

/// The item shape and count of a flat Float32Array x for this learner.
std::pair<std::size_t, std::vector<std::int64_t>> items_of(const LearnerState& s, std::size_t length,
                                                            std::size_t n_hint, const char* op) {
  std::int64_t item = 0;
  if (!s.input_shape.empty()) {
    item = kiln::checked::numel(op, s.input_shape, "inputShape");
  } else if (const auto size = s.model->config.input_item_size()) {
    item = *size;
    // A reshape's element count may pass 2^32, which wraps to 0 in wasm32's size_t below.
    kiln::checked::elements(op, item, "the model's input item size");
  } else if (n_hint > 0) {
    item = static_cast<std::int64_t>(length / n_hint);
  } else {
    kiln::throw_error<kiln::ConfigError>(op,
                                         ": cannot tell the item size of x: give the number of "
                                         "items, or the Learner's inputShape");
  }
  if (item < 1 || length % static_cast<std::size_t>(item) != 0) {
    kiln::throw_error<kiln::ShapeError>(op, ": x has ", length,
                                        " values, not a multiple of the item size ", item);
  }
  const std::size_t n = length / static_cast<std::size_t>(item);
  if (n_hint > 0 && n != n_hint) {
    kiln::throw_error<kiln::ShapeError>(op, ": x has ", length, " values: ", n, " items of ", item,
                                        ", not the ", n_hint, " given");
  }
  std::vector<std::int64_t> shape = s.input_shape;
  if (shape.empty()) shape = {item};
  return {n, shape};
}

/// trainBatch(x: Float32Array, y: Int32Array | Float32Array, n (0: infer)).
val learner_train_batch(const JsLearner& l, val x, val y, double n_hint) {
  return guarded([&] {
    LearnerState& s = state_of(l);
    const char* op = "Learner.trainBatch";
#if defined(KILN_BACKEND_WGPU)
    throw_sync_learner(op, "use await learner.fit(dataset) (it reads the loss every batchesPerCall steps)");
#endif
    if (!val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", x)) {
      kiln::throw_error<kiln::TypeError>(op, ": x must be a Float32Array");
    }
    const bool labels = val::global("Int32Array")["prototype"].call<bool>("isPrototypeOf", y);
    if (!labels && !val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", y)) {
      kiln::throw_error<kiln::TypeError>(
          op, ": y must be an Int32Array (class labels) or a Float32Array (targets)");
    }
    std::size_t hint = checked_count(n_hint, op, "n");
    const auto ny = y["length"].as<std::size_t>();
    if (hint == 0 && labels) hint = ny;
    const auto [n, item] = items_of(s, x["length"].as<std::size_t>(), hint, op);
    if (n == 0) kiln::throw_error<kiln::ShapeError>(op, ": the batch is empty");
    Prim input = primitive_from_typed(x, batch_shape(n, item), kiln::DType::F32, op, "x");
    HostTargets t;
    if (labels) {
      if (ny != n) {
        kiln::throw_error<kiln::ShapeError>(op, ": y has ", ny, " labels but x has ", n, " items");
      }
      t.has_labels = true;
      t.labels.resize(n);
      val(emscripten::typed_memory_view(n, t.labels.data())).call<void>("set", y);
    } else {
      if (ny % n != 0) {
        kiln::throw_error<kiln::ShapeError>(op, ": y has ", ny, " values, not a multiple of the ",
                                            n, " items");
      }
      t.values.resize(ny);
      if (ny > 0) val(emscripten::typed_memory_view(ny, t.values.data())).call<void>("set", y);
      t.shape = kiln::Shape{static_cast<std::int64_t>(n), static_cast<std::int64_t>(ny / n)};
    }
    Totals totals;
    // Outside fit's epochs: the message names the optimizer's step.
    train_step(s, std::move(input), t, totals,
               kiln::train::StepPosition{op, 0, s.optimizer->steps + 1});
    return totals.to_js();
  });
}

/// Starts an epoch over `data` (shuffled with a seed derived from the learner's seed and the
/// learner's epoch count when `shuffle`); `fit_epoch` is that epoch's number within the fit()
/// in progress (1-based), as the fit's callbacks and history count it, for messages.
/// Returns the number of batches.
double learner_begin_epoch(const JsLearner& l, const JsDataset& data, double batch_size,
                           bool shuffle, double fit_epoch) {
  return guarded([&] {
    LearnerState& s = state_of(l);
    const char* op = "Learner.fit";
    if (!data.store) kiln::throw_error<kiln::StateError>(op, ": the dataset was disposed");
    s.batch_size = checked_count(batch_size, op, "batchSize");
    if (s.batch_size == 0) kiln::throw_error<kiln::ValueError>(op, ": batchSize must be >= 1");
    if (data.len() == 0) kiln::throw_error<kiln::ShapeError>(op, ": the dataset is empty");
    ++s.epoch;
    s.fit_epoch = fit_epoch >= 1 && fit_epoch <= 9e15 ? static_cast<std::int64_t>(fit_epoch) : s.epoch;
    s.epoch_data = data;
    if (shuffle) {
      const auto perm = kiln::data::permutation(
          data.len(), kiln::data::mix_seed(s.seed, static_cast<std::uint64_t>(s.epoch)));
      auto index = std::make_shared<std::vector<std::uint32_t>>(data.len());
      for (std::size_t i = 0; i < perm.size(); ++i) (*index)[i] = (*data.index)[perm[i]];
      s.epoch_data.index = std::move(index);
    }
    s.cursor = 0;
    // ceil(len / batch_size) without len + batch_size - 1 (which wraps in wasm32's size_t)
    const std::size_t len = data.len();
    return static_cast<double>(len / s.batch_size + (len % s.batch_size != 0 ? 1 : 0));
  });
}

/// Runs up to `count` training batches of the epoch in progress.
val learner_train_batches(const JsLearner& l, double count) {
  return guarded([&] {
    LearnerState& s = state_of(l);
    const std::size_t k = checked_count(count, "Learner.fit", "batchesPerCall");
    if (!s.epoch_data.store)
      kiln::throw_error<kiln::StateError>("Learner.fit: no epoch in progress");
    Totals totals;
    const std::size_t len = s.epoch_data.len();
    for (std::size_t b = 0; b < k && s.cursor < len; ++b) {
      // cursor + batch_size may wrap in wasm32's size_t: compare with what is left instead
      const std::size_t end = len - s.cursor > s.batch_size ? s.cursor + s.batch_size : len;
      auto [x, t] = gather(s.epoch_data, s.cursor, end);
      const auto batch = static_cast<std::int64_t>(s.cursor / s.batch_size) + 1;
      train_step(s, std::move(x), t, totals, kiln::train::StepPosition{"Learner.fit", s.fit_epoch, batch});
      s.cursor = end;
    }
    const bool done = s.cursor >= len;
    if (done) s.epoch_data = JsDataset{};
    return totals.to_js(done);
  });
}

/// Loss and accuracy sums over batches [first, first + count) of `data` in inference mode.
val learner_eval_batches(const JsLearner& l, const JsDataset& data, double batch_size,
                         double first, double count) {
  return guarded([&] {
    LearnerState& s = state_of(l);
    const char* op = "Learner.evaluate";
    if (!data.store) kiln::throw_error<kiln::StateError>(op, ": the dataset was disposed");
    const std::size_t bs = checked_count(batch_size, op, "batchSize");
    if (bs == 0) kiln::throw_error<kiln::ValueError>(op, ": batchSize must be >= 1");
    const std::size_t b0 = checked_count(first, op, "first batch");
    const std::size_t k = checked_count(count, op, "batch count");
    const InferenceModel model = s.model->model.valid();
    Totals totals;
    const std::size_t len = data.len();
    // Batch positions in 64 bits: b·bs and (b0 + k)·bs wrap in wasm32's size_t (each factor
    // < 2^32, so the products fit in 64 bits).
    const std::uint64_t len64 = len, bs64 = bs, last = static_cast<std::uint64_t>(b0) + k;
    for (std::uint64_t b = b0; b < last && b * bs64 < len64; ++b) {
      const auto begin = static_cast<std::size_t>(b * bs64);
      const auto end = static_cast<std::size_t>(std::min(len64, (b + 1) * bs64));
      auto [x, t] = gather(data, begin, end);
      eval_step(s, model, std::move(x), t, totals);
    }
    return totals.to_js(last * bs64 >= len64);
  });
}

#if defined(KILN_BACKEND_WGPU)
val learner_predict(const JsLearner& l, val, double, double) {
  return guarded([&]() -> val {
    (void)state_of(l);
    throw_sync_learner("Learner.predict", "use model.forward(x) and await output.data()");
  });
}

val learner_predict_dataset(const JsLearner& l, const JsDataset&, double) {
  return guarded([&]() -> val {
    (void)state_of(l);
    throw_sync_learner("Learner.predict", "use model.forward(x) and await output.data()");
  });
}
#else
/// Outputs for every item in inference mode: softmax probabilities for cross-entropy, the
/// raw outputs for mse; row-major [n, output...] in a Float32Array.
template <class Gather>
val predict_items(const LearnerState& s, std::size_t n, std::size_t bs, Gather&& gather_batch) {
  const InferenceModel model = s.model->model.valid();
  std::vector<float> out;
  for (std::size_t begin = 0, end = 0; begin < n; begin = end) {
    end = n - begin > bs ? begin + bs : n;  // begin + bs may wrap in wasm32's size_t
    InferenceActivation in = std::visit([](const auto& a) -> InferenceActivation { return a.inner(); },
                                        activation_from(gather_batch(begin, end)));
    InferenceActivation y = model.forward_any(std::move(in));
    if (s.loss.cross_entropy) {
      auto* logits = std::get_if<kiln::Tensor<Inner, 2>>(&y);
      if (logits == nullptr) {
        kiln::throw_error<kiln::ShapeError>(
            "Learner.predict: the model outputs ", kiln::nn::activation_shape<Inner>(y),
            "; softmax probabilities need logits [batch_size, num_classes]");
      }
      y = kiln::activation::softmax(*logits, 1);
    }
    std::visit(
        [&](const auto& t) {
          const auto& p = t.primitive();
          const float* data = p.template data<float>();
          out.insert(out.end(), data, data + p.num_elements());
        },
        y);
  }
  return val::global("Float32Array").new_(emscripten::typed_memory_view(out.size(), out.data()));
}

val learner_predict(const JsLearner& l, val x, double n_hint, double batch_size) {
  return guarded([&] {
    const LearnerState& s = state_of(l);
    const char* op = "Learner.predict";
    if (!val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", x)) {
      kiln::throw_error<kiln::TypeError>(op, ": x must be a Float32Array, a Tensor or a Dataset");
    }
    const std::size_t bs = checked_count(batch_size, op, "batchSize");
    if (bs == 0) kiln::throw_error<kiln::ValueError>(op, ": batchSize must be >= 1");
    const auto items = items_of(s, x["length"].as<std::size_t>(), checked_count(n_hint, op, "n"), op);
    const std::size_t n = items.first;
    const std::vector<std::int64_t> item = items.second;  // a lambda captures it below
    const Prim all =
        primitive_from_typed(x, batch_shape(n, item), kiln::DType::F32, op, "x");
    const auto item_size = static_cast<std::size_t>(all.num_elements()) / std::max<std::size_t>(n, 1);
    return predict_items(s, n, bs, [&](std::size_t begin, std::size_t end) {
      Prim batch(batch_shape(end - begin, item), kiln::DType::F32);
      std::copy_n(all.data<float>() + begin * item_size, (end - begin) * item_size, batch.data<float>());
      return batch;
    });
  });
}

val learner_predict_dataset(const JsLearner& l, const JsDataset& data, double batch_size) {
  return guarded([&] {
    const LearnerState& s = state_of(l);
    const char* op = "Learner.predict";
    if (!data.store) kiln::throw_error<kiln::StateError>(op, ": the dataset was disposed");
    const std::size_t bs = checked_count(batch_size, op, "batchSize");
    if (bs == 0) kiln::throw_error<kiln::ValueError>(op, ": batchSize must be >= 1");
    return predict_items(s, data.len(), bs, [&](std::size_t begin, std::size_t end) {
      return gather(data, begin, end).first;
    });
  });
}
#endif  // KILN_BACKEND_WGPU

#if defined(KILN_BACKEND_WGPU)
/// pendingTotals(): f32 [7] on the device, for JS to read (await tensor.data()) and give to
/// settle: the guard's status (4 values: kiln/train/deferred_step.hpp), then the pending
/// batches' Σ loss·items, correct predictions and last loss.
JsTensor learner_pending_totals(const JsLearner& l) {
  return guarded([&] {
    const LearnerState& s = state_of(l);
    using F = kiln::Tensor<Inner, 1>;
    const auto zero = F::zeros(kiln::Shape{1}, InnerDevice{});
    const auto nan = F::full(kiln::Shape{1}, std::numeric_limits<double>::quiet_NaN(), InnerDevice{});
    const F status(s.deferred.guard.status(InnerDevice{}));
    return from_typed(F::cat(std::vector<F>{status, s.loss_sum.value_or(zero),
                                            s.correct_sum.value_or(zero), s.last_loss.value_or(nan)},
                             0));
  });
}

/// settle(values, done): the pending totals as trainBatches returns them on the Cpu, from
/// the 7 values of pendingTotals read by JS; the pending steps are settled first (a refused
/// step throws NonFiniteError, see learner_settle). The pending totals are cleared either way.
val learner_settle_totals(const JsLearner& l, val values, bool done) {
  return guarded([&] {
    LearnerState& s = state_of(l);
    if (!val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", values) ||
        values["length"].as<std::size_t>() != 7) {
      kiln::throw_error<kiln::TypeError>(
          "Learner.fit: settle needs the 7 values of pendingTotals as a Float32Array");
    }
    std::array<float, 7> v{};
    val(emscripten::typed_memory_view(v.size(), v.data())).call<void>("set", values);
    Totals totals = s.pending;
    const bool accuracy = s.accuracy;
    s.pending = Totals{};
    s.loss_sum.reset();
    s.correct_sum.reset();
    s.last_loss.reset();
    s.accuracy = true;
    learner_settle(*s.optimizer, s.deferred, std::span<const float>(v.data(), 4));
    totals.loss_sum = v[4];
    totals.correct = accuracy ? v[5] : std::numeric_limits<double>::quiet_NaN();
    totals.last_loss = v[6];
    return totals.to_js(done);
  });
}
#endif

val learner_info(const JsLearner& l) {
  return guarded([&] {
    const LearnerState& s = state_of(l);
    val out = val::object();
    out.set("epoch", static_cast<double>(s.epoch));
    out.set("steps", static_cast<double>(s.optimizer->steps));
    out.set("learningRate", s.optimizer->last_lr);
    return out;
  });
}

void learner_release(JsLearner& l) { l.state.reset(); }

// ---------------------------------------------------------------- user steps (issue 15)

/// The guarded step of a Learner whose step is a user function (trainStep): JS runs the
/// forward and the loss (the graph reaches the model's parameters), then hands the loss here.
/// stepList(): the loss must be finite, backward, the gradients of the list's parameters,
/// then optimizer_step_list guarded as kiln::train::train_step (gradient checks, clipping,
/// optimizer step, update checks; a refused step changes nothing). With gradient
/// accumulation, accumulateList() checks the loss, runs the backward and adds the gradients
/// (Burn's GradientsAccumulator: a sum), and applyList() takes the guarded step with the sums.
struct JsStepper {
  kiln::optim::GradientsAccumulator<AD> accumulator;
  std::int64_t pending = 0;  ///< backward passes accumulated since the last apply
#if defined(KILN_BACKEND_WGPU)
  DeferredSteps deferred;  ///< stepListDeferred's step until settle (the webgpu engine)
  std::optional<Inner::FloatTensor> last_loss;  ///< that step's loss, for statusAndLoss
#endif
};

/// A loss [1] (or rank 0 / any one-element shape) of the autodiff graph.
kiln::Tensor<AD, 1> loss_of(const JsTensor& loss, const char* op) {
  if (!loss.is_float()) {
    kiln::throw_error<kiln::DTypeError>(op, ": the step's loss must be a float32 tensor, got ",
                                        kiln::dtype_name(loss.dtype()));
  }
  if (loss.shape().num_elements() != 1) {
    kiln::throw_error<kiln::ShapeError>(
        op, ": the step's loss must have one element (a scalar), got shape ", loss.shape());
  }
  if (!loss.is_tracked()) {
    kiln::throw_error<kiln::StateError>(
        op,
        ": the step's loss does not depend on any parameter that "
        "requires a gradient (was it computed inside noGrad, or detached?)");
  }
  const std::int64_t one[] = {1};
  return kiln::Tensor<AD, 1>(AD::FloatOps::reshape(loss.value, one));
}

kiln::train::StepPosition position(double epoch, double batch) {
  return kiln::train::StepPosition{"Learner.fit", static_cast<std::int64_t>(epoch),
                                   static_cast<std::int64_t>(batch)};
}

OptimizerState& optimizer_state(const JsOptimizer& o, const char* op) {
  if (!o.state) kiln::throw_error<kiln::StateError>(op, ": the optimizer was disposed");
  return *o.state;
}

// Over a JsParamList (bindings/module_params.hpp): any model, a kiln.Module of kiln.Params
// and built-in layers, or a list of tensors; the step is optimizer_step_list guarded as
// train_step, which writes the updated values back.

double stepper_step_list(JsStepper& st, const JsOptimizer& o, JsParamList& list, const JsTensor& loss,
                         double epoch, double batch) {
  return guarded([&] {
    constexpr const char* op = "Learner.fit";
    if (st.pending != 0)
      kiln::throw_error<kiln::StateError>(op, ": accumulated gradients are pending");
    auto l = loss_of(loss, op);
    OptimizerState& opt = optimizer_state(o, op);
    const auto at = position(epoch, batch);
    const double value = static_cast<double>(l.inner().into_scalar());
    kiln::train::detail::check_loss(value, at);
    const Gradients grads = l.backward();
    optimizer_step_list(opt, list, list_gradients(list, grads), &at);
    return value;
  });
}

double stepper_accumulate_list(JsStepper& st, JsParamList& list, const JsTensor& loss, double epoch,
                               double batch) {
  return guarded([&] {
    constexpr const char* op = "Learner.fit";
    auto l = loss_of(loss, op);
    const double value = static_cast<double>(l.inner().into_scalar());
    kiln::train::detail::check_loss(value, position(epoch, batch));
    const Gradients grads = l.backward();
    st.accumulator.accumulate(list.list, list_gradients(list, grads));
    ++st.pending;
    return value;
  });
}

void stepper_apply_list(JsStepper& st, const JsOptimizer& o, JsParamList& list, double epoch, double batch) {
  guarded([&] {
    constexpr const char* op = "Learner.fit";
    if (st.pending == 0) return;
    OptimizerState& opt = optimizer_state(o, op);
    auto grads = st.accumulator.grads();
    st.pending = 0;
    const auto at = position(epoch, batch);
    optimizer_step_list(opt, list, std::move(grads), &at);
  });
}

#if defined(KILN_BACKEND_WGPU)
/// stepList on the webgpu engine, whose reads are asynchronous: the same step with its checks
/// on the device (optimizer_step_list_deferred; no read), then statusAndLoss() for JS to read
/// and settle() with what it read, which throws the refused step's NonFiniteError as stepList
/// does (the model and optimizer then as before the step).
void stepper_step_list_deferred(JsStepper& st, const JsOptimizer& o, JsParamList& list, const JsTensor& loss,
                                double epoch, double batch) {
  guarded([&] {
    constexpr const char* op = "Learner.fit";
    if (st.pending != 0)
      kiln::throw_error<kiln::StateError>(op, ": accumulated gradients are pending");
    if (st.deferred.guard.pending() != 0)
      kiln::throw_error<kiln::StateError>(op, ": a step is not settled");
    auto l = loss_of(loss, op);
    OptimizerState& opt = optimizer_state(o, op);
    const Gradients grads = l.backward();
    optimizer_step_list_deferred(opt, list, l.inner().primitive(), list_gradients(list, grads), st.deferred,
                                 position(epoch, batch));
    st.last_loss = l.inner().primitive();
  });
}

/// accumulateList on the webgpu engine: the backward and the sum of the gradients on the device,
/// without reading the loss; JS reads it and calls checkLoss (accumulateList checks it first
/// on the Cpu; a refused loss ends fit(), whose clear() drops the sums either way).
double stepper_accumulate_list_deferred(JsStepper& st, JsParamList& list, const JsTensor& loss) {
  return guarded([&] {
    auto l = loss_of(loss, "Learner.fit");
    const Gradients grads = l.backward();
    st.accumulator.accumulate(list.list, list_gradients(list, grads));
    ++st.pending;
    return static_cast<double>(st.pending);
  });
}

/// checkLoss(value, epoch, batch): accumulateList's check of a loss read by JS (NonFiniteError
/// with train_step's message).
void stepper_check_loss(const JsStepper&, double value, double epoch, double batch) {
  guarded([&] { kiln::train::detail::check_loss(value, position(epoch, batch)); });
}

/// applyList on the webgpu engine: the guarded step with the summed gradients, its checks on
/// the device (their loss already checked: a zero loss is probed), then statusAndLoss and settle
/// as after stepListDeferred.
void stepper_apply_list_deferred(JsStepper& st, const JsOptimizer& o, JsParamList& list, double epoch, double batch) {
  guarded([&] {
    constexpr const char* op = "Learner.fit";
    if (st.pending == 0) return;
    if (st.deferred.guard.pending() != 0)
      kiln::throw_error<kiln::StateError>(op, ": a step is not settled");
    OptimizerState& opt = optimizer_state(o, op);
    auto grads = st.accumulator.grads();
    st.pending = 0;
    const auto zero = kiln::Tensor<Inner, 1>::zeros(kiln::Shape{1}, InnerDevice{});
    optimizer_step_list_deferred(opt, list, zero.primitive(), std::move(grads), st.deferred, position(epoch, batch));
    st.last_loss.reset();
  });
}

/// statusAndLoss(): f32 [5] on the device: the guard's status (4 values,
/// kiln/train/deferred_step.hpp), then the last stepListDeferred's loss.
JsTensor stepper_status_and_loss(const JsStepper& st) {
  return guarded([&] {
    using F = kiln::Tensor<Inner, 1>;
    const F status(st.deferred.guard.status(InnerDevice{}));
    const F loss = st.last_loss ? F(*st.last_loss)
                                : F::full(kiln::Shape{1}, std::numeric_limits<double>::quiet_NaN(), InnerDevice{});
    return from_typed(F::cat(std::vector<F>{status, loss}, 0));
  });
}

/// settle(values): settles the pending step with the first 4 of statusAndLoss's values.
/// Throws NonFiniteError for a refused step (learner_settle), TypeError for other values.
void stepper_settle(JsStepper& st, const JsOptimizer& o, val values) {
  guarded([&] {
    if (!val::global("Float32Array")["prototype"].call<bool>("isPrototypeOf", values) ||
        values["length"].as<std::size_t>() != 5) {
      kiln::throw_error<kiln::TypeError>(
          "Learner.fit: settle needs the 5 values of statusAndLoss as a Float32Array");
    }
    std::array<float, 5> v{};
    val(emscripten::typed_memory_view(v.size(), v.data())).call<void>("set", values);
    st.last_loss.reset();
    learner_settle(optimizer_state(o, "Learner.fit"), st.deferred, std::span<const float>(v.data(), 4));
  });
}
#endif

double stepper_pending(const JsStepper& st) { return static_cast<double>(st.pending); }
void stepper_clear(JsStepper& st) {
  (void)st.accumulator.grads();
  st.pending = 0;
#if defined(KILN_BACKEND_WGPU)
  st.deferred.guard.clear();
  st.deferred.before.clear();
  st.last_loss.reset();
#endif
}
JsStepper stepper_create() { return JsStepper{}; }
void stepper_release(JsStepper& st) { stepper_clear(st); }

}  // namespace
}  // namespace kiln_js

EMSCRIPTEN_BINDINGS(kiln_train_learner) {
  using namespace kiln_js;
  // issue 15: the guarded step of user train steps
  emscripten::class_<JsStepper>("RawStepper")
      .function("stepList", &stepper_step_list)
      .function("accumulateList", &stepper_accumulate_list)
      .function("applyList", &stepper_apply_list)
#if defined(KILN_BACKEND_WGPU)
      .function("stepListDeferred", &stepper_step_list_deferred)
      .function("statusAndLoss", &stepper_status_and_loss)
      .function("settle", &stepper_settle)
      .function("accumulateListDeferred", &stepper_accumulate_list_deferred)
      .function("checkLoss", &stepper_check_loss)
      .function("applyListDeferred", &stepper_apply_list_deferred)
#endif
      .function("pending", &stepper_pending)
      .function("clear", &stepper_clear)
      .function("release", &stepper_release);
  emscripten::function("stepperCreate", &stepper_create);
  emscripten::class_<JsLearner>("RawLearner")
      .function("trainBatch", &learner_train_batch)
      .function("beginEpoch", &learner_begin_epoch)
      .function("trainBatches", &learner_train_batches)
      .function("evalBatches", &learner_eval_batches)
      .function("predict", &learner_predict)
      .function("predictDataset", &learner_predict_dataset)
      .function("info", &learner_info)
#if defined(KILN_BACKEND_WGPU)
      .function("pendingTotals", &learner_pending_totals)
      .function("settle", &learner_settle_totals)
#endif
      .function("release", &learner_release);
  emscripten::function("learnerCreate", &learner_create);
}
