// The layers and losses issue 15 makes Sequential spec types and extends (embedding with
// padding_idx, conv_transpose2d, instance_norm, rms_norm, layer_norm over several trailing
// dims, max_pool1d, avg_pool1d, adaptive_avg_pool1d, batch_norm with momentum none,
// SmoothL1Loss, BCE pos_weight) and the functional forms of kiln/nn/functional/: against the
// round-2 PyTorch 1.13 reference cases (tests/native/cases/round2.jsonl, read here), PyTorch
// values pasted with their command, hand values and finite differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/gradcheck.hpp"
#include "support/paths.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

/// A case of tests/native/cases/round2.jsonl by id.
json round2_case(const std::string& id) {
  std::string path = KILN_CASES_FILE;
  path = path.substr(0, path.rfind('/')) + "/round2.jsonl";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line);
    if (j.at("id") == id) return j;
  }
  throw std::runtime_error("no case " + id);
}

/// A case tensor ({shape, dtype, data}) as TensorData (int64 -> i32, shape [] -> [1]).
TensorData tensor_of(const json& t) {
  std::vector<std::int64_t> dims = t.at("shape").get<std::vector<std::int64_t>>();
  if (dims.empty()) dims = {1};
  const Shape shape(dims);
  const auto dtype = t.at("dtype").get<std::string>();
  if (dtype.rfind("int", 0) == 0) {
    std::vector<std::int32_t> v;
    for (const auto& x : t.at("data")) v.push_back(x.get<std::int32_t>());
    return TensorData(shape, v);
  }
  std::vector<float> v;
  for (const auto& x : t.at("data")) {
    if (x.is_string()) {
      const auto s = x.get<std::string>();
      v.push_back(s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY);
    } else {
      v.push_back(x.get<float>());
    }
  }
  return TensorData(shape, v);
}

Tolerance tolerance_of(const json& c) {
  return Tolerance::rel_abs(c.at("tolerance").at("rel").get<double>(),
                            c.at("tolerance").at("abs").get<double>());
}

// ------------------------------------------------------------------ embedding

TEST(EmbeddingPaddingIdx, RoundTwoCaseBothPaddingRows) {
  const json c = round2_case("embedding_padding_idx");
  const auto tol = tolerance_of(c);
  const auto idx = Tensor<AD, 2, Int>::from_data(tensor_of(c["inputs"]["idx"]));
  for (const auto& [name, pad] : std::vector<std::pair<std::string, std::int64_t>>{
           {"emb_pad0", 0}, {"emb_pad_last", -1}}) {
    auto emb = nn::EmbeddingConfig(4, 3).with_padding_idx(pad).init<AD>();
    emb.weight.set(Tensor<AD, 2>::from_data(tensor_of(c["inputs"]["weight"])));
    EXPECT_EQ(*emb.padding_idx, pad < 0 ? 3 : 0);
    const auto out = emb.forward(idx);
    out.to_data().assert_approx_eq(tensor_of(c["expected"][name]), tol);
    const auto dy = Tensor<AD, 3>::from_data(tensor_of(c["inputs"]["dy_" + name]));
    const auto grads = (out * dy).sum().backward();
    emb.weight.val().grad(grads)->to_data().assert_approx_eq(
        tensor_of(c["expected"]["grad_weight__" + name]), tol);
    // The functional form on the same table.
    const auto w = Tensor<AD, 2>::from_data(tensor_of(c["inputs"]["weight"])).require_grad();
    const auto f = nn::functional::embedding(idx, w, pad);
    const auto g = (f * dy).sum().backward();
    w.grad(g)->to_data().assert_approx_eq(tensor_of(c["expected"]["grad_weight__" + name]), tol);
  }
}

TEST(EmbeddingPaddingIdx, InitZeroesTheRowAndChecksTheRange) {
  AD::seed(3);
  const auto emb = nn::EmbeddingConfig(5, 2).with_padding_idx(-2).init<Cpu>();
  const auto w = emb.weight.val().to_data().to_vec<float>();
  EXPECT_EQ(w[6], 0.f);
  EXPECT_EQ(w[7], 0.f);
  EXPECT_NE(w[0], 0.f);
  EXPECT_THAT([] { nn::EmbeddingConfig(4, 2).with_padding_idx(4).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "EmbeddingConfig::init: padding_idx must be in [-4, 4) (n_embedding = 4), got 4")));
  EXPECT_THAT([] { nn::EmbeddingConfig(4, 2).with_padding_idx(-5).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("got -5")));
}

