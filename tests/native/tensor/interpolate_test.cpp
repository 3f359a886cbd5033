// interpolate (kiln/tensor/interpolate.hpp) and the Upsample layer (kiln/nn/upsample.hpp):
// values and input gradients against PyTorch 1.13 (tests/native/nn/resample_fixtures.json,
// make_resample_fixtures.py), finite differences, hand values, Sequential specs and bad
// arguments rejected by name.
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
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const Tolerance kTol = Tolerance::rel_abs(1e-5, 1e-5);

/// A fixture case's arguments (PyTorch's names) as InterpolateOptions.
InterpolateOptions options_of(const json& a) {
  InterpolateOptions o;
  auto list = [](const json& v, auto elem) {
    std::vector<decltype(elem)> out;
    if (v.is_array()) {
      for (const auto& x : v) out.push_back(x.get<decltype(elem)>());
    } else {
      out.push_back(v.get<decltype(elem)>());
    }
    return out;
  };
  if (a.contains("size")) o.size = list(a["size"], std::int64_t{});
  if (a.contains("scale_factor")) o.scale_factor = list(a["scale_factor"], double{});
  o.mode = interpolate_mode_from(a["mode"].get<std::string>(), "test");
  o.align_corners = a["align_corners"].get<bool>();
  return o;
}

template <class B>
class InterpolateTest : public ::testing::Test {};
TYPED_TEST_SUITE(InterpolateTest, test::AllBackends);

TYPED_TEST(InterpolateTest, ValuesMatchPyTorch) {
  int n = 0;
  for (const auto& c : test::resample_cases("interpolate")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto o = options_of(c["args"]);
    const auto x = test::fixture_tensor(c["x"]);
    const auto want = test::fixture_tensor(c["out"]);
    if (x.shape.rank() == 3) {
      interpolate(Tensor<TypeParam, 3>::from_data(x, test::device<TypeParam>()), o)
          .to_data()
          .assert_approx_eq(want, kTol);
    } else {
      interpolate(Tensor<TypeParam, 4>::from_data(x, test::device<TypeParam>()), o)
          .to_data()
          .assert_approx_eq(want, kTol);
    }
    ++n;
  }
  EXPECT_EQ(n, 14);
}

TEST(InterpolateGrad, InputGradientsMatchPyTorch) {
  for (const auto& c : test::resample_cases("interpolate")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const auto o = options_of(c["args"]);
    const auto x = test::fixture_tensor(c["x"]);
    const auto dy = test::fixture_tensor(c["dy"]);
    const auto want = test::fixture_tensor(c["grad_x"]);
    if (x.shape.rank() == 3) {
      const auto t = Tensor<AD, 3>::from_data(x).require_grad();
      const auto g = (interpolate(t, o) * Tensor<AD, 3>::from_data(dy)).sum().backward();
      t.grad(g)->to_data().assert_approx_eq(want, kTol);
    } else {
      const auto t = Tensor<AD, 4>::from_data(x).require_grad();
      const auto g = (interpolate(t, o) * Tensor<AD, 4>::from_data(dy)).sum().backward();
      t.grad(g)->to_data().assert_approx_eq(want, kTol);
    }
  }
}

TEST(InterpolateGrad, FiniteDifferences) {
  test::Sampler rng(7);
  const auto x = rng.uniform<4>(Shape{1, 2, 3, 4}, -2, 2);
  for (bool align : {false, true}) {
    EXPECT_TRUE(test::gradcheck(
        "interpolate bilinear",
        [align](Tensor<AD, 4> t) {
          return interpolate(t, InterpolateOptions()
                                    .with_size({5, 3})
                                    .with_mode(InterpolateMode::Bilinear)
                                    .with_align_corners(align));
        },
        x));
  }
  EXPECT_TRUE(test::gradcheck(
      "interpolate nearest",
      [](Tensor<AD, 4> t) { return interpolate(t, InterpolateOptions().with_scale_factor({1.5})); },
      x));
  const auto l = rng.uniform<3>(Shape{2, 1, 5}, -2, 2);
  EXPECT_TRUE(test::gradcheck(
      "interpolate nearest 1-D",
      [](Tensor<AD, 3> t) { return interpolate(t, InterpolateOptions().with_size({3})); }, l));
}

