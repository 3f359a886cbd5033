#pragma once
/// `Autodiff<B>`: the backend decorator that adds reverse-mode automatic differentiation to
/// a backend (Burn's `Autodiff<B>`, DESIGN.md §3). `Tensor<Autodiff<Cpu>, D>` has the same
/// API as `Tensor<Cpu, D>` plus `require_grad()`, `backward()`, `grad(grads)`, `detach()`,
/// `inner()` and `from_inner()`.
///
/// Float tensors carry the inner primitive and, when they require gradients, a graph node;
/// Int and Bool tensors are the inner backend's (they never carry gradients). A tensor
/// built from untracked inputs has no node: every op on it is the inner op plus one null
/// check, and nothing is saved.
///
/// Gradients follow PyTorch's conventions (torch/csrc/autograd/FunctionsManual.cpp,
/// tools/autograd/derivatives.yaml), op by op in IEEE arithmetic: relu'(0) = abs'(0) = 0,
/// sqrt'(0) = inf, clamp passes the gradient where min <= x <= max, whole-tensor max/min
/// split it evenly across ties, max_dim/min_dim/sort route it to the selected index, and a
/// nan or inf in the unselected branch of mask_where leaks into the gradient as nan.
/// Broadcast inputs receive their gradient summed back to their own shape.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/autodiff/graph.hpp"
#include "kiln/backend/backend.hpp"
#include "kiln/backend/pool_options.hpp"
#include "kiln/backend/conv_options.hpp"
#include "kiln/core/dtype.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"

namespace kiln {

/// The float primitive of `Autodiff<B>`: the inner primitive and its graph node (null when
/// the tensor does not require gradients).
template <Backend B>
struct AutodiffTensor {
  using Prim = typename B::FloatTensor;

  AutodiffTensor() = default;
  /// An untracked tensor (implicit, so that inner results such as an Int -> Float cast
  /// become Float tensors of the autodiff backend).
  AutodiffTensor(Prim primitive) : primitive(std::move(primitive)) {}  // NOLINT
  AutodiffTensor(Prim primitive, std::shared_ptr<autodiff::Node<B>> node)
      : primitive(std::move(primitive)), node(std::move(node)) {}

  Prim primitive;
  std::shared_ptr<autodiff::Node<B>> node;
};

/// The float ops of `Autodiff<B>`: each computes the inner op and, when an input is
/// tracked, records a node with the op's backward step. Defined and instantiated for
/// `Autodiff<Cpu>` in engine/src/autodiff/ (one file per op family: the element-wise unary
/// rules come from the op table, kiln/backend/ops.def), so user code does not recompile them. Signatures mirror the inner ops
/// (see CpuOps for the forward semantics and errors); ops whose result is Int or Bool
/// return the inner primitive and pass no gradient.
template <Backend B>
struct AutodiffOps {
  using Tensor = AutodiffTensor<B>;
  using Prim = typename B::FloatTensor;
  using P = Prim;
  using IntPrim = typename B::IntTensor;
  using BoolPrim = typename B::BoolTensor;
  using Inner = typename B::FloatOps;
  using Device = typename B::Device;
  using NodeT = autodiff::Node<B>;
  using Gradients = autodiff::Gradients<B>;

  // ---- autodiff
  /// A new leaf that requires gradients (require = true), or an untracked tensor (false).
  /// On an op output, true keeps its gradient in backward()'s result (PyTorch's retain_grad).
  static Tensor set_require_grad(Tensor x, bool require);
  /// Whether gradients flow to this tensor (a leaf that required them or an op output with
  /// a tracked input), as PyTorch's `requires_grad`.
  static bool is_require_grad(const Tensor& x) { return x.node != nullptr; }
  static Tensor detach(Tensor x) { return Tensor(std::move(x.primitive)); }
  static Prim inner(const Tensor& x) { return x.primitive; }
  static Tensor from_inner(Prim x) { return Tensor(std::move(x)); }
  /// Back-propagates from a one-element tensor. Throws ShapeError for more (or fewer)
  /// elements, StateError if the tensor does not require gradients or its graph was
  /// already released by an earlier backward().
  static Gradients backward(const Tensor& root);
  /// backward(root) that keeps the graph when `retain_graph` (PyTorch's retain_graph=True):
  /// its nodes are not released, so the graph can be back-propagated again.
  static Gradients backward(const Tensor& root, bool retain_graph);
  static std::optional<Prim> grad(const Tensor& x, const Gradients& grads);
  static std::optional<Prim> grad_remove(const Tensor& x, Gradients& grads);
  /// Throws StateError if x does not require gradients, ShapeError if shapes differ.
  static void grad_replace(const Tensor& x, Gradients& grads, Prim grad);

