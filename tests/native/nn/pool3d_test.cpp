// MaxPool3d, AvgPool3d, AdaptiveAvgPool3d and their functional forms
// (kiln/nn/functional/pool3d.hpp, kiln/nn/pool3d.hpp): values and input gradients against
// PyTorch 1.13 (resample_fixtures.json, make_resample_fixtures.py), finite differences,
// hand values, and bad arguments rejected by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "nn/resample_fixtures.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using nlohmann::json;
using nn::functional::AvgPool3dOptions;
using nn::functional::MaxPool3dOptions;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using Triple = std::array<std::int64_t, 3>;
Triple triple(const json& j) { return j.get<Triple>(); }

const Tolerance kTol = Tolerance::rel_abs(1e-5, 1e-5);

/// The function a fixture case describes, on any backend.
template <class B>
Tensor<B, 5> run(const json& c, const Tensor<B, 5>& x) {
  const json& a = c.at("args");
  const std::string op = c.at("op");
  if (op == "max_pool3d") {
    return nn::functional::max_pool3d(
        x, MaxPool3dOptions{triple(a["kernel_size"]), triple(a["stride"]), triple(a["padding"]),
                            triple(a["dilation"]), a["ceil_mode"].get<bool>()});
  }
  if (op == "avg_pool3d") {
    return nn::functional::avg_pool3d(
        x, AvgPool3dOptions{triple(a["kernel_size"]), triple(a["stride"]), triple(a["padding"]),
                            a["count_include_pad"].get<bool>(), a["ceil_mode"].get<bool>()});
  }
  return nn::functional::adaptive_avg_pool3d(x, triple(a["output_size"]));
}

template <class B>
class Pool3dTest : public ::testing::Test {};
TYPED_TEST_SUITE(Pool3dTest, test::AllBackends);

TYPED_TEST(Pool3dTest, ValuesMatchPyTorch) {
  int n = 0;
  for (const char* op : {"max_pool3d", "avg_pool3d", "adaptive_avg_pool3d"}) {
    for (const auto& c : test::resample_cases(op)) {
      SCOPED_TRACE(c.at("name").get<std::string>());
      const auto x = Tensor<TypeParam, 5>::from_data(test::fixture_tensor(c["x"]),
                                                     test::device<TypeParam>());
      run(c, x).to_data().assert_approx_eq(test::fixture_tensor(c["out"]), kTol);
      ++n;
    }
  }
  EXPECT_EQ(n, 9);
}

TEST(Pool3dGrad, InputGradientsMatchPyTorch) {
  // Max: integer inputs with many ties; PyTorch sends each window's gradient to its first
  // maximum in (depth, height, width) order.
  for (const char* op : {"max_pool3d", "avg_pool3d", "adaptive_avg_pool3d"}) {
    for (const auto& c : test::resample_cases(op)) {
      SCOPED_TRACE(c.at("name").get<std::string>());
      const auto x = Tensor<AD, 5>::from_data(test::fixture_tensor(c["x"])).require_grad();
      const auto dy = Tensor<AD, 5>::from_data(test::fixture_tensor(c["dy"]));
      const auto grads = (run(c, x) * dy).sum().backward();
      x.grad(grads)->to_data().assert_approx_eq(test::fixture_tensor(c["grad_x"]), kTol);
    }
  }
}

TEST(Pool3dGrad, FiniteDifferences) {
  test::Sampler rng(19);
  // Distinct values 0.1 apart: no tie within a finite-difference step.
  const auto x = Tensor<AD, 5>::from_data(rng.distinct(Shape{1, 2, 4, 5, 3}, 0.1));
  EXPECT_TRUE(test::gradcheck(
      "max_pool3d",
      [](Tensor<AD, 5> t) {
        return nn::functional::max_pool3d(t, MaxPool3dOptions{{2, 3, 2}, {1, 2, 1}, {1, 1, 0},
                                                               {2, 1, 1}, true});
      },
      x));
  const auto u = rng.uniform<5>(Shape{2, 1, 4, 5, 3}, -2, 2);
  EXPECT_TRUE(test::gradcheck(
      "avg_pool3d",
      [](Tensor<AD, 5> t) {
        return nn::functional::avg_pool3d(t, AvgPool3dOptions{{3, 2, 2}, {2, 1, 2}, {1, 1, 1},
                                                              false, true});
      },
      u));
  EXPECT_TRUE(test::gradcheck(
      "adaptive_avg_pool3d",
      [](Tensor<AD, 5> t) { return nn::functional::adaptive_avg_pool3d(t, {3, 2, 2}); }, u));
}

