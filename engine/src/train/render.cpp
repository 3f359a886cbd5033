// The Learner's terminal renderer, summary table, history JSON and checkpoint files.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "kiln/core/io.hpp"
#include "kiln/record/safetensors.hpp"
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
                      {"train_items_per_second", s.train_items_per_second},
                      {"interrupted", s.interrupted}});
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
      s.interrupted = e.value("interrupted", false);
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

std::string optimizer_checkpoint_path(const std::filesystem::path& dir, std::int64_t epoch) {
  return (dir / str_cat("optim-", epoch, ".safetensors")).string();
}

namespace {

std::string state_path(const std::filesystem::path& dir, std::int64_t epoch) {
  return (dir / str_cat("state-", epoch, ".json")).string();
}

/// The epoch N of a checkpoint file name ("model-N.safetensors", "optim-N.safetensors",
/// "state-N.json"; N decimal digits without sign), or -1 for any other name. `state_only`
/// accepts state files only.
std::int64_t checkpoint_epoch_of(const std::string& name, bool state_only) {
  struct Pattern {
    const char* prefix;
    const char* suffix;
  };
  static constexpr Pattern kPatterns[] = {
      {"state-", ".json"}, {"model-", ".safetensors"}, {"optim-", ".safetensors"}};
  for (const Pattern& p : kPatterns) {
    const std::size_t pre = std::strlen(p.prefix), suf = std::strlen(p.suffix);
    if (name.size() > pre + suf && name.compare(0, pre, p.prefix) == 0 &&
        name.compare(name.size() - suf, suf, p.suffix) == 0) {
      const std::string digits = name.substr(pre, name.size() - pre - suf);
      if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) {
            return c >= '0' && c <= '9';
          })) {
        return -1;
      }
      return std::stoll(digits);
    }
    if (state_only) break;
  }
  return -1;
}

}  // namespace

void write_training_state(const std::filesystem::path& dir, const TrainingState& state) {
  const Json json = {{"epoch", state.epoch},
                     {"scheduler_steps", state.scheduler_steps},
                     {"train_loader_epochs", state.train_loader_epochs},
                     {"valid_loader_epochs", state.valid_loader_epochs},
                     {"history", Json::parse(history_to_json(state.history))}};
  io::write_file_atomic(state_path(dir, state.epoch), json.dump(2) + "\n", "SupervisedTraining");
}

TrainingState read_training_state(const std::filesystem::path& dir, std::int64_t epoch) {
  const std::string path = state_path(dir, epoch);
  const std::string text = io::read_file(path, "SupervisedTraining::checkpoint");
  try {
    const auto json = Json::parse(text);
    TrainingState state;
    state.epoch = json.at("epoch").get<std::int64_t>();
    if (state.epoch != epoch) {
      throw FormatError(str_cat("SupervisedTraining::checkpoint: \"", path, "\" is the state of epoch ",
                                state.epoch, ", expected ", epoch));
    }
    state.scheduler_steps = json.at("scheduler_steps").get<std::uint64_t>();
    state.train_loader_epochs = json.at("train_loader_epochs").get<std::uint64_t>();
    state.valid_loader_epochs = json.at("valid_loader_epochs").get<std::uint64_t>();
    state.history = history_from_json(json.at("history").dump(), path);
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(
        str_cat("SupervisedTraining::checkpoint: \"", path, "\": malformed state: ", e.what()));
  }
}

void write_optimizer_state(const std::string& path, const optim::NamedStateRecord& record) {
  record::SafetensorsFile file;
  file.metadata["format"] = "kiln optimizer state";
  for (const auto& [key, value] : record) {
    if (const auto* data = std::get_if<TensorData>(&value)) {
      file.tensors.emplace(key, record::SafetensorsTensor::from_data(*data, record::SafetensorsDType::F32));
    } else {
      const auto count = static_cast<std::uint64_t>(std::get<std::int64_t>(value));
      record::SafetensorsTensor t;
      t.dtype = record::SafetensorsDType::I64;
      t.shape = Shape{1};
      t.bytes.resize(8);
      for (int i = 0; i < 8; ++i) t.bytes[i] = static_cast<std::uint8_t>(count >> (8 * i));
      file.tensors.emplace(key, std::move(t));
    }
  }
  const auto bytes = record::write_safetensors(file);
  io::write_file_atomic(
      path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
      "SupervisedTraining");
}

optim::NamedStateRecord read_optimizer_state(const std::string& path) {
  const record::SafetensorsFile file = record::load_safetensors(path);
  optim::NamedStateRecord out;
  for (const auto& [key, tensor] : file.tensors) {
    switch (tensor.dtype) {
      case record::SafetensorsDType::F32:
      case record::SafetensorsDType::F16:
      case record::SafetensorsDType::BF16:
        out.emplace(key, tensor.to_data(DType::F32));
        break;
      case record::SafetensorsDType::I64: {
        if (tensor.shape.num_elements() != 1 || tensor.shape.rank() > 1) {
          throw FormatError(str_cat("SupervisedTraining::checkpoint: \"", path, "\": count \"",
                                    key, "\" has shape ", tensor.shape, ", expected [1]"));
        }
        std::uint64_t count = 0;
        for (int i = 0; i < 8; ++i) count |= static_cast<std::uint64_t>(tensor.bytes[i]) << (8 * i);
        out.emplace(key, static_cast<std::int64_t>(count));
        break;
      }
      default:
        throw FormatError(str_cat("SupervisedTraining::checkpoint: \"", path, "\": \"", key,
                                  "\" has dtype ", tensor.dtype,
                                  ", expected F32 (a state tensor) or I64 (a count)"));
    }
  }
  return out;
}

std::vector<std::int64_t> checkpoint_epochs(const std::filesystem::path& dir) {
  std::vector<std::int64_t> epochs;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return epochs;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::int64_t epoch = checkpoint_epoch_of(entry.path().filename().string(), true);
    if (epoch >= 1) epochs.push_back(epoch);
  }
  std::sort(epochs.begin(), epochs.end());
  return epochs;
}

void prune_checkpoints(const std::filesystem::path& dir, std::int64_t keep_first,
                       std::int64_t keep_last) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return;
  std::vector<std::filesystem::path> stale;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::int64_t epoch = checkpoint_epoch_of(entry.path().filename().string(), false);
    if (epoch >= 0 && (epoch < keep_first || epoch > keep_last)) stale.push_back(entry.path());
  }
  for (const auto& path : stale) {
    if (!std::filesystem::remove(path, ec) && ec) {
      throw IoError(str_cat("SupervisedTraining: cannot remove the stale checkpoint file \"",
                            path.string(), "\": ", ec.message()));
    }
  }
}

std::string describe_non_finite(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return str_cat(value);
}

}  // namespace detail
}  // namespace kiln::train
