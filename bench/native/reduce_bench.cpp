// Reductions of the Cpu backend: whole-tensor and along the innermost, middle and outermost
// dims of the same data (the non-innermost dims must not be slower by much: no strided
// gathers), plus argmax, var_mean and sort. Throughput counters are input GB/s (of CPU
// time). Run: ./build/native/bench/reduce_bench; compare with numpy (np.sum(a, axis=d) etc.
// through /usr/bin/python3) in the same session, the machines are shared and noisy.
// One thread (set and labelled, bench_threads.hpp).
#include <benchmark/benchmark.h>

#include "kiln/kiln.hpp"
#include "bench_threads.hpp"

using namespace kiln;

namespace {

CpuTensor data(const Shape& s) {
  Cpu::seed(7);
  return CpuOps::random(s, Distribution::uniform(-1.0, 1.0), DType::F32, CpuDevice{});
}

void set_bytes(benchmark::State& state, const CpuTensor& x) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(x.num_bytes()));
}

// 16M floats (64 MB): memory bound.
void BM_SumWhole(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto x = data(Shape{1 << 24});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::reduce(ReduceOp::Sum, x));
  set_bytes(state, x);
}
BENCHMARK(BM_SumWhole)->Unit(benchmark::kMillisecond);

// [4096, 4096] along dim 1 (rows) and dim 0 (columns); [256, 256, 256] along dim 1.
void BM_SumDim(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto rank = state.range(0);
  const auto x = rank == 2 ? data(Shape{4096, 4096}) : data(Shape{256, 256, 256});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::reduce_dim(ReduceOp::Sum, x, state.range(1)));
  set_bytes(state, x);
}
BENCHMARK(BM_SumDim)->Args({2, 1})->Args({2, 0})->Args({3, 0})->Args({3, 1})->Args({3, 2})
    ->Unit(benchmark::kMillisecond);

// Small inner size: [1M, 8] along dim 0 and [8, 1M]-like rows of 8 ([1M, 8] along dim 1).
void BM_SumDimNarrow(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto x = data(Shape{1 << 20, 8});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::reduce_dim(ReduceOp::Sum, x, state.range(0)));
  set_bytes(state, x);
}
BENCHMARK(BM_SumDimNarrow)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_MaxDim(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto x = data(Shape{4096, 4096});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::reduce_dim(ReduceOp::Max, x, state.range(0)));
  set_bytes(state, x);
}
BENCHMARK(BM_MaxDim)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_Argmax(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto x = data(Shape{4096, 4096});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::argmax(x, state.range(0)));
  set_bytes(state, x);
}
BENCHMARK(BM_Argmax)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

void BM_VarMean(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto x = data(Shape{4096, 4096});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::var_mean(x, state.range(0), true));
  set_bytes(state, x);
}
BENCHMARK(BM_VarMean)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

// [1024, 1024] sorted along dim 1 and dim 0.
void BM_Sort(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto x = data(Shape{1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(CpuOps::sort_with_indices(x, state.range(0), false));
  set_bytes(state, x);
}
BENCHMARK(BM_Sort)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
