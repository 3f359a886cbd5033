// Burn's named MessagePack records (kiln/record/named_mpk.hpp). The layout follows Burn
// v0.21's burn-core (record/recorder.rs BurnRecord and BurnMetadata, record/primitive.rs
// ParamSerde, record/settings.rs, module/param/id.rs ParamId::serialize) and burn-backend's
// TensorData, serialized by rmp_serde::encode::write_named (structs as maps, unit variants
// as their name, newtype variants as a one-entry map, PhantomData as an empty array).
// MessagePack itself is msgpack-cxx's: its SAX parser (msgpack::parse with a visitor)
// and its packer.
#define MSGPACK_NO_BOOST
#include "kiln/record/named_mpk.hpp"

#include <cstring>
#include <limits>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <set>

namespace kiln::record {

namespace {

constexpr std::string_view kReadOp = "read_named_mpk";
constexpr std::string_view kWriteOp = "write_named_mpk";

std::string in_quotes(std::string_view s) { return str_cat('"', s, '"'); }

/// A string from the input, for messages: quoted (cut at 40 bytes) if it is UTF-8.
std::string quoted(std::string_view s);

/// Where a value sits, for messages: `the item`, or the quoted field path.
std::string where(std::string_view path) {
  return path.empty() ? std::string("the item") : in_quotes(path);
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  while (i < s.size()) {
    const unsigned char c = byte(i);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // truncated sequence
    for (std::size_t k = 1; k <= n; ++k) {
      if ((byte(i + k) & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    // overlong forms, surrogates, beyond U+10FFFF
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
        (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

// ---------------------------------------------------------------- parsed values

/// One MessagePack value. Strings and bins point into the input (which outlives them).
struct Value {
  enum class Kind : std::uint8_t { Nil, Bool, UInt, Int, Float, Str, Bin, Ext, Array, Map };
  Kind kind = Kind::Nil;
  bool boolean = false;
  std::uint32_t size = 0;  // Str, Bin, Ext: the byte count
  union {                  // 40 bytes per value in all (limits: NamedMpkLimits::max_values)
    std::uint64_t uint = 0;
    std::int64_t sint;
    double real;
    const char* data;  // Str, Bin, Ext
  };
  std::vector<Value> items;  // Array: the elements; Map: key, value, key, value, ...

  /// The bytes of a Str (callers check the kind first).
  std::string_view str() const { return {data, size}; }
};

static_assert(sizeof(Value) <= 40, "NamedMpkLimits::max_values documents 40 bytes per value");

std::string_view kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::Nil:
      return "nil";
    case Value::Kind::Bool:
      return "a boolean";
    case Value::Kind::UInt:
    case Value::Kind::Int:
      return "an integer";
    case Value::Kind::Float:
      return "a float";
    case Value::Kind::Str:
      return "a string";
    case Value::Kind::Bin:
      return "a bin";
    case Value::Kind::Ext:
      return "an ext value";
    case Value::Kind::Array:
      return "an array";
    case Value::Kind::Map:
      return "a map";
  }
  return "?";
}

/// A short description for messages: `a map`, `the string "F128"`, `the integer 3`.
std::string describe(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Str:
      return str_cat("the string ", quoted(v.str()));
    case Value::Kind::UInt:
      return str_cat("the integer ", v.uint);
    case Value::Kind::Int:
      return str_cat("the integer ", v.sint);
    case Value::Kind::Bool:
      return v.boolean ? "true" : "false";
    case Value::Kind::Array:
      return str_cat("an array of ", v.items.size());
    case Value::Kind::Map:
      return str_cat("a map of ", v.items.size() / 2, v.items.size() == 2 ? " entry" : " entries");
    default:
      return std::string(kind_name(v.kind));
  }
}

std::string quoted(std::string_view s) {
  if (!valid_utf8(s)) return "(a string that is not UTF-8)";
  if (s.size() > 40) {
    std::size_t cut = 40;  // not inside a multi-byte sequence
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
    return str_cat('"', s.substr(0, cut), "...\"");
  }
  return in_quotes(s);
}

/// msgpack-cxx's parser drives this visitor (msgpack/v2/null_visitor.hpp's interface); it
/// builds Values as their bytes arrive, so nothing is reserved from a declared count (an
/// array claiming 2^32 elements costs nothing until they are present), and it stops the
/// parse at the first limit passed.
class Builder {
 public:
  Builder(std::string_view source, const NamedMpkLimits& limits, const std::uint8_t* data,
          std::size_t input_size)
      : source_(source), limits_(limits), data_(data), input_size_(input_size) {}

  bool visit_nil() { return add(Value{}); }
  bool visit_boolean(bool v) {
    Value x;
    x.kind = Value::Kind::Bool;
    x.boolean = v;
    return add(std::move(x));
  }
  bool visit_positive_integer(std::uint64_t v) {
    Value x;
    x.kind = Value::Kind::UInt;
    x.uint = v;
    return add(std::move(x));
  }
  bool visit_negative_integer(std::int64_t v) {
    Value x;
    x.kind = Value::Kind::Int;
    x.sint = v;
    return add(std::move(x));
  }
  bool visit_float32(float v) { return visit_float64(v); }
  bool visit_float64(double v) {
    Value x;
    x.kind = Value::Kind::Float;
    x.real = v;
    return add(std::move(x));
  }
  bool visit_str(const char* v, std::uint32_t size) {
    return add(bytes(Value::Kind::Str, v, size));
  }
  bool visit_bin(const char* v, std::uint32_t size) {
    return add(bytes(Value::Kind::Bin, v, size));
  }
  bool visit_ext(const char* v, std::uint32_t size) {
    return add(bytes(Value::Kind::Ext, v, size));
  }
  bool start_array(std::uint32_t n) { return open(Value::Kind::Array, n, n); }
  bool start_map(std::uint32_t n) { return open(Value::Kind::Map, n, 2ull * n); }
  bool end_array() { return close(); }
  bool end_map() { return close(); }
  bool start_array_item() { return true; }
  bool end_array_item() { return true; }
  bool start_map_key() { return true; }
  bool end_map_key() { return true; }
  bool start_map_value() { return true; }
  bool end_map_value() { return true; }
  void parse_error(std::size_t, std::size_t error_offset) {
    // msgpack-cxx passes the offset of the offending byte (0xc1, the one unused marker).
    static constexpr char kHex[] = "0123456789abcdef";
    const unsigned b = error_offset < input_size_ ? data_[error_offset] : 0;
    problem(str_cat("invalid MessagePack: byte ", error_offset, " (0x", kHex[b >> 4], kHex[b & 15],
                    ") is not a type marker"));
  }
  void insufficient_bytes(std::size_t, std::size_t) {
    problem(str_cat("truncated: the ", input_size_,
                    " bytes end inside a value (a length or a count runs past the end)"));
  }

  /// The parsed root; throws the first problem met.
  Value take(bool parsed, std::size_t offset) {
    if (!problem_.empty()) {
      const std::string message = str_cat(kReadOp, ": ", source_, ": ", problem_);
      if (limit_) throw LimitError(message);
      throw FormatError(message);
    }
    if (!parsed || !stack_.empty()) {
      throw_error<FormatError>(kReadOp, ": ", source_, ": not a MessagePack value");
    }
    if (offset < input_size_) {
      throw_error<FormatError>(kReadOp, ": ", source_, ": ", input_size_ - offset,
                               " bytes follow the record (it ends at byte ", offset, ")");
    }
    return std::move(root_);
  }

 private:
  static Value bytes(Value::Kind kind, const char* v, std::uint32_t size) {
    Value x;
    x.kind = kind;
    x.data = v;
    x.size = size;
    return x;
  }
  void problem(std::string text, bool limit = false) {
    if (problem_.empty()) {
      problem_ = std::move(text);
      limit_ = limit;
    }
  }
  bool count() {
    if (++values_ > limits_.max_values) {
      problem(str_cat("the record holds more than ", limits_.max_values,
                      " MessagePack values, the limit (NamedMpkLimits::max_values)"),
              true);
      return false;
    }
    return true;
  }
  bool add(Value&& v) {
    if (!count()) return false;
    place(std::move(v));
    return true;
  }
  void place(Value&& v) {
    if (stack_.empty()) {
      root_ = std::move(v);
    } else {
      stack_.back().items.push_back(std::move(v));
    }
  }
  bool open(Value::Kind kind, std::uint32_t declared, std::uint64_t values) {
    if (!count()) return false;
    if (stack_.size() >= limits_.max_depth) {
      problem(str_cat("maps and arrays nest more than ", limits_.max_depth,
                      " levels deep, the limit (NamedMpkLimits::max_depth)"),
              true);
      return false;
    }
    // Each value takes at least one byte: a count beyond the input is a lie (refused early).
    if (values > input_size_) {
      problem(str_cat(
          "truncated: ", kind == Value::Kind::Map ? "a map declares " : "an array declares ",
          declared, kind == Value::Kind::Map ? " entries" : " elements", ", more than the ",
          input_size_, " bytes could hold"));
      return false;
    }
    Value x;
    x.kind = kind;
    stack_.push_back(std::move(x));
    return true;
  }
  bool close() {
    Value done = std::move(stack_.back());
    stack_.pop_back();
    place(std::move(done));
    return true;
  }

  std::string_view source_;
  const NamedMpkLimits& limits_;
  const std::uint8_t* data_;
  std::size_t input_size_;
  std::uint64_t values_ = 0;
  std::vector<Value> stack_;  // the open containers, outermost first
  Value root_;
  std::string problem_;
  bool limit_ = false;
};

// ---------------------------------------------------------------- Burn's dtypes

/// A stored Burn dtype: its element size and how it becomes a SafetensorsDType.
enum class Stored { F64, F32, F16, BF16, I64, I32, I16, I8, U64, U32, U16, U8, Bool, BoolU32 };

struct BurnDType {
  std::string_view name;
  Stored stored;
  std::size_t size;
};

constexpr BurnDType kBurnDTypes[] = {
    {"F64", Stored::F64, 8}, {"F32", Stored::F32, 4},   {"Flex32", Stored::F32, 4},
    {"F16", Stored::F16, 2}, {"BF16", Stored::BF16, 2}, {"I64", Stored::I64, 8},
    {"I32", Stored::I32, 4}, {"I16", Stored::I16, 2},   {"I8", Stored::I8, 1},
    {"U64", Stored::U64, 8}, {"U32", Stored::U32, 4},   {"U16", Stored::U16, 2},
    {"U8", Stored::U8, 1},   {"Bool", Stored::Bool, 1},
};

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return v;
}
void store_le(std::uint8_t* p, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// ---------------------------------------------------------------- interpreting the tree

class Reader {
 public:
  Reader(std::string_view source, const NamedMpkLimits& limits)
      : source_(source), limits_(limits) {}

  SafetensorsFile read(const Value& root) {
    if (root.kind != Value::Kind::Map) {
      fail(str_cat("the record must be a map {metadata, item, _b} (Burn's BurnRecord), got ",
                   describe(root)));
    }
    const Value* metadata = nullptr;
    const Value* item = nullptr;
    for (std::size_t k = 0; k < root.items.size(); k += 2) {
      const std::string_view key = key_of(root.items[k], "the record");
      const Value& value = root.items[k + 1];
      if (key == "metadata") {
        metadata = &value;
      } else if (key == "item") {
        item = &value;
      } else if (key == "_b") {
        if (!(value.kind == Value::Kind::Nil ||
              (value.kind == Value::Kind::Array && value.items.empty()))) {
          fail(str_cat("the record's \"_b\" (Burn's PhantomData) must be an empty array, got ",
                       describe(value)));
        }
      } else {
        fail(str_cat("the record has the unknown field ", in_quotes(key),
                     " (a BurnRecord has metadata, item and _b)"));
      }
    }
    if (metadata == nullptr) fail("the record has no \"metadata\" (Burn's BurnMetadata)");
    if (item == nullptr) fail("the record has no \"item\" (the module's record)");
    read_metadata(*metadata);
    if (is_param(*item)) {
      fail("the item is a single tensor, not a module's record (its tensors need field paths)");
    }
    walk(*item, "");
    return std::move(file_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw_error<FormatError>(kReadOp, ": ", source_, ": ", problem);
  }
  [[noreturn]] void fail_at(std::string_view path, const std::string& problem) const {
    fail(str_cat(where(path), ": ", problem));
  }

  /// A map key: a non-empty UTF-8 string. `in` names the map for messages.
  std::string_view key_of(const Value& key, std::string_view in) const {
    if (key.kind != Value::Kind::Str) {
      fail(str_cat(in, " has a key that is ", describe(key), "; keys must be strings"));
    }
    if (!valid_utf8(key.str())) fail(str_cat(in, " has a key that is not valid UTF-8"));
    return key.str();
  }

  /// The keys of a map, checked unique.
  std::vector<std::string_view> keys_of(const Value& map, std::string_view in) const {
    std::vector<std::string_view> keys;
    std::set<std::string_view> seen;
    for (std::size_t k = 0; k < map.items.size(); k += 2) {
      const std::string_view key = key_of(map.items[k], in);
      if (!seen.insert(key).second) fail(str_cat(in, " repeats the key ", in_quotes(key)));
      keys.push_back(key);
    }
    return keys;
  }

  void read_metadata(const Value& metadata) {
    if (metadata.kind != Value::Kind::Map) {
      fail(str_cat("\"metadata\" must be a map of strings (Burn's BurnMetadata), got ",
                   describe(metadata)));
    }
    const auto keys = keys_of(metadata, "\"metadata\"");
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const Value& value = metadata.items[2 * k + 1];
      if (value.kind != Value::Kind::Str || !valid_utf8(value.str())) {
        fail(str_cat("\"metadata\": ", in_quotes(keys[k]), " must be a UTF-8 string, got ",
                     describe(value)));
      }
      file_.metadata.emplace(std::string(keys[k]), std::string(value.str()));
    }
    for (const char* field : {"float", "int", "format", "version", "settings"}) {
      if (!file_.metadata.count(field)) {
        fail(str_cat("\"metadata\" has no ", in_quotes(field),
                     " (BurnMetadata has float, int, format, version and settings)"));
      }
    }
  }

  /// A map with an "id" or a "param" key: Burn's ParamSerde (a module field holding a tensor).
  static bool is_param(const Value& v) {
    if (v.kind != Value::Kind::Map) return false;
    for (std::size_t k = 0; k < v.items.size(); k += 2) {
      const Value& key = v.items[k];
      if (key.kind == Value::Kind::Str && (key.str() == "id" || key.str() == "param")) return true;
    }
    return false;
  }

  void walk(const Value& v, const std::string& path) {
    switch (v.kind) {
      case Value::Kind::Nil:  // None, an EmptyRecord (a constant)
      case Value::Kind::Bool:
      case Value::Kind::UInt:
      case Value::Kind::Int:
      case Value::Kind::Float:
      case Value::Kind::Str:  // constants of older Burn records: no tensor
        return;
      case Value::Kind::Bin:
        fail_at(path, "a bin outside a tensor's \"param\" (not part of a Burn record)");
      case Value::Kind::Ext:
        fail_at(path, "an ext value (not part of a Burn record)");
      case Value::Kind::Array:
        for (std::size_t i = 0; i < v.items.size(); ++i) walk(v.items[i], join(path, str_cat(i)));
        return;
      case Value::Kind::Map:
        if (is_param(v)) {
          read_param(v, path);
          return;
        }
        {
          const auto keys = keys_of(v, where(path));
          for (std::size_t k = 0; k < keys.size(); ++k) {
            if (keys[k].find('.') != std::string_view::npos) {
              fail_at(path, str_cat("the field name ", in_quotes(keys[k]),
                                    " holds a dot (field paths join names with dots)"));
            }
            if (keys[k].empty()) fail_at(path, "has an empty field name");
            walk(v.items[2 * k + 1], join(path, keys[k]));
          }
        }
        return;
    }
  }

  static std::string join(const std::string& path, std::string_view name) {
    return path.empty() ? std::string(name) : str_cat(path, '.', name);
  }

  /// The field `name` of the map `v` (whose keys were checked), or null.
  static const Value* field(const Value& v, std::string_view name) {
    for (std::size_t k = 0; k < v.items.size(); k += 2) {
      if (v.items[k].str() == name) return &v.items[k + 1];
    }
    return nullptr;
  }

  void only_fields(const Value& v, std::string_view path, std::string_view what,
                   std::initializer_list<std::string_view> fields) const {
    const auto keys = keys_of(v, str_cat(where(path), " (", what, ")"));
    for (const auto key : keys) {
      bool known = false;
      for (const auto f : fields) known = known || key == f;
      if (!known) {
        std::string list;
        for (const auto f : fields) list += str_cat(list.empty() ? "" : ", ", f);
        fail_at(path,
                str_cat(what, " has the unknown field ", in_quotes(key), " (it has ", list, ")"));
      }
    }
    for (const auto f : fields) {
      if (field(v, f) == nullptr) fail_at(path, str_cat(what, " has no ", in_quotes(f)));
    }
  }

  const BurnDType& read_dtype(const Value& dtype, std::string_view path) const {
    std::string_view name;
    std::optional<std::string_view> store;
    if (dtype.kind == Value::Kind::Str) {
      name = dtype.str();
    } else if (dtype.kind == Value::Kind::Map && dtype.items.size() == 2 &&
               dtype.items[0].kind == Value::Kind::Str) {
      name = dtype.items[0].str();  // a newtype variant: {"Bool": "Native"}, {"QFloat": ...}
      if (dtype.items[1].kind == Value::Kind::Str) store = dtype.items[1].str();
      if (name != "Bool" && name != "QFloat") {
        fail_at(path, str_cat("dtype is a map with the key ", quoted(name),
                              "; of Burn's DType variants only Bool and QFloat hold a value"));
      }
    } else {
      fail_at(path, str_cat("dtype must be a string such as \"F32\" (Burn's DType), got ",
                            describe(dtype)));
    }
    if (name == "QFloat") {
      fail_at(path, "dtype QFloat: quantized tensors are not supported by Kiln");
    }
    if (name == "Bool" && dtype.kind == Value::Kind::Map) {
      if (store == std::optional<std::string_view>("Native") ||
          store == std::optional<std::string_view>("U8")) {
        return kBurnDTypes[13];
      }
      if (store == std::optional<std::string_view>("U32")) {
        static constexpr BurnDType bool_u32{"Bool", Stored::BoolU32, 4};
        return bool_u32;
      }
      fail_at(path, str_cat("dtype Bool has the store ", describe(dtype.items[1]),
                            " (Burn's BoolStore is \"Native\", \"U8\" or \"U32\")"));
    }
    for (const auto& d : kBurnDTypes) {
      if (d.name == name) return d;
    }
    fail_at(path, str_cat("unknown dtype ", quoted(name),
                          " (Burn's: F64, F32, Flex32, F16, BF16, I64, I32, I16, I8, U64, U32, "
                          "U16, U8, Bool)"));
  }

  Shape read_shape(const Value& shape, std::string_view path) const {
    const auto bad = [&] {
      fail_at(path, str_cat("shape must be an array of unsigned integers, got ", describe(shape)));
    };
    if (shape.kind != Value::Kind::Array) bad();
    if (shape.items.size() > Shape::max_rank) {
      fail_at(path, str_cat("shape has rank ", shape.items.size(), ", above Kiln's limit of ",
                            Shape::max_rank));
    }
    std::vector<std::int64_t> dims;
    for (const auto& d : shape.items) {
      if (d.kind != Value::Kind::UInt) bad();
      if (d.uint > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        fail_at(path, str_cat("shape dim ", d.uint, " is too large"));
      }
      dims.push_back(static_cast<std::int64_t>(d.uint));
    }
    return Shape(dims);
  }

  void read_param(const Value& v, const std::string& path) {
    only_fields(v, path, "a ParamSerde", {"id", "param"});
    const Value& id = *field(v, "id");
    if (id.kind != Value::Kind::Str) {
      fail_at(path, str_cat("the ParamSerde's id must be a string, got ", describe(id)));
    }
    const Value& param = *field(v, "param");
    if (param.kind != Value::Kind::Map) {
      fail_at(path,
              str_cat("\"param\" must be a map {bytes, shape, dtype} (Burn's TensorData), got ",
                      describe(param)));
    }
    only_fields(param, path, "the TensorData", {"bytes", "shape", "dtype"});
    const BurnDType& dtype = read_dtype(*field(param, "dtype"), path);
    const Shape shape = read_shape(*field(param, "shape"), path);
    const Value& bytes = *field(param, "bytes");
    if (bytes.kind != Value::Kind::Bin) {
      fail_at(path, str_cat("\"bytes\" must be a bin, got ", describe(bytes)));
    }
    std::uint64_t expected = dtype.size;
    for (const auto d : shape) {
      if (__builtin_mul_overflow(expected, static_cast<std::uint64_t>(d), &expected)) {
        fail_at(path, str_cat("shape ", shape, " of ", dtype.name, " needs more than 2^64 bytes"));
      }
    }
    if (expected != bytes.size) {
      fail_at(path, str_cat("holds ", bytes.size, " bytes, but shape ", shape, " of ", dtype.name,
                            " needs ", expected));
    }
    if (file_.tensors.size() >= limits_.max_tensors) {
      throw_error<LimitError>(kReadOp, ": ", source_, ": the record holds more than ",
                              limits_.max_tensors,
                              " tensors, the limit (NamedMpkLimits::max_tensors)");
    }
    file_.tensors.emplace(
        path, convert(dtype, shape, reinterpret_cast<const std::uint8_t*>(bytes.data), path));
  }

  /// The stored tensor as a SafetensorsTensor (see the top of named_mpk.hpp).
  SafetensorsTensor convert(const BurnDType& dtype, const Shape& shape, const std::uint8_t* p,
                            std::string_view path) const {
    const auto n = static_cast<std::size_t>(shape.num_elements());
    SafetensorsTensor out;
    out.shape = shape;
    const auto widen = [&](SafetensorsDType to, auto&& value_at) {
      out.dtype = to;
      const std::size_t size = safetensors_dtype_size(to);
      out.bytes.resize(n * size);
      for (std::size_t i = 0; i < n; ++i) store_le(out.bytes.data() + size * i, value_at(i), size);
    };
    const auto sign_extend = [&](std::uint64_t bits, std::size_t size) {
      const unsigned shift = static_cast<unsigned>(64 - 8 * size);
      return static_cast<std::uint64_t>(static_cast<std::int64_t>(bits << shift) >> shift);
    };
    switch (dtype.stored) {
      case Stored::F32:
      case Stored::F16:
      case Stored::BF16:
      case Stored::I64:
      case Stored::I32:
      case Stored::U8:
        out.dtype = dtype.stored == Stored::F32    ? SafetensorsDType::F32
                    : dtype.stored == Stored::F16  ? SafetensorsDType::F16
                    : dtype.stored == Stored::BF16 ? SafetensorsDType::BF16
                    : dtype.stored == Stored::I64  ? SafetensorsDType::I64
                    : dtype.stored == Stored::I32  ? SafetensorsDType::I32
                                                   : SafetensorsDType::U8;
        out.bytes.assign(p, p + n * dtype.size);
        break;
      case Stored::F64:
        widen(SafetensorsDType::F32, [&](std::size_t i) {
          const std::uint64_t bits = load_le(p + 8 * i, 8);
          double d;
          std::memcpy(&d, &bits, sizeof d);
          const float f = static_cast<float>(d);
          std::uint32_t u;
          std::memcpy(&u, &f, sizeof u);
          return static_cast<std::uint64_t>(u);
        });
        break;
      case Stored::I16:
      case Stored::I8:
        widen(SafetensorsDType::I32, [&](std::size_t i) {
          return sign_extend(load_le(p + dtype.size * i, dtype.size), dtype.size);
        });
        break;
      case Stored::U16:
        widen(SafetensorsDType::I32, [&](std::size_t i) { return load_le(p + 2 * i, 2); });
        break;
      case Stored::U32:
        widen(SafetensorsDType::I64, [&](std::size_t i) { return load_le(p + 4 * i, 4); });
        break;
      case Stored::U64:
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint64_t v = load_le(p + 8 * i, 8);
          if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            fail_at(path, str_cat("U64 value ", v, " at element ", i, " does not fit in I64"));
          }
        }
        out.dtype = SafetensorsDType::I64;
        out.bytes.assign(p, p + n * 8);
        break;
      case Stored::Bool:
      case Stored::BoolU32:
        out.dtype = SafetensorsDType::Bool;
        out.bytes.resize(n);
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint64_t v = load_le(p + dtype.size * i, dtype.size);
          if (v > 1) {
            fail_at(path, str_cat("Bool value ", v, " at element ", i, " is neither 0 nor 1"));
          }
          out.bytes[i] = static_cast<std::uint8_t>(v);
        }
        break;
    }
    return out;
  }

  std::string_view source_;
  const NamedMpkLimits& limits_;
  SafetensorsFile file_;
};

// ---------------------------------------------------------------- writing

/// msgpack-cxx's packer writes into this.
struct ByteSink {
  std::vector<std::uint8_t>& out;
  void write(const char* data, std::size_t size) {
    out.insert(out.end(), reinterpret_cast<const std::uint8_t*>(data),
               reinterpret_cast<const std::uint8_t*>(data) + size);
  }
};
using Packer = msgpack::packer<ByteSink>;

void pack_str(Packer& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

/// Burn's ParamId::serialize: the u64's little-endian bytes in BASE32_DNSSEC (RFC 4648
/// base32hex, lower case, no padding): 13 characters.
std::string param_id(std::string_view path) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (const char c : path) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  std::uint8_t bytes[8];
  store_le(bytes, h, 8);
  constexpr char kAlphabet[] = "0123456789abcdefghijklmnopqrstuv";
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  for (const std::uint8_t b : bytes) {
    buffer = (buffer << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += kAlphabet[(buffer >> (bits - 5)) & 31u];
      bits -= 5;
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (5 - bits)) & 31u];
  return out;
}

struct Node {
  const std::string* key = nullptr;  // the full key of the tensor here, if any
  const SafetensorsTensor* tensor = nullptr;
  std::map<std::string, Node> children;
  const std::string* first_below = nullptr;  // a key under this node (for messages)
};

/// Whether the children are exactly "0", "1", ..., "n-1" (canonical decimals).
bool is_sequence(const std::map<std::string, Node>& children) {
  for (const auto& [name, node] : children) {
    if (name.empty() || name.size() > 9 || (name.size() > 1 && name[0] == '0')) return false;
    for (const char c : name) {
      if (c < '0' || c > '9') return false;
    }
    if (std::stoul(name) >= children.size()) return false;
  }
  return true;
}

class Writer {
 public:
  Writer(std::vector<std::uint8_t>& out, Precision precision)
      : sink_{out}, pk_(sink_), precision_(precision) {}

