#pragma once
/// ErasedFloat<B>: a float tensor of backend B whose rank is a run-time value, for the
/// engine's own rank-generic code (optimizer rules, norms, losses). Each operation makes the
/// same backend call as the matching method of Tensor<B, D> (kiln/tensor/tensor.hpp): a
/// binary op of two tensors is `FloatOps::binary`, with a scalar `FloatOps::binary_scalar`
/// on a double, `sqrt()` is `FloatOps::unary(UnaryOp::Sqrt, ...)`, `mean_dim` is
/// `FloatOps::reduce_dim(ReduceOp::Mean, ...)`. So code written once on ErasedFloat gives
/// bit-for-bit what the same code written on Tensor<B, D> gives (and builds the same autodiff
/// graph), with one copy of its machine code for every rank instead of one per rank: the
/// typed functions stay as thin inline wrappers (`ErasedFloat(t)` ... `.typed<D>()`).
/// Not a public type: it does only the checks the backend ops do (shapes, dims), none of
/// the rank's.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "kiln/backend/backend.hpp"
#include "kiln/core/device.hpp"
#include "kiln/core/shape.hpp"
#include "kiln/core/tensor_data.hpp"
#include "kiln/tensor/tensor.hpp"

namespace kiln::detail {

template <Backend B>
class ErasedFloat {
 public:
  using Primitive = typename B::FloatTensor;
  using Ops = typename B::FloatOps;

  explicit ErasedFloat(Primitive primitive) : prim_(std::move(primitive)) {}
  /// The tensor's primitive (shared, not copied).
  template <std::size_t D>
  explicit ErasedFloat(const Tensor<B, D>& t) : prim_(t.primitive()) {}

  const Primitive& primitive() const& { return prim_; }
  Primitive into_primitive() && { return std::move(prim_); }
  /// As Tensor<B, D>. Throws RankError if the rank is not D.
  template <std::size_t D>
  Tensor<B, D> typed() const& {
    return Tensor<B, D>(prim_);
  }
  template <std::size_t D>
  Tensor<B, D> typed() && {
    return Tensor<B, D>(std::move(prim_));
  }

  Shape shape() const { return Ops::shape(prim_); }

  friend ErasedFloat operator+(ErasedFloat lhs, ErasedFloat rhs) {
    return lhs.binary(BinaryOp::Add, std::move(rhs));
  }
  friend ErasedFloat operator-(ErasedFloat lhs, ErasedFloat rhs) {
    return lhs.binary(BinaryOp::Sub, std::move(rhs));
  }
  friend ErasedFloat operator*(ErasedFloat lhs, ErasedFloat rhs) {
    return lhs.binary(BinaryOp::Mul, std::move(rhs));
  }
  friend ErasedFloat operator/(ErasedFloat lhs, ErasedFloat rhs) {
    return lhs.binary(BinaryOp::Div, std::move(rhs));
  }
  friend ErasedFloat operator+(ErasedFloat lhs, double rhs) {
    return lhs.binary_scalar(BinaryOp::Add, rhs, false);
  }
  friend ErasedFloat operator-(ErasedFloat lhs, double rhs) {
    return lhs.binary_scalar(BinaryOp::Sub, rhs, false);
  }
  friend ErasedFloat operator*(ErasedFloat lhs, double rhs) {
    return lhs.binary_scalar(BinaryOp::Mul, rhs, false);
  }
  friend ErasedFloat operator/(ErasedFloat lhs, double rhs) {
    return lhs.binary_scalar(BinaryOp::Div, rhs, false);
  }
  friend ErasedFloat operator+(double lhs, ErasedFloat rhs) {
    return rhs.binary_scalar(BinaryOp::Add, lhs, true);
  }
  friend ErasedFloat operator-(double lhs, ErasedFloat rhs) {
    return rhs.binary_scalar(BinaryOp::Sub, lhs, true);
  }
  friend ErasedFloat operator*(double lhs, ErasedFloat rhs) {
    return rhs.binary_scalar(BinaryOp::Mul, lhs, true);
  }
  friend ErasedFloat operator/(double lhs, ErasedFloat rhs) {
    return rhs.binary_scalar(BinaryOp::Div, lhs, true);
  }
  friend ErasedFloat operator-(ErasedFloat x) {
    return ErasedFloat(Ops::unary(UnaryOp::Neg, std::move(x.prim_)));
  }

