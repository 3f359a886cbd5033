// str_cat and StrOut (kiln/core/str_cat.hpp) write, without iostreams, the bytes an
// std::ostringstream with default flags writes for the same values: checked here against a
// real ostringstream, value by value (edge values and a sweep of random bit patterns), and
// the engine types' append_to hooks against their `std::cout << x` form.
#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>

#include "kiln/core/dtype.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/activation.hpp"
#include "kiln/nn/linear.hpp"
#include "kiln/nn/loss/reduction.hpp"

namespace kiln {
namespace {

template <class T>
std::string streamed(const T& value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

template <class T>
void expect_same(const T& value) {
  EXPECT_EQ(str_cat(value), streamed(value));
}

enum Unscoped { kZero, kSeven = 7, kNegative = -3 };

TEST(StrCat, BoolsAndCharactersAsAnOstream) {
  expect_same(true);
  expect_same(false);
  EXPECT_EQ(str_cat(true, false), "10");  // no std::boolalpha
  expect_same('x');
  expect_same(static_cast<signed char>('A'));
  expect_same(static_cast<unsigned char>('z'));
  expect_same('\n');
}

TEST(StrCat, IntegersAsAnOstream) {
  expect_same(0);
  expect_same(-1);
  expect_same(INT_MIN);
  expect_same(INT_MAX);
  expect_same(static_cast<short>(-32768));
  expect_same(static_cast<unsigned short>(65535));
  expect_same(std::numeric_limits<std::int64_t>::min());
  expect_same(std::numeric_limits<std::int64_t>::max());
  expect_same(std::numeric_limits<std::uint64_t>::max());
  expect_same(std::numeric_limits<std::size_t>::max());
  expect_same(static_cast<long>(-1234567890123L));
  expect_same(static_cast<unsigned>(4000000000u));
  EXPECT_EQ(str_cat(std::int64_t{-9223372036854775807LL - 1}), "-9223372036854775808");
}

TEST(StrCat, FloatingPointAsAnOstreamsDefaultPrecision) {
  const double doubles[] = {0.0,     -0.0,     0.1,     1.0 / 3,  1e-07,      1e-5,    0.0001,
                            100000., 1e6,      123456., 1234567., 1e21,       -2.5,    3.14159265358979,
                            DBL_MIN, DBL_MAX,  DBL_TRUE_MIN, 5e-324, 0.5773502691896258,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            -std::numeric_limits<double>::quiet_NaN()};
  for (const double d : doubles) {
    SCOPED_TRACE(d);
    expect_same(d);
    expect_same(static_cast<float>(d));
    expect_same(static_cast<long double>(d));
  }
  const float floats[] = {FLT_MIN, FLT_MAX, FLT_TRUE_MIN, 1e-7f, 0.1f, 16777217.f, -1e-45f};
  for (const float f : floats) expect_same(f);
  EXPECT_EQ(str_cat(1e-07), "1e-07");
  EXPECT_EQ(str_cat(0.1f), "0.1");
  EXPECT_EQ(str_cat(1e6), "1e+06");
  EXPECT_EQ(str_cat(std::numeric_limits<double>::infinity()), "inf");
}

TEST(StrCat, RandomBitPatternsMatchAnOstream) {
  std::mt19937_64 rng(17);
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    float f;
    const auto bits32 = static_cast<std::uint32_t>(bits >> 17);
    std::memcpy(&f, &bits32, sizeof f);
    ASSERT_EQ(str_cat(d), streamed(d)) << "bits " << bits;
    ASSERT_EQ(str_cat(f), streamed(f)) << "bits " << bits32;
    const auto n = static_cast<std::int64_t>(bits);
    ASSERT_EQ(str_cat(n), streamed(n));
    ASSERT_EQ(str_cat(static_cast<std::int32_t>(bits)), streamed(static_cast<std::int32_t>(bits)));
  }
}

TEST(StrCat, StringsEnumsAndMixedArgumentsAsAnOstream) {
  const char* null_text = nullptr;
  const char array[] = "array";
  const std::string text = "text";
  const std::string_view view = "view";
  EXPECT_EQ(str_cat(null_text), "");  // an ostream sets badbit and writes nothing
  expect_same(array);
  expect_same(text);
  expect_same(view);
  expect_same(kZero);
  expect_same(kSeven);
  expect_same(kNegative);
  std::ostringstream mixed;
  mixed << "op: expected " << 3 << " dims, got " << 2.5 << ' ' << true << ' ' << std::size_t{7}
        << ' ' << -0.0f << ' ' << text << view;
  EXPECT_EQ(str_cat("op: expected ", 3, " dims, got ", 2.5, ' ', true, ' ', std::size_t{7}, ' ',
                    -0.0f, ' ', text, view),
            mixed.str());
  std::string appended = "a";
  EXPECT_EQ(str_append(appended, 1, 'b', 2.0), "a1b2");
  EXPECT_EQ(appended, "a1b2");
}

TEST(StrCat, FmtGIsSetprecision) {
  const double values[] = {1.0 / 3, 1e-07, 123456789.125, -0.0, 2.0,
                           std::numeric_limits<double>::infinity()};
  for (const double v : values) {
    for (const int precision : {1, 3, 9, 15, 17}) {
      std::ostringstream out;
      out << std::setprecision(precision) << v;
      EXPECT_EQ(str_cat(fmt_g(v, precision)), out.str()) << v << " precision " << precision;
    }
  }
}

TEST(StrCat, EngineTypesAppendWhatTheyStream) {
  const Shape shape{2, 3, 4};
  EXPECT_EQ(str_cat(shape), "[2, 3, 4]");
  EXPECT_EQ(str_cat(Shape{}), "[]");
  expect_same(shape);
  EXPECT_EQ(str_cat(DType::F32, ' ', DType::I32, ' ', DType::Bool), "f32 i32 bool");
  expect_same(DType::Bool);
  EXPECT_EQ(str_cat(CpuDevice{}), "Cpu");
  expect_same(CpuDevice{});
  EXPECT_EQ(str_cat(nn::loss::Reduction::Sum), "sum");
  expect_same(nn::loss::Reduction::Mean);
  EXPECT_EQ(str_cat(nn::Relu{}), "Relu");
  expect_same(nn::LeakyRelu{});
  expect_same(nn::LinearConfig(3, 2));
  EXPECT_EQ(to_string(shape), "[2, 3, 4]");
}

TEST(StrCat, TensorDataUsesTheStreamsPrecision) {
  const TensorData data = TensorData::from({{1.f, 0.1f}, {-2.5f, 1e-7f}});
  EXPECT_EQ(str_cat(data), "[[1.0, 0.1],\n [-2.5, 1e-07]]");
  expect_same(data);
  std::ostringstream fixed2;
  fixed2 << std::fixed << std::setprecision(2) << data;
  std::string text;
  append_values(text, data, 2);
  EXPECT_EQ(text, fixed2.str());
  EXPECT_EQ(text, "[[1.00, 0.10],\n [-2.50, 0.00]]");
}

TEST(StrCat, ModulesPrintTheSameThroughStrCatAndAnOstream) {
  const auto fc = nn::LinearConfig(3, 2).init<Cpu>(CpuDevice{});
  const std::string text = str_cat(fc);
  EXPECT_EQ(text, "Linear {d_input: 3, d_output: 2, bias: true, params: 8}");
  EXPECT_EQ(streamed(fc), text);
  StrOut out;
  out << "layer " << 1 << ": " << fc;
  EXPECT_EQ(out.str(), "layer 1: " + text);
  std::string target = ">";
  StrOut onto(target);
  onto << 2.5 << Shape{2};
  EXPECT_EQ(target, ">2.5[2]");
}

// throw_error<E>(parts...) throws E with str_cat(parts...) as its message: literals of
// different lengths (passed on as const char*), scalars by value, engine types by reference.
TEST(StrCat, ThrowErrorThrowsTheTypeWithTheConcatenatedMessage) {
  const Shape shape{2, 3};
  const std::string name = "w";
  try {
    throw_error<ShapeError>("matmul: ", name, " has shape ", shape, ", dim ", -1, " of ", 2.5f,
                            ' ', std::string_view("ok"), fmt_g(1.0 / 3.0, 3), true);
    FAIL() << "throw_error returned";
  } catch (const ShapeError& e) {
    EXPECT_STREQ(e.what(), "matmul: w has shape [2, 3], dim -1 of 2.5 ok0.3331");
    EXPECT_EQ(std::string(e.what()),
              str_cat("matmul: ", name, " has shape ", shape, ", dim ", -1, " of ", 2.5f, ' ',
                      std::string_view("ok"), fmt_g(1.0 / 3.0, 3), true));
  }
  EXPECT_THROW(throw_error<IndexError>("a"), IndexError);
  EXPECT_THROW(throw_error<IndexError>("a longer literal"), IndexError);
  const char* null_text = nullptr;
  try {
    throw_error<ValueError>("x", null_text, std::uint8_t{7}, 'c');
    FAIL() << "throw_error returned";
  } catch (const ValueError& e) {
    EXPECT_EQ(std::string(e.what()), std::string("x\x07" "c"));  // null char*: nothing; uint8_t: a char
  }
}

}  // namespace
}  // namespace kiln
