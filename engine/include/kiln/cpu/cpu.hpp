#pragma once
/// The `Cpu` backend: contiguous, 64-byte-aligned row-major buffers and kernels written
/// with xsimd (SSE2/AVX2/AVX-512 chosen at run time natively; SIMD128 in WebAssembly).
/// Kernels stay private in engine/src/cpu/; this header only declares the primitive ops.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/backend/conv_options.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/backend/pool_options.hpp"  // pooling options (issue 5)

namespace kiln {

/// The one device of the Cpu backend.
struct CpuDevice {
  friend bool operator==(const CpuDevice&, const CpuDevice&) = default;
};
/// Appends "Cpu" (str_cat's hook; `std::cout << device` prints the same).
inline void append_to(std::string& out, const CpuDevice&) { out += "Cpu"; }

namespace cpu {
/// A 64-byte-aligned heap buffer, counted by `kiln::memory_stats()`.
class Storage {
 public:
  /// Throws: OutOfMemoryError if the allocation fails.
  explicit Storage(std::size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};
}  // namespace cpu

/// The Cpu backend's tensor primitive: a refcounted contiguous buffer + shape + dtype.
/// Copying is cheap (shares the buffer); ops that take a primitive by value write into its
/// buffer when they hold the only reference (`is_unique()`).
class CpuTensor {
 public:
  CpuTensor() = default;
  CpuTensor(const CpuTensor&) = default;
  CpuTensor& operator=(const CpuTensor&) = default;
  /// A moved-from handle keeps its shape (ops may hold a reference to it across the move)
  /// but has no buffer: using its data throws StateError.
  CpuTensor(CpuTensor&&) noexcept = default;
  CpuTensor& operator=(CpuTensor&&) noexcept = default;
  /// Allocates an uninitialised buffer. Throws: LimitError past 2^31 - 1 elements (or a
  /// dim past that, even in an empty shape), OutOfMemoryError if the allocation fails or
  /// the byte count exceeds what the platform can address (wasm32).
  CpuTensor(Shape shape, DType dtype);

  const Shape& shape() const noexcept { return shape_; }
  DType dtype() const noexcept { return dtype_; }
  std::int64_t num_elements() const noexcept { return num_elements_; }
  std::size_t num_bytes() const noexcept {
    return static_cast<std::size_t>(num_elements_) * dtype_size(dtype_);
  }
  /// True when no other handle shares the buffer, so an op may write into it.
  bool is_unique() const noexcept { return storage_ && storage_.use_count() == 1; }

  /// The elements. Throws: StateError for a handle without a buffer (moved from or
  /// default-constructed): `auto y = std::move(x); x.exp();` is an error, not a crash.
  template <class T>
  T* data() {
    if (!storage_) throw_no_buffer();
    return static_cast<T*>(storage_->data());
  }
  template <class T>
  const T* data() const {
    if (!storage_) throw_no_buffer();
    return static_cast<const T*>(storage_->data());
  }

  /// Same buffer, new shape with the same number of elements (no copy; caller checks).
  CpuTensor with_shape(Shape shape) const {
    CpuTensor out = *this;
    out.shape_ = shape;
    return out;
  }

 private:
  [[noreturn]] static void throw_no_buffer();
  std::shared_ptr<cpu::Storage> storage_;
  Shape shape_;
  DType dtype_ = DType::F32;
  std::int64_t num_elements_ = 0;
};

/// The primitive ops of the Cpu backend, one struct for all three kinds (the primitive
/// carries its dtype; the typed front end guarantees each op receives a kind it supports).
/// Inputs taken by value may be consumed: when unique, their buffer becomes the output's.
/// Every op validates its arguments and throws kiln::Error subclasses (STYLE.md §7).
struct CpuOps {
  using Tensor = CpuTensor;

  // ---- data, creation (engine/src/cpu/ops/creation_ops.cpp) ----
  static Shape shape(const CpuTensor& x) { return x.shape(); }
  static CpuDevice device(const CpuTensor&) { return {}; }
  /// Copies `data` into a new tensor of dtype `dtype` (converting if data.dtype differs).
  static CpuTensor from_data(const TensorData& data, DType dtype, const CpuDevice& device);
  static TensorData into_data(const CpuTensor& x);
  static CpuTensor full(const Shape& shape, double value, DType dtype, const CpuDevice& device);
  static CpuTensor random(const Shape& shape, const Distribution& distribution, DType dtype,
                          const CpuDevice& device);
  /// [start, end) by step, dtype F32 or I32. Throws ValueError if step == 0.
  static CpuTensor arange(double start, double end, double step, DType dtype,
                          const CpuDevice& device);
  /// n x m identity.
  static CpuTensor eye(std::int64_t n, std::int64_t m, DType dtype, const CpuDevice& device);
  /// Converts the dtype (f32 -> i32 truncates toward zero; any -> bool is != 0).
  static CpuTensor cast(CpuTensor x, DType to);

