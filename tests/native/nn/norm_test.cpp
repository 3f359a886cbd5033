// Normalisation layers: BatchNorm (training/inference, running statistics over several
// optimizer steps against values computed here in double, records with PyTorch's keys and
// I64 num_batches_tracked), LayerNorm, GroupNorm, InstanceNorm, RmsNorm (forward against a
// double-precision reference written here, gradcheck over random shapes), errors, configs.
// The PyTorch cases batchnorm1d_running_var_unbiased and layernorm_eps_inside_sqrt are in
// layer_cases_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

/// Normalises x (row-major, `shape`) over groups of elements: element i belongs to group
/// key(i); returns (x - mean_g)/sqrt(var_g + eps) in double (biased variance).
template <class Key>
std::vector<double> normalise(const std::vector<float>& x, std::size_t groups, Key key,
                              double eps) {
  std::vector<double> sum(groups), sq(groups), count(groups);
  for (std::size_t i = 0; i < x.size(); ++i) {
    sum[key(i)] += x[i];
    count[key(i)] += 1;
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double m = sum[key(i)] / count[key(i)];
    sq[key(i)] += (x[i] - m) * (x[i] - m);
  }
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double m = sum[key(i)] / count[key(i)];
    out[i] = (x[i] - m) / std::sqrt(sq[key(i)] / count[key(i)] + eps);
  }
  return out;
}

std::vector<float> to_float(const std::vector<double>& v) { return {v.begin(), v.end()}; }

// ------------------------------------------------------------------ BatchNorm

/// Per-channel mean and unbiased variance of x [N, C, L] in double.
std::pair<std::vector<double>, std::vector<double>> channel_stats(const TensorData& x) {
  const auto v = x.to_vec<float>();
  const std::int64_t n = x.shape[0], c = x.shape[1], l = x.shape[2];
  std::vector<double> mean(c), var(c);
  for (std::int64_t ch = 0; ch < c; ++ch) {
    double s = 0;
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t i = 0; i < l; ++i) s += v[(b * c + ch) * l + i];
    mean[ch] = s / double(n * l);
    double q = 0;
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t i = 0; i < l; ++i) {
        const double d = v[(b * c + ch) * l + i] - mean[ch];
        q += d * d;
      }
    var[ch] = q / double(n * l - 1);
  }
  return {mean, var};
}

TEST(BatchNormTest, RunningStatsOverSeveralOptimizerStepsMatchHandComputed) {
  auto model = nn::BatchNormConfig(3).with_momentum(0.2).init<AD>();
  auto optim = optim::SgdConfig().init<AD>();
  test::Sampler rng(21);
  std::vector<double> rm(3, 0.0), rv(3, 1.0);
  const auto weight_id = model.weight.id();
  for (int step = 0; step < 4; ++step) {
    const TensorData data = rng.uniform_data(Shape{4, 3, 5}, -2 + step, 3 + step);
    const auto [mean, var] = channel_stats(data);
    for (int c = 0; c < 3; ++c) {
      rm[c] = 0.8 * rm[c] + 0.2 * mean[c];
      rv[c] = 0.8 * rv[c] + 0.2 * var[c];
    }
    const auto y = model.forward(Tensor<AD, 3>::from_data(data));
    auto grads = optim::GradientsParams<AD>::from_grads((y * y).sum().backward(), model);
    model = optim.step(0.5, model, std::move(grads));  // large lr: trainable params move
  }
  model.running_mean.val().to_data().assert_approx_eq(
      TensorData(Shape{3}, to_float(rm)), Tolerance::rel_abs(1e-5, 1e-6));
  model.running_var.val().to_data().assert_approx_eq(
      TensorData(Shape{3}, to_float(rv)), Tolerance::rel_abs(1e-5, 1e-6));
  EXPECT_EQ(model.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{4});
  EXPECT_EQ(model.weight.id(), weight_id);
  // The running stats are not trainable: no gradient, and the optimizer never kept state.
  EXPECT_FALSE(model.running_mean.is_require_grad());
  EXPECT_FALSE(optim.has_state(model.running_mean.id()));
  EXPECT_FALSE(optim.has_state(model.running_var.id()));
  EXPECT_TRUE(optim.to_record().empty());  // plain SGD keeps no state at all
}

