// Load options (kiln/record/load_options.hpp): remapping keys with std::regex, Burn's
// adapter, matching a record's entries to a module's parameters, the report and the error.
#include "kiln/record/load_options.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <regex>
#include <set>

#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "record/codec.hpp"

namespace kiln::record {

namespace {

std::string in_quotes(std::string_view s) { return str_cat('"', s, '"'); }

/// Compiles `p` (ECMAScript), or throws ValueError naming `op` and the pattern.
std::regex compile(const KeyPattern& p, std::string_view op) {
  auto flags = std::regex::ECMAScript;
  if (p.ignore_case) flags |= std::regex::icase;
  try {
    return std::regex(p.pattern, flags);
  } catch (const std::regex_error& e) {
    throw_error<ValueError>(op, ": the pattern ", in_quotes(p.pattern),
                            " is not a valid ECMAScript regular expression (", e.what(), ")");
  }
}

/// Every match of `re` in `key` replaced by `rule.to` (std::regex_replace: ECMAScript format
/// rules). Throws ValueError naming `op`, the pattern and the key when the regex library
/// gives up (std::regex_error, e.g. a pattern that backtracks too much).
std::string replace_all(const std::string& key, const std::regex& re, const KeyRemapping& rule,
                        std::string_view op) {
  try {
    return std::regex_replace(key, re, rule.to);
  } catch (const std::regex_error& e) {
    throw_error<ValueError>(op, ": the pattern ", in_quotes(rule.from.pattern),
                            " could not be applied to the key ", in_quotes(key), " (", e.what(),
                            ")");
  }
}

/// "a Float tensor (F32, F16 or BF16)": what a parameter of host `dtype` accepts from a record.
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

/// JS's name of a held tensor's dtype (F32 / I32 / BOOL stand for float32 / int32 / bool).
std::string_view held_name(SafetensorsDType dtype) {
  switch (dtype) {
    case SafetensorsDType::F32:
      return "float32";
    case SafetensorsDType::I32:
      return "int32";
    case SafetensorsDType::Bool:
      return "bool";
    default:
      return safetensors_dtype_name(dtype);
  }
}

std::string_view held_name(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "float32";
    case DType::I32:
      return "int32";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

SafetensorsDType held_dtype(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return SafetensorsDType::F32;
    case DType::I32:
      return SafetensorsDType::I32;
    case DType::Bool:
      return SafetensorsDType::Bool;
  }
  return SafetensorsDType::F32;
}

/// `"path"`, or `"path" (from "key")` when remapping changed the key.
std::string named(const std::string& path, const std::string& key) {
  return path == key ? in_quotes(path) : str_cat(in_quotes(path), " (from ", in_quotes(key), ")");
}

/// The mismatch as one phrase: `"path" has shape ...`, `"path": I64 value ...`.
std::string described(const LoadMismatch& m) {
  return str_cat(named(m.path, m.key), m.problem.rfind(':', 0) == 0 ? "" : " ", m.problem);
}

}  // namespace

LoadOptions LoadOptions::with_key_remapping(KeyPattern pattern, std::string replacement) const {
  compile(pattern, "LoadOptions::with_key_remapping");
  LoadOptions out = *this;
  out.remapping_.push_back(KeyRemapping{std::move(pattern), std::move(replacement)});
  return out;
}

LoadOptions LoadOptions::allow_partial(bool value) const {
  LoadOptions out = *this;
  out.partial_ = value;
  return out;
}

LoadOptions LoadOptions::strict(bool value) const {
  LoadOptions out = *this;
  out.strict_ = value;
  return out;
}

LoadOptions LoadOptions::with_adapter(BurnAdapter adapter) const {
  for (const auto& p : adapter.linear_weights) compile(p, "LoadOptions::with_adapter");
  LoadOptions out = *this;
  out.adapter_ = std::move(adapter);
  return out;
}

std::string LoadReport::to_string() const {
  StrOut out;
  out << "LoadReport: " << applied.size() << " applied, " << missing.size() << " missing, "
      << unexpected.size() << " unexpected, " << mismatched.size() << " mismatched, "
      << remapped.size() << " remapped, " << transposed.size() << " transposed";
  if (!conflicts.empty()) out << ", " << conflicts.size() << " conflicts";
  constexpr std::size_t kMaxShown = 20;
  auto list = [&](std::string_view title, std::size_t n, auto&& item) {
    if (n == 0) return;
    out << "\n  " << title << ':';
    for (std::size_t i = 0; i < n && i < kMaxShown; ++i) out << "\n    " << item(i);
    if (n > kMaxShown) out << "\n    ... and " << (n - kMaxShown) << " more";
  };
  list("applied", applied.size(), [&](std::size_t i) { return in_quotes(applied[i]); });
  list("missing", missing.size(), [&](std::size_t i) { return in_quotes(missing[i]); });
  list("unexpected", unexpected.size(), [&](std::size_t i) { return in_quotes(unexpected[i]); });
  list("mismatched", mismatched.size(), [&](std::size_t i) { return described(mismatched[i]); });
  list("remapped", remapped.size(), [&](std::size_t i) {
    return str_cat(in_quotes(remapped[i].first), " -> ", in_quotes(remapped[i].second));
  });
  list("transposed", transposed.size(), [&](std::size_t i) { return in_quotes(transposed[i]); });
  list("conflicts", conflicts.size(), [&](std::size_t i) { return conflicts[i]; });
  return out.str();
}

void append_to(std::string& kiln_text, const LoadReport& report) {
  ::kiln::StrOut{kiln_text} << report.to_string();
}

namespace detail {

void add_mismatch(LoadReport& report, const LoadTarget& target, const LoadEntry& entry,
                  const Shape& shape, std::string problem) {
  report.mismatched.push_back(
      LoadMismatch{target.path, entry.key, shape, target.shape, std::move(problem)});
}

LoadDecision plan_load(const std::vector<LoadTarget>& targets,
                       const std::vector<LoadEntry>& entries, const LoadOptions& options,
                       LoadSourceKind kind) {
  LoadDecision out;
  LoadReport& report = out.report;
  std::vector<std::regex> rules;
  for (const auto& r : options.key_remapping()) {
    rules.push_back(compile(r.from, "LoadOptions::with_key_remapping"));
  }
  std::vector<std::regex> linear;
  if (options.adapter()) {
    for (const auto& p : options.adapter()->linear_weights) {
      linear.push_back(compile(p, "LoadOptions::with_adapter"));
    }
  }

  // 1. Each entry's key as the module sees it.
  std::map<std::string, std::size_t> by_key;
  std::vector<std::string> keys(entries.size());
  std::vector<bool> transpose(entries.size(), false);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::string key = entries[i].key;
    for (std::size_t r = 0; r < rules.size(); ++r) {
      key = replace_all(key, rules[r], options.key_remapping()[r], "LoadOptions::with_key_remapping");
    }
    if (options.adapter()) {
      const auto dot = key.rfind('.');
      const std::string_view last =
          dot == std::string::npos ? std::string_view(key) : std::string_view(key).substr(dot + 1);
      const std::string head = dot == std::string::npos ? "" : key.substr(0, dot + 1);
      if (last == "gamma")
        key = head + "weight";
      else if (last == "beta")
        key = head + "bias";
      if (entries[i].shape.rank() == 2) {
        for (const auto& re : linear) {
          bool found = false;
          try {
            found = std::regex_search(key, re);
          } catch (const std::regex_error& e) {
            throw_error<ValueError>(
                "LoadOptions::with_adapter: a linear_weights pattern could not be applied to the "
                "key ",
                in_quotes(key), " (", e.what(), ")");
          }
          if (found) {
            transpose[i] = true;
            break;
          }
        }
      }
    }
    if (key != entries[i].key) report.remapped.emplace_back(entries[i].key, key);
    if (transpose[i]) report.transposed.push_back(key);
    const auto [it, inserted] = by_key.emplace(key, i);
    if (!inserted) {
      report.conflicts.push_back(str_cat("the keys ", in_quotes(entries[it->second].key), " and ",
                                         in_quotes(entries[i].key), " both become ",
                                         in_quotes(key)));
    }
    keys[i] = std::move(key);
  }

