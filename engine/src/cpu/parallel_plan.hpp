#pragma once
// Splitting an element-wise kernel across the thread pool (engine/src/core/parallel.hpp).
// Element-wise kernels are maps: each output element depends only on the inputs at its own
// position, so any split gives bit-identical results, provided a chunk boundary never moves
// an element from a kernel's vector body into its scalar tail (a transcendental's scalar
// std:: call may round differently from the xsimd one): contiguous chunks start at multiples
// of kAlign elements, a multiple of every arch's batch width (64 bytes of u8 at AVX-512).
#include <algorithm>
#include <array>
#include <cstdint>

#include "core/parallel.hpp"
#include "cpu/kernels/broadcast.hpp"

namespace kiln::cpu {

/// Chunk boundaries of split contiguous kernels, in elements.
inline constexpr std::int64_t kAlign = 64;

/// Runs fn(sub_plan, offsets, out_offset) over disjoint pieces of `plan` covering it once:
/// operand k of a piece starts at element offsets[k] of operand k, its output at element
/// out_offset. One piece (the plan itself, zero offsets) when the op has fewer than
/// 2 · kElementwiseGrain elements or one thread runs; else a single-run plan is cut along
/// its run and a multi-run plan along its outermost dim.
template <std::size_t N, class Fn>
void parallel_plan(const kernels::Plan<N>& plan, Fn&& fn) {
  const std::int64_t total = plan.num_runs * plan.run;
  const std::array<std::int64_t, N> zero{};
  if constexpr (!detail::kHasThreads) {
    fn(plan, zero.data(), std::int64_t{0});
    return;
  } else if (detail::parallel_parts(total, detail::kElementwiseGrain) <= 1) {
    fn(plan, zero.data(), std::int64_t{0});
    return;
  }
  if (plan.outer_rank == 0) {
    detail::parallel_for(plan.run, detail::kElementwiseGrain, kAlign,
                         [&](std::int64_t begin, std::int64_t end) {
                           kernels::Plan<N> sub = plan;
                           sub.run = end - begin;
                           std::array<std::int64_t, N> off{};
                           for (std::size_t k = 0; k < N; ++k) off[k] = plan.run_vector[k] ? begin : 0;
                           fn(static_cast<const kernels::Plan<N>&>(sub),
                              static_cast<const std::int64_t*>(off.data()), begin);
                         });
    return;
  }
  const std::int64_t rows = plan.outer_shape[0];
  const std::int64_t row_elements = total / rows;  // runs under one outer index × run
  const std::int64_t grain_rows =
      std::max<std::int64_t>(1, detail::kElementwiseGrain / std::max<std::int64_t>(row_elements, 1));
  detail::parallel_for(rows, grain_rows, 1, [&](std::int64_t begin, std::int64_t end) {
    kernels::Plan<N> sub = plan;
    sub.outer_shape[0] = end - begin;
    sub.num_runs = plan.num_runs / rows * (end - begin);
    std::array<std::int64_t, N> off{};
    for (std::size_t k = 0; k < N; ++k) off[k] = begin * plan.outer_stride[k][0];
    fn(static_cast<const kernels::Plan<N>&>(sub), static_cast<const std::int64_t*>(off.data()),
       begin * row_elements);
  });
}

/// Runs fn(begin, end) over [0, n) in chunks of at least kElementwiseGrain elements starting
/// at multiples of kAlign (one call fn(0, n) for a small n or one thread).
template <class Fn>
void parallel_elements(std::int64_t n, Fn&& fn) {
  if constexpr (!detail::kHasThreads) {
    if (n > 0) fn(std::int64_t{0}, n);
  } else if (detail::parallel_parts(n, detail::kElementwiseGrain) <= 1) {
    if (n > 0) fn(std::int64_t{0}, n);
  } else {
    detail::parallel_for(n, detail::kElementwiseGrain, kAlign, fn);
  }
}

}  // namespace kiln::cpu
