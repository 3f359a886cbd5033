// Burn's named MessagePack records (kiln/record/named_mpk.hpp): files packed by Python's
// msgpack in Burn's layout (tests/native/record/make_mpk_fixtures.py, values from PyTorch)
// read to the expected tensors; Kiln's writer gives those files' bytes exactly; module
// round trips at full and half precision through NamedMpkRecorder; malformed inputs of
// every kind a clear FormatError or LimitError, every prefix of a file included.
#include "kiln/record/named_mpk.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/paths.hpp"
#include "support/temp_dir.hpp"

namespace kiln::record {
namespace {

using module::Param;
using ::testing::HasSubstr;
using Bytes = std::vector<std::uint8_t>;
using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

const std::string kDir = std::string(KILN_RECORD_TEST_DIR) + "/mpk/";

Bytes read_bytes(const std::string& name) {
  std::ifstream in(kDir + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << kDir + name;
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

Json read_json(const std::string& name) {
  std::ifstream in(kDir + name);
  EXPECT_TRUE(in.good()) << "missing fixture " << kDir + name;
  return Json::parse(in);
}

/// The stored values as doubles (floats exactly, integers of up to 53 bits exactly) or,
/// for I64, as int64 (exact).
std::vector<double> float_values(const SafetensorsTensor& t) {
  const auto data = t.to_data(DType::F32).to_vec<float>();
  return std::vector<double>(data.begin(), data.end());
}
std::vector<std::int64_t> int_values(const SafetensorsTensor& t) {
  std::vector<std::int64_t> out;
  const std::size_t size = safetensors_dtype_size(t.dtype);
  for (std::size_t i = 0; i < t.bytes.size(); i += size) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < size; ++b)
      v |= static_cast<std::uint64_t>(t.bytes[i + b]) << (8 * b);
    if (t.dtype == SafetensorsDType::I32) {
      out.push_back(static_cast<std::int32_t>(static_cast<std::uint32_t>(v)));
    } else {
      out.push_back(static_cast<std::int64_t>(v));
    }
  }
  return out;
}

/// Checks `file` against expected.json's entry for `fixture`.
void expect_matches(const SafetensorsFile& file, const Json& want, const std::string& fixture) {
  SCOPED_TRACE(fixture);
  std::map<std::string, std::string> metadata;
  for (const auto& [k, v] : want["metadata"].items()) metadata[k] = v.get<std::string>();
  EXPECT_EQ(file.metadata, metadata);
  std::set<std::string> keys, want_keys;
  for (const auto& [k, t] : file.tensors) keys.insert(k);
  for (const auto& [k, v] : want["tensors"].items()) want_keys.insert(k);
  EXPECT_EQ(keys, want_keys);
  for (const auto& [key, w] : want["tensors"].items()) {
    SCOPED_TRACE(key);
    const auto it = file.tensors.find(key);
    if (it == file.tensors.end()) continue;
    const SafetensorsTensor& t = it->second;
    EXPECT_EQ(std::string(safetensors_dtype_name(t.dtype)), w["dtype"].get<std::string>());
    EXPECT_EQ(t.shape, Shape(w["shape"].get<std::vector<std::int64_t>>()));
    const std::string dtype = w["dtype"];
    if (dtype == "F32" || dtype == "F16" || dtype == "BF16") {
      const auto got = float_values(t);
      const auto expected = w["values"].get<std::vector<double>>();
      ASSERT_EQ(got.size(), expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], static_cast<double>(static_cast<float>(expected[i]))) << "element " << i;
      }
    } else if (dtype == "BOOL" || dtype == "U8") {
      std::vector<std::int64_t> got(t.bytes.begin(), t.bytes.end());
      EXPECT_EQ(got, w["values"].get<std::vector<std::int64_t>>());
    } else {
      std::vector<std::int64_t> expected;
      for (const auto& v : w["values"]) {
        expected.push_back(v.is_number_unsigned()
                               ? static_cast<std::int64_t>(v.get<std::uint64_t>())
                               : v.get<std::int64_t>());
      }
      EXPECT_EQ(int_values(t), expected);
    }
  }
}

