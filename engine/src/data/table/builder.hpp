#pragma once
// The part of CsvDataset and SqliteDataset that does not depend on the file format: column
// names -> roles (feature k, label, unused), cell values -> TabularData, every check named
// with the source, the row ("line 5" / "row 5") and the column. Native only.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kiln/data/tabular.hpp"

namespace kiln::data::detail {

class TableBuilder {
 public:
  static constexpr int kUnused = -1;
  static constexpr int kLabel = -2;

  /// `prefix` starts every message ("CsvDataset: \"a.csv\""); `row_word` is "line" or "row".
  TableBuilder(std::string prefix, std::string row_word, const TabularOptions& options);

  /// The header. Throws FormatError for an empty or repeated name, ValueError for an unknown
  /// feature/label name, LimitError past max_columns.
  void set_columns(std::vector<std::string> names);
  std::size_t num_columns() const { return names_.size(); }
  /// kUnused, kLabel, or the feature index of column c.
  int role(std::size_t c) const { return roles_[c]; }

  /// Starts a data row at line/row `where`. Throws LimitError past max_rows.
  void begin_row(std::size_t where);
  void feature(std::size_t column, double value);
  void feature_missing(std::size_t column);
  /// `shown`: the value as the input wrote it, for the message (default: `value`).
  void label_int(std::size_t column, std::int64_t value, std::string_view shown = {});
  void label_text(std::size_t column, std::string_view value);
  void label_missing(std::size_t column, std::string_view what);

  /// "<prefix>: line 5, column 2 (\"x\")" for messages about a cell.
  std::string at(std::size_t column) const;
  /// "<prefix>: line 5".
  std::string at_row() const;
  const std::string& prefix() const { return prefix_; }
  const TabularLimits& limits() const { return options_.limits; }

  TabularData finish() &&;

 private:
  std::string prefix_, row_word_;
  TabularOptions options_;
  std::vector<std::string> names_;
  std::vector<int> roles_;
  std::unordered_map<std::string, std::int32_t> class_ids_;
  std::size_t where_ = 0;
  TabularData data_;
};

/// A field written as it would appear in a message: quoted, cut to 40 characters.
std::string quote_value(std::string_view value);

}  // namespace kiln::data::detail