TEST(BatchNormTest, InferenceUsesRunningStatsAndLeavesThemAlone) {
  auto bn = nn::BatchNormConfig(2).with_epsilon(0.01).init<Cpu>();
  bn.weight.set(Tensor<Cpu, 1>::from_floats({2.f, -1.f}));
  bn.bias.set(Tensor<Cpu, 1>::from_floats({0.5f, 1.f}));
  bn.running_mean.set(Tensor<Cpu, 1>::from_floats({1.f, -2.f}));
  bn.running_var.set(Tensor<Cpu, 1>::from_floats({3.99f, 0.24f}));  // + eps: 4, 0.25
  const auto x = Tensor<Cpu, 4>::from_data({{{{3.f, 1.f}}, {{-2.f, -1.f}}}});  // [1, 2, 1, 2]
  // ch 0: (x - 1)/2·2 + 0.5; ch 1: (x + 2)/0.5·(-1) + 1
  bn.forward(x).to_data().assert_approx_eq(
      TensorData::from_nested<float, 4>({{{{2.5f, 0.5f}}, {{1.f, -1.f}}}}),
      Tolerance::rel_abs(1e-5, 1e-6));
  EXPECT_EQ(bn.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{0});
  EXPECT_EQ(bn.running_mean.val().to_data().to_vec<float>(), (std::vector<float>{1.f, -2.f}));
}

TEST(BatchNormTest, TrainingOnEveryRankMatchesReference) {
  test::Sampler rng(22);
  const std::vector<Shape> shapes = {Shape{5, 3}, Shape{2, 3, 4}, Shape{2, 3, 2, 3},
                                     Shape{2, 3, 2, 2, 2}};
  for (const auto& shape : shapes) {
    const TensorData data = rng.uniform_data(shape, -2, 2);
    const auto v = data.to_vec<float>();
    std::int64_t inner = 1;
    for (std::size_t d = 2; d < shape.rank(); ++d) inner *= shape[d];
    const auto expected = normalise(v, 3, [&](std::size_t i) { return (i / inner) % 3; }, 1e-5);
    auto bn = nn::BatchNormConfig(3).init<AD>();
    TensorData got;
    switch (shape.rank()) {
      case 2: got = bn.forward(Tensor<AD, 2>::from_data(data)).to_data(); break;
      case 3: got = bn.forward(Tensor<AD, 3>::from_data(data)).to_data(); break;
      case 4: got = bn.forward(Tensor<AD, 4>::from_data(data)).to_data(); break;
      default: got = bn.forward(Tensor<AD, 5>::from_data(data)).to_data(); break;
    }
    got.assert_approx_eq(TensorData(shape, to_float(expected)), Tolerance::rel_abs(1e-4, 1e-5));
  }
}

TEST(BatchNormTest, RecordKeysAreTorchsWithI64Counter) {
  auto bn = nn::BatchNormConfig(4).init<AD>();
  bn.forward(Tensor<AD, 2>::from_data(test::Sampler(1).uniform_data(Shape{3, 4}, -1, 1)));
  bn.forward(Tensor<AD, 2>::from_data(test::Sampler(2).uniform_data(Shape{3, 4}, -1, 1)));
  EXPECT_EQ(bn.param_paths(), (std::vector<std::string>{"weight", "bias", "running_mean",
                                                        "running_var", "num_batches_tracked"}));
  const auto bytes = record::SafetensorsRecorder{}.to_bytes(bn);
  const auto file = record::read_safetensors(bytes, "bytes");
  ASSERT_EQ(file.tensors.size(), 5u);
  EXPECT_EQ(file.tensors.at("num_batches_tracked").dtype, record::SafetensorsDType::I64);
  EXPECT_EQ(file.tensors.at("running_var").dtype, record::SafetensorsDType::F32);
  // Loads back into a fresh module (on the inference backend) with the same values.
  const auto loaded = record::SafetensorsRecorder{}.from_bytes(nn::BatchNormConfig(4).init<Cpu>(),
                                                               bytes, Cpu::Device{});
  EXPECT_EQ(loaded.num_batches_tracked.val().to_data().to_vec<std::int32_t>(),
            std::vector<std::int32_t>{2});
  EXPECT_EQ(loaded.running_mean.val().to_data().to_vec<float>(),
            bn.running_mean.val().to_data().to_vec<float>());
}