  // ---- element-wise (engine/src/cpu/ops/elementwise_ops.cpp) ----
  /// NumPy broadcasting. Throws ShapeError if the shapes do not broadcast, DTypeError if
  /// the dtypes differ.
  static CpuTensor binary(BinaryOp op, CpuTensor lhs, CpuTensor rhs);
  /// `lhs op scalar`, or `scalar op lhs` when scalar_on_left.
  static CpuTensor binary_scalar(BinaryOp op, CpuTensor lhs, double scalar,
                                 bool scalar_on_left = false);
  static CpuTensor unary(UnaryOp op, CpuTensor x);
  /// Clamps to [min, max]; nan stays nan (torch.clamp). Either bound may be absent.
  static CpuTensor clamp(CpuTensor x, std::optional<double> min, std::optional<double> max);
  static CpuTensor leaky_relu(CpuTensor x, double negative_slope);
  /// log(1 + exp(beta·x)) / beta, and x where beta·x > threshold (torch.nn.Softplus).
  static CpuTensor softplus(CpuTensor x, double beta, double threshold);
  /// Result dtype Bool. Broadcasts.
  static CpuTensor compare(CompareOp op, const CpuTensor& lhs, const CpuTensor& rhs);
  static CpuTensor compare_scalar(CompareOp op, const CpuTensor& lhs, double scalar);
  static CpuTensor is_nan(const CpuTensor& x);
  static CpuTensor is_inf(const CpuTensor& x);
  /// Bool ops: not, and, or, xor (and/or/xor broadcast).
  static CpuTensor bool_not(CpuTensor x);
  static CpuTensor bool_and(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor bool_or(CpuTensor lhs, CpuTensor rhs);
  static CpuTensor bool_xor(CpuTensor lhs, CpuTensor rhs);
  /// where(mask, value, x): value where mask is true, else x. All three broadcast.
  static CpuTensor mask_where(CpuTensor x, const CpuTensor& mask, const CpuTensor& value);
  static CpuTensor mask_fill(CpuTensor x, const CpuTensor& mask, double value);

  // ---- activations along a dim (engine/src/cpu/ops/softmax_ops.cpp) ----
  /// Stable for large logits; a row of all -inf gives nan (as PyTorch).
  static CpuTensor softmax(CpuTensor x, std::int64_t dim);
  static CpuTensor log_softmax(CpuTensor x, std::int64_t dim);

  // ---- matmul (engine/src/cpu/ops/matmul_ops.cpp, engine/src/cpu/gemm/) ----
  /// [..., m, k] x [..., k, n] -> [..., m, n], batch dims broadcast.
  static CpuTensor matmul(const CpuTensor& lhs, const CpuTensor& rhs);
  /// op(lhs) x op(rhs), where op swaps the last two dims when its flag is set, without
  /// copying the transposed operand (the GEMM reads it with swapped strides):
  /// lhs [..., k, m] with transpose_lhs, rhs [..., n, k] with transpose_rhs -> [..., m, n].
  /// The backward pass of matmul uses it (dA = dC·Bᵀ, dB = Aᵀ·dC).
  static CpuTensor matmul_transposed(const CpuTensor& lhs, const CpuTensor& rhs,
                                     bool transpose_lhs, bool transpose_rhs);

  // ---- reductions (engine/src/cpu/ops/reduce_ops.cpp) ----
  /// Whole tensor to shape [1]. Mean of no elements is nan; Max/Min of none throw.
  /// Any/All give Bool. Int Mean is the floor of the mean (Python `//`; Burn truncates toward zero).
  /// Int Sum/Prod are exact (int64 inside) and throw LimitError when the result does not
  /// fit in i32 (never wrap); the Int Mean of no elements throws ShapeError.
  /// Float sums are blocked f32 -> f64: |error| <= 2.9e-6·Σ|x| + 2^-24·|sum| for any n
  /// (engine/src/cpu/kernels/reduce.hpp).
  static CpuTensor reduce(ReduceOp op, const CpuTensor& x);
  /// Along `dim`, keeping it with size 1.
  static CpuTensor reduce_dim(ReduceOp op, const CpuTensor& x, std::int64_t dim);
  /// Bool [1] (dim kept for the _dim forms): whether any / all elements are non-zero.
  static CpuTensor any(const CpuTensor& x) { return reduce(ReduceOp::Any, x); }
  static CpuTensor all(const CpuTensor& x) { return reduce(ReduceOp::All, x); }
  static CpuTensor any_dim(const CpuTensor& x, std::int64_t dim) {
    return reduce_dim(ReduceOp::Any, x, dim);
  }
  static CpuTensor all_dim(const CpuTensor& x, std::int64_t dim) {
    return reduce_dim(ReduceOp::All, x, dim);
  }
  /// Values and I32 indices of the max (min) along dim, first index on ties, dim kept.
  static std::pair<CpuTensor, CpuTensor> max_dim_with_indices(const CpuTensor& x,
                                                              std::int64_t dim);
  static std::pair<CpuTensor, CpuTensor> min_dim_with_indices(const CpuTensor& x,
                                                              std::int64_t dim);
  /// I32 index of the max (min) along dim, first on ties; nan counts as the max (torch).
  static CpuTensor argmax(const CpuTensor& x, std::int64_t dim);
  static CpuTensor argmin(const CpuTensor& x, std::int64_t dim);
  /// Variance and mean along dim (dim kept); divisor n - 1 when unbiased, else n.
  static std::pair<CpuTensor, CpuTensor> var_mean(const CpuTensor& x, std::int64_t dim,
                                                  bool unbiased);
  /// Sorted values and I32 indices along dim (stable; nan last ascending, as torch).
  static std::pair<CpuTensor, CpuTensor> sort_with_indices(const CpuTensor& x,
                                                           std::int64_t dim, bool descending);

  // ---- pooling, NCHW (engine/src/cpu/ops/pool_ops.cpp; options: kiln/backend/pool_options.hpp) ----
  /// x [batch, channels, height, width] -> [batch, channels, out_h, out_w]: the max of each
  /// window (padding counts as -inf; a nan in a window is its max, as PyTorch).
  /// Throws: as pool::check_max_pool2d (RankError, ConfigError, ShapeError).
  static CpuTensor max_pool2d(const CpuTensor& x, const MaxPool2dOptions& options);
  /// The max and the I32 index of its element in x's [height, width] plane (h·width + w,
  /// PyTorch's convention), the first in row-major window order on ties.
  static std::pair<CpuTensor, CpuTensor> max_pool2d_with_indices(const CpuTensor& x,
                                                                 const MaxPool2dOptions& options);
  /// Gradient of max_pool2d: zeros of x_shape with grad[n, c, i, j] added at indices[n, c, i, j]
  /// (overlapping windows accumulate).
  static CpuTensor max_pool2d_backward(const Shape& x_shape, const CpuTensor& grad,
                                       const CpuTensor& indices);
  /// The mean of each window; the divisor follows count_include_pad as PyTorch (windows
  /// clipped to the padded input, ceil-mode windows past it counted to its edge).
  static CpuTensor avg_pool2d(const CpuTensor& x, const AvgPool2dOptions& options);
  /// Gradient of avg_pool2d: each window's grad / divisor spread over its input elements.
  static CpuTensor avg_pool2d_backward(const Shape& x_shape, const CpuTensor& grad,
                                       const AvgPool2dOptions& options);
  /// Mean over window i = [floor(i·in/out), ceil((i+1)·in/out)) per spatial dim (PyTorch).
  /// Throws: as pool::check_adaptive_avg_pool2d.
  static CpuTensor adaptive_avg_pool2d(const CpuTensor& x,
                                       const std::array<std::int64_t, 2>& output_size);
  static CpuTensor adaptive_avg_pool2d_backward(const Shape& x_shape, const CpuTensor& grad);

  // ---- shape and indexing (engine/src/cpu/ops/shape_ops.cpp, index_ops.cpp) ----
  /// New shape with the same element count; one -1 is inferred.
  static CpuTensor reshape(CpuTensor x, std::span<const std::int64_t> dims);
  /// Output dim i is input dim axes[i] (axes a permutation, already non-negative).
  static CpuTensor permute(const CpuTensor& x, std::span<const std::int64_t> axes);
  /// Broadcast to `dims` (rank >= x's rank; -1 keeps a dim; new dims lead).
  static CpuTensor expand(const CpuTensor& x, std::span<const std::int64_t> dims);
  /// Repeats the whole tensor `times` along dim (torch.Tensor.repeat on one dim).
  static CpuTensor repeat_dim(const CpuTensor& x, std::int64_t dim, std::int64_t times);
  static CpuTensor flip(const CpuTensor& x, std::span<const std::int64_t> dims);
  /// One Slice per leading dim (fewer than rank: the rest are whole).
  static CpuTensor slice(const CpuTensor& x, std::span<const Slice> ranges);
  /// Writes `values` (the shape of the slice) into the slice of x.
  static CpuTensor slice_assign(CpuTensor x, std::span<const Slice> ranges,
                                const CpuTensor& values);
  /// Same dtype and shape except along dim. Throws ShapeError naming the first mismatch.
  static CpuTensor cat(std::span<const CpuTensor> tensors, std::int64_t dim);
  /// torch.index_select: indices I32 rank 1, each in [-size, size).
  static CpuTensor select(const CpuTensor& x, std::int64_t dim, const CpuTensor& indices);
  /// torch.index_add (Burn's select_assign adds): x[..., indices[i], ...] += values[..., i, ...]
  static CpuTensor select_assign(CpuTensor x, std::int64_t dim, const CpuTensor& indices,
                                 const CpuTensor& values);
  /// torch.gather: out[i][j] = x[indices[i][j]][j] for dim 0 (indices same rank as x, dims
  /// outside dim no larger than x's; each index in [0, size)). Output shape: indices'.
  static CpuTensor gather(const CpuTensor& x, std::int64_t dim, const CpuTensor& indices);
  /// torch.scatter_add (Burn's scatter adds): x[indices[i][j]][j] += values[i][j] for dim 0
  /// (indices no larger than values in any dim, nor than x outside dim; each in [0, size)).
  static CpuTensor scatter(CpuTensor x, std::int64_t dim, const CpuTensor& indices,
                           const CpuTensor& values);
  /// Appends a dim of size num_classes; dtype kept. Throws IndexError if a value is
  /// outside [0, num_classes).
  static CpuTensor one_hot(const CpuTensor& x, std::int64_t num_classes);

  // ---- convolution (engine/src/cpu/ops/conv_ops.cpp, kernels in engine/src/cpu/conv/) ----
  // Layouts are PyTorch's: input [batch_size, channels_in, (height,) width], conv weight
  // [channels_out, channels_in / groups, (kernel_h,) kernel_w], transposed-conv weight
  // [channels_in, channels_out / groups, kernel_h, kernel_w], bias [channels_out].
  // im2col + the packed GEMM, batch split across the threads of kiln::set_num_threads;
  // results are bit-identical for any thread count.
  /// 1-D convolution: x [batch_size, channels_in, length] -> [batch_size, channels_out,
  /// length_out] (conv2d over a unit height). Throws as conv2d, naming conv1d.
  static CpuTensor conv1d(const CpuTensor& x, const CpuTensor& weight,
                          const std::optional<CpuTensor>& bias, const ConvOptions<1>& options);
  /// 2-D convolution (torch.nn.functional.conv2d, cross-correlation):
  /// x [batch_size, channels_in, height, width] -> [batch_size, channels_out, height_out,
  /// width_out]. Throws RankError for ranks other than 4 (weight 4, bias 1), DTypeError
  /// for non-f32, ConfigError for bad options, ShapeError for channel/groups mismatches, a
  /// bias not [channels_out], or a dilated kernel larger than the padded input.
  static CpuTensor conv2d(const CpuTensor& x, const CpuTensor& weight,
                          const std::optional<CpuTensor>& bias, const ConvOptions<2>& options);
  /// Gradient of conv2d w.r.t. x (shape x_shape) from the output gradient (col2im of Wᵀ·G).
  static CpuTensor conv2d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                     const CpuTensor& output_grad, const ConvOptions<2>& options);
  /// Gradient of conv2d w.r.t. the weight (shape weight_shape): G·im2col(x)ᵀ summed over
  /// the batch in a fixed order.
  static CpuTensor conv2d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                          const CpuTensor& output_grad,
                                          const ConvOptions<2>& options);
  /// Gradient of a conv bias: output_grad [batch_size, channels, ...] summed over every dim
  /// but 1 -> [channels].
  static CpuTensor conv_bias_backward(const CpuTensor& output_grad);
  /// Transposed 2-D convolution (torch.nn.functional.conv_transpose2d): x [batch_size,
  /// channels_in, height, width], weight [channels_in, channels_out / groups, kernel_h,
  /// kernel_w] -> [batch_size, channels_out, height_out, width_out], height_out =
  /// (height - 1)·stride - 2·padding + dilation·(kernel_h - 1) + padding_out + 1.
  /// Throws as conv2d; ConfigError when padding_out >= both stride and dilation;
  /// ShapeError when the output would be empty.
  static CpuTensor conv_transpose2d(const CpuTensor& x, const CpuTensor& weight,
                                    const std::optional<CpuTensor>& bias,
                                    const ConvTransposeOptions<2>& options);
  /// Gradient of conv_transpose2d w.r.t. x (a conv2d of the output gradient).
  static CpuTensor conv_transpose2d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                               const CpuTensor& output_grad,
                                               const ConvTransposeOptions<2>& options);
  /// Gradient of conv_transpose2d w.r.t. the weight.
  static CpuTensor conv_transpose2d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                                    const CpuTensor& output_grad,
                                                    const ConvTransposeOptions<2>& options);
  /// 3-D convolution (torch.nn.functional.conv3d): x [batch_size, channels_in, depth,
  /// height, width], weight [channels_out, channels_in / groups, kernel_d, kernel_h,
  /// kernel_w] -> [batch_size, channels_out, depth_out, height_out, width_out] (the 2-D
  /// kernels' im2col + GEMM with a depth axis). Throws as conv2d, naming conv3d.
  static CpuTensor conv3d(const CpuTensor& x, const CpuTensor& weight,
                          const std::optional<CpuTensor>& bias, const ConvOptions<3>& options);
  /// Gradient of conv3d w.r.t. x (shape x_shape): col2im of Wᵀ·G.
  static CpuTensor conv3d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                     const CpuTensor& output_grad, const ConvOptions<3>& options);
  /// Gradient of conv3d w.r.t. the weight (shape weight_shape), summed over the batch in a
  /// fixed order.
  static CpuTensor conv3d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                          const CpuTensor& output_grad,
                                          const ConvOptions<3>& options);
  /// Transposed 1-D convolution (torch.nn.functional.conv_transpose1d): x [batch_size,
  /// channels_in, length], weight [channels_in, channels_out / groups, kernel_size] ->
  /// [batch_size, channels_out, length_out] (conv_transpose2d over a unit height). Throws as
  /// conv_transpose2d, naming conv_transpose1d. Its gradients are conv_transpose2d's on the
  /// unit-height views.
  static CpuTensor conv_transpose1d(const CpuTensor& x, const CpuTensor& weight,
                                    const std::optional<CpuTensor>& bias,
                                    const ConvTransposeOptions<1>& options);
  /// Transposed 3-D convolution (torch.nn.functional.conv_transpose3d): x [batch_size,
  /// channels_in, depth, height, width], weight [channels_in, channels_out / groups,
  /// kernel_d, kernel_h, kernel_w] -> [batch_size, channels_out, depth_out, height_out,
  /// width_out]. Throws as conv_transpose2d, naming conv_transpose3d.
  static CpuTensor conv_transpose3d(const CpuTensor& x, const CpuTensor& weight,
                                    const std::optional<CpuTensor>& bias,
                                    const ConvTransposeOptions<3>& options);
  /// Gradient of conv_transpose3d w.r.t. x (a conv3d of the output gradient).
  static CpuTensor conv_transpose3d_x_backward(const Shape& x_shape, const CpuTensor& weight,
                                               const CpuTensor& output_grad,
                                               const ConvTransposeOptions<3>& options);
  /// Gradient of conv_transpose3d w.r.t. the weight.
  static CpuTensor conv_transpose3d_weight_backward(const CpuTensor& x, const Shape& weight_shape,
                                                    const CpuTensor& output_grad,
                                                    const ConvTransposeOptions<3>& options);
};

/// The Cpu backend (Burn's `NdArray`): `using B = kiln::Cpu;`.
struct Cpu {
  using Device = CpuDevice;
  using FloatTensor = CpuTensor;
  using IntTensor = CpuTensor;
  using BoolTensor = CpuTensor;
  using FloatOps = CpuOps;
  using IntOps = CpuOps;
  using BoolOps = CpuOps;
  static constexpr std::string_view name() { return "cpu"; }
  /// Seeds the generator of `Tensor::random` (process-wide, as Burn's `B::seed`); the same
  /// seed gives the same values natively and in WebAssembly.
  static void seed(std::uint64_t seed);
  /// The SIMD instruction set the kernels run with ("avx512f", "avx2", "sse4.1", ...).
  static std::string_view simd_arch();
};

}  // namespace kiln
