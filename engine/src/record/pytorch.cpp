// read_pytorch (kiln/record/pytorch.hpp): torch.save's zip layout (torch/serialization.py,
// _save and _load), a restricted interpreter of data.pkl (the opcodes of CPython's
// Lib/pickletools.py, protocols 2 and 4) and the materialisation of tensor views
// (torch._utils._rebuild_tensor_v2). Burn's burn-store/src/pytorch/pickle_reader.rs reads
// the same files; its allow-list of names is the model for ours.
#include "kiln/record/pytorch.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <unordered_map>

#include "kiln/core/error.hpp"
#include "kiln/core/io.hpp"
#include "record/pytorch_zip.hpp"

namespace kiln::record {

using pytorch_detail::cat;
using pytorch_detail::fail;
using pytorch_detail::fail_limit;
using pytorch_detail::printable;

namespace {

// ---------------------------------------------------------------- storage types

struct StorageType {
  std::string_view name;    // torch.<name>
  std::size_t size;         // bytes per element in the file
  SafetensorsDType stored;  // the record's dtype
};

constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", 4, SafetensorsDType::F32},   {"HalfStorage", 2, SafetensorsDType::F16},
    {"BFloat16Storage", 2, SafetensorsDType::BF16}, {"LongStorage", 8, SafetensorsDType::I64},
    {"IntStorage", 4, SafetensorsDType::I32},     {"ByteStorage", 1, SafetensorsDType::U8},
    {"BoolStorage", 1, SafetensorsDType::Bool},   {"DoubleStorage", 8, SafetensorsDType::F32},
    {"ShortStorage", 2, SafetensorsDType::I32},   {"CharStorage", 1, SafetensorsDType::I32},
};
constexpr std::size_t kDouble = 7, kShort = 8, kChar = 9;  // indices of the converted ones

// Globals: the storage types are 0..9, then these.
enum Global : std::int64_t {
  kOrderedDict = 100,
  kRebuildTensorV2,
  kRebuildParameter,
};

constexpr std::string_view kAllowed =
    "collections.OrderedDict, torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter "
    "and torch.<Float|Half|BFloat16|Double|Long|Int|Short|Char|Byte|Bool>Storage";

// ---------------------------------------------------------------- opcode names

std::string_view opcode_name(std::uint8_t op) {
  switch (op) {
    case '(': return "MARK";            case '.': return "STOP";
    case '0': return "POP";             case '1': return "POP_MARK";
    case '2': return "DUP";             case 'F': return "FLOAT";
    case 'I': return "INT";             case 'J': return "BININT";
    case 'K': return "BININT1";         case 'L': return "LONG";
    case 'M': return "BININT2";         case 'N': return "NONE";
    case 'P': return "PERSID";          case 'Q': return "BINPERSID";
    case 'R': return "REDUCE";          case 'S': return "STRING";
    case 'T': return "BINSTRING";       case 'U': return "SHORT_BINSTRING";
    case 'V': return "UNICODE";         case 'X': return "BINUNICODE";
    case 'a': return "APPEND";          case 'b': return "BUILD";
    case 'c': return "GLOBAL";          case 'd': return "DICT";
    case '}': return "EMPTY_DICT";      case 'e': return "APPENDS";
    case 'g': return "GET";             case 'h': return "BINGET";
    case 'i': return "INST";            case 'j': return "LONG_BINGET";
    case 'l': return "LIST";            case ']': return "EMPTY_LIST";
    case 'o': return "OBJ";             case 'p': return "PUT";
    case 'q': return "BINPUT";          case 'r': return "LONG_BINPUT";
    case 's': return "SETITEM";         case 't': return "TUPLE";
    case ')': return "EMPTY_TUPLE";     case 'u': return "SETITEMS";
    case 'G': return "BINFLOAT";        case 0x80: return "PROTO";
    case 0x81: return "NEWOBJ";         case 0x82: return "EXT1";
    case 0x83: return "EXT2";           case 0x84: return "EXT4";
    case 0x85: return "TUPLE1";         case 0x86: return "TUPLE2";
    case 0x87: return "TUPLE3";         case 0x88: return "NEWTRUE";
    case 0x89: return "NEWFALSE";       case 0x8a: return "LONG1";
    case 0x8b: return "LONG4";          case 'B': return "BINBYTES";
    case 'C': return "SHORT_BINBYTES";  case 0x8c: return "SHORT_BINUNICODE";
    case 0x8d: return "BINUNICODE8";    case 0x8e: return "BINBYTES8";
    case 0x8f: return "EMPTY_SET";      case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";      case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";   case 0x94: return "MEMOIZE";
    case 0x95: return "FRAME";          case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";    case 0x98: return "READONLY_BUFFER";
    default: return "";
  }
}

/// Whether p[0, n) is UTF-8 as Python's str.encode("utf-8") writes it: no overlong forms,
/// no surrogates, nothing above U+10FFFF.
bool valid_utf8(const std::uint8_t* p, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n;) {
    const std::uint8_t c = p[i];
    std::uint64_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || n - i < len) return false;
    std::uint32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (std::uint64_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = cp << 6 | (p[i + k] & 0x3F);
    }
    constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += len;
  }
  return true;
}

