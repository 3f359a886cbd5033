// nn::Initializer: PyTorch's fan rule, the statistics of every variant on a large tensor
// against torch.nn.init's formulas, parameter errors, printing and Burn's JSON form.
#include "kiln/module/initializer.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using nn::Fans;
using nn::Initializer;
using testing::HasSubstr;
using testing::ThrowsMessage;

// Sample statistics on the host, in double.
struct Stats {
  double mean = 0, var = 0, min = 0, max = 0;
  double within_one_std = 0;  ///< fraction with |x - mean| <= sqrt(var)
  std::size_t n = 0;
};

template <std::size_t D>
Stats stats(const Tensor<Cpu, D>& t) {
  const auto v = t.to_data().template to_vec<float>();
  Stats s;
  s.n = v.size();
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  for (float x : v) s.mean += x;
  s.mean /= static_cast<double>(s.n);
  for (float x : v) s.var += (x - s.mean) * (x - s.mean);
  s.var /= static_cast<double>(s.n);
  const double sd = std::sqrt(s.var);
  std::size_t inside = 0;
  for (float x : v) inside += std::abs(x - s.mean) <= sd;
  s.within_one_std = static_cast<double>(inside) / static_cast<double>(s.n);
  return s;
}

// [500, 400]: fan_in 400, fan_out 500, n = 200000 samples.
const Shape kShape{500, 400};
constexpr double kFanIn = 400, kFanOut = 500;

// U[lo, hi) with n samples. Tolerances are 6 standard errors of each statistic:
// mean: (hi - lo)/sqrt(12n); variance: relative sqrt((9/5 - 1)/n) (kurtosis 9/5).
// Extremes: P(no sample in the top 0.1% of the range) = 0.999^n, ~e^-200 here.
void expect_uniform(const Stats& s, double lo, double hi) {
  const double n = static_cast<double>(s.n);
  EXPECT_GE(s.min, lo);
  EXPECT_LT(s.max, hi);
  EXPECT_LT(s.min, lo + 1e-3 * (hi - lo));
  EXPECT_GT(s.max, hi - 1e-3 * (hi - lo));
  EXPECT_NEAR(s.mean, (lo + hi) / 2, 6 * (hi - lo) / std::sqrt(12 * n));
  const double var = (hi - lo) * (hi - lo) / 12;
  EXPECT_NEAR(s.var, var, 6 * var * std::sqrt(0.8 / n));
}

// N(mean, std²): mean within 6·std/sqrt(n); variance within 6·var·sqrt(2/n); the fraction
// within one std is 0.6827 (a uniform of the same variance gives 0.577) within 6 binomial
// standard errors.
void expect_normal(const Stats& s, double mean, double std) {
  const double n = static_cast<double>(s.n);
  EXPECT_NEAR(s.mean, mean, 6 * std / std::sqrt(n));
  EXPECT_NEAR(s.var, std * std, 6 * std * std * std::sqrt(2 / n));
  EXPECT_NEAR(s.within_one_std, 0.682689, 6 * std::sqrt(0.6827 * 0.3173 / n));
}

template <std::size_t D = 2>
Stats sample(const Initializer& init, const Shape& shape = kShape,
             std::optional<std::int64_t> fan_in = 400, std::optional<std::int64_t> fan_out = 500) {
  Cpu::seed(7);
  const auto t = init.init<Cpu, D>(shape, fan_in, fan_out);
  EXPECT_EQ(t.shape(), shape);
  return stats(t);
}

TEST(FanTest, MatchesPyTorchsRule) {
  // Linear weight [d_output, d_input].
  EXPECT_EQ(nn::fan_in_and_fan_out(Shape{10, 784}), (Fans{784, 10}));
  // Conv2d weight [out, in/groups, kh, kw] = [16, 4, 3, 5]: receptive field 15.
  EXPECT_EQ(nn::fan_in_and_fan_out(Shape{16, 4, 3, 5}), (Fans{60, 240}));
  // Conv1d [8, 2, 7].
  EXPECT_EQ(nn::fan_in_and_fan_out(Shape{8, 2, 7}), (Fans{14, 56}));
  EXPECT_THAT([] { (void)nn::fan_in_and_fan_out(Shape{5}); },
              ThrowsMessage<ValueError>(HasSubstr("need a shape of rank >= 2, got [5]")));
}

TEST(InitializerTest, ConstantsFillEveryElement) {
  for (const auto& [init, value] :
       {std::pair{Initializer::constant(0.25), 0.25}, std::pair{Initializer::zeros(), 0.0},
        std::pair{Initializer::ones(), 1.0}}) {
    const auto s = sample(init);
    EXPECT_EQ(s.min, value) << init;
    EXPECT_EQ(s.max, value) << init;
  }
  // Fans are not needed.
  const auto t = Initializer::ones().init<Cpu, 1>(Shape{3}, std::nullopt, std::nullopt);
  EXPECT_EQ(t.to_data().to_vec<float>(), (std::vector<float>{1, 1, 1}));
}