TEST(EmbeddingSequential, FloatIndicesFromTheSpecAndTheirChecks) {
  const auto model = nn::SequentialConfig::from_json_string(
                         R"({"layers": [{"type": "embedding", "n_embedding": 3, "d_model": 2}]})")
                         .init<Cpu>();
  const auto x = Tensor<Cpu, 2>::from_floats({{2.f, 0.f}});
  const auto y = model.forward_any(x);
  EXPECT_EQ(nn::activation_shape<Cpu>(y), Shape({1, 2, 2}));
  EXPECT_THAT([&] { model.forward_any(Tensor<Cpu, 2>::from_floats({{0.5f}})); },
              ThrowsMessage<ValueError>(HasSubstr("expected integer indices, got 0.5 at [0, 0]")));
  EXPECT_THAT([&] { model.forward_any(Tensor<Cpu, 2>::from_floats({{3.f}})); },
              ThrowsMessage<IndexError>(HasSubstr("index 3 at [0, 0] is out of range [0, 3)")));
  EXPECT_EQ(nn::SequentialConfig::from_json_string(
                R"({"layers": [{"type": "embedding", "n_embedding": 3, "d_model": 4},
                               {"type": "linear", "d_input": 4, "d_output": 2}]})")
                .output_item_shape({7}),
            (std::vector<std::int64_t>{7, 2}));
}

// ------------------------------------------------------------------ spec types

TEST(RegisteredLayers, NewTypesBuildFromSpecsWithShapeRulesAndPyTorchKeys) {
  const auto config = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv_transpose2d", "channels": [2, 3], "kernel_size": 3, "stride": 2,
       "padding": 1, "padding_out": 1},
      {"type": "instance_norm", "num_channels": 3},
      {"type": "layer_norm", "normalized_shape": [3, 6, 6]},
      {"type": "flatten", "start_dim": 2},
      {"type": "max_pool1d", "kernel_size": 2, "ceil_mode": true},
      {"type": "avg_pool1d", "kernel_size": 3, "stride": 1, "padding": 1},
      {"type": "adaptive_avg_pool1d", "output_size": 4},
      {"type": "rms_norm", "d_model": 4}]})");
  EXPECT_EQ(config.output_item_shape({2, 3, 3}), (std::vector<std::int64_t>{3, 4}));
  const auto model = config.init<AD>();
  EXPECT_EQ(model.param_paths(),
            (std::vector<std::string>{"0.weight", "0.bias", "1.weight", "1.bias", "2.weight",
                                      "2.bias", "7.weight"}));
  const auto y = model.forward_any(Tensor<AD, 4>::ones(Shape{2, 2, 3, 3}));
  EXPECT_EQ(nn::activation_shape<AD>(y), Shape({2, 3, 4}));
  // layer_norm's weight has the normalised shape, as torch.nn.LayerNorm([3, 6, 6]).
  const auto& ln = model.layers[2].get<nn::LayerNorm<AD>>();
  std::visit([](const auto& p) { EXPECT_EQ(p.val().shape(), Shape({3, 6, 6})); }, ln.weight->param);
}