/// "[2, 3]" (sizes and strides as the file gives them, negative ones included).
std::string dims(const std::vector<std::int64_t>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += cat(i ? ", " : "", v[i]);
  return out + "]";
}

// ---------------------------------------------------------------- the pickle machine

enum class Kind : std::uint8_t { None, Bool, Int, Float, Str, Bytes, Tuple, List, Dict, Global, Storage, Tensor };

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::None: return "None";
    case Kind::Bool: return "a bool";
    case Kind::Int: return "an int";
    case Kind::Float: return "a float";
    case Kind::Str: return "a str";
    case Kind::Bytes: return "bytes";
    case Kind::Tuple: return "a tuple";
    case Kind::List: return "a list";
    case Kind::Dict: return "a dict";
    case Kind::Global: return "a global";
    case Kind::Storage: return "a storage";
    case Kind::Tensor: return "a tensor";
  }
  return "?";
}

/// An object: its kind and a value (None/Bool/Int/Float bits) or an index into the
/// machine's pools (strings, sequences, storages, tensors; a Global's code).
struct Obj {
  Kind kind;
  std::int64_t v;
};

struct StorageRef {
  std::size_t type;  // index into kStorageTypes
  std::string key;   // <name>/data/<key>
  std::uint64_t numel;
};

struct TensorRef {
  std::uint32_t storage;  // index into storages
  std::uint64_t offset;
  std::vector<std::int64_t> size, stride;
};

class Machine {
 public:
  Machine(std::span<const std::uint8_t> pickle, std::string_view source, std::string where)
      : data_(pickle), source_(source), where_(std::move(where)) {}

  /// Runs the pickle to STOP; returns the index of its value.
  std::uint32_t run();

  std::vector<Obj> objs;
  std::vector<std::string> strings;
  std::vector<std::vector<std::uint32_t>> seqs;  // tuples, lists; dicts as k0, v0, k1, v1...
  std::vector<StorageRef> storages;
  std::vector<TensorRef> tensors;

