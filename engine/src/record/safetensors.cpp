// SafeTensors reader and writer (kiln/record/safetensors.hpp). The format and the canonical
// layout follow the reference implementation, huggingface/safetensors safetensors/src/tensor.rs
// (`prepare`, `read_metadata`, `Metadata::validate`).
#include "kiln/record/safetensors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "kiln/config/value.hpp"
#include "kiln/config/value_builder.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "kiln/core/str_cat.hpp"
#include "record/codec.hpp"

namespace kiln::record {

namespace {

using Json = nlohmann::json;  // the SAX parser's types; the header's value is a config::Value
using OrderedJson = nlohmann::ordered_json;
using config::Value;

constexpr std::string_view kReadOp = "read_safetensors";
constexpr std::string_view kMetadataKey = "__metadata__";
// Deepest nesting of arrays and objects accepted in a header: a valid one needs 3 (the
// header, an entry, its shape); the margin keeps the precise messages for values of the
// wrong type (a dtype given as an object...), while bounding every recursive use of the
// value (dump(), the destructor) far below any stack limit.
constexpr std::size_t kMaxHeaderDepth = 8;

struct DTypeInfo {
  SafetensorsDType dtype;
  std::string_view name;
  std::size_t size;
  int alignment_rank;  // position in the reference's `Dtype` enum (increasing alignment)
};

constexpr DTypeInfo kDTypes[] = {
    {SafetensorsDType::F32, "F32", 4, 11},  {SafetensorsDType::F16, "F16", 2, 7},
    {SafetensorsDType::BF16, "BF16", 2, 8}, {SafetensorsDType::I64, "I64", 8, 13},
    {SafetensorsDType::I32, "I32", 4, 9},   {SafetensorsDType::U8, "U8", 1, 1},
    {SafetensorsDType::Bool, "BOOL", 1, 0},
};

// Valid in the spec, not read by Kiln: named as unsupported rather than unknown.
constexpr std::string_view kUnsupportedDTypes[] = {"F64", "I8",  "I16",     "U16",
                                                   "U32", "U64", "F8_E5M2", "F8_E4M3"};

const DTypeInfo& info(SafetensorsDType dtype) {
  for (const auto& i : kDTypes) {
    if (i.dtype == dtype) return i;
  }
  return kDTypes[0];  // unreachable: every enumerator is listed
}

std::string in_quotes(std::string_view s) { return str_cat('"', s, '"'); }

[[noreturn]] void fail(std::string_view source, const std::string& problem) {
  throw_error<FormatError>(kReadOp, ": ", source, ": ", problem);
}
[[noreturn]] void fail_key(std::string_view source, std::string_view key,
                           const std::string& problem) {
  fail(source, str_cat(in_quotes(key), ": ", problem));
}

// ---------------------------------------------------------------- little-endian access

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}
void store_le(std::uint8_t* p, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// ---------------------------------------------------------------- header parsing

/// A short description of a JSON value for error messages.
std::string describe_value(const Value& v) {
  std::string text = v.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  switch (v.type()) {
    case Value::Type::Object:
      return str_cat("the object ", text);
    case Value::Type::Array:
      return str_cat("the array ", text);
    case Value::Type::String:
      return str_cat("the string ", text);
    case Value::Type::Boolean:
      return str_cat("the boolean ", text);
    case Value::Type::Null:
      return "null";
    default:
      return str_cat("the number ", text);
  }
}

/// A non-negative JSON integer, or nothing (negative, fractional, too large, not a number).
std::optional<std::uint64_t> as_u64(const Value& v) {
  if (v.is_number_unsigned()) return v.get_uint();
  if (v.is_number_integer() && v.get_int() >= 0) return static_cast<std::uint64_t>(v.get_int());
  return std::nullopt;
}

/// Builds the header's value from nlohmann's SAX events with config::ValueBuilder (the engine's
/// one JSON tree, config::Value, built as config::parse builds it: each object's members sorted
/// once, when it closes), in one pass and in time linear in the header's size (up to a log
/// factor). Before handing an event on, it rejects, as they are read, input nested deeper than
/// kMaxHeaderDepth (before any recursive code, such as dump(), could see it), a key repeated in
/// the same object (nlohmann's DOM would keep the last; the reference reader rejects it) and a
/// top-level object with more keys than the tensor cap allows, with SafeTensors' own messages;
/// the builder's limits are then never the first to trip.
class HeaderBuilder {
 public:
  HeaderBuilder(std::string_view source, std::uint64_t max_tensors, std::uint64_t& work)
      : source_(source), max_tensors_(max_tensors), work_(work), builder_(source, kNoLimits) {}

  bool null() { builder_.null(); return counted(); }
  bool boolean(bool v) { builder_.boolean(v); return counted(); }
  bool number_integer(Json::number_integer_t v) {
    builder_.integer(static_cast<std::int64_t>(v));
    return counted();
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    builder_.unsigned_integer(static_cast<std::uint64_t>(v));
    return counted();
  }
  bool number_float(Json::number_float_t v, const std::string&) {
    builder_.number(static_cast<double>(v));
    return counted();
  }
  bool string(std::string& v) { builder_.string(std::move(v)); return counted(); }
  bool binary(Json::binary_t&) { return fail_with("the header is not valid JSON"); }
  bool start_object(std::size_t) {
    if (!open()) return false;
    builder_.start_object();
    return counted();
  }
  bool start_array(std::size_t) {
    if (!open()) return false;
    builder_.start_array();
    return counted();
  }
  bool end_object() { seen_.pop_back(); builder_.end_object(); return true; }
  bool end_array() { seen_.pop_back(); builder_.end_array(); return true; }

  bool key(std::string& k) {
    ++work_;
    // The open object's keys so far (std::set: O(log n) per lookup).
    std::set<std::string>& seen = seen_.back();
    if (!seen.insert(k).second) {
      return fail_with(seen_.size() == 1
                           ? str_cat("the header repeats the key ", in_quotes(k))
                           : str_cat(in_quotes(top_key_), ": repeats the field ", in_quotes(k)));
    }
    if (seen_.size() == 1) {
      // "__metadata__" is not a tensor: one key more than the cap is allowed for it.
      const std::uint64_t tensors = seen.size() - (seen.count(std::string(kMetadataKey)) ? 1 : 0);
      if (tensors > max_tensors_) {
        limit_ = true;
        return fail_with(str_cat("the header lists more than ", max_tensors_,
                                 " tensors, the limit (SafetensorsLimits::max_tensors)"));
      }
      top_key_ = k;
    }
    builder_.key(std::move(k));
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const Json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 3: ..." -> after "] "
    std::string what = e.what();
    const auto cut = what.find("] ");
    if (cut != std::string::npos) what = what.substr(cut + 2);
    return fail_with(str_cat("the header is not valid JSON: ", what));
  }

  /// The parsed value; throws the first problem met (FormatError, or LimitError for a cap).
  Value take(bool parsed) {
    if (!problem_.empty() || !parsed) {
      const std::string message =
          str_cat(kReadOp, ": ", source_, ": ",
                  problem_.empty() ? std::string("the header is not valid JSON") : problem_);
      if (limit_) throw LimitError(message);
      throw FormatError(message);
    }
    return builder_.take();
  }

 private:
  /// The header's own checks come first; the builder's caps are out of their way.
  static constexpr config::ParseLimits kNoLimits{std::numeric_limits<std::size_t>::max(),
                                                 std::numeric_limits<std::size_t>::max(),
                                                 std::numeric_limits<std::size_t>::max(),
                                                 "SafetensorsLimits"};

  bool fail_with(std::string problem) {
    if (problem_.empty()) problem_ = std::move(problem);
    return false;  // stops the parse
  }
  /// One more value read (a scalar or a container), for safetensors_last_read_work.
  bool counted() {
    ++work_;
    return true;
  }
  /// A container opens: refused past kMaxHeaderDepth.
  bool open() {
    if (seen_.size() >= kMaxHeaderDepth) {
      return fail_with(str_cat("the header nests arrays and objects more than ", kMaxHeaderDepth,
                               " levels deep (a SafeTensors header needs 3)"));
    }
    seen_.emplace_back();  // an array's set stays empty
    return true;
  }

  std::string_view source_;
  std::uint64_t max_tensors_;
  std::uint64_t& work_;
  config::ValueBuilder builder_;
  std::vector<std::set<std::string>> seen_;  // per open container, outermost first
  std::string top_key_;                      // the last key of the outermost object
  std::string problem_;
  bool limit_ = false;
};

/// Parses the header text: rejects NUL bytes (not JSON whitespace; nlohmann would take the
/// first one as the end of the input, so a NUL-padded header, which the reference reader
/// rejects, would pass) and a byte-order mark (the reference reader rejects it too), then
/// builds the value with HeaderBuilder.
Value parse_header(std::string_view text, std::string_view source, std::uint64_t max_tensors,
                  std::uint64_t& work) {
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos) {
    if (text.find_first_not_of('\0', nul) == std::string_view::npos) {
      fail(source, str_cat("the header is padded with NUL bytes from byte ", nul, " of ",
                           text.size(),
                           "; NUL is not JSON whitespace (pad the header with spaces)"));
    }
    fail(source, str_cat("the header holds a NUL byte at byte ", nul, " of ", text.size(),
                         " (NUL is not valid in JSON)"));
  }
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") {
    fail(source, "the header starts with a UTF-8 byte-order mark, which JSON does not allow");
  }
  HeaderBuilder builder(source, max_tensors, work);
  const bool parsed = Json::sax_parse(text.begin(), text.end(), &builder);
  return builder.take(parsed);
}

