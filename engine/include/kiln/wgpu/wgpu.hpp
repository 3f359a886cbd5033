#pragma once
/// The `Wgpu` backend (Burn's `Wgpu`, issue 21): tensors live in WebGPU storage buffers and
/// every primitive op runs as a WGSL compute shader, recorded into one command encoder per
/// batch and submitted when a read needs the results (engine/src/wgpu/runtime.hpp).
///
/// WebAssembly only: the device is the browser's `GPUDevice`, acquired by JS before the
/// module is instantiated (requestAdapter/requestDevice are asynchronous) and handed over as
/// the module option `kilnGpuDevice`; the WebGPU calls live in bindings/webgpu/kgpu.js
/// (an Emscripten JS library). Reads are asynchronous in browsers, so `into_data` returns
/// only data the tensor was created from (`from_data`, `full`, ...) and otherwise throws
/// StateError; JS reads results with `Module.kgRead` (bindings/webgpu/kgpu.js).
///
/// Storage: f32 as f32, i32 as i32, bool as one u32 per element (WGSL storage buffers have
/// no 8-bit type), contiguous row-major as CpuTensor.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "kiln/backend/backend.hpp"
#include "kiln/backend/conv_options.hpp"
#include "kiln/backend/pool_options.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"

namespace kiln {

/// The one device of the Wgpu backend: the GPUDevice the module was given.
struct WgpuDevice {
  friend bool operator==(const WgpuDevice&, const WgpuDevice&) = default;
};
/// Appends "Wgpu" (str_cat's hook).
inline void append_to(std::string& out, const WgpuDevice&) { out += "Wgpu"; }

namespace wgpu {
/// A storage buffer of the device (a handle into bindings/webgpu/kgpu.js's table). Its
/// destructor returns the GPU buffer to the pool for later outputs of the same size.
class Buffer;
}  // namespace wgpu

/// The Wgpu backend's tensor primitive: a refcounted device buffer + shape + dtype, and the
/// host data it was created from, if any (what `into_data` can return without a read).
class WgpuTensor {
 public:
  WgpuTensor() = default;
  /// A tensor over `buffer` (at least num_elements · 4 bytes). The Wgpu ops build their
  /// outputs this way; use WgpuOps::from_data to create one from host data.
  WgpuTensor(Shape shape, DType dtype, std::shared_ptr<wgpu::Buffer> buffer,
             std::shared_ptr<const TensorData> host = nullptr);

  const Shape& shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  std::int64_t num_elements() const noexcept { return num_elements_; }
  /// Bytes on the device: 4 per element for every dtype (bool as u32).
  std::size_t num_bytes() const noexcept { return static_cast<std::size_t>(num_elements_) * 4; }
  /// True when no other handle shares the buffer, so an op may write into it.
  bool is_unique() const noexcept { return buffer_ && buffer_.use_count() == 1; }
  /// The device buffer. Throws StateError for a handle without one (moved from or
  /// default-constructed).
  const wgpu::Buffer& buffer() const;
  const std::shared_ptr<wgpu::Buffer>& buffer_ptr() const noexcept { return buffer_; }
  /// The host copy of the values, if the tensor was created from host data (else null).
  const std::shared_ptr<const TensorData>& host() const noexcept { return host_; }
  /// Same buffer, new shape with the same number of elements (no copy; caller checks).
  WgpuTensor with_shape(Shape shape) const;

 private:
  std::shared_ptr<wgpu::Buffer> buffer_;
  std::shared_ptr<const TensorData> host_;
  Shape shape_;
  DType dtype_ = DType::F32;
  std::int64_t num_elements_ = 0;
};

/// The primitive ops of the Wgpu backend, with CpuOps's signatures and semantics (the typed
/// front end and `Autodiff<Wgpu>` use them as they use CpuOps).
struct WgpuOps {
  using Tensor = WgpuTensor;
  // Every op checks its arguments as the Cpu backend's op does (the same messages and
  // codes), records its kernels into the open batch (engine/src/wgpu/runtime.hpp) and
  // returns at once: nothing waits for the GPU. Every op has its kernels; where an op's result
  // differs from the Cpu's (rounding, flushed subnormals, value checks that need the host
  // copy), its comment says so. Tested op by op against the Cpu backend: tests/webgpu/.