TEST(InitializerTest, UniformAndNormal) {
  expect_uniform(sample(Initializer::uniform(-0.5, 1.5)), -0.5, 1.5);
  expect_normal(sample(Initializer::normal(2.0, 0.5)), 2.0, 0.5);
  // min == max is that constant (torch.nn.init.uniform_(t, a, a)).
  const auto s = sample(Initializer::uniform(3.0, 3.0));
  EXPECT_EQ(s.min, 3.0);
  EXPECT_EQ(s.max, 3.0);
}

TEST(InitializerTest, KaimingUniformBoundIsGainTimesSqrtThreeOverFan) {
  const double gain = std::sqrt(2.0);  // calculate_gain("relu")
  const double b_in = gain * std::sqrt(3.0 / kFanIn);
  expect_uniform(sample(Initializer::kaiming_uniform(gain)), -b_in, b_in);
  const double b_out = gain * std::sqrt(3.0 / kFanOut);  // mode="fan_out"
  expect_uniform(sample(Initializer::kaiming_uniform(gain, true)), -b_out, b_out);
}

TEST(InitializerTest, KaimingNormalStdIsGainOverSqrtFan) {
  expect_normal(sample(Initializer::kaiming_normal(2.0)), 0.0, 2.0 / std::sqrt(kFanIn));
  expect_normal(sample(Initializer::kaiming_normal(2.0, true)), 0.0, 2.0 / std::sqrt(kFanOut));
}

TEST(InitializerTest, XavierUsesBothFans) {
  const double b = 1.5 * std::sqrt(6.0 / (kFanIn + kFanOut));
  expect_uniform(sample(Initializer::xavier_uniform(1.5)), -b, b);
  expect_normal(sample(Initializer::xavier_normal(1.5)), 0.0,
                1.5 * std::sqrt(2.0 / (kFanIn + kFanOut)));
}

TEST(InitializerTest, FansFromAConvShape) {
  // [64, 32, 5, 5]: fan_in = 32·25 = 800, fan_out = 64·25 = 1600, 51200 samples.
  const Shape conv{64, 32, 5, 5};
  Cpu::seed(3);
  const auto k = stats(Initializer::kaiming_uniform(1.0).init<Cpu, 4>(conv));
  expect_uniform(k, -std::sqrt(3.0 / 800), std::sqrt(3.0 / 800));
  const auto x = stats(Initializer::xavier_uniform().init<Cpu, 4>(conv));
  expect_uniform(x, -std::sqrt(6.0 / 2400), std::sqrt(6.0 / 2400));
}

TEST(InitializerTest, ZeroGainGivesZerosAndEmptyShapesGiveEmptyTensors) {
  const auto s = sample(Initializer::xavier_normal(0.0));
  EXPECT_EQ(s.min, 0.0);
  EXPECT_EQ(s.max, 0.0);
  const auto empty =
      Initializer::kaiming_uniform(1.0).init<Cpu, 2>(Shape{0, 3}, std::nullopt, std::nullopt);
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
}

TEST(InitializerTest, RunsOnTheAutodiffBackend) {
  using AD = Autodiff<Cpu>;
  Cpu::seed(11);
  const auto t = Initializer::kaiming_uniform(1.0).init<AD, 2>(kShape, 400, 500);
  EXPECT_FALSE(t.is_require_grad());
  expect_uniform(stats(t.inner()), -std::sqrt(3.0 / kFanIn), std::sqrt(3.0 / kFanIn));
}

TEST(InitializerTest, MissingFansAndBadParametersThrowConfigError) {
  const auto rank1 = [](const Initializer& init) {
    return [init] { (void)init.init<Cpu, 1>(Shape{4}); };
  };
  EXPECT_THAT(rank1(Initializer::kaiming_uniform(1.0)),
              ThrowsMessage<ConfigError>(HasSubstr("Initializer::KaimingUniform: needs fan_in")));
  EXPECT_THAT(rank1(Initializer::kaiming_normal(1.0, true)),
              ThrowsMessage<ConfigError>(HasSubstr("Initializer::KaimingNormal: needs fan_out")));
  EXPECT_THAT(rank1(Initializer::xavier_uniform()),
              ThrowsMessage<ConfigError>(HasSubstr("XavierUniform: needs fan_in")));
  EXPECT_NO_THROW(rank1(Initializer::normal(0, 1))());

  const auto with_fans = [](const Initializer& init, std::int64_t fan) {
    return [init, fan] { (void)init.init<Cpu, 2>(Shape{2, 2}, fan, fan); };
  };
  EXPECT_THAT(with_fans(Initializer::kaiming_uniform(1.0), 0),
              ThrowsMessage<ConfigError>(HasSubstr("fan_in must be >= 1, got 0")));
  EXPECT_THAT(with_fans(Initializer::uniform(1.0, -1.0), 1),
              ThrowsMessage<ConfigError>(HasSubstr("min must be <= max, got min = 1, max = -1")));
  EXPECT_THAT(with_fans(Initializer::normal(0.0, -0.1), 1),
              ThrowsMessage<ConfigError>(HasSubstr("Initializer::Normal: std must be >= 0")));
  EXPECT_THAT(with_fans(Initializer::xavier_normal(-1.0), 1),
              ThrowsMessage<ConfigError>(HasSubstr("gain must be finite and >= 0, got -1")));
  EXPECT_THAT(with_fans(Initializer::constant(NAN), 1),
              ThrowsMessage<ConfigError>(HasSubstr("Constant: value must be finite")));
  EXPECT_THAT(([] { (void)Initializer::zeros().init<Cpu, 2>(Shape{2}, 1, 1); }),
              ThrowsMessage<RankError>(HasSubstr("Initializer::init")));
}