struct Entry {
  std::string key;
  SafetensorsDType dtype;
  Shape shape;
  std::uint64_t begin;
  std::uint64_t end;
};

SafetensorsDType parse_dtype(const Value& entry, std::string_view key, std::string_view source) {
  const Value* it = entry.find("dtype");
  if (!it) fail_key(source, key, "missing \"dtype\"");
  if (!it->is_string()) {
    fail_key(source, key, str_cat("dtype must be a string, got ", describe_value(*it)));
  }
  const std::string& name = it->get_string();
  for (const auto& i : kDTypes) {
    if (i.name == name) return i.dtype;
  }
  for (const auto& u : kUnsupportedDTypes) {
    if (u == name) {
      fail_key(source, key,
               str_cat("dtype ", name,
                       " is not supported by Kiln (it reads F32, "
                       "F16, BF16, I64, I32, U8 and BOOL)"));
    }
  }
  fail_key(source, key, str_cat("unknown dtype ", in_quotes(name)));
}

Shape parse_shape(const Value& entry, std::string_view key, std::string_view source) {
  const Value* it = entry.find("shape");
  if (!it) fail_key(source, key, "missing \"shape\"");
  const auto bad = [&] {
    fail_key(source, key,
             str_cat("shape must be an array of non-negative integers, got ", describe_value(*it)));
  };
  if (!it->is_array()) bad();
  std::vector<std::int64_t> dims;
  for (const Value& d : it->items()) {
    const auto v = as_u64(d);
    if (!v) bad();
    if (*v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail_key(source, key, str_cat("shape ", it->dump(), ": dim ", *v, " is too large"));
    }
    dims.push_back(static_cast<std::int64_t>(*v));
  }
  if (dims.size() > Shape::max_rank) {
    fail_key(source, key,
             str_cat("shape ", it->dump(), " has rank ", dims.size(), ", above Kiln's limit of ",
                     Shape::max_rank));
  }
  return Shape(dims);
}

