#pragma once
/// Tensor<B, D, K>: the typed front end (Burn's `Tensor<B, D, K>`), header only.
///
/// `B` is the backend, `D` the rank (a compile-time constant; ops that change the rank
/// name the new one: `reshape<3>(...)`), `K` the kind: Float (f32, the default), Int (i32)
/// or Bool. Shapes are run-time values checked by every op. A Tensor is a cheap
/// refcounted handle: copying shares the buffer; an op called on an rvalue whose buffer has
/// no other owner writes its result into that buffer (`std::move(x).exp()`). On an autodiff
/// backend this holds for untracked tensors; a tracked input is usually saved for the
/// backward pass, so its buffer is shared and the op allocates.
///
/// Semantics are PyTorch's (broadcasting, integer division, nan handling) with Burn's
/// names; whole-tensor reductions return rank 1 with one element, as in Burn.
/// Dims may be negative (counted from the end, as PyTorch); out of range -> IndexError.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/backend/backend.hpp"
#include "kiln/core/check.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/tensor/derived.hpp"
#include "kiln/tensor/kind.hpp"

namespace kiln {

template <Backend B, std::size_t D, TensorKind K = Float>
class Tensor;

namespace detail {
/// Appends a tensor the way Burn's Display does (values, shape, device, backend, kind,
/// dtype); precision as append_values (< 0: shortest round-trip floats).
void append_tensor(std::string& out, const TensorData& data, std::string_view device,
                   std::string_view backend, std::string_view kind, int precision = -1);

template <class S>
concept Scalar = std::is_arithmetic_v<S>;
}  // namespace detail

// Defines `name()` for lvalues (shares the input) and rvalues (may reuse its buffer).
#define KILN_UNARY(name, requirement, op)                                             \
  Tensor name() const& requires(requirement) { return Tensor(Ops::unary(op, prim_)); } \
  Tensor name() && requires(requirement) { return Tensor(Ops::unary(op, std::move(prim_))); }

template <Backend B, std::size_t D, TensorKind K>
class Tensor {
  static_assert(D >= 1, "Tensor: rank D must be at least 1 (Burn has no rank-0 tensors)");

 public:
  using Backend = B;
  using Kind = K;
  using Elem = typename K::Elem;
  using Primitive = typename K::template Primitive<B>;
  using Ops = typename K::template Ops<B>;
  using Device = kiln::Device<B>;
  static constexpr std::size_t rank = D;

  static constexpr bool is_float = std::is_same_v<K, Float>;
  static constexpr bool is_int = std::is_same_v<K, Int>;
  static constexpr bool is_bool = std::is_same_v<K, Bool>;
  static constexpr bool is_numeric = is_float || is_int;

  /// Wraps a primitive. Throws RankError if its rank is not D.
  explicit Tensor(Primitive primitive) : prim_(std::move(primitive)) {
    check::rank("Tensor", D, Ops::shape(prim_));
  }

  const Primitive& primitive() const& { return prim_; }
  Primitive into_primitive() && { return std::move(prim_); }

  // ------------------------------------------------------------------ creation

  /// From nested initializer lists of the kind's element type:
  ///   Tensor<B, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}}, device)   // [2, 2]
  /// Throws: ShapeError if rows are ragged.
  static Tensor from_data(NestedList<Elem, D> values, const Device& device = {}) {
    return from_data(TensorData::from_nested<Elem, D>(values), device);
  }
  /// From TensorData of any dtype (converted to the kind's dtype, as Burn's `from_data`).
  /// Throws: RankError if data's rank is not D.
  static Tensor from_data(const TensorData& data, const Device& device = {}) {
    check::rank("Tensor::from_data", D, data.shape);
    return Tensor(Ops::from_data(data, K::dtype, device));
  }
  /// Float tensor from nested float lists (Burn's `from_floats`).
  static Tensor from_floats(NestedList<float, D> values, const Device& device = {})
    requires(is_float)
  {
    return from_data(TensorData::from_nested<float, D>(values), device);
  }
  /// Int tensor from nested int32 lists (Burn's `from_ints`).
  static Tensor from_ints(NestedList<std::int32_t, D> values, const Device& device = {})
    requires(is_int)
  {
    return from_data(TensorData::from_nested<std::int32_t, D>(values), device);
  }
  /// Bool tensor from nested bool lists (Burn's `from_bool`).
  static Tensor from_bool(NestedList<bool, D> values, const Device& device = {})
    requires(is_bool)
  {
    return from_data(TensorData::from_nested<bool, D>(values), device);
  }

  /// Filled with `value`. Shape: `shape` (its rank must be D, else RankError).
  static Tensor full(const Shape& shape, Elem value, const Device& device = {}) {
    check::rank("Tensor::full", D, shape);
    return Tensor(Ops::full(shape, static_cast<double>(value), K::dtype, device));
  }
  static Tensor zeros(const Shape& shape, const Device& device = {}) {
    return full(shape, Elem(0), device);
  }
  static Tensor ones(const Shape& shape, const Device& device = {}) {
    return full(shape, Elem(1), device);
  }
  /// Zeros (ones, `value`) with this tensor's shape and device (Burn's `zeros_like`).
  Tensor zeros_like() const { return zeros(shape(), device()); }
  Tensor ones_like() const { return ones(shape(), device()); }
  Tensor full_like(Elem value) const { return full(shape(), value, device()); }

  /// Random values (Burn's `Tensor::random`): `Distribution{}` is uniform [0, 1);
  /// `Distribution::uniform(lo, hi)`, `normal(mean, std)`, `bernoulli(p)`. Int tensors
  /// draw integers in [lo, hi). Reproducible after `B::seed(n)`, natively and in WASM.
  static Tensor random(const Shape& shape, const Distribution& distribution = {},
                       const Device& device = {}) {
    check::rank("Tensor::random", D, shape);
    return Tensor(Ops::random(shape, distribution, K::dtype, device));
  }

