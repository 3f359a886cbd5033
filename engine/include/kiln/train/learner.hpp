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
///      train_step (step.hpp) runs `model.train_step(batch)` (gradients and outputs) and the
///      optimizer's step at the scheduler's next learning rate (a constant for
///      `Learner(model, optim, 1e-3)`), refusing a step that is not finite (NonFiniteError);
///      each metric is updated with the outputs.
///   2. valid: `model.valid()` (no autodiff) runs `inference_step(batch)` on every batch of
///      the valid loader (a DataLoader<B::Inner, VI>); the metrics are updated. An empty
///      valid loader skips this pass: no valid events, and the epoch's `valid` metrics are
///      empty (never nan); Burn's valid epoch over an empty loader likewise runs no step
///      and records no metric value.
///   3. the epoch's metric values are the item-weighted means over its batches; with a
///      checkpointer the model, the optimizer's state and the training state are written to
///      `artifact_dir/checkpoint/` (the last two epochs are kept); history.json is rewritten;
///      early stopping may end the run.
/// The parts live in their own headers, all included here: step.hpp (the training step),
/// event.hpp (events, history), early_stopping.hpp (EarlyStopping, Interrupter),
/// checkpoint.hpp (files), metric.hpp and output.hpp.
/// Events (batch ends, epoch ends, the end) go to the `on_event` callbacks and, unless
/// `quiet()`, to a terminal renderer on stderr: a progress bar per epoch with items/s and the
/// metrics, and with `summary()` a table of every metric's best and worst epoch at the end.
/// Every launch that passes its configuration checks ends with exactly one TrainingEnd
/// event, also when an exception ends it (then with EndReason::Failed and the message).
///
/// Checkpoints (with_file_checkpointer), after epoch e, in artifact_dir/checkpoint/:
///   model-e.safetensors  the model, in the recorder's precision;
///   optim-e.safetensors  the optimizer's state (OptimizerAdaptor::to_named_record: keys
///                        "<param path>.<field>", e.g. "fc1.weight.moment_1", and the step
///                        counts "fc1.weight.time"), always F32: half precision would flush
///                        Adam's second moments (often < 1e-8) to zero and make the resumed
///                        steps explode;
///   state-e.json         epoch, scheduler steps, the loaders' epoch counts and the history;
///                        written last, so its presence marks a complete checkpoint.
/// A resumed run (`checkpoint(e)` or `resume_latest()`) restores all of them, so it continues
/// exactly as the uninterrupted run would have (bit for bit with the F32 recorder: same
/// weights, moments, learning rates and shuffles). A fresh run removes the checkpoint files
/// of earlier runs from artifact_dir/checkpoint/ when it starts (other files there are left
/// alone), and a run resumed after epoch e removes those of epochs after e (they belong to
/// the continuation it replaces).
///
/// Differences from Burn: metrics are chosen from the built-in `train::Metric` variant and
/// apply to both splits; Burn's checkpointer does not restore the data loaders' shuffles,
/// Kiln's does (DataLoader::set_epochs_started).
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
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
#include "kiln/train/checkpoint.hpp"
#include "kiln/train/early_stopping.hpp"
#include "kiln/train/event.hpp"
#include "kiln/train/metric.hpp"
#include "kiln/train/output.hpp"
#include "kiln/train/step.hpp"

