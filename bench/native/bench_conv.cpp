// Convolution benchmarks (Google Benchmark): the two conv layers of the anchor CNN of
// ../shared/reference/performance-anchors.md at batch 64, forward and backward, on 1 and 2
// threads (kiln::set_num_threads; the benchmark argument).
//
//   ./build/native/bench/bench_conv --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//   /usr/bin/python3 bench/native/torch_conv.py       # PyTorch CPU, same shapes, same run
//
//   Conv1: x [64, 1, 28, 28], weight [8, 1, 3, 3], bias [8] -> [64, 8, 26, 26]
//   Conv2: x [64, 8, 13, 13], weight [16, 8, 3, 3], bias [16] -> [64, 16, 11, 11]
//   *Forward:  CpuOps::conv2d (these small stride-1 layers take the direct kernels of
//              engine/src/cpu/kernels/conv_direct.hpp, bias as the accumulators' start)
//   *Backward: the gradients a training step needs from the output gradient: weight and
//              bias for Conv1 (its input is the image, untracked), and also x for Conv2.
//   BM_MaxPool1: max_pool2d_with_indices 2×2 on [64, 8, 26, 26] (Conv1's output).
// items/s counts images.
#include <benchmark/benchmark.h>

#include "kiln/kiln.hpp"
#include "bench_threads.hpp"

namespace {

using kiln::ConvOptions;
using kiln::Cpu;
using kiln::CpuOps;
using kiln::CpuTensor;
using kiln::Distribution;
using kiln::Shape;
using kiln::Tensor;

constexpr std::int64_t kBatch = 64;

struct Layer {
  CpuTensor x, weight, bias, grad_out;
};

Layer make_layer(std::int64_t c_in, std::int64_t c_out, std::int64_t size) {
  Cpu::seed(1);
  auto u = [](const Shape& s) {
    return Tensor<Cpu, 1>::random(Shape{s.num_elements()}, Distribution::uniform(-1, 1))
        .into_primitive()
        .with_shape(s);
  };
  const std::int64_t out = size - 2;
  return {u(Shape{kBatch, c_in, size, size}), u(Shape{c_out, c_in, 3, 3}), u(Shape{c_out}),
          u(Shape{kBatch, c_out, out, out})};
}

void forward(benchmark::State& state, std::int64_t c_in, std::int64_t c_out, std::int64_t size) {
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  const Layer l = make_layer(c_in, c_out, size);
  for (auto _ : state) {
    auto y = CpuOps::conv2d(l.x, l.weight, l.bias, ConvOptions<2>());
    benchmark::DoNotOptimize(y.data<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void backward(benchmark::State& state, std::int64_t c_in, std::int64_t c_out, std::int64_t size,
              bool grad_x) {
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  const Layer l = make_layer(c_in, c_out, size);
  const ConvOptions<2> o;
  for (auto _ : state) {
    auto dw = CpuOps::conv2d_weight_backward(l.x, l.weight.shape(), l.grad_out, o);
    auto db = CpuOps::conv_bias_backward(l.grad_out);
    benchmark::DoNotOptimize(dw.data<float>());
    benchmark::DoNotOptimize(db.data<float>());
    if (grad_x) {
      auto dx = CpuOps::conv2d_x_backward(l.x.shape(), l.weight, l.grad_out, o);
      benchmark::DoNotOptimize(dx.data<float>());
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void BM_Conv1Forward(benchmark::State& state) { forward(state, 1, 8, 28); }
void BM_Conv1Backward(benchmark::State& state) { backward(state, 1, 8, 28, false); }
void BM_Conv2Forward(benchmark::State& state) { forward(state, 8, 16, 13); }
void BM_Conv2Backward(benchmark::State& state) { backward(state, 8, 16, 13, true); }

// Max pool 2×2 with indices (what autodiff records) on Conv1's output: [64, 8, 26, 26].
void BM_MaxPool1(benchmark::State& state) {
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  const Layer l = make_layer(8, 8, 26);
  for (auto _ : state) {
    auto [y, idx] = CpuOps::max_pool2d_with_indices(l.x, kiln::MaxPool2dOptions{});
    benchmark::DoNotOptimize(y.data<float>());
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_MaxPool1)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)
    ->Unit(benchmark::kMicrosecond);

BENCHMARK(BM_Conv1Forward)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Conv1Backward)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Conv2Forward)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Conv2Backward)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