// ---------------------------------------------------------------- files in Burn's layout

TEST(NamedMpk, ReadsBurnRecordsPackedByPython) {
  const Json expected = read_json("expected.json");
  for (const char* name : {"burn_full.mpk", "burn_half.mpk", "burn_dtypes.mpk"}) {
    const Bytes bytes = read_bytes(name);
    expect_matches(read_named_mpk(bytes, "bytes"), expected[name], name);
  }
}

TEST(NamedMpk, LoadNamedMpkNamesThePath) {
  const Json expected = read_json("expected.json");
  expect_matches(load_named_mpk(kDir + "burn_full.mpk"), expected["burn_full.mpk"], "load");
  EXPECT_THAT([] { load_named_mpk(kDir + "no_such.mpk"); },
              ::testing::ThrowsMessage<IoError>(HasSubstr("no_such.mpk")));
  const Bytes bytes = read_bytes("burn_full.mpk");
  test::TempDir dir("named_mpk_load");
  const std::string path = (dir.path() / "cut.mpk").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 100);
  EXPECT_THAT([&] { load_named_mpk(path); },
              ::testing::ThrowsMessage<FormatError>(
                  HasSubstr(str_cat("read_named_mpk: \"", path, "\": truncated"))));
}

/// kiln_layout.json's tensors as a record: F32 from floats, I64 from integers, BOOL bytes.
SafetensorsFile layout_record() {
  SafetensorsFile file;
  const Json layout = read_json("kiln_layout.json");
  for (const auto& [key, e] : layout.items()) {
    const Shape shape(e["shape"].get<std::vector<std::int64_t>>());
    const std::string dtype = e["dtype"];
    if (dtype == "F32") {
      file.tensors[key] = SafetensorsTensor::from_data(
          TensorData(shape, e["values"].get<std::vector<float>>()), SafetensorsDType::F32);
    } else if (dtype == "I64") {
      file.tensors[key] = SafetensorsTensor::from_data(
          TensorData(shape, e["values"].get<std::vector<std::int32_t>>()), SafetensorsDType::I64);
    } else {
      SafetensorsTensor t;
      t.dtype = SafetensorsDType::Bool;
      t.shape = shape;
      for (const auto& v : e["values"]) t.bytes.push_back(v.get<std::uint8_t>());
      file.tensors[key] = t;
    }
  }
  return file;
}

TEST(NamedMpk, WriterGivesBurnsLayoutByteForByte) {
  const SafetensorsFile file = layout_record();
  EXPECT_EQ(write_named_mpk(file, Precision::Full), read_bytes("kiln_layout_full.mpk"));
  EXPECT_EQ(write_named_mpk(file, Precision::Half), read_bytes("kiln_layout_half.mpk"));
  // The layout's other dtypes give the same bytes: I32 / U8 ints, F16 / BF16 floats.
  SafetensorsFile other = file;
  other.tensors["num_batches_tracked"] = SafetensorsTensor::from_data(
      TensorData(Shape{1}, std::vector<std::int32_t>{7}), SafetensorsDType::I32);
  EXPECT_EQ(write_named_mpk(other, Precision::Full), read_bytes("kiln_layout_full.mpk"));
  for (auto& [key, t] : other.tensors) {
    if (t.dtype == SafetensorsDType::F32) {
      t = SafetensorsTensor::from_data(t.to_data(DType::F32), SafetensorsDType::F16);
    }
  }
  EXPECT_EQ(write_named_mpk(other, Precision::Half), read_bytes("kiln_layout_half.mpk"));
}

