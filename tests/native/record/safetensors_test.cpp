// SafeTensors format: canonical bytes (hand-written goldens and the reference
// implementation's own test vectors), round trips, half/bfloat16 conversions and every
// malformed-file case of the strict reader.
#include "kiln/record/safetensors.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>


#include "kiln/kiln.hpp"
#include "support/temp_dir.hpp"

namespace kiln::record {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using Bytes = std::vector<std::uint8_t>;

Bytes le64(std::uint64_t v) {
  Bytes out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
  return out;
}

/// a followed by b (resize + copy: GCC 12 warns falsely on vector::insert here).
Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes out(a.size() + b.size());
  std::copy(a.begin(), a.end(), out.begin());
  std::copy(b.begin(), b.end(), out.begin() + static_cast<std::ptrdiff_t>(a.size()));
  return out;
}

/// length prefix + header text + data, the length being the text's size.
Bytes make_file(const std::string& header, const Bytes& data = {}) {
  return concat(concat(le64(header.size()), Bytes(header.begin(), header.end())), data);
}

Bytes f32_bytes(std::initializer_list<float> values) {
  Bytes out;
  for (float v : values) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
  }
  return out;
}

SafetensorsFile read(const Bytes& bytes, const SafetensorsLimits& limits = {}) {
  return read_safetensors(bytes, "bytes", limits);
}

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---------------------------------------------------------------- canonical bytes

TEST(SafetensorsWrite, MatchesTheReferenceImplementationsTestVectors) {
  // huggingface/safetensors safetensors/src/tensor.rs, test_serialization_forced_alignement:
  // "attn0" F32 [1, 1, 2, 3] = 0..5 gives a 65-byte header padded with 7 spaces to 72.
  SafetensorsFile file;
  file.tensors["attn0"] = SafetensorsTensor::from_data(
      TensorData(Shape{1, 1, 2, 3}, std::vector<float>{0, 1, 2, 3, 4, 5}), SafetensorsDType::F32);
  const std::string header = R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})"
                             "       ";
  ASSERT_EQ(header.size(), 72u);
  EXPECT_EQ(write_safetensors(file), make_file(header, f32_bytes({0, 1, 2, 3, 4, 5})));

  // test_empty: no tensors, then only {"framework": "pt"} as metadata.
  EXPECT_EQ(write_safetensors({}),
            (Bytes{8, 0, 0, 0, 0, 0, 0, 0, '{', '}', 32, 32, 32, 32, 32, 32}));
  SafetensorsFile meta;
  meta.metadata["framework"] = "pt";
  EXPECT_EQ(write_safetensors(meta), make_file(R"({"__metadata__":{"framework":"pt"}})"
                                               "     "));
}

TEST(SafetensorsWrite, OrdersByDescendingAlignmentThenKeyWithMetadataFirst) {
  // Written by hand: I64 first (8-byte aligned at offset 0), then the F32 tensors by key
  // ("a" < "b"), then BOOL; the 249-byte header is padded with 7 spaces to 256.
  SafetensorsFile file;
  file.metadata["format"] = "pt";
  file.tensors["b"] =
      SafetensorsTensor::from_data(TensorData::from({1.f, -2.f}), SafetensorsDType::F32);
  file.tensors["a"] = SafetensorsTensor::from_data(TensorData::from({0.5f}), SafetensorsDType::F32);
  file.tensors["n"] = SafetensorsTensor::from_data(
      TensorData(Shape{}, std::vector<std::int32_t>{7}), SafetensorsDType::I64);
  file.tensors["m"] =
      SafetensorsTensor::from_data(TensorData::from({true, false}), SafetensorsDType::Bool);
  const std::string header = R"({"__metadata__":{"format":"pt"},)"
                             R"("n":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
                             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]},)"
                             R"("m":{"dtype":"BOOL","shape":[2],"data_offsets":[20,22]}})"
                             "       ";
  ASSERT_EQ(header.size(), 256u);
  // clang-format off
  const Bytes data = {7, 0, 0, 0, 0, 0, 0, 0,        // n = 7 (i64)
                      0, 0, 0, 0x3f,                 // a = 0.5
                      0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0,  // b = 1, -2
                      1, 0};                         // m = true, false
  // clang-format on
  const Bytes bytes = write_safetensors(file);
  EXPECT_EQ(bytes, make_file(header, data));

  const SafetensorsFile back = read(bytes);
  EXPECT_EQ(back.metadata, file.metadata);
  ASSERT_EQ(back.tensors.size(), 4u);
  for (const auto& [key, t] : file.tensors) {
    EXPECT_EQ(back.tensors.at(key).dtype, t.dtype) << key;
    EXPECT_EQ(back.tensors.at(key).shape, t.shape) << key;
    EXPECT_EQ(back.tensors.at(key).bytes, t.bytes) << key;
  }
  EXPECT_EQ(write_safetensors(back), bytes);  // canonical: a fixed point
}

