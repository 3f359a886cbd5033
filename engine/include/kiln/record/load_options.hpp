#pragma once
/// How a record is applied to a module: key remapping with regular expressions, partial
/// loading, Burn's conventions (an adapter), and the report of what happened. The names and
/// semantics are burn-store's (`SafetensorsStore::with_key_remapping`, `allow_partial`,
/// `BurnToPyTorchAdapter`, `ApplyResult`), with PyTorch's `strict` of load_state_dict.
/// They act on any record (a SafetensorsFile, whichever reader made it: SafeTensors,
/// PyTorch .pt, named MessagePack):
///
///   auto recorder = SafetensorsRecorder{}.with_load_options(
///       LoadOptions()
///           .with_key_remapping(R"(^model\.)", "")  // "model.fc1.weight" -> "fc1.weight"
///           .allow_partial(true));                  // what the record lacks stays as it is
///   LoadReport report;
///   auto loaded = recorder.load_file(model, "checkpoint.safetensors", device, report);
///   std::cout << report;  // LoadReport: 4 applied, 1 missing, 0 unexpected, ...
///
/// Each record key goes through, in order:
///   1. every remapping rule, in the order given: each replaces ALL matches of its pattern
///      (std::regex_replace, ECMAScript grammar and format rules) by its replacement, in
///      which `$1`..`$99` are the groups, `$&` the match and `$$` a dollar sign
///      (burn-store's KeyRemapper, whose replace_all takes Rust's `$1` too). Patterns
///      that can match the empty string (`x*`, `$`, `\b`) follow the C++ library, which
///      differs from JavaScript's replace there (and between libstdc++ natively and libc++
///      in WebAssembly): use patterns that match at least one character;
///   2. the adapter, if any (Burn's conventions, see BurnAdapter): a last segment `gamma`
///      becomes `weight` and `beta` becomes `bias`; then a rank-2 entry whose key (as it is
///      now) matches one of the adapter's Linear patterns is transposed, [d_input, d_output]
///      -> [d_output, d_input].
/// The resulting keys are matched against the module's parameter paths:
///   - a path with no key is `missing`: an error, unless allow_partial(true) or
///     strict(false); then the parameter keeps its value;
///   - a key with no path is `unexpected`: an error unless strict(false) (burn-store never
///     refuses those; Kiln's default is PyTorch's strict load_state_dict);
///   - a key whose dtype or shape does not fit its parameter is `mismatched`: always an
///     error (PyTorch and burn-store alike); so are two record keys that become one key.
/// Everything is checked before anything changes: a refused load leaves the module as it
/// was, and the error lists every problem.
#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/record/safetensors.hpp"

namespace kiln::record {

/// A regular expression over record keys: ECMAScript grammar (std::regex::ECMAScript,
/// which is JavaScript's without lookbehind, named groups or the `u`/`s`/`y` flags).
struct KeyPattern {
  std::string pattern;       ///< e.g. R"(^model\.)"
  bool ignore_case = false;  ///< std::regex::icase (JavaScript's `i` flag)

  KeyPattern(std::string pattern, bool ignore_case = false)  // NOLINT: implicit from text
      : pattern(std::move(pattern)), ignore_case(ignore_case) {}
  KeyPattern(const char* pattern) : pattern(pattern) {}  // NOLINT: implicit from a literal
};

/// One remapping rule: every match of `from` in a key is replaced by `to`.
struct KeyRemapping {
  KeyPattern from;
  std::string to;
};

/// Loads a record stored in Burn's conventions (burn-store's BurnToPyTorchAdapter, for
/// SafeTensors files Burn exported without it; Kiln stores PyTorch's):
///   - norm layers' `gamma` / `beta` are Kiln's (PyTorch's) `weight` / `bias`: a key whose
///     last segment is `gamma` or `beta` is renamed (every such key: Kiln has no parameter
///     of those names);
///   - Burn's Linear stores its weight as [d_input, d_output], PyTorch's as [d_output,
///     d_input]: a rank-2 entry whose key matches one of `linear_weights` is transposed.
///     Which keys those are must be said: the record does not tell a Linear weight from an
///     Embedding's (not transposed), and a square weight's shape cannot tell either layout.
/// Example: BurnAdapter({R"(^fc\d+\.weight$)"}) for a model whose Linear layers are fc1, fc2.
struct BurnAdapter {
  std::vector<KeyPattern> linear_weights;  ///< keys (after remapping and renaming) to transpose

  BurnAdapter() = default;
  explicit BurnAdapter(std::vector<KeyPattern> linear_weights)
      : linear_weights(std::move(linear_weights)) {}
};

/// The options of applying a record to a module (builder: every `with_`/`allow_` returns a
/// modified copy). Default: no remapping, no adapter, strict (missing and unexpected keys
/// are errors).
class LoadOptions {
 public:
  /// Adds a rule replacing every match of `pattern` (ECMAScript) in each key by
  /// `replacement` (`$1`, `$&`, `$$`); rules apply in the order they were added
  /// (burn-store's `with_key_remapping`).
  /// Throws: ValueError naming the pattern if it is not a valid ECMAScript expression.
  LoadOptions with_key_remapping(KeyPattern pattern, std::string replacement) const;
  /// true: parameters the record lacks keep their values and are reported as missing
  /// (burn-store's `allow_partial`). Keys the module lacks are still refused unless
  /// strict(false).
  LoadOptions allow_partial(bool value = true) const;
  /// false: PyTorch's load_state_dict(strict=False): missing and unexpected keys are both
  /// reported, not refused. Shape and dtype mismatches are refused either way.
  LoadOptions strict(bool value) const;
  /// Converts from Burn's conventions while loading (see BurnAdapter).
  /// Throws: ValueError naming a Linear pattern that is not a valid ECMAScript expression.
  LoadOptions with_adapter(BurnAdapter adapter) const;

