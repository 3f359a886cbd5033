// Records of the attention layers against real PyTorch (Debian's python3-torch): Kiln saves
// nn::MultiHeadAttention, nn::TransformerEncoder (pre-norm, relu) and nn::TransformerDecoder
// (post-norm, gelu) as SafeTensors with their inputs and outputs;
// tests/native/record/torch_interop_attention.py loads them into torch.nn.MultiheadAttention /
// TransformerEncoder / TransformerDecoder (batch_first=True) with load_state_dict(strict=True)
// and must reproduce Kiln's outputs, then writes torch's own seeded modules and outputs, which
// Kiln loads and must reproduce. Skipped when /usr/bin/python3 cannot import torch.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/attention.hpp"
#include "kiln/nn/transformer.hpp"
#include "kiln/record/recorder.hpp"
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

using AD = Autodiff<Cpu>;
using Json = nlohmann::json;

Json to_json(const TensorData& d) {
  Json j;
  j["shape"] = std::vector<std::int64_t>(d.shape.dims().begin(), d.shape.dims().end());
  if (d.dtype == DType::Bool) {
    std::vector<bool> values;
    for (const auto b : d.bytes) values.push_back(b != 0);
    j["data"] = values;
  } else {
    j["data"] = d.to_vec<float>();
  }
  return j;
}
TensorData floats(const Json& j) {
  return TensorData(Shape(j.at("shape").get<std::vector<std::int64_t>>()),
                    j.at("data").get<std::vector<float>>());
}

struct Inputs {
  Tensor<Cpu, 3> query, kv, x, target, memory;
  Tensor<Cpu, 2, Bool> mask_pad_kv, mask_pad_x, memory_mask_pad;
  Tensor<Cpu, 3, Bool> causal_x, causal_target;
};

Inputs make_inputs() {
  Cpu::seed(21);
  const auto u = [](Shape s) { return Tensor<Cpu, 3>::random(s, Distribution::uniform(-1, 1)); };
  return Inputs{u(Shape{2, 3, 8}),
                u(Shape{2, 4, 8}),
                u(Shape{2, 5, 8}),
                u(Shape{2, 4, 8}),
                u(Shape{2, 5, 8}),
                Tensor<Cpu, 2, Bool>::from_bool({{false, false, false, true}, {false, true, false, false}}),
                Tensor<Cpu, 2, Bool>::from_bool({{false, false, false, false, false},
                                                 {false, false, false, true, true}}),
                Tensor<Cpu, 2, Bool>::from_bool({{false, false, false, false, true},
                                                 {false, false, false, false, false}}),
                nn::generate_autoregressive_mask<Cpu>(1, 5),
                nn::generate_autoregressive_mask<Cpu>(1, 4)};
}

template <class B>
struct Outputs {
  TensorData mha_context, mha_weights, encoder_y, decoder_y;
};

template <class B>
Outputs<B> run(const nn::MultiHeadAttention<B>& mha, const nn::TransformerEncoder<B>& enc,
               const nn::TransformerDecoder<B>& dec, const Inputs& in) {
  const auto mo = mha.forward(nn::MhaInput<B>(in.query, in.kv, in.kv).with_mask_pad(in.mask_pad_kv));
  const auto ey = enc.forward(nn::TransformerEncoderInput<B>(in.x)
                                  .with_mask_pad(in.mask_pad_x)
                                  .with_mask_attn(in.causal_x));
  const auto dy = dec.forward(nn::TransformerDecoderInput<B>(in.target, in.memory)
                                  .with_target_mask_attn(in.causal_target)
                                  .with_memory_mask_pad(in.memory_mask_pad));
  return {mo.context.to_data(), mo.weights.to_data(), ey.to_data(), dy.to_data()};
}

std::pair<int, std::string> run_script(const std::filesystem::path& work) {
  const auto log = work / "python.log";
  const std::string command = std::string(KILN_PYTHON " ") + KILN_RECORD_TEST_DIR +
                              "/torch_interop_attention.py " + "'" + work.string() + "' > '" +
                              log.string() + "' 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream output;
  output << std::ifstream(log).rdbuf();
  return {status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1, output.str()};
}

