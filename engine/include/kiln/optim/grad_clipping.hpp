#pragma once
/// Gradient clipping (Burn's `GradientClippingConfig` / `GradientClipping`) with PyTorch's
/// semantics: by value (torch.nn.utils.clip_grad_value_) or by the GLOBAL L2 norm over every
/// gradient (torch.nn.utils.clip_grad_norm_).
///
/// Difference from Burn: Burn's `GradientClipping::Norm` clips each parameter's gradient by
/// its own norm (burn-optim grad_clipping/base.rs, `clip_by_norm` per tensor). Kiln scales
/// all gradients of a step by one factor computed from their joint norm, as PyTorch does, so
/// the direction of the whole update is kept.
///
///   auto optim = SgdConfig().with_gradient_clipping(GradientClippingConfig::norm(1.0)).init<B>();
///   double total_norm = clip_grad_norm(grads_params, 1.0);  // or by hand, before step
#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>

#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/optim/grads.hpp"

namespace kiln::optim {

/// L2 norm of all the gradients together: sqrt(Σ over every element of every gradient of g²),
/// accumulated in double from per-tensor float32 sums of squares. 0 if `grads` is empty.
template <AutodiffBackend B>
double global_grad_norm(const GradientsParams<B>& grads) {
  using Ops = typename B::Inner::FloatOps;
  double sum_squares = 0.0;
  grads.for_each_primitive([&](ParamId, const auto& g) {
    auto squares = Ops::binary(BinaryOp::Mul, g, g);
    const auto sum = Ops::into_data(Ops::reduce(ReduceOp::Sum, squares)).template to_vec<float>();
    sum_squares += static_cast<double>(sum[0]);
  });
  return std::sqrt(sum_squares);
}

/// Scales every gradient by min(1, max_norm / (total_norm + 1e-6)) where total_norm is the
/// global L2 norm (torch.nn.utils.clip_grad_norm_ with norm_type 2 and error_if_nonfinite
/// False: a nan norm makes every gradient nan; an infinite one multiplies every gradient by
/// 0, so infinite elements become nan, as in PyTorch). Returns total_norm.
/// Throws: ValueError unless max_norm is finite and > 0.
template <AutodiffBackend B>
double clip_grad_norm(GradientsParams<B>& grads, double max_norm) {
  if (!(std::isfinite(max_norm) && max_norm > 0.0)) {
    throw ValueError(str_cat("clip_grad_norm: max_norm must be finite and > 0, got ", max_norm));
  }
  using Ops = typename B::Inner::FloatOps;
  const double total_norm = global_grad_norm(grads);
  const double coef = max_norm / (total_norm + 1e-6);
  // min(coef, 1) that keeps a nan coef, as torch.clamp(coef, max=1.0) does.
  const double clamped = (coef < 1.0 || std::isnan(coef)) ? coef : 1.0;
  if (clamped != 1.0) {
    grads.map_primitives([&](ParamId, auto g) {
      return Ops::binary_scalar(BinaryOp::Mul, std::move(g), clamped, false);
    });
  }
  return total_norm;
}

/// Clamps every gradient element to [-clip_value, clip_value]
/// (torch.nn.utils.clip_grad_value_; Burn's `GradientClipping::Value`). nan stays nan.
/// Throws: ValueError unless clip_value is finite and > 0.
template <AutodiffBackend B>
void clip_grad_value(GradientsParams<B>& grads, double clip_value) {
  if (!(std::isfinite(clip_value) && clip_value > 0.0)) {
    throw ValueError(
        str_cat("clip_grad_value: clip_value must be finite and > 0, got ", clip_value));
  }
  using Ops = typename B::Inner::FloatOps;
  grads.map_primitives(
      [&](ParamId, auto g) { return Ops::clamp(std::move(g), -clip_value, clip_value); });
}

/// A gradient clipping rule, applied by an optimizer to all the gradients of a step before
/// updating (Burn's `GradientClipping`).
class GradientClipping {
 public:
  enum class Kind { Value, Norm };

  /// Clamp each element to [-threshold, threshold].
  static GradientClipping value(double threshold) {
    return GradientClipping(Kind::Value, threshold);
  }
  /// Scale all gradients so that their global L2 norm is at most max_norm.
  static GradientClipping norm(double max_norm) { return GradientClipping(Kind::Norm, max_norm); }

  Kind kind() const noexcept { return kind_; }
  /// The threshold (Value) or max_norm (Norm).
  double threshold() const noexcept { return threshold_; }

  /// Clips `grads` in place. Returns the global L2 norm before clipping for Norm (as
  /// clip_grad_norm_), nan for Value.
  template <AutodiffBackend B>
  double clip(GradientsParams<B>& grads) const {
    if (kind_ == Kind::Norm) return clip_grad_norm(grads, threshold_);
    clip_grad_value(grads, threshold_);
    return std::nan("");
  }

 private:
  GradientClipping(Kind kind, double threshold) : kind_(kind), threshold_(threshold) {}
  Kind kind_;
  double threshold_;
};

/// Configuration of gradient clipping (Burn's enum `GradientClippingConfig { Value(f32),
/// Norm(f32) }`). JSON: `{"Value": 0.5}` or `{"Norm": 1.0}` (serde's form of that enum).
class GradientClippingConfig {
 public:
  using Kind = GradientClipping::Kind;

  /// Clip each gradient element to [-threshold, threshold] (Burn's `Value(threshold)`).
  static GradientClippingConfig value(double threshold) {
    return GradientClippingConfig(Kind::Value, threshold);
  }
  /// Clip by the global L2 norm of all gradients (Burn's `Norm(max_norm)`; global as
  /// PyTorch, see the top of this file).
  static GradientClippingConfig norm(double max_norm) {
    return GradientClippingConfig(Kind::Norm, max_norm);
  }

  Kind kind() const noexcept { return kind_; }
  double threshold() const noexcept { return threshold_; }

  /// Throws: ConfigError naming the variant unless the threshold is finite and > 0.
  GradientClipping init() const;

  /// `{"Value": threshold}` or `{"Norm": max_norm}`.
  config::Value to_value() const;
  /// Throws ConfigError unless `j` is an object with exactly one key, Value or Norm, whose
  /// value is a number.
  static GradientClippingConfig from_value(const config::Value& j);
  KILN_CONFIG_JSON_MEMBERS(GradientClippingConfig)

  friend bool operator==(const GradientClippingConfig&, const GradientClippingConfig&) = default;
  /// `GradientClippingConfig {"Norm":1.0}`.
  friend std::ostream& operator<<(std::ostream& os, const GradientClippingConfig& c) {
    return os << "GradientClippingConfig " << c.to_value().dump();
  }

 private:
  GradientClippingConfig(Kind kind, double threshold) : kind_(kind), threshold_(threshold) {}
  Kind kind_;
  double threshold_;
};

}  // namespace kiln::optim