  // 2. Each parameter's entry.
  std::vector<bool> used(entries.size(), false);
  std::set<std::string> seen;
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const LoadTarget& target = targets[t];
    if (!seen.insert(target.path).second) {
      report.conflicts.push_back(
          str_cat("the module has two parameters at ", in_quotes(target.path)));
      continue;
    }
    const auto it = by_key.find(target.path);
    if (it == by_key.end()) {
      report.missing.push_back(target.path);
      continue;
    }
    const std::size_t e = it->second;
    used[e] = true;
    const LoadEntry& entry = entries[e];
    Shape shape = entry.shape;
    if (transpose[e]) shape = Shape{entry.shape[1], entry.shape[0]};
    const bool dtype_ok = kind == LoadSourceKind::Record
                              ? codec::decodes_to(entry.dtype, target.dtype)
                              : entry.dtype == held_dtype(target.dtype);
    if (!dtype_ok) {
      add_mismatch(
          report, target, entry, shape,
          kind == LoadSourceKind::Record
              ? str_cat("has dtype ", entry.dtype, ", module expects ", accepted(target.dtype))
              : str_cat("is ", held_name(target.dtype), ", got ", held_name(entry.dtype)));
      continue;
    }
    // Kiln has no rank-0 tensors: a stored scalar (PyTorch's num_batches_tracked) is [1].
    const Shape effective = shape.rank() == 0 && target.rank == 1 ? Shape{1} : shape;
    if (target.shape && !(effective == *target.shape)) {
      add_mismatch(report, target, entry, shape,
                   kind == LoadSourceKind::Record
                       ? str_cat("has shape ", shape, ", module expects ", *target.shape)
                       : str_cat("has shape ", *target.shape, ", got ", shape));
      continue;
    }
    if (!target.shape && effective.rank() != target.rank) {
      add_mismatch(report, target, entry, shape,
                   str_cat("has shape ", shape, ", module expects rank ", target.rank));
      continue;
    }
    out.matches.push_back(LoadMatch{t, e, transpose[e], effective});
    report.applied.push_back(target.path);
  }

