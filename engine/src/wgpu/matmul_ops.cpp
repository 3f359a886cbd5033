// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::matmul(const WgpuTensor& lhs, const WgpuTensor& rhs) { wgpu::pending("matmul"); }

WgpuTensor WgpuOps::matmul_transposed(const WgpuTensor& lhs, const WgpuTensor& rhs, bool transpose_lhs, bool transpose_rhs) { wgpu::pending("matmul_transposed"); }

}  // namespace kiln