  // ---- data, creation (engine/src/wgpu/tensor.cpp) ----
  static Shape shape(const WgpuTensor& x) { return x.shape(); }
  static WgpuDevice device(const WgpuTensor&) { return {}; }
  /// Copies `data` into a new tensor of dtype `dtype` (converting if data.dtype differs).
  static WgpuTensor from_data(const TensorData& data, DType dtype, const WgpuDevice& device);
  static TensorData into_data(const WgpuTensor& x);
  static WgpuTensor full(const Shape& shape, double value, DType dtype, const WgpuDevice& device);
  static WgpuTensor random(const Shape& shape, const Distribution& distribution, DType dtype,
                          const WgpuDevice& device);
  /// [start, end) by step, dtype F32 or I32. Throws ValueError if step == 0.
  static WgpuTensor arange(double start, double end, double step, DType dtype,
                          const WgpuDevice& device);
  /// n x m identity.
  static WgpuTensor eye(std::int64_t n, std::int64_t m, DType dtype, const WgpuDevice& device);
  /// Converts the dtype (f32 -> i32 truncates toward zero; any -> bool is != 0).
  static WgpuTensor cast(WgpuTensor x, DType to);

  // ---- element-wise (engine/src/wgpu/elementwise_ops.cpp) ----
  // One WGSL kernel per op-table row (engine/src/wgpu/wgsl_ops.def), computing what the Cpu
  // kernel computes: i32 and bool results are identical; f32 results are bit-identical
  // except that (1) devices that flush subnormals (SwiftShader does) return ±0 for results
  // below 2^-126 and read subnormal operands of + and - as 0 (every other op takes them at
  // their value), (2) sin/cos may differ by 1 ulp where xsimd reduced the argument with
  // another formula (it picks one per SIMD batch), (3) f32 pow is within about 1 ulp of the
  // Cpu's powf (double-f32 arithmetic in WGSL, which has no f64).
  /// NumPy broadcasting. Throws ShapeError if the shapes do not broadcast, DTypeError if
  /// the dtypes differ or are Bool; ValueError for an i32 Div/DivTrunc/Rem/Fmod by 0 or
  /// Pow with a negative exponent when rhs has a host copy (from_data). Without one the
  /// values cannot be checked before the kernel runs: those elements come out 0, as the Cpu
  /// kernel computes them.
  static WgpuTensor binary(BinaryOp op, WgpuTensor lhs, WgpuTensor rhs);
  /// `lhs op scalar`, or `scalar op lhs` when scalar_on_left (then lhs is the divisor /
  /// exponent, checked as binary's rhs).
  static WgpuTensor binary_scalar(BinaryOp op, WgpuTensor lhs, double scalar,
                                 bool scalar_on_left = false);
  static WgpuTensor unary(UnaryOp op, WgpuTensor x);
  /// Clamps to [min, max]; nan stays nan (torch.clamp). Either bound may be absent.
  static WgpuTensor clamp(WgpuTensor x, std::optional<double> min, std::optional<double> max);
  static WgpuTensor leaky_relu(WgpuTensor x, double negative_slope);
  /// log(1 + exp(beta·x)) / beta, and x where beta·x > threshold (torch.nn.Softplus).
  static WgpuTensor softplus(WgpuTensor x, double beta, double threshold);
  /// Result dtype Bool. Broadcasts.
  static WgpuTensor compare(CompareOp op, const WgpuTensor& lhs, const WgpuTensor& rhs);
  static WgpuTensor compare_scalar(CompareOp op, const WgpuTensor& lhs, double scalar);
  static WgpuTensor is_nan(const WgpuTensor& x);
  static WgpuTensor is_inf(const WgpuTensor& x);
  /// Bool ops: not, and, or, xor (and/or/xor broadcast).
  static WgpuTensor bool_not(WgpuTensor x);
  static WgpuTensor bool_and(WgpuTensor lhs, WgpuTensor rhs);
  static WgpuTensor bool_or(WgpuTensor lhs, WgpuTensor rhs);
  static WgpuTensor bool_xor(WgpuTensor lhs, WgpuTensor rhs);
  /// where(mask, value, x): value where mask is true, else x. All three broadcast.
  static WgpuTensor mask_where(WgpuTensor x, const WgpuTensor& mask, const WgpuTensor& value);
  static WgpuTensor mask_fill(WgpuTensor x, const WgpuTensor& mask, double value);

