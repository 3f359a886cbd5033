#pragma once
/// SqliteDataset: the rows of an SQLite table or query as TabularItems (Burn's
/// `burn::dataset::SqliteDataset`, which reads a table per split), read with libsqlite3
/// (native builds only; in the browser use kiln.data.SqliteDataset, the official SQLite
/// WebAssembly build, which gives the same items).
///
///   auto train = data::SqliteDataset::from_db_file("mnist.db", "train",
///                    data::TabularOptions().with_label("label"));  // every other column a feature
///   auto test = data::SqliteDataset::from_query("mnist.db", "SELECT * FROM test LIMIT 100",
///                    data::TabularOptions().with_label("label"));
///
/// The database is opened read-only (SQLITE_OPEN_READONLY) and must start with SQLite's
/// header ("SQLite format 3\0"); a query must be one read-only statement. Rows are read once,
/// into memory, in the order SQLite returns them (a table: by rowid, as Burn's `row_id`).
/// Feature values: INTEGER or REAL, converted to the nearest double then float32; NULL is a
/// missing value (TabularOptions::fill_missing); TEXT or BLOB is a ValueError. Labels: an
/// INTEGER (LabelType::Int) or TEXT (LabelType::String) value.
#include <string>
#include <string_view>

#include "kiln/data/tabular.hpp"

namespace kiln::data {

/// The rows of an SQLite table or query in memory.
class SqliteDataset : public TabularDataset {
 public:
  /// All rows of `table` (Burn's `SqliteDataset::from_db_file(db_file, split)`), ordered by
  /// rowid (plain table order for a WITHOUT ROWID table).
  /// Throws: IoError if the file cannot be opened; FormatError if it is not an SQLite
  ///         database (naming what its first bytes look like) or is corrupt; ValueError if
  ///         the table does not exist (listing the tables) or a column is unknown or holds a
  ///         value of the wrong type (naming the row and column); LimitError past
  ///         options.limits.
  static SqliteDataset from_db_file(const std::string& path, std::string_view table,
                                    const TabularOptions& options = {});
  /// The rows of one read-only SQL statement (SELECT ...).
  /// Throws: as from_db_file; ValueError if `sql` does not compile (SQLite's message), is
  ///         more than one statement, or writes.
  static SqliteDataset from_query(const std::string& path, std::string_view sql,
                                  const TabularOptions& options = {});
  /// The rows of `table` of a database held in memory (a file's bytes; read-only).
  /// Throws: as from_db_file, naming `source`.
  static SqliteDataset from_bytes(std::string_view bytes, std::string_view table,
                                  const TabularOptions& options = {},
                                  std::string_view source = "bytes");

 private:
  using TabularDataset::TabularDataset;
};

}  // namespace kiln::data