TEST(RegisteredLayers, BadSpecsNameTheLayer) {
  auto expect_spec_error = [](const char* layers, const char* message) {
    EXPECT_THAT([&] { nn::SequentialConfig::from_json_string(std::string(R"({"layers": )") + layers + "}").validate(); },
                ThrowsMessage<ConfigError>(HasSubstr(message)));
  };
  expect_spec_error(R"([{"type": "max_pool1d", "kernel_size": 2, "padding": 2}])",
                    "layers[0] (max_pool1d): padding must be in [0, kernel_size / 2]");
  expect_spec_error(R"([{"type": "avg_pool1d", "kernel_size": 0}])",
                    "layers[0] (avg_pool1d): kernel_size must be >= 1, got 0");
  expect_spec_error(R"([{"type": "conv_transpose2d", "channels": [2, 3], "kernel_size": 3, "padding_out": 1}])",
                    "layers[0] (conv_transpose2d): padding_out must be smaller than stride or dilation");
  expect_spec_error(R"([{"type": "conv1d", "channels": [1, 4], "kernel_size": 1},
                        {"type": "conv_transpose2d", "channels": [4, 2], "kernel_size": 2}])",
                    "layers[1] (conv_transpose2d): expects input [batch_size, channels, height, width]");
  expect_spec_error(R"([{"type": "linear", "d_input": 2, "d_output": 5}, {"type": "rms_norm", "d_model": 4}])",
                    "layers[1] (rms_norm): d_model is 4 but the previous layer outputs");
  expect_spec_error(R"([{"type": "reshape", "shape": [5]}, {"type": "instance_norm", "num_channels": 5}])",
                    "layers[1] (instance_norm): expects input [batch_size, num_channels, ...] (items of rank 2 or 3)");
  expect_spec_error(R"([{"type": "layer_norm", "normalized_shape": []}])",
                    "layers[0] (layer_norm): normalized_shape must have 1 to 3 dims, each >= 1, got []");
  expect_spec_error(R"([{"type": "conv1d", "channels": [1, 2], "kernel_size": 1}, {"type": "embedding", "n_embedding": 5, "d_model": 2}])",
                    "layers[1] (embedding): expects input [batch_size, seq_length] (indices)");
}

// ------------------------------------------------------------------ pools, norms

TEST(MaxPool1d, RoundTwoCeilModeCaseOneDimParts) {
  const json c = round2_case("maxpool_ceil_mode_drops_window_in_padding");
  const auto tol = tolerance_of(c);
  for (const auto& [name, stride] : std::vector<std::pair<std::string, std::int64_t>>{{"p9", 3}, {"p7", 2}}) {
    const std::string x_key = name == "p9" ? "x9" : "x7";
    const auto pool = nn::MaxPool1dConfig(2).with_stride(stride).with_ceil_mode(true).init();
    const auto x = Tensor<AD, 3>::from_data(tensor_of(c["inputs"][x_key])).require_grad();
    const auto out = pool.forward(x);
    out.to_data().assert_approx_eq(tensor_of(c["expected"][name]), tol);
    const auto grads = (out * Tensor<AD, 3>::from_data(tensor_of(c["inputs"]["dy_" + name]))).sum().backward();
    x.grad(grads)->to_data().assert_approx_eq(tensor_of(c["expected"]["grad_" + x_key + "__" + name]), tol);
  }
  EXPECT_THAT([] { nn::MaxPool1dConfig(2).with_padding(2).init(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "MaxPool1dConfig::init: padding must be in [0, kernel_size / 2] (as PyTorch), "
                  "got padding 2 for kernel_size 2")));
}

TEST(LayerNormSeveralDims, MatchesPyTorchAndFunctionalForm) {
  // /usr/bin/python3 -c 'import torch; x = torch.tensor([[[1., 2, 4], [8, 16, 32]], [[0, -1, 3], [2, 2, 5]]]);
  //   print(torch.nn.LayerNorm([2, 3])(x).flatten().tolist())'
  const std::vector<float> want = {-0.8773384094238281f, -0.7849870324134827f, -0.600284218788147f,
                                   -0.2308785319328308f, 0.5079327821731567f,  1.9855554103851318f,
                                   -0.939792275428772f,  -1.4524061679840088f, 0.5980495810508728f,
                                   0.08543562889099121f, 0.08543562889099121f, 1.6232774257659912f};
  const auto x = Tensor<Cpu, 3>::from_floats({{{1.f, 2.f, 4.f}, {8.f, 16.f, 32.f}}, {{0.f, -1.f, 3.f}, {2.f, 2.f, 5.f}}});
  nn::LayerNormConfig c;
  c.normalized_shape = std::vector<std::int64_t>{2, 3};
  c.init<Cpu>().forward(x).to_data().assert_approx_eq(TensorData(Shape{2, 2, 3}, want),
                                                        Tolerance::rel_abs(1e-5, 1e-5));
  nn::functional::layer_norm<Cpu, 3>(x, {2, 3}, std::nullopt, std::nullopt, 1e-5)
      .to_data()
      .assert_approx_eq(TensorData(Shape{2, 2, 3}, want), Tolerance::rel_abs(1e-5, 1e-5));
  test::Sampler rng(11);
  EXPECT_TRUE(test::gradcheck(
      "LayerNorm [2, 3]",
      [](Tensor<AD, 3> t) {
        nn::LayerNormConfig cfg;
        cfg.normalized_shape = std::vector<std::int64_t>{2, 3};
        return cfg.init<AD>().forward(t);
      },
      rng.uniform<3>(Shape{2, 2, 3}, -1, 1)));
}

