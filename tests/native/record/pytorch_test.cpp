// read_pytorch (kiln/record/pytorch.hpp) on checkpoints written by Debian's PyTorch 1.13
// (tests/native/record/make_pt_fixtures.py -> tests/native/record/pytorch/, committed):
// views and shared storages materialised, every dtype, nested checkpoints and the top-level
// key, Parameters; malformed checkpoints (the generator's, and zips corrupted here byte by
// byte): a FormatError or LimitError naming the problem, never a crash; a pickle asking for
// os.system is refused and nothing runs.
#include "kiln/record/pytorch.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/core/error.hpp"
#include "support/paths.hpp"

namespace kiln::record {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<std::uint8_t>;
using Json = nlohmann::json;

const std::string kDir = KILN_RECORD_TEST_DIR + "/pytorch/";

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot open " << path;
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

const Json& expected() {
  static const Json json = [] {
    std::ifstream in(kDir + "expected.json");
    return Json::parse(in);
  }();
  return json;
}

std::vector<float> floats(const Json& nested) {
  std::vector<float> out;
  if (nested.is_array()) {
    for (const auto& v : nested) {
      const auto inner = floats(v);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  } else {
    out.push_back(nested.get<float>());
  }
  return out;
}

/// The FormatError (or LimitError) message of reading `bytes`; fails the test if it reads.
template <class E = FormatError>
std::string error_of(const Bytes& bytes, const PytorchReadOptions& options = {}) {
  try {
    (void)read_pytorch(bytes, "bytes", options);
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "another error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "read without an error";
  return "";
}

TEST(ReadPytorch, MlpStateDictHasTorchKeysShapesAndValues) {
  const auto file = load_pytorch(kDir + "mlp.pt");
  ASSERT_EQ(file.tensors.size(), 4u);
  const auto& w = file.tensors.at("fc1.weight");
  EXPECT_EQ(w.dtype, SafetensorsDType::F32);
  EXPECT_EQ(w.shape, (Shape{4, 3}));
  EXPECT_EQ(file.tensors.at("fc2.bias").shape, Shape{2});
  // The values are checked through the model's logits in pytorch_models_test.cpp; here
  // the same weights in bf16 against PyTorch's own upcast.
  const auto low = load_pytorch(kDir + "bf16.pt");
  EXPECT_EQ(low.tensors.at("fc1.weight").dtype, SafetensorsDType::BF16);
  EXPECT_EQ(low.tensors.at("fc1.weight").to_data(DType::F32).to_vec<float>(),
            floats(expected()["bf16"]["fc1.weight"]));
  const auto half = load_pytorch(kDir + "half.pt");
  EXPECT_EQ(half.tensors.at("fc1.weight").dtype, SafetensorsDType::F16);
  EXPECT_EQ(half.tensors.at("fc1.weight").to_data(DType::F32).to_vec<float>(),
            floats(expected()["half"]["fc1.weight"]));
}

TEST(ReadPytorch, ViewsAndEveryDTypeMaterialiseAsPytorchPrintsThem) {
  const auto file = load_pytorch(kDir + "views.pt");
  const Json& want = expected()["views"];
  ASSERT_EQ(file.tensors.size(), want.size());
  for (const auto& [key, w] : want.items()) {
    SCOPED_TRACE(key);
    const auto& t = file.tensors.at(key);
    std::vector<std::int64_t> dims = w["shape"].get<std::vector<std::int64_t>>();
    EXPECT_EQ(t.shape, Shape(dims));
    const std::string dtype = w["dtype"];
    if (dtype == "float32" || dtype == "float64") {
      EXPECT_EQ(t.dtype, SafetensorsDType::F32);  // float64 rounded to f32
      const auto values = w["values"].is_array() ? floats(w["values"]) : std::vector<float>{w["values"].get<float>()};
      EXPECT_EQ(t.to_data(DType::F32).to_vec<float>(), values);
    } else if (dtype == "bool") {
      EXPECT_EQ(t.dtype, SafetensorsDType::Bool);
      EXPECT_EQ(t.bytes, (Bytes{1, 0, 1}));
    } else if (dtype == "int64") {
      ASSERT_EQ(t.dtype, SafetensorsDType::I64);
      std::vector<std::int64_t> got(3);
      std::memcpy(got.data(), t.bytes.data(), 24);  // the test hosts are little-endian
      EXPECT_EQ(got, (std::vector<std::int64_t>{-3, 0, 2147483647}));
    } else {
      EXPECT_EQ(t.dtype, dtype == "uint8" ? SafetensorsDType::U8 : SafetensorsDType::I32);
      std::vector<std::int32_t> values;
      for (const auto& v : floats(w["values"])) values.push_back(static_cast<std::int32_t>(v));
      EXPECT_EQ(t.to_data(DType::I32).to_vec<std::int32_t>(), values);
    }
  }
  // The layouts behind them, as the generator asserts: a .t() view, a strided slice with
  // an offset, two tensors on one storage, a stride-0 expand.
  EXPECT_EQ(file.tensors.at("transposed").to_data(DType::F32).to_vec<float>()[1], -0.f);
  EXPECT_EQ(file.tensors.at("scalar").shape.rank(), 0u);

  // int64 beyond int32 stays exact in the record; decoding it to Kiln's i32 is a ValueError.
  const auto big = load_pytorch(kDir + "big_int64.pt").tensors.at("big");
  ASSERT_EQ(big.dtype, SafetensorsDType::I64);
  std::vector<std::int64_t> got(2);
  std::memcpy(got.data(), big.bytes.data(), 16);
  EXPECT_EQ(got, (std::vector<std::int64_t>{5, -(std::int64_t{1} << 40)}));
  EXPECT_THROW((void)big.to_data(DType::I32), ValueError);
}

TEST(ReadPytorch, NestedCheckpointFlattensOrTakesTheTopLevelKey) {
  const auto all = load_pytorch(kDir + "nested.pt");
  // {"model": state_dict, "epoch": 3, "lr": 0.1, "tag": "run-1", "optimizer": {...}}: the
  // tensors of every dict, dotted; the optimizer's integer keys in decimal; scalars skipped.
  EXPECT_EQ(all.tensors.count("model.fc1.weight"), 1u);
  EXPECT_EQ(all.tensors.count("epoch"), 0u);
  ASSERT_EQ(all.tensors.count("optimizer.state.0.momentum_buffer"), 1u);
  EXPECT_EQ(all.tensors.at("optimizer.state.0.momentum_buffer").to_data(DType::F32).to_vec<float>(),
            floats(expected()["nested"]["optimizer.state.0.momentum_buffer"]));
  EXPECT_EQ(all.tensors.size(), 4u + 4u);  // the model's 4 and a momentum buffer each

  const auto model = load_pytorch(kDir + "nested.pt", PytorchReadOptions{}.with_top_level_key("model"));
  ASSERT_EQ(model.tensors.size(), 4u);
  EXPECT_EQ(model.tensors.at("fc1.weight").to_data(DType::F32).to_vec<float>(),
            floats(expected()["nested"]["model.fc1.weight"]));

  const Bytes bytes = read_bytes(kDir + "nested.pt");
  EXPECT_THAT(error_of(bytes, PytorchReadOptions{}.with_top_level_key("state_dict")),
              HasSubstr("the top-level key \"state_dict\" is absent (keys: \"model\", \"epoch\", "
                        "\"lr\", \"tag\", \"optimizer\")"));
  EXPECT_THAT(error_of(bytes, PytorchReadOptions{}.with_top_level_key("epoch")),
              HasSubstr("the top-level key \"epoch\" holds an int, expected a dict of tensors"));
}

TEST(ReadPytorch, Zip64DirectoryReadsAsTheSameRecord) {
  // zip64.pt: mlp.pt's entries, every size and offset of the directory in zip64 extra
  // fields and the end record saturated (PyTorch writes these for files past 4 GiB).
  const auto a = load_pytorch(kDir + "mlp.pt");
  const auto b = load_pytorch(kDir + "zip64.pt");
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [key, t] : a.tensors) {
    EXPECT_EQ(b.tensors.at(key).bytes, t.bytes) << key;
    EXPECT_EQ(b.tensors.at(key).shape, t.shape) << key;
  }
  // A zip64 extra field too short for the saturated fields it must hold.
  Bytes bytes = read_bytes(kDir + "zip64.pt");
  const std::string name = "mlp/data.pkl";
  std::size_t at = 0;  // the central header's copy of the name (the second occurrence)
  for (std::size_t i = 0, seen = 0; i + name.size() <= bytes.size(); ++i) {
    if (std::memcmp(&bytes[i], name.data(), name.size()) == 0 && ++seen == 2) {
      at = i;
      break;
    }
  }
  ASSERT_GT(at, 0u);
  bytes[at + name.size() + 2] = 8;  // the extra's data size: 8 of the 24 bytes it needs
  EXPECT_THAT(error_of(bytes), HasSubstr("entry \"mlp/data.pkl\": the zip64 extra field is too short"));
}

TEST(ReadPytorch, ParameterIsReadAsItsTensor) {
  const auto file = load_pytorch(kDir + "parameter.pt");
  EXPECT_EQ(file.tensors.at("w").to_data(DType::F32).to_vec<float>(), (std::vector<float>{1.f, 2.f}));
}

TEST(ReadPytorch, MalformedCheckpointsNameTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"legacy.pt", "a legacy PyTorch checkpoint (a bare pickle, not the zip format PyTorch "
                    "writes since 1.6); re-save it with a newer PyTorch (>= 1.6, the zip format)"},
      {"deflated.pt", "is deflated (compression method 8); Kiln reads stored entries"},
      {"eval_global.pt", "global \"builtins.eval\" is not allowed"},
      {"unknown_opcode.pt", "archive/data.pkl: byte 10: unsupported pickle opcode 0x69 (INST)"},
      {"view_past_storage.pt", "reads element 4 but the storage holds 4"},
      {"numel_mismatch.pt", "storage \"archive/data/0\" (torch.FloatStorage) should hold 1000 "
                            "elements of 4 bytes, the entry has 16 bytes"},
      {"missing_storage.pt", "its storage entry \"archive/data/7\" is absent"},
      {"not_a_dict.pt", "archive/data.pkl holds a list, expected a dict of tensors"},
      {"no_data_pkl.pt", "no <name>/data.pkl entry: not a torch.save checkpoint"},
      {"deep_nesting.pt", "holds a tuple, expected a dict"},
      {"memo_missing.pt", "BINGET of memo key 5, never stored"},
      {"bad_utf8_key.pt", "archive/data.pkl: byte 3: BINUNICODE holds invalid UTF-8"},
      {"stack_underflow.pt", "TUPLE2 on an empty stack"},
  };
  for (const auto& [name, message] : cases) {
    SCOPED_TRACE(name);
    const std::string what = error_of(read_bytes(kDir + "malformed/" + name));
    EXPECT_THAT(what, HasSubstr(message));
    EXPECT_THAT(what, ::testing::StartsWith("read_pytorch: bytes: "));
  }
  // The file's path names it in load_pytorch's errors.
  EXPECT_THROW(
      {
        try {
          (void)load_pytorch(kDir + "malformed/deflated.pt");
        } catch (const FormatError& e) {
          EXPECT_THAT(e.what(), HasSubstr("read_pytorch: \"" + kDir + "malformed/deflated.pt\": "));
          throw;
        }
      },
      FormatError);
  EXPECT_THROW((void)load_pytorch(kDir + "no_such_file.pt"), IoError);
}

