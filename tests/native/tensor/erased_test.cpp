// Rank erasure (kiln/tensor/erased.hpp): the engine's rank-generic code (norms, losses,
// optimizer rules) runs once for every rank on ErasedFloat and is wrapped by the typed
// functions. These tests keep the typed formulation each replaced, written here on
// Tensor<B, D> as it was, and check that the library gives the same bits at every rank,
// values and gradients; plus the run-time rank checks that replace the compile-time ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
using testing::HasSubstr;
using testing::ThrowsMessage;

std::vector<std::uint32_t> bits(const TensorData& data) {
  const auto v = data.to_vec<float>();
  std::vector<std::uint32_t> out(v.size());
  std::memcpy(out.data(), v.data(), v.size() * sizeof(float));
  return out;
}

template <class B, std::size_t D>
Tensor<B, D> random_tensor(const Shape& shape, std::uint64_t seed, double lo = -2.0,
                           double hi = 2.0) {
  Cpu::seed(seed);
  return Tensor<B, D>::from_data(
      Tensor<Cpu, D>::random(shape, Distribution::uniform(lo, hi)).to_data());
}

// ---- the typed formulations (as written before the erasure) ----

template <class B, std::size_t D>
Tensor<B, D> typed_batch_norm_train(const Tensor<B, D>& x, const Tensor<B, 1>& w,
                                    const Tensor<B, 1>& b, double epsilon) {
  const std::int64_t c = x.shape()[1];
  std::array<std::int64_t, D> pc{};
  pc.fill(1);
  pc[1] = c;
  Tensor<B, D> mean = x.mean_dim(0);
  for (std::size_t d = 2; d < D; ++d) mean = mean.mean_dim(static_cast<std::int64_t>(d));
  const auto centered = x - mean;
  Tensor<B, D> var = (centered * centered).mean_dim(0);
  for (std::size_t d = 2; d < D; ++d) var = var.mean_dim(static_cast<std::int64_t>(d));
  Tensor<B, D> y = centered / (var + epsilon).sqrt();
  y = y * w.template reshape<D>(pc);
  return y + b.template reshape<D>(pc);
}

template <class B, std::size_t D>
Tensor<B, D> typed_layer_norm(const Tensor<B, D>& x, std::size_t k, double epsilon) {
  Tensor<B, D> mean = x;
  for (std::size_t i = 0; i < k; ++i) mean = mean.mean_dim(static_cast<std::int64_t>(D - 1 - i));
  const auto centered = x - mean;
  Tensor<B, D> var = centered * centered;
  for (std::size_t i = 0; i < k; ++i) var = var.mean_dim(static_cast<std::int64_t>(D - 1 - i));
  return centered / (var + epsilon).sqrt();
}

template <class I, std::size_t D>
Tensor<I, D> typed_rmsprop_first_steps(Tensor<I, D> param, const Tensor<I, D>& g1,
                                       const Tensor<I, D>& g2, double lr, double alpha,
                                       double momentum, double epsilon) {
  // Two steps of torch.optim.RMSprop (centered = false), as rmsprop.hpp wrote them on Tensor.
  Tensor<I, D> square_avg = g1 * g1 * (1.0 - alpha);
  Tensor<I, D> buf = g1 / ((square_avg).sqrt() + epsilon);
  param = param - buf * lr;
  square_avg = square_avg * alpha + g2 * g2 * (1.0 - alpha);
  const Tensor<I, D> direction = g2 / (square_avg.sqrt() + epsilon);
  buf = buf * momentum + direction;
  return param - buf * lr;
}

// ---- norms: the library (rank-erased) against the typed formulation ----

template <class B, std::size_t D>
void expect_batch_norm_same_bits(const Shape& shape) {
  SCOPED_TRACE(testing::Message() << "rank " << D << " backend " << B::name());
  const auto x0 = random_tensor<B, D>(shape, 3);
  const auto w = random_tensor<B, 1>(Shape{shape[1]}, 4);
  const auto b = random_tensor<B, 1>(Shape{shape[1]}, 5);
  auto x = x0;
  if constexpr (AutodiffBackend<B>) x = x0.require_grad();
  const auto out = nn::functional::batch_norm<B, D>(x, std::nullopt, std::nullopt, w, b,
                                                    /*training=*/true, 0.1, 1e-5);
  const auto expected = typed_batch_norm_train<B, D>(x, w, b, 1e-5);
  EXPECT_EQ(bits(out.output.to_data()), bits(expected.to_data()));
  if constexpr (AutodiffBackend<B>) {
    const auto g = x.grad((out.output * out.output).sum().backward());
    const auto ge = x.grad((expected * expected).sum().backward());
    ASSERT_TRUE(g && ge);
    EXPECT_EQ(bits(g->to_data()), bits(ge->to_data()));
  }
}

template <class B, std::size_t D>
void expect_layer_norm_same_bits(const Shape& shape, std::size_t k) {
  SCOPED_TRACE(testing::Message() << "rank " << D << " k " << k << " backend " << B::name());
  auto x = random_tensor<B, D>(shape, 6);
  if constexpr (AutodiffBackend<B>) x = x.require_grad();
  std::vector<std::int64_t> ns(shape.dims().end() - static_cast<std::ptrdiff_t>(k),
                               shape.dims().end());
  const auto y = nn::functional::layer_norm<B, D>(x, ns, std::nullopt, std::nullopt, 1e-5);
  const auto expected = typed_layer_norm<B, D>(x, k, 1e-5);
  EXPECT_EQ(bits(y.to_data()), bits(expected.to_data()));
  if constexpr (AutodiffBackend<B>) {
    const auto g = x.grad((y * y).sum().backward());
    const auto ge = x.grad((expected * expected).sum().backward());
    ASSERT_TRUE(g && ge);
    EXPECT_EQ(bits(g->to_data()), bits(ge->to_data()));
  }
}

