#pragma once
/// Recorders (Burn's `Recorder`): save a module's parameters to SafeTensors and load them
/// back, keyed by field path ("fc1.weight", "layers.0.bias"), in PyTorch's layouts, so a
/// Kiln file loads into the equivalent torch.nn module with `load_state_dict` and back.
///
///   model.save_file("mlp.safetensors", SafetensorsRecorder{});          // F32 on disk
///   model.save_file("mlp.safetensors", CompactRecorder{});              // F16 on disk
///   auto loaded = Mlp<Cpu>{...}.load_file("mlp.safetensors", SafetensorsRecorder{}, device);
///   auto bytes = SafetensorsRecorder{}.to_bytes(model);                 // for the browser
///   auto again = SafetensorsRecorder{}.from_bytes(model, bytes, device);
///
/// On disk: Float parameters as F32 (full precision) or F16 (half precision, rounded to
/// nearest even); Int parameters as I64, PyTorch's integer type (num_batches_tracked);
/// Bool parameters as BOOL. Kiln has no rank-0 tensors, so a [1] parameter is stored as
/// [1] (PyTorch's load_state_dict accepts it for a 0-dim buffer) and a file scalar (shape
/// []) loads into a [1] parameter.
///
/// Loading accepts F32, F16 or BF16 for Float parameters, I64 (range-checked), I32 or U8
/// for Int, BOOL or U8 for Bool, whatever the recorder's precision. It checks every key,
/// dtype and shape before it changes anything, and reports every missing, unexpected and
/// mismatched entry in one FormatError:
///   SafetensorsRecorder::load_file: "m.safetensors": 2 problems: missing "fc2.bias";
///   "fc1.weight" has shape [10, 784], module expects [128, 784]
/// The loaded module is a copy of the given one with every parameter replaced through
/// Param::set: ids and require-grad flags are kept, Float parameters of an autodiff
/// module become tracked leaves again. A parameter of the given module may be empty
/// (never initialized); it then takes the file's shape, which must have the right rank.
///
/// Load options (kiln/record/load_options.hpp: key remapping, partial loading, Burn's
/// conventions) ride on the recorder, so `model.load_file(path, recorder, device)` uses
/// them; the overloads taking a LoadReport& fill it (also when they throw):
///   auto recorder = SafetensorsRecorder{}.with_load_options(
///       LoadOptions().with_key_remapping(R"(^model\.)", "").allow_partial(true));
///   LoadReport report;
///   auto loaded = recorder.load_file(model, "m.safetensors", device, report);
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/module/param.hpp"
#include "kiln/record/load_options.hpp"
#include "kiln/record/safetensors.hpp"

namespace kiln::record {

/// Precision of Float parameters on disk.
enum class Precision {
  Full,  ///< F32: exact
  Half,  ///< F16: half the size; values rounded to 11 significant bits, |x| > 65504 -> inf
};

namespace detail {

/// The stored form of a parameter's data: f32 -> F32 or F16 by precision, i32 -> I64,
/// bool -> BOOL.
SafetensorsTensor encode_param(const TensorData& data, Precision precision);

/// One decided assignment of a record: targets[target] takes `data` (decoded to the
/// target's dtype, transposed by the adapter, a scalar made [1]).
struct RecordValue {
  std::size_t target = 0;
  TensorData data;
};

/// plan_load of `file`'s entries (LoadSourceKind::Record), then decoding what is taken (a
/// value that does not convert, an I64 beyond i32, is one more mismatch); fills `report`.
/// Throws: FormatError `<op>: <source>: N problems: ...` if the options refuse a problem
///   (the report's `applied` is then empty).
std::vector<RecordValue> plan_record(const std::vector<LoadTarget>& targets,
                                     const SafetensorsFile& file, const LoadOptions& options,
                                     LoadReport& report, std::string_view op,
                                     std::string_view source);

/// Matches a record against a module's parameters under LoadOptions (the non-template part
/// of loading): check() each parameter, finish() once, then take() each path that has().
class LoadPlan {
 public:
  /// `report`, when given, receives the report (it must outlive the plan).
  explicit LoadPlan(const SafetensorsFile& file, LoadOptions options = {},
                    LoadReport* report = nullptr)
      : file_(file), options_(std::move(options)), report_(report ? report : &own_report_) {}
  LoadPlan(const LoadPlan&) = delete;
  LoadPlan& operator=(const LoadPlan&) = delete;
  /// Notes a parameter of host `dtype` and `rank` at `path` whose current shape is
  /// `*expected` (null when the parameter is empty).
  void check(const std::string& path, DType dtype, std::size_t rank, const Shape* expected);
  /// Matches, decodes what is taken, fills the report. Throws FormatError
  /// `<op>: <source>: N problems: ...` listing every problem the options refuse (see
  /// detail::throw_if_refused); the report's `applied` is then empty.
  void finish(std::string_view op, std::string_view source);
  /// Whether `path` takes a value (false for a missing one the options allow).
  bool has(const std::string& path) const { return ready_.count(path) != 0; }
  /// The decoded data for `path` (moved out).
  TensorData take(const std::string& path);
  const LoadReport& report() const { return *report_; }