std::pair<std::uint64_t, std::uint64_t> parse_offsets(const Value& entry, std::string_view key,
                                                      std::string_view source) {
  const Value* it = entry.find("data_offsets");
  if (!it) fail_key(source, key, "missing \"data_offsets\"");
  std::optional<std::uint64_t> begin, end;
  if (it->is_array() && it->size() == 2) {
    begin = as_u64((*it)[0]);
    end = as_u64((*it)[1]);
  }
  if (!begin || !end) {
    fail_key(source, key,
             str_cat("data_offsets must be [begin, end], two non-negative integers, got ",
                     describe_value(*it)));
  }
  return {*begin, *end};
}

Entry parse_entry(const std::string& key, const Value& entry, std::uint64_t data_size,
                  std::string_view source) {
  if (!entry.is_object()) {
    fail_key(
        source, key,
        str_cat("expected an object with dtype, shape and data_offsets, got ", describe_value(entry)));
  }
  for (const std::string& field : entry.keys()) {
    if (field != "dtype" && field != "shape" && field != "data_offsets") {
      fail_key(source, key,
               str_cat("unknown field ", in_quotes(field),
                       " (an entry has dtype, shape and data_offsets)"));
    }
  }
  Entry e{key, parse_dtype(entry, key, source), parse_shape(entry, key, source), 0, 0};
  std::tie(e.begin, e.end) = parse_offsets(entry, key, source);
  const std::string offsets = str_cat("data_offsets [", e.begin, ", ", e.end, "]");
  if (e.end < e.begin) fail_key(source, key, str_cat(offsets, ": end is before begin"));
  if (e.end > data_size) {
    fail_key(source, key, str_cat(offsets, " run past the data section (", data_size, " bytes)"));
  }
  // elements · dtype size, overflow-checked (the reference's ValidationOverflow)
  std::uint64_t bytes = info(e.dtype).size;
  for (const auto d : e.shape) {
    if (__builtin_mul_overflow(bytes, static_cast<std::uint64_t>(d), &bytes)) {
      fail_key(
          source, key,
          str_cat("shape ", e.shape, " of ", info(e.dtype).name, " needs more than 2^64 bytes"));
    }
  }
  if (bytes != e.end - e.begin) {
    fail_key(source, key,
             str_cat(offsets, " hold ", e.end - e.begin, " bytes, but shape ", e.shape, " of ",
                     info(e.dtype).name, " needs ", bytes));
  }
  return e;
}

}  // namespace

