// SqliteDataset: Debian's libsqlite3, the database opened read-only and defensively (no
// extensions, untrusted schema, query_only), every row read once into a TableBuilder.
// Native only.
#include "kiln/data/sqlite.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "builder.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::data {
namespace {

using detail::quote_value;
using detail::TableBuilder;

constexpr char kMagic[] = "SQLite format 3";  // + '\0': the first 16 bytes of every database

/// What the first bytes of a file that is not a database look like, for the message.
std::string describe_start(std::string_view head, std::size_t size) {
  if (size == 0) return "the file is empty";
  if (size < 100)
    return str_cat("the file has ", size, " bytes, shorter than SQLite's 100-byte header");
  std::string shown;
  for (std::size_t i = 0; i < head.size() && i < 8; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%02X",
                  static_cast<unsigned>(static_cast<unsigned char>(head[i])));
    shown += i == 0 ? "" : " ";
    shown += hex;
  }
  return str_cat("it starts with ", shown, ", not \"SQLite format 3\\0\"");
}

void check_header(std::string_view head, std::size_t size, const std::string& prefix) {
  if (size < 100 || head.size() < 16 || std::memcmp(head.data(), kMagic, 16) != 0) {
    throw_error<FormatError>(prefix, ": not an SQLite database: ", describe_start(head, size));
  }
}

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close_v2(db); }
};
struct Stmt {
  sqlite3_stmt* stmt = nullptr;
  ~Stmt() { sqlite3_finalize(stmt); }
};

/// The error for SQLite result code `rc` while `doing`.
[[noreturn]] void fail(sqlite3* db, int rc, const std::string& prefix, std::string_view doing) {
  const std::string text =
      str_cat(prefix, ": ", doing, ": ", db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xFF) {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
    case SQLITE_RANGE:
      throw_error<FormatError>(text, " (not a database, or a corrupt one)");
    case SQLITE_TOOBIG:
      throw_error<LimitError>(text, " (a value is longer than max_field_bytes)");
    case SQLITE_NOMEM:
      throw OutOfMemoryError(text);
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      throw IoError(text);
    default:
      throw ValueError(text);
  }
}

/// Settings for a file from anywhere: no extension loading, no functions called from the
/// schema, no writes, value sizes capped.
void harden(sqlite3* db, const TabularLimits& limits, const std::string& prefix) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  const auto cap =
      limits.max_field_bytes > 0x7FFFFFFF ? 0x7FFFFFFF : static_cast<int>(limits.max_field_bytes);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, cap < 1 ? 1 : cap);
  const int rc = sqlite3_exec(db, "PRAGMA query_only = 1; PRAGMA cell_size_check = 1;", nullptr,
                              nullptr, nullptr);
  if (rc != SQLITE_OK) fail(db, rc, prefix, "opening");
}

/// SQL text of an identifier: "name" with " doubled.
std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (const char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

/// The names of the tables and views, for the message about an unknown table.
std::string list_tables(sqlite3* db) {
  Stmt s;
  if (sqlite3_prepare_v2(db,
                         "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name "
                         "NOT LIKE 'sqlite_%' ORDER BY name",
                         -1, &s.stmt, nullptr) != SQLITE_OK) {
    return "?";
  }
  std::string out;
  int n = 0;
  while (sqlite3_step(s.stmt) == SQLITE_ROW) {
    if (n < 10) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s.stmt, 0));
      out += str_cat(n == 0 ? "" : ", ", quote_value(text ? text : ""));
    }
    ++n;
  }
  if (n == 0) return "none";
  if (n > 10) out += str_cat(", ... (", n, " in all)");
  return out;
}

/// Prepares `sql`: one read-only statement.
void prepare_query(sqlite3* db, std::string_view sql, Stmt& s, const std::string& prefix) {
  const char* tail = nullptr;
  if (sql.size() > 0x7FFFFFFF) throw_error<LimitError>(prefix, ": the query is too long");
  const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s.stmt, &tail);
  if (rc != SQLITE_OK) {
    const int code = rc & 0xFF;
    if (code == SQLITE_ERROR) {
      throw_error<ValueError>(prefix, ": the query does not compile: ", sqlite3_errmsg(db));
    }
    fail(db, rc, prefix, "preparing the query");
  }
  if (s.stmt == nullptr) throw_error<ValueError>(prefix, ": the query is empty");
  for (const char* p = tail; p != nullptr && p < sql.data() + sql.size(); ++p) {
    if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r' && *p != ';') {
      throw_error<ValueError>(prefix, ": the query holds more than one statement (from ",
                              quote_value(std::string_view(p, sql.data() + sql.size() - p)),
                              "); pass one SELECT");
    }
  }
  if (!sqlite3_stmt_readonly(s.stmt)) {
    throw_error<ValueError>(prefix, ": the query writes to the database; pass a SELECT");
  }
}

