// Records of models with resampling layers against real PyTorch (Debian's python3-torch at
// /usr/bin/python3): a Sequential with two Upsample layers (bilinear and nearest) between
// convolutions, and one with the three 3-D pools before a linear, built from Kiln's JSON
// specs, load into the equivalent torch.nn.Sequential with load_state_dict(strict=True) and
// give the same logits (tests/native/record/torch_interop_resample.py); PyTorch's seeded
// models load into Kiln's with their logits. Skipped when /usr/bin/python3 cannot import
// torch.
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
    rows.push_back(std::vector<float>(values.begin() + r * data.shape[1],
                                      values.begin() + (r + 1) * data.shape[1]));
  }
  return rows;
}

/// Runs torch_interop_resample.py on `work`: its exit status (77: no torch, 127: no python)
/// and output.
std::pair<int, std::string> run_script(const std::filesystem::path& work) {
  const auto log = work / "python.log";
  const std::string command = std::string(KILN_PYTHON " ") + KILN_RECORD_TEST_DIR +
                              "/torch_interop_resample.py '" + work.string() + "' > '" +
                              log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  return {status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, output.str()};
}

/// Saves `spec`'s model (seeded) with its logits for random inputs of `n_inputs` features
/// as kiln_<name>.*.
void save_kiln(const nn::SequentialConfig& spec, const std::filesystem::path& work,
               const std::string& name, std::int64_t n_inputs) {
  Cpu::seed(11);
  const auto model = spec.init<Cpu>();
  const auto inputs = Tensor<Cpu, 2>::random(Shape{3, n_inputs}, Distribution::normal(0, 1));
  model.save_file((work / ("kiln_" + name + ".safetensors")).string(), SafetensorsRecorder{});
  std::ofstream(work / ("kiln_" + name + ".json"))
      << Json{{"inputs", rows_json(inputs.to_data())},
              {"logits", rows_json(model.forward(inputs).to_data())}}
             .dump();
}

/// Loads torch_<name>.* into `spec`'s model and compares the logits.
void check_torch(const nn::SequentialConfig& spec, const std::filesystem::path& work,
                 const std::string& name) {
  std::ifstream in(work / ("torch_" + name + ".json"));
  const Json expected = Json::parse(in);
  const auto loaded = SafetensorsRecorder{}.load_file(
      spec.init<Cpu>(), (work / ("torch_" + name + ".safetensors")).string(), Cpu::Device{});
  loaded.forward(rows_tensor(expected["inputs"]))
      .to_data()
      .assert_approx_eq(rows_tensor(expected["logits"]).to_data(), Tolerance::absolute(1e-4));
}

TEST(TorchInteropResample, UpsampleAndPool3dModelsLoadBothWays) {
  const auto upsample = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 4, 3]},
      {"type": "conv2d", "channels": [1, 2], "kernel_size": 3, "padding": "same"},
      {"type": "upsample", "scale_factor": 2, "mode": "bilinear"},
      {"type": "conv2d", "channels": [2, 3], "kernel_size": 3},
      {"type": "upsample", "size": [5, 7]},
      {"type": "flatten"},
      {"type": "linear", "d_input": 105, "d_output": 2}]})");
  EXPECT_EQ(upsample.output_item_shape({12}), std::vector<std::int64_t>{2});
  EXPECT_EQ(upsample.init<Cpu>().param_paths(),
            (std::vector<std::string>{"1.weight", "1.bias", "3.weight", "3.bias", "6.weight",
                                      "6.bias"}));
  const auto pool3d = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 4, 6, 6]},
      {"type": "max_pool3d", "kernel_size": 2, "stride": 1, "padding": 1, "ceil_mode": true},
      {"type": "avg_pool3d", "kernel_size": 2, "padding": 1, "count_include_pad": false},
      {"type": "adaptive_avg_pool3d", "output_size": 2},
      {"type": "flatten"},
      {"type": "linear", "d_input": 8, "d_output": 3}]})");
  EXPECT_EQ(pool3d.output_item_shape({144}), std::vector<std::int64_t>{3});

  test::TempDir dir("torch_interop_resample");
  save_kiln(upsample, dir.path(), "upsample", 12);
  save_kiln(pool3d, dir.path(), "pool3d", 144);
  const auto [exit_code, output] = run_script(dir.path());
  if (exit_code == 77 || exit_code == 127) {
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON " cannot import torch:\n" << output;
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop_resample.py failed:\n" << output;
  EXPECT_THAT(output, ::testing::HasSubstr("ok  Kiln upsample model in torch"));
  EXPECT_THAT(output, ::testing::HasSubstr("ok  Kiln pool3d model in torch"));
  check_torch(upsample, dir.path(), "upsample");
  check_torch(pool3d, dir.path(), "pool3d");
}

}  // namespace
}  // namespace kiln::record
