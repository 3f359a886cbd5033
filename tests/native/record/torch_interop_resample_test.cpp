// Records of models with resampling layers against real PyTorch (Debian's python3-torch at
// /usr/bin/python3): a Sequential with two Upsample layers (bilinear and nearest) between
// convolutions, built from Kiln's JSON spec, loads into the equivalent torch.nn.Sequential
// with load_state_dict(strict=True) and gives the same logits
// (tests/native/record/torch_interop_resample.py), and PyTorch's seeded model loads into
// Kiln's with its logits. Skipped when /usr/bin/python3 cannot import torch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
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
    rows.push_back(std::vector<float>(values.begin() + r * data.shape[1],
                                      values.begin() + (r + 1) * data.shape[1]));
  }
  return rows;
}

TEST(TorchInteropResample, UpsampleModelLoadsBothWays) {
  const auto spec = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 4, 3]},
      {"type": "conv2d", "channels": [1, 2], "kernel_size": 3, "padding": "same"},
      {"type": "upsample", "scale_factor": 2, "mode": "bilinear"},
      {"type": "conv2d", "channels": [2, 3], "kernel_size": 3},
      {"type": "upsample", "size": [5, 7]},
      {"type": "flatten"},
      {"type": "linear", "d_input": 105, "d_output": 2}]})");
  EXPECT_EQ(spec.output_item_shape({12}), std::vector<std::int64_t>{2});
  Cpu::seed(11);
  const auto model = spec.init<Cpu>();
  EXPECT_EQ(model.param_paths(), (std::vector<std::string>{"1.weight", "1.bias", "3.weight",
                                                           "3.bias", "6.weight", "6.bias"}));
  const auto inputs = Tensor<Cpu, 2>::random(Shape{3, 12}, Distribution::normal(0, 1));
  test::TempDir dir("torch_interop_resample");
  const auto& work = dir.path();
  model.save_file((work / "kiln_upsample.safetensors").string(), SafetensorsRecorder{});
  std::ofstream(work / "kiln_upsample.json")
      << Json{{"inputs", rows_json(inputs.to_data())},
              {"logits", rows_json(model.forward(inputs).to_data())}}
             .dump();

  const auto log = work / "python.log";
  const std::string command = std::string(KILN_PYTHON " " KILN_RECORD_TEST_DIR
                                          "/torch_interop_resample.py '") +
                              work.string() + "' > '" + log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  const int exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (exit_code == 77 || exit_code == 127) {
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON " cannot import torch:\n"
                 << output.str();
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop_resample.py failed:\n" << output.str();
  EXPECT_THAT(output.str(), ::testing::HasSubstr("ok  Kiln upsample model in torch"));

  std::ifstream in(work / "torch_upsample.json");
  const Json expected = Json::parse(in);
  const auto loaded = SafetensorsRecorder{}.load_file(
      spec.init<Cpu>(), (work / "torch_upsample.safetensors").string(), Cpu::Device{});
  loaded.forward(rows_tensor(expected["inputs"]))
      .to_data()
      .assert_approx_eq(rows_tensor(expected["logits"]).to_data(), Tolerance::absolute(1e-4));
}

}  // namespace
}  // namespace kiln::record
