// Records of the 3-D and transposed 1-D convolutions (issue 19) against real PyTorch
// (Debian's python3-torch at /usr/bin/python3): Kiln saves Sequentials with conv3d,
// conv_transpose3d (groups, output_padding) and conv_transpose1d (dilation, output_padding)
// built from specs, and torch_interop_conv.py loads them into the equivalent torch.nn
// modules with load_state_dict(strict=True) and compares outputs; the script writes torch's
// own seeded models, which Kiln loads and must reproduce. Skipped when /usr/bin/python3
// cannot import torch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/paths.hpp"
#include "support/temp_dir.hpp"

#if defined(__unix__)
#include <sys/wait.h>
#endif

#ifndef KILN_PYTHON
#define KILN_PYTHON "/usr/bin/python3"
#endif

namespace kiln::record {
namespace {

using Json = nlohmann::json;

Tensor<Cpu, 2> rows_tensor(const Json& rows) {
  std::vector<float> values;
  for (const auto& row : rows) {
    for (const auto& v : row) values.push_back(v.get<float>());
  }
  return Tensor<Cpu, 2>::from_data(TensorData(
      Shape{static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())},
      std::move(values)));
}

Json rows_json(const TensorData& data) {
  const auto values = data.to_vec<float>();
  Json rows = Json::array();
  for (std::int64_t r = 0; r < data.shape[0]; ++r) {
    Json row = Json::array();
    for (std::int64_t c = 0; c < data.shape[1]; ++c) row.push_back(values[r * data.shape[1] + c]);
    rows.push_back(row);
  }
  return rows;
}

// The Kiln side of torch_interop_conv.py's models (same layer indices, so the same keys).
const char* kConv3d = R"({"layers": [
    {"type": "reshape", "shape": [2, 3, 4, 5]},
    {"type": "conv3d", "channels": [2, 4], "kernel_size": [3, 2, 3], "padding": "same"},
    {"type": "relu"},
    {"type": "conv_transpose3d", "channels": [4, 2], "kernel_size": 2, "stride": 2,
     "padding_out": 1, "groups": 2},
    {"type": "flatten"}]})";
const char* kConvT1d = R"({"layers": [
    {"type": "reshape", "shape": [2, 6]},
    {"type": "conv_transpose1d", "channels": [2, 3], "kernel_size": 3, "stride": 2,
     "padding": 1, "padding_out": 1, "dilation": 2},
    {"type": "flatten"}]})";

TEST(TorchInteropConv, Conv3dAndTransposedConvRecordsLoadBothWays) {
  test::TempDir dir("torch_interop_conv");
  const auto& work = dir.path();
  const std::vector<std::pair<std::string, std::string>> models = {{"conv3d", kConv3d},
                                                                   {"convt1d", kConvT1d}};
  for (const auto& [name, spec] : models) {
    Cpu::seed(19);
    const auto model = nn::SequentialConfig::from_json_string(spec).init<Cpu>();
    const std::int64_t features = name == "conv3d" ? 120 : 12;
    const auto inputs = Tensor<Cpu, 2>::random(Shape{4, features}, Distribution::normal(0, 1));
    model.save_file((work / ("kiln_" + name + ".safetensors")).string(), SafetensorsRecorder{});
    std::ofstream(work / ("kiln_" + name + ".json"))
        << Json{{"inputs", rows_json(inputs.to_data())},
                {"outputs", rows_json(model.forward(inputs).to_data())}}
               .dump();
  }
  const auto log = work / "python.log";
  const std::string command = std::string(KILN_PYTHON " ") + KILN_RECORD_TEST_DIR +
                              "/torch_interop_conv.py '" + work.string() + "' > '" + log.string() +
                              "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  const int exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (exit_code == 77 || exit_code == 127) {
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON " cannot import torch:\n"
                 << output.str();
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop_conv.py failed:\n" << output.str();
  EXPECT_THAT(output.str(), ::testing::HasSubstr("Kiln conv3d in torch"));
  EXPECT_THAT(output.str(), ::testing::HasSubstr("Kiln convt1d in torch"));

  for (const auto& [name, spec] : models) {
    SCOPED_TRACE(name);
    std::ifstream in(work / ("torch_" + name + ".json"));
    const Json expected = Json::parse(in);
    // PyTorch's state_dict keys are the ones Kiln records.
    const auto fresh = nn::SequentialConfig::from_json_string(spec).init<Cpu>();
    std::vector<std::string> keys;
    auto visitor = [&](const std::string& path, const auto&) { keys.push_back(path); };
    fresh.visit(visitor);
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(keys, expected["keys"].get<std::vector<std::string>>());
    const auto loaded = SafetensorsRecorder{}.load_file(
        fresh, (work / ("torch_" + name + ".safetensors")).string(), Cpu::Device{});
    loaded.forward(rows_tensor(expected["inputs"]))
        .to_data()
        .assert_approx_eq(rows_tensor(expected["outputs"]).to_data(), Tolerance::absolute(1e-5));
  }
}

}  // namespace
}  // namespace kiln::record