 private:
  [[noreturn]] void bad(const std::string& problem) const {
    fail(source_, cat(where_, ": byte ", at_, ": ", problem));
  }
  const std::uint8_t* need(std::uint64_t n) {
    if (data_.size() - pos_ < n) {
      bad(cat("truncated: ", opcode_name(op_), " needs ", n, " more bytes, ",
                  data_.size() - pos_, " left"));
    }
    const std::uint8_t* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::uint64_t read_le(std::size_t n) {
    const std::uint8_t* p = need(n);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
  }
  std::string read_line() {
    const std::size_t start = pos_;
    while (pos_ < data_.size() && data_[pos_] != '\n') {
      if (pos_ - start >= 256) bad(cat(opcode_name(op_), ": a name longer than 256 bytes"));
      ++pos_;
    }
    if (pos_ == data_.size()) bad(cat("truncated: ", opcode_name(op_), " has no newline"));
    std::string line(reinterpret_cast<const char*>(data_.data()) + start, pos_ - start);
    ++pos_;
    return line;
  }

  std::uint32_t make(Kind kind, std::int64_t v) {
    objs.push_back(Obj{kind, v});
    return static_cast<std::uint32_t>(objs.size() - 1);
  }
  std::uint32_t make_string(Kind kind, std::string s) {
    strings.push_back(std::move(s));
    return make(kind, static_cast<std::int64_t>(strings.size() - 1));
  }
  std::uint32_t make_seq(Kind kind, std::vector<std::uint32_t> items) {
    seqs.push_back(std::move(items));
    return make(kind, static_cast<std::int64_t>(seqs.size() - 1));
  }
  std::uint32_t pop() {
    if (stack_.size() <= floor()) bad(cat(opcode_name(op_), " on an empty stack"));
    const std::uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  std::uint32_t top() {
    if (stack_.size() <= floor()) bad(cat(opcode_name(op_), " on an empty stack"));
    return stack_.back();
  }
  std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
  /// The items above the last MARK, which is removed.
  std::vector<std::uint32_t> pop_mark() {
    if (marks_.empty()) bad(cat(opcode_name(op_), " without a MARK"));
    const std::size_t m = marks_.back();
    marks_.pop_back();
    std::vector<std::uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  std::vector<std::uint32_t>& container(std::uint32_t o, Kind kind) {
    if (objs[o].kind != kind) {
      bad(cat(opcode_name(op_), " on ", kind_name(objs[o].kind), ", expected ", kind_name(kind)));
    }
    return seqs[static_cast<std::size_t>(objs[o].v)];
  }
  void put(std::uint64_t key) { memo_[key] = top(); }
  void get(std::uint64_t key) {
    const auto it = memo_.find(key);
    if (it == memo_.end()) bad(cat(opcode_name(op_), " of memo key ", key, ", never stored"));
    stack_.push_back(it->second);
  }
  void global(const std::string& module, const std::string& name);
  void reduce();
  void build();
  void persistent_id();
  std::int64_t as_int(std::uint32_t o, const char* what) {
    if (objs[o].kind != Kind::Int) bad(cat(what, " is ", kind_name(objs[o].kind), ", expected an int"));
    return objs[o].v;
  }
  std::vector<std::int64_t> int_tuple(std::uint32_t o, const char* what) {
    if (objs[o].kind != Kind::Tuple) {
      bad(cat(what, " is ", kind_name(objs[o].kind), ", expected a tuple of ints"));
    }
    std::vector<std::int64_t> out;
    for (const std::uint32_t i : seqs[static_cast<std::size_t>(objs[o].v)]) out.push_back(as_int(i, what));
    return out;
  }

  std::span<const std::uint8_t> data_;
  std::string_view source_;
  std::string where_;  // "archive/data.pkl"
  std::size_t pos_ = 0;
  std::size_t at_ = 0;   // the current opcode's byte
  std::uint8_t op_ = 0;  // the current opcode
  std::vector<std::uint32_t> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, std::uint32_t> memo_;
  std::unordered_map<std::string, std::uint32_t> storage_by_key_;
  std::optional<std::uint32_t> empty_tuple_;
};

void Machine::global(const std::string& module, const std::string& name) {
  std::int64_t code = -1;
  if (module == "collections" && name == "OrderedDict") code = kOrderedDict;
  if (module == "torch._utils" && name == "_rebuild_tensor_v2") code = kRebuildTensorV2;
  if (module == "torch._utils" && name == "_rebuild_parameter") code = kRebuildParameter;
  if (module == "torch") {
    for (std::size_t i = 0; i < std::size(kStorageTypes); ++i) {
      if (kStorageTypes[i].name == name) code = static_cast<std::int64_t>(i);
    }
  }
  if (code < 0) {
    bad(cat("global ", printable(module + "." + name),
                " is not allowed: Kiln reads tensors only and runs nothing from the file (allowed: ",
                kAllowed, ")"));
  }
  stack_.push_back(make(Kind::Global, code));
}

void Machine::persistent_id() {
  const std::uint32_t pid = pop();
  const char* expected = "a persistent id ('storage', torch.<T>Storage, key, location, numel)";
  if (objs[pid].kind != Kind::Tuple) bad(cat("BINPERSID of ", kind_name(objs[pid].kind), ", expected ", expected));
  const auto items = seqs[static_cast<std::size_t>(objs[pid].v)];
  if (items.size() != 5 || objs[items[0]].kind != Kind::Str ||
      strings[static_cast<std::size_t>(objs[items[0]].v)] != "storage" ||
      objs[items[1]].kind != Kind::Global || objs[items[1]].v >= kOrderedDict ||
      objs[items[2]].kind != Kind::Str || objs[items[3]].kind != Kind::Str ||
      objs[items[4]].kind != Kind::Int || objs[items[4]].v < 0) {
    bad(cat("BINPERSID of a malformed tuple, expected ", expected));
  }
  const auto type = static_cast<std::size_t>(objs[items[1]].v);
  const std::string& key = strings[static_cast<std::size_t>(objs[items[2]].v)];
  const auto numel = static_cast<std::uint64_t>(objs[items[4]].v);
  const auto it = storage_by_key_.find(key);
  if (it != storage_by_key_.end()) {
    const StorageRef& s = storages[it->second];
    if (s.type != type || s.numel != numel) {
      bad(cat("storage ", printable(key), " is named twice with different types or sizes (torch.",
                  kStorageTypes[s.type].name, " of ", s.numel, " vs torch.",
                  kStorageTypes[type].name, " of ", numel, ")"));
    }
    stack_.push_back(make(Kind::Storage, it->second));
    return;
  }
  storages.push_back(StorageRef{type, key, numel});
  storage_by_key_.emplace(key, static_cast<std::uint32_t>(storages.size() - 1));
  stack_.push_back(make(Kind::Storage, static_cast<std::int64_t>(storages.size() - 1)));
}

void Machine::reduce() {
  const std::uint32_t args_obj = pop();
  const std::uint32_t callable = pop();
  if (objs[callable].kind != Kind::Global) {
    bad(cat("REDUCE calls ", kind_name(objs[callable].kind), ", not an allowed global"));
  }
  if (objs[args_obj].kind != Kind::Tuple) {
    bad(cat("REDUCE with arguments of ", kind_name(objs[args_obj].kind), ", expected a tuple"));
  }
  const std::vector<std::uint32_t> args = seqs[static_cast<std::size_t>(objs[args_obj].v)];
  const std::int64_t code = objs[callable].v;
  if (code == kOrderedDict) {
    if (!args.empty()) bad(cat("collections.OrderedDict called with ", args.size(), " arguments, expected none"));
    stack_.push_back(make_seq(Kind::Dict, {}));
    return;
  }
  if (code == kRebuildParameter) {
    if (args.size() != 3 || objs[args[0]].kind != Kind::Tensor || objs[args[1]].kind != Kind::Bool) {
      bad("torch._utils._rebuild_parameter expects (tensor, requires_grad, backward_hooks)");
    }
    stack_.push_back(args[0]);
    return;
  }
  if (code != kRebuildTensorV2) {
    bad(cat("torch.", kStorageTypes[static_cast<std::size_t>(code)].name,
                " cannot be called (a storage class is only a persistent id's type)"));
  }
  if ((args.size() != 6 && args.size() != 7) || objs[args[0]].kind != Kind::Storage) {
    bad("torch._utils._rebuild_tensor_v2 expects (storage, storage_offset, size, stride, "
        "requires_grad, backward_hooks[, metadata])");
  }
  TensorRef t;
  t.storage = static_cast<std::uint32_t>(objs[args[0]].v);
  const std::int64_t offset = as_int(args[1], "a tensor's storage_offset");
  t.size = int_tuple(args[2], "a tensor's size");
  t.stride = int_tuple(args[3], "a tensor's stride");
  const StorageRef& s = storages[t.storage];
  const std::string what = cat("a tensor on storage ", printable(s.key));
  if (t.size.size() != t.stride.size()) {
    bad(cat(what, " has a size of rank ", t.size.size(), " but a stride of rank ", t.stride.size()));
  }
  if (t.size.size() > Shape::max_rank) {
    bad(cat(what, " has rank ", t.size.size(), ", above Kiln's limit of ", Shape::max_rank));
  }
  if (offset < 0) bad(cat(what, " has a negative storage_offset ", offset));
  t.offset = static_cast<std::uint64_t>(offset);
  // The last element a view reads: offset + sum((size - 1) · stride), each step checked.
  std::uint64_t last = t.offset;
  bool empty = false;
  for (std::size_t d = 0; d < t.size.size(); ++d) {
    if (t.size[d] < 0 || t.stride[d] < 0) {
      bad(cat(what, " has a negative size or stride: size ", dims(t.size), ", stride ",
                  dims(t.stride)));
    }
    if (t.size[d] == 0) empty = true;
  }
  if (!empty) {
    for (std::size_t d = 0; d < t.size.size(); ++d) {
      std::uint64_t step = 0;
      if (__builtin_mul_overflow(static_cast<std::uint64_t>(t.size[d] - 1),
                                 static_cast<std::uint64_t>(t.stride[d]), &step) ||
          __builtin_add_overflow(last, step, &last)) {
        bad(cat(what, " has sizes and strides whose extent overflows 64 bits"));
      }
    }
    if (last >= s.numel) {
      bad(cat(what, " (offset ", t.offset, ") reads element ", last, " but the storage holds ",
                  s.numel));
    }
  }
  tensors.push_back(std::move(t));
  stack_.push_back(make(Kind::Tensor, static_cast<std::int64_t>(tensors.size() - 1)));
}

void Machine::build() {
  const std::uint32_t state = pop();
  const std::uint32_t target = top();
  // OrderedDict's state (a state_dict's `_metadata` attribute): not needed, not applied.
  if (objs[target].kind == Kind::Dict && (objs[state].kind == Kind::Dict || objs[state].kind == Kind::None)) return;
  bad(cat("BUILD of ", kind_name(objs[target].kind), " with ", kind_name(objs[state].kind),
              " is not supported (only an OrderedDict's attributes)"));
}

std::uint32_t Machine::run() {
  while (true) {
    at_ = pos_;
    if (pos_ >= data_.size()) bad("truncated: no STOP opcode");
    op_ = data_[pos_++];
    switch (op_) {
      case 0x80:  // PROTO
        if (const auto v = read_le(1); v < 2 || v > 5) bad(cat("pickle protocol ", v, " is not supported (2 to 5)"));
        break;
      case 0x95:  // FRAME: a length hint only
        (void)read_le(8);
        break;
      case '.': {  // STOP
        const std::uint32_t value = pop();
        if (!stack_.empty() || !marks_.empty()) {
          bad(cat("STOP leaves ", stack_.size(), " values and ", marks_.size(), " marks on the stack"));
        }
        if (pos_ != data_.size()) bad(cat(data_.size() - pos_, " bytes after STOP"));
        return value;
      }
      case '(': marks_.push_back(stack_.size()); break;
      case '0': (void)pop(); break;
      case '1': (void)pop_mark(); break;
      case '2': stack_.push_back(top()); break;
      case 'N': stack_.push_back(make(Kind::None, 0)); break;
      case 0x88: stack_.push_back(make(Kind::Bool, 1)); break;
      case 0x89: stack_.push_back(make(Kind::Bool, 0)); break;
      case 'J': stack_.push_back(make(Kind::Int, static_cast<std::int32_t>(read_le(4)))); break;
      case 'K': stack_.push_back(make(Kind::Int, static_cast<std::int64_t>(read_le(1)))); break;
      case 'M': stack_.push_back(make(Kind::Int, static_cast<std::int64_t>(read_le(2)))); break;
      case 0x8a: {  // LONG1: n bytes, little-endian two's complement
        const auto n = read_le(1);
        if (n > 8) bad(cat("LONG1 of ", n, " bytes: an integer wider than 64 bits"));
        std::uint64_t v = read_le(static_cast<std::size_t>(n));
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~std::uint64_t{0} << (8 * n);
        stack_.push_back(make(Kind::Int, static_cast<std::int64_t>(v)));
        break;
      }
      case 'G': {  // BINFLOAT: big-endian double
        const std::uint8_t* p = need(8);
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = bits << 8 | p[i];
        stack_.push_back(make(Kind::Float, static_cast<std::int64_t>(bits)));
        break;
      }
      case 'X': case 0x8c: case 0x8d: case 'T': case 'U': case 'B': case 'C': case 0x8e: {
        const std::size_t width = op_ == 0x8c || op_ == 'U' || op_ == 'C'   ? 1
                                  : op_ == 0x8d || op_ == 0x8e             ? 8
                                                                           : 4;
        const std::uint64_t n = read_le(width);
        const std::uint8_t* p = need(n);  // checked against the bytes left before copying
        // BINUNICODE* hold a Python str as UTF-8; BINSTRING/SHORT_BINSTRING (Python 2's str)
        // and BINBYTES* are bytes, which no state_dict key is.
        const Kind kind = op_ == 'X' || op_ == 0x8c || op_ == 0x8d ? Kind::Str : Kind::Bytes;
        if (kind == Kind::Str && !valid_utf8(p, n)) bad(cat(opcode_name(op_), " holds invalid UTF-8"));
        stack_.push_back(make_string(kind, std::string(reinterpret_cast<const char*>(p), n)));
        break;
      }
      case ')':  // tuples are immutable: one empty tuple serves every EMPTY_TUPLE
        if (!empty_tuple_) empty_tuple_ = make_seq(Kind::Tuple, {});
        stack_.push_back(*empty_tuple_);
        break;
      case ']': stack_.push_back(make_seq(Kind::List, {})); break;
      case '}': stack_.push_back(make_seq(Kind::Dict, {})); break;
      case 't': stack_.push_back(make_seq(Kind::Tuple, pop_mark())); break;
      case 'l': stack_.push_back(make_seq(Kind::List, pop_mark())); break;
      case 'd': {
        auto items = pop_mark();
        if (items.size() % 2) bad("DICT of an odd number of items");
        stack_.push_back(make_seq(Kind::Dict, std::move(items)));
        break;
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        std::vector<std::uint32_t> items(op_ - 0x84);
        for (std::size_t i = items.size(); i-- > 0;) items[i] = pop();
        stack_.push_back(make_seq(Kind::Tuple, std::move(items)));
        break;
      }
      case 'a': {
        const std::uint32_t v = pop();
        container(top(), Kind::List).push_back(v);
        break;
      }
      case 'e': {
        const auto items = pop_mark();
        auto& list = container(top(), Kind::List);
        list.insert(list.end(), items.begin(), items.end());
        break;
      }
      case 's': {
        const std::uint32_t v = pop(), k = pop();
        auto& dict = container(top(), Kind::Dict);
        dict.push_back(k);
        dict.push_back(v);
        break;
      }
      case 'u': {
        const auto items = pop_mark();
        if (items.size() % 2) bad("SETITEMS of an odd number of items");
        auto& dict = container(top(), Kind::Dict);
        dict.insert(dict.end(), items.begin(), items.end());
        break;
      }
      case 'q': put(read_le(1)); break;
      case 'r': put(read_le(4)); break;
      case 0x94: put(memo_.size()); break;
      case 'h': get(read_le(1)); break;
      case 'j': get(read_le(4)); break;
      case 'c': {
        const std::string module = read_line();
        const std::string name = read_line();
        global(module, name);
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        const std::uint32_t name = pop(), module = pop();
        if (objs[name].kind != Kind::Str || objs[module].kind != Kind::Str) bad("STACK_GLOBAL of non-strings");
        global(strings[static_cast<std::size_t>(objs[module].v)], strings[static_cast<std::size_t>(objs[name].v)]);
        break;
      }
      case 'R': reduce(); break;
      case 'b': build(); break;
      case 'Q': persistent_id(); break;
      default: {
        const std::string_view name = opcode_name(op_);
        bad(cat("unsupported pickle opcode 0x", "0123456789abcdef"[op_ >> 4],
                    "0123456789abcdef"[op_ & 15],
                    name.empty() ? std::string(" (not a pickle opcode)") : cat(" (", name, ")"),
                    ": Kiln interprets only what a state_dict of tensors needs"));
      }
    }
  }
}

// ---------------------------------------------------------------- tensors

/// The view `t` of `storage` (its raw bytes) as a contiguous record tensor.
SafetensorsTensor materialise(const TensorRef& t, const StorageRef& s,
                              std::span<const std::uint8_t> storage) {
  const StorageType& type = kStorageTypes[s.type];
  SafetensorsTensor out;
  out.dtype = type.stored;
  out.shape = Shape(t.size);
  const std::size_t n = static_cast<std::size_t>(out.shape.num_elements());
  const std::size_t out_size = safetensors_dtype_size(out.dtype);
  out.bytes.resize(n * out_size);
  if (n == 0) return out;
  const std::uint8_t* src = storage.data();
  const auto copy = [&](std::size_t i, std::uint64_t e) {
    const std::uint8_t* from = src + e * type.size;
    std::uint8_t* to = out.bytes.data() + i * out_size;
    if (s.type == kDouble) {
      std::uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits |= static_cast<std::uint64_t>(from[k]) << (8 * k);
      double d;
      std::memcpy(&d, &bits, 8);
      const float f = static_cast<float>(d);
      if (std::isfinite(d) && !std::isfinite(f)) {
        char text[32];
        std::snprintf(text, sizeof text, "%.17g", d);
        throw ValueError(cat("float64 value ", std::string_view(text), " at element ", i,
                             " is outside float32's range (|x| <= 3.4028235e38)"));
      }
      std::uint32_t fb;
      std::memcpy(&fb, &f, 4);
      for (int k = 0; k < 4; ++k) to[k] = static_cast<std::uint8_t>(fb >> (8 * k));
    } else if (s.type == kShort || s.type == kChar) {
      std::int32_t v = s.type == kChar ? static_cast<std::int8_t>(from[0])
                                       : static_cast<std::int16_t>(from[0] | from[1] << 8);
      const auto u = static_cast<std::uint32_t>(v);
      for (int k = 0; k < 4; ++k) to[k] = static_cast<std::uint8_t>(u >> (8 * k));
    } else {
      std::memcpy(to, from, type.size);
    }
  };
  // A row-major view of an unconverted type (every state_dict entry torch.save writes from
  // a module): one copy.
  const std::size_t rank = t.size.size();
  bool row_major = type.size == out_size && s.type != kDouble;
  std::int64_t expected_stride = 1;
  for (std::size_t d = rank; d-- > 0 && row_major;) {
    if (t.size[d] != 1 && t.stride[d] != expected_stride) row_major = false;
    expected_stride *= t.size[d];
  }
  if (row_major) {
    std::memcpy(out.bytes.data(), src + t.offset * type.size, out.bytes.size());
    return out;
  }
  // Otherwise walk the view in row-major order: an odometer over the dims, the storage
  // index kept.
  std::vector<std::int64_t> index(rank, 0);
  std::uint64_t e = t.offset;
  for (std::size_t i = 0; i < n; ++i) {
    copy(i, e);
    for (std::size_t d = rank; d-- > 0;) {
      if (++index[d] < t.size[d]) {
        e += static_cast<std::uint64_t>(t.stride[d]);
        break;
      }
      e -= static_cast<std::uint64_t>(t.stride[d]) * static_cast<std::uint64_t>(t.size[d] - 1);
      index[d] = 0;
    }
  }
  return out;
}

struct Flattener {
  const Machine& m;
  std::string_view source;
  const PytorchLimits& limits;
  std::vector<std::pair<std::string, std::uint32_t>> found;  // key -> tensor index
  std::set<std::string> keys;
  std::unordered_map<std::uint32_t, std::string> walked;  // dict -> where it was met

  /// Collects the tensors of `dict` under `prefix`. Each dict is walked once: a dict met
  /// again (shared by two keys, or inside itself) is an error, so the walk is linear in the
  /// pickle's size whatever its shape.
  void walk(std::uint32_t dict, const std::string& prefix, std::size_t depth) {
    if (depth > limits.max_depth) {
      fail(source, cat("dicts nest more than ", limits.max_depth, " levels deep at ",
                           printable(prefix), " (PytorchLimits::max_depth)"));
    }
    const auto seen = walked.emplace(dict, prefix);
    if (!seen.second) {
      fail(source, cat("the dict at ", printable(prefix), " is also at ", printable(seen.first->second),
                           " (shared or self-containing dicts are not supported)"));
    }
    const auto& items = m.seqs[static_cast<std::size_t>(m.objs[dict].v)];
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
      const Obj& k = m.objs[items[i]];
      std::string name;
      if (k.kind == Kind::Str) {
        name = m.strings[static_cast<std::size_t>(k.v)];
      } else if (k.kind == Kind::Int) {
        name = std::to_string(k.v);  // as Python's str(int)
      } else {
        fail(source, cat("a key under ", printable(prefix), " is ", kind_name(k.kind),
                             ", expected a string or an int"));
      }
      const std::string path = prefix.empty() ? name : cat(prefix, ".", name);
      const Obj& v = m.objs[items[i + 1]];
      if (v.kind == Kind::Tensor) {
        if (!keys.insert(path).second) fail(source, cat("two tensors have the key ", printable(path)));
        if (found.size() >= limits.max_tensors) {
          fail_limit(source, cat("the checkpoint holds more than ", limits.max_tensors,
                                     " tensors (PytorchLimits::max_tensors)"));
        }
        found.emplace_back(path, static_cast<std::uint32_t>(v.v));
      } else if (v.kind == Kind::Dict) {
        walk(items[i + 1], path, depth + 1);
      }
    }
  }
};

}  // namespace

SafetensorsFile read_pytorch(std::span<const std::uint8_t> bytes, std::string_view source,
                             const PytorchReadOptions& options) {
  const PytorchLimits& limits = options.limits;
  const pytorch_detail::ZipArchive zip(bytes, source, limits.max_entries);

  // The record's directory: the one <name>/data.pkl at the top level.
  std::string prefix;
  std::size_t pickles = 0;
  for (const auto& [name, entry] : zip.entries()) {
    const auto slash = name.find('/');
    if (slash != std::string::npos && slash > 0 && name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      prefix = name.substr(0, slash + 1);
      ++pickles;
    }
  }
  if (pickles != 1) {
    fail(source, pickles == 0 ? std::string("no <name>/data.pkl entry: not a torch.save checkpoint")
                              : cat("the zip holds ", pickles, " <name>/data.pkl entries, expected one"));
  }
  if (const auto* order = zip.find(prefix + "byteorder")) {
    const auto text = zip.read(prefix + "byteorder", *order, options.check_crc32);
    if (std::string_view(reinterpret_cast<const char*>(text.data()), text.size()) != "little") {
      fail(source, cat(printable(prefix + "byteorder"), " is not \"little\": big-endian "
                           "checkpoints are not supported"));
    }
  }
  const std::string pkl_name = prefix + "data.pkl";
  const auto& pkl_entry = *zip.find(pkl_name);
  if (pkl_entry.size > limits.max_pickle_bytes) {
    fail_limit(source, cat(printable(pkl_name), " has ", pkl_entry.size, " bytes, above the limit of ",
                               limits.max_pickle_bytes, " (PytorchLimits::max_pickle_bytes)"));
  }
  Machine m(zip.read(pkl_name, pkl_entry, options.check_crc32), source, pkl_name);
  std::uint32_t root = m.run();

  if (m.objs[root].kind != Kind::Dict) {
    fail(source, cat(pkl_name, " holds ", kind_name(m.objs[root].kind),
                         ", expected a dict of tensors (a state_dict; a whole pickled model, "
                         "torch.save(model), is not supported: save model.state_dict())"));
  }
  if (options.top_level_key) {
    const auto& items = m.seqs[static_cast<std::size_t>(m.objs[root].v)];
    std::optional<std::uint32_t> inner;
    std::string keys;
    std::size_t listed = 0;
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
      if (m.objs[items[i]].kind != Kind::Str) continue;
      const std::string& k = m.strings[static_cast<std::size_t>(m.objs[items[i]].v)];
      if (k == *options.top_level_key) inner = items[i + 1];
      if (listed++ < 20) keys += cat(keys.empty() ? "" : ", ", printable(k));
    }
    if (!inner) {
      fail(source, cat("the top-level key ", printable(*options.top_level_key), " is absent (keys: ",
                           keys.empty() ? std::string("none") : keys, listed > 20 ? ", ..." : "", ")"));
    }
    if (m.objs[*inner].kind != Kind::Dict) {
      fail(source, cat("the top-level key ", printable(*options.top_level_key), " holds ",
                           kind_name(m.objs[*inner].kind), ", expected a dict of tensors"));
    }
    root = *inner;
  }
  Flattener flat{m, source, limits, {}, {}, {}};
  flat.walk(root, "", 1);

