// The Learner's terminal renderer and summary table (kiln/train/event.hpp), the metrics'
// formats and the epoch's metric state (kiln/train/learner.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "kiln/train/learner.hpp"

#if defined(__unix__)
#include <unistd.h>
#endif

namespace kiln::train {

std::string_view split_name(Split split) { return split == Split::Train ? "train" : "valid"; }

std::string AccuracyMetric::format(double value) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << 100.0 * value << " %";
  return out.str();
}

std::string LossMetric::format(double value) {
  std::ostringstream out;
  if (value != 0 && std::fabs(value) < 1e-3) {
    out << std::scientific << std::setprecision(3) << value;
  } else {
    out << std::fixed << std::setprecision(4) << value;
  }
  return out.str();
}

namespace detail {

std::vector<MetricValue> MetricState::values() const {
  std::vector<MetricValue> out;
  for (std::size_t i = 0; i < metrics_->size(); ++i) {
    const double value = weights_[i] > 0 ? sums_[i] / weights_[i] : std::nan("");
    out.push_back({std::string(metric_name((*metrics_)[i])), value,
                   metric_format((*metrics_)[i], value)});
  }
  return out;
}

namespace {

bool stderr_is_terminal() {
#if defined(__unix__)
  static const bool tty = ::isatty(::fileno(stderr)) != 0;
  return tty;
#else
  return false;
#endif
}

std::string event_line(const TrainingEvent& e) {
  std::ostringstream out;
  out << '[' << split_name(e.split) << "] epoch " << e.epoch << '/' << e.num_epochs << ' ';
  constexpr int kWidth = 24;
  const double done = e.items_total ? static_cast<double>(e.items_processed) / e.items_total : 1.0;
  const int filled = static_cast<int>(done * kWidth);
  out << '[' << std::string(filled, '=') << (filled < kWidth ? ">" : "")
      << std::string(kWidth - filled - (filled < kWidth ? 1 : 0), ' ') << "] " << e.items_processed
      << '/' << e.items_total << "  " << static_cast<long long>(e.items_per_second) << " items/s";
  for (const MetricValue& m : e.metrics) out << "  " << m.name << ' ' << m.formatted;
  if (e.split == Split::Train) out << "  lr " << std::setprecision(3) << e.learning_rate;
  return out.str();
}

}  // namespace

void render_event(const TrainingEvent& event) {
  using Clock = std::chrono::steady_clock;
  thread_local Clock::time_point last_draw{};
  thread_local bool line_open = false;  // a progress bar without its newline is on screen
  if (event.kind == TrainingEvent::Kind::TrainingEnd) {
    // A run cut short (interrupt, exception) leaves its bar open: end the line, so what is
    // printed next (the error, the summary) starts on its own line.
    if (line_open) std::fputs("\n", stderr);
    line_open = false;
    return;
  }
  if (!stderr_is_terminal()) {  // logs and CI: one line per finished pass
    if (event.kind == TrainingEvent::Kind::EpochEnd) {
      std::fprintf(stderr, "%s\n", event_line(event).c_str());
    }
    return;
  }
  const auto now = Clock::now();
  if (event.kind == TrainingEvent::Kind::BatchEnd && now - last_draw < std::chrono::milliseconds(100)) {
    return;
  }
  last_draw = now;
  line_open = event.kind != TrainingEvent::Kind::EpochEnd;
  std::fprintf(stderr, "\r\033[K%s%s", event_line(event).c_str(), line_open ? "" : "\n");
  std::fflush(stderr);
}

std::string summary_table(const std::vector<EpochSummary>& history) {
  std::ostringstream out;
  out << "\n| Split | Metric   | Min.        | Epoch | Max.        | Epoch |\n"
      << "|-------|----------|-------------|-------|-------------|-------|\n";
  for (const Split split : {Split::Train, Split::Valid}) {
    // The metric names from the first epoch that has them (an interrupted epoch or one
    // without validation may have none).
    static const std::vector<MetricValue> kNone;
    const std::vector<MetricValue>* names = &kNone;
    for (const EpochSummary& s : history) {
      const auto& values = split == Split::Train ? s.train : s.valid;
      if (!values.empty()) {
        names = &values;
        break;
      }
    }
    const auto& first = *names;
    for (std::size_t m = 0; m < first.size(); ++m) {
      const MetricValue* min = nullptr;
      const MetricValue* max = nullptr;
      std::int64_t min_epoch = 0, max_epoch = 0;
      for (const EpochSummary& s : history) {
        const auto& values = split == Split::Train ? s.train : s.valid;
        if (m >= values.size() || std::isnan(values[m].value)) continue;
        if (!min || values[m].value < min->value) min = &values[m], min_epoch = s.epoch;
        if (!max || values[m].value > max->value) max = &values[m], max_epoch = s.epoch;
      }
      if (!min) continue;
      out << "| " << std::left << std::setw(5) << split_name(split) << " | " << std::setw(8)
          << first[m].name << " | " << std::setw(11) << min->formatted << " | " << std::setw(5)
          << min_epoch << " | " << std::setw(11) << max->formatted << " | " << std::setw(5)
          << max_epoch << " |\n";
    }
  }
  return out.str();
}

}  // namespace detail
}  // namespace kiln::train
