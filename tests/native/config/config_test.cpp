// KILN_CONFIG: required and defaulted fields, with_* builders, nested configs, JSON round
// trips through strings and files, and every load error.
#include "kiln/config/config.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/temp_dir.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;

struct InnerConfig {
  std::int64_t size;
  double scale = 0.5;
  explicit InnerConfig(std::int64_t size) : size(size) {}
  KILN_CONFIG(InnerConfig, (size), (scale))
};

struct OuterConfig {
  std::int32_t d_input;
  std::string name;
  bool bias = true;
  std::vector<std::int64_t> hidden{16, 16};
  std::optional<double> dropout;
  std::array<std::int64_t, 2> kernel_size{3, 3};
  InnerConfig inner = InnerConfig(4);
  OuterConfig(std::int32_t d_input, std::string name) : d_input(d_input), name(std::move(name)) {}
  KILN_CONFIG(OuterConfig, (d_input, name), (bias, hidden, dropout, kernel_size, inner))
};

struct NoRequired {
  int epochs = 10;
  KILN_CONFIG(NoRequired, (), (epochs))
};

// Unique per process: ctest runs kiln_tests several times at once (the discovered tests
// and kiln_tests_on_<arch>), and a shared name let one run see another's temporary file.
std::filesystem::path temp_path(const std::string& name) {
  return test::temp_path("config_test_" + name);
}

TEST(ConfigTest, DefaultsBuildersAndEquality) {
  const OuterConfig c(784, "mlp");
  EXPECT_TRUE(c.bias);
  EXPECT_EQ(c.hidden, (std::vector<std::int64_t>{16, 16}));
  const auto d = c.with_bias(false).with_hidden({32}).with_inner(InnerConfig(8).with_scale(2.0));
  EXPECT_FALSE(d.bias);
  EXPECT_EQ(d.hidden, (std::vector<std::int64_t>{32}));
  EXPECT_EQ(d.inner.size, 8);
  EXPECT_EQ(d.inner.scale, 2.0);
  EXPECT_TRUE(c.bias) << "with_* returns a copy";
  EXPECT_NE(c, d);
  EXPECT_EQ(c, OuterConfig(784, "mlp"));
  EXPECT_EQ(NoRequired().with_epochs(3).epochs, 3);
}

TEST(ConfigTest, JsonRoundTripAndPrinting) {
  const auto c = OuterConfig(2, "xor").with_dropout(0.25).with_kernel_size({5, 1});
  const auto j = c.to_json();
  EXPECT_EQ(j["d_input"], 2);
  EXPECT_EQ(j["name"], "xor");
  EXPECT_EQ(j["dropout"], 0.25);
  EXPECT_EQ(j["inner"]["size"], 4);
  EXPECT_EQ(OuterConfig::from_json_string(c.to_json_string()), c);
  EXPECT_EQ(OuterConfig::from_json_string(OuterConfig(2, "x").to_json_string()).dropout,
            std::nullopt);
  std::ostringstream out;
  out << InnerConfig(3);
  EXPECT_EQ(out.str(), "InnerConfig {\"scale\":0.5,\"size\":3}");
}

TEST(ConfigTest, MissingDefaultedFieldsTakeTheirDefaults) {
  const auto c = OuterConfig::from_json_string(R"({"d_input": 3, "name": "a", "bias": false})");
  EXPECT_EQ(c.d_input, 3);
  EXPECT_FALSE(c.bias);
  EXPECT_EQ(c.hidden, (std::vector<std::int64_t>{16, 16}));
  EXPECT_EQ(c.inner, InnerConfig(4));
}

TEST(ConfigTest, SaveAndLoadAFile) {
  const auto path = temp_path("save.json").string();
  const auto c = OuterConfig(5, "saved").with_hidden({1, 2, 3});
  c.save(path);
  EXPECT_EQ(OuterConfig::load(path), c);
  // Saving again replaces the file atomically and leaves no temporary file behind.
  c.with_bias(false).save(path);
  EXPECT_FALSE(OuterConfig::load(path).bias);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path())) {
    EXPECT_EQ(entry.path().string().find(path + ".tmp"), std::string::npos) << entry.path();
  }
  std::filesystem::remove(path);
}

TEST(ConfigTest, LoadErrorsNameTheFileTheFieldAndTheProblem) {
  const auto path = temp_path("bad.json").string();
  const auto load_text = [&](const std::string& text) {
    std::ofstream(path) << text;
    return OuterConfig::load(path);
  };
  EXPECT_THAT([&] { load_text(R"({"name": "a"})"); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "\"" + path + "\": OuterConfig: missing required field \"d_input\"")));
  EXPECT_THAT([&] { load_text(R"({"d_input": "784", "name": "a"})"); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "OuterConfig.d_input: expected an integer, got the string \"784\"")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3.5, "name": "a"})"); },
              ThrowsMessage<ConfigError>(HasSubstr("OuterConfig.d_input: expected an integer, got the number 3.5")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3000000000, "name": "a"})"); },
              ThrowsMessage<ConfigError>(HasSubstr("expected an integer in [-2147483648, 2147483647]")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3, "name": "a", "hidden": [1, "x"]})"); },
              ThrowsMessage<ConfigError>(HasSubstr("OuterConfig.hidden[1]: expected an integer")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3, "name": "a", "inner": {"scale": 1}})"); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "OuterConfig.inner: InnerConfig: missing required field \"size\"")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3, "name": "a", "bais": true})"); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "OuterConfig: unknown field \"bais\" (fields: d_input, name, bias")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3, "name": )"); },
              ThrowsMessage<ConfigError>(HasSubstr("\"" + path + "\": malformed JSON")));
  // A number beyond double's range: nlohmann throws out_of_range, not parse_error (it
  // escaped as a non-kiln exception).
  EXPECT_THAT([&] { load_text(R"({"d_input": 3, "name": "a", "inner": {"size": 1, "scale": 1e999}})"); },
              ThrowsMessage<ConfigError>(HasSubstr("\"" + path + "\": malformed JSON")));
  EXPECT_THAT([&] { OuterConfig::from_json_string(R"({"d_input": 1e999})"); },
              ThrowsMessage<ConfigError>(HasSubstr("JSON string: malformed JSON")));
  EXPECT_THAT([&] { load_text(R"([1, 2])"); },
              ThrowsMessage<ConfigError>(HasSubstr("OuterConfig: expected a JSON object, got an array")));
  EXPECT_THAT([&] { load_text(R"({"d_input": 3, "name": "a", "kernel_size": [1]})"); },
              ThrowsMessage<ConfigError>(HasSubstr("OuterConfig.kernel_size: expected an array of 2 elements")));
  std::filesystem::remove(path);
  EXPECT_THAT([&] { OuterConfig::load(path); },
              ThrowsMessage<IoError>(HasSubstr("OuterConfig::load: cannot open \"" + path + "\"")));
}

TEST(ConfigTest, AFailedSaveLeavesTheOldFile) {
  const auto dir = temp_path("dir");
  std::filesystem::create_directories(dir);
  const auto c = NoRequired();
  // Saving over a directory fails at the rename; nothing is left behind.
  EXPECT_THROW(c.save(dir.string()), IoError);
  EXPECT_TRUE(std::filesystem::is_directory(dir));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.parent_path())) {
    if (e.path().string().rfind(dir.string() + ".tmp", 0) == 0) ++files;
  }
  EXPECT_EQ(files, 0u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln
