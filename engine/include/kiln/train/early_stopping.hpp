#pragma once
/// Ending a training run early: by a rule on a metric (Burn's early-stopping strategy) or on
/// request from another thread (Burn's `Interrupter`). SupervisedTraining::early_stopping and
/// ::with_interrupter take them.
#include <atomic>
#include <cstdint>
#include <vector>

#include "kiln/train/event.hpp"
#include "kiln/train/metric.hpp"

namespace kiln::train {

/// Stops the run when `metric` on `split` has not improved by more than `min_delta` for
/// `patience` epochs in a row (Burn's MetricEarlyStoppingStrategy with
/// StoppingCondition::NoImprovementSince { n_epochs: patience }); "improved" follows the
/// metric's direction (accuracy up, loss down).
struct EarlyStopping {
  Metric metric = LossMetric{};  ///< must be registered with SupervisedTraining::metrics
  Split split = Split::Valid;    ///< Valid needs a non-empty valid loader
  std::int64_t patience = 1;     ///< epochs without improvement before stopping, >= 1
  double min_delta = 0;          ///< smallest change that counts as improvement, finite, >= 0
};

/// Asks a running training to stop after the current batch (Burn's `Interrupter`): share it
/// with `SupervisedTraining::with_interrupter` and call `stop()` from any thread.
/// A stop request stays set until `reset()`: launch never clears it, so a request made
/// before launch (a Ctrl-C handler during set-up, say) is not lost, and a launch with a set
/// interrupter returns at once, interrupted, before any batch. Call reset() before reusing
/// an interrupter for another run.
class Interrupter {
 public:
  /// Requests the stop (thread-safe).
  void stop() noexcept { stop_.store(true); }
  /// Clears the request.
  void reset() noexcept { stop_.store(false); }
  /// Whether a stop was requested and not reset.
  bool should_stop() const noexcept { return stop_.load(); }

 private:
  std::atomic<bool> stop_{false};
};

namespace detail {

/// Whether `rule` stops the run after the epochs of `history`: the rule's metric on its
/// split has not improved by more than min_delta for `patience` epochs in a row (interrupted
/// epochs are skipped) (engine/src/train/early_stopping.cpp).
bool should_stop_early(const EarlyStopping& rule, const std::vector<EpochSummary>& history);

}  // namespace detail

}  // namespace kiln::train
