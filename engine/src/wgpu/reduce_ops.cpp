// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::reduce(ReduceOp op, const WgpuTensor& x) { wgpu::pending("reduce"); }

WgpuTensor WgpuOps::reduce_dim(ReduceOp op, const WgpuTensor& x, std::int64_t dim) { wgpu::pending("reduce_dim"); }

std::pair<WgpuTensor, WgpuTensor> WgpuOps::max_dim_with_indices(const WgpuTensor& x, std::int64_t dim) { wgpu::pending("max_dim_with_indices"); }

std::pair<WgpuTensor, WgpuTensor> WgpuOps::min_dim_with_indices(const WgpuTensor& x, std::int64_t dim) { wgpu::pending("min_dim_with_indices"); }

WgpuTensor WgpuOps::argmax(const WgpuTensor& x, std::int64_t dim) { wgpu::pending("argmax"); }

WgpuTensor WgpuOps::argmin(const WgpuTensor& x, std::int64_t dim) { wgpu::pending("argmin"); }

std::pair<WgpuTensor, WgpuTensor> WgpuOps::var_mean(const WgpuTensor& x, std::int64_t dim, bool unbiased) { wgpu::pending("var_mean"); }

std::pair<WgpuTensor, WgpuTensor> WgpuOps::sort_with_indices(const WgpuTensor& x, std::int64_t dim, bool descending) { wgpu::pending("sort_with_indices"); }

}  // namespace kiln