  /// Tensor's unary ops of the op table (an rvalue lends its buffer).
  ErasedFloat unary(UnaryOp op) const& { return ErasedFloat(Ops::unary(op, prim_)); }
  ErasedFloat unary(UnaryOp op) && { return ErasedFloat(Ops::unary(op, std::move(prim_))); }
  ErasedFloat sqrt() const& { return unary(UnaryOp::Sqrt); }
  ErasedFloat sqrt() && { return std::move(*this).unary(UnaryOp::Sqrt); }
  /// Tensor::max_pair / min_pair.
  ErasedFloat max_pair(const ErasedFloat& rhs) const {
    return ErasedFloat(*this).binary(BinaryOp::Max, rhs);
  }
  ErasedFloat min_pair(const ErasedFloat& rhs) const {
    return ErasedFloat(*this).binary(BinaryOp::Min, rhs);
  }
  /// Tensor::clamp (lvalue form: Tensor(*this).clamp).
  ErasedFloat clamp(float min, float max) const {
    return ErasedFloat(Ops::clamp(prim_, static_cast<double>(min), static_cast<double>(max)));
  }
  ErasedFloat clamp_min(float min) const {
    return ErasedFloat(Ops::clamp(prim_, static_cast<double>(min), std::nullopt));
  }
  ErasedFloat clamp_max(float max) const {
    return ErasedFloat(Ops::clamp(prim_, std::nullopt, static_cast<double>(max)));
  }
  /// Tensor::mean_dim / sum_dim (dim kept).
  ErasedFloat mean_dim(std::int64_t dim) const {
    return ErasedFloat(Ops::reduce_dim(ReduceOp::Mean, prim_, dim));
  }
  ErasedFloat sum_dim(std::int64_t dim) const {
    return ErasedFloat(Ops::reduce_dim(ReduceOp::Sum, prim_, dim));
  }
  /// Tensor::var_mean: (variance, mean) along dim, kept.
  std::pair<ErasedFloat, ErasedFloat> var_mean(std::int64_t dim, bool unbiased) const {
    auto vm = Ops::var_mean(prim_, dim, unbiased);
    return {ErasedFloat(std::move(vm.first)), ErasedFloat(std::move(vm.second))};
  }
  /// Tensor::reshape (the new rank is dims' length).
  ErasedFloat reshape(std::span<const std::int64_t> dims) const {
    return ErasedFloat(Ops::reshape(prim_, dims));
  }
  /// Tensor::abs.
  ErasedFloat abs() const { return unary(UnaryOp::Abs); }
  /// Tensor::greater_elem / greater_equal_elem: the Bool primitive of the comparison.
  typename B::BoolTensor greater_elem(double rhs) const {
    return Ops::compare_scalar(CompareOp::Greater, prim_, rhs);
  }
  typename B::BoolTensor greater_equal_elem(double rhs) const {
    return Ops::compare_scalar(CompareOp::GreaterEqual, prim_, rhs);
  }
  /// Tensor::mask_where: `value` where mask is true, else this.
  ErasedFloat mask_where(const typename B::BoolTensor& mask, const ErasedFloat& value) const {
    return ErasedFloat(Ops::mask_where(prim_, mask, value.prim_));
  }
  /// activation::softplus.
  ErasedFloat softplus(double beta = 1.0, double threshold = 20.0) const& {
    return ErasedFloat(Ops::softplus(prim_, beta, threshold));
  }
  ErasedFloat softplus(double beta = 1.0, double threshold = 20.0) && {
    return ErasedFloat(Ops::softplus(std::move(prim_), beta, threshold));
  }
  /// Tensor::from_data of a Float tensor (any rank).
  static ErasedFloat from_data(const TensorData& data, const Device<B>& device) {
    return ErasedFloat(Ops::from_data(data, Float::dtype, device));
  }
  Device<B> device() const { return Ops::device(prim_); }
  /// Tensor::is_require_grad on an autodiff backend, false on others.
  bool is_require_grad() const {
    if constexpr (AutodiffBackend<B>) {
      return Ops::is_require_grad(prim_);
    } else {
      return false;
    }
  }
  /// Tensor::detach on an autodiff backend, the same tensor on others.
  ErasedFloat untracked() const {
    if constexpr (AutodiffBackend<B>) {
      return ErasedFloat(Ops::detach(prim_));
    } else {
      return *this;
    }
  }

 private:
  ErasedFloat binary(BinaryOp op, ErasedFloat rhs) {
    return ErasedFloat(Ops::binary(op, std::move(prim_), std::move(rhs.prim_)));
  }
  ErasedFloat binary_scalar(BinaryOp op, double scalar, bool scalar_on_left) {
    return ErasedFloat(Ops::binary_scalar(op, std::move(prim_), scalar, scalar_on_left));
  }

  Primitive prim_;
};

}  // namespace kiln::detail
