// Gradient clipping by value and by global norm, by hand (the PyTorch case of the global norm
// is in cases_test.cpp): non-finite norms, empty gradients, the GradientClipping object and
// its config's JSON form.
#include "kiln/optim/grad_clipping.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using namespace optim;
using AD = Autodiff<Cpu>;
using testing::ElementsAre;
using testing::FloatEq;
using testing::HasSubstr;
using testing::IsNan;
using testing::ThrowsMessage;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> grad_values(const GradientsParams<AD>& grads, ParamId id) {
  return grads.get<1>(id)->to_data().to_vec<float>();
}

TEST(ClipGradValue, ClampsEveryElementAndKeepsNan) {
  GradientsParams<AD> grads;
  const auto a = ParamId::next(), b = ParamId::next();
  grads.insert(a, Tensor<Cpu, 1>::from_floats({-3.f, 0.2f, 7.f}));
  grads.insert(b, Tensor<Cpu, 1>::from_floats({kNan, -1.f}));
  clip_grad_value(grads, 1.0);
  EXPECT_THAT(grad_values(grads, a), ElementsAre(-1.f, FloatEq(0.2f), 1.f));
  EXPECT_THAT(grad_values(grads, b), ElementsAre(IsNan(), -1.f));
}

TEST(ClipGradNorm, ScalesEveryGradientByOneFactor) {
  GradientsParams<AD> grads;
  const auto a = ParamId::next(), b = ParamId::next();
  grads.insert(a, Tensor<Cpu, 1>::from_floats({3.f}));
  grads.insert(b, Tensor<Cpu, 1>::from_floats({0.f, 4.f}));
  // norm 5, max_norm 2.5: factor 2.5 / (5 + 1e-6).
  EXPECT_DOUBLE_EQ(clip_grad_norm(grads, 2.5), 5.0);
  const float f = static_cast<float>(2.5 / (5.0 + 1e-6));
  EXPECT_THAT(grad_values(grads, a), ElementsAre(FloatEq(3.f * f)));
  EXPECT_THAT(grad_values(grads, b), ElementsAre(0.f, FloatEq(4.f * f)));
}

TEST(ClipGradNorm, EmptyGradientsHaveNormZero) {
  GradientsParams<AD> grads;
  EXPECT_EQ(clip_grad_norm(grads, 1.0), 0.0);
  EXPECT_EQ(global_grad_norm(grads), 0.0);
}

TEST(ClipGradNorm, NonFiniteNormsAsPyTorch) {
  // nan norm: every gradient becomes nan.
  GradientsParams<AD> with_nan;
  const auto a = ParamId::next(), b = ParamId::next();
  with_nan.insert(a, Tensor<Cpu, 1>::from_floats({kNan}));
  with_nan.insert(b, Tensor<Cpu, 1>::from_floats({1.f, 2.f}));
  EXPECT_TRUE(std::isnan(clip_grad_norm(with_nan, 1.0)));
  EXPECT_THAT(grad_values(with_nan, b), ElementsAre(IsNan(), IsNan()));
  // inf norm: factor 0, so finite gradients become 0 and infinite ones nan (inf · 0).
  GradientsParams<AD> with_inf;
  with_inf.insert(a, Tensor<Cpu, 1>::from_floats({kInf}));
  with_inf.insert(b, Tensor<Cpu, 1>::from_floats({1.f, -2.f}));
  EXPECT_EQ(clip_grad_norm(with_inf, 1.0), std::numeric_limits<double>::infinity());
  EXPECT_THAT(grad_values(with_inf, a), ElementsAre(IsNan()));
  EXPECT_THAT(grad_values(with_inf, b), ElementsAre(0.f, 0.f));
}

TEST(GradientClipping, ClipDispatchesOnTheKind) {
  GradientsParams<AD> grads;
  const auto a = ParamId::next();
  grads.insert(a, Tensor<Cpu, 1>::from_floats({6.f, 8.f}));
  EXPECT_DOUBLE_EQ(GradientClipping::norm(100.0).clip(grads), 10.0);
  EXPECT_THAT(grad_values(grads, a), ElementsAre(6.f, 8.f));
  EXPECT_TRUE(std::isnan(GradientClipping::value(7.0).clip(grads)));
  EXPECT_THAT(grad_values(grads, a), ElementsAre(6.f, 7.f));
}

TEST(GradientClipping, ConfigInitAndJson) {
  const auto norm = GradientClippingConfig::norm(1.5);
  EXPECT_EQ(norm.init().kind(), GradientClipping::Kind::Norm);
  EXPECT_EQ(norm.init().threshold(), 1.5);
  EXPECT_EQ(norm.to_json().dump(), R"({"Norm":1.5})");
  EXPECT_EQ(GradientClippingConfig::value(0.25).to_json().dump(), R"({"Value":0.25})");
  EXPECT_EQ(GradientClippingConfig::from_json(config::Json::parse(R"({"Value": 0.25})")),
            GradientClippingConfig::value(0.25));
  EXPECT_NE(GradientClippingConfig::value(1.0), GradientClippingConfig::norm(1.0));
  std::ostringstream out;
  out << norm;
  EXPECT_EQ(out.str(), R"(GradientClippingConfig {"Norm":1.5})");
}

TEST(GradientClippingErrors, ThresholdsMustBePositive) {
  GradientsParams<AD> grads;
  EXPECT_THAT([&] { (void)clip_grad_norm(grads, 0.0); },
              ThrowsMessage<ValueError>(
                  HasSubstr("clip_grad_norm: max_norm must be finite and > 0, got 0")));
  EXPECT_THAT([&] { clip_grad_value(grads, -1.0); },
              ThrowsMessage<ValueError>(
                  HasSubstr("clip_grad_value: clip_value must be finite and > 0, got -1")));
  EXPECT_THAT([] { (void)GradientClippingConfig::norm(std::nan("")).init(); },
              ThrowsMessage<ConfigError>(
                  HasSubstr("GradientClippingConfig::init: GradientClippingConfig.Norm must be "
                            "finite and > 0, got nan")));
}

}  // namespace
}  // namespace kiln
