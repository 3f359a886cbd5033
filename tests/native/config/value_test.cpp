// config::Value and config::parse (engine/src/config/json.cpp): the JSON forms configs keep,
// and the bounds of issue 14 on config text: nesting depth, keys given twice, the number of
// values, and the length of a Sequential spec's layer list (checked while the text is read).
// Everything here works without the nlohmann interop header.
#include "kiln/config/value.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/kiln.hpp"
#include "support/temp_dir.hpp"

namespace kiln {
namespace {

using config::Value;
using testing::HasSubstr;
using testing::ThrowsMessage;

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

struct SmallConfig {
  std::int64_t size;
  std::vector<std::int64_t> hidden{1};
  explicit SmallConfig(std::int64_t size) : size(size) {}
  KILN_CONFIG(SmallConfig, (size), (hidden))
};

// ------------------------------------------------------------------ the tree and its text

TEST(ConfigValue, ObjectsKeepSortedUniqueKeysAndPrintAsBefore) {
  Value v = Value::object();
  v["zeta"] = 1;
  v["alpha"] = 2.0;
  v["mid"] = Value::array({true, nullptr, "x"});
  v["alpha"] = 0.5;  // replaces
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(v.keys(), (std::vector<std::string>{"alpha", "mid", "zeta"}));
  // Written by hand: sorted keys, doubles with a fraction, no spaces.
  EXPECT_EQ(v.dump(), R"({"alpha":0.5,"mid":[true,null,"x"],"zeta":1})");
  EXPECT_EQ(Value(2.0).dump(), "2.0");
  EXPECT_EQ(Value::object({{"a", 1}}).dump(2), "{\n  \"a\": 1\n}");
  v.erase("mid");
  EXPECT_FALSE(v.contains("mid"));
  EXPECT_EQ(v.find("nope"), nullptr);
  EXPECT_EQ(Value(3).find("a"), nullptr) << "find on a non-object";
}

TEST(ConfigValue, ParseKeepsTheNumberKinds) {
  const Value v = config::parse(R"({"i": -3, "u": 18446744073709551615, "d": 1.5, "s": "é"})",
                                "JSON string");
  EXPECT_TRUE(v.find("i")->is_number_integer());
  EXPECT_EQ(v.find("i")->get_int(), -3);
  EXPECT_TRUE(v.find("u")->is_number_unsigned());
  EXPECT_EQ(v.find("u")->get_uint(), 18446744073709551615ull);
  EXPECT_TRUE(v.find("d")->is_number_float());
  EXPECT_EQ(v.find("d")->get_double(), 1.5);
  EXPECT_EQ(v.find("s")->get_string(), "é");
  EXPECT_EQ(v, config::parse(v.dump(), "round trip"));
  EXPECT_EQ(Value(2), Value(2u)) << "numbers compare by value across kinds";
  EXPECT_EQ(Value(2), Value(2.0));
  EXPECT_NE(Value(-1), Value(std::uint64_t{18446744073709551615ull}));
}

TEST(ConfigValue, DescribeNamesTheValue) {
  EXPECT_EQ(config::describe(Value("784")), "the string \"784\"");
  EXPECT_EQ(config::describe(Value(3.5)), "the number 3.5");
  EXPECT_EQ(config::describe(Value(0)), "the integer 0");
  EXPECT_EQ(config::describe(Value(false)), "the boolean false");
  EXPECT_EQ(config::describe(Value()), "null");
  EXPECT_EQ(config::describe(Value::array()), "an array");
}

TEST(ConfigValue, CodecsKeepTheirJsonForms) {
  // The forms of Burn's serde files and of the configs saved before this change, by hand.
  using nn::PaddingConfig1d;
  using nn::PaddingConfig2d;
  EXPECT_EQ(config::encode(nn::loss::Reduction::Mean).dump(), "\"mean\"");
  EXPECT_EQ(config::encode(PaddingConfig2d::same()).dump(), "\"Same\"");
  EXPECT_EQ(config::encode(PaddingConfig2d::explicit_({2, 1})).dump(), R"({"Explicit":[2,1]})");
  EXPECT_EQ(config::encode(PaddingConfig1d::explicit_({3})).dump(), R"({"Explicit":3})");
  EXPECT_EQ(config::encode(nn::Initializer::xavier_normal(2.0)).dump(),
            R"({"XavierNormal":{"gain":2.0}})");
  EXPECT_EQ(config::decode<nn::loss::Reduction>(Value("sum"), "x"), nn::loss::Reduction::Sum);
  EXPECT_EQ(config::decode<PaddingConfig2d>(config::parse(R"({"Explicit": [2, 1]})", "t"), "x"),
            PaddingConfig2d::explicit_({2, 1}));
  EXPECT_THAT([] { config::decode<nn::loss::Reduction>(Value(1), "Cfg.reduction"); },
              ThrowsMessage<ConfigError>(
                  "Cfg.reduction: expected \"mean\" or \"sum\", got the integer 1"));
}

// ------------------------------------------------------------------ depth

TEST(ConfigLimits, NestingUpToTheCapParses) {
  EXPECT_EQ(config::ParseLimits{}.max_depth, 64u);
  const Value v = config::parse(nested_arrays(64), "JSON string");
  EXPECT_TRUE(v.is_array());
}

TEST(ConfigLimits, NestingPastTheCapIsALimitErrorNamingIt) {
  EXPECT_THAT([] { config::parse(nested_arrays(65), "JSON string"); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "JSON string: JSON nested deeper than 64 arrays/objects (the limit of "
                  "config::ParseLimits::max_depth) at [0][0]")));
  // Far deeper than any stack could recurse: refused at level 65, no crash.
  EXPECT_THROW(config::parse(nested_arrays(1'000'000), "JSON string"), LimitError);
  std::string objects;
  for (int i = 0; i < 100; ++i) objects += "{\"a\":";
  objects += "1" + std::string(100, '}');
  EXPECT_THAT([&] { config::parse(objects, "JSON string"); },
              ThrowsMessage<LimitError>(HasSubstr("nested deeper than 64")));
  // A smaller cap of the caller's.
  config::ParseLimits limits;
  limits.max_depth = 2;
  EXPECT_THROW(config::parse("[[[]]]", "t", limits), LimitError);
  EXPECT_NO_THROW(config::parse("[[]]", "t", limits));
}

TEST(ConfigLimits, DeepNestingInAConfigFieldOrASpec) {
  EXPECT_THAT([] { SmallConfig::from_json_string("{\"size\": 1, \"hidden\": " + nested_arrays(100) + "}"); },
              ThrowsMessage<LimitError>(HasSubstr("JSON string: JSON nested deeper than 64")));
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(
            "{\"layers\": [{\"type\": \"reshape\", \"shape\": " + nested_arrays(1000) + "}]}");
      },
      ThrowsMessage<LimitError>(HasSubstr("nested deeper than 64")));
}

