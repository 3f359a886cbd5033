// SGEMM benchmarks of the Cpu backend (Google Benchmark), one thread (set, and labelled
// "threads=1", bench_threads.hpp) except BM_SgemmThreads (its last argument).
//
//   ./build/native/bench/bench_gemm --benchmark_repetitions=5 \
//       --benchmark_report_aggregates_only=true
//
// BM_Sgemm calls the packed GEMM directly (C = A·B, all row-major n x n); BM_TensorMatmul
// goes through Tensor<Cpu, 2>::matmul (allocates the output each time). Both report
// GFLOP/s = 2·n³ / time. KILN_GEMM_KC / KILN_GEMM_MC / KILN_GEMM_NC override the cache
// blocking and KILN_GEMM_ARCH=fma3+avx2 (or sse2) runs BM_Sgemm with a lesser instruction
// set (tuning only). bench/run_native.sh compares with numpy/OpenBLAS.
//
// BM_SgemmThreads/m/k/n/threads runs one product on 1 or more threads of the kernels' pool
// (kiln::set_num_threads); its times are wall-clock ("real_time", GFLOPS from it) and CPU
// time of the whole process ("cpu_time", all threads), which on a loaded machine tell
// apart a lack of speed-up from a lack of free cores. KILN_GEMM_THREAD_WORK overrides the
// multiply-adds per thread below which the GEMM does not split (Blocking::thread_work):
//
//   ./build/native/bench/bench_gemm --benchmark_filter=BM_SgemmThreads
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "kiln/kiln.hpp"
#include "bench_threads.hpp"

