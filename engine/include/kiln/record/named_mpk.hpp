#pragma once
/// Burn's named MessagePack records (`NamedMpkFileRecorder`, the `.mpk` files of Burn's
/// DefaultRecorder and CompactRecorder): a strict reader and a writer of Burn's layout,
/// and NamedMpkRecorder, which saves and loads Kiln modules in it.
///
///   model.save_file("mlp.mpk", NamedMpkRecorder{});                 // f32 on disk
///   model.save_file("mlp.mpk", NamedMpkRecorder::half());           // f16 on disk
///   auto loaded = Mlp<Cpu>{...}.load_file("mlp.mpk", NamedMpkRecorder{}, device);
///   SafetensorsFile record = read_named_mpk(bytes, "bytes");        // {"fc1.weight": ...}
///
/// The layout (Burn v0.21's burn-core record/, written by rmp_serde::encode::write_named,
/// so structs are MessagePack maps keyed by field name):
///   BurnRecord  {"metadata": BurnMetadata, "item": <the module's record>, "_b": []}
///   BurnMetadata {"float": "f32", "int": "i32", "format": "burn_core::record::file::
///                 NamedMpkFileRecorder<burn_core::record::settings::FullPrecisionSettings>",
///                 "version": "0.21.0", "settings": "FullPrecisionSettings"}
///               (half precision: "half::binary16::f16", "i16", ...HalfPrecisionSettings)
///   a module's record: a map field name -> the field's record; a Vec of modules is an
///     array; an Option that is None, and constants (EmptyRecord), are nil
///   ParamSerde  {"id": "<ParamId, base32>", "param": TensorData}
///   TensorData  {"bytes": bin (little-endian, row-major), "shape": [usize, ...],
///                "dtype": "F32" | "F16" | ... | {"Bool": "Native"}}
/// A tensor's field path joins the keys and array indices from "item" down to its
/// ParamSerde with dots: {"item": {"fc1": {"weight": ParamSerde}}} -> "fc1.weight",
/// {"item": {"layers": [{"bias": ParamSerde}]}} -> "layers.0.bias".
///
/// Reading gives the shared record type (SafetensorsFile): tensors by field path, and
/// BurnMetadata's five strings as its metadata. Stored dtypes become: F32, Flex32 -> F32;
/// F64 -> F32 (rounded to nearest, as Burn's TensorData::convert); F16, BF16, I64, I32, U8
/// kept; I16, I8, U16 -> I32; U32, U64 -> I64 (U64 above 2^63 - 1 is a FormatError);
/// Bool, {"Bool": "Native"}, {"Bool": "U8"} -> BOOL; {"Bool": "U32"} -> BOOL (each value 0
/// or 1). Quantized tensors (QFloat) are refused. Other scalars in a record (the constants
/// of Burn versions before 0.21: numbers, strings, booleans) carry no tensor and are
/// skipped; nil is skipped.
///
/// Writing emits what Burn v0.21 writes, with these deviations (documented here, tested):
///  - `id` is not a random ParamId but one derived from the field path (FNV-1a 64 of the
///    path, base32 as Burn's ParamId::serialize), so the same module gives the same bytes;
///    Kiln keeps its own ids when loading (Param::set), as the SafeTensors recorder does.
///  - Struct fields are written in key order (Burn: declaration order); a node whose
///    children are exactly "0", "1", ..., "n-1" is an array (Burn's Vec), any other node a
///    map (Kiln's Sequential skips parameter-free layers: keys "0", "2" stay a map).
///  - The metadata is always the writer's own (float, int, settings for its precision;
///    format Burn's NamedMpkFileRecorder type name; version "0.21.0", the Burn layout it
///    follows); a record's metadata read from a file is not carried over.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/record/recorder.hpp"
#include "kiln/record/safetensors.hpp"

