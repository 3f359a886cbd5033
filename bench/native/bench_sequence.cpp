// Sequence-layer benchmarks (Google Benchmark, issue 19): one training step's forward and
// backward of an LSTM and of a 2-layer transformer encoder, on 1 and 2 threads (the
// benchmark argument, set with kiln::set_num_threads and printed in the name; wall time
// is the measure, as a second thread's work is not in the calling thread's CPU time).
//
//   ./build/native/bench/bench_sequence --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   bash bench/run_sequence.sh        # this, PyTorch (bench/native/torch_sequence.py) and
//                                     # the WebAssembly build (bench/wasm/sequence.mjs) in one run
//
//   BM_LstmStep:        nn::Lstm (d_input 128, d_hidden 128, bias) on x [32, 64, 128]
//   BM_TransformerStep: nn::TransformerEncoder (d_model 128, d_ff 512, 4 heads, 2 layers,
//                       post-norm, relu, dropout 0: PyTorch's TransformerEncoderLayer defaults
//                       but dropout) on x [32, 64, 128]
// One step = forward on Autodiff<Cpu>, then backward of sum(output · dy): the gradients of x
// and of every parameter. The same work as torch_sequence.py.
#include <benchmark/benchmark.h>

#include "kiln/kiln.hpp"
#include "bench_threads.hpp"

namespace {

using AD = kiln::Autodiff<kiln::Cpu>;
using kiln::Distribution;
using kiln::Shape;
using kiln::Tensor;

constexpr std::int64_t kBatch = 32, kSeq = 64, kModel = 128;

Tensor<AD, 3> uniform() {
  return Tensor<AD, 3>::random(Shape{kBatch, kSeq, kModel}, Distribution::uniform(-1, 1));
}

template <class Forward>
void run_steps(benchmark::State& state, Forward&& forward) {
  AD::seed(1);
  const auto x0 = uniform();
  const auto dy = uniform();
  for (auto _ : state) {
    const auto x = x0.require_grad();  // a new leaf each step
    const auto grads = (forward(x) * dy).sum().backward();
    benchmark::DoNotOptimize(x.grad(grads));
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void BM_LstmStep(benchmark::State& state) {
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  AD::seed(0);
  const auto lstm = kiln::nn::LstmConfig(kModel, kModel, true).init<AD>();
  run_steps(state, [&](const Tensor<AD, 3>& x) { return lstm.forward(x).output; });
}

void BM_TransformerStep(benchmark::State& state) {
  kiln_bench::use_threads(state, static_cast<int>(state.range(0)));
  AD::seed(0);
  auto config = kiln::nn::TransformerEncoderConfig(kModel, 4 * kModel, 4, 2);
  config.dropout = 0.0;
  config.activation = "relu";
  const auto encoder = config.init<AD>();
  run_steps(state, [&](const Tensor<AD, 3>& x) {
    return encoder.forward(kiln::nn::TransformerEncoderInput<AD>(x));
  });
}

}  // namespace

BENCHMARK(BM_LstmStep)->ArgName("threads")->Arg(1)->Arg(2)->Apply(kiln_bench::threaded)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TransformerStep)->ArgName("threads")->Arg(1)->Arg(2)->Apply(kiln_bench::threaded)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
