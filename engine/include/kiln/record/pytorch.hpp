#pragma once
/// PyTorch checkpoints (`torch.save(model.state_dict(), "m.pt")`, the zip format of
/// PyTorch >= 1.6) read into a record (SafetensorsFile), and a recorder that loads one into
/// a module, as Burn's PyTorchFileRecorder / burn-store's PytorchStore:
///
///   auto record = read_pytorch(bytes, "bytes");                 // key -> tensor
///   auto model = Mlp<Cpu>{...}.load_file("mlp.pt", PytorchRecorder{}, device);
///   auto inner = load_pytorch("ckpt.pt", PytorchReadOptions{}.with_top_level_key("model"));
///
/// The file: a zip archive whose entries are stored (torch.save never compresses),
///   <name>/data.pkl     a pickle (protocol 2) of the object saved
///   <name>/data/<key>   the bytes of each storage, little-endian
///   <name>/version      (and, from PyTorch 2.1, <name>/byteorder, <name>/.data/...)
/// A tensor in data.pkl is torch._utils._rebuild_tensor_v2(storage, storage_offset, size,
/// stride, requires_grad, backward_hooks[, metadata]) where `storage` is a persistent id
/// ('storage', torch.<T>Storage, key, location, numel) naming <name>/data/<key>.
///
/// Safety: data.pkl is interpreted, never executed. The interpreter knows only the opcodes
/// a state_dict needs (PROTO, FRAME, STOP, MARK, POP, POP_MARK, DUP, the NONE/bool/int/
/// float/str/bytes constants, EMPTY_TUPLE/LIST/DICT, TUPLE(1|2|3), LIST, DICT, APPEND(S),
/// SETITEM(S), the memo's PUT/GET/MEMOIZE, GLOBAL, STACK_GLOBAL, REDUCE, BUILD, BINPERSID)
/// and names from an allow-list: collections.OrderedDict (called with no arguments),
/// torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter and the storage
/// classes torch.{Float,Half,BFloat16,Double,Long,Int,Short,Char,Byte,Bool}Storage (never
/// called). Any other opcode or name (os.system, builtins.eval, a pickled nn.Module...) is
/// a FormatError naming it; nothing is imported or run. Objects live in an arena indexed
/// by number, so no pickle (cyclic, deeply nested) can overflow the stack or leak.
///
/// Keys: the root must be a dict (a state_dict). Its tensors are the record, keyed by
/// their dict path joined with "." (nested dicts flatten: {"model": {"fc.weight": t}}
/// gives "model.fc.weight"; integer keys, as in an optimizer's state, print in decimal);
/// values that are neither tensors nor dicts (an epoch, a learning rate, lists) are
/// skipped, as Burn's reader skips them. `with_top_level_key("model")` keeps only the dict
/// under that key of the root (Burn's with_top_level_key).
///
/// Element types (storage -> record dtype): Float -> F32, Half -> F16, BFloat16 -> BF16,
/// Long -> I64, Int -> I32, Byte -> U8, Bool -> BOOL exactly; Double -> F32 (rounded to
/// nearest; Kiln computes in f32, so loading rounds there anyway), Short and Char (int16,
/// int8) -> I32 (exact). Views (storage offset, any non-negative strides, several tensors
/// on one storage) are materialised contiguous, each element bounds-checked against its
/// storage. Rank-0 tensors (num_batches_tracked) are records of shape [].
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/core/str_cat.hpp"
#include "kiln/record/load_options.hpp"
#include "kiln/record/recorder.hpp"
#include "kiln/record/safetensors.hpp"

namespace kiln::record {

/// Explicit limits of read_pytorch, checked before anything they bound is allocated.
struct PytorchLimits {
  /// Most entries the zip's central directory may list.
  std::uint64_t max_entries = 65'536;
  /// Largest data.pkl accepted, in bytes. The interpreter's memory is linear in it: about
  /// 80 bytes per byte of pickle at worst (a pickle of empty lists), far less for a
  /// state_dict, whose pickle takes about 150 bytes a tensor (8 MiB: some 50,000 tensors).
  std::uint64_t max_pickle_bytes = 8ull << 20;
  /// Most tensors the record may hold.
  std::uint64_t max_tensors = 100'000;
  /// Deepest nesting of dicts walked for tensors (a state_dict needs 1, a checkpoint 3).
  std::size_t max_depth = 32;
  /// The materialised tensors may hold at most this many times the file's bytes. Views
  /// (a tied weight, an expanded tensor) can claim more elements than their storage holds;
  /// this bounds what a small file can make the reader allocate.
  std::uint64_t max_expansion = 4;
};

/// Options of read_pytorch / load_pytorch / PytorchRecorder.
struct PytorchReadOptions {
  /// Keep only the dict under this key of the root dict (`{"model": state_dict, ...}`).
  std::optional<std::string> top_level_key;
  PytorchLimits limits;
  /// Check each entry read against its CRC-32 (the fuzz target turns it off to get past it).
  bool check_crc32 = true;

