// softmax and log_softmax of the Cpu backend along any dim (kernels/softmax.hpp).
// Along the last dim (or any dim followed only by size-1 dims) rows are contiguous and
// take the fast three-pass kernel; other dims view the tensor as [outer, n, inner] and the
// kernel vectorises across inner.
#include "cpu/dispatch.hpp"
#include "cpu/kernels/softmax.hpp"
#include "cpu/ops/reduce_checks.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

CpuTensor softmax_impl(const char* name, CpuTensor x, std::int64_t dim, bool log) {
  const Shape shape = x.shape();
  const std::size_t d = cpu::ops::check_softmax(name, x.dtype(), shape, dim);
  std::size_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < d; ++i) outer *= static_cast<std::size_t>(shape[i]);
  for (std::size_t i = d + 1; i < shape.rank(); ++i) inner *= static_cast<std::size_t>(shape[i]);
  const auto n = static_cast<std::size_t>(shape[d]);
  const float* in = x.data<float>();
  CpuTensor out = x.is_unique() ? std::move(x) : CpuTensor(shape, DType::F32);
  if (out.num_elements() == 0) return out;
  if (inner == 1) {
    cpu::dispatch_apart(cpu::kernels::SoftmaxLastDimF32{}, in, out.data<float>(), outer, n, log);
  } else {
    cpu::dispatch_apart(cpu::kernels::SoftmaxStridedF32{}, in, out.data<float>(), outer, n, inner,
                        log);
  }
  return out;
}

}  // namespace

CpuTensor CpuOps::softmax(CpuTensor x, std::int64_t dim) {
  return softmax_impl("softmax", std::move(x), dim, false);
}

CpuTensor CpuOps::log_softmax(CpuTensor x, std::int64_t dim) {
  return softmax_impl("log_softmax", std::move(x), dim, true);
}

}  // namespace kiln