  /// [start, end) in steps of 1 (Burn's `arange(start..end)`). Shape: [end - start].
  static Tensor arange(std::int64_t start, std::int64_t end, const Device& device = {})
    requires(D == 1 && is_numeric)
  {
    return arange_step(start, end, 1, device);
  }
  /// [start, end) in steps of `step` (negative steps count down). Throws ValueError if 0.
  static Tensor arange_step(std::int64_t start, std::int64_t end, std::int64_t step,
                            const Device& device = {})
    requires(D == 1 && is_numeric)
  {
    return Tensor(Ops::arange(static_cast<double>(start), static_cast<double>(end),
                              static_cast<double>(step), K::dtype, device));
  }
  /// The size x size identity matrix (Burn's `eye`).
  static Tensor eye(std::int64_t size, const Device& device = {})
    requires(D == 2 && is_numeric)
  {
    return Tensor(Ops::eye(size, size, K::dtype, device));
  }

  // ------------------------------------------------------------------ extraction

  /// The values on the host (Burn's `to_data`).
  TensorData to_data() const { return Ops::into_data(prim_); }
  TensorData into_data() const { return Ops::into_data(prim_); }
  /// The one element of a one-element tensor. Throws ShapeError otherwise.
  Elem into_scalar() const {
    const Shape s = shape();
    if (s.num_elements() != 1) {
      throw_error<ShapeError>("into_scalar: expected a tensor with one element, got shape ", s,
                              " (", s.num_elements(), " elements)");
    }
    return to_data().template to_vec<Elem>()[0];
  }
  /// The dims as an array, for structured bindings: `auto [rows, cols] = t.dims();`.
  std::array<std::int64_t, D> dims() const {
    const Shape s = shape();
    std::array<std::int64_t, D> out{};
    for (std::size_t i = 0; i < D; ++i) out[i] = s[i];
    return out;
  }
  Shape shape() const { return Ops::shape(prim_); }
  Device device() const { return Ops::device(prim_); }
  /// This tensor on `device` (Burn's `to_device`). Kiln's backends have one device each
  /// (Cpu; Autodiff<Cpu> shares it), so this is the same tensor, graph included; it exists
  /// so that device-generic code written as in Burn compiles and runs unchanged.
  Tensor to_device(const Device& device) const {
    if (!(device == this->device())) {
      throw_error<DeviceError>("to_device: backend ", B::name(), " has no device ", device);
    }
    return *this;
  }
  std::int64_t num_elements() const { return shape().num_elements(); }
  /// A new handle to the same buffer (Burn's `clone`; cheap).
  Tensor clone() const { return *this; }

  // ------------------------------------------------------------------ autodiff
  // Available on an AutodiffBackend (`Autodiff<Cpu>`); Burn's AutodiffTensor API.

  /// Marks this tensor as a leaf whose gradient `backward()` computes (Burn's
  /// `require_grad`, PyTorch's `requires_grad_()`). An untracked tensor gets a new handle
  /// with its own leaf node; a tracked one is returned as is (an op output's shared node is
  /// then marked to keep its gradient, like PyTorch's retain_grad()).
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  Tensor require_grad() const {
    return set_require_grad(true);
  }
  /// true: as require_grad() (on an op output: keep its gradient too, as retain_grad()).
  /// false: an untracked tensor with the same values (as detach()).
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  Tensor set_require_grad(bool require) const {
    return Tensor(Ops::set_require_grad(prim_, require));
  }
  /// Whether gradients flow to this tensor (PyTorch's `requires_grad`).
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  bool is_require_grad() const {
    return Ops::is_require_grad(prim_);
  }
  /// The same values, cut from the graph (no gradient flows through the result).
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  Tensor detach() const {
    return Tensor(Ops::detach(prim_));
  }
  /// The tensor on the inner backend (no graph): `Tensor<Autodiff<Cpu>, D>` -> `Tensor<Cpu, D>`.
  template <class BB = B>
    requires AutodiffBackend<BB>
  Tensor<typename BB::Inner, D, K> inner() const {
    if constexpr (is_float) {
      return Tensor<typename BB::Inner, D, K>(Ops::inner(prim_));
    } else {
      return Tensor<typename BB::Inner, D, K>(prim_);
    }
  }
  /// An untracked tensor of this backend from the inner backend's.
  template <class BB = B>
    requires AutodiffBackend<BB>
  static Tensor from_inner(const Tensor<typename BB::Inner, D, K>& inner) {
    if constexpr (is_float) {
      return Tensor(Ops::from_inner(inner.primitive()));
    } else {
      return Tensor(inner.primitive());
    }
  }
  /// Gradients of this one-element tensor (a loss) with respect to every tensor that
  /// required them (Burn's `backward`). Releases the graph: a second backward() through it
  /// throws StateError.
  /// Throws: ShapeError unless the tensor has exactly one element; StateError if it does
  ///         not require gradients or its graph was already released.
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  typename BB::Gradients backward() const {
    return Ops::backward(prim_);
  }
  /// backward() that keeps the graph when `retain_graph` (PyTorch's retain_graph=True): the
  /// same graph can then be back-propagated again; false is backward().
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  typename BB::Gradients backward(bool retain_graph) const {
    return Ops::backward(prim_, retain_graph);
  }
  /// This tensor's gradient in `grads` (on the inner backend), or nullopt if it has none
  /// (it did not require gradients, or the loss does not depend on it).
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  std::optional<Tensor<typename BB::Inner, D>> grad(const typename BB::Gradients& grads) const {
    auto g = Ops::grad(prim_, grads);
    if (!g) return std::nullopt;
    return Tensor<typename BB::Inner, D>(std::move(*g));
  }
  /// Removes and returns this tensor's gradient from `grads`.
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  std::optional<Tensor<typename BB::Inner, D>> grad_remove(typename BB::Gradients& grads) const {
    auto g = Ops::grad_remove(prim_, grads);
    if (!g) return std::nullopt;
    return Tensor<typename BB::Inner, D>(std::move(*g));
  }
  /// Sets this tensor's gradient in `grads`. Throws StateError if it does not require
  /// gradients, ShapeError if `grad`'s shape differs from this tensor's.
  template <class BB = B>
    requires(AutodiffBackend<BB> && is_float)
  void grad_replace(typename BB::Gradients& grads, const Tensor<typename BB::Inner, D>& grad) const {
    Ops::grad_replace(prim_, grads, grad.primitive());
  }

