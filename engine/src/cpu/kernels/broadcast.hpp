#pragma once
// Iteration over a NumPy-broadcast element-wise op with N inputs and one contiguous output.
//
// The ops layer (engine/src/cpu/ops/broadcast.cpp) turns the input shapes into a `Plan`:
// size-1 output dims dropped, adjacent dims merged wherever every operand is contiguous
// across them, and the innermost dim split off as the "run". Along the run each operand
// either steps by 1 (a vector) or by 0 (one broadcast scalar), so kernels only ever see the
// three loop shapes vector-vector, vector-scalar and scalar-vector (plus scalar-scalar).
// Kernels walk the outer dims with `for_each_run` and handle one run at a time, so the
// per-run overhead is a few adds, not a call through the dispatcher.
#include <cstddef>
#include <cstdint>

namespace kiln::cpu::kernels {

/// The most dims a plan keeps (Shape::max_rank).
inline constexpr std::size_t kPlanMaxRank = 8;

/// How to walk a broadcast op: `outer_rank` outer dims, then runs of `run` elements.
/// Strides are in elements of each operand; the output is contiguous (run r starts at
/// r * run). Built by `make_plan` in the ops layer; kernels only read it.
template <std::size_t N>
struct Plan {
  std::size_t outer_rank = 0;                       ///< dims outside the run
  std::int64_t outer_shape[kPlanMaxRank] = {};      ///< their sizes
  std::int64_t outer_stride[N][kPlanMaxRank] = {};  ///< per operand, 0 where broadcast
  std::int64_t run = 0;                             ///< elements per run (>= 1 unless empty)
  bool run_vector[N] = {};                          ///< operand steps by 1 along the run (else 0)
  std::int64_t num_runs = 0;                        ///< product of outer_shape
};

/// Calls `fn(offsets, out_offset, n)` for every run in row-major order, where offsets[k]
/// is operand k's element offset at the start of the run. Inline template: each kernel
/// instantiation gets its own copy, compiled with that kernel's instruction set.
template <std::size_t N, class Fn>
inline void for_each_run(const Plan<N>& plan, Fn&& fn) {
  std::int64_t index[kPlanMaxRank] = {};
  std::int64_t offset[N] = {};
  const std::size_t rank = plan.outer_rank;
  for (std::int64_t r = 0; r < plan.num_runs; ++r) {
    fn(static_cast<const std::int64_t*>(offset), r * plan.run, plan.run);
    for (std::size_t d = rank; d-- > 0;) {
      ++index[d];
      for (std::size_t k = 0; k < N; ++k) offset[k] += plan.outer_stride[k][d];
      if (index[d] < plan.outer_shape[d]) break;
      for (std::size_t k = 0; k < N; ++k) {
        offset[k] -= plan.outer_stride[k][d] * plan.outer_shape[d];
      }
      index[d] = 0;
    }
  }
}

}  // namespace kiln::cpu::kernels