  // ---- data, creation (never tracked)
  static Shape shape(const Tensor& x) { return Inner::shape(x.primitive); }
  static Device device(const Tensor& x) { return Inner::device(x.primitive); }
  static Tensor from_data(const TensorData& data, DType dtype, const Device& device) {
    return Tensor(Inner::from_data(data, dtype, device));
  }
  static TensorData into_data(const Tensor& x) { return Inner::into_data(x.primitive); }
  static Tensor full(const Shape& shape, double value, DType dtype, const Device& device) {
    return Tensor(Inner::full(shape, value, dtype, device));
  }
  static Tensor random(const Shape& shape, const Distribution& distribution, DType dtype,
                       const Device& device) {
    return Tensor(Inner::random(shape, distribution, dtype, device));
  }
  static Tensor arange(double start, double end, double step, DType dtype, const Device& device) {
    return Tensor(Inner::arange(start, end, step, dtype, device));
  }
  static Tensor eye(std::int64_t n, std::int64_t m, DType dtype, const Device& device) {
    return Tensor(Inner::eye(n, m, dtype, device));
  }
  /// Float -> Int/Bool: the inner primitive (no gradient).
  static Prim cast(Tensor x, DType to) { return Inner::cast(std::move(x.primitive), to); }

  // ---- element-wise
  static Tensor binary(BinaryOp op, Tensor lhs, Tensor rhs);
  static Tensor binary_scalar(BinaryOp op, Tensor lhs, double scalar, bool scalar_on_left = false);
  static Tensor unary(UnaryOp op, Tensor x);
  static Tensor clamp(Tensor x, std::optional<double> min, std::optional<double> max);
  static Tensor leaky_relu(Tensor x, double negative_slope);
  static Tensor softplus(Tensor x, double beta, double threshold);
  static BoolPrim compare(CompareOp op, const Tensor& lhs, const Tensor& rhs) {
    return Inner::compare(op, lhs.primitive, rhs.primitive);
  }
  static BoolPrim compare_scalar(CompareOp op, const Tensor& lhs, double scalar) {
    return Inner::compare_scalar(op, lhs.primitive, scalar);
  }
  static BoolPrim is_nan(const Tensor& x) { return Inner::is_nan(x.primitive); }
  static BoolPrim is_inf(const Tensor& x) { return Inner::is_inf(x.primitive); }
  static Tensor mask_where(Tensor x, const BoolPrim& mask, const Tensor& value);
  static Tensor mask_fill(Tensor x, const BoolPrim& mask, double value);

  // ---- activations along a dim
  static Tensor softmax(Tensor x, std::int64_t dim);
  static Tensor log_softmax(Tensor x, std::int64_t dim);

  // ---- matmul
  static Tensor matmul(const Tensor& lhs, const Tensor& rhs);
  /// op(lhs)·op(rhs) without transposed copies (op swaps the last two dims when its flag is
  /// set); gradients d op(lhs) = G·op(rhs)ᵀ, d op(rhs) = op(lhs)ᵀ·G, also without copies.
  static Tensor matmul_transposed(const Tensor& lhs, const Tensor& rhs, bool transpose_lhs,
                                  bool transpose_rhs);

  // ---- reductions
  static Tensor reduce(ReduceOp op, const Tensor& x);
  static Tensor reduce_dim(ReduceOp op, const Tensor& x, std::int64_t dim);
  static BoolPrim any(const Tensor& x) { return Inner::any(x.primitive); }
  static BoolPrim all(const Tensor& x) { return Inner::all(x.primitive); }
  static BoolPrim any_dim(const Tensor& x, std::int64_t dim) {
    return Inner::any_dim(x.primitive, dim);
  }
  static BoolPrim all_dim(const Tensor& x, std::int64_t dim) {
    return Inner::all_dim(x.primitive, dim);
  }
  static std::pair<Tensor, IntPrim> max_dim_with_indices(const Tensor& x, std::int64_t dim);
  static std::pair<Tensor, IntPrim> min_dim_with_indices(const Tensor& x, std::int64_t dim);
  static IntPrim argmax(const Tensor& x, std::int64_t dim) { return Inner::argmax(x.primitive, dim); }
  static IntPrim argmin(const Tensor& x, std::int64_t dim) { return Inner::argmin(x.primitive, dim); }
  static std::pair<Tensor, Tensor> var_mean(const Tensor& x, std::int64_t dim, bool unbiased);
  static std::pair<Tensor, IntPrim> sort_with_indices(const Tensor& x, std::int64_t dim,
                                                      bool descending);