/// "REAL 2.5", "TEXT \"abc\"", "BLOB of 3 bytes": a value as a message shows it.
std::string describe_value(sqlite3_stmt* stmt, int c) {
  const int type = sqlite3_column_type(stmt, c);
  switch (type) {
    case SQLITE_INTEGER:
      return str_cat("INTEGER ", static_cast<long long>(sqlite3_column_int64(stmt, c)));
    case SQLITE_FLOAT:
      return str_cat("REAL ", sqlite3_column_double(stmt, c));
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
      return str_cat(
          "TEXT ", quote_value(std::string_view(
                       text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(stmt, c)))));
    }
    case SQLITE_BLOB:
      return str_cat("BLOB of ", sqlite3_column_bytes(stmt, c), " bytes");
    default:
      return "NULL";
  }
}

/// Reads every row of the prepared statement.
TabularData read_rows(sqlite3* db, sqlite3_stmt* stmt, const TabularOptions& options,
                      const std::string& prefix) {
  TableBuilder builder(prefix, "row", options);
  const int ncols = sqlite3_column_count(stmt);
  std::vector<std::string> names;
  if (static_cast<std::size_t>(ncols) > options.limits.max_columns) {
    throw_error<LimitError>(prefix, ": ", ncols,
                            " columns, more than max_columns = ", options.limits.max_columns);
  }
  for (int c = 0; c < ncols; ++c) {
    const char* name = sqlite3_column_name(stmt, c);
    if (name == nullptr) throw_error<OutOfMemoryError>(prefix, ": sqlite3_column_name failed");
    names.emplace_back(name);
  }
  builder.set_columns(std::move(names));
  std::size_t row = 0;
  for (;;) {
    const int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) fail(db, rc, prefix, str_cat("reading row ", row + 1));
    builder.begin_row(++row);
    for (int c = 0; c < ncols; ++c) {
      const auto column = static_cast<std::size_t>(c);
      const int role = builder.role(column);
      if (role == TableBuilder::kUnused) continue;
      const int type = sqlite3_column_type(stmt, c);
      if (role == TableBuilder::kLabel) {
        if (type == SQLITE_NULL) builder.label_missing(column, "NULL");
        if (options.label_type == LabelType::Int && type == SQLITE_INTEGER) {
          builder.label_int(column, sqlite3_column_int64(stmt, c));
        } else if (options.label_type == LabelType::String && type == SQLITE_TEXT) {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          builder.label_text(
              column, std::string_view(text ? text : "",
                                       static_cast<std::size_t>(sqlite3_column_bytes(stmt, c))));
        } else {
          throw_error<ValueError>(
              builder.at(column), ": expected ",
              options.label_type == LabelType::Int ? "an INTEGER class id" : "a TEXT class name",
              ", got ", describe_value(stmt, c));
        }
        continue;
      }
      if (type == SQLITE_INTEGER) {
        builder.feature(column, static_cast<double>(sqlite3_column_int64(stmt, c)));
      } else if (type == SQLITE_FLOAT) {
        builder.feature(column, sqlite3_column_double(stmt, c));
      } else if (type == SQLITE_NULL) {
        builder.feature_missing(column);
      } else {
        throw_error<ValueError>(builder.at(column), ": expected an INTEGER or REAL feature, got ",
                                describe_value(stmt, c));
      }
    }
  }
  return std::move(builder).finish();
}

