// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::max_pool2d(const WgpuTensor& x, const MaxPool2dOptions& options) { wgpu::pending("max_pool2d"); }

std::pair<WgpuTensor, WgpuTensor> WgpuOps::max_pool2d_with_indices(const WgpuTensor& x, const MaxPool2dOptions& options) { wgpu::pending("max_pool2d_with_indices"); }

WgpuTensor WgpuOps::max_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad, const WgpuTensor& indices) { wgpu::pending("max_pool2d_backward"); }

WgpuTensor WgpuOps::avg_pool2d(const WgpuTensor& x, const AvgPool2dOptions& options) { wgpu::pending("avg_pool2d"); }

WgpuTensor WgpuOps::avg_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad, const AvgPool2dOptions& options) { wgpu::pending("avg_pool2d_backward"); }

WgpuTensor WgpuOps::adaptive_avg_pool2d(const WgpuTensor& x, const std::array<std::int64_t, 2>& output_size) { wgpu::pending("adaptive_avg_pool2d"); }

WgpuTensor WgpuOps::adaptive_avg_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad) { wgpu::pending("adaptive_avg_pool2d_backward"); }

}  // namespace kiln
