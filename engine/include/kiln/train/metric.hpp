#pragma once
/// Metrics the Learner computes per batch and aggregates per epoch (Burn's
/// `burn::train::metric`): each turns a step's outputs into a value and a weight (the batch's
/// number of items); an epoch's value is the weighted mean of its batches, as Burn's
/// `Aggregate::Mean` of `NumericEntry::Aggregated`.
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::train {

/// One batch's contribution to a metric: `value` weighted by `weight` items.
struct MetricEntry {
  double value = 0;
  double weight = 0;
};

/// Fraction of rows whose argmax over `output` [batch_size, num_classes] equals `targets`
/// [batch_size], shown in percent (Burn's AccuracyMetric). Reads `item.output` and
/// `item.targets` (ClassificationOutput).
struct AccuracyMetric {
  static constexpr std::string_view name() { return "Accuracy"; }
  static constexpr bool higher_is_better = true;
  /// Throws: ShapeError if output's rows differ from targets' length.
  template <class Item>
  MetricEntry update(const Item& item) const {
    const auto rows = item.output.dims()[0];
    if (item.targets.dims()[0] != rows) {
      throw_error<ShapeError>("AccuracyMetric: expected targets [", rows, "] for output ",
                              item.output.shape(), ", got ", item.targets.shape());
    }
    if (rows == 0) return {0, 0};
    const auto predicted = item.output.argmax(1).template squeeze_dim<1>(1);
    const auto correct = predicted.equal(item.targets).int_().sum().into_scalar();
    return {static_cast<double>(correct) / static_cast<double>(rows), static_cast<double>(rows)};
  }
  /// "97.52 %".
  static std::string format(double value);
};

/// The mean of `item.loss` over the items (Burn's LossMetric): each batch's loss (a mean over
/// its items) weighted by its number of rows, `item.output.dims()[0]`.
struct LossMetric {
  static constexpr std::string_view name() { return "Loss"; }
  static constexpr bool higher_is_better = false;
  template <class Item>
  MetricEntry update(const Item& item) const {
    return {static_cast<double>(item.loss.into_scalar()),
            static_cast<double>(item.output.dims()[0])};
  }
  /// "0.1234" (4 decimals; scientific below 1e-3).
  static std::string format(double value);
};

/// The built-in metrics a SupervisedTraining can register.
using Metric = std::variant<AccuracyMetric, LossMetric>;

/// The metric's name ("Accuracy", "Loss").
inline std::string_view metric_name(const Metric& metric) {
  return std::visit([](const auto& m) { return m.name(); }, metric);
}
/// Whether a larger value is better.
inline bool metric_higher_is_better(const Metric& metric) {
  return std::visit([](const auto& m) { return m.higher_is_better; }, metric);
}
/// The value formatted as the metric shows it.
inline std::string metric_format(const Metric& metric, double value) {
  return std::visit([&](const auto& m) { return m.format(value); }, metric);
}

}  // namespace kiln::train