  // ---- pooling, NCHW (forward and backward: engine/src/autodiff/pool.cpp)
  /// Gradient routed to the selected element of each window (accumulating where windows
  /// overlap); the indices are computed only when x is tracked.
  static Tensor max_pool2d(const Tensor& x, const MaxPool2dOptions& options);
  static std::pair<Tensor, IntPrim> max_pool2d_with_indices(const Tensor& x,
                                                            const MaxPool2dOptions& options);
  /// Gradient: each window's gradient / divisor spread over its input elements.
  static Tensor avg_pool2d(const Tensor& x, const AvgPool2dOptions& options);
  static Tensor adaptive_avg_pool2d(const Tensor& x, const std::array<std::int64_t, 2>& output_size);

  // ---- shape and indexing
  static Tensor reshape(Tensor x, std::span<const std::int64_t> dims);
  static Tensor permute(const Tensor& x, std::span<const std::int64_t> axes);
  static Tensor expand(const Tensor& x, std::span<const std::int64_t> dims);
  static Tensor repeat_dim(const Tensor& x, std::int64_t dim, std::int64_t times);
  static Tensor flip(const Tensor& x, std::span<const std::int64_t> dims);
  static Tensor slice(const Tensor& x, std::span<const Slice> ranges);
  static Tensor slice_assign(Tensor x, std::span<const Slice> ranges, const Tensor& values);
  static Tensor cat(std::span<const Tensor> tensors, std::int64_t dim);
  static Tensor select(const Tensor& x, std::int64_t dim, const IntPrim& indices);
  static Tensor select_assign(Tensor x, std::int64_t dim, const IntPrim& indices,
                              const Tensor& values);
  static Tensor gather(const Tensor& x, std::int64_t dim, const IntPrim& indices);
  static Tensor scatter(Tensor x, std::int64_t dim, const IntPrim& indices, const Tensor& values);
  /// Not differentiable (its output does not depend smoothly on x).
  static Tensor one_hot(const Tensor& x, std::int64_t num_classes) {
    return Tensor(Inner::one_hot(x.primitive, num_classes));
  }

  // ---- convolution (engine/src/autodiff/conv.cpp). Gradients: x by the adjoint convolution (col2im of
  // Wᵀ·G), weight by G·im2col(x)ᵀ, bias by summing G over all dims but 1 (PyTorch's
  // convolution_backward). First derivatives only.
  static Tensor conv1d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       const ConvOptions<1>& options);
  static Tensor conv2d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       const ConvOptions<2>& options);
  static Tensor conv_transpose2d(const Tensor& x, const Tensor& weight,
                                 const std::optional<Tensor>& bias,
                                 const ConvTransposeOptions<2>& options);
  static Tensor conv3d(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias,
                       const ConvOptions<3>& options);
  static Tensor conv_transpose1d(const Tensor& x, const Tensor& weight,
                                 const std::optional<Tensor>& bias,
                                 const ConvTransposeOptions<1>& options);
  static Tensor conv_transpose3d(const Tensor& x, const Tensor& weight,
                                 const std::optional<Tensor>& bias,
                                 const ConvTransposeOptions<3>& options);
};

/// The autodiff backend over `B` (Burn's `Autodiff<B>`): `using B = Autodiff<Cpu>;`.
template <Backend B>
struct Autodiff {
  using Inner = B;
  using Device = typename B::Device;
  using FloatTensor = AutodiffTensor<B>;
  using IntTensor = typename B::IntTensor;
  using BoolTensor = typename B::BoolTensor;
  using FloatOps = AutodiffOps<B>;
  using IntOps = typename B::IntOps;
  using BoolOps = typename B::BoolOps;
  using Gradients = autodiff::Gradients<B>;
  static constexpr bool is_autodiff = true;

  /// "autodiff<cpu>".
  static std::string_view name() {
    static const std::string n = std::string("autodiff<") + std::string(B::name()) + ">";
    return n;
  }
  /// Seeds the inner backend's generator.
  static void seed(std::uint64_t seed) { B::seed(seed); }
};

}  // namespace kiln
