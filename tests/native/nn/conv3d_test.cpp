// conv3d, conv_transpose1d, conv_transpose3d (issue 19): values and gradients of x, weight and
// bias against PyTorch 1.13 (tests/native/nn/conv3d_fixtures.json, written by
// make_conv3d_fixtures.py: stride, per-side padding, padding >= kernel, stride > kernel,
// dilation, groups, depthwise, output_padding), gradcheck (finite differences), argument
// errors naming the op, and the layers nn::Conv3d, nn::ConvTranspose1d, nn::ConvTranspose3d:
// shapes, Same padding, PyTorch's init bounds, printing, config errors, record keys, and
// their use in a rank-5 Sequential spec.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"
#include "support/paths.hpp"
#include "support/tensors.hpp"

namespace kiln {
namespace {

using nn::Conv3dConfig;
using nn::ConvTranspose1dConfig;
using nn::ConvTranspose3dConfig;
using nn::PaddingConfig3d;
using nn::SequentialConfig;
using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;
using Json = nlohmann::json;
template <std::size_t D>
using T = Tensor<AD, D>;

// ------------------------------------------------------------------ PyTorch fixtures

const Json& fixtures() {
  static const Json j = [] {
    const auto path =
        std::filesystem::path(KILN_RECORD_TEST_DIR).parent_path() / "nn" / "conv3d_fixtures.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    return Json::parse(in);
  }();
  return j;
}

TensorData data_of(const Json& t) {
  std::vector<std::int64_t> dims = t.at("shape").get<std::vector<std::int64_t>>();
  return TensorData(Shape(dims), t.at("data").get<std::vector<float>>());
}

template <std::size_t N>
std::array<std::int64_t, N> dims_of(const Json& o, const char* key, std::int64_t fallback) {
  std::array<std::int64_t, N> out;
  out.fill(fallback);
  if (!o.contains(key)) return out;
  if (o.at(key).is_number_integer()) {
    out.fill(o.at(key).get<std::int64_t>());
  } else {
    for (std::size_t d = 0; d < N; ++d) out[d] = o.at(key).at(d).get<std::int64_t>();
  }
  return out;
}

constexpr Tolerance kTol = Tolerance::rel_abs(1e-5, 1e-4);

/// Runs `op` on the case's inputs (leaves on Autodiff<Cpu>), checks y, and dx, dw, db of
/// sum(y · dy); then the same forward on Cpu.
template <std::size_t R, class F>
void check_case(const std::string& id, const Json& c, F op) {
  SCOPED_TRACE(id);
  auto x = T<R>::from_data(data_of(c.at("x"))).require_grad();
  auto w = T<R>::from_data(data_of(c.at("weight"))).require_grad();
  std::optional<T<1>> b;
  if (!c.at("bias").is_null()) b = T<1>::from_data(data_of(c.at("bias"))).require_grad();
  auto y = op(x, w, b);
  y.to_data().assert_approx_eq(data_of(c.at("y")), kTol);
  auto grads = (y * T<R>::from_data(data_of(c.at("dy")))).sum().backward();
  x.grad(grads)->to_data().assert_approx_eq(data_of(c.at("dx")), kTol);
  w.grad(grads)->to_data().assert_approx_eq(data_of(c.at("dw")), kTol);
  if (b) b->grad(grads)->to_data().assert_approx_eq(data_of(c.at("db")), kTol);
  // The inner backend gives the same forward.
  std::optional<Tensor<Cpu, 1>> bi;
  if (b) bi = b->inner();
  auto yi = op(x.inner(), w.inner(), bi);
  yi.to_data().assert_approx_eq(data_of(c.at("y")), kTol);
}

template <class Fn>
int for_cases(const std::string& op, Fn fn) {
  int n = 0;
  for (const auto& [id, c] : fixtures().at("cases").items()) {
    if (c.at("op") != op) continue;
    fn(id, c);
    ++n;
  }
  return n;
}

TEST(Conv3dFixtures, Conv3dMatchesPyTorch) {
  const int n = for_cases("conv3d", [](const std::string& id, const Json& c) {
    const Json& o = c.at("options");
    const auto padding = dims_of<3>(o, "padding", 0);
    const ConvOptions<3> options(dims_of<3>(o, "stride", 1), padding,
                                 o.contains("padding_end") ? dims_of<3>(o, "padding_end", 0)
                                                           : padding,
                                 dims_of<3>(o, "dilation", 1), o.value("groups", 1));
    check_case<5>(id, c, [&](const auto& x, const auto& w, const auto& b) {
      return conv3d(x, w, b, options);
    });
  });
  EXPECT_EQ(n, 7);
}

TEST(Conv3dFixtures, ConvTranspose3dMatchesPyTorch) {
  const int n = for_cases("conv_transpose3d", [](const std::string& id, const Json& c) {
    const Json& o = c.at("options");
    const ConvTransposeOptions<3> options(dims_of<3>(o, "stride", 1), dims_of<3>(o, "padding", 0),
                                          dims_of<3>(o, "padding_out", 0),
                                          dims_of<3>(o, "dilation", 1), o.value("groups", 1));
    check_case<5>(id, c, [&](const auto& x, const auto& w, const auto& b) {
      return conv_transpose3d(x, w, b, options);
    });
  });
  EXPECT_EQ(n, 3);
}

TEST(Conv3dFixtures, ConvTranspose1dMatchesPyTorch) {
  const int n = for_cases("conv_transpose1d", [](const std::string& id, const Json& c) {
    const Json& o = c.at("options");
    const ConvTransposeOptions<1> options(dims_of<1>(o, "stride", 1), dims_of<1>(o, "padding", 0),
                                          dims_of<1>(o, "padding_out", 0),
                                          dims_of<1>(o, "dilation", 1), o.value("groups", 1));
    check_case<3>(id, c, [&](const auto& x, const auto& w, const auto& b) {
      return conv_transpose1d(x, w, b, options);
    });
  });
  EXPECT_EQ(n, 3);
}

// ------------------------------------------------------------------ gradcheck

TEST(Conv3dGradcheck, Conv3dStridePaddingDilationGroups) {
  test::Sampler rng(1903);
  auto x = rng.uniform<5>(Shape{2, 4, 4, 3, 5}, -1, 1);
  auto w = rng.uniform<5>(Shape{2, 2, 2, 2, 3}, -1, 1);
  auto b = rng.uniform<1>(Shape{2}, -1, 1);
  const ConvOptions<3> o({2, 1, 2}, {1, 0, 1}, {0, 1, 2}, {1, 2, 1}, 2);
  EXPECT_TRUE(test::gradcheck(
      "conv3d", [&](T<5> x, T<5> w, T<1> b) { return conv3d(x, w, std::optional(b), o); }, x, w,
      b));
}

TEST(Conv3dGradcheck, ConvTranspose3dStridePaddingOutGroups) {
  test::Sampler rng(1904);
  auto x = rng.uniform<5>(Shape{2, 4, 2, 3, 2}, -1, 1);
  auto w = rng.uniform<5>(Shape{4, 1, 2, 3, 2}, -1, 1);
  auto b = rng.uniform<1>(Shape{2}, -1, 1);
  const ConvTransposeOptions<3> o({2, 1, 3}, {1, 1, 0}, {1, 0, 2}, {1, 1, 1}, 2);
  EXPECT_TRUE(test::gradcheck(
      "conv_transpose3d",
      [&](T<5> x, T<5> w, T<1> b) { return conv_transpose3d(x, w, std::optional(b), o); }, x, w,
      b));
}

TEST(Conv3dGradcheck, ConvTranspose1dDilationPaddingOut) {
  test::Sampler rng(1905);
  auto x = rng.uniform<3>(Shape{2, 2, 5}, -1, 1);
  auto w = rng.uniform<3>(Shape{2, 3, 3}, -1, 1);
  auto b = rng.uniform<1>(Shape{3}, -1, 1);
  const ConvTransposeOptions<1> o({2}, {1}, {1}, {2}, 1);
  EXPECT_TRUE(test::gradcheck(
      "conv_transpose1d",
      [&](T<3> x, T<3> w, T<1> b) { return conv_transpose1d(x, w, std::optional(b), o); }, x, w,
      b));
}

// ------------------------------------------------------------------ argument errors

TEST(Conv3dErrors, ShapesRanksAndOptionsAreNamed) {
  auto x = Tensor<Cpu, 5>::zeros(Shape{1, 4, 3, 3, 3});
  auto w = Tensor<Cpu, 5>::zeros(Shape{2, 3, 2, 2, 2});
  EXPECT_THAT([&] { (void)conv3d(x, w); },
              ThrowsMessage<ShapeError>(HasSubstr("conv3d: x [1, 4, 3, 3, 3] has 4 channels, "
                                                  "weight [2, 3, 2, 2, 2] with groups = 1 expects 3")));
  auto w4 = Tensor<Cpu, 5>::zeros(Shape{2, 4, 4, 2, 2});
  EXPECT_THAT([&] { (void)conv3d(x, w4); },
              ThrowsMessage<ShapeError>(HasSubstr("conv3d: kernel [2, 4, 4, 2, 2]")));
  auto w2 = Tensor<Cpu, 5>::zeros(Shape{2, 4, 2, 2, 2});
  EXPECT_THAT([&] { (void)conv3d(x, w2, std::nullopt, ConvOptions<3>({1, 0, 1}, {0, 0, 0},
                                                                      {1, 1, 1}, 1)); },
              ThrowsMessage<ConfigError>(HasSubstr("conv3d: stride must be >= 1 in every dim, "
                                                   "got [1, 0, 1]")));
  EXPECT_THAT([&] { (void)conv3d(x, w2, std::optional(Tensor<Cpu, 1>::zeros(Shape{3}))); },
              ThrowsMessage<ShapeError>(HasSubstr("conv3d: expected bias [2] (channels_out)")));
  // Through the untyped primitive: a rank-4 x is named with the 3-D layout.
  EXPECT_THAT([&] {
    (void)Cpu::FloatOps::conv3d(Tensor<Cpu, 4>::zeros(Shape{1, 4, 3, 3}).primitive(),
                                w2.primitive(), std::nullopt, ConvOptions<3>());
  },
              ThrowsMessage<RankError>(HasSubstr(
                  "conv3d: expected x of rank 5 [batch_size, channels, depth, height, width]")));
}

TEST(Conv3dErrors, TransposedShapesAndPaddingOut) {
  auto x = Tensor<Cpu, 5>::zeros(Shape{1, 4, 2, 2, 2});
  auto w = Tensor<Cpu, 5>::zeros(Shape{3, 2, 2, 2, 2});
  EXPECT_THAT([&] { (void)conv_transpose3d(x, w); },
              ThrowsMessage<ShapeError>(HasSubstr("conv_transpose3d: x [1, 4, 2, 2, 2] has 4 "
                                                  "channels, weight [3, 2, 2, 2, 2] expects 3")));
  auto w4 = Tensor<Cpu, 5>::zeros(Shape{4, 2, 2, 2, 2});
  EXPECT_THAT([&] {
    (void)conv_transpose3d(x, w4, std::nullopt,
                           ConvTransposeOptions<3>({2, 2, 2}, {0, 0, 0}, {0, 2, 0}, {1, 1, 1}, 1));
  },
              ThrowsMessage<ConfigError>(HasSubstr("conv_transpose3d: padding_out [0, 2, 0] must "
                                                   "be smaller than stride [2, 2, 2]")));
  EXPECT_THAT([&] {
    (void)conv_transpose3d(x, w4, std::nullopt,
                           ConvTransposeOptions<3>({1, 1, 1}, {0, 2, 0}, {0, 0, 0}, {1, 1, 1}, 1));
  },
              ThrowsMessage<ShapeError>(HasSubstr("conv_transpose3d: output size -1 < 1 in "
                                                  "spatial dim 1")));
  auto x1 = Tensor<Cpu, 3>::zeros(Shape{2, 3, 5});
  auto w1 = Tensor<Cpu, 3>::zeros(Shape{2, 4, 3});
  EXPECT_THAT([&] { (void)conv_transpose1d(x1, w1); },
              ThrowsMessage<ShapeError>(HasSubstr("conv_transpose1d: x [2, 3, 5] has 3 channels, "
                                                  "weight [2, 4, 3] expects 2")));
}

// Empty batches give empty outputs and zero weight gradients, as PyTorch.
TEST(Conv3dErrors, EmptyBatchGivesEmptyOutputAndZeroWeightGrad) {
  auto x = T<5>::zeros(Shape{0, 2, 3, 3, 3}).require_grad();
  auto w = T<5>::ones(Shape{2, 2, 2, 2, 2}).require_grad();
  auto y = conv3d(x, w);
  EXPECT_EQ(y.shape(), (Shape{0, 2, 2, 2, 2}));
  auto grads = y.sum().backward();
  w.grad(grads)->to_data().assert_eq(TensorData(Shape{2, 2, 2, 2, 2}, std::vector<float>(32, 0.f)));
}

// ------------------------------------------------------------------ layers

template <class B>
class Conv3dLayerTest : public ::testing::Test {};
TYPED_TEST_SUITE(Conv3dLayerTest, test::AllBackends);

TYPED_TEST(Conv3dLayerTest, Conv3dShapesAndSamePadding) {
  auto conv = Conv3dConfig({2, 4}, {3, 2, 3})
                  .with_stride({2, 1, 1})
                  .with_dilation({1, 2, 1})
                  .with_padding(PaddingConfig3d::explicit_({1, 1, 0}))
                  .init<TypeParam>();
  // depth (7 + 2 - 3) / 2 + 1 = 4, height (5 + 2 - 3) + 1 = 5, width 6 - 3 + 1 = 4
  EXPECT_EQ(conv.forward(Tensor<TypeParam, 5>::zeros(Shape{2, 2, 7, 5, 6})).shape(),
            (Shape{2, 4, 4, 5, 4}));
  EXPECT_EQ(conv.weight.shape(), (Shape{4, 2, 3, 2, 3}));
  EXPECT_EQ(conv.num_params(), 4 * 2 * 18 + 4);
  // Same with an even kernel: total k - 1, the extra element on the end side (PyTorch).
  auto same = Conv3dConfig({1, 2}, {2, 3, 4}).with_padding(PaddingConfig3d::same()).init<TypeParam>();
  EXPECT_EQ(same.options(), ConvOptions<3>({1, 1, 1}, {0, 1, 1}, {1, 1, 2}, {1, 1, 1}, 1));
  auto x = Tensor<TypeParam, 5>::from_data(test::iota(Shape{1, 1, 3, 4, 5}));
  auto y = same.forward(x);
  EXPECT_EQ(y.shape(), (Shape{1, 2, 3, 4, 5}));
  y.into_data().assert_eq(
      conv3d(x, same.weight.val(), std::optional(same.bias->val()), same.options()).into_data());
}

TYPED_TEST(Conv3dLayerTest, TransposedShapes) {
  auto up = ConvTranspose3dConfig({4, 6}, {3, 3, 2})
                .with_stride({2, 2, 1})
                .with_padding({1, 1, 0})
                .with_padding_out({1, 0, 0})
                .with_groups(2)
                .init<TypeParam>();
  EXPECT_EQ(up.weight.shape(), (Shape{4, 3, 3, 3, 2}));
  EXPECT_EQ(up.channels_out(), 6);
  // (3 - 1)·2 - 2 + 2 + 1 + 1 = 6, (4 - 1)·2 - 2 + 2 + 0 + 1 = 7, (5 - 1) + 1 + 1 = 6
  EXPECT_EQ(up.forward(Tensor<TypeParam, 5>::zeros(Shape{2, 4, 3, 4, 5})).shape(),
            (Shape{2, 6, 6, 7, 6}));
  auto up1 = ConvTranspose1dConfig({3, 2}, 4).with_stride(2).with_padding(1).init<TypeParam>();
  EXPECT_EQ(up1.weight.shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(up1.forward(Tensor<TypeParam, 3>::zeros(Shape{2, 3, 50})).shape(), (Shape{2, 2, 100}));
}

// PyTorch's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias, fan_in =
// weight.size(1) · receptive field (conv: channels_in / groups; transposed: channels_out /
// groups).
TEST(Conv3dLayer, InitBoundsArePyTorchs) {
  auto check = [](const TensorData& d, double bound) {
    const auto v = d.to_vec<float>();
    float lo = 0, hi = 0;
    for (float f : v) {
      lo = std::min(lo, f);
      hi = std::max(hi, f);
    }
    EXPECT_LE(hi, bound);
    EXPECT_GE(lo, -bound);
    EXPECT_GT(hi, 0.8 * bound);  // 1000+ draws reach near the bound
  };
  auto conv = Conv3dConfig({4, 64}, {3, 3, 3}).init<Cpu>();
  check(conv.weight.val().to_data(), 1.0 / std::sqrt(4.0 * 27));
  auto up = ConvTranspose3dConfig({64, 4}, {3, 3, 3}).init<Cpu>();
  check(up.weight.val().to_data(), 1.0 / std::sqrt(4.0 * 27));
  auto up1 = ConvTranspose1dConfig({512, 2}, 3).init<Cpu>();
  check(up1.weight.val().to_data(), 1.0 / std::sqrt(2.0 * 3));
}

TEST(Conv3dLayer, PrintingConfigJsonAndRecordKeys) {
  auto conv = Conv3dConfig({1, 2}, {3, 3, 3}).with_bias(false).init<Cpu>();
  std::ostringstream s;
  s << conv;
  EXPECT_THAT(s.str(), HasSubstr("ch_in: 1, ch_out: 2, stride: [1, 1, 1], kernel_size: [3, 3, 3], "
                                 "dilation: [1, 1, 1], groups: 1, padding: Valid, bias: false"));
  std::ostringstream t;
  t << ConvTranspose1dConfig({2, 3}, 4).with_padding_out(1).with_stride(2).init<Cpu>();
  EXPECT_THAT(t.str(), HasSubstr("ch_in: 2, ch_out: 3, stride: 2, kernel_size: 4, dilation: 1, "
                                 "groups: 1, padding: 0, padding_out: 1, bias: true"));
  const auto cfg = Conv3dConfig({1, 2}, {3, 3, 3}).with_padding(PaddingConfig3d::explicit_({1, 2, 3}));
  EXPECT_EQ(Conv3dConfig::from_json_string(cfg.to_json_string()), cfg);
  const auto file = record::SafetensorsRecorder().to_record(
      ConvTranspose3dConfig({2, 3}, {1, 2, 2}).init<Cpu>());
  std::vector<std::string> keys;
  for (const auto& [k, v] : file.tensors) keys.push_back(k);
  EXPECT_THAT(keys, testing::ElementsAre("bias", "weight"));
}

TEST(Conv3dLayer, ConfigErrorsNameTheConfig) {
  EXPECT_THAT([] { (void)Conv3dConfig({4, 6}, {3, 3, 3}).with_groups(4).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("Conv3dConfig::init: channels {4, 6} must both "
                                                   "be divisible by groups = 4")));
  EXPECT_THAT([] { (void)Conv3dConfig({1, 1}, {3, 0, 3}).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("Conv3dConfig::init: kernel_size must be >= 1 "
                                                   "in every dim, got 0 in dim 1")));
  EXPECT_THAT(
      [] {
        (void)Conv3dConfig({1, 1}, {3, 3, 3})
            .with_stride({1, 2, 1})
            .with_padding(PaddingConfig3d::same())
            .init<Cpu>();
      },
      ThrowsMessage<ConfigError>(HasSubstr("padding Same requires stride 1, got stride 2 in "
                                           "spatial dim 1")));
  EXPECT_THAT(
      [] { (void)ConvTranspose3dConfig({1, 1}, {3, 3, 3}).with_padding_out({0, 0, 1}).init<Cpu>(); },
      ThrowsMessage<ConfigError>(HasSubstr("ConvTranspose3dConfig::init: padding_out must be "
                                           "smaller than stride or dilation, got padding_out 1, "
                                           "stride 1, dilation 1 in dim 2")));
  EXPECT_THAT([] { (void)ConvTranspose1dConfig({1, 1}, 3).with_padding(-1).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("ConvTranspose1dConfig::init: padding and "
                                                   "padding_out must be >= 0")));
}

// ------------------------------------------------------------------ Sequential, rank 5

TEST(Conv3dSequential, Rank5SpecRunsAndTrains) {
  const auto config = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "reshape", "shape": [1, 4, 4, 4]},
      {"type": "conv3d", "channels": [1, 2], "kernel_size": 3, "padding": "same"},
      {"type": "relu"},
      {"type": "conv_transpose3d", "channels": [2, 1], "kernel_size": 2, "stride": 2},
      {"type": "flatten"}]})");
  EXPECT_EQ(config.output_item_shape({64}), (std::vector<std::int64_t>{512}));
  const auto shapes = config.item_shapes(std::vector<std::int64_t>{64});
  ASSERT_EQ(shapes.size(), 5u);
  EXPECT_EQ(*shapes[1], (std::vector<std::int64_t>{2, 4, 4, 4}));
  EXPECT_EQ(*shapes[3], (std::vector<std::int64_t>{1, 8, 8, 8}));
  auto model = config.init<AD>();
  auto x = T<2>::from_data(test::iota(Shape{2, 64})).require_grad();
  auto y = model.forward(x);
  EXPECT_EQ(y.shape(), (Shape{2, 512}));
  auto grads = y.sum().backward();
  std::vector<std::string> keys;
  auto visitor = [&](const std::string& path, const auto& p) {
    keys.push_back(path);
    if (path == "1.weight") EXPECT_EQ(p.shape(), (Shape{2, 1, 3, 3, 3}));
    if constexpr (requires { p.val().grad(grads); }) {
      EXPECT_TRUE(p.val().grad(grads).has_value()) << path;
    }
  };
  model.visit(visitor);
  EXPECT_THAT(keys, testing::ElementsAre("1.weight", "1.bias", "3.weight", "3.bias"));
  // A rank-5 input straight in, and a rank-5 output.
  const auto conv = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv3d", "channels": [2, 3], "kernel_size": [1, 2, 3], "stride": [1, 2, 1]}]})")
                        .init<Cpu>();
  EXPECT_EQ(conv.forward(Tensor<Cpu, 5>::zeros(Shape{2, 2, 3, 4, 5})).shape(),
            (Shape{2, 3, 3, 2, 3}));
  // conv_transpose1d keeps rank 3.
  const auto up1 = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv_transpose1d", "channels": [2, 3], "kernel_size": 4, "stride": 2,
       "padding": 1}]})");
  EXPECT_EQ(up1.output_item_shape({2, 10}), (std::vector<std::int64_t>{3, 20}));
  EXPECT_EQ(up1.init<Cpu>().forward(Tensor<Cpu, 3>::zeros(Shape{1, 2, 10})).shape(),
            (Shape{1, 3, 20}));
}

