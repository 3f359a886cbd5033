// nn::Lstm against torch.nn.LSTM (PyTorch 1.13, batch_first=True; values and autograd
// gradients from make_rnn_fixtures.py -> rnn_fixtures.json): output, final state and the
// gradients of the input, the initial state and every weight, stacked and bidirectional;
// finite differences (gradcheck); PyTorch's parameter keys; its Sequential form; bad configs
// and shapes rejected by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/kiln.hpp"
#include "kiln/nn/lstm.hpp"
#include "nn/rnn_fixtures.hpp"
#include "support/gradcheck.hpp"

namespace kiln::nn {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;
using test::rnn::AD;
using test::rnn::Json;
using test::rnn::expect_close;

LstmConfig config_of(const Json& m) {
  return LstmConfig(m.at("d_input").get<std::int64_t>(), m.at("d_hidden").get<std::int64_t>(),
                    m.at("bias").get<bool>())
      .with_num_layers(m.at("num_layers").get<std::int64_t>())
      .with_bidirectional(m.at("bidirectional").get<bool>());
}

void check_against_torch(const std::string& name) {
  SCOPED_TRACE(name);
  const Json& m = test::rnn::module_fixture(name);
  auto lstm = config_of(m).init<AD>();
  test::rnn::load_state_dict(lstm, m.at("state_dict"));

  const auto x = test::rnn::tensor<AD, 3>(m.at("x")).require_grad();
  std::optional<LstmState<AD>> state;
  if (m.contains("h0")) {
    state = LstmState<AD>{test::rnn::tensor<AD, 3>(m.at("c0")).require_grad(),
                          test::rnn::tensor<AD, 3>(m.at("h0")).require_grad()};
  }
  const auto [output, final_state] = lstm.forward(x, state);
  expect_close(output.to_data(), m.at("output"), "output");
  expect_close(final_state.hidden.to_data(), m.at("h_n"), "h_n");
  expect_close(final_state.cell.to_data(), m.at("c_n"), "c_n");

  const auto loss = (output * test::rnn::tensor<AD, 3>(m.at("dy_output"))).sum() +
                    (final_state.hidden * test::rnn::tensor<AD, 3>(m.at("dy_h_n"))).sum() +
                    (final_state.cell * test::rnn::tensor<AD, 3>(m.at("dy_c_n"))).sum();
  const auto grads = loss.backward();
  expect_close(x.grad(grads)->to_data(), m.at("grad_x"), "grad x");
  if (state) {
    expect_close(state->hidden.grad(grads)->to_data(), m.at("grad_h0"), "grad h0");
    expect_close(state->cell.grad(grads)->to_data(), m.at("grad_c0"), "grad c0");
  }
  int checked = 0;
  auto check_grad = [&](const std::string& key, const auto& p) {
    expect_close(p.val().grad(grads)->to_data(), m.at("grad_" + key), "grad " + key);
    ++checked;
  };
  lstm.visit(check_grad);
  EXPECT_EQ(checked, static_cast<int>(m.at("state_dict").size()));

  // The inference backend gives the same values.
  const auto inference = lstm.valid();
  std::optional<LstmState<Cpu>> cpu_state;
  if (state) cpu_state = LstmState<Cpu>{state->cell.inner(), state->hidden.inner()};
  const auto out_cpu = inference.forward(x.inner(), cpu_state);
  expect_close(out_cpu.output.to_data(), m.at("output"), "output on Cpu");
  expect_close(out_cpu.state.cell.to_data(), m.at("c_n"), "c_n on Cpu");
}

TEST(Lstm, TwoLayerBidirectionalMatchesTorchValuesAndGradients) {
  check_against_torch("lstm_2layer_bidirectional");
}

TEST(Lstm, NoBiasZeroStateMatchesTorch) { check_against_torch("lstm_1layer_no_bias_zero_state"); }

TEST(Lstm, ParameterKeysArePyTorchsInItsOrder) {
  const auto lstm = LstmConfig(3, 2, true).with_num_layers(2).with_bidirectional(true).init<Cpu>();
  // torch.nn.LSTM(3, 2, num_layers=2, bidirectional=True).state_dict().keys()
  EXPECT_EQ(lstm.param_paths(),
            (std::vector<std::string>{
                "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse",
                "bias_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
                "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse",
                "bias_hh_l1_reverse"}));
  // Layer 1 reads both directions of layer 0: [4·d_hidden, 2·d_hidden].
  EXPECT_EQ(lstm.weights.cells[2].weight_ih.shape(), (Shape{8, 4}));
  EXPECT_EQ(lstm.weights.cells[0].weight_ih.shape(), (Shape{8, 3}));
  EXPECT_EQ(lstm.num_params(), 2 * (8 * 3 + 8 * 2 + 16) + 2 * (8 * 4 + 8 * 2 + 16));
  const auto no_bias = LstmConfig(3, 2, false).init<Cpu>();
  EXPECT_EQ(no_bias.param_paths(), (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
}

TEST(Lstm, InitIsUniformWithinOneOverSqrtHidden) {
  AD::seed(3);
  const auto lstm = LstmConfig(5, 16, true).init<Cpu>();
  auto check = [](const std::string& key, const auto& p) {
    const auto v = p.val().to_data().template to_vec<float>();
    for (float e : v) ASSERT_LE(std::abs(e), 0.25f) << key;
    EXPECT_GT(*std::max_element(v.begin(), v.end()), 0.15f) << key;
    EXPECT_LT(*std::min_element(v.begin(), v.end()), -0.15f) << key;
  };
  lstm.visit(check);
}

TEST(Lstm, GradcheckThroughInputAndState) {
  test::Sampler rng(11);
  const auto x = rng.uniform<3>(Shape{2, 3, 2}, -1, 1);
  const auto h0 = rng.uniform<3>(Shape{4, 2, 2}, -1, 1);
  const auto c0 = rng.uniform<3>(Shape{4, 2, 2}, -1, 1);
  AD::seed(5);
  const auto lstm = LstmConfig(2, 2, true).with_num_layers(2).with_bidirectional(true).init<AD>();
  const auto f = [lstm](Tensor<AD, 3> x, Tensor<AD, 3> h0, Tensor<AD, 3> c0) {
    const auto r = lstm.forward(x, LstmState<AD>{c0, h0});
    return Tensor<AD, 1>::cat({r.output.template reshape<1>(std::array<std::int64_t, 1>{-1}),
                               r.state.hidden.template reshape<1>(std::array<std::int64_t, 1>{-1}),
                               r.state.cell.template reshape<1>(std::array<std::int64_t, 1>{-1})},
                              0);
  };
  EXPECT_TRUE(test::gradcheck("lstm", f, x, h0, c0));
}

TEST(Lstm, WeightGradientsMatchFiniteDifferences) {
  AD::seed(8);
  const auto lstm = LstmConfig(2, 2, true).with_num_layers(2).with_bidirectional(true).init<AD>();
  const auto x = Tensor<AD, 3>::random(Shape{2, 3, 2}, Distribution::uniform(-1, 1));
  const auto c0 = Tensor<AD, 3>::random(Shape{4, 2, 2}, Distribution::uniform(-1, 1));
  const auto run = [&](const Lstm<AD>& m) {
    const auto r = m.forward(x, LstmState<AD>{c0, c0 * 0.5f});
    return Tensor<AD, 1>::cat({r.output.template reshape<1>(std::array<std::int64_t, 1>{-1}),
                               r.state.cell.template reshape<1>(std::array<std::int64_t, 1>{-1})},
                              0);
  };
  for (const char* key : {"weight_ih_l1_reverse", "weight_hh_l0", "bias_hh_l0_reverse", "bias_ih_l1"}) {
    test::rnn::expect_param_grad_matches_differences(lstm, key, run);
  }
}

TEST(Lstm, DropoutActsBetweenLayersWhileTraining) {
  AD::seed(1);
  const auto lstm = LstmConfig(2, 3, true).with_num_layers(2).with_dropout(1.0).init<AD>();
  const auto x = Tensor<AD, 3>::ones(Shape{1, 4, 2}).require_grad();
  // p = 1 zeroes layer 0's output, so nothing reaches x through layer 1's input.
  const auto grads = lstm.forward(x).output.sum().backward();
  const auto g = x.grad(grads);
  if (g) g->to_data().assert_approx_eq(TensorData(Shape{1, 4, 2}, std::vector<float>(8, 0.f)), Tolerance::exact());
  // On the inference backend there is no dropout: the output depends on x.
  const auto inference = lstm.valid();
  const auto a = inference.forward(Tensor<Cpu, 3>::ones(Shape{1, 4, 2})).output.to_data();
  const auto b = inference.forward(Tensor<Cpu, 3>::zeros(Shape{1, 4, 2})).output.to_data();
  EXPECT_FALSE(a == b);
}

TEST(Lstm, BadShapesAreShapeErrorsNamingTheDims) {
  const auto lstm = LstmConfig(4, 3, true).with_num_layers(2).init<Cpu>();
  EXPECT_THAT([&] { lstm.forward(Tensor<Cpu, 3>::zeros(Shape{2, 5, 3})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Lstm::forward: expected input [batch_size, seq_length, d_input] with "
                  "d_input = 4 (batch_size and seq_length >= 1), got [2, 5, 3]")));
  EXPECT_THAT([&] { lstm.forward(Tensor<Cpu, 3>::zeros(Shape{2, 0, 4})); },
              ThrowsMessage<ShapeError>(HasSubstr("got [2, 0, 4]")));
  const auto x = Tensor<Cpu, 3>::zeros(Shape{2, 5, 4});
  const auto good = Tensor<Cpu, 3>::zeros(Shape{2, 2, 3});
  const auto bad = Tensor<Cpu, 3>::zeros(Shape{1, 2, 3});
  EXPECT_THAT([&] { lstm.forward(x, LstmState<Cpu>{good, bad}); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Lstm::forward: expected state.hidden [num_layers·D, batch_size, d_hidden] = "
                  "[2, 2, 3] (num_layers = 2, D = 1), got [1, 2, 3]")));
  EXPECT_THAT([&] { lstm.forward(x, LstmState<Cpu>{bad, good}); },
              ThrowsMessage<ShapeError>(HasSubstr("expected state.cell")));
  EXPECT_NO_THROW(lstm.forward(x, LstmState<Cpu>{good, good}));
  EXPECT_THAT([] { Lstm<Cpu>{}.forward(Tensor<Cpu, 3>::zeros(Shape{1, 1, 1})); },
              ThrowsMessage<StateError>(HasSubstr("Lstm::forward: the layer has no weights")));
}

TEST(Lstm, BadConfigsAreConfigErrorsNamingTheField) {
  EXPECT_THAT([] { LstmConfig(0, 3, true).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("LstmConfig::init: d_input must be >= 1, got 0")));
  EXPECT_THAT([] { LstmConfig(2, -1, true).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("d_hidden must be >= 1, got -1")));
  EXPECT_THAT([] { LstmConfig(2, 3, true).with_num_layers(0).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("num_layers must be >= 1, got 0")));
  EXPECT_THAT([] { LstmConfig(2, 3, true).with_dropout(1.5).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("dropout must be in [0, 1], got 1.5")));
  EXPECT_THAT([] { LstmConfig(2, 1 << 30, true).init<Cpu>(); },
              ThrowsMessage<LimitError>(HasSubstr("LstmConfig::init")));
}

TEST(Lstm, InASequentialItIsTheOutputSequence) {
  const auto config = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "lstm", "d_input": 3, "d_hidden": 4, "bias": true, "bidirectional": true},
      {"type": "linear", "d_input": 8, "d_output": 2}]})");
  AD::seed(9);
  const auto model = config.init<AD>();
  EXPECT_EQ(model.param_paths()[0], "0.weight_ih_l0");
  EXPECT_EQ(model.param_paths()[4], "0.weight_ih_l0_reverse");
  const auto x = Tensor<AD, 3>::ones(Shape{2, 5, 3});
  const auto y = model.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 5, 2}));
  // The same as the layer's forward from a zero state, then the linear.
  const auto& lstm = model.layers[0].get<Lstm<AD>>();
  const auto& linear = model.layers[1].get<Linear<AD>>();
  y.to_data().assert_approx_eq(linear.forward(lstm.forward(x).output).to_data(), Tolerance::exact());

  // The spec's shape rule and the rank rule name the layer.
  EXPECT_THAT([] {
    SequentialConfig::from_json_string(R"({"layers": [
        {"type": "linear", "d_input": 3, "d_output": 5},
        {"type": "lstm", "d_input": 4, "d_hidden": 4, "bias": true}]})").validate();
  }, ThrowsMessage<ConfigError>(HasSubstr("layers[1] (lstm): d_input is 4 but the previous layer outputs")));
  EXPECT_THAT([] {
    SequentialConfig::from_json_string(R"({"layers": [
        {"type": "lstm", "d_input": 3, "d_hidden": 0, "bias": true}]})").validate();
  }, ThrowsMessage<ConfigError>(HasSubstr("layers[0] (lstm): d_hidden must be >= 1, got 0")));
  const auto single = SequentialConfig().add(LstmConfig(3, 4, true)).init<Cpu>();
  EXPECT_THAT([&] { single.forward(Tensor<Cpu, 2>::zeros(Shape{2, 3})); },
              ThrowsMessage<Error>(HasSubstr("[batch_size, seq_length, d_input]")));
}

TEST(Lstm, PrintsItsConfig) {
  const auto lstm = LstmConfig(8, 16, true).with_num_layers(2).with_bidirectional(true).init<Cpu>();
  std::ostringstream out;
  out << lstm;
  EXPECT_EQ(out.str(),
            "Lstm {d_input: 8, d_hidden: 16, bias: true, num_layers: 2, bidirectional: true, "
            "dropout: 0, params: " + std::to_string(lstm.num_params()) + "}");
  EXPECT_EQ(LstmConfig(8, 16, true).with_num_layers(2), LstmConfig::from_json_string(
      R"({"d_input": 8, "d_hidden": 16, "bias": true, "num_layers": 2})"));
}

}  // namespace
}  // namespace kiln::nn