TEST(BatchNormTest, ErrorsAndPrinting) {
  auto bn = nn::BatchNormConfig(3).init<AD>();
  EXPECT_THAT([&] { bn.forward(Tensor<AD, 3>::zeros(Shape{2, 4, 5})); },
              ThrowsMessage<ShapeError>(HasSubstr("BatchNorm::forward: expected input [batch_size, 3")));
  EXPECT_THAT([&] { bn.forward(Tensor<AD, 2>::zeros(Shape{1, 3})); },
              ThrowsMessage<ShapeError>(HasSubstr("more than 1 value per channel")));
  EXPECT_THAT([] { nn::BatchNormConfig(0).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("BatchNormConfig::init")));
  EXPECT_THAT([] { nn::BatchNormConfig(2).with_momentum(1.5).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("momentum = 1.5")));
  std::ostringstream os;
  os << nn::BatchNormConfig(3).init<Cpu>();
  EXPECT_EQ(os.str(), "BatchNorm {num_features: 3, momentum: 0.1, epsilon: 1e-05, params: 13}");
}

TEST(BatchNormTest, GradcheckTrainingOverRandomShapes) {
  test::Sampler rng(23);
  for (int trial = 0; trial < 4; ++trial) {
    const Shape shape{rng.integer(2, 3), 2, rng.integer(1, 3), rng.integer(1, 3)};
    const auto x = rng.uniform<4>(shape, -2, 2);
    EXPECT_TRUE(test::gradcheck(
        "BatchNorm (training)",
        [](Tensor<AD, 4> t) { return nn::BatchNormConfig(2).init<AD>().forward(t); }, x))
        << shape;
  }
  // A permuted input ([N, H, W, C] -> [N, C, H, W]).
  const auto nhwc = rng.uniform<4>(Shape{2, 2, 3, 3}, -2, 2);
  EXPECT_TRUE(test::gradcheck(
      "BatchNorm (permuted)",
      [](Tensor<AD, 4> t) {
        return nn::BatchNormConfig(3).init<AD>().forward(t.permute({0, 3, 1, 2}));
      },
      nhwc));
}

// ------------------------------------------------------------------ LayerNorm, RmsNorm

TEST(LayerNormTest, MatchesReferenceAndGradcheck) {
  test::Sampler rng(31);
  const TensorData data = rng.uniform_data(Shape{2, 3, 5}, -2, 2);
  const auto expected =
      normalise(data.to_vec<float>(), 6, [](std::size_t i) { return i / 5; }, 1e-5);
  nn::LayerNormConfig(5).init<Cpu>().forward(Tensor<Cpu, 3>::from_data(data)).to_data()
      .assert_approx_eq(TensorData(Shape{2, 3, 5}, to_float(expected)),
                        Tolerance::rel_abs(1e-4, 1e-5));
  for (int trial = 0; trial < 4; ++trial) {
    const Shape shape{rng.integer(1, 3), rng.integer(2, 6)};
    EXPECT_TRUE(test::gradcheck(
        "LayerNorm",
        [d = shape[1]](Tensor<AD, 2> t) { return nn::LayerNormConfig(d).init<AD>().forward(t); },
        rng.uniform<2>(shape, -2, 2)))
        << shape;
  }
  EXPECT_THAT([] { nn::LayerNormConfig(4).init<Cpu>().forward(Tensor<Cpu, 2>::zeros(Shape{2, 3})); },
              ThrowsMessage<ShapeError>(HasSubstr("LayerNorm::forward: expected input [..., 4]")));
  EXPECT_EQ(nn::LayerNormConfig(4).with_elementwise_affine(false).init<Cpu>().num_params(), 0);
}

