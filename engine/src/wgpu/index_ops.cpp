// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::select(const WgpuTensor& x, std::int64_t dim, const WgpuTensor& indices) { wgpu::pending("select"); }

WgpuTensor WgpuOps::select_assign(WgpuTensor x, std::int64_t dim, const WgpuTensor& indices, const WgpuTensor& values) { wgpu::pending("select_assign"); }

WgpuTensor WgpuOps::gather(const WgpuTensor& x, std::int64_t dim, const WgpuTensor& indices) { wgpu::pending("gather"); }

WgpuTensor WgpuOps::scatter(WgpuTensor x, std::int64_t dim, const WgpuTensor& indices, const WgpuTensor& values) { wgpu::pending("scatter"); }

WgpuTensor WgpuOps::one_hot(const WgpuTensor& x, std::int64_t num_classes) { wgpu::pending("one_hot"); }

}  // namespace kiln