TEST(BatchNormMomentumNone, RoundTwoCumulativeAverageCase) {
  const json c = round2_case("batchnorm_cumulative_average_and_single_value");
  const auto tol = tolerance_of(c);
  auto bn = nn::BatchNormConfig(2).with_momentum(std::nullopt).init<AD>();
  for (int i = 1; i <= 3; ++i) {
    (void)bn.forward(Tensor<AD, 2>::from_data(tensor_of(c["inputs"]["x" + std::to_string(i)])));
    bn.running_mean.val().to_data().assert_approx_eq(
        tensor_of(c["expected"]["running_mean_after_" + std::to_string(i)]), tol);
    bn.running_var.val().to_data().assert_approx_eq(
        tensor_of(c["expected"]["running_var_after_" + std::to_string(i)]), tol);
  }
  EXPECT_EQ(bn.num_batches_tracked.val().to_data().to_vec<std::int32_t>(), std::vector<std::int32_t>{3});
  bn.valid().forward(Tensor<Cpu, 2>::from_data(tensor_of(c["inputs"]["x_eval"])))
      .to_data()
      .assert_approx_eq(tensor_of(c["expected"]["y_eval"]), tol);
  // JSON: momentum null is the cumulative average, and prints as such.
  const auto cfg = nn::BatchNormConfig::from_value(config::parse(R"({"num_features": 2, "momentum": null})", "t"));
  EXPECT_FALSE(cfg.momentum.has_value());
}