  // Every storage used: present, of its claimed size; then the bytes materialised, bounded.
  std::vector<std::span<const std::uint8_t>> data(m.storages.size());
  std::vector<bool> loaded(m.storages.size(), false);
  std::uint64_t budget = 0, total = 0;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(bytes.size()), limits.max_expansion, &budget)) {
    budget = std::numeric_limits<std::uint64_t>::max();
  }
  for (const auto& [key, index] : flat.found) {
    const TensorRef& t = m.tensors[index];
    const StorageRef& s = m.storages[t.storage];
    if (!loaded[t.storage]) {
      const std::string name = prefix + "data/" + s.key;
      const auto* entry = zip.find(name);
      if (entry == nullptr) fail(source, cat("tensor ", printable(key), ": its storage entry ", printable(name), " is absent"));
      const StorageType& type = kStorageTypes[s.type];
      if (entry->size % type.size != 0 || entry->size / type.size != s.numel) {
        fail(source, cat("tensor ", printable(key), ": storage ", printable(name), " (torch.", type.name,
                             ") should hold ", s.numel, " elements of ", type.size, " bytes, the entry has ",
                             entry->size, " bytes"));
      }
      data[t.storage] = zip.read(name, *entry, options.check_crc32);
      loaded[t.storage] = true;
    }
    std::uint64_t elements = 1;
    for (const auto d : t.size) {
      if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(d), &elements)) elements = ~std::uint64_t{0};
    }
    const std::uint64_t size = safetensors_dtype_size(kStorageTypes[s.type].stored);
    std::uint64_t tensor_bytes = 0;
    if (__builtin_mul_overflow(elements, size, &tensor_bytes) ||
        __builtin_add_overflow(total, tensor_bytes, &total) || total > budget) {
      fail_limit(source, cat("tensor ", printable(key), " ", dims(t.size),
                                 " brings the materialised tensors past ", limits.max_expansion,
                                 " times the file's ", bytes.size(),
                                 " bytes (PytorchLimits::max_expansion; views can claim more "
                                 "elements than their storage holds)"));
    }
  }
  SafetensorsFile file;
  for (const auto& [key, index] : flat.found) {
    const TensorRef& t = m.tensors[index];
    try {
      file.tensors.emplace(key, materialise(t, m.storages[t.storage], data[t.storage]));
    } catch (const ValueError& e) {
      throw ValueError(cat("read_pytorch: ", source, ": tensor ", printable(key), ": ", e.what()));
    }
  }
  return file;
}

SafetensorsFile load_pytorch(const std::string& path, const PytorchReadOptions& options) {
  const std::string text = io::read_file(path, "load_pytorch");
  return read_pytorch(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()),
                      cat('"', path, '"'), options);
}

}  // namespace kiln::record
