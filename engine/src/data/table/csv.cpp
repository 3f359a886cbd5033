// CsvDataset: libcsv (Debian's libcsv3, strict mode) splits records and fields; each field
// goes straight to the TableBuilder, so no row of strings is kept. Native only.
#include "kiln/data/csv.hpp"

#include <csv.h>

#include <charconv>
#include <exception>
#include <filesystem>
#include <limits>
#include <memory>
#include <system_error>

#include "builder.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::data {
namespace {

using detail::quote_value;
using detail::TableBuilder;

// libcsv's parser state between records (ROW_NOT_BEGUN in libcsv.c; checked by the tests:
// the line numbers of records after quoted line breaks).
constexpr int kRowNotBegun = 0;

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

/// Parses a decimal number: [+-](digits[.digits*] | .digits)[(e|E)[+-]digits] -> true and
/// `out` (the nearest double; 0 on underflow, as JS's Number), or false if the text is not
/// of that form. Throws nothing; an overflow gives +-inf (the caller refuses it).
bool parse_number(std::string_view s, double& out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  const std::size_t mantissa = i;
  std::size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != s.size()) return false;
  // from_chars takes no '+' and is locale-independent (strtod is not).
  double value = 0;
  const auto r = std::from_chars(s.data() + mantissa, s.data() + s.size(), value);
  if (r.ec == std::errc::result_out_of_range) {
    // Overflow or underflow: the decimal exponent of the first significant digit decides.
    long long e10 = 0;
    std::size_t j = mantissa;
    long long position = -1, seen = 0;  // position of the first non-zero digit
    for (; j < s.size() && s[j] != 'e' && s[j] != 'E'; ++j) {
      if (s[j] == '.') continue;
      if (s[j] != '0' && position < 0) position = seen;
      ++seen;
    }
    if (position < 0) {
      value = 0;
    } else {
      e10 = static_cast<long long>(int_digits) - 1 - position;
      if (j < s.size()) {
        long long exp = 0;
        bool exp_negative = false;
        std::size_t k = j + 1;
        if (s[k] == '+' || s[k] == '-') exp_negative = s[k++] == '-';
        for (; k < s.size() && exp < 100000000; ++k) exp = exp * 10 + (s[k] - '0');
        e10 += exp_negative ? -exp : exp;
      }
      value = e10 < 0 ? 0.0 : std::numeric_limits<double>::infinity();
    }
  } else if (r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    return false;
  }
  out = negative ? -value : value;
  return true;
}

/// Parses [+-]digits -> true and `out` (saturated beyond +-10^18), or false.
bool parse_int(std::string_view s, std::int64_t& out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i == s.size()) return false;
  std::int64_t value = 0;
  for (; i < s.size(); ++i) {
    if (!is_digit(s[i])) return false;
    if (value < 100'000'000'000'000'000) value = value * 10 + (s[i] - '0');  // no overflow
  }
  out = negative ? -value : value;
  return true;
}

/// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points
/// above U+10FFFF), as TextDecoder's fatal mode checks in JS.
bool is_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t n;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // cut short
    if (byte(i + 1) < lo || byte(i + 1) > hi) return false;
    for (std::size_t k = 2; k <= n; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return false;
    }
    i += n + 1;
  }
  return true;
}

struct Context {
  explicit Context(TableBuilder b, LabelType label_type)
      : builder(std::move(b)), builder_label_type(label_type) {}
  TableBuilder builder;
  std::size_t line = 1;         // the physical line being fed
  std::size_t record_line = 1;  // the line on which the current record starts
  bool header_done = false;
  std::vector<std::string> header;
  std::size_t field = 0;  // index of the next field in the current record
  std::exception_ptr error;

  void on_field(std::string_view text) {
    const std::size_t c = field++;
    if (text.size() > builder.limits().max_field_bytes) {
      throw_error<LimitError>(
          builder.prefix(), ": line ", record_line, ", field ", c + 1, ": ", text.size(),
          " bytes, more than max_field_bytes = ", builder.limits().max_field_bytes);
    }
    if (!header_done) {
      if (header.size() >= builder.limits().max_columns) {
        throw_error<LimitError>(
            builder.prefix(), ": line ", record_line,
            " (the header): more than max_columns = ", builder.limits().max_columns, " columns");
      }
      header.emplace_back(text);
      return;
    }
    if (c == 0) builder.begin_row(record_line);
    if (c >= builder.num_columns()) {
      throw_error<FormatError>(builder.prefix(), ": line ", record_line, ": expected ",
                               builder.num_columns(), " fields (as the header), got more");
    }
    const int role = builder.role(c);
    if (role == TableBuilder::kUnused) return;
    if (role == TableBuilder::kLabel) {
      if (text.empty()) builder.label_missing(c, "empty field");
      if (builder_label_type == LabelType::String) {
        builder.label_text(c, text);
        return;
      }
      std::int64_t id = 0;
      if (!parse_int(trim(text), id)) {
        throw_error<ValueError>(builder.at(c), ": expected a class id (an integer), got ",
                                quote_value(text));
      }
      builder.label_int(c, id, trim(text));
      return;
    }
    if (text.empty()) {
      builder.feature_missing(c);
      return;
    }
    double value = 0;
    if (!parse_number(trim(text), value)) {
      throw_error<ValueError>(builder.at(c), ": expected a number, got ", quote_value(text));
    }
    builder.feature(c, value);
  }