  void record(const Node& root) {
    pk_.pack_map(3);
    pack_str(pk_, "metadata");
    const bool half = precision_ == Precision::Half;
    const std::string settings = half ? "HalfPrecisionSettings" : "FullPrecisionSettings";
    pk_.pack_map(5);
    pack_str(pk_, "float");
    pack_str(pk_, half ? "half::binary16::f16" : "f32");
    pack_str(pk_, "int");
    pack_str(pk_, half ? "i16" : "i32");
    pack_str(pk_, "format");
    pack_str(pk_, str_cat("burn_core::record::file::NamedMpkFileRecorder<burn_core::record::"
                          "settings::",
                          settings, ">"));
    pack_str(pk_, "version");
    pack_str(pk_, "0.21.0");
    pack_str(pk_, "settings");
    pack_str(pk_, settings);
    pack_str(pk_, "item");
    node(root);
    pack_str(pk_, "_b");
    pk_.pack_array(0);
  }

 private:
  void node(const Node& n) {
    if (n.tensor != nullptr) {
      param(*n.key, *n.tensor);
      return;
    }
    if (!n.children.empty() && is_sequence(n.children)) {
      std::vector<const Node*> ordered(n.children.size());
      for (const auto& [name, child] : n.children) ordered[std::stoul(name)] = &child;
      pk_.pack_array(static_cast<std::uint32_t>(ordered.size()));
      for (const Node* child : ordered) node(*child);
      return;
    }
    pk_.pack_map(static_cast<std::uint32_t>(n.children.size()));
    for (const auto& [name, child] : n.children) {
      pack_str(pk_, name);
      node(child);
    }
  }

