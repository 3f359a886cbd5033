// An op on an rvalue whose buffer has no other owner writes into that buffer (Burn's
// "in place when single owner"); an op on a shared tensor never touches the other handle.
// On Autodiff<Cpu>, tensors that do not require gradients cost nothing extra: the same
// buffers as on Cpu, and no graph node.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/tensors.hpp"

using namespace kiln;
using test::allocations;

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

// ---- untracked tensors on Autodiff<Cpu>

namespace {

/// One op of every float family on tensors that do not require gradients: element-wise,
/// activations, matmul, reductions, sorting, shape and indexing. Every float result flows
/// into one of the returned one-element sums, so a node recorded anywhere would be held
/// (and counted by live_nodes()) while they live.
template <class B>
std::vector<Tensor<B, 1>> untracked_op_chain() {
  const auto x = Tensor<B, 2>::from_data({{0.5f, -1.f, 2.f}, {1.5f, 0.25f, -0.75f}});  // [2, 3]
  const auto idx = Tensor<B, 2, Int>::from_ints({{2, 0, 1}, {0, 0, 2}});
  const auto rows = Tensor<B, 1, Int>::from_ints({1, 0});
  std::vector<Tensor<B, 1>> sums;
  // element-wise: scalar and tensor binaries, unaries, clamp, pow, remainders
  auto a = (x.exp() * 0.5f + 1.f).log().sqrt().clamp(0.f, 2.f);  // > 0
  sums.push_back((x * a - a / x.abs() + x.max_pair(a) - x.min_pair(a)).sum());
  sums.push_back(
      (a.powf(x) + x.powf_scalar(2.0) + (2.f - x) + x % a + x.fmod(a) + x.div_trunc(a)).sum());
  sums.push_back((x.neg().sin().cos().tanh().erf() + activation::sigmoid(x) + x.recip() +
                  (x + 2.f).log1p() + x.sign() + x.ceil() + x.floor() + x.round())
                     .sum());
  // activations
  sums.push_back((activation::relu(x) + activation::gelu(x) + activation::gelu(x, true) +
                  activation::silu(x) + activation::leaky_relu(x) + activation::softplus(x) +
                  activation::softmax(x, 1) + activation::log_softmax(x, 0))
                     .sum());
  // matmul, reductions, sorting
  const auto m = x.matmul(a.transpose());  // [2, 2]
  sums.push_back(m.mean() + m.prod() + m.max() + m.min());
  sums.push_back(
      (x.sum_dim(1) + x.mean_dim(1) + x.prod_dim(1) + x.max_dim(1) + x.min_dim(1) + x.var(1))
          .sum());
  const auto [var, mean] = x.var_mean(1, false);
  sums.push_back((var + mean).sum() + x.max_dim_with_indices(0).first.sum() +
                 x.min_dim_with_indices(0).first.sum() + x.sort(1).sum() + x.topk(2, 1).sum());
  // shape and indexing
  sums.push_back(x.template reshape<1>(std::array<std::int64_t, 1>{6}).flip({0}).sum() +
                 x.permute({1, 0}).sum() + x.template expand<3>({2, 2, 3}).sum() +
                 x.repeat_dim(0, 2).sum() + Tensor<B, 2>::cat({x, a}, 0).sum() +
                 x.slice({Slice::index(1), Slice(0, 2)}).sum() +
                 x.slice_assign({Slice::index(0)}, a.slice({Slice::index(1)})).sum());
  sums.push_back(x.gather(1, idx).sum() + x.select(0, rows).sum() + x.scatter(1, idx, a).sum() +
                 x.select_assign(0, rows, a).sum() + x.mask_where(x.greater_elem(0.0), a).sum() +
                 x.mask_fill(x.lower_elem(0.0), 3.f).sum());
  return sums;
}

}  // namespace

TEST(AutodiffUntrackedTest, OpChainCreatesNoGraphNode) {
  using AD = Autodiff<Cpu>;
  const auto before = autodiff::live_nodes();
  const auto sums = untracked_op_chain<AD>();
  EXPECT_EQ(autodiff::live_nodes(), before);
  for (const auto& s : sums) EXPECT_FALSE(s.is_require_grad());
  // The counter sees this binary's nodes: one leaf is one node.
  const auto w = sums.front().require_grad();
  EXPECT_EQ(autodiff::live_nodes(), before + 1);
}

TEST(AutodiffUntrackedTest, OpChainAllocatesAndComputesAsTheInnerBackend) {
  auto before = allocations();
  const auto on_cpu = untracked_op_chain<Cpu>();
  const auto cpu_allocations = allocations() - before;
  before = allocations();
  const auto on_autodiff = untracked_op_chain<Autodiff<Cpu>>();
  EXPECT_EQ(allocations() - before, cpu_allocations);
  ASSERT_EQ(on_autodiff.size(), on_cpu.size());
  for (std::size_t i = 0; i < on_cpu.size(); ++i) {
    SCOPED_TRACE(i);
    on_autodiff[i].to_data().assert_eq(on_cpu[i].to_data());  // the same kernels, bit for bit
  }
}
