// The Learner's terminal renderer and summary table (kiln/train/event.hpp), the metrics'
// formats and the epoch's metric state (kiln/train/learner.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "kiln/core/str_cat.hpp"
#include "kiln/train/learner.hpp"

#if defined(__unix__)
#include <unistd.h>
#endif

namespace kiln::train {

std::string_view split_name(Split split) { return split == Split::Train ? "train" : "valid"; }

namespace {

/// printf's text of one double (what an ostream with std::fixed or std::scientific and
/// that precision writes).
std::string printf_double(const char* format, double value) {
  char buf[400];  // %.4f of 1e308 has 313 characters
  const int n = std::snprintf(buf, sizeof buf, format, value);
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

/// `text` left-aligned in `width` columns (std::left << std::setw(width)).
void append_padded(std::string& out, std::string_view text, std::size_t width) {
  out += text;
  if (text.size() < width) out.append(width - text.size(), ' ');
}

}  // namespace

std::string AccuracyMetric::format(double value) {
  return printf_double("%.2f", 100.0 * value) + " %";
}

std::string LossMetric::format(double value) {
  if (value != 0 && std::fabs(value) < 1e-3) return printf_double("%.3e", value);
  return printf_double("%.4f", value);
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
  StrOut out;
  out << '[' << split_name(e.split) << "] epoch " << e.epoch << '/' << e.num_epochs << ' ';
  constexpr int kWidth = 24;
  const double done = e.items_total ? static_cast<double>(e.items_processed) / e.items_total : 1.0;
  const int filled = static_cast<int>(done * kWidth);
  out << '[' << std::string(filled, '=') << (filled < kWidth ? ">" : "")
      << std::string(kWidth - filled - (filled < kWidth ? 1 : 0), ' ') << "] " << e.items_processed
      << '/' << e.items_total << "  " << static_cast<long long>(e.items_per_second) << " items/s";
  for (const MetricValue& m : e.metrics) out << "  " << m.name << ' ' << m.formatted;
  if (e.split == Split::Train) out << "  lr " << fmt_g(e.learning_rate, 3);
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
  StrOut out;
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
      std::string& row = out.str();
      row += "| ";
      append_padded(row, split_name(split), 5);
      row += " | ";
      append_padded(row, first[m].name, 8);
      row += " | ";
      append_padded(row, min->formatted, 11);
      row += " | ";
      append_padded(row, str_cat(min_epoch), 5);
      row += " | ";
      append_padded(row, max->formatted, 11);
      row += " | ";
      append_padded(row, str_cat(max_epoch), 5);
      row += " |\n";
    }
  }
  return out.str();
}

}  // namespace detail
}  // namespace kiln::train