TEST(SafetensorsWrite, RejectsInconsistentTensorsAndTheReservedKey) {
  SafetensorsFile file;
  file.tensors["x"] = SafetensorsTensor{SafetensorsDType::F32, Shape{2}, Bytes(7)};
  EXPECT_THAT(
      [&] { write_safetensors(file); },
      ThrowsMessage<ValueError>(HasSubstr("\"x\" holds 7 bytes, but shape [2] of F32 needs 8")));
  SafetensorsFile reserved;
  reserved.tensors["__metadata__"] = SafetensorsTensor{SafetensorsDType::U8, Shape{0}, {}};
  EXPECT_THROW(write_safetensors(reserved), ValueError);
}

TEST(SafetensorsFileIo, SaveAndLoadNameTheFile) {
  const auto path = test::temp_path("safetensors_file_io.safetensors").string();
  SafetensorsFile file;
  file.tensors["w"] =
      SafetensorsTensor::from_data(TensorData::from({1.f, 2.f}), SafetensorsDType::F32);
  save_safetensors(file, path);
  EXPECT_EQ(load_safetensors(path).tensors.at("w").to_data(DType::F32).to_vec<float>(),
            (std::vector<float>{1.f, 2.f}));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "short";
  }
  EXPECT_THAT([&] { load_safetensors(path); },
              ThrowsMessage<FormatError>(
                  HasSubstr("read_safetensors: \"" + path +
                            "\": 5 bytes is too short for the 8-byte header length")));
  std::filesystem::remove(path);
  EXPECT_THROW(load_safetensors(path), IoError);
}

// ---------------------------------------------------------------- element conversions