 private:
  const SafetensorsFile& file_;
  LoadOptions options_;
  LoadReport own_report_;
  LoadReport* report_;
  std::vector<LoadTarget> targets_;
  std::map<std::string, TensorData> ready_;
};

/// plan.check for one parameter: its kind's dtype, its rank and its shape if initialized.
template <Backend B, std::size_t D, TensorKind K>
void check_param(LoadPlan& plan, const std::string& path, const module::Param<Tensor<B, D, K>>& p) {
  if (p.is_initialized()) {
    const Shape shape = p.shape();
    plan.check(path, K::dtype, D, &shape);
  } else {
    plan.check(path, K::dtype, D, nullptr);
  }
}

/// Replaces the parameter's tensor with the checked data on `device` (Param::set keeps the
/// id and the require-grad flag); a parameter the record lacks (partial load) is kept.
template <Backend B, std::size_t D, TensorKind K, class Dev>
void load_param(LoadPlan& plan, const std::string& path, module::Param<Tensor<B, D, K>>& p,
                const Dev& device) {
  if (!plan.has(path)) return;
  p.set(Tensor<B, D, K>::from_data(plan.take(path), device));
}

}  // namespace detail

/// A copy of `module` with its parameters taken from `file` under `options`, tensors
/// created on `device`; `report` says what was applied, missing, unexpected, mismatched and
/// remapped (filled also when this throws). What every recorder's load does: a reader of
/// another format (PyTorch, named MessagePack) makes a SafetensorsFile and calls this.
/// `op` and `source` name the call and the file in errors.
/// Throws: FormatError listing every problem the options refuse (missing, unexpected,
///   mismatched entries; two record keys remapped to one); the module is then unchanged.
template <class M, class Dev>
M load_record(const M& module, const SafetensorsFile& file, const Dev& device,
              const LoadOptions& options, LoadReport& report, std::string_view op,
              std::string_view source) {
  report = LoadReport{};
  detail::LoadPlan plan(file, options, &report);
  auto check = [&](const std::string& path, const auto& param) {
    detail::check_param(plan, path, param);
  };
  module.visit(check);
  plan.finish(op, source);
  M out = module;
  auto load = [&](const std::string& path, auto& param) {
    detail::load_param(plan, path, param, device);
  };
  out.visit_mut(load);
  return out;
}

/// Saves and loads modules as SafeTensors (see the top of this header). Full precision by
/// default; `SafetensorsRecorder::half()` (or CompactRecorder) stores Float parameters as
/// F16 and loads them back as f32.
class SafetensorsRecorder {
 public:
  SafetensorsRecorder() = default;
  explicit SafetensorsRecorder(Precision precision) : precision_(precision) {}
  /// F32 on disk.
  static SafetensorsRecorder full() { return SafetensorsRecorder(Precision::Full); }
  /// F16 on disk (Burn's HalfPrecisionSettings).
  static SafetensorsRecorder half() { return SafetensorsRecorder(Precision::Half); }
  Precision precision() const { return precision_; }
  /// This recorder loading under `options` (key remapping, partial loading, adapter;
  /// kiln/record/load_options.hpp). Saving is unaffected.
  SafetensorsRecorder with_load_options(LoadOptions options) const {
    SafetensorsRecorder out = *this;
    out.load_options_ = std::move(options);
    return out;
  }
  const LoadOptions& load_options() const { return load_options_; }