  // ------------------------------------------------------------------ element-wise

  /// Binary ops broadcast as NumPy: [2, 1, 3] + [4, 1] -> [2, 4, 3].
  /// Throws: ShapeError if the shapes do not broadcast.
  friend Tensor operator+(Tensor lhs, Tensor rhs) requires(is_numeric) {
    return lhs.binary(BinaryOp::Add, std::move(rhs));
  }
  friend Tensor operator-(Tensor lhs, Tensor rhs) requires(is_numeric) {
    return lhs.binary(BinaryOp::Sub, std::move(rhs));
  }
  friend Tensor operator*(Tensor lhs, Tensor rhs) requires(is_numeric) {
    return lhs.binary(BinaryOp::Mul, std::move(rhs));
  }
  /// Float: IEEE division. Int: floor division (Python `//`, torch.floor_divide);
  /// division by zero throws ValueError for Int.
  friend Tensor operator/(Tensor lhs, Tensor rhs) requires(is_numeric) {
    return lhs.binary(BinaryOp::Div, std::move(rhs));
  }
  /// Remainder with the sign of the divisor (Python `%`, torch.remainder).
  friend Tensor operator%(Tensor lhs, Tensor rhs) requires(is_numeric) {
    return lhs.binary(BinaryOp::Rem, std::move(rhs));
  }
  template <detail::Scalar S>
  friend Tensor operator+(Tensor lhs, S rhs) requires(is_numeric) {
    return lhs.binary_scalar(BinaryOp::Add, rhs, false);
  }
  template <detail::Scalar S>
  friend Tensor operator+(S lhs, Tensor rhs) requires(is_numeric) {
    return rhs.binary_scalar(BinaryOp::Add, lhs, true);
  }
  template <detail::Scalar S>
  friend Tensor operator-(Tensor lhs, S rhs) requires(is_numeric) {
    return lhs.binary_scalar(BinaryOp::Sub, rhs, false);
  }
  template <detail::Scalar S>
  friend Tensor operator-(S lhs, Tensor rhs) requires(is_numeric) {
    return rhs.binary_scalar(BinaryOp::Sub, lhs, true);
  }
  template <detail::Scalar S>
  friend Tensor operator*(Tensor lhs, S rhs) requires(is_numeric) {
    return lhs.binary_scalar(BinaryOp::Mul, rhs, false);
  }
  template <detail::Scalar S>
  friend Tensor operator*(S lhs, Tensor rhs) requires(is_numeric) {
    return rhs.binary_scalar(BinaryOp::Mul, lhs, true);
  }
  template <detail::Scalar S>
  friend Tensor operator/(Tensor lhs, S rhs) requires(is_numeric) {
    return lhs.binary_scalar(BinaryOp::Div, rhs, false);
  }
  template <detail::Scalar S>
  friend Tensor operator/(S lhs, Tensor rhs) requires(is_numeric) {
    return rhs.binary_scalar(BinaryOp::Div, lhs, true);
  }
  template <detail::Scalar S>
  friend Tensor operator%(Tensor lhs, S rhs) requires(is_numeric) {
    return lhs.binary_scalar(BinaryOp::Rem, rhs, false);
  }
  friend Tensor operator-(Tensor x) requires(is_numeric) {
    return Tensor(Ops::unary(UnaryOp::Neg, std::move(x.prim_)));
  }

  /// Named forms of the operators (Burn's `add`, `sub_scalar`, ...).
  Tensor add(const Tensor& rhs) const requires(is_numeric) { return *this + rhs; }
  Tensor sub(const Tensor& rhs) const requires(is_numeric) { return *this - rhs; }
  Tensor mul(const Tensor& rhs) const requires(is_numeric) { return *this * rhs; }
  Tensor div(const Tensor& rhs) const requires(is_numeric) { return *this / rhs; }
  Tensor remainder(const Tensor& rhs) const requires(is_numeric) { return *this % rhs; }
  Tensor add_scalar(double rhs) const requires(is_numeric) { return *this + rhs; }
  Tensor sub_scalar(double rhs) const requires(is_numeric) { return *this - rhs; }
  Tensor mul_scalar(double rhs) const requires(is_numeric) { return *this * rhs; }
  Tensor div_scalar(double rhs) const requires(is_numeric) { return *this / rhs; }
  Tensor remainder_scalar(double rhs) const requires(is_numeric) { return *this % rhs; }
  /// Int division truncating toward zero (torch.div(rounding_mode="trunc")).
  Tensor div_trunc(const Tensor& rhs) const requires(is_numeric) {
    return Tensor(*this).binary(BinaryOp::DivTrunc, rhs);
  }
  /// Remainder with the sign of the dividend (C fmod, torch.fmod).
  Tensor fmod(const Tensor& rhs) const requires(is_numeric) {
    return Tensor(*this).binary(BinaryOp::Fmod, rhs);
  }
  Tensor fmod_scalar(double rhs) const requires(is_numeric) {
    return Tensor(*this).binary_scalar(BinaryOp::Fmod, rhs, false);
  }