  const std::vector<KeyRemapping>& key_remapping() const noexcept { return remapping_; }
  bool is_partial() const noexcept { return partial_; }
  bool is_strict() const noexcept { return strict_; }
  const std::optional<BurnAdapter>& adapter() const noexcept { return adapter_; }
  /// Whether a parameter the record lacks is allowed (allow_partial or not strict).
  bool missing_allowed() const noexcept { return partial_ || !strict_; }
  /// Whether a key the module lacks is allowed (not strict).
  bool unexpected_allowed() const noexcept { return !strict_; }

 private:
  std::vector<KeyRemapping> remapping_;
  std::optional<BurnAdapter> adapter_;
  bool partial_ = false;
  bool strict_ = true;
};

/// A record entry that does not fit its parameter.
struct LoadMismatch {
  std::string path;               ///< the module's parameter path (the key after remapping)
  std::string key;                ///< the record's own key (before remapping)
  Shape found;                    ///< the entry's shape (after the adapter's transpose)
  std::optional<Shape> expected;  ///< the parameter's shape (none for an empty parameter)
  std::string
      problem;  ///< "has shape [3, 1], module expects [1, 3]", "has dtype ...", ": I64 value ..."
};

/// What applying a record did or would do (burn-store's ApplyResult; PyTorch's
/// `_IncompatibleKeys` plus the rest). Filled by the recorders' load functions that take
/// one, also when they throw (then `applied` is empty: nothing was loaded).
struct LoadReport {
  std::vector<std::string> applied;      ///< parameter paths set from the record, module order
  std::vector<std::string> missing;      ///< parameter paths the record lacks, module order
  std::vector<std::string> unexpected;   ///< record keys (after remapping) no parameter has
  std::vector<LoadMismatch> mismatched;  ///< entries whose dtype or shape does not fit
  std::vector<std::pair<std::string, std::string>>
      remapped;                         ///< (record key, new key), changed only
  std::vector<std::string> transposed;  ///< keys (after remapping) the adapter transposed
  std::vector<std::string> conflicts;   ///< two record keys made one, a path the module repeats

  /// A multi-line summary: the counts, then each non-empty list (at most 20 items each).
  std::string to_string() const;
};

/// Prints report.to_string().
void append_to(std::string& out, const LoadReport& report);

namespace detail {

/// Where the entries come from: a record (its dtypes converted as SafetensorsTensor::
/// to_data does; a refused load is a FormatError, problems named in the file's dtypes)
/// or tensors the caller holds (JS's loadStateDict: the dtype must be the parameter's;
/// a refused load is a ShapeError, DTypeError or ValueError by its worst problem, dtypes
/// named float32 / int32 / bool).
enum class LoadSourceKind { Record, Tensors };

/// One parameter of the module: its path, kind's dtype, rank and shape if initialized.
struct LoadTarget {
  std::string path;
  DType dtype = DType::F32;
  std::size_t rank = 0;
  std::optional<Shape> shape;
};

/// One entry offered: key, dtype (a held tensor's F32 / I32 / BOOL) and shape.
struct LoadEntry {
  std::string key;
  SafetensorsDType dtype = SafetensorsDType::F32;
  Shape shape;
};

/// A decided assignment: targets[target] takes entries[entry], transposed or not; its
/// shape is then `shape` (a stored scalar becomes [1], Kiln having no rank-0 tensors).
struct LoadMatch {
  std::size_t target = 0;
  std::size_t entry = 0;
  bool transpose = false;
  Shape shape;
};

/// The decision: what to set, and the report (applied filled as if it succeeds).
struct LoadDecision {
  std::vector<LoadMatch> matches;
  LoadReport report;
};

/// Matches `entries` to `targets` under `options` (the whole pipeline at the top of this
/// header); refuses nothing itself (see throw_if_refused).
/// Throws: ValueError for an invalid pattern (already refused by LoadOptions' builders).
LoadDecision plan_load(const std::vector<LoadTarget>& targets,
                       const std::vector<LoadEntry>& entries, const LoadOptions& options,
                       LoadSourceKind kind);

/// Adds a mismatch (a decoding problem found after planning: an I64 value out of i32 range).
void add_mismatch(LoadReport& report, const LoadTarget& target, const LoadEntry& entry,
                  const Shape& shape, std::string problem);

/// Throws if `report` has a problem `options` refuse, listing every one:
///   Record:  FormatError `<op>: <source>: N problems: missing "a"; unexpected "b";
///            "c" has shape [3, 1], module expects [1, 3]`
///   Tensors: `<op>: N problems (nothing was loaded): ...`, ShapeError if a shape differs,
///            else DTypeError if a dtype differs, else ValueError.
/// A key changed by remapping is named with its record key: `"c" (from "model.c")`.
void throw_if_refused(const LoadReport& report, const LoadOptions& options, std::string_view op,
                      std::string_view source, LoadSourceKind kind);

/// The transpose of a rank-2 TensorData ([r, c] -> [c, r], any dtype).
TensorData transpose_2d(const TensorData& data);

}  // namespace detail
}  // namespace kiln::record