  // ---- activations along a dim (engine/src/wgpu/softmax_ops.cpp) ----
  /// Stable for large logits; a row of all -inf gives nan (as PyTorch), as does a row
  /// holding a nan or +inf. exp and log are WGSL's (a few ulp), sums f32 trees.
  static WgpuTensor softmax(WgpuTensor x, std::int64_t dim);
  static WgpuTensor log_softmax(WgpuTensor x, std::int64_t dim);

  // ---- matmul (engine/src/wgpu/matmul_ops.cpp) ----
  /// [..., m, k] x [..., k, n] -> [..., m, n], batch dims broadcast (f32; same rank).
  /// Each output is summed over k in order in f32: it differs from the Cpu's GEMM by
  /// rounding only (about eps·k/10 absolute for data in [-1, 1)); k = 0 gives zeros.
  static WgpuTensor matmul(const WgpuTensor& lhs, const WgpuTensor& rhs);
  /// op(lhs) x op(rhs), where op swaps the last two dims when its flag is set, without
  /// copying the transposed operand (the GEMM reads it with swapped strides):
  /// lhs [..., k, m] with transpose_lhs, rhs [..., n, k] with transpose_rhs -> [..., m, n].
  /// The backward pass of matmul uses it (dA = dC·Bᵀ, dB = Aᵀ·dC).
  static WgpuTensor matmul_transposed(const WgpuTensor& lhs, const WgpuTensor& rhs,
                                     bool transpose_lhs, bool transpose_rhs);