  /// The element-wise unary ops of the op table (kiln/backend/ops.def, one row each with its
  /// doc and PyTorch reference): `x.name()` for every row, Float only unless the row's KINDS
  /// is NUMERIC (then Int too). An rvalue (`std::move(x).exp()`) lends its buffer to the
  /// result. Notes: sign(±0) = 0 and nan stays nan; log(0) = -inf, log(x < 0) = nan; log1p
  /// is accurate for small x; round is half to even (torch.round); recip is 1 / x; gelu is
  /// the erf form, gelu_tanh its tanh approximation (kiln::activation::gelu picks either).
  ///   neg abs sign exp log log1p sqrt sin cos tanh ceil floor round recip erf sigmoid relu
  ///   gelu gelu_tanh silu ...
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, ...) \
  KILN_UNARY(snake, KILN_TENSOR_KINDS_##KINDS, UnaryOp::Name)
#define KILN_TENSOR_KINDS_NUMERIC is_numeric
#define KILN_TENSOR_KINDS_FLOAT is_float
#include "kiln/backend/ops.def"
#undef KILN_TENSOR_KINDS_NUMERIC
#undef KILN_TENSOR_KINDS_FLOAT

  /// x ^ exponent element-wise (broadcast), std::pow semantics.
  Tensor powf(const Tensor& exponent) const requires(is_float) {
    return Tensor(*this).binary(BinaryOp::Pow, exponent);
  }
  Tensor powf_scalar(double exponent) const& requires(is_float) {
    return Tensor(*this).binary_scalar(BinaryOp::Pow, exponent, false);
  }
  Tensor powf_scalar(double exponent) && requires(is_float) {
    return std::move(*this).binary_scalar(BinaryOp::Pow, exponent, false);
  }
  /// Int power, exact; Throws ValueError for negative exponents.
  Tensor powi_scalar(std::int32_t exponent) const requires(is_int) {
    return Tensor(*this).binary_scalar(BinaryOp::Pow, exponent, false);
  }

  /// Clamps to [min, max] (torch.clamp: nan stays nan; the gradient passes where
  /// min <= x <= max). Throws ValueError if min > max.
  Tensor clamp(Elem min, Elem max) const& requires(is_numeric) { return Tensor(*this).clamp(min, max); }
  Tensor clamp(Elem min, Elem max) && requires(is_numeric) {
    return Tensor(Ops::clamp(std::move(prim_), static_cast<double>(min), static_cast<double>(max)));
  }
  Tensor clamp_min(Elem min) const& requires(is_numeric) { return Tensor(*this).clamp_min(min); }
  Tensor clamp_min(Elem min) && requires(is_numeric) {
    return Tensor(Ops::clamp(std::move(prim_), static_cast<double>(min), std::nullopt));
  }
  Tensor clamp_max(Elem max) const& requires(is_numeric) { return Tensor(*this).clamp_max(max); }
  Tensor clamp_max(Elem max) && requires(is_numeric) {
    return Tensor(Ops::clamp(std::move(prim_), std::nullopt, static_cast<double>(max)));
  }
  /// Element-wise maximum / minimum of two tensors (broadcast; nan propagates).
  Tensor max_pair(const Tensor& rhs) const requires(is_numeric) {
    return Tensor(*this).binary(BinaryOp::Max, rhs);
  }
  Tensor min_pair(const Tensor& rhs) const requires(is_numeric) {
    return Tensor(*this).binary(BinaryOp::Min, rhs);
  }

  /// Matrix product over the last two dims, batched and broadcast over the others.
  ///
  /// Shapes:    self [..., m, k] · rhs [..., k, n] -> [..., m, n]
  ///            batch dims broadcast as in NumPy: [2, 1, m, k] · [1, 5, k, n] -> [2, 5, m, n]
  /// Kinds:     Float.
  /// Throws:    ShapeError if the inner dims differ or the batch dims do not broadcast.
  /// Cost:      2·m·n·k flops per batch element (packed xsimd GEMM, engine/src/cpu/gemm/).
  /// Semantics: torch.matmul and Burn's Tensor::matmul for rank >= 2.
  Tensor matmul(const Tensor& rhs) const requires(D >= 2 && is_float) {
    return Tensor(Ops::matmul(prim_, rhs.prim_));
  }
  /// op(self)·op(rhs), where op swaps the last two dims of an operand whose flag is set,
  /// without materialising the transposed copy (the GEMM reads it with swapped strides).
  ///
  /// Shapes:    self [..., m, k] (or [..., k, m] with transpose_lhs) ·
  ///            rhs [..., k, n] (or [..., n, k] with transpose_rhs) -> [..., m, n],
  ///            batch dims broadcast as in matmul.
  /// Kinds:     Float.
  /// Throws:    ShapeError if the inner dims differ or the batch dims do not broadcast.
  /// Cost:      that of matmul; no copy of either operand.
  /// Semantics: self.transpose().matmul(rhs) etc. (torch.matmul(a.mT, b)); nn::Linear
  ///            computes x·Wᵀ with it. Gradients on Autodiff<B> as for matmul.
  /// Example:
  ///   auto x = Tensor<Cpu, 2>::from_data({{1.f, 2.f}}, device);             // [1, 2]
  ///   auto w = Tensor<Cpu, 2>::from_data({{1.f, 0.f}, {1.f, 1.f}, {0.f, 2.f}}, device);  // [3, 2]
  ///   x.matmul_transposed(w, false, true);                                   // [[1, 3, 4]]
  Tensor matmul_transposed(const Tensor& rhs, bool transpose_lhs, bool transpose_rhs) const
    requires(D >= 2 && is_float)
  {
    return Tensor(Ops::matmul_transposed(prim_, rhs.prim_, transpose_lhs, transpose_rhs));
  }

  // ------------------------------------------------------------------ comparisons

  /// Element-wise comparisons -> Bool, broadcast. NaN compares unequal to everything.
  Tensor<B, D, Bool> equal(const Tensor& rhs) const { return compare(CompareOp::Equal, rhs); }
  Tensor<B, D, Bool> not_equal(const Tensor& rhs) const {
    return compare(CompareOp::NotEqual, rhs);
  }
  Tensor<B, D, Bool> greater(const Tensor& rhs) const requires(is_numeric) {
    return compare(CompareOp::Greater, rhs);
  }
  Tensor<B, D, Bool> greater_equal(const Tensor& rhs) const requires(is_numeric) {
    return compare(CompareOp::GreaterEqual, rhs);
  }
  Tensor<B, D, Bool> lower(const Tensor& rhs) const requires(is_numeric) {
    return compare(CompareOp::Lower, rhs);
  }
  Tensor<B, D, Bool> lower_equal(const Tensor& rhs) const requires(is_numeric) {
    return compare(CompareOp::LowerEqual, rhs);
  }
  Tensor<B, D, Bool> equal_elem(double rhs) const { return compare_elem(CompareOp::Equal, rhs); }
  Tensor<B, D, Bool> not_equal_elem(double rhs) const {
    return compare_elem(CompareOp::NotEqual, rhs);
  }
  Tensor<B, D, Bool> greater_elem(double rhs) const requires(is_numeric) {
    return compare_elem(CompareOp::Greater, rhs);
  }
  Tensor<B, D, Bool> greater_equal_elem(double rhs) const requires(is_numeric) {
    return compare_elem(CompareOp::GreaterEqual, rhs);
  }
  Tensor<B, D, Bool> lower_elem(double rhs) const requires(is_numeric) {
    return compare_elem(CompareOp::Lower, rhs);
  }
  Tensor<B, D, Bool> lower_equal_elem(double rhs) const requires(is_numeric) {
    return compare_elem(CompareOp::LowerEqual, rhs);
  }

  /// Bool logic (broadcast).
  Tensor bool_not() const requires(is_bool) { return Tensor(Ops::bool_not(prim_)); }
  Tensor bool_and(const Tensor& rhs) const requires(is_bool) {
    return Tensor(Ops::bool_and(prim_, rhs.prim_));
  }
  Tensor bool_or(const Tensor& rhs) const requires(is_bool) {
    return Tensor(Ops::bool_or(prim_, rhs.prim_));
  }
  Tensor bool_xor(const Tensor& rhs) const requires(is_bool) {
    return Tensor(Ops::bool_xor(prim_, rhs.prim_));
  }

  /// True where the value is nan / ±inf.
  Tensor<B, D, Bool> is_nan() const requires(is_float) {
    return Tensor<B, D, Bool>(Ops::is_nan(prim_));
  }
  Tensor<B, D, Bool> is_inf() const requires(is_float) {
    return Tensor<B, D, Bool>(Ops::is_inf(prim_));
  }
  /// [1] Bool: whether any element is nan.
  Tensor<B, 1, Bool> contains_nan() const requires(is_float) { return is_nan().any(); }

  /// Casts (Burn's `float()`, `int()`, `bool()`): f32 -> i32 truncates toward zero,
  /// anything -> bool is `!= 0`, bool -> 0/1.
  Tensor<B, D, Float> float_() const { return cast<Float>(); }
  Tensor<B, D, Int> int_() const { return cast<Int>(); }
  Tensor<B, D, Bool> bool_() const { return cast<Bool>(); }
  template <TensorKind K2>
  Tensor<B, D, K2> cast() const {
    if constexpr (std::is_same_v<K2, K>) {
      return *this;
    } else {
      return Tensor<B, D, K2>(Ops::cast(prim_, K2::dtype));
    }
  }

  /// value where mask is true, else self (torch.where(mask, value, self)); all broadcast.
  Tensor mask_where(const Tensor<B, D, Bool>& mask, const Tensor& value) const {
    return Tensor(Ops::mask_where(prim_, mask.primitive(), value.prim_));
  }
  /// `value` where mask is true, else self (torch.masked_fill).
  Tensor mask_fill(const Tensor<B, D, Bool>& mask, Elem value) const {
    return Tensor(Ops::mask_fill(prim_, mask.primitive(), static_cast<double>(value)));
  }

  // ------------------------------------------------------------------ reductions

  /// Whole-tensor reductions to shape [1] (Burn has no rank 0). Mean of zero elements is
  /// nan; max/min of zero elements throw ShapeError. Max/min propagate nan (torch.amax).
  /// Int: sum/prod are exact and throw LimitError if the result does not fit in i32; mean is
  /// the floor of the exact mean (and throws ShapeError for zero elements).
  /// Float sums are accurate for any length: |error| <= 2.9e-6·Σ|x| + 2^-24·|sum|.
  Tensor<B, 1, K> sum() const requires(is_numeric) { return reduce(ReduceOp::Sum); }
  Tensor<B, 1, K> mean() const requires(is_numeric) { return reduce(ReduceOp::Mean); }
  Tensor<B, 1, K> prod() const requires(is_numeric) { return reduce(ReduceOp::Prod); }
  Tensor<B, 1, K> max() const requires(is_numeric) { return reduce(ReduceOp::Max); }
  Tensor<B, 1, K> min() const requires(is_numeric) { return reduce(ReduceOp::Min); }
  /// [1] Bool: any / all elements true (for numeric kinds: non-zero).
  Tensor<B, 1, Bool> any() const { return Tensor<B, 1, Bool>(Ops::any(prim_)); }
  Tensor<B, 1, Bool> all() const { return Tensor<B, 1, Bool>(Ops::all(prim_)); }

  /// Reductions along `dim`, keeping it with size 1 (Burn's `sum_dim`): [2, 3] -> [2, 1]
  /// for dim 1.
  Tensor sum_dim(std::int64_t dim) const requires(is_numeric) {
    return reduce_dim(ReduceOp::Sum, dim);
  }
  Tensor mean_dim(std::int64_t dim) const requires(is_numeric) {
    return reduce_dim(ReduceOp::Mean, dim);
  }
  Tensor prod_dim(std::int64_t dim) const requires(is_numeric) {
    return reduce_dim(ReduceOp::Prod, dim);
  }
  Tensor max_dim(std::int64_t dim) const requires(is_numeric) {
    return reduce_dim(ReduceOp::Max, dim);
  }
  Tensor min_dim(std::int64_t dim) const requires(is_numeric) {
    return reduce_dim(ReduceOp::Min, dim);
  }
  Tensor<B, D, Bool> any_dim(std::int64_t dim) const {
    return Tensor<B, D, Bool>(Ops::any_dim(prim_, dim));
  }
  Tensor<B, D, Bool> all_dim(std::int64_t dim) const {
    return Tensor<B, D, Bool>(Ops::all_dim(prim_, dim));
  }
  /// Max (min) values and their indices along dim, dim kept; first index on ties.
  std::pair<Tensor, Tensor<B, D, Int>> max_dim_with_indices(std::int64_t dim) const
    requires(is_numeric)
  {
    auto [values, indices] = Ops::max_dim_with_indices(prim_, dim);
    return {Tensor(std::move(values)), Tensor<B, D, Int>(std::move(indices))};
  }
  std::pair<Tensor, Tensor<B, D, Int>> min_dim_with_indices(std::int64_t dim) const
    requires(is_numeric)
  {
    auto [values, indices] = Ops::min_dim_with_indices(prim_, dim);
    return {Tensor(std::move(values)), Tensor<B, D, Int>(std::move(indices))};
  }
  /// Index of the max (min) along dim, dim kept; first index on ties (torch.argmax with
  /// keepdim=True). Shape: [..., n, ...] -> [..., 1, ...], Int.
  Tensor<B, D, Int> argmax(std::int64_t dim) const requires(is_numeric) {
    return Tensor<B, D, Int>(Ops::argmax(prim_, dim));
  }
  Tensor<B, D, Int> argmin(std::int64_t dim) const requires(is_numeric) {
    return Tensor<B, D, Int>(Ops::argmin(prim_, dim));
  }
  /// Variance along dim (kept), divisor n - 1 when `unbiased` (Burn's `var`, torch.var),
  /// else n (Burn's `var_bias`).
  Tensor var(std::int64_t dim, bool unbiased = true) const requires(is_float) {
    return var_mean(dim, unbiased).first;
  }
  Tensor var_bias(std::int64_t dim) const requires(is_float) { return var(dim, false); }
  /// (variance, mean) along dim, both with dim kept.
  std::pair<Tensor, Tensor> var_mean(std::int64_t dim, bool unbiased = true) const
    requires(is_float)
  {
    auto [v, m] = Ops::var_mean(prim_, dim, unbiased);
    return {Tensor(std::move(v)), Tensor(std::move(m))};
  }

  /// Sorted along dim (stable; ascending unless `descending`).
  Tensor sort(std::int64_t dim, bool descending = false) const requires(is_numeric) {
    return sort_with_indices(dim, descending).first;
  }
  Tensor sort_descending(std::int64_t dim) const requires(is_numeric) { return sort(dim, true); }
  std::pair<Tensor, Tensor<B, D, Int>> sort_with_indices(std::int64_t dim,
                                                         bool descending = false) const
    requires(is_numeric)
  {
    auto [values, indices] = Ops::sort_with_indices(prim_, dim, descending);
    return {Tensor(std::move(values)), Tensor<B, D, Int>(std::move(indices))};
  }
  /// Indices that sort along dim (stable).
  Tensor<B, D, Int> argsort(std::int64_t dim, bool descending = false) const
    requires(is_numeric)
  {
    return sort_with_indices(dim, descending).second;
  }
  /// The k largest values along dim, largest first (torch.topk; stable on ties).
  /// Throws IndexError if dim is out of range or k is outside [0, size] (derived::topk_dim).
  Tensor topk(std::int64_t k, std::int64_t dim) const requires(is_numeric) {
    return topk_with_indices(k, dim).first;
  }
  /// (values, indices) of topk: the first k of sort_with_indices(dim, descending).
  std::pair<Tensor, Tensor<B, D, Int>> topk_with_indices(std::int64_t k, std::int64_t dim) const
    requires(is_numeric)
  {
    const std::int64_t d = derived::topk_dim(shape(), k, dim);
    auto [values, indices] = sort_with_indices(d, true);
    const std::vector<Slice> first_k = derived::piece_ranges(d, derived::Piece{0, k});
    return {values.slice(first_k), indices.slice(first_k)};
  }

  // ------------------------------------------------------------------ shape

  /// Same elements, new shape of rank D2; one dim may be -1 (inferred).
  /// Throws ShapeError if the element counts differ.
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(const std::array<std::int64_t, D2>& dims) const& {
    return Tensor<B, D2, K>(Ops::reshape(prim_, dims));
  }
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(const std::array<std::int64_t, D2>& dims) && {
    return Tensor<B, D2, K>(Ops::reshape(std::move(prim_), dims));
  }
  /// Same, from a Shape (a template so that a braced list `reshape<2>({3, 2})` picks the
  /// array overload instead of being ambiguous between the two).
  template <std::size_t D2, class S>
    requires std::is_same_v<S, Shape>
  Tensor<B, D2, K> reshape(const S& shape) const {
    check::rank("reshape", D2, shape);
    return Tensor<B, D2, K>(Ops::reshape(prim_, shape.dims()));
  }
  /// Merges dims start..=end into one; the result has rank D2 = D - (end - start)
  /// (torch.flatten). Shapes: [2, 3, 4].flatten<2>(1, 2) -> [2, 12].
  /// Throws: IndexError if a dim is out of range or start > end (derived::flatten_plan);
  ///         RankError if D2 does not match.
  template <std::size_t D2>
  Tensor<B, D2, K> flatten(std::int64_t start, std::int64_t end) const {
    const derived::FlattenPlan plan = derived::flatten_plan(shape(), start, end);
    if (plan.shape.rank() != D2) {
      throw_error<RankError>("flatten: flattening dims ", plan.start, "..=", plan.end, " of rank ",
                             D, " gives rank ", plan.shape.rank(), ", not the requested ", D2);
    }
    return Tensor<B, D2, K>(Ops::reshape(prim_, plan.shape.dims()));
  }
  /// Inserts a size-1 dim at `dim` (in the output, -1 = last): [2, 3] -> [2, 1, 3] for dim 1.
  /// Throws IndexError if dim is out of range (derived::unsqueeze_dim_shape).
  template <std::size_t D2>
  Tensor<B, D2, K> unsqueeze_dim(std::int64_t dim) const {
    static_assert(D2 == D + 1, "unsqueeze_dim: the output rank must be D + 1");
    const Shape out = derived::unsqueeze_dim_shape(shape(), dim);
    return Tensor<B, D2, K>(Ops::reshape(prim_, out.dims()));
  }
  /// Leading size-1 dims up to rank D2 (Burn's `unsqueeze`): [3] -> [1, 1, 3].
  template <std::size_t D2>
  Tensor<B, D2, K> unsqueeze() const {
    static_assert(D2 >= D, "unsqueeze: the output rank must be >= D");
    const Shape out = derived::unsqueeze_shape(shape(), D2);
    return Tensor<B, D2, K>(Ops::reshape(prim_, out.dims()));
  }
  /// Removes the size-1 dim `dim`. Throws IndexError if dim is out of range, ShapeError if
  /// that dim is not 1 (derived::squeeze_dim_shape).
  template <std::size_t D2>
  Tensor<B, D2, K> squeeze_dim(std::int64_t dim) const {
    static_assert(D2 + 1 == D, "squeeze_dim: the output rank must be D - 1");
    const Shape out = derived::squeeze_dim_shape(shape(), dim);
    return Tensor<B, D2, K>(Ops::reshape(prim_, out.dims()));
  }
  /// Burn's `squeeze(dim)`: same as squeeze_dim.
  template <std::size_t D2>
  Tensor<B, D2, K> squeeze(std::int64_t dim) const {
    return squeeze_dim<D2>(dim);
  }
  /// Exchanges two dims (copies into the new layout). Throws IndexError if a dim is out of
  /// range (derived::swap_dims_axes).
  Tensor swap_dims(std::int64_t dim1, std::int64_t dim2) const {
    return Tensor(Ops::permute(prim_, derived::swap_dims_axes(shape(), dim1, dim2)));
  }
  /// Swaps the last two dims (Burn's `transpose`). [..., m, n] -> [..., n, m].
  Tensor transpose() const requires(D >= 2) {
    return Tensor(Ops::permute(prim_, derived::transpose_axes(shape())));
  }
  /// Output dim i is input dim axes[i] (negative allowed). Throws IndexError unless axes is
  /// a permutation of 0..D-1 (derived::permute_axes).
  Tensor permute(const std::array<std::int64_t, D>& axes) const {
    return Tensor(Ops::permute(prim_, derived::permute_axes(shape(), axes)));
  }
  /// Broadcasts to `dims` of rank D2 >= D (a -1 keeps the dim; size-1 dims stretch; new
  /// dims lead). Throws ShapeError if a non-1 dim would change.
  template <std::size_t D2>
  Tensor<B, D2, K> expand(const std::array<std::int64_t, D2>& dims) const {
    static_assert(D2 >= D, "expand: the output rank must be >= D");
    return Tensor<B, D2, K>(Ops::expand(prim_, dims));
  }
  /// Repeats the tensor `times` along dim: [2, 3].repeat_dim(0, 2) -> [4, 3].
  Tensor repeat_dim(std::int64_t dim, std::int64_t times) const {
    return Tensor(Ops::repeat_dim(prim_, dim, times));
  }
  /// Repeats along every dim (torch.Tensor.repeat with D sizes): [2, 3].repeat({2, 1}) ->
  /// [4, 3]. Throws ValueError for a negative count, LimitError if the output would pass
  /// 2^31 - 1 elements (checked before the first step; derived::repeat_plan).
  Tensor repeat(const std::array<std::int64_t, D>& times) const {
    Tensor out = *this;
    for (const derived::RepeatStep step : derived::repeat_plan(shape(), times)) {
      out = out.repeat_dim(step.dim, step.times);
    }
    return out;
  }
  /// Reverses the order along each of `dims`. Throws IndexError for a dim out of range.
  Tensor flip(const std::vector<std::int64_t>& dims) const {
    return Tensor(Ops::flip(prim_, derived::flip_dims(shape(), dims)));
  }
  /// `length` elements of dim from `start` (torch.narrow). Throws IndexError if out of range
  /// (derived::narrow_ranges).
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
    return Tensor(Ops::slice(prim_, derived::narrow_ranges(shape(), dim, start, length)));
  }
  /// Splits into `chunks` pieces of size ceil(n / chunks) along dim, the last smaller
  /// (torch.chunk: may return fewer pieces). Throws ValueError if chunks < 1.
  std::vector<Tensor> chunk(std::int64_t chunks, std::int64_t dim) const {
    return pieces(derived::chunk_plan(shape(), chunks, dim));
  }
  /// Pieces of `split_size` along dim, the last smaller (torch.split). Throws ValueError if
  /// split_size < 1.
  std::vector<Tensor> split(std::int64_t split_size, std::int64_t dim) const {
    return pieces(derived::split_plan(shape(), split_size, dim));
  }
  /// Pieces with the given sizes along dim. Throws ValueError for a size outside [0, n],
  /// ShapeError unless they sum to n (derived::split_with_sizes_plan).
  std::vector<Tensor> split_with_sizes(const std::vector<std::int64_t>& sizes,
                                       std::int64_t dim) const {
    return pieces(derived::split_with_sizes_plan(shape(), sizes, dim));
  }

