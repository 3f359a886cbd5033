// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::reshape(WgpuTensor x, std::span<const std::int64_t> dims) { wgpu::pending("reshape"); }

WgpuTensor WgpuOps::permute(const WgpuTensor& x, std::span<const std::int64_t> axes) { wgpu::pending("permute"); }

WgpuTensor WgpuOps::expand(const WgpuTensor& x, std::span<const std::int64_t> dims) { wgpu::pending("expand"); }

WgpuTensor WgpuOps::repeat_dim(const WgpuTensor& x, std::int64_t dim, std::int64_t times) { wgpu::pending("repeat_dim"); }

WgpuTensor WgpuOps::flip(const WgpuTensor& x, std::span<const std::int64_t> dims) { wgpu::pending("flip"); }

WgpuTensor WgpuOps::slice(const WgpuTensor& x, std::span<const Slice> ranges) { wgpu::pending("slice"); }

WgpuTensor WgpuOps::slice_assign(WgpuTensor x, std::span<const Slice> ranges, const WgpuTensor& values) { wgpu::pending("slice_assign"); }

WgpuTensor WgpuOps::cat(std::span<const WgpuTensor> tensors, std::int64_t dim) { wgpu::pending("cat"); }

}  // namespace kiln
