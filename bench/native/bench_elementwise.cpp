// Element-wise throughput of the Cpu backend through the Tensor API (Google Benchmark):
// c = a + b on two 4M-float tensors, reporting memory traffic in GB/s (8 bytes read and
// 4 written per element; 48 MiB per call, far past the caches, so this is a bandwidth
// test). BM_AddInPlace passes `a` as an rvalue so the op may write into its buffer.
// The ops live in engine/src/cpu/ops/elementwise_ops.cpp, kernels in cpu/kernels/binary.hpp.
// On 1 and 2 threads (the argument; the op splits its elements above 32,768, wall time).
#include <benchmark/benchmark.h>

#include <utility>

#include "kiln/kiln.hpp"
#include "bench_threads.hpp"

namespace {

constexpr std::int64_t kElements = 4 * 1024 * 1024;

/// Bytes moved per element of c = a + b: two f32 reads, one f32 write.
benchmark::Counter bandwidth_counter() {
  return benchmark::Counter(static_cast<double>(kElements) * 12.0 * 1e-9,
                            benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Add(benchmark::State& state) {
  using namespace kiln;
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  Cpu::seed(3);
  const auto a = Tensor<Cpu, 1>::random({kElements}, Distribution::uniform(-1.0, 1.0));
  const auto b = Tensor<Cpu, 1>::random({kElements}, Distribution::uniform(-1.0, 1.0));
  for (auto _ : state) {
    auto c = a + b;
    benchmark::DoNotOptimize(c);
  }
  state.counters["GB/s"] = bandwidth_counter();
}

void BM_AddInPlace(benchmark::State& state) {
  using namespace kiln;
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  Cpu::seed(4);
  auto a = Tensor<Cpu, 1>::random({kElements}, Distribution::uniform(-1.0, 1.0));
  const auto b = Tensor<Cpu, 1>::random({kElements}, Distribution::uniform(-1.0, 1.0));
  for (auto _ : state) {
    a = std::move(a) + b;
    benchmark::DoNotOptimize(a);
  }
  state.counters["GB/s"] = bandwidth_counter();
}

}  // namespace

BENCHMARK(BM_Add)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AddInPlace)->Arg(1)->Arg(2)->ArgName("threads")->Apply(kiln_bench::threaded)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();