  /// A copy with top_level_key = key (Burn's `with_top_level_key`).
  PytorchReadOptions with_top_level_key(std::string key) const {
    auto o = *this;
    o.top_level_key = std::move(key);
    return o;
  }
  /// A copy with these limits.
  PytorchReadOptions with_limits(const PytorchLimits& value) const {
    auto o = *this;
    o.limits = value;
    return o;
  }
};

/// Reads a PyTorch checkpoint held in `bytes` (see the top of this header). `source` names
/// it in errors: the quoted path (`"\"m.pt\""`) or `bytes`.
/// Throws: FormatError `read_pytorch: <source>: <problem>` when the bytes are not a zip
///   (a legacy pre-1.6 checkpoint, pickle or tar, is told to re-save with PyTorch >= 1.6);
///   the end-of-central-directory record, its zip64 form or the central directory is
///   missing, truncated, inconsistent or points outside the file; an entry is encrypted,
///   compressed (deflate: torch.save stores entries; re-save it), repeated, has a local
///   header that disagrees with the directory, runs past the data or fails its CRC-32;
///   there is not exactly one <name>/data.pkl; <name>/byteorder is not "little";
///   data.pkl holds an opcode or global outside the allow-list (named), is truncated,
///   underflows the stack or a mark, reads a memo key never stored, calls a name with
///   arguments it does not take, or has bytes after STOP; a persistent id is not a
///   ('storage', type, key, location, numel) tuple, its entry is absent or its size is not
///   numel elements; a tensor's size, stride or offset is negative, of rank above 8, or
///   reaches past its storage; the root (or the top-level key's value) is not a dict, the
///   top-level key is absent, a dict key is neither a string nor an integer, two tensors
///   flatten to the same key, or dicts nest deeper than limits.max_depth.
///   LimitError naming the limit when the directory, data.pkl, the tensor count or the
///   materialised bytes exceed options.limits.
SafetensorsFile read_pytorch(std::span<const std::uint8_t> bytes, std::string_view source,
                             const PytorchReadOptions& options = {});

/// read_pytorch of the file at `path` (errors name the path in quotes).
/// Throws: IoError if the file cannot be read; as read_pytorch.
SafetensorsFile load_pytorch(const std::string& path, const PytorchReadOptions& options = {});

/// Loads modules from PyTorch checkpoints (Burn's PyTorchFileRecorder / burn-store's
/// PytorchStore): read_pytorch, then the load options (kiln/record/load_options.hpp: key
/// remapping, partial loading, Burn's conventions) and SafetensorsRecorder's checks, so keys,
/// dtypes and shapes are checked as for SafeTensors files and a failed load changes nothing:
///   auto model = Mlp<Cpu>{...}.load_file("mlp.pt", PytorchRecorder{}, device);
///   auto inner = PytorchRecorder{}.with_top_level_key("model").load_file(model, "ckpt.pt", device);
///   LoadReport report;
///   auto part = PytorchRecorder{}.with_key_remapping(R"(^model\.)", "").allow_partial(true)
///                   .load_file(model, "m.pt", device, report);   // report: applied, missing, ...
/// Load-only: Kiln saves SafeTensors (SafetensorsRecorder), which PyTorch reads too.
class PytorchRecorder {
 public:
  PytorchRecorder() = default;
  explicit PytorchRecorder(PytorchReadOptions options) : options_(std::move(options)) {}
  /// A copy reading only the dict under `key` of the checkpoint.
  PytorchRecorder with_top_level_key(std::string key) const {
    PytorchRecorder out = *this;
    out.options_ = options_.with_top_level_key(std::move(key));
    return out;
  }
  /// A copy loading under `options` (replacing the current load options).
  PytorchRecorder with_load_options(LoadOptions options) const {
    PytorchRecorder out = *this;
    out.load_options_ = std::move(options);
    return out;
  }
  /// A copy that also renames keys matching `pattern` (ECMAScript) to `replacement`, after
  /// the rules already given (LoadOptions::with_key_remapping; burn-store's name).
  /// Throws: ValueError at load time if the pattern is not a valid regular expression.
  PytorchRecorder with_key_remapping(std::string pattern, std::string replacement) const {
    return with_load_options(
        load_options_.with_key_remapping(std::move(pattern), std::move(replacement)));
  }
  /// A copy that loads what matches and leaves the module's other parameters as they are
  /// (LoadOptions::allow_partial; burn-store's name); the report lists them as missing.
  PytorchRecorder allow_partial(bool allow = true) const {
    return with_load_options(load_options_.allow_partial(allow));
  }
  const PytorchReadOptions& options() const { return options_; }
  const LoadOptions& load_options() const { return load_options_; }

  /// A copy of `module` with every parameter taken from the checkpoint `bytes` (errors
  /// name the source `bytes`) under the load options; `report` is filled (also when this
  /// throws).
  /// Throws: FormatError / LimitError as read_pytorch; FormatError listing every missing,
  ///   unexpected and mismatched entry refused (load_record).
  template <class M, class Dev>
  M from_bytes(const M& module, std::span<const std::uint8_t> bytes, const Dev& device,
               LoadReport& report) const {
    return load_record(module, read_pytorch(bytes, "bytes", options_), device, load_options_,
                       report, "PytorchRecorder::from_bytes", "bytes");
  }
  template <class M, class Dev>
  M from_bytes(const M& module, std::span<const std::uint8_t> bytes, const Dev& device) const {
    LoadReport report;
    return from_bytes(module, bytes, device, report);
  }

  /// from_bytes of the file at `path` (Burn's load_file; errors name the path).
  /// Throws: IoError if it cannot be read; as from_bytes.
  template <class M, class Dev>
  M load_file(const M& module, const std::string& path, const Dev& device,
              LoadReport& report) const {
    return load_record(module, load_pytorch(path, options_), device, load_options_, report,
                       "PytorchRecorder::load_file", str_cat('"', path, '"'));
  }
  template <class M, class Dev>
  M load_file(const M& module, const std::string& path, const Dev& device) const {
    LoadReport report;
    return load_file(module, path, device, report);
  }

 private:
  PytorchReadOptions options_;
  LoadOptions load_options_;
};

}  // namespace kiln::record
