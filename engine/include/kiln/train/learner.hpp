#pragma once
/// The training loop (Burn's `burn::train`: `SupervisedTraining` + `Learner`):
///
///   auto training = train::SupervisedTraining(artifact_dir, train_loader, valid_loader)
///                       .metrics({train::AccuracyMetric{}, train::LossMetric{}})
///                       .with_file_checkpointer(record::CompactRecorder{})
///                       .num_epochs(10)
///                       .summary();
///   auto result = training.launch(train::Learner(model, optim::AdamConfig().init<B>(), 1e-3));
///   result.model.valid().save_file(...);
///
/// Each epoch e = 1..num_epochs:
///   1. train: for every batch of the train loader (a DataLoader<B, TI>, B an AutodiffBackend)
///      `model.train_step(batch)` gives gradients and outputs; the learning rate is the
///      scheduler's next `step()` (a constant for `Learner(model, optim, 1e-3)`); the
///      optimizer steps the model; each metric is updated with the outputs.
///   2. valid: `model.valid()` (no autodiff) runs `inference_step(batch)` on every batch of
///      the valid loader (a DataLoader<B::Inner, VI>); the metrics are updated.
///   3. the epoch's metric values are the item-weighted means over its batches; with a
///      checkpointer the model and the training state are written to
///      `artifact_dir/checkpoint/` (the last two epochs are kept); early stopping may end the
///      run.
/// Events (batch ends, epoch ends, the end) go to the `on_event` callbacks and, unless
/// `quiet()`, to a terminal renderer on stderr: a progress bar per epoch with items/s and the
/// metrics, and with `summary()` a table of every metric's best and worst epoch at the end.
///
/// Differences from Burn: metrics are chosen from the built-in `train::Metric` variant and
/// apply to both splits; a resumed run (`checkpoint(epoch)`) restores the model, the
/// scheduler position and the history, but starts the optimizer's state (moments) afresh
/// and the loaders' shuffles from their own epoch count.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/data/data_loader.hpp"
#include "kiln/optim/lr_scheduler.hpp"
#include "kiln/optim/optimizer.hpp"
#include "kiln/record/recorder.hpp"
#include "kiln/train/metric.hpp"
#include "kiln/train/output.hpp"

namespace kiln::train {

/// Which pass of an epoch: training batches or validation batches.
enum class Split { Train, Valid };
/// "train" / "valid".
std::string_view split_name(Split split);

/// A metric's value at some point of the run.
struct MetricValue {
  std::string name;       ///< "Accuracy", "Loss"
  double value = 0;       ///< accuracy as a fraction in [0, 1], loss as is
  std::string formatted;  ///< "97.52 %", "0.1234"
};

/// What happened (Burn's `LearnerEvent`); the playground draws these.
struct TrainingEvent {
  enum class Kind {
    BatchEnd,    ///< a batch of `split` finished; metrics are the epoch's running means
    EpochEnd,    ///< `split`'s pass of `epoch` finished; metrics are the epoch's values
    TrainingEnd  ///< the run ended (all epochs, early stop or interrupt)
  };
  Kind kind = Kind::BatchEnd;
  Split split = Split::Train;
  std::int64_t epoch = 0;           ///< 1-based
  std::int64_t num_epochs = 0;
  std::size_t iteration = 0;        ///< batches of this split done in this epoch
  std::size_t num_batches = 0;      ///< batches of this split per epoch
  std::size_t items_processed = 0;  ///< items of this split done in this epoch
  std::size_t items_total = 0;      ///< items of this split per epoch
  double items_per_second = 0;      ///< over this split's pass so far
  double elapsed_seconds = 0;       ///< of this split's pass so far
  double learning_rate = 0;         ///< the last training step's
  std::vector<MetricValue> metrics;
};

/// One finished epoch.
struct EpochSummary {
  std::int64_t epoch = 0;
  std::vector<MetricValue> train, valid;
  double train_seconds = 0, valid_seconds = 0;
  double train_items_per_second = 0;
};

/// Stops the run when `metric` on `split` has not improved by more than `min_delta` for
/// `patience` epochs in a row (Burn's MetricEarlyStoppingStrategy with
/// StoppingCondition::NoImprovementSince { n_epochs: patience }); "improved" follows the
/// metric's direction (accuracy up, loss down).
struct EarlyStopping {
  Metric metric = LossMetric{};
  Split split = Split::Valid;
  std::int64_t patience = 1;
  double min_delta = 0;
};

/// Asks a running training to stop after the current batch (Burn's `Interrupter`): share it
/// with `SupervisedTraining::with_interrupter` and call `stop()` from any thread.
class Interrupter {
 public:
  void stop() noexcept { stop_.store(true); }
  void reset() noexcept { stop_.store(false); }
  bool should_stop() const noexcept { return stop_.load(); }