TEST(NamedMpk, WriteReadRoundTripsAtBothPrecisions) {
  const SafetensorsFile file = layout_record();
  const SafetensorsFile full = read_named_mpk(write_named_mpk(file, Precision::Full), "bytes");
  ASSERT_EQ(full.tensors.size(), file.tensors.size());
  for (const auto& [key, t] : file.tensors) {
    SCOPED_TRACE(key);
    const SafetensorsTensor& back = full.tensors.at(key);
    EXPECT_EQ(back.shape, t.shape);
    if (t.dtype == SafetensorsDType::I64) {
      EXPECT_EQ(back.dtype, SafetensorsDType::I32);  // Burn's FullPrecisionSettings: i32
      EXPECT_EQ(int_values(back), int_values(t));
    } else {
      EXPECT_EQ(back.dtype, t.dtype);
      EXPECT_EQ(back.bytes, t.bytes);
    }
  }
  EXPECT_EQ(full.metadata.at("settings"), "FullPrecisionSettings");
  EXPECT_EQ(full.metadata.at("float"), "f32");

  const SafetensorsFile half = read_named_mpk(write_named_mpk(file, Precision::Half), "bytes");
  const auto& bias = half.tensors.at("fc1.bias");
  EXPECT_EQ(bias.dtype, SafetensorsDType::F16);
  // 0.1 and 1/3 to the nearest f16 (as PyTorch's .half()), 70000 beyond f16's range -> inf.
  EXPECT_THAT(float_values(bias), ::testing::ElementsAre(0.0999755859375, 0.333251953125,
                                                         std::numeric_limits<double>::infinity()));
  EXPECT_EQ(half.tensors.at("num_batches_tracked").dtype, SafetensorsDType::I32);  // from I16
  EXPECT_EQ(int_values(half.tensors.at("num_batches_tracked")), std::vector<std::int64_t>{7});
  EXPECT_EQ(half.metadata.at("int"), "i16");
  // A fixed point: writing what was read gives the same bytes.
  EXPECT_EQ(write_named_mpk(half, Precision::Half), write_named_mpk(file, Precision::Half));
  EXPECT_EQ(write_named_mpk(full, Precision::Full), write_named_mpk(file, Precision::Full));
}

TEST(NamedMpk, EmptyRecordAndScalars) {
  const SafetensorsFile empty = read_named_mpk(write_named_mpk({}), "bytes");
  EXPECT_TRUE(empty.tensors.empty());
  SafetensorsFile file;
  file.tensors["s"] = SafetensorsTensor::from_data(TensorData(Shape{}, std::vector<float>{2.5f}),
                                                   SafetensorsDType::F32);
  file.tensors["z"] = SafetensorsTensor::from_data(TensorData(Shape{3, 0}, std::vector<float>{}),
                                                   SafetensorsDType::F32);
  const SafetensorsFile back = read_named_mpk(write_named_mpk(file), "bytes");
  EXPECT_EQ(back.tensors.at("s").shape, Shape{});
  EXPECT_EQ(float_values(back.tensors.at("s")), std::vector<double>{2.5});
  EXPECT_EQ(back.tensors.at("z").shape, (Shape{3, 0}));
}