// ------------------------------------------------------------------ duplicate keys

TEST(ConfigLimits, AKeyGivenTwiceIsAConfigErrorNamingIt) {
  EXPECT_THAT([] { config::parse(R"({"a": 1, "b": 2, "a": 3})", "JSON string"); },
              ThrowsMessage<ConfigError>(
                  "JSON string: duplicate key \"a\" in the object (each key may appear once)"));
  EXPECT_THAT([] { SmallConfig::from_json_string(R"({"size": 1, "size": 2})"); },
              ThrowsMessage<ConfigError>(HasSubstr("duplicate key \"size\"")));
  // Nested: the message says where.
  EXPECT_THAT([] { config::parse(R"({"x": [0, {"k": 1, "k": 1}]})", "JSON string"); },
              ThrowsMessage<ConfigError>(HasSubstr("duplicate key \"k\" in the object at x[1]")));
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(
            R"({"layers": [{"type": "relu"}, {"type": "linear", "d_input": 2, "d_input": 3, "d_output": 1}]})");
      },
      ThrowsMessage<ConfigError>(HasSubstr("duplicate key \"d_input\" in the object at layers[1]")));
  EXPECT_THAT([] { nn::loss::CrossEntropyLossConfig::from_json_string(
                       R"({"reduction": "mean", "reduction": "sum"})"); },
              ThrowsMessage<ConfigError>(HasSubstr("duplicate key \"reduction\"")));
  // The same key in two objects is fine.
  EXPECT_NO_THROW(config::parse(R"([{"a": 1}, {"a": 2}, {"b": {"a": 3}}])", "JSON string"));
}

