// Matrix product of the Cpu backend: shape checks, batch broadcasting, and one packed GEMM
// call (engine/src/cpu/gemm/) per batch element, batch elements spread over the thread pool
// when there are enough of them.
#include <algorithm>
#include <array>
#include <cstdint>

#include "core/parallel.hpp"
#include "cpu/gemm/gemm.hpp"
#include "cpu/ops/shape_checks.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/thread_pool.hpp"
#include "kiln/core/checked.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
CpuTensor CpuOps::matmul(const CpuTensor& lhs, const CpuTensor& rhs) {
  return matmul_transposed(lhs, rhs, false, false);
}

CpuTensor CpuOps::matmul_transposed(const CpuTensor& lhs, const CpuTensor& rhs, bool transpose_lhs,
                                    bool transpose_rhs) {
  const Shape out_shape = cpu::ops::matmul_shape(lhs.shape(), lhs.dtype(), rhs.shape(), rhs.dtype(),
                                                 transpose_lhs, transpose_rhs);
  CpuTensor out(out_shape, DType::F32);
  if (out.num_elements() == 0) return out;

  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  const std::size_t rank = out_shape.rank();
  const std::size_t batch_rank = rank - 2;
  const std::int64_t m = out_shape[rank - 2], n = out_shape[rank - 1];
  const std::int64_t k = ls[transpose_lhs ? rank - 2 : rank - 1];

  std::int64_t batch = 1;
  bool rhs_has_batch = false;
  for (std::size_t d = 0; d < batch_rank; ++d) {
    batch *= out_shape[d];
    rhs_has_batch = rhs_has_batch || rs[d] != 1;
  }

  cpu::gemm::SgemmArgs args;
  args.k = static_cast<std::size_t>(k);
  args.n = static_cast<std::size_t>(n);
  // Every dim fits in ptrdiff_t, also on wasm32: a CpuTensor holds fewer than 2^31 elements.
  // A stored transposed ([k, m] row-major) is read with swapped strides.
  args.a = transpose_lhs ? cpu::gemm::ConstMatrixView{lhs.data<float>(), 1, static_cast<std::ptrdiff_t>(m)}
                         : cpu::gemm::ConstMatrixView{lhs.data<float>(), static_cast<std::ptrdiff_t>(k), 1};
  args.b = transpose_rhs ? cpu::gemm::ConstMatrixView{rhs.data<float>(), 1, static_cast<std::ptrdiff_t>(k)}
                         : cpu::gemm::ConstMatrixView{rhs.data<float>(), static_cast<std::ptrdiff_t>(n), 1};
  args.c = {out.data<float>(), static_cast<std::ptrdiff_t>(n), 1};

  if (!rhs_has_batch && !transpose_lhs) {
    // One rhs matrix for every batch element: lhs's batch dims are all real (they equal the
    // output's), so the batch folds into m: [batch·m, k] x [k, n] (one GEMM, one packing of B).
    args.m = static_cast<std::size_t>(batch * m);
    cpu::gemm::sgemm(args);
    return out;
  }

  // Element strides of each operand's batch dims; 0 where a dim of size 1 is broadcast.
  std::array<std::int64_t, Shape::max_rank> lhs_stride{}, rhs_stride{};
  {
    std::int64_t ls_acc = m * k, rs_acc = k * n;
    for (std::size_t d = batch_rank; d-- > 0;) {
      lhs_stride[d] = ls[d] == 1 ? 0 : ls_acc;
      rhs_stride[d] = rs[d] == 1 ? 0 : rs_acc;
      ls_acc *= ls[d];
      rs_acc *= rs[d];
    }
  }
  args.m = static_cast<std::size_t>(m);
  const auto run_items = [&](std::int64_t begin, std::int64_t end) {
    cpu::gemm::SgemmArgs item = args;
    for (std::int64_t b = begin; b < end; ++b) {
      // Offsets of batch element b: its index over the batch dims, last dim fastest.
      std::int64_t lhs_offset = 0, rhs_offset = 0, rest = b;
      for (std::size_t d = batch_rank; d-- > 0;) {
        const std::int64_t i = rest % out_shape[d];
        rest /= out_shape[d];
        lhs_offset += i * lhs_stride[d];
        rhs_offset += i * rhs_stride[d];
      }
      item.a.data = lhs.data<float>() + lhs_offset;
      item.b.data = rhs.data<float>() + rhs_offset;
      item.c.data = out.data<float>() + b * m * n;
      cpu::gemm::sgemm(item);
    }
  };
  // Threads: whole batch elements per thread when there are enough of them, or when each is
  // too small for the GEMM to split it; else the GEMM splits each product. Either way every
  // element of the output is computed as on one thread (bit-identical results).
  const auto threads = static_cast<std::uint64_t>(num_threads());
  const std::uint64_t item_work = static_cast<std::uint64_t>(m) * static_cast<std::uint64_t>(n) *
                                  static_cast<std::uint64_t>(k);
  const std::uint64_t thread_work = cpu::gemm::default_blocking().thread_work;
  const std::uint64_t total_work = item_work * static_cast<std::uint64_t>(batch);
  const std::uint64_t parts =
      std::min<std::uint64_t>(static_cast<std::uint64_t>(batch), total_work / thread_work);
  if (threads > 1 && parts > 1 &&
      (static_cast<std::uint64_t>(batch) >= threads || item_work < 2 * thread_work)) {
    detail::parallel_for(static_cast<std::int64_t>(parts), [&](std::int64_t p0, std::int64_t p1) {
      const auto at = [&](std::int64_t p) {
        return static_cast<std::int64_t>(static_cast<std::uint64_t>(p) *
                                         static_cast<std::uint64_t>(batch) / parts);
      };
      run_items(at(p0), at(p1));
    });
  } else {
    run_items(0, batch);
  }
  return out;
}

}  // namespace kiln