TEST(FunctionalNorms, GroupNormAndBatchNormByHandAndFiniteDifferences) {
  // /usr/bin/python3 -c 'import torch; print(torch.nn.functional.group_norm(torch.arange(8.).reshape(1, 4, 2), 2).flatten().tolist())'
  const std::vector<float> want = {-1.3416354656219482f, -0.4472118318080902f, 0.4472118318080902f,
                                   1.3416354656219482f,  -1.3416354656219482f, -0.4472118318080902f,
                                   0.4472118318080902f,  1.3416354656219482f};
  const auto x = Tensor<Cpu, 3>::from_data(TensorData(Shape{1, 4, 2}, std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  nn::functional::group_norm<Cpu, 3>(x, 2, std::nullopt, std::nullopt, 1e-5)
      .to_data()
      .assert_approx_eq(TensorData(Shape{1, 4, 2}, want), Tolerance::rel_abs(1e-5, 1e-5));
  const auto bad_groups = [&] {
    nn::functional::group_norm<Cpu, 3>(x, 3, std::nullopt, std::nullopt, 1e-5);
  };
  EXPECT_THAT(bad_groups,
              ThrowsMessage<ValueError>(HasSubstr("group_norm: num_groups must be >= 1 and divide the 4 channels")));
  test::Sampler rng(12);
  EXPECT_TRUE(test::gradcheck(
      "batch_norm training",
      [](Tensor<AD, 3> t) {
        return nn::functional::batch_norm<AD, 3>(t, std::nullopt, std::nullopt, std::nullopt,
                                                 std::nullopt, true, 0.1, 1e-5)
            .output;
      },
      rng.uniform<3>(Shape{3, 2, 2}, -1, 1)));
}

// ------------------------------------------------------------------ losses

TEST(SmoothL1Loss, RoundTwoBetaZeroIsL1) {
  const json c = round2_case("smooth_l1_beta_zero_is_l1");
  const auto tol = tolerance_of(c);
  const auto target = Tensor<AD, 1>::from_data(tensor_of(c["inputs"]["target"]));
  for (const auto& [name, beta] : std::vector<std::pair<std::string, double>>{{"beta0", 0.0}, {"beta1e-6", 1e-6}}) {
    const auto pred = Tensor<AD, 1>::from_data(tensor_of(c["inputs"]["pred"])).require_grad();
    const auto out = nn::loss::SmoothL1LossConfig().with_beta(beta).init().forward_no_reduction(pred, target);
    out.to_data().assert_approx_eq(tensor_of(c["expected"][name]), tol);
    const auto grads = (out * Tensor<AD, 1>::from_data(tensor_of(c["inputs"]["dy_" + name]))).sum().backward();
    pred.grad(grads)->to_data().assert_approx_eq(tensor_of(c["expected"]["grad_pred__" + name]), tol);
  }
  EXPECT_THAT([] { nn::loss::SmoothL1LossConfig().with_beta(-1).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("SmoothL1LossConfig::init: beta must be >= 0 and finite, got -1")));
  EXPECT_THAT([] { nn::loss::HuberLossConfig(0).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("delta must be positive and finite, got 0")));
}

TEST(SmoothL1Loss, HuberIsDeltaTimesSmoothL1AndGradcheck) {
  const auto r = Tensor<Cpu, 1>::from_floats({-3.f, -0.2f, 0.f, 0.4f, 2.f});
  const auto z = Tensor<Cpu, 1>::zeros(Shape{5});
  const auto huber = nn::loss::HuberLossConfig(0.5).init().forward_no_reduction(r, z);
  const auto sl1 = nn::loss::SmoothL1LossConfig().with_beta(0.5).init().forward_no_reduction(r, z);
  huber.to_data().assert_approx_eq((sl1 * 0.5).to_data(), Tolerance::rel_abs(1e-6, 1e-7));
  test::Sampler rng(13);
  EXPECT_TRUE(test::gradcheck(
      "smooth_l1",
      [](Tensor<AD, 2> t) {
        return nn::loss::SmoothL1LossConfig().with_beta(0.3).init().forward_no_reduction(
            t, Tensor<AD, 2>::zeros(Shape{2, 3}));
      },
      Tensor<AD, 2>::from_data(rng.uniform_away(Shape{2, 3}, -1, 1, {-0.3, 0.3}, 0.05))));
}

TEST(BinaryCrossEntropyPosWeight, ByHandAndErrors) {
  // loss = -(pw·t·log σ(x) + (1 - t)·log(1 - σ(x))), in double here.
  const std::vector<float> x = {0.5f, -1.f, 2.f, -0.25f, 3.f, -2.f};
  const std::vector<float> t = {1.f, 0.f, 1.f, 0.f, 1.f, 1.f};
  const std::vector<float> pw = {2.f, 0.5f, 3.f};
  std::vector<float> want;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double ls = -std::log1p(std::exp(-x[i])), lns = -std::log1p(std::exp(x[i]));
    want.push_back(static_cast<float>(-(pw[i % 3] * t[i] * ls + (1 - t[i]) * lns)));
  }
  const auto loss = nn::loss::BinaryCrossEntropyLossConfig().with_logits(true).with_pos_weight(pw).init<Cpu>();
  loss.forward_no_reduction(Tensor<Cpu, 2>::from_data(TensorData(Shape{2, 3}, x)),
                            Tensor<Cpu, 2>::from_data(TensorData(Shape{2, 3}, t)))
      .to_data()
      .assert_approx_eq(TensorData(Shape{2, 3}, want), Tolerance::rel_abs(1e-5, 1e-6));
  EXPECT_THAT([] { nn::loss::BinaryCrossEntropyLossConfig().with_pos_weight(std::vector<float>{1.f}).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("pos_weight needs logits = true")));
  EXPECT_THAT([&] { loss.forward(Tensor<Cpu, 2>::zeros(Shape{2, 2}), Tensor<Cpu, 2>::zeros(Shape{2, 2})); },
              ThrowsMessage<ShapeError>(HasSubstr("pos_weight has 3 entries but input [2, 2] has 2 labels")));
  test::Sampler rng(14);
  EXPECT_TRUE(test::gradcheck(
      "bce pos_weight",
      [&](Tensor<AD, 2> v) {
        return nn::loss::BinaryCrossEntropyLossConfig()
            .with_logits(true)
            .with_pos_weight(pw)
            .init<AD>()
            .forward_no_reduction(v, Tensor<AD, 2>::from_data(TensorData(Shape{2, 3}, t)));
      },
      rng.uniform<2>(Shape{2, 3}, -2, 2)));
}

}  // namespace
}  // namespace kiln