TEST(HalfPrecision, RoundsToNearestEvenByHand) {
  EXPECT_EQ(f32_to_f16_bits(1.f), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(-2.f), 0xc000);
  EXPECT_EQ(f32_to_f16_bits(0.f), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-0.f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(0.1f), 0x2e66);  // 0.0999755859375, the nearest half
  // 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10: to 1; 1 + 3·2^-11 is halfway
  // between 1 + 2^-10 (odd) and 1 + 2^-9: up; just above halfway: up.
  EXPECT_EQ(f32_to_f16_bits(1.f + std::ldexp(1.f, -11)), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(1.f + 3 * std::ldexp(1.f, -11)), 0x3c02);
  EXPECT_EQ(f32_to_f16_bits(1.f + std::ldexp(1.f, -11) + std::ldexp(1.f, -20)), 0x3c01);
  // 2047.5 is halfway between 2047 (odd) and 2048: the carry moves into the exponent.
  EXPECT_EQ(f32_to_f16_bits(2047.5f), 0x6800);
  // Largest half 65504; 65519 rounds down to it, 65520 (halfway to 2^16) to inf.
  EXPECT_EQ(f32_to_f16_bits(65504.f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65519.f), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65520.f), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(-1e10f), 0xfc00);
  // Smallest normal 2^-14, subnormals down to 2^-24; 2^-25 is a tie between 0 (even) and
  // 2^-24; 1.5·2^-25 is above it; 3·2^-25 ties between 1 and 2 units: 2.
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.f, -14)), 0x0400);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.f, -14) - std::ldexp(1.f, -24)), 0x03ff);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.f, -25)), 0x0000);
  EXPECT_EQ(f32_to_f16_bits(-std::ldexp(1.f, -25)), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(1.5f * std::ldexp(1.f, -25)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(3 * std::ldexp(1.f, -25)), 0x0002);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  // Infinities and nan (quiet, sign kept, as PyTorch's .half()).
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(f32_to_f16_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(f32_to_f16_bits(from_bits(0xffc00000u)), 0xfe00);
  EXPECT_EQ(f32_to_f16_bits(from_bits(0x7f800001u)), 0x7e00);  // signalling nan stays nan
}

TEST(HalfPrecision, DecodesEveryKindOfValueByHand) {
  EXPECT_EQ(f16_bits_to_f32(0x3c00), 1.f);
  EXPECT_EQ(f16_bits_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f16_bits_to_f32(0x7bff), 65504.f);
  EXPECT_EQ(f16_bits_to_f32(0x0001), std::ldexp(1.f, -24));
  EXPECT_EQ(f16_bits_to_f32(0x03ff), 1023 * std::ldexp(1.f, -24));
  EXPECT_EQ(f16_bits_to_f32(0x0400), std::ldexp(1.f, -14));
  EXPECT_EQ(bits(f16_bits_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(f16_bits_to_f32(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(f16_bits_to_f32(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(0x7e00)));
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(0xfc01)));
}

TEST(HalfPrecision, EveryHalfRoundTripsThroughF32) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    const float f = f16_bits_to_f32(half);
    if (std::isnan(f)) continue;
    ASSERT_EQ(f32_to_f16_bits(f), half) << std::hex << h;
  }
}

#if defined(__FLT16_MAX__) && !defined(__EMSCRIPTEN__)
TEST(HalfPrecision, MatchesTheCompilersFloat16Conversion) {
  // GCC's _Float16 conversion (libgcc's __truncsfhf2, or F16C) rounds to nearest even:
  // an independent implementation, compared on random f32 bit patterns around half's range.
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::uint32_t> exponent(90, 150), mantissa(0, 0x7fffff), sign(0, 1);
  for (int i = 0; i < 1'000'000; ++i) {
    const std::uint32_t u = sign(rng) << 31 | exponent(rng) << 23 | mantissa(rng);
    const float f = from_bits(u);
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t expected;
    std::memcpy(&expected, &h, 2);
    ASSERT_EQ(f32_to_f16_bits(f), expected) << "f32 bits 0x" << std::hex << u;
  }
}
#endif

TEST(BFloat16, RoundsToNearestEvenAndDecodesExactly) {
  EXPECT_EQ(f32_to_bf16_bits(1.f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(1.f + std::ldexp(1.f, -8)), 0x3f80);      // tie to even
  EXPECT_EQ(f32_to_bf16_bits(1.f + 3 * std::ldexp(1.f, -8)), 0x3f82);  // tie, odd: up
  EXPECT_EQ(f32_to_bf16_bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf
  EXPECT_TRUE(
      std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bf16_bits_to_f32(0x3f80), 1.f);
  EXPECT_EQ(bf16_bits_to_f32(0xc0a0), -5.f);
  EXPECT_EQ(bf16_bits_to_f32(0x0001), from_bits(0x00010000u));  // subnormal
}

TEST(SafetensorsTensor, DecodesStoredDTypesIntoHostData) {
  // BF16 [-5, 1] and F16 [0.5, -65504] written by hand.
  const SafetensorsTensor bf16{SafetensorsDType::BF16, Shape{2}, {0xa0, 0xc0, 0x80, 0x3f}};
  EXPECT_EQ(bf16.to_data(DType::F32).to_vec<float>(), (std::vector<float>{-5.f, 1.f}));
  const SafetensorsTensor f16{SafetensorsDType::F16, Shape{2}, {0x00, 0x38, 0xff, 0xfb}};
  EXPECT_EQ(f16.to_data(DType::F32).to_vec<float>(), (std::vector<float>{0.5f, -65504.f}));
  // I64 -3 and 2^31 - 1; I32 -1; U8 200.
  const SafetensorsTensor i64{SafetensorsDType::I64, Shape{2},
                              concat(le64(static_cast<std::uint64_t>(-3)), le64(2147483647))};
  EXPECT_EQ(i64.to_data(DType::I32).to_vec<std::int32_t>(),
            (std::vector<std::int32_t>{-3, 2147483647}));
  const SafetensorsTensor i32{SafetensorsDType::I32, Shape{1}, {0xff, 0xff, 0xff, 0xff}};
  EXPECT_EQ(i32.to_data(DType::I32).to_vec<std::int32_t>(), (std::vector<std::int32_t>{-1}));
  const SafetensorsTensor u8{SafetensorsDType::U8, Shape{2}, {200, 0}};
  EXPECT_EQ(u8.to_data(DType::I32).to_vec<std::int32_t>(), (std::vector<std::int32_t>{200, 0}));
  EXPECT_EQ(u8.to_data(DType::Bool), TensorData::from({true, false}));
  const SafetensorsTensor mask{SafetensorsDType::Bool, Shape{2, 1}, {1, 0}};
  EXPECT_EQ(mask.to_data(DType::Bool), TensorData(Shape{2, 1}, std::vector<bool>{true, false}));
}

TEST(SafetensorsTensor, RejectsValuesThatDoNotFitAndWrongPairs) {
  const SafetensorsTensor big{SafetensorsDType::I64, Shape{1}, le64(3'000'000'000)};
  EXPECT_THAT([&] { big.to_data(DType::I32); },
              ThrowsMessage<ValueError>(
                  HasSubstr("I64 value 3000000000 at element 0 does not fit in i32")));
  const SafetensorsTensor low{SafetensorsDType::I64, Shape{1},
                              le64(static_cast<std::uint64_t>(-2147483649LL))};
  EXPECT_THROW(low.to_data(DType::I32), ValueError);
  const SafetensorsTensor bad_bool{SafetensorsDType::Bool, Shape{2}, {0, 2}};
  EXPECT_THAT([&] { bad_bool.to_data(DType::Bool); },
              ThrowsMessage<ValueError>(HasSubstr("BOOL byte 2 at element 1 is neither 0 nor 1")));
  const SafetensorsTensor f32{SafetensorsDType::F32, Shape{1}, f32_bytes({1.f})};
  EXPECT_THROW(f32.to_data(DType::I32), DTypeError);
  EXPECT_THROW(SafetensorsTensor::from_data(TensorData::from({1.f}), SafetensorsDType::I64),
               DTypeError);
  EXPECT_THROW(SafetensorsTensor::from_data(TensorData::from({1}), SafetensorsDType::F32),
               DTypeError);
}

TEST(SafetensorsTensor, EncodesIntegersLittleEndianTwosComplement) {
  const auto t = SafetensorsTensor::from_data(TensorData::from({-2, 258}), SafetensorsDType::I64);
  EXPECT_EQ(t.bytes, (Bytes{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,  //
                            0x02, 0x01, 0, 0, 0, 0, 0, 0}));
  const auto h = SafetensorsTensor::from_data(TensorData::from({1.f, 0.1f}), SafetensorsDType::F16);
  EXPECT_EQ(h.bytes, (Bytes{0x00, 0x3c, 0x66, 0x2e}));
}

// ---------------------------------------------------------------- reading valid files

TEST(SafetensorsRead, AcceptsScalarsEmptyTensorsAndWhitespace) {
  const std::string header = R"(  {"e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [4, 4]},)"
                             R"( "s": {"dtype": "F32", "shape": [], "data_offsets": [0, 4]}}   )";
  const SafetensorsFile file = read(make_file(header, f32_bytes({2.5f})));
  EXPECT_EQ(file.tensors.at("e").shape, (Shape{0, 3}));
  EXPECT_TRUE(file.tensors.at("e").bytes.empty());
  EXPECT_EQ(file.tensors.at("s").shape.rank(), 0u);
  EXPECT_EQ(file.tensors.at("s").to_data(DType::F32).to_vec<float>(), std::vector<float>{2.5f});
  EXPECT_TRUE(read(make_file("{}")).tensors.empty());
}

// ---------------------------------------------------------------- malformed files

void expect_format_error(const Bytes& bytes, const std::string& message,
                         const SafetensorsLimits& limits = {}) {
  EXPECT_THAT([&] { read(bytes, limits); },
              ThrowsMessage<FormatError>(::testing::AllOf(
                  ::testing::StartsWith("read_safetensors: bytes: "), HasSubstr(message))));
}

const std::string kOne = R"("dtype":"F32","shape":[1],"data_offsets":[0,4])";

TEST(SafetensorsMalformed, TooShortForTheLength) {
  expect_format_error({}, "0 bytes is too short for the 8-byte header length");
  expect_format_error({8, 0, 0, 0, 0}, "5 bytes is too short");
}

TEST(SafetensorsMalformed, HeaderLengthBeyondTheFile) {
  const Bytes bytes = concat(le64(100), {'{', '}'});
  expect_format_error(bytes,
                      "header length 100 runs past the end (2 bytes follow the length field)");
  // A length near 2^64 must neither overflow nor allocate.
  expect_format_error(le64(~0ull), "header length 18446744073709551615 runs past the end (0 bytes");
}

TEST(SafetensorsMalformed, HeaderLengthAboveTheLimit) {
  const Bytes bytes = make_file("{}                      ");  // 24 bytes
  expect_format_error(bytes, "header length 24 exceeds the limit of 16 bytes", {16});
  EXPECT_NO_THROW(read(bytes, {24}));
}

TEST(SafetensorsMalformed, BadJsonAndNotAnObject) {
  expect_format_error(make_file(R"({"a": )"), "the header is not valid JSON: parse error");
  expect_format_error(make_file("{\"\xff\": 1}"), "the header is not valid JSON");  // not UTF-8
  expect_format_error(make_file("[1, 2]"), "the header must be a JSON object, got the array [1,2]");
  expect_format_error(
      make_file(R"({"a": 3})"),
      "\"a\": expected an object with dtype, shape and data_offsets, got the number 3");
}

TEST(SafetensorsMalformed, DuplicateKeys) {
  expect_format_error(make_file("{\"a\":{" + kOne + "},\"a\":{" + kOne + "}}", f32_bytes({1})),
                      "the header repeats the key \"a\"");
  expect_format_error(
      make_file(R"({"a":{"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                f32_bytes({1})),
      "\"a\": repeats the field \"dtype\"");
}

TEST(SafetensorsMalformed, MissingUnknownOrUnsupportedDType) {
  expect_format_error(make_file(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})),
                      "\"w\": missing \"dtype\"");
  expect_format_error(
      make_file(R"({"w":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})),
      "\"w\": dtype must be a string, got the number 32");
  expect_format_error(
      make_file(R"({"w":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}})", f32_bytes({1})),
      "\"w\": unknown dtype \"F33\"");
  expect_format_error(
      make_file(R"({"w":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})", le64(0)),
      "\"w\": dtype F64 is not supported by Kiln");
}

TEST(SafetensorsMalformed, ShapeNotAnArrayOfNonNegativeIntegers) {
  const auto with_shape = [](const std::string& shape) {
    return make_file(R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":[0,4]}})",
                     f32_bytes({1}));
  };
  expect_format_error(make_file(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", f32_bytes({1})),
                      "\"w\": missing \"shape\"");
  expect_format_error(with_shape("1"),
                      "\"w\": shape must be an array of non-negative integers, got the number 1");
  expect_format_error(with_shape("[1, -1]"),
                      "shape must be an array of non-negative integers, got the array [1,-1]");
  expect_format_error(with_shape("[1.5]"), "shape must be an array of non-negative integers");
  expect_format_error(with_shape("[\"1\"]"), "shape must be an array of non-negative integers");
  expect_format_error(with_shape("[1,1,1,1,1,1,1,1,1]"),
                      "\"w\": shape [1,1,1,1,1,1,1,1,1] has rank 9, above Kiln's limit of 8");
  expect_format_error(with_shape("[9223372036854775808]"), "dim 9223372036854775808 is too large");
}

TEST(SafetensorsMalformed, DataOffsetsMalformedOrOutOfRange) {
  const auto with_offsets = [](const std::string& offsets) {
    return make_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":)" + offsets + "}}",
                     f32_bytes({1}));
  };
  expect_format_error(make_file(R"({"w":{"dtype":"F32","shape":[1]}})", f32_bytes({1})),
                      "\"w\": missing \"data_offsets\"");
  expect_format_error(
      with_offsets("[0]"),
      "\"w\": data_offsets must be [begin, end], two non-negative integers, got the array [0]");
  expect_format_error(with_offsets("[-4, 0]"), "data_offsets must be [begin, end]");
  expect_format_error(with_offsets("{\"begin\": 0}"), "data_offsets must be [begin, end]");
  expect_format_error(with_offsets("[4, 0]"), "\"w\": data_offsets [4, 0]: end is before begin");
  expect_format_error(with_offsets("[0, 8]"),
                      "\"w\": data_offsets [0, 8] run past the data section (4 bytes)");
  expect_format_error(with_offsets("[0, 18446744073709551615]"), "run past the data section");
}

TEST(SafetensorsMalformed, ByteCountNotMatchingShapeTimesDTypeSize) {
  expect_format_error(
      make_file(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", Bytes(20)),
      "\"w\": data_offsets [0, 20] hold 20 bytes, but shape [2, 3] of F32 needs 24");
  // 2^62 · 8 elements · 4 bytes overflows 64 bits: caught before any multiplication wraps.
  expect_format_error(
      make_file(R"({"w":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,4]}})",
                f32_bytes({1})),
      "\"w\": shape [4611686018427387904, 8] of F32 needs more than 2^64 bytes");
  // 2^62 · 4 bytes wraps to 0 in 64 bits: must not pass as an empty tensor.
  expect_format_error(
      make_file(R"({"w":{"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]}})"),
      "needs more than 2^64 bytes");
}