TEST(NamedMpk, WriterRefusesKeysAndValuesBurnCannotHold) {
  const auto f32 = [](std::vector<float> v) {
    const auto n = static_cast<std::int64_t>(v.size());
    return SafetensorsTensor::from_data(TensorData(Shape{n}, std::move(v)), SafetensorsDType::F32);
  };
  const auto throws = [](const SafetensorsFile& file, Precision p, const std::string& message) {
    EXPECT_THAT([&] { write_named_mpk(file, p); },
                ::testing::ThrowsMessage<ValueError>(HasSubstr(message)));
  };
  SafetensorsFile file;
  file.tensors[""] = f32({1});
  throws(file, Precision::Full, "write_named_mpk: a tensor has the empty key");
  file.tensors.clear();
  file.tensors["a..b"] = f32({1});
  throws(file, Precision::Full, "\"a..b\" has an empty component");
  file.tensors.clear();
  file.tensors["fc"] = f32({1});
  file.tensors["fc.weight"] = f32({1});
  throws(file, Precision::Full,
         "\"fc\" is a tensor and a module at once (\"fc.weight\" lies under it)");
  file.tensors.clear();
  file.tensors["a.b.c"] = f32({1});
  file.tensors["a.b"] = f32({1});
  throws(file, Precision::Full,
         "\"a.b\" is a tensor and a module at once (\"a.b.c\" lies under it)");
  file.tensors.clear();
  file.tensors["bad\xff"] = f32({1});
  throws(file, Precision::Full, "is not valid UTF-8");
  file.tensors.clear();
  file.tensors["steps"] = SafetensorsTensor::from_data(
      TensorData(Shape{2}, std::vector<std::int32_t>{5, 40000}), SafetensorsDType::I64);
  EXPECT_NO_THROW(write_named_mpk(file, Precision::Full));
  throws(file, Precision::Half,
         "write_named_mpk: \"steps\": Int value 40000 at element 1 does not fit in i16");
  SafetensorsTensor big;
  big.dtype = SafetensorsDType::I64;
  big.shape = Shape{1};
  big.bytes = {0, 0, 0, 0, 1, 0, 0, 0};  // 2^32
  file.tensors["steps"] = big;
  throws(file, Precision::Full,
         "write_named_mpk: \"steps\": I64 value 4294967296 at element 0 does not fit in i32");
  SafetensorsTensor ragged = f32({1, 2});
  ragged.bytes.pop_back();
  file.tensors["steps"] = ragged;
  throws(file, Precision::Full, "\"steps\" holds 7 bytes, but shape [2] of F32 needs 8");
}

// ---------------------------------------------------------------- the recorder

template <Backend B>
struct Dense {
  Param<Tensor<B, 2>> weight;
  std::optional<Param<Tensor<B, 1>>> bias;
  KILN_MODULE(Dense, weight, bias)
};

template <Backend B>
struct Norm {
  Param<Tensor<B, 1>> gamma, beta, running_mean, running_var;
  KILN_MODULE(Norm, gamma, beta, running_mean, running_var)
};

template <Backend B>
struct Block {
  Param<Tensor<B, 1>> weight;
  KILN_MODULE(Block, weight)
};

/// The module burn_full.mpk records (Burn's field names, PyTorch-free).
template <Backend B>
struct BurnLike {
  Dense<B> fc1, fc2;
  Norm<B> norm;
  std::vector<Block<B>> blocks;
  Param<Tensor<B, 1, Int>> steps;
  Param<Tensor<B, 1, Bool>> mask;
  KILN_MODULE(BurnLike, fc1, fc2, norm, blocks, steps, mask)
};

template <Backend B>
BurnLike<B> empty_burn_like() {
  BurnLike<B> m;
  m.fc1.weight = Param<Tensor<B, 2>>(Tensor<B, 2>::zeros(Shape{2, 3}));
  m.fc1.bias = Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{3}));
  m.fc2.weight = Param<Tensor<B, 2>>(Tensor<B, 2>::zeros(Shape{3, 2}));
  for (auto* p : {&m.norm.gamma, &m.norm.beta, &m.norm.running_mean, &m.norm.running_var}) {
    *p = Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{3}));
  }
  m.blocks.resize(2);
  for (auto& b : m.blocks) b.weight = Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{2}));
  m.steps = Param<Tensor<B, 1, Int>>(Tensor<B, 1, Int>::zeros(Shape{1}));
  m.mask = Param<Tensor<B, 1, Bool>>(Tensor<B, 1>::zeros(Shape{4}).equal_elem(1.f));
  return m;
}

