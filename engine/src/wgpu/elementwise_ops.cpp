// Ops of the Wgpu backend without a WGSL kernel yet: each throws DeviceError naming the op
// (kiln/wgpu/wgpu.hpp). Replace a stub with the kernel and its test (tests/webgpu/).
#include "kiln/wgpu/wgpu.hpp"
#include "wgpu/pending.hpp"

namespace kiln {

WgpuTensor WgpuOps::binary(BinaryOp op, WgpuTensor lhs, WgpuTensor rhs) { wgpu::pending("binary"); }

WgpuTensor WgpuOps::binary_scalar(BinaryOp op, WgpuTensor lhs, double scalar, bool scalar_on_left) { wgpu::pending("binary_scalar"); }

WgpuTensor WgpuOps::unary(UnaryOp op, WgpuTensor x) { wgpu::pending("unary"); }

WgpuTensor WgpuOps::clamp(WgpuTensor x, std::optional<double> min, std::optional<double> max) { wgpu::pending("clamp"); }

WgpuTensor WgpuOps::leaky_relu(WgpuTensor x, double negative_slope) { wgpu::pending("leaky_relu"); }

WgpuTensor WgpuOps::softplus(WgpuTensor x, double beta, double threshold) { wgpu::pending("softplus"); }

WgpuTensor WgpuOps::compare(CompareOp op, const WgpuTensor& lhs, const WgpuTensor& rhs) { wgpu::pending("compare"); }

WgpuTensor WgpuOps::compare_scalar(CompareOp op, const WgpuTensor& lhs, double scalar) { wgpu::pending("compare_scalar"); }

WgpuTensor WgpuOps::is_nan(const WgpuTensor& x) { wgpu::pending("is_nan"); }

WgpuTensor WgpuOps::is_inf(const WgpuTensor& x) { wgpu::pending("is_inf"); }

WgpuTensor WgpuOps::bool_not(WgpuTensor x) { wgpu::pending("bool_not"); }

WgpuTensor WgpuOps::bool_and(WgpuTensor lhs, WgpuTensor rhs) { wgpu::pending("bool_and"); }

WgpuTensor WgpuOps::bool_or(WgpuTensor lhs, WgpuTensor rhs) { wgpu::pending("bool_or"); }

WgpuTensor WgpuOps::bool_xor(WgpuTensor lhs, WgpuTensor rhs) { wgpu::pending("bool_xor"); }

WgpuTensor WgpuOps::mask_where(WgpuTensor x, const WgpuTensor& mask, const WgpuTensor& value) { wgpu::pending("mask_where"); }

WgpuTensor WgpuOps::mask_fill(WgpuTensor x, const WgpuTensor& mask, double value) { wgpu::pending("mask_fill"); }

}  // namespace kiln