template <class B>
class ErasedNormTest : public ::testing::Test {};
TYPED_TEST_SUITE(ErasedNormTest, test::AllBackends);

TYPED_TEST(ErasedNormTest, BatchNormTrainingGivesTheTypedBitsAtEveryRank) {
  expect_batch_norm_same_bits<TypeParam, 2>(Shape{7, 3});
  expect_batch_norm_same_bits<TypeParam, 3>(Shape{4, 3, 5});
  expect_batch_norm_same_bits<TypeParam, 4>(Shape{2, 3, 4, 5});
  expect_batch_norm_same_bits<TypeParam, 5>(Shape{2, 3, 2, 3, 4});
}

TYPED_TEST(ErasedNormTest, LayerNormGivesTheTypedBitsAtEveryRank) {
  expect_layer_norm_same_bits<TypeParam, 2>(Shape{7, 9}, 1);
  expect_layer_norm_same_bits<TypeParam, 3>(Shape{4, 3, 5}, 2);
  expect_layer_norm_same_bits<TypeParam, 4>(Shape{2, 3, 4, 5}, 1);
  expect_layer_norm_same_bits<TypeParam, 5>(Shape{2, 3, 2, 3, 4}, 3);
}

// ---- optimizer rules: step<I, D> wraps step_primitive; both give the typed bits ----

template <std::size_t D>
void expect_rmsprop_same_bits(const Shape& shape) {
  SCOPED_TRACE(testing::Message() << "rank " << D);
  const auto p0 = random_tensor<Cpu, D>(shape, 7);
  const auto g1 = random_tensor<Cpu, D>(shape, 8);
  const auto g2 = random_tensor<Cpu, D>(shape, 9);
  const optim::RmsProp rule(0.9, 0.5, 1e-3, /*centered=*/false, std::nullopt);
  std::optional<optim::RmsProp::State<Cpu>> state;
  auto p = rule.step(0.01, p0, g1, state);
  p = rule.step(0.01, p, g2, state);
  const auto expected = typed_rmsprop_first_steps<Cpu, D>(p0, g1, g2, 0.01, 0.9, 0.5, 1e-3);
  EXPECT_EQ(bits(p.to_data()), bits(expected.to_data()));
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(Cpu::FloatOps::shape(state->square_avg), shape) << "state keeps the param's shape";
}

TEST(ErasedOptim, RmsPropStepGivesTheTypedBitsAtEveryRank) {
  expect_rmsprop_same_bits<1>(Shape{11});
  expect_rmsprop_same_bits<2>(Shape{3, 4});
  expect_rmsprop_same_bits<4>(Shape{2, 3, 2, 2});
  expect_rmsprop_same_bits<6>(Shape{2, 1, 2, 1, 3, 2});
}

TEST(ErasedOptim, SgdStepPrimitiveMatchesTheHandComputation) {
  // param - lr·grad, element by element: [1, 2, 3, 4] - 0.5·[2, -2, 4, 0] = [0, 3, 1, 4].
  const auto param = Tensor<Cpu, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}});
  const auto grad = Tensor<Cpu, 2>::from_data({{2.f, -2.f}, {4.f, 0.f}});
  const optim::Sgd rule(std::nullopt, std::nullopt);
  std::optional<optim::Sgd::State<Cpu>> state;
  const CpuTensor out = rule.step_primitive<Cpu>(0.5, param.primitive(), grad.primitive(), state);
  const std::vector<float> expected{0.f, 3.f, 1.f, 4.f};
  EXPECT_EQ((Tensor<Cpu, 2>(out).to_data().to_vec<float>()), expected);
  EXPECT_EQ(Cpu::FloatOps::shape(out), (Shape{2, 2}));
}

TEST(ErasedOptim, StepPrimitiveRefusesAGradientOfAnotherShape) {
  const auto param = Tensor<Cpu, 2>::zeros(Shape{2, 2});
  const auto grad = Tensor<Cpu, 2>::zeros(Shape{2, 3});
  const optim::RmsProp rule(0.9, 0.0, 1e-3, false, std::nullopt);
  std::optional<optim::RmsProp::State<Cpu>> state;
  EXPECT_THROW(rule.step_primitive<Cpu>(0.1, param.primitive(), grad.primitive(), state),
               ShapeError);
}

// ---- GradientsParams: the run-time rank of remove_primitive / get_primitive ----

TEST(ErasedGradients, RemovePrimitiveChecksTheRankAndKeepsTheEntry) {
  auto w = Tensor<AD, 2>::ones(Shape{2, 3}).require_grad();
  const module::ParamId id = module::ParamId::next();
  optim::GradientsParams<AD> grads;
  grads.insert(id, Tensor<Cpu, 2>::ones(Shape{2, 3}));
  EXPECT_THAT([&] { grads.remove_primitive(id, 3); },
              ThrowsMessage<RankError>(HasSubstr("GradientsParams::remove: the gradient of "
                                                 "parameter")));
  EXPECT_THAT([&] { grads.get_primitive(id, 1); },
              ThrowsMessage<RankError>(HasSubstr("has rank 2 (shape [2, 3]), asked for rank 1")));
  EXPECT_TRUE(grads.contains(id));
  const auto got = grads.remove_primitive(id, 2);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(Cpu::FloatOps::shape(*got), (Shape{2, 3}));
  EXPECT_FALSE(grads.contains(id));
  EXPECT_FALSE(grads.remove_primitive(id, 2).has_value());
}

}  // namespace
}  // namespace kiln