  void param(const std::string& key, const SafetensorsTensor& t) {
    const auto [dtype, bytes] = encode(key, t);
    pk_.pack_map(2);
    pack_str(pk_, "id");
    pack_str(pk_, param_id(key));
    pack_str(pk_, "param");
    pk_.pack_map(3);
    pack_str(pk_, "bytes");
    pk_.pack_bin(static_cast<std::uint32_t>(bytes.size()));
    pk_.pack_bin_body(reinterpret_cast<const char*>(bytes.data()),
                      static_cast<std::uint32_t>(bytes.size()));
    pack_str(pk_, "shape");
    pk_.pack_array(static_cast<std::uint32_t>(t.shape.rank()));
    for (const auto d : t.shape) pk_.pack_uint64(static_cast<std::uint64_t>(d));
    pack_str(pk_, "dtype");
    if (dtype == "Bool") {
      pk_.pack_map(1);  // Burn v0.21: DType::Bool(BoolStore::Native)
      pack_str(pk_, "Bool");
      pack_str(pk_, "Native");
    } else {
      pack_str(pk_, dtype);
    }
  }

  /// Burn's dtype name and bytes of `t` at the writer's precision.
  std::pair<std::string_view, std::vector<std::uint8_t>> encode(const std::string& key,
                                                                const SafetensorsTensor& t) const {
    const bool half = precision_ == Precision::Half;
    const auto expected =
        static_cast<std::uint64_t>(t.shape.num_elements()) * safetensors_dtype_size(t.dtype);
    if (t.bytes.size() != expected) {
      throw_error<ValueError>(kWriteOp, ": ", in_quotes(key), " holds ", t.bytes.size(),
                              " bytes, but shape ", t.shape, " of ", t.dtype, " needs ", expected);
    }
    const auto decoded = [&](DType host) {
      try {
        return t.to_data(host);
      } catch (const Error& e) {
        std::string what = e.what();
        const auto cut = what.find(": ");
        throw_error<ValueError>(kWriteOp, ": ", in_quotes(key), ": ",
                                cut == std::string::npos ? what : what.substr(cut + 2));
      }
    };
    switch (t.dtype) {
      case SafetensorsDType::F32:
      case SafetensorsDType::F16:
      case SafetensorsDType::BF16: {
        const auto want = half ? SafetensorsDType::F16 : SafetensorsDType::F32;
        std::vector<std::uint8_t> bytes =
            t.dtype == want ? t.bytes
                            : SafetensorsTensor::from_data(decoded(DType::F32), want).bytes;
        return {half ? "F16" : "F32", std::move(bytes)};
      }
      case SafetensorsDType::I64:
      case SafetensorsDType::I32:
      case SafetensorsDType::U8: {
        const auto values = decoded(DType::I32).to_vec<std::int32_t>();
        const std::size_t size = half ? 2 : 4;
        std::vector<std::uint8_t> bytes(values.size() * size);
        for (std::size_t i = 0; i < values.size(); ++i) {
          if (half && (values[i] < -32768 || values[i] > 32767)) {
            throw_error<ValueError>(kWriteOp, ": ", in_quotes(key), ": Int value ", values[i],
                                    " at element ", i,
                                    " does not fit in i16 (half precision stores Int tensors as "
                                    "i16, Burn's HalfPrecisionSettings; save at full precision)");
          }
          store_le(bytes.data() + size * i,
                   static_cast<std::uint64_t>(static_cast<std::int64_t>(values[i])), size);
        }
        return {half ? "I16" : "I32", std::move(bytes)};
      }
      case SafetensorsDType::Bool: {
        decoded(DType::Bool);  // every byte 0 or 1
        return {"Bool", t.bytes};
      }
    }
    return {"F32", {}};
  }

