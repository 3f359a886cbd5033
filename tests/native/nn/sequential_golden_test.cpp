// The SafeTensors bytes of a seeded nn::Sequential with conv, batch_norm and linear layers,
// kept as a fixture that the JS package is checked against (tests/js/nn_records.test.mjs
// builds the same spec with the same seed in WebAssembly and must write these exact bytes):
// so a model trained in the browser and one made in C++ share keys, order, dtypes, shapes and
// values. The generator is Kiln's own (same values natively and in WebAssembly).
//
// This test fails when the C++ side no longer writes the fixture. To regenerate it after a
// deliberate change: KILN_UPDATE_FIXTURES=1 ./build/native/kiln_tests
//   --gtest_filter=SequentialGolden.*   (then commit tests/js/fixtures/).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/sequential.hpp"
#include "kiln/record/recorder.hpp"
#include "support/paths.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;

// Also in tests/js/nn_records.test.mjs (camelCase there) and tests/js/fixtures/*.json.
const char* kSpec = R"({"layers": [
    {"type": "reshape", "shape": [1, 5, 5]},
    {"type": "conv2d", "channels": [1, 3], "kernel_size": [3, 3], "padding": "same"},
    {"type": "batch_norm", "num_features": 3},
    {"type": "relu"},
    {"type": "avg_pool2d", "kernel_size": [2, 2]},
    {"type": "flatten"},
    {"type": "dropout", "prob": 0.1},
    {"type": "linear", "d_input": 12, "d_output": 4},
    {"type": "gelu"},
    {"type": "linear", "d_input": 4, "d_output": 2, "bias": false}]})";

std::filesystem::path fixtures_dir() {
  return std::filesystem::path(KILN_RECORD_TEST_DIR) / ".." / ".." / "js" / "fixtures";
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(SequentialGolden, SeededModelWritesTheFixturesBytes) {
  const auto config = nn::SequentialConfig::from_json_string(kSpec);
  AD::seed(42);
  const auto model = config.init<AD>();
  const auto bytes = record::SafetensorsRecorder{}.to_bytes(model);
  const auto path = fixtures_dir() / "sequential_seed42.safetensors";
  if (std::getenv("KILN_UPDATE_FIXTURES") != nullptr) {
    std::filesystem::create_directories(fixtures_dir());
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    config.save((fixtures_dir() / "sequential_seed42.json").string());
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing (KILN_UPDATE_FIXTURES=1)";
  EXPECT_EQ(bytes, read_bytes(path)) << "C++ no longer writes " << path;
  EXPECT_EQ(nn::SequentialConfig::load((fixtures_dir() / "sequential_seed42.json").string()),
            config);
  // Loading the fixture gives the model back (same values).
  const auto loaded = record::SafetensorsRecorder{}.from_bytes(
      nn::SequentialConfig::from_json_string(kSpec).init<Cpu>(), bytes, Cpu::Device{});
  const auto x = Tensor<Cpu, 2>::random(Shape{3, 25}, Distribution::normal(0, 1));
  EXPECT_EQ(loaded.forward(x).to_data().to_vec<float>(),
            model.valid().forward(x).to_data().to_vec<float>());
}

}  // namespace
}  // namespace kiln