  // ---- reductions (engine/src/wgpu/reduce_ops.cpp) ----
  /// Whole tensor to shape [1]. Mean of no elements is nan; Max/Min of none throw.
  /// Any/All give Bool. Int Mean is the floor of the exact mean (an int64 sum on the device;
  /// Python `//`; Burn truncates toward zero); the Int Mean of no elements throws ShapeError.
  /// Int Sum/Prod are exact whenever the result fits in i32. When it does not, the Cpu
  /// throws LimitError; that check depends on the values, so this backend runs it only on a
  /// host copy of the input (a tensor made by from_data) and otherwise returns the wrapped
  /// result (the low 32 bits) without an error.
  /// Float sums are f32 trees on the device (WGSL has no f64), one pass per 4096 elements
  /// of a result (two passes up to 16M): each term sees <= 24 roundings per pass, so
  /// |error| <= 24·u·Σ|x| per pass (u = 2^-24), where the Cpu's f32 -> f64 blocking gives
  /// <= 2.9e-6·Σ|x|. Float products are f32 trees (relative error <= (n - 1)·u).
  static WgpuTensor reduce(ReduceOp op, const WgpuTensor& x);
  /// Along `dim`, keeping it with size 1.
  static WgpuTensor reduce_dim(ReduceOp op, const WgpuTensor& x, std::int64_t dim);
  /// Bool [1] (dim kept for the _dim forms): whether any / all elements are non-zero.
  static WgpuTensor any(const WgpuTensor& x) { return reduce(ReduceOp::Any, x); }
  static WgpuTensor all(const WgpuTensor& x) { return reduce(ReduceOp::All, x); }
  static WgpuTensor any_dim(const WgpuTensor& x, std::int64_t dim) {
    return reduce_dim(ReduceOp::Any, x, dim);
  }
  static WgpuTensor all_dim(const WgpuTensor& x, std::int64_t dim) {
    return reduce_dim(ReduceOp::All, x, dim);
  }
  /// Values and I32 indices of the max (min) along dim, first index on ties, dim kept.
  static std::pair<WgpuTensor, WgpuTensor> max_dim_with_indices(const WgpuTensor& x,
                                                              std::int64_t dim);
  static std::pair<WgpuTensor, WgpuTensor> min_dim_with_indices(const WgpuTensor& x,
                                                              std::int64_t dim);
  /// I32 index of the max (min) along dim, first on ties; nan counts as the max (torch).
  static WgpuTensor argmax(const WgpuTensor& x, std::int64_t dim);
  static WgpuTensor argmin(const WgpuTensor& x, std::int64_t dim);
  /// Variance and mean along dim (dim kept); divisor n - 1 when unbiased, else n. Two
  /// passes (the mean, then Σd and Σd² with d = x - mean, corrected as the Cpu's), f32 sums
  /// as reduce's.
  static std::pair<WgpuTensor, WgpuTensor> var_mean(const WgpuTensor& x, std::int64_t dim,
                                                  bool unbiased);
  /// Sorted values and I32 indices along dim (stable; nan last ascending, as torch). A
  /// bitonic sort of (key, index) pairs, each line padded to a power of two (in workgroup
  /// memory up to 2048 slots, one dispatch per longer step beyond). Throws LimitError when
  /// lines · padded length exceeds 2^31.
  static std::pair<WgpuTensor, WgpuTensor> sort_with_indices(const WgpuTensor& x,
                                                           std::int64_t dim, bool descending);

