// The non-template part of SafetensorsRecorder (kiln/record/recorder.hpp): encoding a
// parameter and matching a file against a module, every problem gathered into one error.
#include "kiln/record/recorder.hpp"

#include "record/codec.hpp"

namespace kiln::record::detail {

namespace {

std::string in_quotes(std::string_view s) { return str_cat('"', s, '"'); }

/// "Float (F32, F16 or BF16)": what a parameter of host `dtype` accepts.
std::string_view accepted(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "a Float tensor (F32, F16 or BF16)";
    case DType::I32:
      return "an Int tensor (I64, I32 or U8)";
    case DType::Bool:
      return "a Bool tensor (BOOL or U8)";
  }
  return "?";
}

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
  if (!seen_.insert(path).second) {
    mismatched_.push_back(str_cat("the module has two parameters at ", in_quotes(path)));
    return;
  }
  const auto it = file_.tensors.find(path);
  if (it == file_.tensors.end()) {
    missing_.push_back(path);
    return;
  }
  const SafetensorsTensor& stored = it->second;
  if (!codec::decodes_to(stored.dtype, dtype)) {
    mismatched_.push_back(str_cat(in_quotes(path), " has dtype ", stored.dtype, ", module expects ",
                                  accepted(dtype)));
    return;
  }
  // Kiln has no rank-0 tensors: a stored scalar (PyTorch's num_batches_tracked) is [1].
  const Shape shape = stored.shape.rank() == 0 && rank == 1 ? Shape{1} : stored.shape;
  if (expected != nullptr && !(shape == *expected)) {
    mismatched_.push_back(
        str_cat(in_quotes(path), " has shape ", stored.shape, ", module expects ", *expected));
    return;
  }
  if (expected == nullptr && shape.rank() != rank) {
    mismatched_.push_back(
        str_cat(in_quotes(path), " has shape ", stored.shape, ", module expects rank ", rank));
    return;
  }
  TensorData data;
  std::string problem;
  if (!codec::decode(stored, dtype, data, problem)) {
    mismatched_.push_back(str_cat(in_quotes(path), ": ", problem));
    return;
  }
  data.shape = shape;
  ready_.insert_or_assign(path, std::move(data));
}

void LoadPlan::finish(std::string_view op, std::string_view source) const {
  std::vector<std::string> problems;
  for (const auto& path : missing_) problems.push_back(str_cat("missing ", in_quotes(path)));
  for (const auto& [key, tensor] : file_.tensors) {
    if (!seen_.count(key)) problems.push_back(str_cat("unexpected ", in_quotes(key)));
  }
  problems.insert(problems.end(), mismatched_.begin(), mismatched_.end());
  if (problems.empty()) return;
  std::string message = str_cat(op, ": ", source, ": ", problems.size(),
                                problems.size() == 1 ? " problem: " : " problems: ");
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i) message += "; ";
    message += problems[i];
  }
  throw FormatError(message);
}

TensorData LoadPlan::take(const std::string& path) {
  const auto it = ready_.find(path);
  if (it == ready_.end()) {
    // finish() passed, so every visited path was checked; a visit that changes between
    // the two passes is a bug of the module's hand-written visit.
    throw StateError(str_cat("SafetensorsRecorder: parameter ", in_quotes(path),
                             " was not checked before loading (visit and visit_mut disagree)"));
  }
  TensorData data = std::move(it->second);
  ready_.erase(it);
  return data;
}

}  // namespace kiln::record::detail