TEST(Conv3dSequential, SpecRoundTripsAndErrorsNameTheLayer) {
  const auto config = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv3d", "channels": [2, 3], "kernel_size": [1, 2, 3], "padding": [0, 1, 1]},
      {"type": "conv_transpose3d", "channels": [3, 2], "kernel_size": 3, "padding_out": [0, 0, 0]},
      {"type": "reshape", "shape": [2, -1]},
      {"type": "conv_transpose1d", "channels": [2, 2], "kernel_size": 3}]})");
  EXPECT_EQ(SequentialConfig::from_json_string(config.to_json_string()), config);
  auto expect_error = [](const std::string& layers, const std::string& message) {
    EXPECT_THAT([&] { (void)SequentialConfig::from_json_string(R"({"layers": [)" + layers + "]}"); },
                ThrowsMessage<ConfigError>(HasSubstr(message)))
        << layers;
  };
  expect_error(R"({"type": "conv3d", "channels": [2, 3], "kernel_size": 3, "padding": [1, 1]})",
               "layers[0] (conv3d): padding: expected \"valid\", \"same\" or [depth, height, "
               "width] (or one integer), got");
  expect_error(R"({"type": "reshape", "shape": [2, 3, 3]},
                  {"type": "conv3d", "channels": [2, 3], "kernel_size": 3})",
               "layers[1] (conv3d): expects input [batch_size, channels, depth, height, width] "
               "(items of rank 4)");
  expect_error(R"({"type": "reshape", "shape": [2, 3, 3, 3]},
                  {"type": "conv3d", "channels": [4, 3], "kernel_size": 3})",
               "layers[1] (conv3d): channels[0] is 4 but the previous layer outputs");
  expect_error(R"({"type": "reshape", "shape": [2, 3, 3, 2]},
                  {"type": "conv3d", "channels": [2, 3], "kernel_size": 3})",
               "layers[1] (conv3d): the kernel (3 with dilation) is larger than the width of "
               "the padded input (2)");
  expect_error(R"({"type": "reshape", "shape": [2, 1, 1, 1]},
                  {"type": "conv_transpose3d", "channels": [2, 3], "kernel_size": 1,
                   "padding": 1})",
               "layers[1] (conv_transpose3d): the output depth would be -1");
  expect_error(R"({"type": "conv_transpose1d", "channels": [2, 2], "kernel_size": 3,
                   "padding_out": 1})",
               "layers[0] (conv_transpose1d): padding_out must be smaller than stride or dilation");
  // A rank-4 input into conv3d names the layer and the rank it takes.
  const auto model = SequentialConfig::from_json_string(R"({"layers": [
      {"type": "conv3d", "channels": [1, 1], "kernel_size": 1}]})")
                         .init<Cpu>();
  EXPECT_THAT([&] { (void)model.forward(Tensor<Cpu, 4>::zeros(Shape{1, 1, 2, 2})); },
              ThrowsMessage<ShapeError>(HasSubstr(
                  "Sequential::forward: layer 0 (conv3d): expected input [batch_size, channels, "
                  "depth, height, width] (rank 5), got [1, 1, 2, 2]")));
}

}  // namespace
}  // namespace kiln
