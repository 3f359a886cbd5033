// An op on an rvalue whose buffer has no other owner writes into that buffer (Burn's
// "in place when single owner"); an op on a shared tensor never touches the other handle.
#include <gtest/gtest.h>

#include <utility>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

using namespace kiln;

template <class B>
class BufferReuseTest : public ::testing::Test {};
TYPED_TEST_SUITE(BufferReuseTest, test::AllBackends);

TYPED_TEST(BufferReuseTest, ActivationOfAnRvalueReusesItsBuffer) {
  auto x = Tensor<TypeParam, 1>::from_floats({-1.f, 2.f});
  const auto before = memory_stats().total_allocations;
  auto y = activation::relu(std::move(x));
  EXPECT_EQ(memory_stats().total_allocations, before);
  y.to_data().assert_eq(TensorData::from({0.f, 2.f}));
}

TYPED_TEST(BufferReuseTest, ActivationOfASharedTensorLeavesItIntact) {
  const auto x = Tensor<TypeParam, 1>::from_floats({-1.f, 2.f});
  const auto before = memory_stats().total_allocations;
  auto y = activation::sigmoid(x);
  EXPECT_EQ(memory_stats().total_allocations, before + 1);
  x.to_data().assert_eq(TensorData::from({-1.f, 2.f}));
  y.to_data().assert_approx_eq(TensorData::from({0.26894142f, 0.88079708f}),
                               Tolerance::default_f32());
}

TYPED_TEST(BufferReuseTest, ClampOfAnRvalueReusesItsBufferAndOfAnLvalueDoesNot) {
  auto x = Tensor<TypeParam, 1>::from_floats({-1.f, 0.5f, 2.f});
  auto before = memory_stats().total_allocations;
  auto shared = x.clamp(0.f, 1.f);
  EXPECT_EQ(memory_stats().total_allocations, before + 1);
  x.to_data().assert_eq(TensorData::from({-1.f, 0.5f, 2.f}));
  before = memory_stats().total_allocations;
  auto moved = std::move(x).clamp_min(0.f);
  EXPECT_EQ(memory_stats().total_allocations, before);
  shared.to_data().assert_eq(TensorData::from({0.f, 0.5f, 1.f}));
  moved.to_data().assert_eq(TensorData::from({0.f, 0.5f, 2.f}));
}

TYPED_TEST(BufferReuseTest, ChainedRvalueOpsAllocateNothing) {
  auto x = Tensor<TypeParam, 2>::ones({8, 8});
  const auto before = memory_stats().total_allocations;
  auto y = (std::move(x).exp() * 2.f + 1.f).clamp_max(3.f);
  EXPECT_EQ(memory_stats().total_allocations, before);
  y.to_data().assert_approx_eq(TensorData(Shape({8, 8}), std::vector<float>(64, 3.f)),
                               Tolerance::exact());
}