namespace kiln::record {

/// Explicit limits of read_named_mpk, checked as the bytes are parsed (before the value
/// they belong to is built).
struct NamedMpkLimits {
  /// Deepest nesting of maps and arrays (a Burn record needs the module depth + 4).
  std::uint32_t max_depth = 64;
  /// Most MessagePack values (keys included) in the record: each costs 40 bytes while
  /// parsing (so at most 40 MB by default); a Burn record has about 14 per tensor.
  std::uint64_t max_values = 1'000'000;
  /// Most tensors (ParamSerde entries) in the record.
  std::uint64_t max_tensors = 100'000;
};

/// Parses Burn's named MessagePack record held in `bytes` into tensors by field path (see
/// the top of this header). `source` names it in errors: the quoted path or `bytes`.
/// Strict: the whole buffer must be one record (no trailing bytes); map keys are non-empty
/// UTF-8 strings without dots and never repeat; the root has "metadata" (the five
/// strings) and "item", and at most "_b" besides (nil or an empty array); a map with an
/// "id" or a "param" key is a ParamSerde with exactly "id" (a string) and "param" (a map of
/// exactly "bytes" (bin), "shape" (at most 8 unsigned integers) and "dtype"), whose byte
/// count equals the shape's elements times the dtype's size (checked for overflow); the
/// item is not itself a tensor (a record needs field paths).
/// Throws: FormatError `read_named_mpk: <source>: <problem>` naming the field path and the
///   problem (truncated input with the byte offset, invalid MessagePack, wrong types,
///   unknown dtype, size mismatch, trailing bytes...); LimitError naming the NamedMpkLimits
///   field when the input nests deeper, holds more values or more tensors than allowed.
SafetensorsFile read_named_mpk(std::span<const std::uint8_t> bytes, std::string_view source,
                               const NamedMpkLimits& limits = {});

/// read_named_mpk of the file at `path` (errors name the path in quotes).
/// Throws: IoError if the file cannot be read; FormatError / LimitError as read_named_mpk.
SafetensorsFile load_named_mpk(const std::string& path, const NamedMpkLimits& limits = {});

/// Burn's named MessagePack bytes of `file` at `precision` (see the top of this header):
/// Float tensors (F32, F16, BF16) as F32 (Full) or F16 (Half, rounded to nearest even);
/// Int tensors (I64, I32, U8) as I32 (Full) or I16 (Half: Burn's HalfPrecisionSettings);
/// BOOL as {"Bool": "Native"}. The same file gives the same bytes.
/// Throws: ValueError if a key is empty, has an empty component ("a..b") or is not UTF-8,
///   if one key is a prefix path of another ("fc" and "fc.weight"), if a tensor's bytes do
///   not match its shape and dtype, or if an Int value does not fit in i32 (Full) or i16
///   (Half), naming the key and the element.
std::vector<std::uint8_t> write_named_mpk(const SafetensorsFile& file,
                                          Precision precision = Precision::Full);

/// Writes write_named_mpk(file, precision) to `path` atomically (temporary file + rename).
/// Throws: as write_named_mpk; IoError if writing or renaming fails.
void save_named_mpk(const SafetensorsFile& file, const std::string& path,
                    Precision precision = Precision::Full);

/// Saves and loads modules as Burn's named MessagePack records (Burn's
/// NamedMpkFileRecorder<FullPrecisionSettings> / <HalfPrecisionSettings>): the same field
/// paths, checks and all-or-nothing loading as SafetensorsRecorder (recorder.hpp), in
/// Burn's `.mpk` layout. Loading accepts any precision whatever the recorder's (as Burn,
/// which converts on load).
class NamedMpkRecorder {
 public:
  NamedMpkRecorder() = default;
  explicit NamedMpkRecorder(Precision precision) : precision_(precision) {}
  /// f32 floats, i32 ints on disk (Burn's DefaultRecorder).
  static NamedMpkRecorder full() { return NamedMpkRecorder(Precision::Full); }
  /// f16 floats, i16 ints on disk (Burn's CompactRecorder).
  static NamedMpkRecorder half() { return NamedMpkRecorder(Precision::Half); }
  Precision precision() const { return precision_; }
  /// This recorder loading under `options` (key remapping, partial loading, Burn's adapter;
  /// kiln/record/load_options.hpp). Saving is unaffected.
  NamedMpkRecorder with_load_options(LoadOptions options) const {
    NamedMpkRecorder out = *this;
    out.load_options_ = std::move(options);
    return out;
  }
  const LoadOptions& load_options() const { return load_options_; }

  /// The record of `module` (tensors by field path, in the recorder's precision).
  /// Throws: as SafetensorsRecorder::to_record.
  template <class M>
  SafetensorsFile to_record(const M& module) const {
    return SafetensorsRecorder(precision_).to_record(module);
  }

  /// The `.mpk` bytes of `module` (the same module gives the same bytes).
  /// Throws: as to_record; ValueError as write_named_mpk (an Int parameter outside i16 at
  ///   half precision, such as a BatchNorm's num_batches_tracked above 32767).
  template <class M>
  std::vector<std::uint8_t> to_bytes(const M& module) const {
    return write_named_mpk(to_record(module), precision_);
  }

  /// Writes `module` to `path` atomically; a failed save leaves any previous file.
  /// Throws: as to_bytes; IoError if writing or renaming fails.
  template <class M>
  void save_file(const M& module, const std::string& path) const {
    const auto bytes = to_bytes(module);
    io::write_file_atomic(
        path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        "NamedMpkRecorder::save_file");
  }

  /// A copy of `module` with every parameter taken from `file` under the load options (see
  /// SafetensorsRecorder::from_record: every key, dtype and shape checked first); `report`
  /// is filled (also when this throws).
  /// Throws: FormatError listing every missing, unexpected and mismatched entry refused.
  template <class M, class Dev>
  M from_record(const M& module, const SafetensorsFile& file, const Dev& device,
                LoadReport& report, std::string_view op = "NamedMpkRecorder::from_record",
                std::string_view source = "record") const {
    return load_record(module, file, device, load_options_, report, op, source);
  }
  template <class M, class Dev>
  M from_record(const M& module, const SafetensorsFile& file, const Dev& device,
                std::string_view op = "NamedMpkRecorder::from_record",
                std::string_view source = "record") const {
    LoadReport report;
    return from_record(module, file, device, report, op, source);
  }

  /// from_record of the `.mpk` `bytes` (errors name the source `bytes`).
  /// Throws: FormatError / LimitError as read_named_mpk; FormatError if it does not fit.
  template <class M, class Dev>
  M from_bytes(const M& module, std::span<const std::uint8_t> bytes, const Dev& device,
               LoadReport& report) const {
    return from_record(module, read_named_mpk(bytes, "bytes"), device, report,
                       "NamedMpkRecorder::from_bytes", "bytes");
  }
  template <class M, class Dev>
  M from_bytes(const M& module, std::span<const std::uint8_t> bytes, const Dev& device) const {
    LoadReport report;
    return from_bytes(module, bytes, device, report);
  }

  /// from_record of the `.mpk` file at `path` (Burn's load_file).
  /// Throws: IoError if it cannot be read; FormatError / LimitError as above.
  template <class M, class Dev>
  M load_file(const M& module, const std::string& path, const Dev& device,
              LoadReport& report) const {
    return from_record(module, load_named_mpk(path), device, report,
                       "NamedMpkRecorder::load_file", str_cat('"', path, '"'));
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

}  // namespace kiln::record
