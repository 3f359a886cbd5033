// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::conv1d(const WgpuTensor& x, const WgpuTensor& weight, const std::optional<WgpuTensor>& bias, const ConvOptions<1>& options) { wgpu::pending("conv1d"); }

WgpuTensor WgpuOps::conv2d(const WgpuTensor& x, const WgpuTensor& weight, const std::optional<WgpuTensor>& bias, const ConvOptions<2>& options) { wgpu::pending("conv2d"); }

WgpuTensor WgpuOps::conv2d_x_backward(const Shape& x_shape, const WgpuTensor& weight, const WgpuTensor& output_grad, const ConvOptions<2>& options) { wgpu::pending("conv2d_x_backward"); }

WgpuTensor WgpuOps::conv2d_weight_backward(const WgpuTensor& x, const Shape& weight_shape, const WgpuTensor& output_grad, const ConvOptions<2>& options) { wgpu::pending("conv2d_weight_backward"); }

WgpuTensor WgpuOps::conv_bias_backward(const WgpuTensor& output_grad) { wgpu::pending("conv_bias_backward"); }

WgpuTensor WgpuOps::conv_transpose2d(const WgpuTensor& x, const WgpuTensor& weight, const std::optional<WgpuTensor>& bias, const ConvTransposeOptions<2>& options) { wgpu::pending("conv_transpose2d"); }

WgpuTensor WgpuOps::conv_transpose2d_x_backward(const Shape& x_shape, const WgpuTensor& weight, const WgpuTensor& output_grad, const ConvTransposeOptions<2>& options) { wgpu::pending("conv_transpose2d_x_backward"); }

WgpuTensor WgpuOps::conv_transpose2d_weight_backward(const WgpuTensor& x, const Shape& weight_shape, const WgpuTensor& output_grad, const ConvTransposeOptions<2>& options) { wgpu::pending("conv_transpose2d_weight_backward"); }

WgpuTensor WgpuOps::conv3d(const WgpuTensor& x, const WgpuTensor& weight, const std::optional<WgpuTensor>& bias, const ConvOptions<3>& options) { wgpu::pending("conv3d"); }

WgpuTensor WgpuOps::conv3d_x_backward(const Shape& x_shape, const WgpuTensor& weight, const WgpuTensor& output_grad, const ConvOptions<3>& options) { wgpu::pending("conv3d_x_backward"); }

WgpuTensor WgpuOps::conv3d_weight_backward(const WgpuTensor& x, const Shape& weight_shape, const WgpuTensor& output_grad, const ConvOptions<3>& options) { wgpu::pending("conv3d_weight_backward"); }

WgpuTensor WgpuOps::conv_transpose1d(const WgpuTensor& x, const WgpuTensor& weight, const std::optional<WgpuTensor>& bias, const ConvTransposeOptions<1>& options) { wgpu::pending("conv_transpose1d"); }

WgpuTensor WgpuOps::conv_transpose3d(const WgpuTensor& x, const WgpuTensor& weight, const std::optional<WgpuTensor>& bias, const ConvTransposeOptions<3>& options) { wgpu::pending("conv_transpose3d"); }

WgpuTensor WgpuOps::conv_transpose3d_x_backward(const Shape& x_shape, const WgpuTensor& weight, const WgpuTensor& output_grad, const ConvTransposeOptions<3>& options) { wgpu::pending("conv_transpose3d_x_backward"); }

WgpuTensor WgpuOps::conv_transpose3d_weight_backward(const WgpuTensor& x, const Shape& weight_shape, const WgpuTensor& output_grad, const ConvTransposeOptions<3>& options) { wgpu::pending("conv_transpose3d_weight_backward"); }

}  // namespace kiln
