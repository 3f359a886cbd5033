// The non-template part of SafetensorsRecorder (kiln/record/recorder.hpp): encoding a
// parameter and matching a file against a module, every problem gathered into one error.
#include "kiln/record/recorder.hpp"

#include <algorithm>
#include <set>

#include "record/codec.hpp"

namespace kiln::record::detail {

namespace {

std::string in_quotes(std::string_view s) { return str_cat('"', s, '"'); }

}  // namespace

SafetensorsTensor encode_param(const TensorData& data, Precision precision) {
  switch (data.dtype) {
    case DType::F32:
      return SafetensorsTensor::from_data(
          data, precision == Precision::Half ? SafetensorsDType::F16 : SafetensorsDType::F32);
    case DType::I32:
      return SafetensorsTensor::from_data(data, SafetensorsDType::I64);
    case DType::Bool:
      return SafetensorsTensor::from_data(data, SafetensorsDType::Bool);
  }
  return {};
}

void LoadPlan::check(const std::string& path, DType dtype, std::size_t rank,
                     const Shape* expected) {
  targets_.push_back(LoadTarget{path, dtype, rank,
                                expected ? std::optional<Shape>(*expected) : std::nullopt});
}

std::vector<RecordValue> plan_record(const std::vector<LoadTarget>& targets,
                                     const SafetensorsFile& file, const LoadOptions& options,
                                     LoadReport& report, std::string_view op,
                                     std::string_view source) {
  std::vector<LoadEntry> entries;
  std::vector<const SafetensorsTensor*> stored;
  entries.reserve(file.tensors.size());
  stored.reserve(file.tensors.size());
  for (const auto& [key, tensor] : file.tensors) {
    entries.push_back(LoadEntry{key, tensor.dtype, tensor.shape});
    stored.push_back(&tensor);
  }
  LoadDecision decision = plan_load(targets, entries, options, LoadSourceKind::Record);
  report = std::move(decision.report);
  // Decode what is taken: an entry whose values do not convert is one more mismatch.
  std::vector<RecordValue> out;
  out.reserve(decision.matches.size());
  std::set<std::string> failed;
  for (const LoadMatch& m : decision.matches) {
    const LoadTarget& target = targets[m.target];
    TensorData data;
    std::string problem;
    if (!codec::decode(*stored[m.entry], target.dtype, data, problem)) {
      add_mismatch(report, target, entries[m.entry], stored[m.entry]->shape, ": " + problem);
      failed.insert(target.path);
      continue;
    }
    if (m.transpose) data = transpose_2d(data);
    data.shape = m.shape;
    out.push_back(RecordValue{m.target, std::move(data)});
  }
  if (!failed.empty()) {
    auto& applied = report.applied;
    applied.erase(std::remove_if(applied.begin(), applied.end(),
                                 [&](const std::string& p) { return failed.count(p) != 0; }),
                  applied.end());
  }
  try {
    throw_if_refused(report, options, op, source, LoadSourceKind::Record);
  } catch (...) {
    report.applied.clear();
    throw;
  }
  return out;
}

void LoadPlan::finish(std::string_view op, std::string_view source) {
  for (auto& v : plan_record(targets_, file_, options_, *report_, op, source)) {
    ready_.insert_or_assign(targets_[v.target].path, std::move(v.data));
  }
}

TensorData LoadPlan::take(const std::string& path) {
  const auto it = ready_.find(path);
  if (it == ready_.end()) {
    // finish() passed, so every visited path was checked; a visit that changes between
    // the two passes is a bug of the module's hand-written visit.
    throw_error<StateError>("SafetensorsRecorder: parameter ", in_quotes(path),
                            " was not checked before loading (visit and visit_mut disagree)");
  }
  TensorData data = std::move(it->second);
  ready_.erase(it);
  return data;
}

}  // namespace kiln::record::detail