// ---------------------------------------------------------------- dtypes

std::string_view safetensors_dtype_name(SafetensorsDType dtype) noexcept {
  return info(dtype).name;
}
std::size_t safetensors_dtype_size(SafetensorsDType dtype) noexcept { return info(dtype).size; }
void append_to(std::string& kiln_text, SafetensorsDType dtype) {
  ::kiln::StrOut{kiln_text} << safetensors_dtype_name(dtype);
}

// ---------------------------------------------------------------- half precision

std::uint16_t f32_to_f16_bits(float value) noexcept {
  const std::uint32_t x = float_bits(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t exponent = (x >> 23) & 0xffu;
  const std::uint32_t mantissa = x & 0x7fffffu;
  if (exponent == 0xff) {  // inf, nan
    return mantissa == 0 ? static_cast<std::uint16_t>(sign | 0x7c00u)
                         : static_cast<std::uint16_t>(sign | 0x7e00u);
  }
  // Rounds m / 2^shift to nearest, ties to even.
  const auto round_shift = [](std::uint32_t m, std::uint32_t shift) {
    const std::uint32_t kept = m >> shift;
    const std::uint32_t rest = m & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
  };
  const int e = static_cast<int>(exponent) - 127 + 15;  // biased half exponent
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    // Subnormal half: value / 2^-24 = (mantissa | implicit 1) · 2^(exponent - 126).
    if (exponent == 0) return sign;              // f32 zero or subnormal (< 2^-126): rounds to ±0
    const std::uint32_t shift = 126 - exponent;  // >= 14
    if (shift > 24) return sign;                 // below 2^-25: rounds to ±0
    return static_cast<std::uint16_t>(sign | round_shift(mantissa | 0x800000u, shift));
  }
  // Normal: a carry out of the mantissa bumps the exponent (up to inf), as it should.
  const std::uint32_t bits = (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  const std::uint32_t rounded =
      bits + ((rest > 0x1000u || (rest == 0x1000u && (bits & 1u))) ? 1u : 0u);
  return static_cast<std::uint16_t>(sign | rounded);
}

float f16_bits_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {  // ±0 and subnormals: mantissa · 2^-24, exact in f32
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
  return bits_float(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

std::uint16_t f32_to_bf16_bits(float value) noexcept {
  const std::uint32_t x = float_bits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>((x + rounding) >> 16);
}

float bf16_bits_to_f32(std::uint16_t bits) noexcept {
  return bits_float(static_cast<std::uint32_t>(bits) << 16);
}

// ---------------------------------------------------------------- tensor conversions

SafetensorsTensor SafetensorsTensor::from_data(const TensorData& data, SafetensorsDType dtype) {
  SafetensorsTensor out;
  out.dtype = dtype;
  out.shape = data.shape;
  const auto n = static_cast<std::size_t>(data.num_elements());
  const std::size_t size = info(dtype).size;
  const auto invalid = [&] {
    throw_error<DTypeError>("SafetensorsTensor::from_data: cannot store ", data.dtype, " data as ",
                            info(dtype).name,
                            " (f32 -> F32, F16, BF16; i32 -> I32, I64; bool -> BOOL, U8)");
  };
  const bool valid = (data.dtype == DType::F32 &&
                      (dtype == SafetensorsDType::F32 || dtype == SafetensorsDType::F16 ||
                       dtype == SafetensorsDType::BF16)) ||
                     (data.dtype == DType::I32 &&
                      (dtype == SafetensorsDType::I32 || dtype == SafetensorsDType::I64)) ||
                     (data.dtype == DType::Bool &&
                      (dtype == SafetensorsDType::Bool || dtype == SafetensorsDType::U8));
  if (!valid) invalid();
  out.bytes.resize(n * size);
  std::uint8_t* p = out.bytes.data();
  switch (data.dtype) {
    case DType::F32: {
      const auto values = data.to_vec<float>();
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t bits = dtype == SafetensorsDType::F32   ? float_bits(values[i])
                                   : dtype == SafetensorsDType::F16 ? f32_to_f16_bits(values[i])
                                                                    : f32_to_bf16_bits(values[i]);
        store_le(p + size * i, bits, size);
      }
      break;
    }
    case DType::I32: {
      const auto values = data.to_vec<std::int32_t>();
      for (std::size_t i = 0; i < n; ++i) {
        // two's complement: sign-extend to 64 bits, store the low `size` bytes
        store_le(p + size * i, static_cast<std::uint64_t>(static_cast<std::int64_t>(values[i])),
                 size);
      }
      break;
    }
    case DType::Bool: {
      for (std::size_t i = 0; i < n; ++i) p[i] = data.bytes[i] ? 1 : 0;
      break;
    }
  }
  return out;
}

namespace codec {

bool decodes_to(SafetensorsDType stored, DType dtype) noexcept {
  switch (dtype) {
    case DType::F32:
      return stored == SafetensorsDType::F32 || stored == SafetensorsDType::F16 ||
             stored == SafetensorsDType::BF16;
    case DType::I32:
      return stored == SafetensorsDType::I64 || stored == SafetensorsDType::I32 ||
             stored == SafetensorsDType::U8;
    case DType::Bool:
      return stored == SafetensorsDType::Bool || stored == SafetensorsDType::U8;
  }
  return false;
}

bool decode(const SafetensorsTensor& tensor, DType dtype, TensorData& out, std::string& problem) {
  if (!decodes_to(tensor.dtype, dtype)) {
    problem = str_cat("cannot decode ", tensor.dtype, " as ", dtype,
                      " (F32, F16, BF16 -> f32; I64, I32, U8 -> i32; BOOL, U8 -> bool)");
    return false;
  }
  const auto n = static_cast<std::size_t>(tensor.shape.num_elements());
  const std::size_t size = info(tensor.dtype).size;
  if (tensor.bytes.size() != n * size) {
    problem = str_cat("holds ", tensor.bytes.size(), " bytes, shape ", tensor.shape, " of ",
                      tensor.dtype, " needs ", n * size);
    return false;
  }
  const std::uint8_t* p = tensor.bytes.data();
  switch (dtype) {
    case DType::F32: {
      std::vector<float> values(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto bits = load_le(p + size * i, size);
        values[i] = tensor.dtype == SafetensorsDType::F32
                        ? bits_float(static_cast<std::uint32_t>(bits))
                    : tensor.dtype == SafetensorsDType::F16
                        ? f16_bits_to_f32(static_cast<std::uint16_t>(bits))
                        : bf16_bits_to_f32(static_cast<std::uint16_t>(bits));
      }
      out = TensorData(tensor.shape, std::move(values));
      return true;
    }
    case DType::I32: {
      std::vector<std::int32_t> values(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto bits = load_le(p + size * i, size);
        std::int64_t v = 0;
        if (tensor.dtype == SafetensorsDType::I64) {
          v = static_cast<std::int64_t>(bits);
        } else if (tensor.dtype == SafetensorsDType::I32) {
          v = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
        } else {
          v = static_cast<std::int64_t>(bits);  // U8
        }
        if (v < std::numeric_limits<std::int32_t>::min() ||
            v > std::numeric_limits<std::int32_t>::max()) {
          problem =
              str_cat("I64 value ", v, " at element ", i, " does not fit in i32 (Kiln's Int)");
          return false;
        }
        values[i] = static_cast<std::int32_t>(v);
      }
      out = TensorData(tensor.shape, std::move(values));
      return true;
    }
    case DType::Bool: {
      std::vector<bool> values(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (tensor.dtype == SafetensorsDType::Bool && p[i] > 1) {
          problem = str_cat("BOOL byte ", static_cast<int>(p[i]), " at element ", i,
                            " is neither 0 nor 1");
          return false;
        }
        values[i] = p[i] != 0;
      }
      out = TensorData(tensor.shape, std::move(values));
      return true;
    }
  }
  return false;
}

}  // namespace codec

TensorData SafetensorsTensor::to_data(DType dtype) const {
  TensorData out;
  std::string problem;
  if (!codec::decode(*this, dtype, out, problem)) {
    const std::string message = str_cat("SafetensorsTensor::to_data: ", problem);
    if (!codec::decodes_to(this->dtype, dtype)) throw DTypeError(message);
    throw ValueError(message);
  }
  return out;
}

// ---------------------------------------------------------------- reading

namespace {
thread_local std::uint64_t last_read_work = 0;
}  // namespace

std::uint64_t safetensors_last_read_work() noexcept { return last_read_work; }

SafetensorsFile read_safetensors(std::span<const std::uint8_t> bytes, std::string_view source,
                                 const SafetensorsLimits& limits) {
  if (bytes.size() < 8) {
    fail(source, str_cat(bytes.size(), " bytes is too short for the 8-byte header length"));
  }
  const std::uint64_t header_size = load_le(bytes.data(), 8);
  const std::uint64_t available = bytes.size() - 8;
  if (header_size > available) {
    fail(source, str_cat("header length ", header_size, " runs past the end (", available,
                         " bytes follow the length field)"));
  }
  if (header_size > limits.max_header_bytes) {
    fail(source, str_cat("header length ", header_size, " exceeds the limit of ",
                         limits.max_header_bytes, " bytes (SafetensorsLimits::max_header_bytes)"));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + 8),
                              static_cast<std::size_t>(header_size));
  std::uint64_t& work = last_read_work;
  work = 0;
  const Value header = parse_header(text, source, limits.max_tensors, work);
  if (!header.is_object()) {
    fail(source, str_cat("the header must be a JSON object, got ", describe_value(header)));
  }

  const std::uint64_t data_size = available - header_size;
  const std::uint8_t* data = bytes.data() + 8 + header_size;
  SafetensorsFile file;
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string& key = header.keys()[i];
    const Value& value = header.items()[i];
    ++work;
    if (key == kMetadataKey) {
      if (!value.is_object()) {
        fail_key(source, key, str_cat("must be an object of strings, got ", describe_value(value)));
      }
      for (std::size_t j = 0; j < value.size(); ++j) {
        const std::string& name = value.keys()[j];
        const Value& text_value = value.items()[j];
        if (!text_value.is_string()) {
          fail_key(source, key,
                   str_cat("must be an object of strings: ", in_quotes(name), " is ",
                           describe_value(text_value)));
        }
        file.metadata.emplace(name, text_value.get_string());
      }
      continue;
    }
    entries.push_back(parse_entry(key, value, data_size, source));
  }

  // The data section must be tiled exactly: sorted by offsets, each tensor starts where the
  // previous one ended, the last one ends at the end of the buffer (reference: validate()).
  std::vector<const Entry*> by_offset;
  for (const auto& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [&work](const Entry* a, const Entry* b) {
    ++work;
    return std::tie(a->begin, a->end, a->key) < std::tie(b->begin, b->end, b->key);
  });
  std::uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry* e : by_offset) {
    if (e->begin < covered) {
      fail_key(source, e->key,
               str_cat("data_offsets [", e->begin, ", ", e->end, "] overlap ",
                       in_quotes(previous->key), " [", previous->begin, ", ", previous->end, "]"));
    }
    if (e->begin > covered) {
      fail(source, str_cat("bytes [", covered, ", ", e->begin,
                           ") of the data section belong to no tensor (before ", in_quotes(e->key),
                           "); the format forbids holes"));
    }
    covered = e->end;
    previous = e;
  }
  if (covered != data_size) {
    fail(source, str_cat("bytes [", covered, ", ", data_size,
                         ") of the data section belong to no tensor (after the last one); the "
                         "format forbids holes"));
  }

  for (const auto& e : entries) {
    SafetensorsTensor t;
    t.dtype = e.dtype;
    t.shape = e.shape;
    t.bytes.assign(data + e.begin, data + e.end);
    file.tensors.emplace(e.key, std::move(t));
  }
  return file;
}