TEST(SafetensorsMalformed, OverlappingTensors) {
  expect_format_error(make_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                Bytes(12)),
                      "\"b\": data_offsets [4, 12] overlap \"a\" [0, 8]");
  // The same bytes claimed twice.
  expect_format_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
                                Bytes(4)),
                      "\"b\": data_offsets [0, 4] overlap \"a\" [0, 4]");
}

TEST(SafetensorsMalformed, HolesInTheDataSection) {
  expect_format_error(make_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                Bytes(12)),
                      "bytes [4, 8) of the data section belong to no tensor (before \"b\"); the "
                      "format forbids holes");
  expect_format_error(
      make_file(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", Bytes(8)),
      "bytes [0, 4) of the data section belong to no tensor (before \"b\")");
  expect_format_error(make_file("{\"a\":{" + kOne + "}}", Bytes(6)),
                      "bytes [4, 6) of the data section belong to no tensor (after the last one)");
  expect_format_error(make_file("{}", Bytes(3)),
                      "bytes [0, 3) of the data section belong to no tensor");
}

TEST(SafetensorsMalformed, EntriesWithUnknownFieldsAndBadMetadata) {
  expect_format_error(
      make_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"offsets":[0,4]}})",
                f32_bytes({1})),
      "\"w\": unknown field \"offsets\" (an entry has dtype, shape and data_offsets)");
  expect_format_error(make_file(R"({"__metadata__":["pt"]})"),
                      "\"__metadata__\": must be an object of strings, got the array [\"pt\"]");
  expect_format_error(make_file(R"({"__metadata__":{"epoch":3}})"),
                      "\"__metadata__\": must be an object of strings: \"epoch\" is the number 3");
}

