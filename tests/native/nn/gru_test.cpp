// nn::Gru against torch.nn.GRU (PyTorch 1.13, batch_first=True; values and autograd
// gradients from make_rnn_fixtures.py -> rnn_fixtures.json), the reference case
// gru_reset_gate_after_matmul (copied into the fixture), finite differences, PyTorch's keys,
// the Sequential form and bad configs and shapes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/kiln.hpp"
#include "kiln/nn/gru.hpp"
#include "nn/rnn_fixtures.hpp"
#include "support/gradcheck.hpp"

namespace kiln::nn {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;
using test::rnn::AD;
using test::rnn::Json;
using test::rnn::expect_close;

GruConfig config_of(const Json& m) {
  return GruConfig(m.at("d_input").get<std::int64_t>(), m.at("d_hidden").get<std::int64_t>(),
                   m.at("bias").get<bool>())
      .with_num_layers(m.at("num_layers").get<std::int64_t>())
      .with_bidirectional(m.at("bidirectional").get<bool>());
}

void check_against_torch(const std::string& name) {
  SCOPED_TRACE(name);
  const Json& m = test::rnn::module_fixture(name);
  auto gru = config_of(m).init<AD>();
  test::rnn::load_state_dict(gru, m.at("state_dict"));

  const auto x = test::rnn::tensor<AD, 3>(m.at("x")).require_grad();
  std::optional<Tensor<AD, 3>> h0;
  if (m.contains("h0")) h0 = test::rnn::tensor<AD, 3>(m.at("h0")).require_grad();
  const auto [output, hidden] = gru.forward(x, h0);
  expect_close(output.to_data(), m.at("output"), "output");
  expect_close(hidden.to_data(), m.at("h_n"), "h_n");

  const auto loss = (output * test::rnn::tensor<AD, 3>(m.at("dy_output"))).sum() +
                    (hidden * test::rnn::tensor<AD, 3>(m.at("dy_h_n"))).sum();
  const auto grads = loss.backward();
  expect_close(x.grad(grads)->to_data(), m.at("grad_x"), "grad x");
  if (h0) expect_close(h0->grad(grads)->to_data(), m.at("grad_h0"), "grad h0");
  int checked = 0;
  auto check_grad = [&](const std::string& key, const auto& p) {
    expect_close(p.val().grad(grads)->to_data(), m.at("grad_" + key), "grad " + key);
    ++checked;
  };
  gru.visit(check_grad);
  EXPECT_EQ(checked, static_cast<int>(m.at("state_dict").size()));

  const auto inference = gru.valid();
  std::optional<Tensor<Cpu, 3>> cpu_h0;
  if (h0) cpu_h0 = h0->inner();
  const auto out_cpu = inference.forward(x.inner(), cpu_h0);
  expect_close(out_cpu.output.to_data(), m.at("output"), "output on Cpu");
  expect_close(out_cpu.hidden.to_data(), m.at("h_n"), "h_n on Cpu");
}

TEST(Gru, TwoLayerBidirectionalMatchesTorchValuesAndGradients) {
  check_against_torch("gru_2layer_bidirectional");
}
TEST(Gru, NoBiasZeroStateMatchesTorch) { check_against_torch("gru_1layer_no_bias_zero_state"); }
TEST(Gru, ThreeLayersMatchTorch) { check_against_torch("gru_3layer_unidirectional"); }

// ../shared/cases gru_reset_gate_after_matmul: r multiplies W_hn h + b_hn (PyTorch, cuDNN),
// not h before the matmul; h' mixes with z on the old state. One objective per output.
TEST(Gru, SharedCaseResetGateAfterMatmul) {
  const Json& c = test::rnn::fixtures().at("shared_cases").at(0);
  ASSERT_EQ(c.at("id"), "gru_reset_gate_after_matmul");
  const Json& in = c.at("inputs");
  const Json& ex = c.at("expected");
  const Tolerance tol{c.at("tolerance").at("abs").get<double>(), c.at("tolerance").at("rel").get<double>()};
  const auto state = [](const Json& t) {  // the case's h [1, 3] is [num_layers·D = 1, 1, 3]
    Json out = t;
    out["shape"] = {1, t.at("shape")[0], t.at("shape")[1]};
    return out;
  };
  for (const std::string objective : {"output", "h_n"}) {
    SCOPED_TRACE(objective);
    auto gru = GruConfig(2, 3, true).init<AD>();
    Json sd;
    sd["weight_ih_l0"] = in.at("w_ih");
    sd["weight_hh_l0"] = in.at("w_hh");
    sd["bias_ih_l0"] = in.at("b_ih");
    sd["bias_hh_l0"] = in.at("b_hh");
    test::rnn::load_state_dict(gru, sd);
    const auto x = test::rnn::tensor<AD, 3>(in.at("x")).require_grad();
    const auto h0 = test::rnn::tensor<AD, 3>(state(in.at("h0"))).require_grad();
    const auto [output, hidden] = gru.forward(x, h0);
    expect_close(output.to_data(), ex.at("output"), "output", tol);
    expect_close(hidden.to_data(), state(ex.at("h_n")), "h_n", tol);
    const auto loss = objective == "output"
                          ? (output * test::rnn::tensor<AD, 3>(in.at("dy_output"))).sum()
                          : (hidden * test::rnn::tensor<AD, 3>(state(in.at("dy_h_n")))).sum();
    const auto grads = loss.backward();
    expect_close(x.grad(grads)->to_data(), ex.at("grad_x__" + objective), "grad x", tol);
    expect_close(h0.grad(grads)->to_data(), state(ex.at("grad_h0__" + objective)), "grad h0", tol);
    expect_close(gru.weights.cells[0].weight_hh.val().grad(grads)->to_data(),
                 ex.at("grad_w_hh__" + objective), "grad w_hh", tol);
  }
}

TEST(Gru, GradcheckThroughInputAndState) {
  test::Sampler rng(12);
  const auto x = rng.uniform<3>(Shape{2, 3, 2}, -1, 1);
  const auto h0 = rng.uniform<3>(Shape{4, 2, 2}, -1, 1);
  AD::seed(6);
  const auto gru = GruConfig(2, 2, true).with_num_layers(2).with_bidirectional(true).init<AD>();
  const auto f = [gru](Tensor<AD, 3> x, Tensor<AD, 3> h0) {
    const auto r = gru.forward(x, h0);
    return Tensor<AD, 1>::cat({r.output.template reshape<1>(std::array<std::int64_t, 1>{-1}),
                               r.hidden.template reshape<1>(std::array<std::int64_t, 1>{-1})},
                              0);
  };
  EXPECT_TRUE(test::gradcheck("gru", f, x, h0));
}

TEST(Gru, WeightGradientsMatchFiniteDifferences) {
  AD::seed(9);
  const auto gru = GruConfig(2, 2, true).with_num_layers(2).with_bidirectional(true).init<AD>();
  const auto x = Tensor<AD, 3>::random(Shape{2, 3, 2}, Distribution::uniform(-1, 1));
  const auto h0 = Tensor<AD, 3>::random(Shape{4, 2, 2}, Distribution::uniform(-1, 1));
  const auto run = [&](const Gru<AD>& m) {
    const auto r = m.forward(x, h0);
    return Tensor<AD, 1>::cat({r.output.template reshape<1>(std::array<std::int64_t, 1>{-1}),
                               r.hidden.template reshape<1>(std::array<std::int64_t, 1>{-1})},
                              0);
  };
  // bias_hh holds b_hn, which the reset gate scales (the GRU-specific path).
  for (const char* key : {"weight_ih_l1_reverse", "weight_hh_l0", "bias_hh_l0_reverse", "bias_hh_l1"}) {
    test::rnn::expect_param_grad_matches_differences(gru, key, run);
  }
}

TEST(Gru, ParameterKeysArePyTorchs) {
  const auto gru = GruConfig(3, 2, true).with_bidirectional(true).init<Cpu>();
  EXPECT_EQ(gru.param_paths(),
            (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                      "weight_ih_l0_reverse", "weight_hh_l0_reverse",
                                      "bias_ih_l0_reverse", "bias_hh_l0_reverse"}));
  EXPECT_EQ(gru.weights.cells[0].weight_ih.shape(), (Shape{6, 3}));
  EXPECT_EQ(gru.weights.cells[1].weight_hh.shape(), (Shape{6, 2}));
}