namespace kiln::train {

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
  std::vector<EpochSummary> history;  ///< a resumed run's includes the checkpoint's epochs
  bool stopped_early = false;         ///< by the EarlyStopping rule
  bool interrupted = false;           ///< by the Interrupter
  std::int64_t resumed_from = 0;      ///< the checkpoint's epoch it resumed after; 0: fresh
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
    if (!train_ || !valid_) throw_error<ValueError>("SupervisedTraining: a data loader is null");
  }

  /// The metrics computed on both splits (Burn's `.metrics((AccuracyMetric, LossMetric))`),
  /// in the order given (the order of EpochSummary's values and the summary table).
  /// Throws: ConfigError if a metric is given twice.
  SupervisedTraining metrics(std::vector<Metric> metrics) const {
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (metric_name(metrics[i]) == metric_name(metrics[j])) {
          throw_error<ConfigError>("SupervisedTraining::metrics: ", metric_name(metrics[i]),
                                   " is given twice (positions ", j, " and ", i, ")");
        }
      }
    }
    auto out = *this;
    out.metrics_ = std::move(metrics);
    return out;
  }
  /// Epochs to run (default 1). Throws ConfigError if < 1.
  SupervisedTraining num_epochs(std::int64_t n) const {
    if (n < 1) throw_error<ConfigError>("SupervisedTraining::num_epochs: must be >= 1, got ", n);
    auto out = *this;
    out.num_epochs_ = n;
    return out;
  }
  /// Saves the model with `recorder` after every epoch, with the optimizer's state and the
  /// training state, under artifact_dir/checkpoint/ (Burn's `with_file_checkpointer`; see the
  /// top of this file).
  SupervisedTraining with_file_checkpointer(record::SafetensorsRecorder recorder) const {
    auto out = *this;
    out.recorder_ = recorder;
    return out;
  }
  /// Resumes after the checkpoint of `epoch` (Burn's `.checkpoint(epoch)`): launch loads the
  /// model, the optimizer's state, the scheduler position, the loaders' epoch counts and the
  /// history, and runs epochs epoch+1..num_epochs. Needs with_file_checkpointer. Replaces
  /// resume_latest().
  /// Throws: ConfigError if epoch < 1 (launch also throws ConfigError if epoch >= num_epochs:
  ///         nothing would be left to train).
  SupervisedTraining checkpoint(std::int64_t epoch) const {
    if (epoch < 1) {
      throw_error<ConfigError>(
          "SupervisedTraining::checkpoint: the epoch to resume after must be >= 1, got ", epoch);
    }
    auto out = *this;
    out.resume_epoch_ = epoch;
    out.resume_latest_ = false;
    return out;
  }
  /// Resumes after the newest complete checkpoint in artifact_dir/checkpoint/ if there is
  /// one (as checkpoint(epoch) does), else starts a fresh run; LearningResult::resumed_from
  /// tells which. Needs with_file_checkpointer. Replaces checkpoint(epoch).
  /// launch throws ConfigError if the newest checkpoint's epoch is >= num_epochs (the run is
  /// finished: raise num_epochs to train on).
  SupervisedTraining resume_latest() const {
    auto out = *this;
    out.resume_epoch_.reset();
    out.resume_latest_ = true;
    return out;
  }
  /// Prints the metric summary table when training ends (Burn's `.summary()`).
  SupervisedTraining summary() const {
    auto out = *this;
    out.summary_ = true;
    return out;
  }
  /// Stops early by this rule (Burn's `.early_stopping(...)`).
  /// Throws: ConfigError if patience < 1 or min_delta is negative or not finite; launch
  ///         throws ConfigError if the metric is not registered, or the split is Valid and
  ///         the valid loader is empty.
  SupervisedTraining early_stopping(EarlyStopping rule) const {
    if (rule.patience < 1) {
      throw_error<ConfigError>("SupervisedTraining::early_stopping: patience must be >= 1, got ",
                               rule.patience);
    }
    if (!(std::isfinite(rule.min_delta) && rule.min_delta >= 0)) {
      throw_error<ConfigError>(
          "SupervisedTraining::early_stopping: min_delta must be finite and >= 0, got ",
          rule.min_delta);
    }
    auto out = *this;
    out.early_stopping_ = rule;
    return out;
  }
  /// Also sends every event to `callback` (called on the training thread). An exception
  /// from a callback ends the run as any other (TrainingEnd with Failed, then rethrown);
  /// exceptions from that final TrainingEnd's callbacks are dropped, so the first one is
  /// the one launch throws.
  SupervisedTraining on_event(Callback callback) const {
    auto out = *this;
    out.callbacks_.push_back(std::move(callback));
    return out;
  }
  /// Lets another thread stop the run after the current batch (see Interrupter: a request
  /// stays set until reset()).
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

  /// Runs the training (see the top of this file) and returns the trained model.
  /// An Interrupter stop ends the run after the current batch: the cut epoch is in the
  /// result's history and in history.json, marked `interrupted`, without a checkpoint.
  /// Throws: ConfigError, before anything is written or any event, for: checkpoint() or
  ///         resume_latest() without a checkpointer; a resume epoch >= num_epochs; an
  ///         early-stopping metric that is not registered, or on an empty valid loader; an
  ///         empty train loader. NonFiniteError ("loss is NaN at epoch e, batch b", or naming
  ///         the gradient or updated parameter that is not finite) instead of applying a step
  ///         whose loss, gradients or updated parameters are not all finite (train_step,
  ///         step.hpp); the last checkpoint holds the model of the last finished epoch. IoError / FormatError from
  ///         checkpoints (a missing or mismatched model, optimizer state or state file);
  ///         whatever the model's steps, the loaders and the callbacks throw.
  template <class M, class O, class LR>
  requires TrainStep<M, TI> LearningResult<M> launch(Learner<M, O, LR> learner) const {
    using ValidModel = decltype(learner.model.valid());
    static_assert(InferenceStep<ValidModel, VI>,
                  "SupervisedTraining::launch: model.valid() needs inference_step(batch)");
    const std::filesystem::path dir(artifact_dir_);
    const std::filesystem::path checkpoints = dir / "checkpoint";
    const std::optional<std::int64_t> resume = check_launch(checkpoints);

    LearningResult<M> result{std::move(learner.model), {}, false, false, 0};
    double lr = 0;
    try {
      run(learner, result, resume, lr);
    } catch (const std::exception& e) {
      end_failed(result, lr, e.what());
      throw;
    } catch (...) {
      end_failed(result, lr, "an exception that is not a std::exception");
      throw;
    }
    emit(end_event(result, lr,
                   result.interrupted      ? TrainingEvent::EndReason::Interrupted
                   : result.stopped_early  ? TrainingEvent::EndReason::StoppedEarly
                                           : TrainingEvent::EndReason::Completed));
    if (render_ && summary_) std::fputs(detail::summary_table(result.history).c_str(), stderr);
    return result;
  }

 private:
  /// Whether O records its state (OptimizerAdaptor does); other optimizers resume without it.
  template <class O, class M>
  static constexpr bool kRecordsState = requires(const O& o, const M& m) {
    { o.to_named_record(m) } -> std::same_as<optim::NamedStateRecord>;
    o.load_named_record(m, optim::NamedStateRecord{}, std::string_view{});
  };

  /// The configuration checks of launch; returns the epoch to resume after, if any.
  std::optional<std::int64_t> check_launch(const std::filesystem::path& checkpoints) const {
    if (early_stopping_) {
      const auto name = metric_name(early_stopping_->metric);
      bool registered = false;
      for (const auto& m : metrics_) registered = registered || metric_name(m) == name;
      if (!registered) {
        throw_error<ConfigError>("SupervisedTraining::early_stopping: metric ", name,
                                 " is not registered with metrics(...)");
      }
      if (early_stopping_->split == Split::Valid && valid_->num_items() == 0) {
        throw_error<ConfigError>(
            "SupervisedTraining::early_stopping: the rule watches the valid split, but the "
            "valid loader has no items (validation is skipped)");
      }
    }
    if (train_->num_items() == 0) {
      throw_error<ConfigError>("SupervisedTraining::launch: the train loader has no items");
    }
    if ((resume_epoch_ || resume_latest_) && !recorder_) {
      throw_error<ConfigError>(
          "SupervisedTraining::", resume_latest_ ? "resume_latest" : "checkpoint",
          ": resuming needs with_file_checkpointer");
    }
    std::optional<std::int64_t> resume = resume_epoch_;
    if (resume_latest_) {
      const auto epochs = detail::checkpoint_epochs(checkpoints);
      if (!epochs.empty()) resume = epochs.back();
    }
    if (resume && *resume >= num_epochs_) {
      throw_error<ConfigError>(
          "SupervisedTraining::",
          resume_latest_ ? "resume_latest: the newest checkpoint is" : "checkpoint: resuming after",
          " epoch ", *resume, ", but num_epochs is ", num_epochs_,
          ": nothing is left to train (raise num_epochs to train further)");
    }
    return resume;
  }

  template <class M, class O, class LR>
  void run(Learner<M, O, LR>& learner, LearningResult<M>& result,
           std::optional<std::int64_t> resume, double& lr) const {
    const std::filesystem::path dir(artifact_dir_);
    const std::filesystem::path checkpoints = dir / "checkpoint";
    std::filesystem::create_directories(recorder_ ? checkpoints : dir);
    auto& model = result.model;
    std::int64_t first_epoch = 1;
    std::uint64_t scheduler_steps = 0;
    if (resume) {
      const std::int64_t e = *resume;
      model = recorder_->load_file(model, detail::model_checkpoint_path(checkpoints, e),
                                   typename B::Device{});
      if constexpr (kRecordsState<O, M>) {
        const std::string path = detail::optimizer_checkpoint_path(checkpoints, e);
        learner.optimizer = learner.optimizer.load_named_record(
            model, detail::read_optimizer_state(path), str_cat('"', path, '"'));
      }
      detail::TrainingState state = detail::read_training_state(checkpoints, e);
      scheduler_steps = state.scheduler_steps;
      for (std::uint64_t i = 0; i < scheduler_steps; ++i) (void)learner.scheduler.step();
      train_->set_epochs_started(state.train_loader_epochs);
      valid_->set_epochs_started(state.valid_loader_epochs);
      result.history = std::move(state.history);
      result.resumed_from = e;
      first_epoch = e + 1;
      detail::prune_checkpoints(checkpoints, e - 1, e);
    } else {
      detail::prune_checkpoints(checkpoints, 1, 0);  // all: they belong to earlier runs
    }

    for (std::int64_t epoch = first_epoch; epoch <= num_epochs_; ++epoch) {
      if (interrupted()) {
        result.interrupted = true;
        break;
      }
      EpochSummary summary;
      summary.epoch = epoch;

      // ---- train
      detail::MetricState train_metrics(metrics_);
      TrainingEvent event = start_event(Split::Train, epoch, *train_);
      const auto train_start = std::chrono::steady_clock::now();
      for (const TI& batch : *train_) {
        // The scheduler advances only with a step that is applied (train_step's guard).
        LR scheduler = learner.scheduler;
        const double step_lr = scheduler.step();
        const auto item = train_step(
            model, learner.optimizer, step_lr, batch,
            StepPosition{"SupervisedTraining", epoch,
                         static_cast<std::int64_t>(event.iteration) + 1});
        learner.scheduler = std::move(scheduler);
        lr = step_lr;
        ++scheduler_steps;
        train_metrics.update(item);
        event.learning_rate = lr;
        advance(event, batch_items(item), train_start, train_metrics);
        emit(event);
        if (interrupted()) break;
      }
      summary.train = train_metrics.values();
      summary.train_seconds = event.elapsed_seconds;
      summary.train_items_per_second = event.items_per_second;
      finish(event, summary.train);
      if (interrupted()) {
        end_interrupted(result, std::move(summary), dir);
        break;
      }

      // ---- valid (skipped when the valid loader is empty)
      if (valid_->num_items() > 0) {
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
        if (interrupted()) {
          end_interrupted(result, std::move(summary), dir);
          break;
        }
      }
      result.history.push_back(std::move(summary));

      // ---- checkpoint, history, early stop
      if (recorder_) {
        recorder_->save_file(model, detail::model_checkpoint_path(checkpoints, epoch));
        if constexpr (kRecordsState<O, M>) {
          detail::write_optimizer_state(detail::optimizer_checkpoint_path(checkpoints, epoch),
                                        learner.optimizer.to_named_record(model));
        }
        detail::TrainingState state;
        state.epoch = epoch;
        state.scheduler_steps = scheduler_steps;
        state.train_loader_epochs = train_->epochs_started();
        state.valid_loader_epochs = valid_->epochs_started();
        state.history = result.history;
        detail::write_training_state(checkpoints, state);
        // Keep the last two epochs' checkpoints (Burn's KeepLastNCheckpoints(2)).
        detail::prune_checkpoints(checkpoints, epoch - 1, epoch);
      }
      write_history(dir, result.history);
      if (should_stop_early(result.history)) {
        result.stopped_early = true;
        break;
      }
    }
  }

  template <class M>
  void end_interrupted(LearningResult<M>& result, EpochSummary summary,
                       const std::filesystem::path& dir) const {
    summary.interrupted = true;
    result.interrupted = true;
    result.history.push_back(std::move(summary));
    write_history(dir, result.history);
  }
  static void write_history(const std::filesystem::path& dir,
                            const std::vector<EpochSummary>& history) {
    io::write_file_atomic((dir / "history.json").string(), detail::history_to_json(history),
                          "SupervisedTraining");
  }
  template <class M>
  TrainingEvent end_event(const LearningResult<M>& result, double lr,
                          TrainingEvent::EndReason reason) const {
    TrainingEvent end;
    end.kind = TrainingEvent::Kind::TrainingEnd;
    end.end_reason = reason;
    end.epoch = result.history.empty() ? result.resumed_from : result.history.back().epoch;
    end.num_epochs = num_epochs_;
    end.learning_rate = lr;
    return end;
  }
  template <class M>
  void end_failed(const LearningResult<M>& result, double lr, const char* what) const {
    try {
      TrainingEvent end = end_event(result, lr, TrainingEvent::EndReason::Failed);
      end.error = what;
      emit(end);
    } catch (...) {  // keep the exception that ended the run
    }
  }

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

  bool should_stop_early(const std::vector<EpochSummary>& history) const {
    return early_stopping_ && detail::should_stop_early(*early_stopping_, history);
  }

  std::string artifact_dir_;
  std::shared_ptr<data::DataLoader<B, TI>> train_;
  std::shared_ptr<data::DataLoader<Inner, VI>> valid_;
  std::vector<Metric> metrics_{LossMetric{}};
  std::int64_t num_epochs_ = 1;
  std::optional<record::SafetensorsRecorder> recorder_;
  std::optional<std::int64_t> resume_epoch_;
  bool resume_latest_ = false;
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