// ---------------------------------------------------------------- header bounds

/// A header of `n` F32 scalars-of-one "t<i>" (offsets in key order) and its data.
Bytes many_tensors(std::size_t n, const std::string& metadata = "") {
  std::string header = "{" + metadata;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 || !metadata.empty()) header += ',';
    header += "\"t" + std::to_string(i) + "\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
              std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  }
  header += "}";
  return make_file(header, Bytes(4 * n));
}

TEST(SafetensorsBounds, DeepNestingIsRejectedAsItIsRead) {
  // 100,000 levels used to crash natively (recursion while describing the value) and throw a
  // RangeError in JS. Each is rejected at the 9th level, closed or not.
  const std::string deep = "the header nests arrays and objects more than 8 levels deep";
  expect_format_error(make_file(R"({"__metadata__":)" + std::string(100000, '[') +
                                std::string(100000, ']') + "}"),
                      deep);
  expect_format_error(make_file(std::string(100000, '[')), deep);
  std::string objects;
  for (int i = 0; i < 50000; ++i) objects += "{\"a\":";
  expect_format_error(make_file(objects), deep);
  // Inside an entry: nine levels rejected, eight still get the precise message.
  expect_format_error(make_file(R"({"w":{"dtype":[[[[[[[1]]]]]]],"shape":[1],"data_offsets":[0,4]}})",
                                f32_bytes({1})),
                      deep);
  expect_format_error(make_file(R"({"w":{"dtype":[[[[[[1]]]]]],"shape":[1],"data_offsets":[0,4]}})",
                                f32_bytes({1})),
                      "\"w\": dtype must be a string, got the array [[[[[[1]]]]]]");
}

