// MultiHeadAttention, TransformerEncoder/Decoder, PositionWiseFeedForward,
// PositionalEncoding and RotaryEncoding against PyTorch 1.13 (attention_fixtures.json,
// written by make_attention_fixtures.py beside this file: values and gradients of the inputs
// and of every parameter, with PyTorch's state_dict keys as the modules' parameter paths),
// the shared reference cases mha_self_attention_and_key_padding and mha_fully_masked_row,
// finite differences, Sequential specs and bad input.
#include "kiln/nn/attention.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/cpu/cpu.hpp"
#include "kiln/nn/positional_encoding.hpp"
#include "kiln/nn/rotary_encoding.hpp"
#include "kiln/nn/sequential.hpp"
#include "kiln/nn/transformer.hpp"
#include "support/cases.hpp"
#include "support/gradcheck.hpp"
#include "support/paths.hpp"

namespace kiln {
namespace {

using json = nlohmann::json;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

const json& fixtures() {
  static const json j = [] {
    std::ifstream in(std::string(KILN_RECORD_TEST_DIR) + "/../nn/attention_fixtures.json");
    if (!in) throw std::runtime_error("cannot open attention_fixtures.json");
    return json::parse(in);
  }();
  return j;
}

Shape shape_of(const json& t) { return Shape(t.at("shape").get<std::vector<std::int64_t>>()); }
TensorData floats(const json& t) {
  return TensorData(shape_of(t), t.at("data").get<std::vector<float>>());
}
TensorData bools(const json& t) {
  return TensorData(shape_of(t), t.at("data").get<std::vector<bool>>());
}
template <class B, std::size_t D>
Tensor<B, D> tensor(const json& t, bool grad = false) {
  auto x = Tensor<B, D>::from_data(floats(t));
  if constexpr (AutodiffBackend<B>) {
    if (grad) x = x.require_grad();
  }
  return x;
}
template <class B, std::size_t D>
Tensor<B, D, Bool> mask(const json& t) {
  return Tensor<B, D, Bool>::from_data(bools(t));
}

constexpr Tolerance kTol = Tolerance::rel_abs(1e-4, 2e-5);

/// Sets every parameter from PyTorch's state_dict and checks that the module's parameter
/// paths are exactly its keys.
template <class M>
void load_params(M& model, const json& params) {
  std::set<std::string> seen;
  auto visitor = [&](const std::string& path, auto& param) {
    using T = std::decay_t<decltype(param.val())>;
    ASSERT_TRUE(params.contains(path)) << "no PyTorch key " << path;
    param.set(T::from_data(floats(params.at(path))));
    seen.insert(path);
  };
  model.visit_mut(visitor);
  std::set<std::string> keys;
  for (const auto& [k, v] : params.items()) keys.insert(k);
  EXPECT_EQ(seen, keys);
}

/// Compares the gradient of every parameter with PyTorch's.
template <class M>
void expect_param_grads(const M& model, const AD::Gradients& grads, const json& expected) {
  int checked = 0;
  auto visitor = [&](const std::string& path, const auto& param) {
    const auto g = param.val().grad(grads);
    ASSERT_TRUE(g.has_value()) << path;
    SCOPED_TRACE(path);
    g->to_data().assert_approx_eq(floats(expected.at(path)), kTol);
    ++checked;
  };
  model.visit(visitor);
  EXPECT_GT(checked, 0);
}

// ---------------------------------------------------------------- MultiHeadAttention

TEST(MultiHeadAttention, CrossAttentionWithBothMasksMatchesPyTorch) {
  const auto& f = fixtures().at("mha");
  auto mha = nn::MultiHeadAttentionConfig(6, 2).with_dropout(0.0).init<AD>();
  load_params(mha, f.at("params"));
  const auto q = tensor<AD, 3>(f.at("query"), true);
  const auto k = tensor<AD, 3>(f.at("key"), true);
  const auto v = tensor<AD, 3>(f.at("value"), true);
  const auto out = mha.forward(nn::MhaInput<AD>(q, k, v)
                                   .with_mask_pad(mask<AD, 2>(f.at("mask_pad")))
                                   .with_mask_attn(mask<AD, 2>(f.at("mask_attn"))));
  out.context.to_data().assert_approx_eq(floats(f.at("context")), kTol);
  out.weights.to_data().assert_approx_eq(floats(f.at("weights")), kTol);
  const auto grads = (out.context * tensor<AD, 3>(f.at("dy"))).sum().backward();
  const auto& g = f.at("grads");
  q.grad(grads)->to_data().assert_approx_eq(floats(g.at("query")), kTol);
  k.grad(grads)->to_data().assert_approx_eq(floats(g.at("key")), kTol);
  v.grad(grads)->to_data().assert_approx_eq(floats(g.at("value")), kTol);
  expect_param_grads(mha, grads, g);
}

TEST(MultiHeadAttention, SelfAttentionPerHeadWeightsMatchPyTorch) {
  const auto& f = fixtures();
  auto mha = nn::MultiHeadAttentionConfig(6, 2).init<Cpu>();
  load_params(mha, f.at("mha").at("params"));
  const auto x = tensor<Cpu, 3>(f.at("mha_self").at("x"));
  const auto [context, weights] = mha.forward_per_head(nn::MhaInput<Cpu>::self_attn(x));
  context.to_data().assert_approx_eq(floats(f.at("mha_self").at("context")), kTol);
  weights.to_data().assert_approx_eq(floats(f.at("mha_self").at("weights_per_head")), kTol);
  // Inside a Sequential: the same self-attention.
  mha.sequential_forward(x).to_data().assert_approx_eq(floats(f.at("mha_self").at("context")),
                                                       kTol);
}

/// The shared case's module: in_proj and out_proj from its inputs.
template <class B>
nn::MultiHeadAttention<B> case_mha(const test::Case& c) {
  auto mha = nn::MultiHeadAttentionConfig(4, 2).with_dropout(0.0).init<B>();
  mha.in_proj_weight.set(Tensor<B, 2>::from_data(c.input("in_proj_weight")));
  mha.in_proj_bias->set(Tensor<B, 1>::from_data(c.input("in_proj_bias")));
  mha.out_proj.weight.set(Tensor<B, 2>::from_data(c.input("out_proj_weight")));
  mha.out_proj.bias->set(Tensor<B, 1>::from_data(c.input("out_proj_bias")));
  return mha;
}

TEST(MultiHeadAttention, SharedCaseSelfAttentionAndKeyPadding) {
  const auto c = test::load_case("mha_self_attention_and_key_padding");
  const auto mha = case_mha<AD>(c);
  for (const bool masked : {false, true}) {
    SCOPED_TRACE(masked ? "masked" : "unmasked");
    const std::string sfx = masked ? "_masked" : "";
    const auto q = Tensor<AD, 3>::from_data(c.input("q")).require_grad();
    const auto k = Tensor<AD, 3>::from_data(c.input("k")).require_grad();
    const auto v = Tensor<AD, 3>::from_data(c.input("v")).require_grad();
    auto in = nn::MhaInput<AD>(q, k, v);
    if (masked) in = in.with_mask_pad(Tensor<AD, 2, Bool>::from_data(c.input("key_padding_mask")));
    const auto [context, weights] = mha.forward_per_head(in);
    context.to_data().assert_approx_eq(c.expected("out" + sfx), c.tolerance());
    weights.to_data().assert_approx_eq(c.expected("attn_weights" + sfx), c.tolerance());
    const auto grads =
        (context * Tensor<AD, 3>::from_data(c.input("dy_out" + sfx))).sum().backward();
    const std::string of = "__out" + sfx;
    q.grad(grads)->to_data().assert_approx_eq(c.expected("grad_q" + of), c.tolerance());
    k.grad(grads)->to_data().assert_approx_eq(c.expected("grad_k" + of), c.tolerance());
    v.grad(grads)->to_data().assert_approx_eq(c.expected("grad_v" + of), c.tolerance());
    mha.in_proj_weight.val().grad(grads)->to_data().assert_approx_eq(
        c.expected("grad_in_proj_weight" + of), c.tolerance());
  }
}

TEST(MultiHeadAttention, SharedCaseFullyMaskedRowIsNanAsPyTorch113) {
  const auto c = test::load_case("mha_fully_masked_row");
  const auto mha = case_mha<Cpu>(c);
  const auto [context, weights] = mha.forward_per_head(
      nn::MhaInput<Cpu>(Tensor<Cpu, 3>::from_data(c.input("q")),
                        Tensor<Cpu, 3>::from_data(c.input("k")),
                        Tensor<Cpu, 3>::from_data(c.input("v")))
          .with_mask_pad(Tensor<Cpu, 2, Bool>::from_data(c.input("key_padding_mask"))));
  context.to_data().assert_approx_eq(c.expected("out"), c.tolerance());
  weights.to_data().assert_approx_eq(c.expected("attn_weights"), c.tolerance());
}

TEST(MultiHeadAttention, GradientsMatchFiniteDifferences) {
  AD::seed(3);
  const auto mha = nn::MultiHeadAttentionConfig(4, 2).with_dropout(0.0).init<AD>();
  test::Sampler rng(5);
  const auto x = rng.uniform<3>(Shape{2, 3, 4}, -1, 1);
  const auto m = rng.uniform<3>(Shape{2, 2, 4}, -1, 1);
  const auto causal = nn::generate_autoregressive_mask<AD>(1, 3);
  EXPECT_TRUE(test::gradcheck(
      "mha",
      [&](Tensor<AD, 3> q, Tensor<AD, 3> kv) {
        return mha
            .forward(nn::MhaInput<AD>(q, kv, kv).with_mask_pad(
                Tensor<AD, 2, Bool>::from_bool({{false, true}, {false, false}})))
            .context;
      },
      x, m));
  EXPECT_TRUE(test::gradcheck(
      "mha_causal",
      [&](Tensor<AD, 3> q) {
        return mha.forward(nn::MhaInput<AD>::self_attn(q).with_mask_attn(causal)).context;
      },
      x));
}

TEST(MultiHeadAttention, AutoregressiveMaskIsTrueAboveTheDiagonal) {
  nn::generate_autoregressive_mask<Cpu>(2, 3).to_data().assert_eq(TensorData::from<bool>(
      {{{false, true, true}, {false, false, true}, {false, false, false}},
       {{false, true, true}, {false, false, true}, {false, false, false}}}));
  EXPECT_THAT([] { nn::generate_autoregressive_mask<Cpu>(0, 3); },
              ThrowsMessage<ValueError>(HasSubstr("generate_autoregressive_mask: batch_size")));
}

TEST(MultiHeadAttention, KeysAndPrinting) {
  const auto mha = nn::MultiHeadAttentionConfig(8, 2).init<Cpu>();
  EXPECT_EQ(mha.param_paths(), (std::vector<std::string>{"in_proj_weight", "in_proj_bias",
                                                         "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(mha.num_params(), 3 * 8 * 8 + 3 * 8 + 8 * 8 + 8);
  const auto no_bias = nn::MultiHeadAttentionConfig(8, 2).with_bias(false).init<Cpu>();
  EXPECT_EQ(no_bias.param_paths(), (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
  std::ostringstream s;
  s << mha;
  EXPECT_THAT(s.str(), HasSubstr("d_model: 8, n_heads: 2, dropout: 0.1, bias: true"));
  // PyTorch's initialisation: zero biases, in_proj_weight within Xavier's bound sqrt(6/(8+24)).
  mha.in_proj_bias->val().to_data().assert_eq(TensorData(Shape{24}, std::vector<float>(24, 0.f)));
  EXPECT_LE(mha.in_proj_weight.val().abs().max().into_scalar(), std::sqrt(6.0 / 32.0));
}

TEST(MultiHeadAttention, BadConfigsAndShapesAreNamed) {
  EXPECT_THAT([] { nn::MultiHeadAttentionConfig(6, 4).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("MultiHeadAttentionConfig::init: d_model must "
                                                   "be a positive multiple of n_heads, got "
                                                   "d_model = 6, n_heads = 4")));
  EXPECT_THAT([] { nn::MultiHeadAttentionConfig(4, 2).with_dropout(1.5).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("dropout must be in [0, 1], got 1.5")));
  const auto mha = nn::MultiHeadAttentionConfig(4, 2).init<Cpu>();
  const auto x = Tensor<Cpu, 3>::zeros(Shape{2, 3, 4});
  EXPECT_THAT([&] { mha.forward(nn::MhaInput<Cpu>::self_attn(Tensor<Cpu, 3>::zeros(Shape{2, 3, 5}))); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "MultiHeadAttention::forward: expected query [batch_size, seq_q, d_model] with "
                  "d_model = 4, got [2, 3, 5]")));
  EXPECT_THAT([&] { mha.forward(nn::MhaInput<Cpu>(x, Tensor<Cpu, 3>::zeros(Shape{2, 5, 4}), x)); },
              ThrowsMessage<ShapeError>(HasSubstr("got key [2, 5, 4], value [2, 3, 4]")));
  EXPECT_THAT(
      [&] {
        mha.forward(nn::MhaInput<Cpu>::self_attn(x).with_mask_pad(
            Tensor<Cpu, 2, Bool>::from_bool({{false, false}, {false, false}})));
      },
      ThrowsMessage<ShapeError>(HasSubstr("expected mask_pad [batch_size, seq_k] = [2, 3], got [2, 2]")));
  EXPECT_THAT(
      [&] {
        mha.forward(nn::MhaInput<Cpu>::self_attn(x).with_mask_attn(
            nn::generate_autoregressive_mask<Cpu>(3, 3)));
      },
      ThrowsMessage<ShapeError>(HasSubstr("expected mask_attn [batch_size, seq_q, seq_k] = [2, 3, 3]")));
}

// ---------------------------------------------------------------- transformers

template <class Config>
Config transformer_config(const json& f) {
  auto c = Config(f.at("d_model").get<std::int64_t>(), f.at("d_ff").get<std::int64_t>(),
                  f.at("n_heads").get<std::int64_t>(), f.at("n_layers").get<std::int64_t>());
  c.dropout = 0.0;
  c.norm_first = f.at("norm_first").get<bool>();
  c.activation = f.at("activation").get<std::string>();
  return c;
}

class TransformerEncoderTorch : public testing::TestWithParam<const char*> {};

TEST_P(TransformerEncoderTorch, ValuesAndGradientsMatchPyTorch) {
  const auto& f = fixtures().at(std::string("encoder_") + GetParam());
  auto enc = transformer_config<nn::TransformerEncoderConfig>(f).init<AD>();
  load_params(enc, f.at("params"));
  const auto x = tensor<AD, 3>(f.at("x"), true);
  const auto y = enc.forward(nn::TransformerEncoderInput<AD>(x)
                                 .with_mask_pad(mask<AD, 2>(f.at("mask_pad")))
                                 .with_mask_attn(mask<AD, 2>(f.at("mask_attn"))));
  y.to_data().assert_approx_eq(floats(f.at("y")), kTol);
  const auto grads = (y * tensor<AD, 3>(f.at("dy"))).sum().backward();
  x.grad(grads)->to_data().assert_approx_eq(floats(f.at("grads").at("x")), kTol);
  expect_param_grads(enc, grads, f.at("grads"));
  // Without masks, as inside a Sequential.
  enc.sequential_forward(x).to_data().assert_approx_eq(floats(f.at("y_nomask")), kTol);
}

TEST_P(TransformerEncoderTorch, DecoderValuesAndGradientsMatchPyTorch) {
  const auto& f = fixtures().at(std::string("decoder_") + GetParam());
  auto dec = transformer_config<nn::TransformerDecoderConfig>(f).init<AD>();
  load_params(dec, f.at("params"));
  const auto tgt = tensor<AD, 3>(f.at("target"), true);
  const auto mem = tensor<AD, 3>(f.at("memory"), true);
  const auto y = dec.forward(nn::TransformerDecoderInput<AD>(tgt, mem)
                                 .with_target_mask_attn(
                                     mask<AD, 2>(f.at("target_mask_attn")).unsqueeze<3>())
                                 .with_memory_mask_pad(mask<AD, 2>(f.at("memory_mask_pad"))));
  y.to_data().assert_approx_eq(floats(f.at("y")), kTol);
  const auto grads = (y * tensor<AD, 3>(f.at("dy"))).sum().backward();
  tgt.grad(grads)->to_data().assert_approx_eq(floats(f.at("grads").at("target")), kTol);
  mem.grad(grads)->to_data().assert_approx_eq(floats(f.at("grads").at("memory")), kTol);
  expect_param_grads(dec, grads, f.at("grads"));
}

INSTANTIATE_TEST_SUITE_P(NormFirstBothWays, TransformerEncoderTorch,
                         testing::Values("norm_last", "norm_first"));

TEST(TransformerEncoder, GradientsMatchFiniteDifferences) {
  AD::seed(11);
  auto c = nn::TransformerEncoderConfig(4, 6, 2, 1);
  c.dropout = 0.0;
  c.norm_first = true;
  const auto enc = c.init<AD>();
  test::Sampler rng(2);
  const auto x = rng.uniform<3>(Shape{1, 3, 4}, -1, 1);
  const auto causal = nn::generate_autoregressive_mask<AD>(1, 3);
  EXPECT_TRUE(test::gradcheck(
      "transformer_encoder",
      [&](Tensor<AD, 3> x) {
        return enc.forward(nn::TransformerEncoderInput<AD>(x).with_mask_attn(causal));
      },
      x));
}

TEST(TransformerEncoder, DropoutIsActiveOnlyWhileTraining) {
  AD::seed(1);
  auto c = nn::TransformerEncoderConfig(4, 8, 2, 1);
  c.dropout = 0.5;
  const auto enc = c.init<AD>();
  const auto x = Tensor<AD, 3>::ones(Shape{2, 3, 4});
  const auto a = enc.sequential_forward(x).to_data();
  const auto b = enc.sequential_forward(x).to_data();
  EXPECT_NE(a.to_vec<float>(), b.to_vec<float>());  // two masks
  const auto valid = enc.valid();
  const auto xi = Tensor<Cpu, 3>::ones(Shape{2, 3, 4});
  EXPECT_EQ(valid.sequential_forward(xi).to_data().to_vec<float>(),
            valid.sequential_forward(xi).to_data().to_vec<float>());
}

TEST(TransformerEncoder, KeysArePyTorchs) {
  const auto enc = nn::TransformerEncoderConfig(8, 16, 2, 2).init<Cpu>();
  const auto paths = enc.param_paths();
  EXPECT_EQ(paths.size(), 2u * 12u);
  EXPECT_EQ(paths[0], "layers.0.self_attn.in_proj_weight");
  EXPECT_THAT(paths, testing::Contains("layers.1.linear1.weight"));
  EXPECT_THAT(paths, testing::Contains("layers.1.norm2.bias"));
  const auto dec = nn::TransformerDecoderConfig(8, 16, 2, 1).init<Cpu>();
  EXPECT_THAT(dec.param_paths(), testing::Contains("layers.0.multihead_attn.out_proj.weight"));
  EXPECT_THAT(dec.param_paths(), testing::Contains("layers.0.norm3.weight"));
  std::ostringstream s;
  s << enc;
  EXPECT_THAT(s.str(), HasSubstr("d_model: 8, d_ff: 16, n_heads: 2, n_layers: 2"));
}

TEST(TransformerEncoder, BadConfigsAndDecoderInSequentialAreNamed) {
  EXPECT_THAT([] { nn::TransformerEncoderConfig(6, 8, 4, 1).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("TransformerEncoderConfig::init: d_model, "
                                                   "d_ff, n_heads and n_layers must be >= 1")));
  EXPECT_THAT([] { nn::TransformerDecoderConfig(4, 8, 2, 1).with_activation("tanh").init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "TransformerDecoderConfig::init: activation must be \"relu\" or \"gelu\", got "
                  "\"tanh\"")));
  const auto model = nn::SequentialConfig::from_json_string(
                         R"({"layers": [{"type": "transformer_decoder", "d_model": 4,
                             "d_ff": 8, "n_heads": 2, "n_layers": 1}]})")
                         .init<Cpu>();
  EXPECT_THAT([&] { model.forward(Tensor<Cpu, 3>::zeros(Shape{1, 2, 4})); },
              ThrowsMessage<ConfigError>(HasSubstr("TransformerDecoder: cannot run inside a "
                                                   "Sequential: its forward needs the memory")));
}

TEST(PositionWiseFeedForward, IsLinearActivationLinear) {
  auto ff = nn::PositionWiseFeedForwardConfig(2, 3).with_activation("relu").init<Cpu>();
  ff.linear_inner.weight.set(Tensor<Cpu, 2>::from_floats({{1.f, 0.f}, {0.f, 1.f}, {1.f, 1.f}}));
  ff.linear_inner.bias->set(Tensor<Cpu, 1>::from_floats({0.f, -1.f, 0.f}));
  ff.linear_outer.weight.set(Tensor<Cpu, 2>::from_floats({{1.f, 1.f, 1.f}, {1.f, -1.f, 0.f}}));
  ff.linear_outer.bias->set(Tensor<Cpu, 1>::from_floats({0.5f, 0.f}));
  // x = [2, 0.5]: inner [2, -0.5, 2.5] -> relu [2, 0, 2.5] -> outer [5, 2].
  ff.forward(Tensor<Cpu, 2>::from_floats({{2.f, 0.5f}}))
      .to_data()
      .assert_approx_eq(TensorData::from<float>({{5.f, 2.f}}), Tolerance::rel_abs(1e-6, 1e-6));
  EXPECT_EQ(ff.param_paths(), (std::vector<std::string>{"linear_inner.weight", "linear_inner.bias",
                                                        "linear_outer.weight", "linear_outer.bias"}));
}

// ---------------------------------------------------------------- encodings

TEST(PositionalEncoding, AddsThePapersSinusoids) {
  const auto& f = fixtures().at("positional");
  const auto pe = nn::PositionalEncodingConfig(6).init();
  pe.forward(tensor<Cpu, 3>(f.at("x"))).to_data().assert_approx_eq(
      floats(f.at("y")), Tolerance::rel_abs(1e-6, 1e-6));
  // Position 0: sin 0 = 0, cos 0 = 1 by hand.
  pe.forward(Tensor<Cpu, 3>::zeros(Shape{1, 1, 6}))
      .to_data()
      .assert_eq(TensorData::from<float>({{{0.f, 1.f, 0.f, 1.f, 0.f, 1.f}}}));
  EXPECT_THAT([] { nn::PositionalEncodingConfig(5).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("PositionalEncodingConfig::init: d_model must "
                                                   "be even")));
  const auto short_pe = nn::PositionalEncodingConfig(6).with_max_sequence_size(4).init();
  EXPECT_THAT([&] { short_pe.forward(Tensor<Cpu, 3>::zeros(Shape{1, 5, 6})); },
              ThrowsMessage<ShapeError>(HasSubstr("PositionalEncoding::forward: expected input "
                                                  "[batch_size, seq_length, 6] with seq_length "
                                                  "<= max_sequence_size = 4, got [1, 5, 6]")));
}

TEST(RotaryEncoding, RotatesInterleavedPairsAsRoFormer) {
  const auto& f = fixtures().at("rotary");
  const auto rope = nn::RotaryEncodingConfig(8, 4).init();
  const auto x = tensor<AD, 4>(f.at("x"));
  rope.forward(x).to_data().assert_approx_eq(floats(f.at("y_start").at("0")),
                                             Tolerance::rel_abs(1e-5, 1e-6));
  rope.forward(x, 2).to_data().assert_approx_eq(floats(f.at("y_start").at("2")),
                                                Tolerance::rel_abs(1e-5, 1e-6));
  // A rotation: the gradient of sum(y·y) is 2x (norms are kept).
  const auto xg = x.require_grad();
  const auto y = rope.forward(xg, 1);
  const auto grads = (y * y).sum().backward();
  xg.grad(grads)->to_data().assert_approx_eq((x.inner() * 2.f).to_data(),
                                             Tolerance::rel_abs(1e-5, 1e-6));
  EXPECT_THAT([&] { rope.forward(x, 6); },
              ThrowsMessage<ShapeError>(HasSubstr("RotaryEncoding::forward: expected input [..., "
                                                  "seq_length, 4] with start + seq_length <= "
                                                  "max_sequence_length = 8")));
  EXPECT_THAT([] { nn::RotaryEncodingConfig(8, 3).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("RotaryEncodingConfig::init: d_model must be "
                                                   "even")));
}

// ---------------------------------------------------------------- in a Sequential

TEST(AttentionSequential, SpecsBuildAndRun) {
  AD::seed(4);
  const auto model = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "linear", "d_input": 3, "d_output": 8},
      {"type": "positional_encoding", "d_model": 8},
      {"type": "rotary_encoding", "max_sequence_length": 16, "d_model": 8},
      {"type": "multi_head_attention", "d_model": 8, "n_heads": 2, "dropout": 0.0},
      {"type": "transformer_encoder", "d_model": 8, "d_ff": 16, "n_heads": 2, "n_layers": 2,
       "dropout": 0.0},
      {"type": "position_wise_feed_forward", "d_model": 8, "d_ff": 4, "dropout": 0.0}]})")
                         .init<AD>();
  const auto x = Tensor<AD, 3>::ones(Shape{2, 5, 3}).require_grad();
  const auto y = std::get<Tensor<AD, 3>>(model.forward_any(x));
  EXPECT_EQ(y.shape(), (Shape{2, 5, 8}));
  EXPECT_THAT(model.param_paths(), testing::Contains("4.layers.1.self_attn.in_proj_weight"));
  EXPECT_THAT(model.param_paths(), testing::Contains("3.out_proj.bias"));
  const auto grads = y.sum().backward();
  EXPECT_TRUE(x.grad(grads).has_value());
}

TEST(AttentionSequential, BadSpecsAreNamed) {
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(R"({"layers": [
            {"type": "linear", "d_input": 3, "d_output": 6},
            {"type": "multi_head_attention", "d_model": 8, "n_heads": 2}]})")
            .validate();
      },
      ThrowsMessage<ConfigError>(HasSubstr("(multi_head_attention): d_model is 8")));
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(
            R"({"layers": [{"type": "transformer_encoder", "d_model": 8, "d_ff": 8,
                "n_heads": 3, "n_layers": 1}]})")
            .validate();
      },
      ThrowsMessage<ConfigError>(HasSubstr("n_heads must divide d_model")));
  const auto model = nn::SequentialConfig::from_json_string(
                         R"({"layers": [{"type": "multi_head_attention", "d_model": 4,
                             "n_heads": 2}]})")
                         .init<Cpu>();
  EXPECT_THAT([&] { model.forward(Tensor<Cpu, 2>::zeros(Shape{2, 4})); },
              ThrowsMessage<ShapeError>(HasSubstr("layer 0 (multi_head_attention)")));
}

}  // namespace
}  // namespace kiln