/// Reads `table` (or, with is_query, the rows of the SQL `table`) of an open database.
TabularData read_source(sqlite3* db, std::string_view table, bool is_query,
                        const TabularOptions& options, const std::string& prefix) {
  harden(db, options.limits, prefix);
  Stmt s;
  if (is_query) {
    prepare_query(db, table, s, prefix);
    return read_rows(db, s.stmt, options, prefix);
  }
  {
    Stmt check;
    int rc = sqlite3_prepare_v2(
        db, "SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?", -1,
        &check.stmt, nullptr);
    if (rc != SQLITE_OK) fail(db, rc, prefix, "reading the schema");
    sqlite3_bind_text(check.stmt, 1, table.data(), static_cast<int>(table.size()),
                      SQLITE_TRANSIENT);
    rc = sqlite3_step(check.stmt);
    if (rc == SQLITE_DONE) {
      throw_error<ValueError>(prefix, ": no table ", quote_value(table),
                              " (tables: ", list_tables(db), ")");
    }
    if (rc != SQLITE_ROW) fail(db, rc, prefix, "reading the schema");
  }
  // By rowid (Burn's row_id order); a WITHOUT ROWID table or a view has none: table order.
  const std::string name = quote_identifier(table);
  std::string sql = str_cat("SELECT * FROM ", name, " ORDER BY rowid");
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s.stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s.stmt);
    s.stmt = nullptr;
    sql = str_cat("SELECT * FROM ", name);
    const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &s.stmt, nullptr);
    if (rc != SQLITE_OK) fail(db, rc, prefix, str_cat("reading table ", quote_value(table)));
  }
  return read_rows(db, s.stmt, options, prefix);
}

}  // namespace

namespace {
/// Checks a file's size and header, then opens it read-only.
void open_checked(const std::string& path, const TabularOptions& options, const std::string& prefix,
                  Db& db) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw_error<IoError>(prefix, ": cannot open: it is a directory");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw_error<IoError>(prefix, ": cannot open: ", ec.message());
  if (size > options.limits.max_bytes) {
    throw_error<LimitError>(prefix, ": ", size,
                            " bytes, more than max_bytes = ", options.limits.max_bytes);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_error<IoError>(prefix, ": cannot open for reading");
  char head[16] = {};
  in.read(head, sizeof head);
  check_header(std::string_view(head, static_cast<std::size_t>(in.gcount())), size, prefix);
  const int rc =
      sqlite3_open_v2(path.c_str(), &db.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) fail(db.db, rc, prefix, "opening");
}
}  // namespace

SqliteDataset SqliteDataset::from_db_file(const std::string& path, std::string_view table,
                                          const TabularOptions& options) {
  const std::string prefix = str_cat("SqliteDataset: \"", path, "\"");
  Db db;
  open_checked(path, options, prefix, db);
  return SqliteDataset(
      std::make_shared<const TabularData>(read_source(db.db, table, false, options, prefix)));
}

SqliteDataset SqliteDataset::from_query(const std::string& path, std::string_view sql,
                                        const TabularOptions& options) {
  const std::string prefix = str_cat("SqliteDataset: \"", path, "\"");
  Db db;
  open_checked(path, options, prefix, db);
  return SqliteDataset(
      std::make_shared<const TabularData>(read_source(db.db, sql, true, options, prefix)));
}

SqliteDataset SqliteDataset::from_bytes(std::string_view bytes, std::string_view table,
                                        const TabularOptions& options, std::string_view source) {
  const std::string prefix = str_cat("SqliteDataset: ", source);
  if (bytes.size() > options.limits.max_bytes) {
    throw_error<LimitError>(prefix, ": ", bytes.size(),
                            " bytes, more than max_bytes = ", options.limits.max_bytes);
  }
  check_header(bytes.substr(0, 16), bytes.size(), prefix);
  Db db;
  int rc =
      sqlite3_open_v2(":memory:", &db.db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) fail(db.db, rc, prefix, "opening");
  // SQLite owns (and frees) its copy; read-only: it never writes to it.
  auto* copy = static_cast<unsigned char*>(sqlite3_malloc64(bytes.size()));
  if (copy == nullptr)
    throw_error<OutOfMemoryError>(prefix, ": no memory for ", bytes.size(), " bytes");
  std::memcpy(copy, bytes.data(), bytes.size());
  // A WAL-mode file (header bytes 18 and 19 = 2) cannot be opened from memory: its copy is
  // marked as a rollback-journal file (1, 1), as SQLite's own tools do. Its last commits
  // must be in the file (the -wal file is not part of the bytes).
  if (bytes.size() > 19 && copy[18] == 2 && copy[19] == 2) copy[18] = copy[19] = 1;
  rc = sqlite3_deserialize(db.db, "main", copy, static_cast<sqlite3_int64>(bytes.size()),
                           static_cast<sqlite3_int64>(bytes.size()),
                           SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_READONLY);
  if (rc != SQLITE_OK) fail(db.db, rc, prefix, "opening");
  return SqliteDataset(
      std::make_shared<const TabularData>(read_source(db.db, table, false, options, prefix)));
}

}  // namespace kiln::data