TEST(SafetensorsBounds, NulPaddingAndByteOrderMarkAreRejected) {
  // NUL is not JSON whitespace: the reference reader rejects a NUL-padded header.
  std::string padded = "{}";
  padded.append(6, '\0');
  expect_format_error(make_file(padded),
                      "the header is padded with NUL bytes from byte 2 of 8; NUL is not JSON "
                      "whitespace (pad the header with spaces)");
  std::string hidden = "{}";
  hidden += '\0';
  hidden += R"({"w":1})";
  expect_format_error(make_file(hidden), "the header holds a NUL byte at byte 2 of 10");
  std::string in_key = "{\"w";
  in_key += '\0';
  in_key += "\":{" + kOne + "}}";
  expect_format_error(make_file(in_key, f32_bytes({1})), "the header holds a NUL byte at byte 3");
  expect_format_error(make_file("\xEF\xBB\xBF{}"),
                      "the header starts with a UTF-8 byte-order mark, which JSON does not allow");
  // Space padding (the writer's) and leading whitespace stay valid.
  EXPECT_NO_THROW(read(make_file("{}      ")));
  EXPECT_NO_THROW(read(make_file(" \t\r\n{}")));
}

TEST(SafetensorsBounds, DuplicateKeysAnywhere) {
  expect_format_error(make_file(R"({"__metadata__":{},"__metadata__":{}})"),
                      "the header repeats the key \"__metadata__\"");
  expect_format_error(make_file(R"({"__metadata__":{"k":"a","k":"b"}})"),
                      "\"__metadata__\": repeats the field \"k\"");
  // A repeat far from the first occurrence, among many keys.
  std::string header = "{";
  for (int i = 0; i < 1000; ++i) header += "\"t" + std::to_string(i) + "\":0,";
  header += "\"t7\":0}";
  expect_format_error(make_file(header), "the header repeats the key \"t7\"");
}