TEST(ReadPytorch, OsSystemIsRefusedAndNothingRuns) {
  const char* marker = "/tmp/kiln_pytorch_os_system_ran";
  std::filesystem::remove(marker);
  const std::string what = error_of(read_bytes(kDir + "malformed/os_system.pt"));
  EXPECT_THAT(what, HasSubstr("global \"os.system\" is not allowed: Kiln reads tensors only and "
                              "runs nothing from the file"));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// ---------------------------------------------------------------- zip corruption

std::uint64_t find_last(const Bytes& b, std::uint32_t sig) {
  for (std::size_t i = b.size() - 4; i-- > 0;) {
    std::uint32_t v;
    std::memcpy(&v, &b[i], 4);
    if (v == sig) return i;
  }
  ADD_FAILURE() << "signature not found";
  return 0;
}
void put32(Bytes& b, std::uint64_t at, std::uint32_t v) { std::memcpy(&b[at], &v, 4); }

TEST(ReadPytorch, EveryTruncationIsAFormatError) {
  const Bytes good = read_bytes(kDir + "mlp.pt");
  for (std::size_t n = 0; n < good.size(); ++n) {
    SCOPED_TRACE(n);
    const Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW((void)read_pytorch(cut, "bytes"), FormatError);
  }
  EXPECT_EQ(read_pytorch(good, "bytes").tensors.size(), 4u);
}

TEST(ReadPytorch, CorruptCentralDirectoryAndSizesBeyondTheBytes) {
  const Bytes good = read_bytes(kDir + "mlp.pt");
  const std::uint64_t cd = find_last(good, 0x02014b50) ;  // the last central header
  const std::uint64_t first_cd = [&] {
    for (std::size_t i = 0; i + 4 <= good.size(); ++i) {
      std::uint32_t v;
      std::memcpy(&v, &good[i], 4);
      if (v == 0x02014b50) return static_cast<std::uint64_t>(i);
    }
    return std::uint64_t{0};
  }();
  ASSERT_GT(first_cd, 0u);
  {  // a central header's signature broken
    Bytes b = good;
    b[first_cd] = 'X';
    EXPECT_THAT(error_of(b), HasSubstr("central directory entry 0 at byte " + std::to_string(first_cd) +
                                       " is not a central directory header"));
  }
  {  // an entry's size far beyond the file (stored: both sizes)
    Bytes b = good;
    put32(b, first_cd + 20, 0x7fffffff);
    put32(b, first_cd + 24, 0x7fffffff);
    EXPECT_THAT(error_of(b), HasSubstr("entry \"mlp/data.pkl\": 2147483647 bytes at byte"));
  }
  {  // the sizes disagree
    Bytes b = good;
    put32(b, first_cd + 24, 1);
    EXPECT_THAT(error_of(b), HasSubstr("is stored but its sizes differ"));
  }
  {  // a local header offset past the entries
    Bytes b = good;
    put32(b, cd + 42, 0x00ffffff);
    EXPECT_THAT(error_of(b), HasSubstr(": no local header at byte 16777215"));
  }
  {  // the zip64 end record's entry count huge (the 32-bit field is saturated by miniz? no:
     // it holds the count, so the two disagree)
    Bytes b = good;
    const std::uint64_t z = find_last(good, 0x06064b50);
    std::uint64_t huge = 1ull << 40;
    std::memcpy(&b[z + 32], &huge, 8);
    EXPECT_THAT(error_of(b), HasSubstr("the end of central directory records disagree on the entry count"));
  }
  {  // the end record's directory offset past the end
    Bytes b = good;
    const std::uint64_t end = find_last(good, 0x06054b50);
    const std::uint64_t z = find_last(good, 0x06064b50);
    put32(b, end + 16, 0xfffffffe);
    std::uint64_t far = 0xfffffffe;
    std::memcpy(&b[z + 48], &far, 8);
    EXPECT_THAT(error_of(b), HasSubstr("runs past its end record"));
  }
  {  // a flipped data byte: the CRC-32 catches it; without the check the bytes are read
    Bytes b = good;
    const std::uint64_t data0 = [&] {  // the first byte of "mlp/data/0": after its local name
      const std::string name = "mlp/data/0";
      for (std::size_t i = 0; i + name.size() < b.size(); ++i) {
        if (std::memcmp(&b[i], name.data(), name.size()) == 0) {
          std::uint16_t n, x;
          std::memcpy(&n, &b[i - 4], 2);
          std::memcpy(&x, &b[i - 2], 2);
          return i + n + x;
        }
      }
      return std::size_t{0};
    }();
    ASSERT_GT(data0, 0u);
    b[data0] ^= 0x40;
    EXPECT_THAT(error_of(b), HasSubstr("entry \"mlp/data/0\" fails its CRC-32 check"));
    PytorchReadOptions no_crc;
    no_crc.check_crc32 = false;
    EXPECT_NE(read_pytorch(b, "bytes", no_crc).tensors.at("fc1.weight").bytes,
              read_pytorch(good, "bytes").tensors.at("fc1.weight").bytes);
  }
  // Not a zip at all.
  EXPECT_THAT(error_of(Bytes{'h', 'e', 'l', 'l', 'o'}),
              HasSubstr("not a PyTorch checkpoint: it does not start with a zip local header"));
  EXPECT_THAT(error_of(Bytes{}), HasSubstr("0 bytes, too short for a zip"));
}

TEST(ReadPytorch, LimitsAreExplicitLimitErrors) {
  const Bytes good = read_bytes(kDir + "mlp.pt");
  PytorchLimits few;
  few.max_tensors = 3;
  EXPECT_THAT(error_of<LimitError>(good, PytorchReadOptions{}.with_limits(few)),
              HasSubstr("more than 3 tensors (PytorchLimits::max_tensors)"));
  few = {};
  few.max_entries = 2;
  EXPECT_THAT(error_of<LimitError>(good, PytorchReadOptions{}.with_limits(few)),
              HasSubstr("the zip lists 6 entries, above the limit of 2 (PytorchLimits::max_entries)"));
  few = {};
  few.max_pickle_bytes = 100;
  EXPECT_THAT(error_of<LimitError>(good, PytorchReadOptions{}.with_limits(few)),
              HasSubstr("\"mlp/data.pkl\" has 469 bytes, above the limit of 100"));
  // views.pt's expanded tensor holds 6 elements of a 2-element storage: with no room for
  // expansion (materialised bytes at most the file's), a 1/1000 factor refuses it.
  few = {};
  few.max_expansion = 0;
  EXPECT_THAT(error_of<LimitError>(read_bytes(kDir + "views.pt"), PytorchReadOptions{}.with_limits(few)),
              HasSubstr("(PytorchLimits::max_expansion"));
  few = {};
  few.max_depth = 1;
  EXPECT_THAT(error_of(read_bytes(kDir + "nested.pt"), PytorchReadOptions{}.with_limits(few)),
              HasSubstr("dicts nest more than 1 levels deep at \"model\""));
}

}  // namespace
}  // namespace kiln::record