TEST(TorchInteropAttention, KilnAndPyTorchLoadEachOthersRecords) {
  test::TempDir dir("torch_interop_attention");
  const auto& work = dir.path();
  AD::seed(5);
  const auto mha = nn::MultiHeadAttentionConfig(8, 2).with_dropout(0.0).init<AD>().valid();
  auto enc_config = nn::TransformerEncoderConfig(8, 16, 2, 2);
  enc_config.dropout = 0.0;
  enc_config.norm_first = true;
  enc_config.activation = "relu";
  const auto enc = enc_config.init<AD>().valid();
  auto dec_config = nn::TransformerDecoderConfig(8, 16, 2, 2);
  dec_config.dropout = 0.0;
  const auto dec = dec_config.init<AD>().valid();
  const Inputs in = make_inputs();
  const auto out = run<Cpu>(mha, enc, dec, in);

  SafetensorsRecorder{}.save_file(mha, (work / "kiln_mha.safetensors").string());
  SafetensorsRecorder{}.save_file(enc, (work / "kiln_encoder.safetensors").string());
  SafetensorsRecorder{}.save_file(dec, (work / "kiln_decoder.safetensors").string());
  Json j;
  j["mha"] = {{"query", to_json(in.query.to_data())},
              {"kv", to_json(in.kv.to_data())},
              {"mask_pad", to_json(in.mask_pad_kv.to_data())},
              {"context", to_json(out.mha_context)},
              {"weights", to_json(out.mha_weights)}};
  j["encoder"] = {{"x", to_json(in.x.to_data())},
                  {"mask_pad", to_json(in.mask_pad_x.to_data())},
                  {"mask_attn", to_json(in.causal_x.squeeze_dim<2>(0).to_data())},
                  {"y", to_json(out.encoder_y)}};
  j["decoder"] = {{"target", to_json(in.target.to_data())},
                  {"memory", to_json(in.memory.to_data())},
                  {"target_mask_attn", to_json(in.causal_target.squeeze_dim<2>(0).to_data())},
                  {"memory_mask_pad", to_json(in.memory_mask_pad.to_data())},
                  {"y", to_json(out.decoder_y)}};
  std::ofstream(work / "kiln_attention.json") << j.dump();

  const auto [exit_code, output] = run_script(work);
  if (exit_code == 77 || exit_code == 127) {
    GTEST_SKIP() << "PyTorch interop skipped: " KILN_PYTHON " cannot import torch:\n" << output;
  }
  ASSERT_EQ(exit_code, 0) << "torch_interop_attention.py failed:\n" << output;
  EXPECT_NE(output.find("decoder: Kiln's record loads strictly"), std::string::npos) << output;

  // PyTorch -> Kiln: torch's modules loaded into freshly initialised Kiln modules.
  std::ifstream tj(work / "torch_attention.json");
  const Json expected = Json::parse(tj);
  const auto tmha = SafetensorsRecorder{}.load_file(
      nn::MultiHeadAttentionConfig(8, 2).with_dropout(0.0).init<Cpu>(),
      (work / "torch_mha.safetensors").string(), Cpu::Device{});
  const auto tenc = SafetensorsRecorder{}.load_file(enc_config.init<Cpu>(),
                                                    (work / "torch_encoder.safetensors").string(),
                                                    Cpu::Device{});
  const auto tdec = SafetensorsRecorder{}.load_file(dec_config.init<Cpu>(),
                                                    (work / "torch_decoder.safetensors").string(),
                                                    Cpu::Device{});
  const auto got = run<Cpu>(tmha, tenc, tdec, in);
  const auto tol = Tolerance::rel_abs(1e-4, 2e-5);
  got.mha_context.assert_approx_eq(floats(expected["mha"]["context"]), tol);
  got.mha_weights.assert_approx_eq(floats(expected["mha"]["weights"]), tol);
  got.encoder_y.assert_approx_eq(floats(expected["encoder"]["y"]), tol);
  got.decoder_y.assert_approx_eq(floats(expected["decoder"]["y"]), tol);
}

}  // namespace
}  // namespace kiln::record