 private:
  std::atomic<bool> stop_{false};
};

/// The model, its optimizer and the learning rate (a number, or an LrScheduler giving one
/// per step) for SupervisedTraining::launch (Burn's `Learner::new(model, optim, lr)`).
template <class M, class O, optim::LrScheduler LR>
struct Learner {
  M model;
  O optimizer;
  LR scheduler;

  Learner(M model, O optimizer, LR scheduler)
      : model(std::move(model)), optimizer(std::move(optimizer)), scheduler(std::move(scheduler)) {}
  /// A constant learning rate. Throws ValueError if lr is negative or not finite.
  Learner(M model, O optimizer, double lr) requires std::same_as<LR, optim::ConstantLr>
      : model(std::move(model)), optimizer(std::move(optimizer)), scheduler(checked(lr)) {}

 private:
  static optim::ConstantLr checked(double lr) {
    optim::check_learning_rate("Learner", lr);
    return optim::ConstantLr(lr);
  }
};
template <class M, class O>
Learner(M, O, double) -> Learner<M, O, optim::ConstantLr>;
template <class M, class O, optim::LrScheduler LR>
Learner(M, O, LR) -> Learner<M, O, LR>;

/// What launch returns: the trained model (on the autodiff backend; `valid()` it for
/// inference) and the per-epoch history.
template <class M>
struct LearningResult {
  M model;
  std::vector<EpochSummary> history;
  bool stopped_early = false;  ///< by the EarlyStopping rule
  bool interrupted = false;    ///< by the Interrupter
};

namespace detail {

/// Accumulates one split's metrics over an epoch.
class MetricState {
 public:
  explicit MetricState(const std::vector<Metric>& metrics) : metrics_(&metrics),
      sums_(metrics.size(), 0.0), weights_(metrics.size(), 0.0) {}
  template <class Item>
  void update(const Item& item) {
    for (std::size_t i = 0; i < metrics_->size(); ++i) {
      const MetricEntry e = std::visit([&](const auto& m) { return m.update(item); }, (*metrics_)[i]);
      sums_[i] += e.value * e.weight;
      weights_[i] += e.weight;
    }
  }
  std::vector<MetricValue> values() const;

 private:
  const std::vector<Metric>* metrics_;
  std::vector<double> sums_, weights_;
};

/// The terminal renderer (engine/src/train/render.cpp): progress bars on stderr.
void render_event(const TrainingEvent& event);
/// The end-of-training table of every metric's min and max with their epochs (Burn's
/// `.summary()`), as text.
std::string summary_table(const std::vector<EpochSummary>& history);
/// The history as JSON text (written to artifact_dir/history.json and in checkpoints).
std::string history_to_json(const std::vector<EpochSummary>& history);
/// Parses history_to_json's output. Throws FormatError naming `path`.
std::vector<EpochSummary> history_from_json(const std::string& text, const std::string& path);
/// Writes `artifact_dir/checkpoint/state-<epoch>.json` {epoch, scheduler_steps, history}
/// atomically and removes the checkpoints of epochs before epoch - 1.
void write_training_state(const std::filesystem::path& dir, std::int64_t epoch,
                          std::uint64_t scheduler_steps, const std::vector<EpochSummary>& history);
/// Reads a state written by write_training_state. Throws IoError / FormatError.
void read_training_state(const std::filesystem::path& dir, std::int64_t epoch,
                         std::uint64_t& scheduler_steps, std::vector<EpochSummary>& history);
/// `dir/model-<epoch>.safetensors`.
std::string model_checkpoint_path(const std::filesystem::path& dir, std::int64_t epoch);
/// Whether an item type carries a loss to check for nan/inf.
template <class T>
concept HasLoss = requires(const T& t) { t.loss.into_scalar(); };

}  // namespace detail

/// Configures and runs supervised training (Burn's `SupervisedTraining`). Setters return a
/// modified copy.
template <AutodiffBackend B, class TI, class VI>
class SupervisedTraining {
 public:
  using Inner = typename B::Inner;
  using Callback = std::function<void(const TrainingEvent&)>;