TEST(NamedMpkRecorder, LoadsBurnFilesIntoAModuleAtEitherPrecision) {
  const Json expected = read_json("expected.json");
  for (const char* name : {"burn_full.mpk", "burn_half.mpk"}) {
    SCOPED_TRACE(name);
    const auto m = empty_burn_like<Cpu>().load_file(kDir + name, NamedMpkRecorder{}, CpuDevice{});
    const auto& t = expected[name]["tensors"];
    const auto floats = [](const Json& e) {
      std::vector<float> v;
      for (const auto& x : e["values"]) v.push_back(static_cast<float>(x.get<double>()));
      return v;
    };
    EXPECT_EQ(m.fc1.weight.val().to_data().to_vec<float>(), floats(t["fc1.weight"]));
    EXPECT_EQ(m.fc1.bias->val().to_data().to_vec<float>(), floats(t["fc1.bias"]));
    EXPECT_EQ(m.norm.running_var.val().to_data().to_vec<float>(), floats(t["norm.running_var"]));
    EXPECT_EQ(m.blocks[1].weight.val().to_data().to_vec<float>(), floats(t["blocks.1.weight"]));
    EXPECT_EQ(m.steps.val().to_data().to_vec<std::int32_t>(), std::vector<std::int32_t>{12345});
    EXPECT_EQ(m.mask.val().to_data().bytes, (Bytes{1, 0, 1, 1}));
  }
}

TEST(NamedMpkRecorder, ModuleRoundTripsFullExactlyAndHalfRounded) {
  auto m =
      empty_burn_like<Cpu>().load_file(kDir + "burn_full.mpk", NamedMpkRecorder{}, CpuDevice{});
  const Bytes full = NamedMpkRecorder::full().to_bytes(m);
  EXPECT_EQ(full, NamedMpkRecorder{}.to_bytes(m));  // canonical
  const auto back = NamedMpkRecorder{}.from_bytes(empty_burn_like<Cpu>(), full, CpuDevice{});
  EXPECT_EQ(back.fc1.weight.val().to_data().to_vec<float>(),
            m.fc1.weight.val().to_data().to_vec<float>());
  EXPECT_EQ(back.blocks[0].weight.val().to_data().to_vec<float>(),
            m.blocks[0].weight.val().to_data().to_vec<float>());
  EXPECT_EQ(back.mask.val().to_data().bytes, (Bytes{1, 0, 1, 1}));
  // Ids are Kiln's own: loading keeps the module's ParamIds.
  const auto target = empty_burn_like<Cpu>();
  EXPECT_EQ(NamedMpkRecorder{}.from_bytes(target, full, CpuDevice{}).fc1.weight.id(),
            target.fc1.weight.id());

  const Bytes half = NamedMpkRecorder::half().to_bytes(m);
  EXPECT_LT(half.size(), full.size());
  const auto h = NamedMpkRecorder{}.from_bytes(empty_burn_like<Cpu>(), half, CpuDevice{});
  const auto want = read_json("expected.json")["burn_half.mpk"]["tensors"]["fc1.weight"]["values"];
  const auto got = h.fc1.weight.val().to_data().to_vec<float>();
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], want[i].get<double>());  // PyTorch's .half()
  EXPECT_EQ(h.steps.val().to_data().to_vec<std::int32_t>(), std::vector<std::int32_t>{12345});

  // An Int beyond i16 cannot be saved at half precision (Burn's i16), only at full.
  m.steps = Param<Tensor<Cpu, 1, Int>>(Tensor<Cpu, 1, Int>::from_ints({40000}));
  EXPECT_THAT([&] { NamedMpkRecorder::half().to_bytes(m); },
              ::testing::ThrowsMessage<ValueError>(HasSubstr("\"steps\": Int value 40000")));
  EXPECT_NO_THROW(NamedMpkRecorder::full().to_bytes(m));
}