  // ------------------------------------------------------------------ joining, indexing

  /// Concatenates along dim (torch.cat). Throws ShapeError naming the first tensor whose
  /// shape differs outside dim; ValueError for an empty list.
  static Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim) {
    if (tensors.empty()) throw_error<ValueError>("cat: expected at least one tensor, got none");
    std::vector<Primitive> prims;
    prims.reserve(tensors.size());
    for (const auto& t : tensors) prims.push_back(t.prim_);
    return Tensor(Ops::cat(prims, check::dim("cat", dim, D)));
  }
  /// Stacks tensors of equal shape along a new dim (torch.stack); D2 = D + 1.
  /// Throws: ValueError for no tensors, ShapeError if shapes differ, IndexError if dim is
  ///         out of range (derived::stack_plan).
  template <std::size_t D2>
  static Tensor<B, D2, K> stack(const std::vector<Tensor>& tensors, std::int64_t dim) {
    static_assert(D2 == D + 1, "stack: the output rank must be D + 1");
    std::vector<Shape> shapes;
    shapes.reserve(tensors.size());
    for (const auto& t : tensors) shapes.push_back(t.shape());
    const derived::StackPlan plan = derived::stack_plan(shapes, dim);
    std::vector<Tensor<B, D2, K>> lifted;
    lifted.reserve(tensors.size());
    for (const auto& t : tensors) {
      lifted.push_back(Tensor<B, D2, K>(Ops::reshape(t.prim_, plan.unsqueezed.dims())));
    }
    return Tensor<B, D2, K>::cat(lifted, plan.dim);
  }

  /// Sub-tensor by ranges, one per leading dim (Burn's `slice` / `s![]`):
  ///   t.slice({{0, 1}, {0, 3}}), t.slice({Slice::all(), Slice::from(-2)}),
  ///   steps: Slice(1, 8, 3); negative steps walk backwards over [start, end).
  /// Throws: IndexError if a range lies outside its dim (Burn's rule; PyTorch would clamp),
  ///         naming the dim, the range and the size; RankError for more ranges than dims.
  Tensor slice(const std::vector<Slice>& ranges) const {
    return Tensor(Ops::slice(prim_, ranges));
  }
  /// Copy of self with the slice replaced by `values` (whose shape must equal the slice's).
  Tensor slice_assign(const std::vector<Slice>& ranges, const Tensor& values) const& {
    return Tensor(Ops::slice_assign(prim_, ranges, values.prim_));
  }
  Tensor slice_assign(const std::vector<Slice>& ranges, const Tensor& values) && {
    return Tensor(Ops::slice_assign(std::move(prim_), ranges, values.prim_));
  }
  /// Rows (entries along dim) at `indices` (torch.index_select). Shape: dim becomes
  /// indices' length. Throws IndexError for an index outside [-size, size).
  Tensor select(std::int64_t dim, const Tensor<B, 1, Int>& indices) const {
    return Tensor(Ops::select(prim_, dim, indices.primitive()));
  }
  /// Adds values[..., i, ...] into self[..., indices[i], ...] along dim (Burn's
  /// select_assign, torch.index_add); repeated indices accumulate.
  Tensor select_assign(std::int64_t dim, const Tensor<B, 1, Int>& indices,
                       const Tensor& values) const requires(is_numeric) {
    return Tensor(Ops::select_assign(prim_, dim, indices.primitive(), values.prim_));
  }
  /// out[i][j] = self[indices[i][j]][j] for dim 0 (torch.gather). indices has rank D and,
  /// outside dim, dims no larger than self's (PyTorch's rule). Shape: that of indices.
  /// Throws: IndexError for an index outside [0, size of dim) (no negative indices, as
  ///         torch); ShapeError if indices is larger than self outside dim.
  Tensor gather(std::int64_t dim, const Tensor<B, D, Int>& indices) const {
    return Tensor(Ops::gather(prim_, dim, indices.primitive()));
  }
  /// self[indices[i][j]][j] += values[i][j] for dim 0 (Burn's scatter, torch.scatter_add);
  /// repeated indices accumulate. indices: rank D, dims no larger than values' and, outside
  /// dim, than self's (PyTorch's rule; only the indices-shaped corner of values is read).
  /// Throws: IndexError for an index outside [0, size of dim); ShapeError on those sizes.
  Tensor scatter(std::int64_t dim, const Tensor<B, D, Int>& indices, const Tensor& values) const
    requires(is_numeric)
  {
    return Tensor(Ops::scatter(prim_, dim, indices.primitive(), values.prim_));
  }
  /// One-hot encoding along a new last dim: [n] -> [n, num_classes], same kind
  /// (Burn's `one_hot`). Throws IndexError for a value outside [0, num_classes); LimitError
  /// if the output would pass 2^31 - 1 elements (checked before any allocation).
  template <std::size_t D2 = D + 1>
  Tensor<B, D2, K> one_hot(std::int64_t num_classes) const requires(is_numeric) {
    static_assert(D2 == D + 1, "one_hot: the output rank must be D + 1");
    return Tensor<B, D2, K>(Ops::one_hot(prim_, num_classes));
  }

  /// Prints values nested by rank, then shape, device, backend, kind and dtype (Burn's
  /// Display). Precision follows the stream (`std::setprecision(2)` is Burn's `{:.2}`).
  friend std::ostream& operator<<(std::ostream& out, const Tensor& t) {
    std::string text;
    detail::append_tensor(text, t.to_data(), str_cat(t.device()), B::name(), K::name,
                          detail::stream_precision(out));
    return out << text;
  }
  /// str_cat's hook: the tensor as `std::cout << t` prints it with default precision.
  friend void append_to(std::string& out, const Tensor& t) {
    detail::append_tensor(out, t.to_data(), str_cat(t.device()), B::name(), K::name);
  }

 private:
  /// The pieces of a split plan, each a slice of this tensor.
  std::vector<Tensor> pieces(const derived::SplitPlan& plan) const {
    std::vector<Tensor> out;
    out.reserve(plan.pieces.size());
    for (const derived::Piece piece : plan.pieces) {
      out.push_back(Tensor(Ops::slice(prim_, derived::piece_ranges(plan.dim, piece))));
    }
    return out;
  }
  Tensor binary(BinaryOp op, Tensor rhs) {
    return Tensor(Ops::binary(op, std::move(prim_), std::move(rhs.prim_)));
  }
  template <class S>
  Tensor binary_scalar(BinaryOp op, S scalar, bool scalar_on_left) {
    return Tensor(Ops::binary_scalar(op, std::move(prim_), static_cast<double>(scalar),
                                     scalar_on_left));
  }
  Tensor<B, D, Bool> compare(CompareOp op, const Tensor& rhs) const {
    return Tensor<B, D, Bool>(Ops::compare(op, prim_, rhs.prim_));
  }
  Tensor<B, D, Bool> compare_elem(CompareOp op, double rhs) const {
    return Tensor<B, D, Bool>(Ops::compare_scalar(op, prim_, rhs));
  }
  Tensor<B, 1, K> reduce(ReduceOp op) const { return Tensor<B, 1, K>(Ops::reduce(op, prim_)); }
  Tensor reduce_dim(ReduceOp op, std::int64_t dim) const {
    return Tensor(Ops::reduce_dim(op, prim_, dim));
  }

  Primitive prim_;
};

#undef KILN_UNARY

/// Free-function forms used in Burn's docs: `zeros_like(a)`, `ones_like(a)`.
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> zeros_like(const Tensor<B, D, K>& t) {
  return t.zeros_like();
}
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> ones_like(const Tensor<B, D, K>& t) {
  return t.ones_like();
}

}  // namespace kiln
