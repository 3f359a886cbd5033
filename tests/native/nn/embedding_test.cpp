// nn::Embedding: lookup by hand on every backend, N(0, 1) initialisation, gradient
// accumulation over repeated indices (also the PyTorch case in layer_cases_test.cpp),
// out-of-range indices, config and printing.
#include "kiln/nn/embedding.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using testing::ThrowsMessage;
using AD = Autodiff<Cpu>;

template <class B>
class EmbeddingTest : public ::testing::Test {};
TYPED_TEST_SUITE(EmbeddingTest, test::AllBackends);

TYPED_TEST(EmbeddingTest, LooksUpRowsByHand) {
  using B = TypeParam;
  auto embed = nn::EmbeddingConfig(3, 2).init<B>();
  embed.weight.set(Tensor<B, 2>::from_data({{0.f, 1.f}, {10.f, 11.f}, {20.f, 21.f}}));
  const auto idx = Tensor<B, 2, Int>::from_data({{2, 0}, {1, 2}});
  const auto out = embed.forward(idx);
  EXPECT_EQ(out.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(out.to_data().template to_vec<float>(),
            (std::vector<float>{20.f, 21.f, 0.f, 1.f, 10.f, 11.f, 20.f, 21.f}));
}

TYPED_TEST(EmbeddingTest, OutOfRangeIndexNamesItAndItsPosition) {
  using B = TypeParam;
  const auto embed = nn::EmbeddingConfig(5, 2).init<B>();
  EXPECT_THAT([&] { embed.forward(Tensor<B, 2, Int>::from_data({{0, 1, 2}, {3, 7, 4}})); },
              ThrowsMessage<IndexError>(HasSubstr(
                  "Embedding::forward: index 7 at [1, 1] is out of range [0, 5)")));
  EXPECT_THAT([&] { embed.forward(Tensor<B, 2, Int>::from_data({{-1}})); },
              ThrowsMessage<IndexError>(HasSubstr("index -1 at [0, 0]")));
}

TEST(EmbeddingInitTest, WeightIsStandardNormalInTorchLayout) {
  Cpu::seed(3);
  const auto embed = nn::EmbeddingConfig(200, 50).init<Cpu>();
  EXPECT_EQ(embed.weight.shape(), (Shape{200, 50}));
  const auto v = embed.weight.val().to_data().to_vec<float>();
  double sum = 0, sq = 0;
  for (float x : v) sum += x;
  const double mean = sum / double(v.size());
  for (float x : v) sq += (x - mean) * (x - mean);
  const double std = std::sqrt(sq / double(v.size() - 1));
  // 10000 samples: the mean's standard error is 0.01, the std's about 0.007.
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(std, 1.0, 0.05);
}

TEST(EmbeddingGradTest, RepeatedIndicesAccumulateAndUnusedRowsGetZero) {
  auto embed = nn::EmbeddingConfig(4, 2).init<AD>();
  const auto idx = Tensor<AD, 2, Int>::from_data({{1, 1, 3}, {1, 0, 3}});
  const auto out = embed.forward(idx);
  // Upstream gradient 1, 2, ..., 6 per position (the same for both components).
  const auto dy = Tensor<AD, 3>::from_data({{{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}},
                                            {{4.f, 4.f}, {5.f, 5.f}, {6.f, 6.f}}});
  auto grads = (out * dy).sum().backward();
  // Row 0: position 5; row 1: positions 1, 2, 4; row 2: unused; row 3: positions 3, 6.
  EXPECT_EQ(embed.weight.val().grad(grads)->to_data().to_vec<float>(),
            (std::vector<float>{5.f, 5.f, 7.f, 7.f, 0.f, 0.f, 9.f, 9.f}));
}

TEST(EmbeddingConfigTest, ErrorsJsonAndPrinting) {
  EXPECT_THAT([] { nn::EmbeddingConfig(0, 4).init<Cpu>(); },
              ThrowsMessage<ConfigError>(HasSubstr("EmbeddingConfig::init")));
  const auto c = nn::EmbeddingConfig(10, 4);
  EXPECT_EQ(nn::EmbeddingConfig::from_json(c.to_json()), c);
  std::ostringstream os;
  os << c.init<Cpu>();
  EXPECT_EQ(os.str(), "Embedding {n_embedding: 10, d_model: 4, params: 40}");
}

}  // namespace
}  // namespace kiln