  // 3. What no parameter took, in key order.
  for (const auto& [key, e] : by_key) {
    if (!used[e]) report.unexpected.push_back(key);
  }
  return out;
}

void throw_if_refused(const LoadReport& report, const LoadOptions& options, std::string_view op,
                      std::string_view source, LoadSourceKind kind) {
  // The record key of a remapped key, for messages.
  std::map<std::string, std::string> origin;
  for (const auto& [from, to] : report.remapped) origin.emplace(to, from);
  auto name = [&](const std::string& key) {
    const auto it = origin.find(key);
    return it == origin.end() ? in_quotes(key) : named(key, it->second);
  };
  std::vector<std::string> problems;
  if (!options.missing_allowed()) {
    for (const auto& path : report.missing)
      problems.push_back(str_cat("missing ", in_quotes(path)));
  }
  if (!options.unexpected_allowed()) {
    for (const auto& key : report.unexpected) problems.push_back(str_cat("unexpected ", name(key)));
  }
  bool shape = false;
  for (const auto& m : report.mismatched) {
    problems.push_back(described(m));
    if (m.problem.rfind("has shape", 0) == 0) shape = true;
  }
  problems.insert(problems.end(), report.conflicts.begin(), report.conflicts.end());
  if (problems.empty()) return;
  const bool record = kind == LoadSourceKind::Record;
  std::string message = record ? str_cat(op, ": ", source, ": ") : str_cat(op, ": ");
  message += str_cat(problems.size(), problems.size() == 1 ? " problem" : " problems",
                     record ? ": " : " (nothing was loaded): ");
  for (std::size_t i = 0; i < problems.size(); ++i) {
    if (i) message += "; ";
    message += problems[i];
  }
  if (record) throw FormatError(message);
  if (shape) throw ShapeError(message);
  if (!report.mismatched.empty()) throw DTypeError(message);
  throw ValueError(message);
}

TensorData transpose_2d(const TensorData& data) {
  const auto rows = static_cast<std::size_t>(data.shape[0]);
  const auto cols = static_cast<std::size_t>(data.shape[1]);
  const std::size_t size = dtype_size(data.dtype);
  std::vector<std::uint8_t> bytes(data.bytes.size());
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      std::memcpy(bytes.data() + (j * rows + i) * size, data.bytes.data() + (i * cols + j) * size,
                  size);
    }
  }
  return TensorData(Shape{data.shape[1], data.shape[0]}, data.dtype, std::move(bytes));
}

}  // namespace detail
}  // namespace kiln::record