namespace {

std::vector<float> random_matrix(std::size_t rows, std::size_t cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(rows * cols);
  for (auto& x : v) x = dist(gen);
  return v;
}

/// 2·n³ floating-point operations per iteration, shown as GFLOP/s.
benchmark::Counter gflops_counter(double n) {
  return benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

kiln::cpu::gemm::Blocking blocking_from_env() {
  kiln::cpu::gemm::Blocking b;
  const auto read = [](const char* name) -> std::size_t {
    const char* s = std::getenv(name);
    return s ? std::strtoull(s, nullptr, 10) : 0;
  };
  b.kc = read("KILN_GEMM_KC");
  b.mc = read("KILN_GEMM_MC");
  b.nc = read("KILN_GEMM_NC");
  b.thread_work = read("KILN_GEMM_THREAD_WORK");
  return b;
}

void BM_Sgemm(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto a = random_matrix(n, n, 1);
  const auto b = random_matrix(n, n, 2);
  std::vector<float> c(n * n);
  const auto n_s = static_cast<std::ptrdiff_t>(n);
  kiln::cpu::gemm::SgemmArgs args;
  args.m = args.n = args.k = n;
  args.a = {a.data(), n_s, 1};
  args.b = {b.data(), n_s, 1};
  args.c = {c.data(), n_s, 1};
  const auto blocking = blocking_from_env();
  const char* arch = std::getenv("KILN_GEMM_ARCH");
  if (arch && !kiln::cpu::gemm::sgemm_with_arch(arch, args, blocking)) {
    state.SkipWithError("KILN_GEMM_ARCH names an instruction set this machine lacks");
    return;
  }
  for (auto _ : state) {
    if (arch) {
      kiln::cpu::gemm::sgemm_with_arch(arch, args, blocking);
    } else {
      kiln::cpu::gemm::sgemm(args, blocking);
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = gflops_counter(static_cast<double>(n));
}

/// The products of an MNIST MLP step (784-128-64-10, batch 64) in the layouts training
/// uses them: forward y = x·Wᵀ (W stored [d_output, d_input], so B is read transposed),
/// backward dx = dy·W (plain) and dW = dyᵀ·x (A read transposed). Args: m, k, n,
/// transpose_a, transpose_b.
void BM_SgemmShapes(benchmark::State& state) {
  kiln_bench::use_threads(state, 1);
  const auto m = static_cast<std::size_t>(state.range(0));
  const auto k = static_cast<std::size_t>(state.range(1));
  const auto n = static_cast<std::size_t>(state.range(2));
  const bool ta = state.range(3) != 0, tb = state.range(4) != 0;
  const auto a = random_matrix(m, k, 1);
  const auto b = random_matrix(k, n, 2);
  std::vector<float> c(m * n);
  const auto s = [](std::size_t x) { return static_cast<std::ptrdiff_t>(x); };
  kiln::cpu::gemm::SgemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = ta ? kiln::cpu::gemm::ConstMatrixView{a.data(), 1, s(m)}
              : kiln::cpu::gemm::ConstMatrixView{a.data(), s(k), 1};
  args.b = tb ? kiln::cpu::gemm::ConstMatrixView{b.data(), 1, s(k)}
              : kiln::cpu::gemm::ConstMatrixView{b.data(), s(n), 1};
  args.c = {c.data(), s(n), 1};
  for (auto _ : state) {
    kiln::cpu::gemm::sgemm(args);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(m) * n * k * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SgemmThreads(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  const auto k = static_cast<std::size_t>(state.range(1));
  const auto n = static_cast<std::size_t>(state.range(2));
  const int threads = static_cast<int>(state.range(3));
  const auto a = random_matrix(m, k, 1);
  const auto b = random_matrix(k, n, 2);
  std::vector<float> c(m * n);
  const auto s = [](std::size_t x) { return static_cast<std::ptrdiff_t>(x); };
  kiln::cpu::gemm::SgemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = {a.data(), s(k), 1};
  args.b = {b.data(), s(n), 1};
  args.c = {c.data(), s(n), 1};
  const auto blocking = blocking_from_env();
  const int saved = kiln::num_threads();
  kiln_bench::use_threads(state, threads);
  for (auto _ : state) {
    kiln::cpu::gemm::sgemm(args, blocking);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  kiln::set_num_threads(saved);
  state.counters["GFLOPS"] = benchmark::Counter(2.0 * static_cast<double>(m) * n * k * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TensorMatmul(benchmark::State& state) {
  using namespace kiln;
  kiln_bench::use_threads(state, 1);
  const auto n = state.range(0);
  Cpu::seed(7);
  const auto dist = Distribution::uniform(-1.0, 1.0);
  const auto a = Tensor<Cpu, 2>::random({n, n}, dist);
  const auto b = Tensor<Cpu, 2>::random({n, n}, dist);
  for (auto _ : state) {
    auto c = a.matmul(b);
    benchmark::DoNotOptimize(c);
  }
  state.counters["GFLOPS"] = gflops_counter(static_cast<double>(n));
}

}  // namespace

BENCHMARK(BM_Sgemm)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SgemmShapes)
    ->ArgNames({"m", "k", "n", "ta", "tb"})
    ->Args({64, 784, 128, 0, 1})  // layer 1 forward: x·W1ᵀ
    ->Args({64, 128, 64, 0, 1})   // layer 2 forward
    ->Args({64, 64, 10, 0, 1})    // layer 3 forward
    ->Args({64, 128, 784, 0, 0})  // layer 1 dx = dy·W1 (not needed for the input, shown)
    ->Args({128, 64, 784, 1, 0})  // layer 1 dW1 = dyᵀ·x
    ->Args({64, 64, 128, 1, 0})   // layer 2 dW2
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SgemmThreads)
    ->ArgNames({"m", "k", "n", "threads"})
    ->ArgsProduct({{16, 32, 48, 64}, {64}, {64, 128}, {1, 2}})  // near the threshold
    ->ArgsProduct({{64}, {784}, {128}, {1, 2}})                 // MNIST layer 1 forward
    ->ArgsProduct({{128}, {64}, {784}, {1, 2}})                 // its dW (as m x k x n)
    ->ArgsProduct({{64}, {128}, {784}, {1, 2}})                 // its dx
    ->Args({256, 256, 256, 1})->Args({256, 256, 256, 2})
    ->Args({512, 512, 512, 1})->Args({512, 512, 512, 2})
    ->Args({1024, 1024, 1024, 1})->Args({1024, 1024, 1024, 2})
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TensorMatmul)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  benchmark::AddCustomContext("kiln_simd", std::string(kiln::Cpu::simd_arch()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
