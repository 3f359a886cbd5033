#pragma once
// Reference cases computed with PyTorch 1.13 (copied from ../shared/cases into
// tests/native/cases/cases.jsonl). Format: tests/native/cases/README.md.
#include <map>
#include <string>

#include "kiln/kiln.hpp"

namespace kiln::test {

class Case {
 public:
  std::string id;
  /// Named input tensor. Shape [] becomes [1] (Kiln has no rank 0); int64 becomes i32;
  /// "nan"/"inf"/"-inf" strings become the floats.
  TensorData input(const std::string& name) const;
  /// Named expected tensor (same conversions).
  TensorData expected(const std::string& name) const;
  /// Whether `expected[name]` says the request must be rejected.
  bool expects_error(const std::string& name) const;
  /// The case's tolerance: |got - exp| <= abs + rel·|exp|.
  Tolerance tolerance() const { return tolerance_; }

 private:
  friend Case load_case(const std::string& id);
  std::map<std::string, TensorData> inputs_;
  std::map<std::string, TensorData> expected_;
  std::map<std::string, bool> errors_;
  Tolerance tolerance_;
};

/// Loads a case by id. Throws std::runtime_error if the file or the id is missing.
Case load_case(const std::string& id);

}  // namespace kiln::test