  ByteSink sink_;
  Packer pk_;
  Precision precision_;
};

Node tree_of(const SafetensorsFile& file) {
  Node root;
  for (const auto& [key, tensor] : file.tensors) {
    if (key.empty()) throw_error<ValueError>(kWriteOp, ": a tensor has the empty key");
    if (!valid_utf8(key)) {
      throw_error<ValueError>(kWriteOp, ": the key ", in_quotes(key), " is not valid UTF-8");
    }
    Node* at = &root;
    std::size_t begin = 0;
    while (true) {
      const std::size_t dot = key.find('.', begin);
      const std::string part =
          key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
      if (part.empty()) {
        throw_error<ValueError>(kWriteOp, ": the key ", in_quotes(key),
                                " has an empty component (field paths are names joined by dots)");
      }
      if (at->tensor != nullptr) {
        throw_error<ValueError>(kWriteOp, ": the key ", in_quotes(*at->key), " is a tensor and a ",
                                "module at once (", in_quotes(key), " lies under it)");
      }
      if (at->first_below == nullptr) at->first_below = &key;
      at = &at->children[part];
      if (dot == std::string::npos) break;
      begin = dot + 1;
    }
    if (!at->children.empty()) {
      throw_error<ValueError>(kWriteOp, ": the key ", in_quotes(key),
                              " is a tensor and a module at once (", in_quotes(*at->first_below),
                              " lies under it)");
    }
    at->key = &key;
    at->tensor = &tensor;
  }
  return root;
}

}  // namespace

SafetensorsFile read_named_mpk(std::span<const std::uint8_t> bytes, std::string_view source,
                               const NamedMpkLimits& limits) {
  if (bytes.empty()) {
    throw_error<FormatError>(kReadOp, ": ", source,
                             ": empty input (a record is a MessagePack map)");
  }
  Builder builder(source, limits, bytes.data(), bytes.size());
  std::size_t offset = 0;
  const bool parsed =
      msgpack::parse(reinterpret_cast<const char*>(bytes.data()), bytes.size(), offset, builder);
  const Value root = builder.take(parsed, offset);
  return Reader(source, limits).read(root);
}

SafetensorsFile load_named_mpk(const std::string& path, const NamedMpkLimits& limits) {
  const std::string bytes = io::read_file(path, "load_named_mpk");
  return read_named_mpk(std::span<const std::uint8_t>(
                            reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                        in_quotes(path), limits);
}

std::vector<std::uint8_t> write_named_mpk(const SafetensorsFile& file, Precision precision) {
  const Node root = tree_of(file);
  std::vector<std::uint8_t> out;
  Writer(out, precision).record(root);
  return out;
}

void save_named_mpk(const SafetensorsFile& file, const std::string& path, Precision precision) {
  const auto bytes = write_named_mpk(file, precision);
  io::write_file_atomic(path,
                        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                        "save_named_mpk");
}

}  // namespace kiln::record
