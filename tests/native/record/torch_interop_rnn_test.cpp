// Lstm and Gru records against real PyTorch (Debian's python3-torch at /usr/bin/python3):
// Kiln saves stacked bidirectional (and one-way, bias-free) layers as SafeTensors with
// PyTorch's keys (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse, ..._l1);
// tests/native/record/torch_interop_rnn.py loads them into torch.nn.LSTM / GRU
// (batch_first=True) with load_state_dict(strict=True) and compares the outputs and final
// states with Kiln's; the script writes seeded torch modules that Kiln loads and must
// reproduce. Skipped when /usr/bin/python3 cannot import torch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kiln/kiln.hpp"
#include "nn/rnn_fixtures.hpp"
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

using test::rnn::Json;

Json as_json(const TensorData& d) {
  const auto dims = d.shape.dims();
  return {{"shape", std::vector<std::int64_t>(dims.begin(), dims.end())}, {"data", d.to_vec<float>()}};
}

/// Runs torch_interop_rnn.py on `work`: its exit status and output.
std::pair<int, std::string> run_script(const std::filesystem::path& work) {
  const auto log = work / "python.log";
  const std::string command = std::string(KILN_PYTHON " ") + KILN_RECORD_TEST_DIR +
                              "/torch_interop_rnn.py '" + work.string() + "' > '" + log.string() +
                              "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  return {status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, output.str()};
}

struct Spec {
  std::string name, kind;
  std::int64_t d_input, d_hidden, num_layers;
  bool bias, bidirectional;
};

Json spec_json(const Spec& s) {
  return {{"name", s.name}, {"kind", s.kind}, {"d_input", s.d_input}, {"d_hidden", s.d_hidden},
          {"num_layers", s.num_layers}, {"bias", s.bias}, {"bidirectional", s.bidirectional}};
}

/// Output and final state of the module `s` describes, loaded from `path` (or seeded when
/// `path` is empty, then saved to `save_to`), on m's x, h0 (and c0); results into m.
void run_kiln(const Spec& s, Json& m, const std::string& load_from, const std::string& save_to) {
  const auto x = test::rnn::tensor<Cpu, 3>(m.at("x"));
  const auto h0 = test::rnn::tensor<Cpu, 3>(m.at("h0"));
  const SafetensorsRecorder recorder;
  if (s.kind == "lstm") {
    auto lstm = nn::LstmConfig(s.d_input, s.d_hidden, s.bias)
                    .with_num_layers(s.num_layers).with_bidirectional(s.bidirectional).init<Cpu>();
    if (!load_from.empty()) lstm = recorder.load_file(lstm, load_from, Cpu::Device{});
    if (!save_to.empty()) recorder.save_file(lstm, save_to);
    const auto c0 = test::rnn::tensor<Cpu, 3>(m.at("c0"));
    const auto r = lstm.forward(x, nn::LstmState<Cpu>{c0, h0});
    m["kiln_output"] = as_json(r.output.to_data());
    m["kiln_h_n"] = as_json(r.state.hidden.to_data());
    m["kiln_c_n"] = as_json(r.state.cell.to_data());
  } else {
    auto gru = nn::GruConfig(s.d_input, s.d_hidden, s.bias)
                   .with_num_layers(s.num_layers).with_bidirectional(s.bidirectional).init<Cpu>();
    if (!load_from.empty()) gru = recorder.load_file(gru, load_from, Cpu::Device{});
    if (!save_to.empty()) recorder.save_file(gru, save_to);
    const auto r = gru.forward(x, h0);
    m["kiln_output"] = as_json(r.output.to_data());
    m["kiln_h_n"] = as_json(r.hidden.to_data());
  }
}

TEST(TorchInteropRnn, KilnAndPyTorchLoadEachOthersLstmAndGruRecords) {
  test::TempDir dir("torch_interop_rnn");
  const auto& work = dir.path();
  const std::vector<Spec> specs = {{"lstm_2layer_bidirectional", "lstm", 3, 4, 2, true, true},
                                   {"gru_2layer_bidirectional", "gru", 3, 4, 2, true, true},
                                   {"lstm_no_bias", "lstm", 2, 3, 1, false, false},
                                   {"gru_3layer", "gru", 2, 3, 3, true, false}};
  Cpu::seed(17);
  Json modules = Json::array();
  for (const auto& s : specs) {
    const std::int64_t states = s.num_layers * (s.bidirectional ? 2 : 1);
    Json m = spec_json(s);
    m["x"] = as_json(Tensor<Cpu, 3>::random(Shape{2, 4, s.d_input}, Distribution::uniform(-1, 1)).to_data());
    m["h0"] = as_json(Tensor<Cpu, 3>::random(Shape{states, 2, s.d_hidden}, Distribution::uniform(-1, 1)).to_data());
    if (s.kind == "lstm") {
      m["c0"] = as_json(Tensor<Cpu, 3>::random(Shape{states, 2, s.d_hidden}, Distribution::uniform(-1, 1)).to_data());
    }
    run_kiln(s, m, "", (work / ("kiln_" + s.name + ".safetensors")).string());
    m["output"] = m["kiln_output"];
    m["h_n"] = m["kiln_h_n"];
    if (s.kind == "lstm") m["c_n"] = m["kiln_c_n"];
    modules.push_back(m);
  }
  std::ofstream(work / "kiln_rnn.json") << Json{{"modules", modules}}.dump();

  const auto [status, output] = run_script(work);
  if (status == 77) GTEST_SKIP() << output;
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find("ok  kiln_lstm_2layer_bidirectional.safetensors loads into torch with "
                        "strict=True (bias_hh_l0, bias_hh_l0_reverse"),
            std::string::npos)
      << output;

  // PyTorch -> Kiln.
  std::ifstream in(work / "torch_rnn.json");
  const Json torch = Json::parse(in);
  ASSERT_EQ(torch.at("modules").size(), 2u);
  for (Json m : torch.at("modules")) {
    const Spec s{m.at("name").get<std::string>(), m.at("kind").get<std::string>(),
                 m.at("d_input").get<std::int64_t>(), m.at("d_hidden").get<std::int64_t>(),
                 m.at("num_layers").get<std::int64_t>(), m.at("bias").get<bool>(),
                 m.at("bidirectional").get<bool>()};
    SCOPED_TRACE(s.name);
    run_kiln(s, m, (work / ("torch_" + s.name + ".safetensors")).string(), "");
    test::rnn::expect_close(test::rnn::data(m.at("kiln_output")), m.at("output"), "output");
    test::rnn::expect_close(test::rnn::data(m.at("kiln_h_n")), m.at("h_n"), "h_n");
    if (s.kind == "lstm") test::rnn::expect_close(test::rnn::data(m.at("kiln_c_n")), m.at("c_n"), "c_n");
  }
}

}  // namespace
}  // namespace kiln::record