TEST(Pool3dValues, ByHand) {
  // 2x2x2 cube 0..7: the max is 7, the mean 3.5; a nan anywhere in a window is its max.
  const auto x = Tensor<Cpu, 5>::from_data(
      TensorData(Shape{1, 1, 2, 2, 2}, std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(nn::MaxPool3dConfig({2, 2, 2}).init().forward(x).to_data().to_vec<float>(),
            std::vector<float>{7});
  EXPECT_EQ(nn::AvgPool3dConfig({2, 2, 2}).init().forward(x).to_data().to_vec<float>(),
            std::vector<float>{3.5});
  EXPECT_EQ(nn::AdaptiveAvgPool3dConfig({1, 1, 2}).init().forward(x).to_data().to_vec<float>(),
            (std::vector<float>{3, 4}));
  const auto n = Tensor<Cpu, 5>::from_data(TensorData(
      Shape{1, 1, 2, 2, 2},
      std::vector<float>{0, 1, 2, std::numeric_limits<float>::quiet_NaN(), 4, 5, 6, 7}));
  EXPECT_TRUE(std::isnan(nn::functional::max_pool3d(n, {}).to_data().to_vec<float>()[0]));
}

TEST(Pool3dErrors, NameTheOpAndTheArguments) {
  const auto x = Tensor<Cpu, 5>::zeros(Shape{1, 2, 3, 4, 5});
  EXPECT_THAT([&] { nn::functional::max_pool3d(x, MaxPool3dOptions{{4, 2, 2}, {1, 1, 1}}); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "max_pool3d: the window (kernel_size {4, 2, 2}, dilation {1, 1, 1}) is larger "
                  "than the padded input: input [1, 2, 3, 4, 5] with padding {0, 0, 0} gives "
                  "output size {0, 3, 4}")));
  EXPECT_THAT(
      [&] { nn::functional::max_pool3d(x, MaxPool3dOptions{{2, 2, 2}, {1, 1, 1}, {0, 2, 0}}); },
      ThrowsMessage<ConfigError>(HasSubstr("max_pool3d: padding must be in [0, kernel_size / 2] "
                                           "(as PyTorch), got padding 2 for kernel_size 2 in "
                                           "height")));
  EXPECT_THAT([&] { nn::functional::avg_pool3d(x, AvgPool3dOptions{{2, 2, 2}, {1, 0, 1}}); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "avg_pool3d: kernel_size, stride and dilation must be >= 1, got kernel_size "
                  "{2, 2, 2}, stride {1, 0, 1}, dilation {1, 1, 1}")));
  EXPECT_THAT([&] { nn::functional::adaptive_avg_pool3d(x, {1, 0, 1}); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("adaptive_avg_pool3d: output_size must be >= 1, got {1, 0, 1}")));
  const auto empty = Tensor<Cpu, 5>::zeros(Shape{1, 2, 0, 4, 5});
  EXPECT_THAT([&] { nn::functional::adaptive_avg_pool3d(empty, {1, 1, 1}); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "adaptive_avg_pool3d: expected input [batch_size, channels, depth, height, "
                  "width] with depth, height and width >= 1, got [1, 2, 0, 4, 5]")));
  // More than 2^31 - 1 output elements: LimitError before anything is allocated.
  const auto wide = Tensor<Cpu, 5>::zeros(Shape{1, 1, 1, 1, 1});
  EXPECT_THAT([&] { nn::functional::adaptive_avg_pool3d(wide, {2048, 2048, 2048}); },
              ThrowsMessage<LimitError>(HasSubstr("adaptive_avg_pool3d")));
}