TEST(NamedMpkRecorder, SaveFileAndAFailedLoadChangesNothing) {
  test::TempDir dir("named_mpk_save");
  const std::string path = (dir.path() / "m.mpk").string();
  const auto m =
      empty_burn_like<Cpu>().load_file(kDir + "burn_full.mpk", NamedMpkRecorder{}, CpuDevice{});
  m.save_file(path, NamedMpkRecorder::half());
  const auto back = empty_burn_like<Cpu>().load_file(path, NamedMpkRecorder{}, CpuDevice{});
  EXPECT_EQ(back.steps.val().to_data().to_vec<std::int32_t>(), std::vector<std::int32_t>{12345});
  // A module with other shapes: every problem in one error, naming the file.
  auto other = empty_burn_like<Cpu>();
  other.fc1.weight = Param<Tensor<Cpu, 2>>(Tensor<Cpu, 2>::zeros(Shape{3, 3}));
  other.blocks.resize(1);
  EXPECT_THAT([&] { other.load_file(path, NamedMpkRecorder{}, CpuDevice{}); },
              ::testing::ThrowsMessage<FormatError>(::testing::AllOf(
                  HasSubstr(str_cat("NamedMpkRecorder::load_file: \"", path, "\": 2 problems")),
                  HasSubstr("unexpected \"blocks.1.weight\""),
                  HasSubstr("\"fc1.weight\" has shape [2, 3], module expects [3, 3]"))));
}

// ---------------------------------------------------------------- malformed input

Bytes msgpack_of(const OJson& j) { return OJson::to_msgpack(j); }

OJson bin(std::vector<std::uint8_t> b) { return OJson::binary(std::move(b)); }

OJson meta() {
  return OJson{
      {"float", "f32"}, {"int", "i32"}, {"format", "f"}, {"version", "0.21.0"}, {"settings", "s"}};
}

OJson param(OJson tensor_data) { return OJson{{"id", "abc"}, {"param", std::move(tensor_data)}}; }

OJson f32_data(std::vector<std::uint8_t> bytes, OJson shape, OJson dtype = "F32") {
  return OJson{
      {"bytes", bin(std::move(bytes))}, {"shape", std::move(shape)}, {"dtype", std::move(dtype)}};
}

Bytes record_with(OJson item) {
  return msgpack_of(OJson{{"metadata", meta()}, {"item", std::move(item)}, {"_b", OJson::array()}});
}

void expect_format(const Bytes& bytes, const std::string& message) {
  EXPECT_THAT([&] { read_named_mpk(bytes, "bytes"); },
              ::testing::ThrowsMessage<FormatError>(HasSubstr(message)))
      << "expected: " << message;
}
void expect_limit(const Bytes& bytes, const std::string& message,
                  const NamedMpkLimits& limits = {}) {
  EXPECT_THAT([&] { read_named_mpk(bytes, "bytes", limits); },
              ::testing::ThrowsMessage<LimitError>(HasSubstr(message)))
      << "expected: " << message;
}

TEST(NamedMpkMalformed, TheValidBaseReads) {
  const auto file =
      read_named_mpk(record_with({{"w", param(f32_data({0, 0, 128, 63}, {1}))}}), "bytes");
  EXPECT_EQ(float_values(file.tensors.at("w")), std::vector<double>{1.0});
}

TEST(NamedMpkMalformed, EveryPrefixOfARealFileIsTruncated) {
  for (const char* name : {"burn_full.mpk", "burn_dtypes.mpk"}) {
    const Bytes bytes = read_bytes(name);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      const Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      EXPECT_THROW(read_named_mpk(cut, "bytes"), FormatError) << name << " cut at " << n;
    }
    Bytes cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2));
    expect_format(cut, str_cat("read_named_mpk: bytes: truncated: the ", cut.size(),
                               " bytes end inside a value"));
  }
  expect_format({}, "read_named_mpk: bytes: empty input");
}