TEST(InitializerTest, EqualityAndBurnsDebugPrinting) {
  EXPECT_EQ(Initializer::kaiming_uniform(1.0),
            Initializer(Initializer::KaimingUniform{1.0, false}));
  EXPECT_NE(Initializer::kaiming_uniform(1.0), Initializer::kaiming_uniform(1.0, true));
  EXPECT_NE(Initializer::kaiming_uniform(1.0), Initializer::kaiming_normal(1.0));
  EXPECT_NE(Initializer::zeros(), Initializer::ones());
  const auto print = [](const Initializer& init) {
    std::ostringstream out;
    out << init;
    return out.str();
  };
  EXPECT_EQ(print(Initializer::kaiming_uniform(1.0 / std::sqrt(3.0))),
            "KaimingUniform { gain: 0.5773502691896258, fan_out_only: false }");
  EXPECT_EQ(print(Initializer::zeros()), "Zeros");
  EXPECT_EQ(print(Initializer::uniform(-1, 0.5)), "Uniform { min: -1.0, max: 0.5 }");
  EXPECT_EQ(print(Initializer::xavier_normal(2)), "XavierNormal { gain: 2.0 }");
  EXPECT_EQ(Initializer::normal(0, 1).name(), "Normal");
}

TEST(InitializerJsonTest, BurnsSerdeFormRoundTrips) {
  using Json = config::Json;
  EXPECT_EQ(Json(Initializer::zeros()), Json("Zeros"));
  EXPECT_EQ(Json(Initializer::ones()).dump(), "\"Ones\"");
  EXPECT_EQ(Json(Initializer::kaiming_uniform(0.5, true)).dump(),
            R"({"KaimingUniform":{"fan_out_only":true,"gain":0.5}})");
  EXPECT_EQ(Json(Initializer::constant(2)).dump(), R"({"Constant":{"value":2.0}})");
  for (const Initializer& init :
       {Initializer::constant(-3.5), Initializer::zeros(), Initializer::ones(),
        Initializer::uniform(-1, 2), Initializer::normal(0.5, 0.1),
        Initializer::kaiming_uniform(1 / std::sqrt(3.0)), Initializer::kaiming_normal(2, true),
        Initializer::xavier_uniform(1.25), Initializer::xavier_normal(0.75)}) {
    const Json j = init;
    EXPECT_EQ(Json::parse(j.dump()).get<Initializer>(), init) << j.dump();
  }
  // A unit variant may also come as {"Zeros": null} (serde accepts both).
  EXPECT_EQ(Json::parse(R"({"Zeros": null})").get<Initializer>(), Initializer::zeros());
}

TEST(InitializerJsonTest, BadJsonNamesTheVariantAndField) {
  const auto parse = [](const char* text) {
    return [text] { (void)config::Json::parse(text).get<Initializer>(); };
  };
  EXPECT_THAT(parse(R"("Kaiming")"),
              ThrowsMessage<ConfigError>(HasSubstr("Initializer: unknown variant \"Kaiming\"")));
  EXPECT_THAT(parse(R"({"Orthogonal": {"gain": 1}})"),
              ThrowsMessage<ConfigError>(HasSubstr("unknown variant \"Orthogonal\"")));
  EXPECT_THAT(parse(R"({"KaimingUniform": {"gain": 1}})"),
              ThrowsMessage<ConfigError>(
                  HasSubstr("Initializer::KaimingUniform: missing field \"fan_out_only\"")));
  EXPECT_THAT(parse(R"({"Normal": {"mean": 0, "std": "1"}})"),
              ThrowsMessage<ConfigError>(HasSubstr("Initializer::Normal.std: expected a number")));
  EXPECT_THAT(parse(R"({"XavierUniform": {"gain": 1, "mode": "fan_in"}})"),
              ThrowsMessage<ConfigError>(HasSubstr("XavierUniform: unknown field \"mode\"")));
  EXPECT_THAT(parse(R"({"Zeros": {}, "Ones": {}})"),
              ThrowsMessage<ConfigError>(HasSubstr("an object with one variant")));
  EXPECT_THAT(parse("3"), ThrowsMessage<ConfigError>(HasSubstr("got 3")));
}

}  // namespace
}  // namespace kiln
