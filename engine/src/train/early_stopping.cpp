// The early-stopping rule (kiln/train/early_stopping.hpp).
#include "kiln/train/early_stopping.hpp"

#include <optional>

namespace kiln::train::detail {

bool should_stop_early(const EarlyStopping& rule, const std::vector<EpochSummary>& history) {
  const auto name = metric_name(rule.metric);
  const bool higher = metric_higher_is_better(rule.metric);
  std::optional<double> best;
  std::int64_t since_best = 0;
  for (const EpochSummary& s : history) {
    if (s.interrupted) continue;
    const auto& values = rule.split == Split::Train ? s.train : s.valid;
    for (const MetricValue& v : values) {
      if (v.name != name) continue;
      const bool improved = !best || (higher ? v.value > *best + rule.min_delta
                                             : v.value < *best - rule.min_delta);
      if (improved) {
        best = v.value;
        since_best = 0;
      } else {
        ++since_best;
      }
    }
  }
  return since_best >= rule.patience;
}

}  // namespace kiln::train::detail
