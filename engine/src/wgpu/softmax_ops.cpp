// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::softmax(WgpuTensor x, std::int64_t dim) { wgpu::pending("softmax"); }

WgpuTensor WgpuOps::log_softmax(WgpuTensor x, std::int64_t dim) { wgpu::pending("log_softmax"); }

}  // namespace kiln