TEST(NamedMpkMalformed, MessagePackLevel) {
  Bytes trailing = record_with(OJson::object());
  trailing.push_back(0xc0);
  expect_format(trailing,
                str_cat("1 bytes follow the record (it ends at byte ", trailing.size() - 1, ")"));
  expect_format({0x81, 0xc1}, "invalid MessagePack: byte 1 (0xc1) is not a type marker");
  // An array claiming 2^32 - 1 elements in 5 bytes: refused before anything is built.
  expect_format({0xdd, 0xff, 0xff, 0xff, 0xff},
                "an array declares 4294967295 elements, more than the 5 bytes");
  expect_format({0xdf, 0xff, 0xff, 0xff, 0xff}, "a map declares 4294967295 entries");
  // A str32 / bin32 claiming 4 GiB.
  expect_format({0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a'}, "truncated");
  expect_format({0x81, 0xa1, 'a', 0xc6, 0xff, 0xff, 0xff, 0xff}, "truncated");
  // Deep nesting: a LimitError naming the limit, before the depth is built.
  Bytes deep(10000, 0x91);
  deep.push_back(0xc0);
  expect_limit(deep, "nest more than 64 levels deep, the limit (NamedMpkLimits::max_depth)");
  NamedMpkLimits few;
  few.max_values = 20;
  expect_limit(read_bytes("burn_full.mpk"),
               "more than 20 MessagePack values, the limit (NamedMpkLimits::max_values)", few);
  NamedMpkLimits one;
  one.max_tensors = 1;
  expect_limit(read_bytes("burn_full.mpk"),
               "more than 1 tensors, the limit (NamedMpkLimits::max_tensors)", one);
}

TEST(NamedMpkMalformed, RecordLevel) {
  expect_format(
      msgpack_of(OJson::array()),
      "the record must be a map {metadata, item, _b} (Burn's BurnRecord), got an array of 0");
  expect_format(msgpack_of(OJson{{"item", OJson::object()}}), "the record has no \"metadata\"");
  expect_format(msgpack_of(OJson{{"metadata", meta()}}), "the record has no \"item\"");
  expect_format(msgpack_of(OJson{{"metadata", meta()}, {"item", nullptr}, {"extra", 1}}),
                "the record has the unknown field \"extra\"");
  expect_format(msgpack_of(OJson{{"metadata", meta()}, {"item", nullptr}, {"_b", 1}}),
                "\"_b\" (Burn's PhantomData) must be an empty array, got the integer 1");
  expect_format(msgpack_of(OJson{{"metadata", 3}, {"item", nullptr}}),
                "\"metadata\" must be a map of strings");
  OJson m = meta();
  m["version"] = 21;
  expect_format(msgpack_of(OJson{{"metadata", m}, {"item", nullptr}}),
                "\"metadata\": \"version\" must be a UTF-8 string, got the integer 21");
  m.erase("version");
  expect_format(msgpack_of(OJson{{"metadata", m}, {"item", nullptr}}),
                "\"metadata\" has no \"version\"");
  expect_format(record_with(param(f32_data({0, 0, 128, 63}, {1}))), "the item is a single tensor");
  // Keys: not a string, repeated, holding a dot, not UTF-8 (hand-packed: JSON cannot say it).
  const Bytes head = msgpack_of(OJson{{"metadata", meta()}});
  const auto with_item = [&](Bytes item) {
    Bytes out = head;
    out[0] = 0x82;  // fixmap of 2: metadata, item
    out.insert(out.end(), {0xa4, 'i', 't', 'e', 'm'});
    out.insert(out.end(), item.begin(), item.end());
    return out;
  };
  expect_format(with_item({0x81, 0x01, 0xc0}),
                "the item has a key that is the integer 1; keys must be strings");
  expect_format(with_item({0x82, 0xa1, 'a', 0xc0, 0xa1, 'a', 0xc0}),
                "the item repeats the key \"a\"");
  expect_format(with_item({0x81, 0xa3, 'a', '.', 'b', 0xc0}),
                "the item: the field name \"a.b\" holds a dot");
  expect_format(with_item({0x81, 0xa1, 0xff, 0xc0}), "the item has a key that is not valid UTF-8");
  expect_format(with_item({0x81, 0xa1, 'x', 0xc4, 0x01, 0x00}),
                "\"x\": a bin outside a tensor's \"param\"");
  expect_format(with_item({0x81, 0xa1, 'x', 0xd4, 0x01, 0x00}), "\"x\": an ext value");
}

TEST(NamedMpkMalformed, TensorLevel) {
  const auto at = [](OJson p) { return record_with({{"layer", {{"w", std::move(p)}}}}); };
  const std::string w = "read_named_mpk: bytes: \"layer.w\": ";
  expect_format(at({{"id", "a"}}), w + "a ParamSerde has no \"param\"");
  expect_format(at({{"id", "a"}, {"param", 1}, {"x", 2}}),
                w + "a ParamSerde has the unknown field \"x\" (it has id, param)");
  expect_format(at({{"id", 7}, {"param", 1}}),
                w + "the ParamSerde's id must be a string, got the integer 7");
  expect_format(
      at(param(1)),
      w + "\"param\" must be a map {bytes, shape, dtype} (Burn's TensorData), got the integer 1");
  expect_format(at(param({{"bytes", bin({})}, {"shape", {0}}})),
                w + "the TensorData has no \"dtype\"");
  OJson extra = f32_data({}, {0});
  extra["value"] = 1;
  expect_format(at(param(extra)), w + "the TensorData has the unknown field \"value\"");
  expect_format(at(param(f32_data({}, {0}, "F128"))),
                w + "unknown dtype \"F128\" (Burn's: F64, F32");
  expect_format(at(param(f32_data({}, {0}, 5))),
                w + "dtype must be a string such as \"F32\" (Burn's DType), got the integer 5");
  expect_format(at(param(f32_data({}, {0}, {{"QFloat", {{"level", "Tensor"}}}}))),
                w + "dtype QFloat: quantized tensors are not supported");
  expect_format(at(param(f32_data({}, {0}, {{"Bool", "U4"}}))),
                w + "dtype Bool has the store the string \"U4\"");
  expect_format(at(param(f32_data({}, {0}, {{"F32", "x"}}))),
                w + "dtype is a map with the key \"F32\"; of Burn's DType variants only Bool and "
                    "QFloat hold a value");
  expect_format(at(param(f32_data({}, {-1}))),
                w + "shape must be an array of unsigned integers, got an array of 1");
  expect_format(at(param(f32_data({}, {1.5}))), w + "shape must be an array of unsigned integers");
  expect_format(at(param(f32_data({}, "2"))),
                w + "shape must be an array of unsigned integers, got the string \"2\"");
  expect_format(at(param(f32_data({}, {1, 1, 1, 1, 1, 1, 1, 1, 1}))),
                w + "shape has rank 9, above Kiln's limit of 8");
  expect_format(at(param(f32_data({}, {std::uint64_t{1} << 63}))),
                w + "shape dim 9223372036854775808 is too large");
  expect_format(at(param(f32_data({}, {std::uint64_t{1} << 62, 16}))),
                w + "shape [4611686018427387904, 16] of F32 needs more than 2^64 bytes");
  expect_format(at(param(f32_data({1, 2, 3}, {1}))),
                w + "holds 3 bytes, but shape [1] of F32 needs 4");
  expect_format(at(param(f32_data({0, 0, 0, 0, 0, 0, 0, 0}, {1}))),
                w + "holds 8 bytes, but shape [1] of F32 needs 4");
  OJson as_array = f32_data({}, {0});
  as_array["bytes"] = OJson::array();
  expect_format(at(param(as_array)), w + "\"bytes\" must be a bin, got an array of 0");
  expect_format(at(param(f32_data({0, 2}, {2}, "Bool"))),
                w + "Bool value 2 at element 1 is neither 0 nor 1");
  expect_format(at(param(f32_data({0, 0, 0, 0, 0, 0, 0, 0x80}, {1}, "U64"))),
                w + "U64 value 9223372036854775808 at element 0 does not fit in I64");
}

}  // namespace
}  // namespace kiln::record
