// The Learner's terminal renderer, summary table, history JSON and checkpoint state files.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/core/io.hpp"
#include "kiln/train/learner.hpp"

#if defined(__unix__)
#include <unistd.h>
#endif

namespace kiln::train {

// Ordered JSON objects: a history read back keeps the metrics in registration order, which
// the summary table and LearningResult::history rely on.
using Json = nlohmann::ordered_json;

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
  if (event.kind == TrainingEvent::Kind::TrainingEnd) return;
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
  std::fprintf(stderr, "\r\033[K%s%s", event_line(event).c_str(),
               event.kind == TrainingEvent::Kind::EpochEnd ? "\n" : "");
  std::fflush(stderr);
}

std::string summary_table(const std::vector<EpochSummary>& history) {
  std::ostringstream out;
  out << "\n| Split | Metric   | Min.        | Epoch | Max.        | Epoch |\n"
      << "|-------|----------|-------------|-------|-------------|-------|\n";
  for (const Split split : {Split::Train, Split::Valid}) {
    if (history.empty()) break;
    const auto& first = split == Split::Train ? history[0].train : history[0].valid;
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

namespace {

Json values_to_json(const std::vector<MetricValue>& values) {
  Json out = Json::object();
  for (const MetricValue& v : values) {
    out[v.name] = std::isfinite(v.value) ? Json(v.value) : Json(nullptr);
  }
  return out;
}

std::vector<MetricValue> values_from_json(const Json& j) {
  std::vector<MetricValue> out;
  for (const auto& [name, value] : j.items()) {
    const double v = value.is_null() ? std::nan("") : value.get<double>();
    out.push_back({name, v, name == "Accuracy" ? AccuracyMetric::format(v) : LossMetric::format(v)});
  }
  return out;
}

}  // namespace

std::string history_to_json(const std::vector<EpochSummary>& history) {
  Json epochs = Json::array();
  for (const EpochSummary& s : history) {
    epochs.push_back({{"epoch", s.epoch},
                      {"train", values_to_json(s.train)},
                      {"valid", values_to_json(s.valid)},
                      {"train_seconds", s.train_seconds},
                      {"valid_seconds", s.valid_seconds},
                      {"train_items_per_second", s.train_items_per_second}});
  }
  return epochs.dump(2) + "\n";
}

std::vector<EpochSummary> history_from_json(const std::string& text, const std::string& path) {
  try {
    const auto epochs = Json::parse(text);
    std::vector<EpochSummary> out;
    for (const auto& e : epochs) {
      EpochSummary s;
      s.epoch = e.at("epoch").get<std::int64_t>();
      s.train = values_from_json(e.at("train"));
      s.valid = values_from_json(e.at("valid"));
      s.train_seconds = e.at("train_seconds").get<double>();
      s.valid_seconds = e.at("valid_seconds").get<double>();
      s.train_items_per_second = e.at("train_items_per_second").get<double>();
      out.push_back(std::move(s));
    }
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(str_cat("SupervisedTraining: \"", path, "\": malformed history: ", e.what()));
  }
}

std::string model_checkpoint_path(const std::filesystem::path& dir, std::int64_t epoch) {
  return (dir / str_cat("model-", epoch, ".safetensors")).string();
}

namespace {
std::string state_path(const std::filesystem::path& dir, std::int64_t epoch) {
  return (dir / str_cat("state-", epoch, ".json")).string();
}
}  // namespace

void write_training_state(const std::filesystem::path& dir, std::int64_t epoch,
                          std::uint64_t scheduler_steps, const std::vector<EpochSummary>& history) {
  const Json state = {{"epoch", epoch},
                                {"scheduler_steps", scheduler_steps},
                                {"history", Json::parse(history_to_json(history))}};
  io::write_file_atomic(state_path(dir, epoch), state.dump(2) + "\n", "SupervisedTraining");
  // Keep the last two epochs' checkpoints (Burn's KeepLastNCheckpoints(2)).
  for (std::int64_t old = epoch - 2; old >= 1; --old) {
    std::error_code ignored;
    const bool had_model = std::filesystem::remove(model_checkpoint_path(dir, old), ignored);
    const bool had_state = std::filesystem::remove(state_path(dir, old), ignored);
    if (!had_model && !had_state) break;
  }
}

void read_training_state(const std::filesystem::path& dir, std::int64_t epoch,
                         std::uint64_t& scheduler_steps, std::vector<EpochSummary>& history) {
  const std::string path = state_path(dir, epoch);
  const std::string text = io::read_file(path, "SupervisedTraining::checkpoint");
  try {
    const auto state = Json::parse(text);
    if (state.at("epoch").get<std::int64_t>() != epoch) {
      throw FormatError(str_cat("SupervisedTraining::checkpoint: \"", path, "\" is the state of epoch ",
                                state.at("epoch").get<std::int64_t>(), ", expected ", epoch));
    }
    scheduler_steps = state.at("scheduler_steps").get<std::uint64_t>();
    history = history_from_json(state.at("history").dump(), path);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(
        str_cat("SupervisedTraining::checkpoint: \"", path, "\": malformed state: ", e.what()));
  }
}

}  // namespace detail
}  // namespace kiln::train