  void on_record() {
    if (!header_done) {
      header_done = true;
      builder.set_columns(std::move(header));
    } else if (field != builder.num_columns()) {
      throw_error<FormatError>(builder.prefix(), ": line ", record_line, ": expected ",
                               builder.num_columns(), " fields (as the header), got ", field);
    }
    field = 0;
  }

  LabelType builder_label_type;
};

void on_field_cb(void* text, std::size_t size, void* data) {
  auto* ctx = static_cast<Context*>(data);
  if (ctx->error) return;
  try {
    ctx->on_field(std::string_view(static_cast<const char*>(text), size));
  } catch (...) {
    ctx->error = std::current_exception();
  }
}

void on_record_cb(int, void* data) {
  auto* ctx = static_cast<Context*>(data);
  if (ctx->error) return;
  try {
    ctx->on_record();
  } catch (...) {
    ctx->error = std::current_exception();
  }
}

int no_space(unsigned char) { return 0; }  // keep spaces: fields are read as written

struct Parser {
  csv_parser p;
  explicit Parser(unsigned char options) {
    if (csv_init(&p, options) != 0) throw_error<OutOfMemoryError>("CsvDataset: csv_init failed");
  }
  ~Parser() { csv_free(&p); }
};

}  // namespace

CsvDataset CsvDataset::from_bytes(std::string_view text, const TabularOptions& options,
                                  const CsvFormat& format, std::string_view source) {
  const std::string prefix = str_cat("CsvDataset: ", source);
  if (text.size() > options.limits.max_bytes) {
    throw_error<LimitError>(prefix, ": ", text.size(),
                            " bytes, more than max_bytes = ", options.limits.max_bytes);
  }
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  if (text.size() >= 2 &&
      ((byte(0) == 0xFF && byte(1) == 0xFE) || (byte(0) == 0xFE && byte(1) == 0xFF))) {
    throw_error<FormatError>(prefix, ": the text starts with a UTF-16 byte-order mark (",
                             byte(0) == 0xFF ? "FF FE" : "FE FF", "); save the file as UTF-8");
  }
  if (text.size() >= 3 && byte(0) == 0xEF && byte(1) == 0xBB && byte(2) == 0xBF) {
    text.remove_prefix(3);  // the UTF-8 byte-order mark
  }
  if (!is_utf8(text)) throw_error<FormatError>(prefix, ": the text is not valid UTF-8");
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    std::size_t line = 1;
    for (std::size_t i = 0; i < nul; ++i) {
      if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) {
        ++line;
      }
    }
    throw_error<FormatError>(prefix, ": line ", line, ": a NUL byte (binary data, not CSV text)");
  }
  if (format.delimiter == format.quote || format.delimiter == '\n' || format.delimiter == '\r' ||
      format.quote == '\n' || format.quote == '\r') {
    throw_error<ValueError>(prefix,
                            ": bad CsvFormat: delimiter and quote must differ and not "
                            "be line breaks");
  }

  Context ctx(TableBuilder(prefix, "line", options), options.label_type);
  Parser parser(CSV_STRICT | CSV_STRICT_FINI);
  csv_set_space_func(&parser.p, no_space);
  csv_set_delim(&parser.p, static_cast<unsigned char>(format.delimiter));
  csv_set_quote(&parser.p, static_cast<unsigned char>(format.quote));

  // Fed one physical line at a time (LF, CRLF or CR), so that errors know their line.
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = pos;
    while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
    if (end < text.size())
      end += (text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ? 2 : 1;
    if (parser.p.pstate == kRowNotBegun) ctx.record_line = ctx.line;
    const std::size_t n = end - pos;
    const std::size_t used =
        csv_parse(&parser.p, text.data() + pos, n, on_field_cb, on_record_cb, &ctx);
    if (ctx.error) std::rethrow_exception(ctx.error);
    if (used != n) {
      if (csv_error(&parser.p) == CSV_EPARSE) {
        throw_error<FormatError>(prefix, ": line ", ctx.line,
                                 ": malformed quotes (a quote inside an unquoted field, or text "
                                 "after a closing quote; a quote in a field is written \"\" "
                                 "inside a quoted field)");
      }
      throw_error<OutOfMemoryError>(prefix, ": line ", ctx.line, ": ",
                                    csv_strerror(csv_error(&parser.p)));
    }
    ++ctx.line;
    pos = end;
  }
  if (parser.p.pstate == kRowNotBegun) ctx.record_line = ctx.line;
  if (csv_fini(&parser.p, on_field_cb, on_record_cb, &ctx) != 0) {
    if (ctx.error) std::rethrow_exception(ctx.error);
    throw_error<FormatError>(prefix, ": line ", ctx.record_line,
                             ": a quoted field is not closed at the end of the input "
                             "(unbalanced quote)");
  }
  if (ctx.error) std::rethrow_exception(ctx.error);
  if (!ctx.header_done) {
    throw_error<FormatError>(prefix, ": no header row (the input is ",
                             text.empty() ? "empty" : "blank lines only", ")");
  }
  return CsvDataset(std::make_shared<const TabularData>(std::move(ctx.builder).finish()));
}

CsvDataset CsvDataset::from_file(const std::string& path, const TabularOptions& options,
                                 const CsvFormat& format) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > options.limits.max_bytes) {
    throw_error<LimitError>("CsvDataset: \"", path, "\": ", size,
                            " bytes, more than max_bytes = ", options.limits.max_bytes);
  }
  const std::string text = io::read_file(path, "CsvDataset");
  return from_bytes(text, options, format, str_cat('"', path, '"'));
}

}  // namespace kiln::data