TEST(InterpolateValues, ByHand) {
  const auto x = Tensor<Cpu, 4>::from_data(TensorData(Shape{1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4}));
  // Nearest x2: each value repeated in a 2x2 block.
  EXPECT_EQ(interpolate(x, InterpolateOptions().with_scale_factor({2.0})).to_data().to_vec<float>(),
            (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // Bilinear with align_corners to 3x3: the corners kept, the centre their mean 2.5.
  const auto y = interpolate(
      x, InterpolateOptions().with_size({3, 3}).with_mode(InterpolateMode::Bilinear).with_align_corners(true));
  EXPECT_EQ(y.to_data().to_vec<float>(),
            (std::vector<float>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
  // A dim whose size is kept is still weighted 1·x + 0·x, so an infinity there becomes nan,
  // as PyTorch: python3 -c "import torch; print(torch.nn.functional.interpolate(
  //   torch.tensor([[[[1., float('inf')]]]]), size=(1, 2), mode='bilinear'))"  -> [[[[1., nan]]]]
  const auto inf = Tensor<Cpu, 4>::from_data(
      TensorData(Shape{1, 1, 1, 2}, std::vector<float>{1, std::numeric_limits<float>::infinity()}));
  const auto v = interpolate(inf, InterpolateOptions().with_size({1, 2}).with_mode(InterpolateMode::Bilinear))
                     .to_data()
                     .to_vec<float>();
  EXPECT_EQ(v[0], 1.f);
  EXPECT_TRUE(std::isnan(v[1]));
}

TEST(InterpolateErrors, NameTheOpAndTheArguments) {
  const auto x = Tensor<Cpu, 4>::zeros(Shape{1, 2, 3, 4});
  const auto l = Tensor<Cpu, 3>::zeros(Shape{1, 2, 3});
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions()); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "interpolate: exactly one of size and scale_factor must be given, got neither")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_size({2, 2}).with_scale_factor({2})); },
              ThrowsMessage<ConfigError>(HasSubstr("got size [2, 2] and scale_factor [2]")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_size({2, 2, 2})); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "interpolate: size must have 1 or 2 entries for input [1, 2, 3, 4], got [2, 2, 2]")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_size({0, 2})); },
              ThrowsMessage<ConfigError>(HasSubstr("interpolate: size must be >= 1, got [0, 2]")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_scale_factor({-1.0})); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("interpolate: scale_factor must be finite and > 0, got [-1]")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_scale_factor({0.2})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "interpolate: scale_factor 0.2 gives an output size of 0 for input [1, 2, 3, 4]")));
  EXPECT_THAT(
      [&] { interpolate(l, InterpolateOptions().with_size({4}).with_mode(InterpolateMode::Bilinear)); },
      ThrowsMessage<RankError>(HasSubstr(
          "interpolate: mode \"bilinear\" needs input [batch_size, channels, height, width] "
          "(rank 4), got [1, 2, 3] (rank 3)")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_size({4}).with_align_corners(true)); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "interpolate: align_corners can only be set with mode \"bilinear\"")));
  EXPECT_THAT([&] { interpolate(x, InterpolateOptions().with_scale_factor({1e12})); },
              ThrowsMessage<LimitError>(HasSubstr("interpolate")));
  EXPECT_THAT([] { interpolate_mode_from("bicubic", "op"); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("op: mode must be \"nearest\" or \"bilinear\", got \"bicubic\"")));
}