SafetensorsFile load_safetensors(const std::string& path, const SafetensorsLimits& limits) {
  const std::string bytes = io::read_file(path, "load_safetensors");
  return read_safetensors(std::span<const std::uint8_t>(
                              reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                          in_quotes(path), limits);
}

// ---------------------------------------------------------------- writing

std::vector<std::uint8_t> write_safetensors(const SafetensorsFile& file) {
  using Item = std::pair<const std::string, SafetensorsTensor>;
  std::vector<const Item*> order;
  for (const auto& item : file.tensors) {
    const auto& [key, t] = item;
    if (key == kMetadataKey) {
      throw_error<ValueError>("write_safetensors: the key \"", kMetadataKey, "\" is reserved");
    }
    const auto expected = static_cast<std::uint64_t>(t.shape.num_elements()) * info(t.dtype).size;
    if (t.bytes.size() != expected) {
      throw_error<ValueError>("write_safetensors: ", in_quotes(key), " holds ", t.bytes.size(),
                              " bytes, but shape ", t.shape, " of ", t.dtype, " needs ", expected);
    }
    order.push_back(&item);
  }
  // Descending alignment, then key (the reference's `prepare`).
  std::stable_sort(order.begin(), order.end(), [](const Item* a, const Item* b) {
    return info(a->second.dtype).alignment_rank > info(b->second.dtype).alignment_rank;
  });

  OrderedJson header = OrderedJson::object();
  if (!file.metadata.empty()) {
    OrderedJson metadata = OrderedJson::object();
    for (const auto& [k, v] : file.metadata) metadata[k] = v;
    header[std::string(kMetadataKey)] = std::move(metadata);
  }
  std::uint64_t offset = 0;
  for (const Item* item : order) {
    const auto& [key, t] = *item;
    OrderedJson shape = OrderedJson::array();
    for (const auto d : t.shape) shape.push_back(d);
    OrderedJson entry = OrderedJson::object();
    entry["dtype"] = std::string(info(t.dtype).name);
    entry["shape"] = std::move(shape);
    entry["data_offsets"] = OrderedJson::array({offset, offset + t.bytes.size()});
    header[key] = std::move(entry);
    offset += t.bytes.size();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const OrderedJson::exception& e) {
    throw_error<ValueError>("write_safetensors: a key or metadata string is not valid UTF-8 (",
                            e.what(), ")");
  }
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned

  std::vector<std::uint8_t> out(8 + text.size() + offset);
  store_le(out.data(), text.size(), 8);
  std::memcpy(out.data() + 8, text.data(), text.size());
  std::uint8_t* p = out.data() + 8 + text.size();
  for (const Item* item : order) {
    const auto& bytes = item->second.bytes;
    if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
    p += bytes.size();
  }
  return out;
}

void save_safetensors(const SafetensorsFile& file, const std::string& path) {
  const auto bytes = write_safetensors(file);
  io::write_file_atomic(path,
                        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        "save_safetensors");
}

}  // namespace kiln::record
