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
#include <string>
#include <string_view>
#include <vector>

#include "kiln/backend/device_reads.hpp"
#include "kiln/config/config.hpp"
#include "kiln/core/error.hpp"
#include "kiln/optim/grads.hpp"

namespace kiln::optim {

/// A list of gradients on backend I that are not keyed by parameter (the JS
/// kiln.optim.clipGradNorm on gradient tensors): the interface clip_grad_norm and
/// clip_grad_value share with GradientsParams (for_each_primitive / map_primitives).
template <Backend I>
struct GradientList {
  using Inner = I;
  std::vector<typename I::FloatTensor> grads;
  template <class F>
  void for_each_primitive(F&& f) const {
    for (std::size_t i = 0; i < grads.size(); ++i) f(i, grads[i]);
  }
  template <class F>
  void map_primitives(F&& f) {
    for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = f(i, std::move(grads[i]));
  }
};

/// Options of clip_grad_norm beyond max_norm (torch.nn.utils.clip_grad_norm_'s arguments).
struct ClipGradNormOptions {
  double norm_type = 2.0;           ///< p of the p-norm, > 0, or +inf (the max |g|)
  bool error_if_nonfinite = false;  ///< throw (and change nothing) on a nan/inf total norm
};

namespace detail {
/// Σ|g|^p of one gradient (p = 2: Σg², p = 1: Σ|g|), or max |g| for p = inf (nan if any
/// element is nan), as a double from a float32 reduction on I.
template <Backend I>
double grad_norm_part(const typename I::FloatTensor& g, double norm_type) {
  using Ops = typename I::FloatOps;
  if (Ops::shape(g).num_elements() == 0) return 0.0;
  const auto scalar = [](typename I::FloatTensor t) {
    return static_cast<double>(Ops::into_data(std::move(t)).template to_vec<float>()[0]);
  };
  if (norm_type == 2.0) return scalar(Ops::reduce(ReduceOp::Sum, Ops::binary(BinaryOp::Mul, g, g)));
  auto abs = Ops::unary(UnaryOp::Abs, g);
  if (norm_type == 1.0) return scalar(Ops::reduce(ReduceOp::Sum, abs));
  if (std::isinf(norm_type)) {
    // The sum of |g| is nan exactly when an element is (max may skip nan).
    if (std::isnan(scalar(Ops::reduce(ReduceOp::Sum, abs)))) return std::nan("");
    return scalar(Ops::reduce(ReduceOp::Max, abs));
  }
  return scalar(
      Ops::reduce(ReduceOp::Sum, Ops::binary_scalar(BinaryOp::Pow, std::move(abs), norm_type, false)));
}
}  // namespace detail

/// The p-norm of all the gradients together (torch.nn.utils.clip_grad_norm_'s total_norm):
/// (Σ over every element of every gradient of |g|^p)^(1/p), the max |g| for p = inf; per
/// tensor a float32 reduction, combined in double. 0 if there are no gradients. `Grads` is
/// GradientsParams<B> or GradientList<I>.
/// Throws: ValueError naming `op` unless norm_type is > 0 (finite or +inf); StateError on a
///         backend whose reads are asynchronous (Wgpu: grad_norm_on_device instead).
template <class Grads>
double grad_norm(const Grads& grads, double norm_type, std::string_view op = "grad_norm") {
  if (!(norm_type > 0.0) || std::isnan(norm_type)) {
    throw_error<ValueError>(op, ": norm_type must be > 0 or inf, got ", norm_type);
  }
  using I = typename Grads::Inner;
  if constexpr (kDeviceOnlyReads<I>) {
    throw_error<StateError>(op,
                            ": the total norm is read on the host, and this backend reads tensors "
                            "asynchronously: use ",
                            op == "clip_grad_norm" ? "clip_grad_norm" : "grad_norm",
                            "_on_device, which returns it as a tensor "
                            "(JS: await kiln.optim.clipGradNormAsync(...))");
  }
  const bool inf = std::isinf(norm_type);
  double total = 0.0;
  grads.for_each_primitive([&](auto, const auto& g) {
    const double part = detail::grad_norm_part<I>(g, norm_type);
    if (std::isnan(part) || std::isnan(total)) {
      total = std::nan("");
    } else {
      total = inf ? std::max(total, part) : total + part;
    }
  });
  if (inf || std::isnan(total)) return total;
  if (norm_type == 1.0) return total;
  if (norm_type == 2.0) return std::sqrt(total);
  return std::pow(total, 1.0 / norm_type);
}

/// L2 norm of all the gradients together: sqrt(Σ over every element of every gradient of g²),
/// accumulated in double from per-tensor float32 sums of squares. 0 if `grads` is empty.
template <AutodiffBackend B>
double global_grad_norm(const GradientsParams<B>& grads) {
  return grad_norm(grads, 2.0, "global_grad_norm");
}

/// Scales every gradient by min(1, max_norm / (total_norm + 1e-6)) where total_norm is
/// grad_norm(grads, norm_type), as torch.nn.utils.clip_grad_norm_: with error_if_nonfinite
/// false a nan norm makes every gradient nan and an infinite one multiplies every gradient
/// by 0 (infinite elements become nan), as in PyTorch. Returns total_norm. `Grads` is
/// GradientsParams<B> or GradientList<I>.
/// Throws: ValueError unless max_norm is finite and > 0, or norm_type > 0 (or inf);
///         NonFiniteError (nothing changed) when the total norm is nan or inf and
///         options.error_if_nonfinite is set; StateError (nothing changed) on a backend whose
///         reads are asynchronous (Wgpu: clip_grad_norm_on_device instead).
template <class Grads>
double clip_grad_norm(Grads& grads, double max_norm, ClipGradNormOptions options) {
  constexpr std::string_view op = "clip_grad_norm";
  if (!(std::isfinite(max_norm) && max_norm > 0.0)) {
    throw_error<ValueError>(op, ": max_norm must be finite and > 0, got ", max_norm);
  }
  using Ops = typename Grads::Inner::FloatOps;
  const double total_norm = grad_norm(grads, options.norm_type, op);
  if (options.error_if_nonfinite && !std::isfinite(total_norm)) {
    throw_error<NonFiniteError>(op, ": the total norm of order ", options.norm_type,
                                " of the gradients is ", total_norm,
                                " (error_if_nonfinite is set; the gradients are unchanged)");
  }
  const double coef = max_norm / (total_norm + 1e-6);
  // min(coef, 1) that keeps a nan coef, as torch.clamp(coef, max=1.0) does.
  const double clamped = (coef < 1.0 || std::isnan(coef)) ? coef : 1.0;
  if (clamped != 1.0) {
    grads.map_primitives([&](auto, auto g) {
      return Ops::binary_scalar(BinaryOp::Mul, std::move(g), clamped, false);
    });
  }
  return total_norm;
}

/// The p-norm of all the gradients together, as grad_norm, computed on the device without a
/// read (torch.nn.utils.get_total_norm, which returns a tensor too): a [1] float32 tensor of
/// I. Per tensor Σ|g|^p (max |g| for p = inf), combined in float32 where grad_norm combines
/// in double; 0 with no gradients; nan when an element is nan (p = inf too: the max
/// reduction propagates nan). What a backend whose reads are asynchronous (Wgpu) computes.
/// Throws: ValueError naming `op` unless norm_type is > 0 (finite or +inf).
template <class Grads>
typename Grads::Inner::FloatTensor grad_norm_on_device(const Grads& grads, double norm_type,
                                                       std::string_view op = "grad_norm") {
  if (!(norm_type > 0.0) || std::isnan(norm_type)) {
    throw_error<ValueError>(op, ": norm_type must be > 0 or inf, got ", norm_type);
  }
  using I = typename Grads::Inner;
  using Ops = typename I::FloatOps;
  const bool inf = std::isinf(norm_type);
  std::vector<typename I::FloatTensor> parts;
  grads.for_each_primitive([&](auto, const auto& g) {
    if (Ops::shape(g).num_elements() == 0) return;
    if (norm_type == 2.0) {
      parts.push_back(Ops::reduce(ReduceOp::Sum, Ops::binary(BinaryOp::Mul, g, g)));
      return;
    }
    auto abs = Ops::unary(UnaryOp::Abs, g);
    if (!inf && norm_type != 1.0) abs = Ops::binary_scalar(BinaryOp::Pow, std::move(abs), norm_type, false);
    parts.push_back(Ops::reduce(inf ? ReduceOp::Max : ReduceOp::Sum, std::move(abs)));
  });
  if (parts.empty()) return Ops::from_data(TensorData(Shape{1}, std::vector<float>{0.f}), DType::F32, {});
  auto all = parts.size() == 1 ? std::move(parts[0]) : Ops::cat(parts, 0);
  auto total = Ops::reduce(inf ? ReduceOp::Max : ReduceOp::Sum, std::move(all));
  if (inf || norm_type == 1.0) return total;
  if (norm_type == 2.0) return Ops::unary(UnaryOp::Sqrt, std::move(total));
  return Ops::binary_scalar(BinaryOp::Pow, std::move(total), 1.0 / norm_type, false);
}

/// clip_grad_norm computed and applied on the device, without a read: every gradient is
/// multiplied by min(1, max_norm / (total_norm + 1e-6)), a [1] tensor (a nan norm gives nan,
/// an infinite one 0, as clip_grad_norm and torch.nn.utils.clip_grad_norm_, which also
/// multiplies by the clamped coefficient without a read). Returns total_norm as a [1] float32
/// tensor (grad_norm_on_device). What GradientClipping::norm runs on a backend without
/// synchronous reads (Wgpu), and the JS kiln.optim.clipGradNormAsync, which reads the norm
/// before it replaces the gradients (its errorIfNonfinite).
/// Throws: ValueError unless max_norm is finite and > 0, or norm_type > 0 (or inf).
template <class Grads>
typename Grads::Inner::FloatTensor clip_grad_norm_on_device(Grads& grads, double max_norm,
                                                            double norm_type = 2.0) {
  if (!(std::isfinite(max_norm) && max_norm > 0.0)) {
    throw_error<ValueError>("clip_grad_norm: max_norm must be finite and > 0, got ", max_norm);
  }
  using Ops = typename Grads::Inner::FloatOps;
  auto norm = grad_norm_on_device(grads, norm_type, "clip_grad_norm");
  const auto coef = Ops::binary_scalar(BinaryOp::Div, Ops::binary_scalar(BinaryOp::Add, norm, 1e-6, false),
                                       max_norm, true);
  const auto scale = Ops::clamp(coef, std::nullopt, 1.0);  // keeps a nan coef (torch.clamp)
  grads.map_primitives([&](auto, auto g) { return Ops::binary(BinaryOp::Mul, std::move(g), scale); });
  return norm;
}

/// clip_grad_norm with the L2 norm and error_if_nonfinite false (the defaults of
/// torch.nn.utils.clip_grad_norm_).
template <AutodiffBackend B>
double clip_grad_norm(GradientsParams<B>& grads, double max_norm) {
  return clip_grad_norm(grads, max_norm, ClipGradNormOptions{});
}

/// Clamps every gradient element to [-clip_value, clip_value]
/// (torch.nn.utils.clip_grad_value_; Burn's `GradientClipping::Value`). nan stays nan.
/// `Grads` is GradientsParams<B> or GradientList<I>.
/// Throws: ValueError unless clip_value is finite and > 0.
template <class Grads>
void clip_grad_value(Grads& grads, double clip_value) {
  if (!(std::isfinite(clip_value) && clip_value > 0.0)) {
    throw_error<ValueError>("clip_grad_value: clip_value must be finite and > 0, got ", clip_value);
  }
  using Ops = typename Grads::Inner::FloatOps;
  grads.map_primitives(
      [&](auto, auto g) { return Ops::clamp(std::move(g), -clip_value, clip_value); });
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
  /// clip_grad_norm_), nan for Value and, on a backend whose reads are asynchronous (Wgpu),
  /// for Norm too: there the norm is computed and applied on the device, unread
  /// (clip_grad_norm_on_device).
  template <AutodiffBackend B>
  double clip(GradientsParams<B>& grads) const {
    if constexpr (kDeviceOnlyReads<typename B::Inner>) {
      if (kind_ == Kind::Norm) {
        clip_grad_norm_on_device(grads, threshold_);
        return std::nan("");
      }
    }
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
  friend void append_to(std::string& kiln_text, const GradientClippingConfig& c) {
    ::kiln::StrOut{kiln_text} << "GradientClippingConfig " << c.to_value().dump();
  }

 private:
  GradientClippingConfig(Kind kind, double threshold) : kind_(kind), threshold_(threshold) {}
  Kind kind_;
  double threshold_;
};

}  // namespace kiln::optim