  /// The record of `module`: one tensor per parameter, keyed by field path.
  /// Throws: StateError if a parameter is empty; ValueError if two parameters share a path.
  template <class M>
  SafetensorsFile to_record(const M& module) const {
    SafetensorsFile file;
    auto collect = [&](const std::string& path, const auto& param) {
      if (!param.is_initialized()) {
        throw_error<StateError>("SafetensorsRecorder: parameter \"", path,
                                "\" is empty (the module was not initialized)");
      }
      if (!file.tensors.emplace(path, detail::encode_param(param.val().to_data(), precision_))
               .second) {
        throw_error<ValueError>("SafetensorsRecorder: two parameters have the path \"", path, "\"");
      }
    };
    module.visit(collect);
    return file;
  }

  /// The SafeTensors bytes of `module` (canonical: the same module gives the same bytes).
  /// Throws: as to_record.
  template <class M>
  std::vector<std::uint8_t> to_bytes(const M& module) const {
    return write_safetensors(to_record(module));
  }

  /// Writes `module` to `path` atomically: a temporary file next to it, then a rename, so a
  /// failed save leaves any previous file untouched.
  /// Throws: as to_record; IoError if writing or renaming fails.
  template <class M>
  void save_file(const M& module, const std::string& path) const {
    const auto bytes = to_bytes(module);
    io::write_file_atomic(
        path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        "SafetensorsRecorder::save_file");
  }

  /// A copy of `module` with every parameter taken from `file` under the recorder's load
  /// options, tensors created on `device`; `report` is filled (also when this throws).
  /// `op` and `source` name the call and the file in errors.
  /// Throws: FormatError listing every missing, unexpected and mismatched entry the options
  ///   refuse; the module is then unchanged.
  template <class M, class Dev>
  M from_record(const M& module, const SafetensorsFile& file, const Dev& device,
                LoadReport& report, std::string_view op = "SafetensorsRecorder::from_record",
                std::string_view source = "record") const {
    return load_record(module, file, device, load_options_, report, op, source);
  }
  /// from_record without a report.
  template <class M, class Dev>
  M from_record(const M& module, const SafetensorsFile& file, const Dev& device,
                std::string_view op = "SafetensorsRecorder::from_record",
                std::string_view source = "record") const {
    LoadReport report;
    return from_record(module, file, device, report, op, source);
  }

  /// from_record of the SafeTensors `bytes` (errors name the source `bytes`).
  /// Throws: FormatError if the bytes are malformed (read_safetensors) or do not fit the module.
  template <class M, class Dev>
  M from_bytes(const M& module, std::span<const std::uint8_t> bytes, const Dev& device,
               LoadReport& report) const {
    return from_record(module, read_safetensors(bytes, "bytes"), device, report,
                       "SafetensorsRecorder::from_bytes", "bytes");
  }
  template <class M, class Dev>
  M from_bytes(const M& module, std::span<const std::uint8_t> bytes, const Dev& device) const {
    LoadReport report;
    return from_bytes(module, bytes, device, report);
  }

  /// from_record of the file at `path` (Burn's load_file; errors name the path).
  /// Throws: IoError if it cannot be read; FormatError if it is malformed or does not fit.
  template <class M, class Dev>
  M load_file(const M& module, const std::string& path, const Dev& device,
              LoadReport& report) const {
    return from_record(module, load_safetensors(path), device, report,
                       "SafetensorsRecorder::load_file", str_cat('"', path, '"'));
  }
  template <class M, class Dev>
  M load_file(const M& module, const std::string& path, const Dev& device) const {
    LoadReport report;
    return load_file(module, path, device, report);
  }

 private:
  Precision precision_ = Precision::Full;
  LoadOptions load_options_;
};

/// The half-precision SafetensorsRecorder (F16 on disk, f32 in memory), named after Burn's
/// CompactRecorder: `model.save_file("m.safetensors", CompactRecorder{})`.
class CompactRecorder : public SafetensorsRecorder {
 public:
  CompactRecorder() : SafetensorsRecorder(Precision::Half) {}
};

}  // namespace kiln::record