  /// `artifact_dir` receives history.json and, with a checkpointer, checkpoint/. It is
  /// created when the run starts. Throws ValueError if a loader is null.
  SupervisedTraining(std::string artifact_dir, std::shared_ptr<data::DataLoader<B, TI>> train,
                     std::shared_ptr<data::DataLoader<Inner, VI>> valid)
      : artifact_dir_(std::move(artifact_dir)), train_(std::move(train)), valid_(std::move(valid)) {
    if (!train_ || !valid_) throw ValueError("SupervisedTraining: a data loader is null");
  }

  /// The metrics computed on both splits (Burn's `.metrics((AccuracyMetric, LossMetric))`).
  SupervisedTraining metrics(std::vector<Metric> metrics) const {
    auto out = *this;
    out.metrics_ = std::move(metrics);
    return out;
  }
  /// Epochs to run (default 1). Throws ConfigError if < 1.
  SupervisedTraining num_epochs(std::int64_t n) const {
    if (n < 1) throw ConfigError(str_cat("SupervisedTraining::num_epochs: must be >= 1, got ", n));
    auto out = *this;
    out.num_epochs_ = n;
    return out;
  }
  /// Saves the model with `recorder` after every epoch, with the training state, under
  /// artifact_dir/checkpoint/ (Burn's `with_file_checkpointer`).
  SupervisedTraining with_file_checkpointer(record::SafetensorsRecorder recorder) const {
    auto out = *this;
    out.recorder_ = recorder;
    return out;
  }
  /// Resumes after the checkpoint of `epoch` (Burn's `.checkpoint(epoch)`): launch loads it
  /// and runs epochs epoch+1..num_epochs. Needs with_file_checkpointer.
  SupervisedTraining checkpoint(std::int64_t epoch) const {
    auto out = *this;
    out.resume_epoch_ = epoch;
    return out;
  }
  /// Prints the metric summary table when training ends (Burn's `.summary()`).
  SupervisedTraining summary() const {
    auto out = *this;
    out.summary_ = true;
    return out;
  }
  /// Stops early by this rule (Burn's `.early_stopping(...)`). Throws ConfigError if
  /// patience < 1 or the metric is not registered.
  SupervisedTraining early_stopping(EarlyStopping rule) const {
    if (rule.patience < 1) {
      throw ConfigError(str_cat("SupervisedTraining::early_stopping: patience must be >= 1, got ",
                                rule.patience));
    }
    auto out = *this;
    out.early_stopping_ = rule;
    return out;
  }
  /// Also sends every event to `callback` (called on the training thread).
  SupervisedTraining on_event(Callback callback) const {
    auto out = *this;
    out.callbacks_.push_back(std::move(callback));
    return out;
  }
  /// Lets another thread stop the run after the current batch.
  SupervisedTraining with_interrupter(std::shared_ptr<Interrupter> interrupter) const {
    auto out = *this;
    out.interrupter_ = std::move(interrupter);
    return out;
  }
  /// No terminal output (events still reach the callbacks).
  SupervisedTraining quiet() const {
    auto out = *this;
    out.render_ = false;
    return out;
  }

