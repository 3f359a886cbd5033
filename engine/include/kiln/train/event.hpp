#pragma once
/// What a training run reports (Burn's `LearnerEvent` and epoch summaries): the events
/// SupervisedTraining sends to its `on_event` callbacks and its terminal renderer, the
/// metric values they carry, and the per-epoch history of a run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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
    TrainingEnd  ///< the run ended: see `end_reason`
  };
  /// Why the run ended (TrainingEnd only).
  enum class EndReason {
    Completed,     ///< all epochs ran
    StoppedEarly,  ///< by the EarlyStopping rule
    Interrupted,   ///< by the Interrupter
    Failed         ///< by an exception (`error` holds its message); launch rethrows it
  };
  Kind kind = Kind::BatchEnd;
  EndReason end_reason = EndReason::Completed;  ///< TrainingEnd only
  std::string error;                            ///< TrainingEnd with Failed: what() of the exception
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
  /// The Interrupter cut this epoch short: its metrics cover the batches done (`valid` is
  /// empty if the train pass was cut), and no checkpoint was written for it.
  bool interrupted = false;
};

namespace detail {

/// The terminal renderer (engine/src/train/render.cpp): progress bars on stderr.
void render_event(const TrainingEvent& event);
/// The end-of-training table of every metric's min and max with their epochs (Burn's
/// `.summary()`), as text.
std::string summary_table(const std::vector<EpochSummary>& history);

}  // namespace detail

}  // namespace kiln::train
