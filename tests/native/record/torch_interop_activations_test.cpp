// Records of the activation layers of issue 19 against real PyTorch (Debian's python3-torch):
// a Sequential spec with prelu (PyTorch's `weight`) and swi_glu (Burn's `linear_inner`,
// `linear_outer`) among every new activation, saved by Kiln as SafeTensors, loads into the
// equivalent torch.nn.Sequential with load_state_dict(strict=True) and gives the same
// outputs; torch's seeded model loads into Kiln and gives torch's outputs
// (tests/native/record/torch_interop_activations.py). Skipped when /usr/bin/python3 cannot
// import torch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <type_traits>
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

namespace kiln {
namespace {

using Json = nlohmann::json;

const char* kSpec = R"({"layers": [
    {"type": "linear", "d_input": 4, "d_output": 6},
    {"type": "prelu", "num_parameters": 6},
    {"type": "swi_glu", "d_input": 6, "d_output": 8, "bias": true},
    {"type": "elu", "alpha": 0.5},
    {"type": "glu"},
    {"type": "celu", "alpha": 1.5},
    {"type": "selu"}, {"type": "mish"}, {"type": "hard_sigmoid"}, {"type": "hard_swish"}]})";

Tensor<Cpu, 2> from_json(const Json& rows) {
  std::vector<float> values;
  for (const auto& row : rows) {
    for (const auto& v : row) values.push_back(v.get<float>());
  }
  return Tensor<Cpu, 2>::from_data(
      TensorData(Shape{static_cast<std::int64_t>(rows.size()),
                       static_cast<std::int64_t>(rows.at(0).size())},
                 values));
}

TEST(TorchInteropActivations, KilnAndPyTorchLoadEachOthersFiles) {
  test::TempDir dir("torch_interop_activations");
  const auto& work = dir.path();
  const auto config = nn::SequentialConfig::from_json_string(kSpec);
  Cpu::seed(3);
  auto model = config.init<Cpu>();
  // Slopes other than PReLU's 0.25 default, so that a mix-up of channels shows.
  auto set_slopes = [](const std::string& path, auto& p) {
    using T = std::decay_t<decltype(p.val())>;
    if (path == "1.weight") {
      if constexpr (T::rank == 1 && std::is_same_v<typename T::Elem, float>) p.set(T::from_floats({-0.3f, 0.1f, 0.25f, 0.6f, 1.2f, -1.f}));
    }
  };
  model.visit_mut(set_slopes);
  const auto inputs = Tensor<Cpu, 2>::from_floats(
      {{1.f, -2.f, 0.5f, 3.f}, {0.3f, 0.7f, -1.1f, 0.f}, {-0.25f, 2.f, 3.f, -4.f}});
  record::SafetensorsRecorder{}.save_file(model, (work / "kiln_act.safetensors").string());
  Json out;
  out["inputs"] = Json::array();
  out["outputs"] = Json::array();
  const auto x = inputs.to_data().to_vec<float>();
  const auto y = model.forward(inputs);
  const auto yv = y.to_data().to_vec<float>();
  const auto cols = y.shape()[1];
  for (int i = 0; i < 3; ++i) {
    out["inputs"].push_back(std::vector<float>(x.begin() + i * 4, x.begin() + (i + 1) * 4));
    out["outputs"].push_back(std::vector<float>(yv.begin() + i * cols, yv.begin() + (i + 1) * cols));
  }
  std::ofstream(work / "kiln_act.json") << out.dump();

  const auto log = work / "python.log";
  const std::string command = std::string(KILN_PYTHON " ") + KILN_RECORD_TEST_DIR +
                              "/torch_interop_activations.py '" + work.string() + "' > '" +
                              log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  const int exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  if (exit_code == 77 || exit_code == 127) {
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON " cannot import torch";
  }
  ASSERT_EQ(exit_code, 0) << output.str();

  // PyTorch -> Kiln: torch's keys are Kiln's, and its outputs are reproduced.
  Json torch_side;
  std::ifstream(work / "torch_act.json") >> torch_side;
  const auto loaded = record::SafetensorsRecorder{}.load_file(
      config.init<Cpu>(), (work / "torch_act.safetensors").string(), Cpu::Device{});
  auto keys = loaded.param_paths();
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(Json(keys), torch_side["keys"]);
  loaded.forward(from_json(torch_side["inputs"]))
      .to_data()
      .assert_approx_eq(from_json(torch_side["outputs"]).to_data(), Tolerance{1e-5, 1e-5});
}

}  // namespace
}  // namespace kiln
