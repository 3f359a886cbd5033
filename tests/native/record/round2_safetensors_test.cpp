// The round-2 reference case `safetensors_load_edge_cases` (tests/native/cases/round2.jsonl,
// copied from ../shared/cases; files written by the safetensors reference and checked with
// PyTorch 1.13): scalars, zero-sized tensors with equal offsets, unaligned F32/F16/BF16/I64
// data, keys out of offset order, __metadata__, a header with no tensors. Every expected
// tensor must come out of read_safetensors with its dtype, shape and exact values (the
// case's tolerance is 0). tests/js/io_safetensors.test.mjs runs the same case through
// kiln.io.readSafetensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/record/safetensors.hpp"
#include "support/paths.hpp"

using namespace kiln;
using namespace kiln::record;
using nlohmann::json;
using ::testing::HasSubstr;

namespace {

json round2_case(const std::string& id) {
  // KILN_CASES_FILE is tests/native/cases/cases.jsonl; round2.jsonl sits beside it.
  const auto path = std::filesystem::path(KILN_CASES_FILE).parent_path() / "round2.jsonl";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json c = json::parse(line);
    if (c.at("id") == id) return c;
  }
  throw std::runtime_error("no case " + id);
}

std::vector<std::uint8_t> file_bytes(const json& c, const std::string& file) {
  return c.at("inputs").at("file_" + file).at("data").get<std::vector<std::uint8_t>>();
}

SafetensorsDType stored_dtype(const std::string& name) {
  static const std::map<std::string, SafetensorsDType> m = {
      {"float32", SafetensorsDType::F32}, {"float16", SafetensorsDType::F16},
      {"bfloat16", SafetensorsDType::BF16}, {"int64", SafetensorsDType::I64},
      {"int32", SafetensorsDType::I32},   {"uint8", SafetensorsDType::U8},
      {"bool", SafetensorsDType::Bool}};
  return m.at(name);
}

class SafetensorsRound2 : public ::testing::Test {
 protected:
  json c = round2_case("safetensors_load_edge_cases");
};

}  // namespace

TEST_F(SafetensorsRound2, EveryExpectedTensorLoadsExactly) {
  std::map<std::string, SafetensorsFile> files;
  for (const char* f : {"valid", "empty_header", "only_empty"}) {
    files.emplace(f, read_safetensors(file_bytes(c, f), "bytes"));
  }
  int checked = 0;
  for (const auto& [key, want] : c.at("expected").items()) {
    const auto slash = key.find('/');
    const std::string file = key.substr(0, slash), name = key.substr(slash + 1);
    SCOPED_TRACE(key);
    const SafetensorsFile& got = files.at(file);
    if (name == "num_tensors") {
      EXPECT_EQ(static_cast<std::int64_t>(got.tensors.size()), want.at("data")[0].get<std::int64_t>());
      ++checked;
      continue;
    }
    ASSERT_EQ(got.tensors.count(name), 1u);
    const SafetensorsTensor& t = got.tensors.at(name);
    const std::string dtype = want.at("dtype");
    EXPECT_EQ(t.dtype, stored_dtype(dtype));
    const auto dims = t.shape.dims();
    EXPECT_EQ(std::vector<std::int64_t>(dims.begin(), dims.end()),
              want.at("shape").get<std::vector<std::int64_t>>());
    const json& data = want.at("data");
    if (dtype == "int64") {
      // Exactly, from the bytes: Kiln's int32 cannot hold -1099511627779 (see below).
      ASSERT_EQ(t.bytes.size(), data.size() * 8);
      for (std::size_t i = 0; i < data.size(); ++i) {
        std::int64_t v = 0;
        std::memcpy(&v, t.bytes.data() + 8 * i, 8);
        EXPECT_EQ(v, data[i].get<std::int64_t>());
      }
    } else if (dtype == "bool") {
      const TensorData values = t.to_data(DType::Bool);
      ASSERT_EQ(static_cast<std::size_t>(values.num_elements()), data.size());
      for (std::size_t i = 0; i < data.size(); ++i) {
        EXPECT_EQ(values.value_as_double(i), data[i].get<bool>() ? 1.0 : 0.0);
      }
    } else if (dtype == "uint8") {
      const auto values = t.to_data(DType::I32).to_vec<std::int32_t>();
      ASSERT_EQ(values.size(), data.size());
      for (std::size_t i = 0; i < data.size(); ++i) EXPECT_EQ(values[i], data[i].get<std::int32_t>());
    } else {
      const auto values = t.to_data(DType::F32).to_vec<float>();
      ASSERT_EQ(values.size(), data.size());
      for (std::size_t i = 0; i < data.size(); ++i) {
        EXPECT_EQ(values[i], static_cast<float>(data[i].get<double>())) << "element " << i;
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 11);
  EXPECT_EQ(files.at("valid").metadata,
            (std::map<std::string, std::string>{{"format", "pt"}, {"note", "keys not in offset order"}}));
  EXPECT_TRUE(files.at("empty_header").metadata.empty());
}

TEST_F(SafetensorsRound2, AnI64OutsideInt32IsAValueErrorWhenReadAsInt32) {
  // Kiln's Int is i32: the I64 value -1099511627779 of "i" has no int32 form, so decoding it
  // as i32 is a ValueError naming the element, never a wrapped value.
  const auto file = read_safetensors(file_bytes(c, "valid"), "bytes");
  EXPECT_THAT([&] { (void)file.tensors.at("i").to_data(DType::I32); },
              ::testing::ThrowsMessage<ValueError>(HasSubstr("-1099511627779")));
}

TEST_F(SafetensorsRound2, EveryTruncationOfTheValidFileIsAFormatError) {
  const auto bytes = file_bytes(c, "valid");
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW((void)read_safetensors(cut, "bytes"), FormatError) << n << " bytes";
  }
}
