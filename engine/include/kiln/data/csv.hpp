#pragma once
/// CsvDataset: the rows of a CSV file (RFC 4180) as TabularItems, read with libcsv
/// (native builds only; in the browser use kiln.data.CsvDataset, which gives the same items).
///
///   auto train = data::CsvDataset::from_file("iris.csv", data::TabularOptions()
///                    .with_features({"sepal_length", "sepal_width", "petal_length", "petal_width"})
///                    .with_label("species", data::LabelType::String));
///   auto item = *train.get(0);  // {features [4], label 0}; train.classes()[0] == "setosa"
///
/// The format read (strict, one reader, no lenient retry):
/// - UTF-8 text (a UTF-8 byte-order mark is skipped; a UTF-16/32 one is a FormatError);
///   records end with LF, CRLF or CR; empty lines are skipped.
/// - The first record is the header: the column names, all distinct and non-empty.
/// - Every record has as many fields as the header (else FormatError naming the line).
/// - Quoted fields may hold delimiters, line breaks and "" (an escaped quote); a quote in an
///   unquoted field, text after a closing quote, or a quote left open at the end of the
///   input is a FormatError (libcsv's CSV_STRICT: one unbalanced quote must not swallow the
///   rest of the file silently, rust-csv #289).
/// - Numbers: [+-]digits[.digits][(e|E)[+-]digits] (or .digits...), with optional spaces or
///   tabs around; parsed to the nearest double, then rounded to float32 (as JS's Number and
///   Float32Array). "nan", "inf", hex and results beyond float32's range are ValueErrors.
///   An empty field is a missing value (TabularOptions::fill_missing).
/// Errors name the source ("path" or bytes), the line (1-based, the line on which the
/// record starts) and the column (1-based, with its name).
#include <cstddef>
#include <string>
#include <string_view>

#include "kiln/data/tabular.hpp"

namespace kiln::data {

/// The CSV dialect: the delimiter and quote characters (RFC 4180: ',' and '"').
struct CsvFormat {
  char delimiter = ',';
  char quote = '"';
  CsvFormat with_delimiter(char value) const {
    auto c = *this;
    c.delimiter = value;
    return c;
  }
};

/// The rows of a CSV file in memory (Burn reads CSV through serde into an InMemDataset,
/// `InMemDataset::from_csv`; Kiln's items are numeric features and a class id).
class CsvDataset : public TabularDataset {
 public:
  /// Reads the file at `path`.
  /// Throws: IoError if it cannot be read; LimitError if it is larger than
  ///         options.limits.max_bytes; otherwise as from_bytes, naming "path".
  static CsvDataset from_file(const std::string& path, const TabularOptions& options = {},
                              const CsvFormat& format = {});
  /// Reads CSV text; `source` names it in errors.
  /// Throws: FormatError for malformed CSV (no header, duplicate or empty column names,
  ///         ragged rows, bad quotes, a UTF-16 byte-order mark); ValueError for an unknown
  ///         column name, a field that is not a number, a bad or unknown label, a missing
  ///         value (unless filled); LimitError past options.limits (bytes, field bytes,
  ///         columns, rows, classes). Each names the source, line and column.
  static CsvDataset from_bytes(std::string_view text, const TabularOptions& options = {},
                               const CsvFormat& format = {}, std::string_view source = "bytes");

 private:
  using TabularDataset::TabularDataset;
};

}  // namespace kiln::data
