#pragma once
// Every benchmark states its thread count (issue 17): it sets kiln::set_num_threads itself
// (the pool's default is every core, so an unset count measured 2 threads where a table said
// "single thread") and names the count in its row's label ("threads=N"). A benchmark that
// runs on more than one thread reports wall time (UseRealTime: Google Benchmark's default
// CPU time counts only the calling thread) and the CPU time of the whole process
// (MeasureProcessCPUTime), registered with `->Apply(kiln_bench::threaded)`.
#include <benchmark/benchmark.h>

#include <string>

#include "kiln/core/thread_pool.hpp"

namespace kiln_bench {

/// Sets the kernels' thread count for this benchmark and labels its row "threads=N".
inline void use_threads(benchmark::State& state, int threads) {
  kiln::set_num_threads(threads);
  state.SetLabel("threads=" + std::to_string(threads));
}

/// For a benchmark whose thread count is an argument, as `->Apply(kiln_bench::threaded)`:
/// wall time and the process's CPU time.
inline void threaded(benchmark::internal::Benchmark* b) { b->UseRealTime()->MeasureProcessCPUTime(); }

}  // namespace kiln_bench
