// Autodiff<Cpu> benchmarks (Google Benchmark), single thread: the cost of recording and
// back-propagating a training step, next to the same forward pass without gradients.
//
//   ./build/native/bench/bench_autodiff --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//   /usr/bin/python3 bench/native/torch_mlp_step.py   # PyTorch CPU, same model, same run
//
// The model is the anchor MLP of ../shared/reference/performance-anchors.md: 784-128-64-10,
// ReLU, batch 64, cross-entropy on logits (log_softmax + gather + mean). Weights are stored
// [d_input, d_output] here so that the forward pass is x·W (the front end has no fused x·Wᵀ
// yet); the backward products use the GEMM's transposed reads (CpuOps::matmul_transposed).
//   BM_MlpForwardInference: Tensor<Cpu>           forward only
//   BM_MlpForwardUntracked: Tensor<Autodiff<Cpu>> forward, nothing requires gradients
//   BM_MlpForwardBackward:  Tensor<Autodiff<Cpu>> forward + backward (no optimizer step)
// items/s counts training examples.
#include <benchmark/benchmark.h>

#include <cmath>

#include "kiln/kiln.hpp"
#include "bench_threads.hpp"

namespace {

using kiln::Autodiff;
using kiln::Cpu;
using kiln::Distribution;
using kiln::Int;
using kiln::Shape;
using kiln::Tensor;

constexpr std::int64_t kBatch = 64;

template <class B>
struct Mlp {
  Tensor<B, 2> w1, w2, w3;
  Tensor<B, 1> b1, b2, b3;

  static Mlp make(bool require_grad) {
    Cpu::seed(1);
    auto init = [&](std::int64_t in, std::int64_t out) {
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));
      auto w = Tensor<B, 2>::random(Shape{in, out}, Distribution::uniform(-bound, bound));
      if constexpr (kiln::AutodiffBackend<B>) {
        if (require_grad) w = w.require_grad();
      }
      return w;
    };
    auto bias = [&](std::int64_t out) {
      auto b = Tensor<B, 1>::zeros(Shape{out});
      if constexpr (kiln::AutodiffBackend<B>) {
        if (require_grad) b = b.require_grad();
      }
      return b;
    };
    return {init(784, 128), init(128, 64), init(64, 10), bias(128), bias(64), bias(10)};
  }

  Tensor<B, 1> loss(const Tensor<B, 2>& x, const Tensor<B, 2, Int>& targets) const {
    using kiln::activation::log_softmax;
    using kiln::activation::relu;
    auto h1 = relu(x.matmul(w1) + b1.template unsqueeze<2>());
    auto h2 = relu(h1.matmul(w2) + b2.template unsqueeze<2>());
    auto logits = h2.matmul(w3) + b3.template unsqueeze<2>();
    return -log_softmax(std::move(logits), 1).gather(1, targets).mean();
  }
};

template <class B>
std::pair<Tensor<B, 2>, Tensor<B, 2, Int>> batch() {
  Cpu::seed(2);
  auto x = Tensor<B, 2>::random(Shape{kBatch, 784});
  auto y = Tensor<B, 2, Int>::random(Shape{kBatch, 1}, Distribution::uniform(0, 10));
  return {x, y};
}

void BM_MlpForwardInference(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto model = Mlp<Cpu>::make(false);
  const auto [x, y] = batch<Cpu>();
  for (auto _ : state) benchmark::DoNotOptimize(model.loss(x, y).into_scalar());
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_MlpForwardInference)->Unit(benchmark::kMicrosecond);

void BM_MlpForwardUntracked(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  using B = Autodiff<Cpu>;
  const auto model = Mlp<B>::make(false);
  const auto [x, y] = batch<B>();
  for (auto _ : state) benchmark::DoNotOptimize(model.loss(x, y).into_scalar());
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_MlpForwardUntracked)->Unit(benchmark::kMicrosecond);

void BM_MlpForwardBackward(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  using B = Autodiff<Cpu>;
  const auto model = Mlp<B>::make(true);
  const auto [x, y] = batch<B>();
  for (auto _ : state) {
    auto grads = model.loss(x, y).backward();
    benchmark::DoNotOptimize(grads.size());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_MlpForwardBackward)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