  // ---- pooling, NCHW (engine/src/wgpu/pool_ops.cpp) ----
  /// x [batch, channels, height, width] -> [batch, channels, out_h, out_w]: the max of each
  /// window (padding counts as -inf; a nan in a window is its max, as PyTorch).
  /// Throws: as pool::check_max_pool2d (RankError, ConfigError, ShapeError).
  static WgpuTensor max_pool2d(const WgpuTensor& x, const MaxPool2dOptions& options);
  /// The max and the I32 index of its element in x's [height, width] plane (h·width + w,
  /// PyTorch's convention), the first in row-major window order on ties.
  static std::pair<WgpuTensor, WgpuTensor> max_pool2d_with_indices(const WgpuTensor& x,
                                                                 const MaxPool2dOptions& options);
  /// Gradient of max_pool2d: zeros of x_shape with grad[n, c, i, j] added at indices[n, c, i, j]
  /// (overlapping windows accumulate, in output order as the Cpu; indices outside the plane,
  /// such as -1, are skipped).
  static WgpuTensor max_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad,
                                       const WgpuTensor& indices);
  /// The mean of each window; the divisor follows count_include_pad as PyTorch (windows
  /// clipped to the padded input, ceil-mode windows past it counted to its edge).
  static WgpuTensor avg_pool2d(const WgpuTensor& x, const AvgPool2dOptions& options);
  /// Gradient of avg_pool2d: each window's grad / divisor spread over its input elements.
  static WgpuTensor avg_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad,
                                       const AvgPool2dOptions& options);
  /// Mean over window i = [floor(i·in/out), ceil((i+1)·in/out)) per spatial dim (PyTorch).
  /// Throws: as pool::check_adaptive_avg_pool2d.
  static WgpuTensor adaptive_avg_pool2d(const WgpuTensor& x,
                                       const std::array<std::int64_t, 2>& output_size);
  static WgpuTensor adaptive_avg_pool2d_backward(const Shape& x_shape, const WgpuTensor& grad);

  // ---- shape and indexing (engine/src/wgpu/shape_ops.cpp) ----
  /// New shape with the same element count; one -1 is inferred. No copy: the result
  /// shares x's buffer. The other shape ops copy (one strided-copy kernel each; cat one
  /// per input), except when the result is x's buffer in the same order (a whole slice,
  /// a flip of size-1 dims, repeat_dim by 1, a permute or expand that moves no element).
  static WgpuTensor reshape(WgpuTensor x, std::span<const std::int64_t> dims);
  /// Output dim i is input dim axes[i] (axes a permutation, already non-negative).
  static WgpuTensor permute(const WgpuTensor& x, std::span<const std::int64_t> axes);
  /// Broadcast to `dims` (rank >= x's rank; -1 keeps a dim; new dims lead).
  static WgpuTensor expand(const WgpuTensor& x, std::span<const std::int64_t> dims);
  /// Repeats the whole tensor `times` along dim (torch.Tensor.repeat on one dim).
  static WgpuTensor repeat_dim(const WgpuTensor& x, std::int64_t dim, std::int64_t times);
  static WgpuTensor flip(const WgpuTensor& x, std::span<const std::int64_t> dims);
  /// One Slice per leading dim (fewer than rank: the rest are whole).
  static WgpuTensor slice(const WgpuTensor& x, std::span<const Slice> ranges);
  /// Writes `values` (the shape of the slice) into the slice of x.
  static WgpuTensor slice_assign(WgpuTensor x, std::span<const Slice> ranges,
                                const WgpuTensor& values);
  /// Same dtype and shape except along dim. Throws ShapeError naming the first mismatch.
  static WgpuTensor cat(std::span<const WgpuTensor> tensors, std::int64_t dim);
  // Indexing (engine/src/wgpu/index_ops.cpp). Index values are checked as the Cpu checks
  // them (IndexError) when the index tensor keeps its host copy (it came from from_data);
  // values that exist only on the device are checked by a kernel that records a bad one
  // (wgpu/runtime.hpp check_flags), and the next read rejects with KilnError `Index` naming
  // the op; the op skips the index (select and gather read 0 for it, select_assign and
  // scatter add nothing, one_hot writes a row of zeros). The accumulating ops sum in the Cpu's order
  // (each output element adds the values that hit it, in index order, without atomics), so
  // results are deterministic and round as the Cpu's.
  /// torch.index_select: indices I32 rank 1, each in [-size, size).
  static WgpuTensor select(const WgpuTensor& x, std::int64_t dim, const WgpuTensor& indices);
  /// torch.index_add (Burn's select_assign adds): x[..., indices[i], ...] += values[..., i, ...]
  static WgpuTensor select_assign(WgpuTensor x, std::int64_t dim, const WgpuTensor& indices,
                                 const WgpuTensor& values);
  /// torch.gather: out[i][j] = x[indices[i][j]][j] for dim 0 (indices same rank as x, dims
  /// outside dim no larger than x's; each index in [0, size)). Output shape: indices'.
  static WgpuTensor gather(const WgpuTensor& x, std::int64_t dim, const WgpuTensor& indices);
  /// torch.scatter_add (Burn's scatter adds): x[indices[i][j]][j] += values[i][j] for dim 0
  /// (indices no larger than values in any dim, nor than x outside dim; each in [0, size)).
  static WgpuTensor scatter(WgpuTensor x, std::int64_t dim, const WgpuTensor& indices,
                           const WgpuTensor& values);
  /// Appends a dim of size num_classes; dtype kept. Throws IndexError if a value is
  /// outside [0, num_classes).
  static WgpuTensor one_hot(const WgpuTensor& x, std::int64_t num_classes);

  // ---- convolution (engine/src/wgpu/conv_ops.cpp) ----
  // Layouts are PyTorch's: input [batch_size, channels_in, (height,) width], conv weight
  // [channels_out, channels_in / groups, (kernel_h,) kernel_w], transposed-conv weight
  // [channels_in, channels_out / groups, kernel_h, kernel_w], bias [channels_out].
  // Checks are the Cpu's (engine/src/cpu/ops/conv_checks.hpp). Kernels are direct 3-D
  // "gather" kernels (depth and height 1 for 1-D and 2-D), one invocation per output
  // element, each sum in a fixed order (taps and channels in im2col row order, images in
  // order): deterministic, equal to the Cpu's im2col + GEMM up to f32 rounding (about
  // eps·sqrt(K) for sums of K products). Padded positions are multiplied as zeros, as the
  // Cpu's im2col does (an inf weight gives nan there). Throws LimitError when a spatial
  // position (input + padding + (output - 1)·stride + (kernel - 1)·dilation) exceeds 2^31 - 1,
  // which the Cpu accepts (the kernels index in 32 bits).
  /// 1-D convolution: x [batch_size, channels_in, length] -> [batch_size, channels_out,
  /// length_out] (conv2d over a unit height). Throws as conv2d, naming conv1d.
  static WgpuTensor conv1d(const WgpuTensor& x, const WgpuTensor& weight,
                          const std::optional<WgpuTensor>& bias, const ConvOptions<1>& options);
  /// 2-D convolution (torch.nn.functional.conv2d, cross-correlation):
  /// x [batch_size, channels_in, height, width] -> [batch_size, channels_out, height_out,
  /// width_out]. Throws RankError for ranks other than 4 (weight 4, bias 1), DTypeError
  /// for non-f32, ConfigError for bad options, ShapeError for channel/groups mismatches, a
  /// bias not [channels_out], or a dilated kernel larger than the padded input.
  static WgpuTensor conv2d(const WgpuTensor& x, const WgpuTensor& weight,
                          const std::optional<WgpuTensor>& bias, const ConvOptions<2>& options);
  /// Gradient of conv2d w.r.t. x (shape x_shape) from the output gradient: each x element
  /// sums w·output_grad over the taps and output positions that read it (the Cpu's col2im
  /// of Wᵀ·G), no atomics.
  static WgpuTensor conv2d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                     const WgpuTensor& output_grad, const ConvOptions<2>& options);
  /// Gradient of conv2d w.r.t. the weight (shape weight_shape): G·im2col(x)ᵀ, each weight
  /// element summing its images' output positions, then the images in order.
  static WgpuTensor conv2d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                          const WgpuTensor& output_grad,
                                          const ConvOptions<2>& options);
  /// Gradient of a conv bias: output_grad [batch_size, channels, ...] summed over every dim
  /// but 1 -> [channels] (one invocation per channel, Neumaier-compensated f32 where the
  /// Cpu sums in double).
  static WgpuTensor conv_bias_backward(const WgpuTensor& output_grad);
  /// Transposed 2-D convolution (torch.nn.functional.conv_transpose2d): x [batch_size,
  /// channels_in, height, width], weight [channels_in, channels_out / groups, kernel_h,
  /// kernel_w] -> [batch_size, channels_out, height_out, width_out], height_out =
  /// (height - 1)·stride - 2·padding + dilation·(kernel_h - 1) + padding_out + 1.
  /// Throws as conv2d; ConfigError when padding_out >= both stride and dilation;
  /// ShapeError when the output would be empty.
  static WgpuTensor conv_transpose2d(const WgpuTensor& x, const WgpuTensor& weight,
                                    const std::optional<WgpuTensor>& bias,
                                    const ConvTransposeOptions<2>& options);
  /// Gradient of conv_transpose2d w.r.t. x (a conv2d of the output gradient).
  static WgpuTensor conv_transpose2d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                               const WgpuTensor& output_grad,
                                               const ConvTransposeOptions<2>& options);
  /// Gradient of conv_transpose2d w.r.t. the weight.
  static WgpuTensor conv_transpose2d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                                    const WgpuTensor& output_grad,
                                                    const ConvTransposeOptions<2>& options);
  /// 3-D convolution (torch.nn.functional.conv3d): x [batch_size, channels_in, depth,
  /// height, width], weight [channels_out, channels_in / groups, kernel_d, kernel_h,
  /// kernel_w] -> [batch_size, channels_out, depth_out, height_out, width_out] (the same
  /// kernels as conv2d, with the depth axis). Throws as conv2d, naming conv3d.
  static WgpuTensor conv3d(const WgpuTensor& x, const WgpuTensor& weight,
                          const std::optional<WgpuTensor>& bias, const ConvOptions<3>& options);
  /// Gradient of conv3d w.r.t. x (shape x_shape), as conv2d_x_backward.
  static WgpuTensor conv3d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                     const WgpuTensor& output_grad, const ConvOptions<3>& options);
  /// Gradient of conv3d w.r.t. the weight (shape weight_shape), summed over the batch in a
  /// fixed order.
  static WgpuTensor conv3d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                          const WgpuTensor& output_grad,
                                          const ConvOptions<3>& options);
  /// Transposed 1-D convolution (torch.nn.functional.conv_transpose1d): x [batch_size,
  /// channels_in, length], weight [channels_in, channels_out / groups, kernel_size] ->
  /// [batch_size, channels_out, length_out] (conv_transpose2d over a unit height). Throws as
  /// conv_transpose2d, naming conv_transpose1d. Its gradients are conv_transpose2d's on the
  /// unit-height views.
  static WgpuTensor conv_transpose1d(const WgpuTensor& x, const WgpuTensor& weight,
                                    const std::optional<WgpuTensor>& bias,
                                    const ConvTransposeOptions<1>& options);
  /// Transposed 3-D convolution (torch.nn.functional.conv_transpose3d): x [batch_size,
  /// channels_in, depth, height, width], weight [channels_in, channels_out / groups,
  /// kernel_d, kernel_h, kernel_w] -> [batch_size, channels_out, depth_out, height_out,
  /// width_out]. Throws as conv_transpose2d, naming conv_transpose3d.
  static WgpuTensor conv_transpose3d(const WgpuTensor& x, const WgpuTensor& weight,
                                    const std::optional<WgpuTensor>& bias,
                                    const ConvTransposeOptions<3>& options);
  /// Gradient of conv_transpose3d w.r.t. x (a conv3d of the output gradient).
  static WgpuTensor conv_transpose3d_x_backward(const Shape& x_shape, const WgpuTensor& weight,
                                               const WgpuTensor& output_grad,
                                               const ConvTransposeOptions<3>& options);
  /// Gradient of conv_transpose3d w.r.t. the weight.
  static WgpuTensor conv_transpose3d_weight_backward(const WgpuTensor& x, const Shape& weight_shape,
                                                    const WgpuTensor& output_grad,
                                                    const ConvTransposeOptions<3>& options);
};

/// The Wgpu backend (Burn's `Wgpu`): `using B = kiln::Wgpu;`. WebAssembly only.
struct Wgpu {
  using Device = WgpuDevice;
  using FloatTensor = WgpuTensor;
  using IntTensor = WgpuTensor;
  using BoolTensor = WgpuTensor;
  using FloatOps = WgpuOps;
  using IntOps = WgpuOps;
  using BoolOps = WgpuOps;
  static constexpr std::string_view name() { return "webgpu"; }
  /// Seeds the generator of `Tensor::random`: values are drawn on the host by the Cpu
  /// backend's generator and uploaded, so a seed gives the same values on both backends.
  static void seed(std::uint64_t seed);
  /// Bool [1] on the device: true when a device check has found a bad value (an index computed
  /// on the GPU out of range: engine/src/wgpu/runtime.hpp check_flags) since the last read;
  /// nullopt while no device check has run in this module (nothing to check, no dispatch).
  /// The deferred training step refuses its step then (kiln/train/deferred_step.hpp), so a
  /// step computed from such an op changes nothing; the read reports the op (KilnError Index).
  static std::optional<WgpuTensor> device_checks_failed();
};

}  // namespace kiln