TEST(Pool3dLayers, ConfigsCheckAndModulesPrint) {
  EXPECT_THAT([] { nn::MaxPool3dConfig({2, 0, 2}).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("MaxPool3dConfig::init: kernel_size must be >= 1, got 0")));
  EXPECT_THAT([] { nn::AvgPool3dConfig({3, 3, 3}).with_padding({2, 1, 1}).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("AvgPool3dConfig::init: padding must be in")));
  EXPECT_THAT([] { nn::AdaptiveAvgPool3dConfig({1, 1, 0}).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("AdaptiveAvgPool3dConfig::init: output_size must be >= 1, got 0")));
  std::ostringstream out;
  out << nn::MaxPool3dConfig({2, 2, 2}).with_strides({1, 2, 2}).with_ceil_mode(true).init() << "\n"
      << nn::AvgPool3dConfig({3, 3, 3}).with_padding({1, 1, 1}).with_count_include_pad(false).init()
      << "\n"
      << nn::AdaptiveAvgPool3dConfig({1, 2, 3}).init();
  EXPECT_EQ(out.str(),
            "MaxPool3d {kernel_size: [2, 2, 2], stride: [1, 2, 2], padding: [0, 0, 0], "
            "dilation: [1, 1, 1], ceil_mode: true}\n"
            "AvgPool3d {kernel_size: [3, 3, 3], stride: [3, 3, 3], padding: [1, 1, 1], "
            "count_include_pad: false, ceil_mode: false}\n"
            "AdaptiveAvgPool3d {output_size: [1, 2, 3]}");
  // Configs round-trip through JSON.
  const auto c = nn::MaxPool3dConfig({3, 1, 2}).with_dilation({1, 2, 1});
  EXPECT_EQ(nn::MaxPool3dConfig::from_json_string(c.to_json_string()), c);
}


TEST(Pool3dLayers, SequentialSpecsShapesAndErrors) {
  const auto config = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "max_pool3d", "kernel_size": 2, "stride": [1, 2, 2], "padding": [1, 0, 0]},
      {"type": "avg_pool3d", "kernel_size": [1, 2, 2], "ceil_mode": true},
      {"type": "adaptive_avg_pool3d", "output_size": 1},
      {"type": "flatten"}]})");
  // [3, 4, 8, 9] -> max (depth 4 + 2 - 1 - 1 + 1 = 5, 4, 4) -> avg ceil (5, 2, 2) -> [3, 1, 1, 1]
  const auto shapes = config.item_shapes(std::vector<std::int64_t>{3, 4, 8, 9});
  EXPECT_EQ(shapes[0], (std::vector<std::int64_t>{3, 5, 4, 4}));
  EXPECT_EQ(shapes[1], (std::vector<std::int64_t>{3, 5, 2, 2}));
  EXPECT_EQ(config.output_item_shape({3, 4, 8, 9}), (std::vector<std::int64_t>{3}));
  const auto model = config.init<AD>();
  test::Sampler rng(5);
  const auto x = rng.uniform<5>(Shape{2, 3, 4, 8, 9}, -1, 1).require_grad();
  const auto y = model.forward_any(x);
  // The same as the functional forms one after the other.
  const auto want = nn::functional::adaptive_avg_pool3d(
      nn::functional::avg_pool3d(
          nn::functional::max_pool3d(x, MaxPool3dOptions{{2, 2, 2}, {1, 2, 2}, {1, 0, 0}}),
          AvgPool3dOptions{{1, 2, 2}, {1, 2, 2}, {0, 0, 0}, true, true}),
      {1, 1, 1});
  std::get<Tensor<AD, 2>>(y).to_data().assert_approx_eq(
      want.reshape<2>(std::array<std::int64_t, 2>{2, 3}).to_data(), Tolerance::exact());
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(
            R"({"layers": [{"type": "conv2d", "channels": [1, 2], "kernel_size": 3},
                           {"type": "max_pool3d", "kernel_size": 2}]})")
            .validate();
      },
      ThrowsMessage<ConfigError>(HasSubstr("layers[1] (max_pool3d): expects input [batch_size, "
                                           "channels, depth, height, width]")));
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(
            R"({"layers": [{"type": "avg_pool3d", "kernel_size": 3, "padding": 2}]})")
            .validate();
      },
      ThrowsMessage<ConfigError>(HasSubstr("layers[0] (avg_pool3d): padding must be in")));
  EXPECT_THAT([&] { model.forward_any(Tensor<AD, 4>::zeros(Shape{1, 3, 4, 4})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "expected input [batch_size, channels, depth, height, width] (rank 5)")));
}

}  // namespace
}  // namespace kiln