TEST(RmsNormTest, MatchesReferenceWeightGradAndGradcheck) {
  const auto x = Tensor<AD, 2>::from_data({{3.f, 4.f}, {1.f, -1.f}});
  auto norm = nn::RmsNormConfig(2).with_epsilon(0.0).init<AD>();
  norm.weight.set(Tensor<AD, 1>::from_floats({2.f, 0.5f}));
  // rms: sqrt(12.5), 1
  const float r = std::sqrt(12.5f);
  const auto y = norm.forward(x);
  y.to_data().assert_approx_eq(
      TensorData::from_nested<float, 2>({{6.f / r, 2.f / r}, {2.f, -0.5f}}),
      Tolerance::rel_abs(1e-6, 1e-6));
  // d sum(y)/d weight_j = Σ_rows x_ij / rms_i
  auto grads = y.sum().backward();
  norm.weight.val().grad(grads)->to_data().assert_approx_eq(
      TensorData::from_nested<float, 1>({3.f / r + 1.f, 4.f / r - 1.f}),
      Tolerance::rel_abs(1e-5, 1e-6));
  test::Sampler rng(32);
  EXPECT_TRUE(test::gradcheck(
      "RmsNorm", [](Tensor<AD, 3> t) { return nn::RmsNormConfig(4).init<AD>().forward(t); },
      rng.signed_values<3>(Shape{2, 3, 4}, 0.2, 2)));
  EXPECT_THAT([] { nn::RmsNormConfig(4).init<Cpu>().forward(Tensor<Cpu, 1>::zeros(Shape{3})); },
              ThrowsMessage<ShapeError>(HasSubstr("RmsNorm::forward")));
}

// ------------------------------------------------------------------ GroupNorm, InstanceNorm

TEST(GroupNormTest, MatchesReferenceAffineAndGradcheck) {
  test::Sampler rng(41);
  const Shape shape{2, 6, 2, 3};  // 3 groups of 2 channels, 6 positions each
  const TensorData data = rng.uniform_data(shape, -2, 2);
  // group of element i: sample and channel / 2
  const auto expected = normalise(
      data.to_vec<float>(), 6, [](std::size_t i) { return (i / 36) * 3 + (i / 6 % 6) / 2; }, 1e-5);
  auto gn = nn::GroupNormConfig(3, 6).init<Cpu>();
  gn.forward(Tensor<Cpu, 4>::from_data(data)).to_data().assert_approx_eq(
      TensorData(shape, to_float(expected)), Tolerance::rel_abs(1e-4, 1e-5));
  // Affine per channel: weight 2 and bias 1 on every channel double and shift.
  gn.weight->set(Tensor<Cpu, 1>::full(Shape{6}, 2.f));
  gn.bias->set(Tensor<Cpu, 1>::full(Shape{6}, 1.f));
  std::vector<float> affine;
  for (double v : expected) affine.push_back(float(2 * v + 1));
  gn.forward(Tensor<Cpu, 4>::from_data(data)).to_data().assert_approx_eq(
      TensorData(shape, affine), Tolerance::rel_abs(1e-4, 1e-5));
  EXPECT_TRUE(test::gradcheck(
      "GroupNorm", [](Tensor<AD, 3> t) { return nn::GroupNormConfig(2, 4).init<AD>().forward(t); },
      rng.uniform<3>(Shape{2, 4, 3}, -2, 2)));
  EXPECT_THAT([] { nn::GroupNormConfig(4, 6).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("positive multiple of num_groups")));
  EXPECT_THAT([] { nn::GroupNormConfig(2, 6).init<Cpu>().forward(Tensor<Cpu, 3>::zeros(Shape{1, 4, 2})); },
              ThrowsMessage<ShapeError>(HasSubstr("GroupNorm::forward: expected input [batch_size, 6")));
}

TEST(InstanceNormTest, MatchesReferenceAndGradcheck) {
  test::Sampler rng(51);
  const Shape shape{2, 3, 4};
  const TensorData data = rng.uniform_data(shape, -2, 2);
  const auto expected =
      normalise(data.to_vec<float>(), 6, [](std::size_t i) { return i / 4; }, 1e-5);
  nn::InstanceNormConfig(3).init<Cpu>().forward(Tensor<Cpu, 3>::from_data(data)).to_data()
      .assert_approx_eq(TensorData(shape, to_float(expected)), Tolerance::rel_abs(1e-4, 1e-5));
  EXPECT_TRUE(test::gradcheck(
      "InstanceNorm",
      [](Tensor<AD, 4> t) { return nn::InstanceNormConfig(2).init<AD>().forward(t); },
      rng.uniform<4>(Shape{2, 2, 2, 3}, -2, 2)));
  EXPECT_EQ(nn::InstanceNormConfig(3).with_affine(false).init<Cpu>().param_paths().size(), 0u);
  EXPECT_EQ(nn::InstanceNormConfig(3).init<Cpu>().param_paths(),
            (std::vector<std::string>{"weight", "bias"}));
}

}  // namespace
}  // namespace kiln
