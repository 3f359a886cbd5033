// The files SupervisedTraining writes (kiln/train/checkpoint.hpp): the history JSON, the
// training state, the optimizer state record and the checkpoint file names.
#include "kiln/train/checkpoint.hpp"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <system_error>

#include "kiln/core/io.hpp"
#include "kiln/record/safetensors.hpp"
#include "kiln/train/metric.hpp"

namespace kiln::train::detail {

// Ordered JSON objects: a history read back keeps the metrics in registration order, which
// the summary table and LearningResult::history rely on.
using Json = nlohmann::ordered_json;

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
    throw_error<FormatError>("SupervisedTraining: \"", path, "\": malformed history: ", e.what());
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
      throw_error<FormatError>("SupervisedTraining::checkpoint: \"", path,
                               "\" is the state of epoch ", state.epoch, ", expected ", epoch);
    }
    state.scheduler_steps = json.at("scheduler_steps").get<std::uint64_t>();
    state.train_loader_epochs = json.at("train_loader_epochs").get<std::uint64_t>();
    state.valid_loader_epochs = json.at("valid_loader_epochs").get<std::uint64_t>();
    state.history = history_from_json(json.at("history").dump(), path);
    return state;
  } catch (const nlohmann::json::exception& e) {
    throw_error<FormatError>("SupervisedTraining::checkpoint: \"", path,
                             "\": malformed state: ", e.what());
  }
}

std::vector<std::uint8_t> optimizer_state_to_bytes(const optim::NamedStateRecord& record,
                                                   const std::map<std::string, std::string>& metadata) {
  record::SafetensorsFile file;
  file.metadata = metadata;
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
  return record::write_safetensors(file);
}

void write_optimizer_state(const std::string& path, const optim::NamedStateRecord& record) {
  const auto bytes = optimizer_state_to_bytes(record);
  io::write_file_atomic(
      path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
      "SupervisedTraining");
}

namespace {

optim::NamedStateRecord record_of(const record::SafetensorsFile& file, std::string_view path) {
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
          throw_error<FormatError>("SupervisedTraining::checkpoint: \"", path, "\": count \"", key,
                                   "\" has shape ", tensor.shape, ", expected [1]");
        }
        std::uint64_t count = 0;
        for (int i = 0; i < 8; ++i) count |= static_cast<std::uint64_t>(tensor.bytes[i]) << (8 * i);
        out.emplace(key, static_cast<std::int64_t>(count));
        break;
      }
      default:
        throw_error<FormatError>("SupervisedTraining::checkpoint: \"", path, "\": \"", key,
                                 "\" has dtype ", tensor.dtype,
                                 ", expected F32 (a state tensor) or I64 (a count)");
    }
  }
  return out;
}

}  // namespace

optim::NamedStateRecord read_optimizer_state(const std::string& path) {
  return record_of(record::load_safetensors(path), path);
}

optim::NamedStateRecord optimizer_state_from_bytes(std::span<const std::uint8_t> bytes,
                                                   std::string_view source,
                                                   std::map<std::string, std::string>* metadata) {
  const record::SafetensorsFile file = record::read_safetensors(bytes, source);
  if (metadata != nullptr) *metadata = file.metadata;
  return record_of(file, source);
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
  const auto stale_epoch = [&](std::int64_t epoch) {
    return epoch >= 0 && (epoch < keep_first || epoch > keep_last);
  };
  // The markers (state-N.json) go first, then the files they vouch for: a prune killed
  // half-way leaves complete checkpoints and unmarked leftovers (removed by the next prune),
  // never a marked checkpoint whose model or optimizer state is gone.
  std::vector<std::filesystem::path> markers, files;
  std::set<std::string> temporaries_of;  // stale targets whose killed saves left temporaries
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::int64_t epoch = checkpoint_epoch_of(name, false);
    if (stale_epoch(epoch)) {
      (checkpoint_epoch_of(name, true) >= 0 ? markers : files).push_back(entry.path());
      continue;
    }
    for (const std::string_view tag : {".kiln-tmp-", ".tmp-"}) {
      const std::size_t at = name.rfind(tag);
      if (at != std::string::npos && stale_epoch(checkpoint_epoch_of(name.substr(0, at), false))) {
        temporaries_of.insert((dir / name.substr(0, at)).string());
        break;
      }
    }
  }
  for (const auto* group : {&markers, &files}) {
    for (const auto& path : *group) {
      if (!std::filesystem::remove(path, ec) && ec) {
        throw_error<IoError>("SupervisedTraining: cannot remove the stale checkpoint file \"",
                             path.string(), "\": ", ec.message());
      }
    }
  }
  for (const std::string& target : temporaries_of) io::remove_stale_temporaries(target);
}

}  // namespace kiln::train::detail