  /// Runs the training (see the file comment) and returns the trained model.
  /// Throws: NonFiniteError ("loss became nan at epoch e, batch b") before the optimizer
  ///         would apply a step whose loss is nan or inf (the model of the previous step is in
  ///         the last checkpoint); ConfigError for checkpoint() without a checkpointer or an
  ///         early-stopping metric that is not registered; IoError / FormatError from
  ///         checkpoints; whatever the model's steps throw.
  template <class M, class O, class LR>
  requires TrainStep<M, TI> LearningResult<M> launch(Learner<M, O, LR> learner) const {
    using ValidModel = decltype(learner.model.valid());
    static_assert(InferenceStep<ValidModel, VI>,
                  "SupervisedTraining::launch: model.valid() needs inference_step(batch)");
    check_early_stopping();
    const std::filesystem::path dir(artifact_dir_);
    const std::filesystem::path checkpoints = dir / "checkpoint";
    std::filesystem::create_directories(recorder_ ? checkpoints : dir);

    LearningResult<M> result{std::move(learner.model), {}, false, false};
    auto& model = result.model;
    std::int64_t first_epoch = 1;
    std::uint64_t scheduler_steps = 0;
    if (resume_epoch_) {
      if (!recorder_) {
        throw ConfigError("SupervisedTraining::checkpoint: resuming needs with_file_checkpointer");
      }
      model = recorder_->load_file(model, detail::model_checkpoint_path(checkpoints, *resume_epoch_),
                                   typename B::Device{});
      detail::read_training_state(checkpoints, *resume_epoch_, scheduler_steps, result.history);
      for (std::uint64_t i = 0; i < scheduler_steps; ++i) (void)learner.scheduler.step();
      first_epoch = *resume_epoch_ + 1;
    }

    double lr = 0;
    for (std::int64_t epoch = first_epoch; epoch <= num_epochs_; ++epoch) {
      EpochSummary summary;
      summary.epoch = epoch;

      // ---- train
      detail::MetricState train_metrics(metrics_);
      TrainingEvent event = start_event(Split::Train, epoch, *train_);
      const auto train_start = std::chrono::steady_clock::now();
      for (const TI& batch : *train_) {
        auto output = model.train_step(batch);
        if constexpr (detail::HasLoss<decltype(output.item)>) {
          const double loss = output.item.loss.into_scalar();
          if (!std::isfinite(loss)) {
            throw NonFiniteError(str_cat("SupervisedTraining: loss became ", loss, " at epoch ",
                                         epoch, ", batch ", event.iteration + 1,
                                         " (the model is that of the previous step)"));
          }
        }
        lr = learner.scheduler.step();
        ++scheduler_steps;
        model = learner.optimizer.step(lr, model, std::move(output.grads));
        train_metrics.update(output.item);
        event.learning_rate = lr;
        advance(event, batch_items(output.item), train_start, train_metrics);
        emit(event);
        if (interrupted()) break;
      }
      summary.train = train_metrics.values();
      summary.train_seconds = event.elapsed_seconds;
      summary.train_items_per_second = event.items_per_second;
      finish(event, summary.train);
      if (interrupted()) {
        result.interrupted = true;
        result.history.push_back(std::move(summary));
        break;
      }

      // ---- valid
      const auto valid_model = model.valid();
      detail::MetricState valid_metrics(metrics_);
      TrainingEvent valid_event = start_event(Split::Valid, epoch, *valid_);
      valid_event.learning_rate = lr;
      const auto valid_start = std::chrono::steady_clock::now();
      for (const VI& batch : *valid_) {
        const auto item = valid_model.inference_step(batch);
        valid_metrics.update(item);
        advance(valid_event, batch_items(item), valid_start, valid_metrics);
        emit(valid_event);
        if (interrupted()) break;
      }
      summary.valid = valid_metrics.values();
      summary.valid_seconds = valid_event.elapsed_seconds;
      finish(valid_event, summary.valid);
      result.history.push_back(std::move(summary));
      if (interrupted()) {
        result.interrupted = true;
        break;
      }

      // ---- checkpoint, history, early stop
      if (recorder_) {
        recorder_->save_file(model, detail::model_checkpoint_path(checkpoints, epoch));
        detail::write_training_state(checkpoints, epoch, scheduler_steps, result.history);
      }
      io::write_file_atomic((dir / "history.json").string(),
                            detail::history_to_json(result.history), "SupervisedTraining");
      if (should_stop_early(result.history)) {
        result.stopped_early = true;
        break;
      }
    }

    TrainingEvent end;
    end.kind = TrainingEvent::Kind::TrainingEnd;
    end.epoch = result.history.empty() ? 0 : result.history.back().epoch;
    end.num_epochs = num_epochs_;
    end.learning_rate = lr;
    emit(end);
    if (render_ && summary_) std::fputs(detail::summary_table(result.history).c_str(), stderr);
    return result;
  }