TEST(Upsample, LayerForwardConfigAndPrint) {
  const auto up = nn::UpsampleConfig()
                      .with_scale_factor(std::vector<double>{2.0})
                      .with_mode("bilinear")
                      .init();
  const auto x = Tensor<Cpu, 4>::from_data(TensorData(Shape{1, 1, 2, 2}, std::vector<float>{1, 2, 3, 4}));
  // torch.nn.Upsample(scale_factor=2, mode='bilinear')(torch.tensor([[[[1., 2.], [3., 4.]]]]))[0, 0, 0]
  //   -> [1.0, 1.25, 1.75, 2.0]
  const auto y = up.forward(x).to_data().to_vec<float>();
  EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + 4), (std::vector<float>{1, 1.25, 1.75, 2}));
  std::ostringstream out;
  out << up << "\n" << nn::UpsampleConfig().with_size(std::vector<std::int64_t>{4, 6}).init();
  EXPECT_EQ(out.str(),
            "Upsample {scale_factor: [2], mode: bilinear, align_corners: false}\n"
            "Upsample {size: [4, 6], mode: nearest, align_corners: false}");
  EXPECT_THAT([] { nn::UpsampleConfig().init(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "UpsampleConfig::init: exactly one of size and scale_factor must be given, got neither")));
  EXPECT_THAT([] { nn::UpsampleConfig().with_size(std::vector<std::int64_t>{2}).with_mode("area").init(); },
              ThrowsMessage<ConfigError>(HasSubstr(
                  "UpsampleConfig::init: mode must be \"nearest\" or \"bilinear\", got \"area\"")));
  EXPECT_THAT(
      [] { nn::UpsampleConfig().with_size(std::vector<std::int64_t>{2}).with_align_corners(true).init(); },
      ThrowsMessage<ConfigError>(HasSubstr("align_corners can only be set with mode \"bilinear\"")));
  EXPECT_THAT([] { nn::UpsampleConfig().with_scale_factor(std::vector<double>{NAN}).init(); },
              ThrowsMessage<ConfigError>(HasSubstr("scale_factor must be finite and > 0, got nan")));
}

TEST(Upsample, SequentialSpecsShapesAndErrors) {
  const auto config = nn::SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv2d", "channels": [1, 2], "kernel_size": 3, "padding": 1},
      {"type": "upsample", "scale_factor": 2, "mode": "bilinear", "align_corners": true},
      {"type": "upsample", "size": [5, 3]},
      {"type": "flatten", "start_dim": 2},
      {"type": "upsample", "scale_factor": 1.5}]})");
  EXPECT_EQ(config.output_item_shape({1, 4, 3}), (std::vector<std::int64_t>{2, 22}));
  const auto model = config.init<AD>();
  const auto y = model.forward_any(Tensor<AD, 4>::zeros(Shape{2, 1, 4, 3}));
  EXPECT_EQ(nn::activation_shape<AD>(y), Shape({2, 2, 22}));
  EXPECT_EQ(model.param_paths(), (std::vector<std::string>{"0.weight", "0.bias"}));
  // Bilinear needs items [channels, height, width].
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(R"({"layers": [
            {"type": "linear", "d_input": 4, "d_output": 6}, {"type": "reshape", "shape": [2, 3]},
            {"type": "upsample", "scale_factor": 2, "mode": "bilinear"}]})")
            .validate();
      },
      ThrowsMessage<ConfigError>(HasSubstr("layers[2] (upsample): expects input [batch_size, channels, "
                                           "height, width]")));
  EXPECT_THAT(
      [] {
        nn::SequentialConfig::from_json_string(R"({"layers": [{"type": "upsample", "scale_factor": 0}]})")
            .validate();
      },
      ThrowsMessage<ConfigError>(HasSubstr("layers[0] (upsample): scale_factor must be finite and > 0")));
  // A rank the layer does not take, at run time.
  const auto up = nn::SequentialConfig::from_json_string(
                      R"({"layers": [{"type": "upsample", "size": 3}]})")
                      .init<Cpu>();
  EXPECT_THAT([&] { up.forward_any(Tensor<Cpu, 2>::zeros(Shape{2, 3})); },
              ThrowsMessage<ShapeError>(HasSubstr("expected input [batch_size, channels, height, width]")));
}

}  // namespace
}  // namespace kiln