TEST(Gru, BadShapesAndConfigsAreNamed) {
  const auto gru = GruConfig(4, 3, true).with_bidirectional(true).init<Cpu>();
  EXPECT_THAT([&] { gru.forward(Tensor<Cpu, 3>::zeros(Shape{2, 5, 3})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Gru::forward: expected input [batch_size, seq_length, d_input] with "
                  "d_input = 4 (batch_size and seq_length >= 1), got [2, 5, 3]")));
  EXPECT_THAT([&] { gru.forward(Tensor<Cpu, 3>::zeros(Shape{2, 5, 4}), Tensor<Cpu, 3>::zeros(Shape{1, 2, 3})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Gru::forward: expected hidden [num_layers·D, batch_size, d_hidden] = [2, 2, 3] "
                  "(num_layers = 1, D = 2), got [1, 2, 3]")));
  EXPECT_EQ(gru.forward(Tensor<Cpu, 3>::zeros(Shape{2, 5, 4})).output.shape(), (Shape{2, 5, 6}));
  EXPECT_THAT([] { GruConfig(3, 0, true).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("GruConfig::init: d_hidden must be >= 1, got 0")));
  EXPECT_THAT([] { GruConfig(3, 2, true).with_dropout(-0.1).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("dropout must be in [0, 1], got -0.1")));
  EXPECT_THAT([] {
    SequentialConfig::from_json_string(R"({"layers": [
        {"type": "gru", "d_input": 3, "d_hidden": 2, "bias": true},
        {"type": "linear", "d_input": 3, "d_output": 1}]})").validate();
  }, ThrowsMessage<ConfigError>(HasSubstr("layers[1] (linear): d_input is 3 but the previous layer outputs 2")));
  EXPECT_THAT([] {
    SequentialConfig::from_json_string(R"({"layers": [
        {"type": "gru", "d_input": 3, "d_hidden": 2}]})").validate();
  }, ThrowsMessage<ConfigError>(HasSubstr("layers[0] (gru): missing required field \"bias\"")));
}

TEST(Gru, InASequentialItIsTheOutputSequence) {
  AD::seed(2);
  const auto model = SequentialConfig().add(GruConfig(3, 4, false).with_num_layers(2)).init<AD>();
  EXPECT_EQ(model.param_paths(), (std::vector<std::string>{"0.weight_ih_l0", "0.weight_hh_l0",
                                                           "0.weight_ih_l1", "0.weight_hh_l1"}));
  const auto x = Tensor<AD, 3>::ones(Shape{2, 5, 3});
  const auto& gru = model.layers[0].get<Gru<AD>>();
  model.forward(x).to_data().assert_approx_eq(gru.forward(x).output.to_data(), Tolerance::exact());
  std::ostringstream out;
  out << gru;
  EXPECT_EQ(out.str(), "Gru {d_input: 3, d_hidden: 4, bias: false, num_layers: 2, "
                       "bidirectional: false, dropout: 0, params: 180}");
}

}  // namespace
}  // namespace kiln::nn