 private:
  template <class Loader>
  TrainingEvent start_event(Split split, std::int64_t epoch, const Loader& loader) const {
    TrainingEvent event;
    event.split = split;
    event.epoch = epoch;
    event.num_epochs = num_epochs_;
    event.num_batches = loader.num_batches();
    event.items_total = loader.num_items();
    return event;
  }
  template <class Item>
  static std::size_t batch_items(const Item& item) {
    if constexpr (requires { item.output.dims(); }) {
      return static_cast<std::size_t>(item.output.dims()[0]);
    } else {
      return 0;
    }
  }
  static void advance(TrainingEvent& event, std::size_t items,
                      std::chrono::steady_clock::time_point start,
                      const detail::MetricState& metrics) {
    ++event.iteration;
    event.items_processed += items;
    event.elapsed_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    event.items_per_second =
        event.elapsed_seconds > 0 ? static_cast<double>(event.items_processed) / event.elapsed_seconds : 0;
    event.metrics = metrics.values();
  }
  void finish(TrainingEvent event, const std::vector<MetricValue>& values) const {
    event.kind = TrainingEvent::Kind::EpochEnd;
    event.metrics = values;
    emit(event);
  }
  void emit(const TrainingEvent& event) const {
    if (render_) detail::render_event(event);
    for (const auto& callback : callbacks_) callback(event);
  }
  bool interrupted() const { return interrupter_ && interrupter_->should_stop(); }

  void check_early_stopping() const {
    if (!early_stopping_) return;
    const auto name = metric_name(early_stopping_->metric);
    for (const auto& m : metrics_) {
      if (metric_name(m) == name) return;
    }
    throw ConfigError(str_cat("SupervisedTraining::early_stopping: metric ", name,
                              " is not registered with metrics(...)"));
  }
  bool should_stop_early(const std::vector<EpochSummary>& history) const {
    if (!early_stopping_) return false;
    const auto name = metric_name(early_stopping_->metric);
    const bool higher = metric_higher_is_better(early_stopping_->metric);
    std::optional<double> best;
    std::int64_t since_best = 0;
    for (const EpochSummary& s : history) {
      const auto& values = early_stopping_->split == Split::Train ? s.train : s.valid;
      for (const MetricValue& v : values) {
        if (v.name != name) continue;
        const bool improved = !best || (higher ? v.value > *best + early_stopping_->min_delta
                                               : v.value < *best - early_stopping_->min_delta);
        if (improved) {
          best = v.value;
          since_best = 0;
        } else {
          ++since_best;
        }
      }
    }
    return since_best >= early_stopping_->patience;
  }

  std::string artifact_dir_;
  std::shared_ptr<data::DataLoader<B, TI>> train_;
  std::shared_ptr<data::DataLoader<Inner, VI>> valid_;
  std::vector<Metric> metrics_{LossMetric{}};
  std::int64_t num_epochs_ = 1;
  std::optional<record::SafetensorsRecorder> recorder_;
  std::optional<std::int64_t> resume_epoch_;
  bool summary_ = false;
  bool render_ = true;
  std::optional<EarlyStopping> early_stopping_;
  std::vector<Callback> callbacks_;
  std::shared_ptr<Interrupter> interrupter_;
};

template <class B, class TI, class Inner, class VI>
SupervisedTraining(std::string, std::shared_ptr<data::DataLoader<B, TI>>,
                   std::shared_ptr<data::DataLoader<Inner, VI>>) -> SupervisedTraining<B, TI, VI>;

}  // namespace kiln::train