TEST(ConfigLimits, ADuplicateKeyInAFileNamesTheFile) {
  const auto path = test::temp_path("value_test_duplicate.json").string();
  std::ofstream(path) << R"({"size": 1, "hidden": [1], "hidden": [2]})";
  EXPECT_THAT([&] { SmallConfig::load(path); },
              ThrowsMessage<ConfigError>(HasSubstr("\"" + path + "\": duplicate key \"hidden\"")));
  std::filesystem::remove(path);
}

// ------------------------------------------------------------------ counts

TEST(ConfigLimits, AMillionLayersIsALimitErrorNamingTheCap) {
  EXPECT_EQ(nn::SequentialConfig::max_layers, 4096u);
  std::string spec = "{\"layers\": [";
  for (int i = 0; i < 1'000'000; ++i) spec += i ? ",{\"type\":\"relu\"}" : "{\"type\":\"relu\"}";
  spec += "]}";
  // Refused when the 4097th layer is read: the million Values are never built.
  EXPECT_THAT([&] { nn::SequentialConfig::from_json_string(spec); },
              ThrowsMessage<LimitError>(
                  "JSON string: the array at layers has more than 4096 elements (the limit of "
                  "SequentialConfig::max_layers)"));
}

TEST(ConfigLimits, LayersUpToTheCapAreAccepted) {
  std::string spec = "{\"layers\": [";
  for (std::size_t i = 0; i < nn::SequentialConfig::max_layers; ++i) {
    spec += i ? ",{\"type\":\"relu\"}" : "{\"type\":\"relu\"}";
  }
  spec += "]}";
  EXPECT_EQ(nn::SequentialConfig::from_json_string(spec).layers.size(), 4096u);
}

TEST(ConfigLimits, AValueBuiltInCodeIsCheckedToo) {
  Value layers = Value::array();
  for (int i = 0; i < 4097; ++i) layers.push_back(Value::object({{"type", "relu"}}));
  EXPECT_THAT([&] { nn::SequentialConfig::from_value(Value::object({{"layers", layers}})); },
              ThrowsMessage<LimitError>("SequentialConfig.layers: 4097 layers exceed the limit of "
                                        "4096 (SequentialConfig::max_layers)"));
}

TEST(ConfigLimits, TooManyValuesIsALimitError) {
  EXPECT_EQ(config::ParseLimits{}.max_values, std::size_t{1} << 20);
  std::string weights = "{\"weights\": [";
  for (int i = 0; i < 1'100'000; ++i) weights += i ? ",1" : "1";
  weights += "]}";
  EXPECT_THAT([&] { nn::loss::CrossEntropyLossConfig::from_json_string(weights); },
              ThrowsMessage<LimitError>(HasSubstr(
                  "JSON string: JSON holds more than 1048576 values (the limit of "
                  "config::ParseLimits::max_values)")));
  config::ParseLimits limits;
  limits.max_values = 3;
  EXPECT_NO_THROW(config::parse("[1, 2]", "t", limits));
  EXPECT_THROW(config::parse("[1, 2, 3]", "t", limits), LimitError);
  limits = config::ParseLimits{};
  limits.max_array_size = 2;
  EXPECT_THAT([&] { config::parse(R"({"a": [[1, 2, 3]]})", "t", limits); },
              ThrowsMessage<LimitError>("t: the array at a[0] has more than 2 elements (the limit "
                                        "of config::ParseLimits::max_array_size)"));
}

// ------------------------------------------------------------------ malformed text

TEST(ConfigLimits, MalformedTextKeepsItsMessages) {
  EXPECT_THAT([] { config::parse("{\"a\": 1e999}", "JSON string"); },
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON")));
  EXPECT_THAT([] { config::parse("{\"a\": }", "JSON string"); },
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON ([json.exception.parse_error.101]")));
  EXPECT_THAT([] { config::parse("", "JSON string"); },
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON")));
  EXPECT_THAT([] { config::parse("[1] [2]", "JSON string"); },
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON")));
  EXPECT_THAT([] { config::parse("\"\xff\"", "JSON string"); },
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON")));
}

}  // namespace
}  // namespace kiln