TEST(SafetensorsBounds, TensorCountIsCapped) {
  const auto expect_limit = [](const Bytes& bytes, std::uint64_t cap) {
    SafetensorsLimits limits;
    limits.max_tensors = cap;
    EXPECT_THAT([&] { read(bytes, limits); },
                ThrowsMessage<LimitError>(HasSubstr(
                    "read_safetensors: bytes: the header lists more than " + std::to_string(cap) +
                    " tensors, the limit (SafetensorsLimits::max_tensors)")));
  };
  expect_limit(many_tensors(3), 2);
  expect_limit(many_tensors(3, R"("__metadata__":{"a":"b"})"), 2);
  SafetensorsLimits two;
  two.max_tensors = 2;
  EXPECT_EQ(read(many_tensors(2), two).tensors.size(), 2u);
  // "__metadata__" is not a tensor, first or last.
  EXPECT_EQ(read(many_tensors(2, R"("__metadata__":{"a":"b"})"), two).tensors.size(), 2u);
  std::string last = R"({"a":{)" + kOne + R"(},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                     R"("__metadata__":{}})";
  EXPECT_EQ(read(make_file(last, Bytes(8)), two).tensors.size(), 2u);
  // The default cap: 100,000.
  expect_limit(many_tensors(100001), 100000);
}

TEST(SafetensorsBounds, HeaderLimitNamesTheCap) {
  expect_format_error(make_file("{}                      "),
                      "header length 24 exceeds the limit of 16 bytes "
                      "(SafetensorsLimits::max_header_bytes)",
                      {16});
}

TEST(SafetensorsBounds, CostGrowsAsNLogNWithTheTensorCount) {
  // 40,000 tensors took 43 s natively (the parse callback rescanned the whole top-level
  // object after each entry). Work counted per JSON value, entry and sort comparison: from
  // 1,000 to 16,000 tensors (16×), n·log n gives at most 16 · log(16000)/log(1000) ≈ 22.4×;
  // a quadratic reader would do 256×.
  const auto work = [](std::size_t n) {
    const SafetensorsFile file = read(many_tensors(n));
    EXPECT_EQ(file.tensors.size(), n);
    return static_cast<double>(safetensors_last_read_work());
  };
  const double small = work(1000), large = work(16000);
  EXPECT_GT(small, 1000.0 * 10);  // each entry: 1 key + object + 3 keys, 2 arrays, 3 values...
  EXPECT_LT(large / small, 16.0 * std::log(16000.0) / std::log(1000.0));
  // The issue's case reads in full.
  const SafetensorsFile file = read(many_tensors(40000));
  ASSERT_EQ(file.tensors.size(), 40000u);
  EXPECT_EQ(file.tensors.at("t39999").bytes.size(), 4u);
}

}  // namespace
}  // namespace kiln::record
