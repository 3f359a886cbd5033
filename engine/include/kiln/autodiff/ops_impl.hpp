#pragma once
/// Definitions of `AutodiffOps<B>`: the forward pass of each float op and its backward step.
/// Included by the translation unit that instantiates `Autodiff` over a backend
/// (engine/src/autodiff/autodiff_cpu.cpp for `Cpu`); user code includes autodiff.hpp only.
///
/// Every backward formula is PyTorch's (tools/autograd/derivatives.yaml and
/// torch/csrc/autograd/FunctionsManual.cpp, v1.13), evaluated op by op in float32, so that
/// nan and inf propagate as there (known exceptions: the remainder gradient w.r.t. the
/// divisor at a = ±inf is -inf here, nan in PyTorch; prod with exactly one zero gives the
/// other elements 0 even when a third element is inf or nan, where PyTorch gives nan). Each step receives the gradient of the op's
/// output (its shape) and adds, for each tracked input, a gradient of that input's shape.
#include <cmath>
#include <numbers>
#include <vector>

#include "kiln/autodiff/autodiff.hpp"
#include "kiln/tensor/check.hpp"

namespace kiln {
namespace autodiff::detail {

/// Shorthands over the inner backend's float ops for the backward formulas.
template <Backend B>
struct Math {
  using P = typename B::FloatTensor;
  using BP = typename B::BoolTensor;
  using O = typename B::FloatOps;
  using BO = typename B::BoolOps;

  static P bin(BinaryOp op, P a, P b) { return O::binary(op, std::move(a), std::move(b)); }
  static P add(P a, P b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
  static P sub(P a, P b) { return bin(BinaryOp::Sub, std::move(a), std::move(b)); }
  static P mul(P a, P b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
  static P div(P a, P b) { return bin(BinaryOp::Div, std::move(a), std::move(b)); }
  static P scal(BinaryOp op, P a, double s, bool left = false) {
    return O::binary_scalar(op, std::move(a), s, left);
  }
  static P mul_s(P a, double s) { return scal(BinaryOp::Mul, std::move(a), s); }
  static P add_s(P a, double s) { return scal(BinaryOp::Add, std::move(a), s); }
  static P un(UnaryOp op, P a) { return O::unary(op, std::move(a)); }
  static P neg(P a) { return un(UnaryOp::Neg, std::move(a)); }
  static P zeros(const Shape& shape, const P& like) {
    return O::full(shape, 0.0, DType::F32, O::device(like));
  }
  static BP cmp(CompareOp op, const P& a, const P& b) { return O::compare(op, a, b); }
  static BP cmp_s(CompareOp op, const P& a, double s) { return O::compare_scalar(op, a, s); }
  static BP bnot(BP m) { return BO::bool_not(std::move(m)); }
  static BP band(BP a, BP b) { return BO::bool_and(std::move(a), std::move(b)); }
  static BP bor(BP a, BP b) { return BO::bool_or(std::move(a), std::move(b)); }
  static P to_float(BP m) { return P(BO::cast(std::move(m), DType::F32)); }
  /// 0 where mask is true.
  static P zero_where(P g, const BP& mask) { return O::mask_fill(std::move(g), mask, 0.0); }
  /// value where mask is true, else x (torch.where(mask, value, x)).
  static P where(P x, const BP& mask, const P& value) {
    return O::mask_where(std::move(x), mask, value);
  }
  static P expand_to(const P& g, const Shape& shape) { return O::expand(g, shape.dims()); }
  /// trunc(x) = floor for x >= 0, ceil for x < 0.
  static P trunc(const P& x) {
    return where(un(UnaryOp::Floor, x), cmp_s(CompareOp::Lower, x, 0.0), un(UnaryOp::Ceil, x));
  }

  /// Sums a gradient of a broadcast result back to the operand's shape: over the leading
  /// dims the operand lacked and over the dims where it had size 1.
  static P sum_to(P g, const Shape& shape) {
    const Shape gs = O::shape(g);
    if (gs == shape) return g;
    const std::size_t r = gs.rank(), s = shape.rank();
    for (std::size_t i = 0; i < r; ++i) {
      const std::int64_t target = i < r - s ? 1 : shape[i - (r - s)];
      if (gs[i] != target) g = O::reduce_dim(ReduceOp::Sum, g, static_cast<std::int64_t>(i));
    }
    return O::reshape(std::move(g), shape.dims());
  }

  /// d(prod)/dx_i = product of the other elements, also when some are 0 (then only a lone
  /// zero gets a non-zero gradient), from `reduce` applied to x (whole or along a dim).
  template <class Reduce>
  static P prod_factor(const P& x, Reduce&& reduce) {
    const Shape xs = O::shape(x);
    BP zero = cmp_s(CompareOp::Equal, x, 0.0);
    P x1 = O::mask_fill(x, zero, 1.0);
    P p1 = reduce(ReduceOp::Prod, x1);                    // product of the non-zeros
    P count = reduce(ReduceOp::Sum, to_float(zero));      // number of zeros
    P no_zero = div(p1, x1);                              // p1 / x_i
    // With one zero, a non-zero element's product of the others includes that zero: 0.
    // (PyTorch's exclusive products give nan there when another element is inf or nan;
    // Kiln gives 0.)
    P one_zero = where(zeros(xs, x), zero, expand_to(p1, xs));
    one_zero = zero_where(std::move(one_zero), bnot(cmp_s(CompareOp::Equal, count, 1.0)));
    return where(std::move(one_zero), cmp_s(CompareOp::Equal, count, 0.0), no_zero);
  }

  /// A gradient routed to the positions `indices` selected along dim (max_dim, sort).
  static P scatter_to(const P& g, const Shape& xs, std::int64_t dim,
                      const typename B::IntTensor& indices) {
    return O::scatter(zeros(xs, g), dim, indices, g);
  }
};

/// Wraps an op's output with a node whose parents are the inputs' nodes.
template <Backend B, class Step>
AutodiffTensor<B> record(typename B::FloatTensor out,
                         std::vector<std::shared_ptr<Node<B>>> parents, Step&& step) {
  auto node = std::make_shared<Node<B>>(B::FloatOps::shape(out), std::move(parents),
                                        typename Node<B>::Step(std::forward<Step>(step)));
  return AutodiffTensor<B>(std::move(out), std::move(node));
}

}  // namespace autodiff::detail

#define KILN_AD_TEMPLATE template <Backend B>
#define KILN_AD AutodiffOps<B>

// ------------------------------------------------------------------ autodiff

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::set_require_grad(Tensor x, bool require) {
  if (!require) return Tensor(std::move(x.primitive));
  if (x.node) {
    x.node->retain_grad();  // a leaf keeps its gradient anyway
    return x;
  }
  const Shape s = shape(x);
  return Tensor(std::move(x.primitive), std::make_shared<NodeT>(s));
}

KILN_AD_TEMPLATE
autodiff::Gradients<B> KILN_AD::backward(const Tensor& root) {
  const Shape s = shape(root);
  if (s.num_elements() != 1) {
    throw ShapeError(str_cat("backward: expected a tensor with one element (a loss), got shape ",
                             s, " (", s.num_elements(), " elements); reduce it first, e.g. "
                             "with sum() or mean()"));
  }
  if (!root.node) {
    throw StateError(
        "backward: the tensor does not require gradients (no input of its computation was "
        "marked with require_grad())");
  }
  return autodiff::Engine<B>::backward(root.node,
                                       Inner::full(s, 1.0, DType::F32, device(root)));
}

KILN_AD_TEMPLATE
std::optional<typename B::FloatTensor> KILN_AD::grad(const Tensor& x, const Gradients& grads) {
  if (!x.node) return std::nullopt;
  return grads.get(x.node->id());
}

KILN_AD_TEMPLATE
std::optional<typename B::FloatTensor> KILN_AD::grad_remove(const Tensor& x, Gradients& grads) {
  if (!x.node) return std::nullopt;
  return grads.remove(x.node->id());
}

KILN_AD_TEMPLATE
void KILN_AD::grad_replace(const Tensor& x, Gradients& grads, Prim grad) {
  if (!x.node) {
    throw StateError("grad_replace: the tensor does not require gradients (call require_grad())");
  }
  if (!(Inner::shape(grad) == shape(x))) {
    throw ShapeError(str_cat("grad_replace: the gradient's shape ", Inner::shape(grad),
                             " differs from the tensor's ", shape(x)));
  }
  grads.insert(x.node->id(), std::move(grad));
}

// ------------------------------------------------------------------ element-wise

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::binary(BinaryOp op, Tensor lhs, Tensor rhs) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!lhs.node && !rhs.node) {
    return Tensor(Inner::binary(op, std::move(lhs.primitive), std::move(rhs.primitive)));
  }
  const Shape ls = shape(lhs), rs = shape(rhs);
  std::vector<std::shared_ptr<NodeT>> parents{lhs.node, rhs.node};
  const P& a = lhs.primitive;
  const P& b = rhs.primitive;
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      const bool sub = op == BinaryOp::Sub;
      P out = Inner::binary(op, std::move(lhs.primitive), std::move(rhs.primitive));
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [ls, rs, sub](P g, Sink& s) {
        if (s.needs(1)) s.add(1, M::sum_to(sub ? M::neg(g) : g, rs));
        if (s.needs(0)) s.add(0, M::sum_to(std::move(g), ls));
      });
    }
    case BinaryOp::Mul: {
      P out = Inner::binary(op, a, b);
      // Save only what the tracked inputs' gradients need.
      std::optional<P> sa, sb;
      if (rhs.node) sa = a;
      if (lhs.node) sb = b;
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [ls, rs, sa, sb](P g, Sink& s) {
        if (s.needs(0)) s.add(0, M::sum_to(M::mul(g, *sb), ls));
        if (s.needs(1)) s.add(1, M::sum_to(M::mul(std::move(g), *sa), rs));
      });
    }
    case BinaryOp::Div: {
      P out = Inner::binary(op, a, b);
      std::optional<P> sa;
      if (rhs.node) sa = a;
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [ls, rs, sa, b](P g, Sink& s) {
        // d/da = g / b; d/db = -g·((a / b) / b) (PyTorch's order: no overflow from b·b)
        if (s.needs(1)) {
          s.add(1, M::sum_to(M::mul(M::neg(g), M::div(M::div(*sa, b), b)), rs));
        }
        if (s.needs(0)) s.add(0, M::sum_to(M::div(std::move(g), b), ls));
      });
    }
    case BinaryOp::Pow: {
      P out = Inner::binary(op, a, b);
      // A copy for the step, made before `out` is moved into record(): function arguments
      // are evaluated in an unspecified order (clang moves `out` before building the
      // lambda, so capturing `out` itself saved an empty handle in the WASM build).
      const P y = out;
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [ls, rs, a, b, y](P g, Sink& s) {
        if (s.needs(1)) {
          // g·out·log(a), 0 where a == 0 and b >= 0 (pow_backward_exponent)
          P t = M::mul(y, M::un(UnaryOp::Log, a));
          t = M::zero_where(std::move(t), M::band(M::cmp_s(CompareOp::Equal, a, 0.0),
                                                  M::cmp_s(CompareOp::GreaterEqual, b, 0.0)));
          s.add(1, M::sum_to(M::mul(g, std::move(t)), rs));
        }
        if (s.needs(0)) {
          // g·b·a^(b-1), 0 where b == 0 (pow_backward_self)
          P t = M::mul(b, M::bin(BinaryOp::Pow, a, M::scal(BinaryOp::Sub, b, 1.0)));
          P ga = M::zero_where(M::mul(std::move(g), std::move(t)),
                               M::cmp_s(CompareOp::Equal, b, 0.0));
          s.add(0, M::sum_to(std::move(ga), ls));
        }
      });
    }
    case BinaryOp::Max:
    case BinaryOp::Min: {
      const bool is_max = op == BinaryOp::Max;
      P out = Inner::binary(op, a, b);
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [ls, rs, a, b, is_max](P g, Sink& s) {
        // The larger (smaller) input gets the gradient; ties split it in half (torch.maximum).
        P half = M::where(g, M::cmp(CompareOp::Equal, a, b), M::mul_s(g, 0.5));
        const CompareOp lose_a = is_max ? CompareOp::Lower : CompareOp::Greater;
        const CompareOp lose_b = is_max ? CompareOp::Greater : CompareOp::Lower;
        if (s.needs(1)) s.add(1, M::sum_to(M::zero_where(half, M::cmp(lose_b, a, b)), rs));
        if (s.needs(0)) {
          s.add(0, M::sum_to(M::zero_where(std::move(half), M::cmp(lose_a, a, b)), ls));
        }
      });
    }
    case BinaryOp::Rem:
    case BinaryOp::Fmod: {
      const bool floor = op == BinaryOp::Rem;
      P out = Inner::binary(op, a, b);
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [ls, rs, a, b, floor](P g, Sink& s) {
        // d/da = g; d/db = -g·floor(a/b) (remainder) or -g·trunc(a/b) (fmod)
        if (s.needs(1)) {
          P q = M::div(a, b);
          q = floor ? M::un(UnaryOp::Floor, std::move(q)) : M::trunc(q);
          s.add(1, M::sum_to(M::mul(M::neg(g), std::move(q)), rs));
        }
        if (s.needs(0)) s.add(0, M::sum_to(std::move(g), ls));
      });
    }
    case BinaryOp::DivTrunc:
      break;
  }
  // DivTrunc: piecewise constant, gradient 0 (torch.div with a rounding mode).
  P out = Inner::binary(op, std::move(lhs.primitive), std::move(rhs.primitive));
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [ls, rs](P g, Sink& s) {
    if (s.needs(0)) s.add(0, M::zeros(ls, g));
    if (s.needs(1)) s.add(1, M::zeros(rs, g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::binary_scalar(BinaryOp op, Tensor lhs, double scalar,
                                         bool scalar_on_left) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!lhs.node) {
    return Tensor(Inner::binary_scalar(op, std::move(lhs.primitive), scalar, scalar_on_left));
  }
  std::vector<std::shared_ptr<NodeT>> parents{lhs.node};
  const P x = lhs.primitive;
  const bool left = scalar_on_left;
  P out = Inner::binary_scalar(op, std::move(lhs.primitive), scalar, scalar_on_left);
  auto rec = [&](auto step) {
    return autodiff::detail::record<B>(std::move(out), std::move(parents), std::move(step));
  };
  switch (op) {
    case BinaryOp::Add:
      return rec([](P g, Sink& s) { s.add(0, std::move(g)); });
    case BinaryOp::Sub:
      return rec([left](P g, Sink& s) { s.add(0, left ? M::neg(std::move(g)) : std::move(g)); });
    case BinaryOp::Mul:
      return rec([scalar](P g, Sink& s) { s.add(0, M::mul_s(std::move(g), scalar)); });
    case BinaryOp::Div:
      if (!left) return rec([scalar](P g, Sink& s) { s.add(0, M::scal(BinaryOp::Div, std::move(g), scalar)); });
      // d(s/x)/dx = -s / x²
      return rec([scalar, x](P g, Sink& s) {
        s.add(0, M::div(M::mul_s(std::move(g), -scalar), M::mul(x, x)));
      });
    case BinaryOp::Pow:
      if (!left) {
        // d(x^s)/dx = s·x^(s-1); 0 for s == 0
        return rec([scalar, x](P g, Sink& s) {
          if (scalar == 0.0) {
            s.add(0, M::zeros(Inner::shape(x), x));
            return;
          }
          s.add(0, M::mul(std::move(g), M::mul_s(M::scal(BinaryOp::Pow, x, scalar - 1.0), scalar)));
        });
      }
      // d(s^x)/dx = s^x·log(s); 0 where s == 0 and x >= 0
      return rec([scalar, x, out_saved = P(out)](P g, Sink& s) {
        P t = M::mul_s(out_saved, std::log(scalar));
        if (scalar == 0.0) t = M::zero_where(std::move(t), M::cmp_s(CompareOp::GreaterEqual, x, 0.0));
        s.add(0, M::mul(std::move(g), std::move(t)));
      });
    case BinaryOp::Max:
    case BinaryOp::Min: {
      // Against a constant: full gradient where x wins, half on a tie, 0 where it loses.
      const CompareOp lose = op == BinaryOp::Max ? CompareOp::Lower : CompareOp::Greater;
      return rec([scalar, x, lose](P g, Sink& s) {
        P half = M::where(g, M::cmp_s(CompareOp::Equal, x, scalar), M::mul_s(g, 0.5));
        s.add(0, M::zero_where(std::move(half), M::cmp_s(lose, x, scalar)));
      });
    }
    case BinaryOp::Rem:
    case BinaryOp::Fmod: {
      if (!left) return rec([](P g, Sink& s) { s.add(0, std::move(g)); });
      // d(s mod x)/dx = -floor(s/x) (remainder) or -trunc(s/x) (fmod)
      const bool floor = op == BinaryOp::Rem;
      return rec([scalar, x, floor](P g, Sink& s) {
        P q = M::scal(BinaryOp::Div, x, scalar, true);
        q = floor ? M::un(UnaryOp::Floor, std::move(q)) : M::trunc(q);
        s.add(0, M::mul(M::neg(std::move(g)), std::move(q)));
      });
    }
    case BinaryOp::DivTrunc:
      break;
  }
  return rec([](P g, Sink& s) { s.add(0, M::zeros(Inner::shape(g), g)); });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::unary(UnaryOp op, Tensor x_in) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x_in.node) return Tensor(Inner::unary(op, std::move(x_in.primitive)));
  std::vector<std::shared_ptr<NodeT>> parents{x_in.node};
  const P x = x_in.primitive;
  P out = Inner::unary(op, std::move(x_in.primitive));
  auto rec = [&](auto step) {
    return autodiff::detail::record<B>(std::move(out), std::move(parents), std::move(step));
  };
  const P y = out;  // saved by the steps that need the output
  switch (op) {
    case UnaryOp::Neg:
      return rec([](P g, Sink& s) { s.add(0, M::neg(std::move(g))); });
    case UnaryOp::Abs:  // sign(x): 0 at 0, and 0 at nan (PyTorch's sgn)
      return rec([x](P g, Sink& s) {
        P sign = M::zero_where(M::un(UnaryOp::Sign, x), Inner::is_nan(x));
        s.add(0, M::mul(std::move(g), std::move(sign)));
      });
    case UnaryOp::Exp:
      return rec([y](P g, Sink& s) { s.add(0, M::mul(std::move(g), y)); });
    case UnaryOp::Log:
      return rec([x](P g, Sink& s) { s.add(0, M::div(std::move(g), x)); });
    case UnaryOp::Log1p:
      return rec([x](P g, Sink& s) { s.add(0, M::div(std::move(g), M::add_s(x, 1.0))); });
    case UnaryOp::Sqrt:  // g / (2·sqrt(x)): inf at 0
      return rec([y](P g, Sink& s) { s.add(0, M::div(std::move(g), M::mul_s(y, 2.0))); });
    case UnaryOp::Sin:
      return rec([x](P g, Sink& s) { s.add(0, M::mul(std::move(g), M::un(UnaryOp::Cos, x))); });
    case UnaryOp::Cos:
      return rec([x](P g, Sink& s) {
        s.add(0, M::mul(M::neg(std::move(g)), M::un(UnaryOp::Sin, x)));
      });
    case UnaryOp::Tanh:  // 1 - y²
      return rec([y](P g, Sink& s) {
        s.add(0, M::mul(std::move(g), M::scal(BinaryOp::Sub, M::mul(y, y), 1.0, true)));
      });
    case UnaryOp::Recip:  // -y²
      return rec([y](P g, Sink& s) { s.add(0, M::mul(M::neg(std::move(g)), M::mul(y, y))); });
    case UnaryOp::Erf:  // 2/sqrt(pi)·exp(-x²)
      return rec([x](P g, Sink& s) {
        P t = M::un(UnaryOp::Exp, M::neg(M::mul(x, x)));
        s.add(0, M::mul(std::move(g), M::mul_s(std::move(t), 2.0 / std::sqrt(std::numbers::pi))));
      });
    case UnaryOp::Sigmoid:  // y·(1 - y)
      return rec([y](P g, Sink& s) {
        s.add(0, M::mul(std::move(g), M::mul(y, M::scal(BinaryOp::Sub, y, 1.0, true))));
      });
    case UnaryOp::Relu:  // 0 where y <= 0 (threshold_backward)
      return rec([y](P g, Sink& s) {
        s.add(0, M::zero_where(std::move(g), M::cmp_s(CompareOp::LowerEqual, y, 0.0)));
      });
    case UnaryOp::Gelu:  // Φ(x) + x·φ(x)
      return rec([x](P g, Sink& s) {
        const double alpha = std::numbers::sqrt2 / 2.0;                       // 1/sqrt(2)
        const double beta = 2.0 / std::sqrt(std::numbers::pi) * alpha * 0.5;  // 1/sqrt(2π)
        P cdf = M::mul_s(M::add_s(M::un(UnaryOp::Erf, M::mul_s(x, alpha)), 1.0), 0.5);
        P pdf = M::mul_s(M::un(UnaryOp::Exp, M::mul_s(M::mul(x, x), -0.5)), beta);
        s.add(0, M::mul(std::move(g), M::add(std::move(cdf), M::mul(x, std::move(pdf)))));
      });
    case UnaryOp::GeluTanh:
      return rec([x](P g, Sink& s) {
        const double beta = std::numbers::sqrt2 * (2.0 / std::sqrt(std::numbers::pi)) * 0.5;
        const double kappa = 0.044715;
        P x_sq = M::mul(x, x);
        P inner = M::mul_s(M::add(x, M::mul_s(M::mul(x_sq, x), kappa)), beta);
        P t = M::un(UnaryOp::Tanh, std::move(inner));
        P left_derivative = M::mul_s(M::add_s(t, 1.0), 0.5);
        P one_minus_t2 = M::scal(BinaryOp::Sub, M::mul(t, t), 1.0, true);
        P inner_derivative = M::mul_s(M::add_s(M::mul_s(x_sq, 3.0 * kappa), 1.0), beta);
        P right_derivative =
            M::mul(M::mul(M::mul_s(x, 0.5), std::move(one_minus_t2)), std::move(inner_derivative));
        s.add(0, M::mul(std::move(g), M::add(std::move(left_derivative), std::move(right_derivative))));
      });
    case UnaryOp::Silu:  // σ(x)·(1 + x·(1 - σ(x)))
      return rec([x](P g, Sink& s) {
        P sig = M::un(UnaryOp::Sigmoid, x);
        P t = M::add_s(M::mul(x, M::scal(BinaryOp::Sub, sig, 1.0, true)), 1.0);
        s.add(0, M::mul(std::move(g), M::mul(std::move(sig), std::move(t))));
      });
    case UnaryOp::Sign:
    case UnaryOp::Ceil:
    case UnaryOp::Floor:
    case UnaryOp::Round:
      break;
  }
  // Piecewise constant: gradient 0.
  return rec([](P g, Sink& s) { s.add(0, M::zeros(Inner::shape(g), g)); });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::clamp(Tensor x_in, std::optional<double> min,
                                 std::optional<double> max) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x_in.node) return Tensor(Inner::clamp(std::move(x_in.primitive), min, max));
  std::vector<std::shared_ptr<NodeT>> parents{x_in.node};
  const P x = x_in.primitive;
  P out = Inner::clamp(std::move(x_in.primitive), min, max);
  // The gradient passes where min <= x <= max (inclusive, torch.clamp); nan gets 0.
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [x, min, max](P g, Sink& s) {
    std::optional<typename B::BoolTensor> inside;
    if (min) inside = M::cmp_s(CompareOp::GreaterEqual, x, *min);
    if (max) {
      auto below = M::cmp_s(CompareOp::LowerEqual, x, *max);
      inside = inside ? M::band(std::move(*inside), std::move(below)) : std::move(below);
    }
    if (!inside) {
      s.add(0, std::move(g));
      return;
    }
    s.add(0, M::zero_where(std::move(g), M::bnot(std::move(*inside))));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::leaky_relu(Tensor x_in, double negative_slope) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x_in.node) return Tensor(Inner::leaky_relu(std::move(x_in.primitive), negative_slope));
  std::vector<std::shared_ptr<NodeT>> parents{x_in.node};
  const P x = x_in.primitive;
  P out = Inner::leaky_relu(std::move(x_in.primitive), negative_slope);
  // g where x > 0, else negative_slope·g (so negative_slope·g at 0, as PyTorch).
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [x, negative_slope](P g, Sink& s) {
    P scaled = M::mul_s(g, negative_slope);
    s.add(0, M::where(std::move(scaled), M::cmp_s(CompareOp::Greater, x, 0.0), g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::softplus(Tensor x_in, double beta, double threshold) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x_in.node) return Tensor(Inner::softplus(std::move(x_in.primitive), beta, threshold));
  std::vector<std::shared_ptr<NodeT>> parents{x_in.node};
  const P x = x_in.primitive;
  P out = Inner::softplus(std::move(x_in.primitive), beta, threshold);
  // g·sigmoid(beta·x), and g where beta·x > threshold (the linear region).
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [x, beta, threshold](P g, Sink& s) {
    P bx = M::mul_s(x, beta);
    auto linear = M::cmp_s(CompareOp::Greater, bx, threshold);
    P scaled = M::mul(g, M::un(UnaryOp::Sigmoid, std::move(bx)));
    s.add(0, M::where(std::move(scaled), linear, g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::mask_where(Tensor x, const BoolPrim& mask, const Tensor& value) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x.node && !value.node) {
    return Tensor(Inner::mask_where(std::move(x.primitive), mask, value.primitive));
  }
  const Shape xs = shape(x), vs = shape(value);
  std::vector<std::shared_ptr<NodeT>> parents{x.node, value.node};
  P out = Inner::mask_where(std::move(x.primitive), mask, value.primitive);
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [xs, vs, mask](P g, Sink& s) {
    if (s.needs(1)) s.add(1, M::sum_to(M::zero_where(g, M::bnot(mask)), vs));
    if (s.needs(0)) s.add(0, M::sum_to(M::zero_where(std::move(g), mask), xs));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::mask_fill(Tensor x, const BoolPrim& mask, double value) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x.node) return Tensor(Inner::mask_fill(std::move(x.primitive), mask, value));
  const Shape xs = shape(x);
  std::vector<std::shared_ptr<NodeT>> parents{x.node};
  P out = Inner::mask_fill(std::move(x.primitive), mask, value);
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [xs, mask](P g, Sink& s) {
    s.add(0, M::sum_to(M::zero_where(std::move(g), mask), xs));
  });
}

// ------------------------------------------------------------------ softmax, matmul

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::softmax(Tensor x, std::int64_t dim) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x.node) return Tensor(Inner::softmax(std::move(x.primitive), dim));
  std::vector<std::shared_ptr<NodeT>> parents{x.node};
  P out = Inner::softmax(std::move(x.primitive), dim);
  const std::int64_t d = check::dim("softmax", dim, Inner::shape(out).rank());
  // y·(g - sum(g·y, dim))
  return autodiff::detail::record<B>(P(out), std::move(parents), [y = out, d](P g, Sink& s) {
    P gy_sum = Inner::reduce_dim(ReduceOp::Sum, M::mul(g, y), d);
    s.add(0, M::mul(y, M::sub(std::move(g), std::move(gy_sum))));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::log_softmax(Tensor x, std::int64_t dim) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x.node) return Tensor(Inner::log_softmax(std::move(x.primitive), dim));
  std::vector<std::shared_ptr<NodeT>> parents{x.node};
  P out = Inner::log_softmax(std::move(x.primitive), dim);
  const std::int64_t d = check::dim("log_softmax", dim, Inner::shape(out).rank());
  // g - exp(y)·sum(g, dim)
  return autodiff::detail::record<B>(P(out), std::move(parents), [y = out, d](P g, Sink& s) {
    P g_sum = Inner::reduce_dim(ReduceOp::Sum, g, d);
    s.add(0, M::sub(std::move(g), M::mul(M::un(UnaryOp::Exp, y), std::move(g_sum))));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::matmul(const Tensor& lhs, const Tensor& rhs) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  P out = Inner::matmul(lhs.primitive, rhs.primitive);
  if (!lhs.node && !rhs.node) return Tensor(std::move(out));
  const Shape ls = shape(lhs), rs = shape(rhs);
  std::optional<P> a, b;
  if (rhs.node) a = lhs.primitive;
  if (lhs.node) b = rhs.primitive;
  // dA = dC·Bᵀ, dB = Aᵀ·dC (no transposed copies), summed over broadcast batch dims.
  return autodiff::detail::record<B>(std::move(out), {lhs.node, rhs.node},
                                     [ls, rs, a, b](P g, Sink& s) {
    if (s.needs(0)) s.add(0, M::sum_to(Inner::matmul_transposed(g, *b, false, true), ls));
    if (s.needs(1)) s.add(1, M::sum_to(Inner::matmul_transposed(*a, g, true, false), rs));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::matmul_transposed(const Tensor& lhs, const Tensor& rhs,
                                             bool transpose_lhs, bool transpose_rhs) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  const bool ta = transpose_lhs, tb = transpose_rhs;
  P out = Inner::matmul_transposed(lhs.primitive, rhs.primitive, ta, tb);
  if (!lhs.node && !rhs.node) return Tensor(std::move(out));
  const Shape ls = shape(lhs), rs = shape(rhs);
  std::optional<P> a, b;
  if (rhs.node) a = lhs.primitive;
  if (lhs.node) b = rhs.primitive;
  // C = op(A)·op(B), G = dC. d op(A) = G·op(B)ᵀ and d op(B) = op(A)ᵀ·G; an operand stored
  // transposed receives the transpose of that: dA = op(B)·Gᵀ when ta, dB = Gᵀ·op(A) when tb.
  // Each is one matmul_transposed call (no copies), summed over broadcast batch dims.
  return autodiff::detail::record<B>(std::move(out), {lhs.node, rhs.node},
                                     [ls, rs, a, b, ta, tb](P g, Sink& s) {
    if (s.needs(0)) {
      P da = ta ? Inner::matmul_transposed(*b, g, tb, true)
                : Inner::matmul_transposed(g, *b, false, !tb);
      s.add(0, M::sum_to(std::move(da), ls));
    }
    if (s.needs(1)) {
      P db = tb ? Inner::matmul_transposed(g, *a, true, ta)
                : Inner::matmul_transposed(*a, g, !ta, false);
      s.add(1, M::sum_to(std::move(db), rs));
    }
  });
}

// ------------------------------------------------------------------ reductions

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::reduce(ReduceOp op, const Tensor& x) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  P out = Inner::reduce(op, x.primitive);
  if (!x.node || op == ReduceOp::Any || op == ReduceOp::All) return Tensor(std::move(out));
  const Shape xs = shape(x);
  std::vector<std::shared_ptr<NodeT>> parents{x.node};
  switch (op) {
    case ReduceOp::Sum:
      return autodiff::detail::record<B>(std::move(out), std::move(parents), [xs](P g, Sink& s) {
        s.add(0, M::expand_to(g, xs));
      });
    case ReduceOp::Mean: {
      const double n = static_cast<double>(xs.num_elements());
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [xs, n](P g, Sink& s) {
        s.add(0, M::expand_to(M::scal(BinaryOp::Div, std::move(g), n), xs));
      });
    }
    case ReduceOp::Prod:
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [xv = x.primitive](P g, Sink& s) {
        P f = M::prod_factor(xv, [](ReduceOp r, const P& t) { return Inner::reduce(r, t); });
        s.add(0, M::mul(std::move(f), std::move(g)));
      });
    default: {
      // Max / Min over everything: split evenly among the elements equal to the result
      // (torch's evenly_distribute_backward; a nan result selects the nan elements).
      P saved_out = out;
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [xv = x.primitive, y = std::move(saved_out)](P g, Sink& s) {
        auto mask = M::bor(M::cmp(CompareOp::Equal, xv, y),
                           M::band(Inner::is_nan(xv), Inner::is_nan(y)));
        P count = Inner::reduce(ReduceOp::Sum, M::to_float(mask));
        // masked_fill, not a product with the mask: an inf or nan upstream gradient must not
        // reach the unselected elements as inf·0 = nan.
        P spread = M::expand_to(M::div(std::move(g), std::move(count)), Inner::shape(xv));
        s.add(0, M::zero_where(std::move(spread), M::bnot(std::move(mask))));
      });
    }
  }
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::reduce_dim(ReduceOp op, const Tensor& x, std::int64_t dim) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (x.node && (op == ReduceOp::Max || op == ReduceOp::Min)) {
    // max_dim / min_dim route the gradient to the selected index (torch.max(dim)).
    return op == ReduceOp::Max ? max_dim_with_indices(x, dim).first
                               : min_dim_with_indices(x, dim).first;
  }
  P out = Inner::reduce_dim(op, x.primitive, dim);
  if (!x.node || op == ReduceOp::Any || op == ReduceOp::All) return Tensor(std::move(out));
  const Shape xs = shape(x);
  const std::int64_t d = check::dim("reduce_dim", dim, xs.rank());
  std::vector<std::shared_ptr<NodeT>> parents{x.node};
  switch (op) {
    case ReduceOp::Sum:
      return autodiff::detail::record<B>(std::move(out), std::move(parents), [xs](P g, Sink& s) {
        s.add(0, M::expand_to(g, xs));
      });
    case ReduceOp::Mean: {
      const double n = static_cast<double>(xs[static_cast<std::size_t>(d)]);
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [xs, n](P g, Sink& s) {
        s.add(0, M::expand_to(M::scal(BinaryOp::Div, std::move(g), n), xs));
      });
    }
    default:  // Prod
      return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                         [xv = x.primitive, d](P g, Sink& s) {
        P f = M::prod_factor(xv, [d](ReduceOp r, const P& t) { return Inner::reduce_dim(r, t, d); });
        s.add(0, M::mul(std::move(f), std::move(g)));
      });
  }
}

namespace autodiff::detail {
/// Values whose gradient goes back to the positions `indices` along dim of x.
template <Backend B>
AutodiffTensor<B> record_indexed(typename B::FloatTensor values,
                                 const AutodiffTensor<B>& x, std::int64_t dim,
                                 const typename B::IntTensor& indices) {
  using P = typename B::FloatTensor;
  const Shape xs = B::FloatOps::shape(x.primitive);
  const std::int64_t d = check::dim("max_dim", dim, xs.rank());
  return record<B>(std::move(values), {x.node}, [xs, d, indices](P g, GradSink<B>& s) {
    s.add(0, Math<B>::scatter_to(g, xs, d, indices));
  });
}
}  // namespace autodiff::detail

KILN_AD_TEMPLATE
std::pair<AutodiffTensor<B>, typename B::IntTensor> KILN_AD::max_dim_with_indices(
    const Tensor& x, std::int64_t dim) {
  auto [values, indices] = Inner::max_dim_with_indices(x.primitive, dim);
  if (!x.node) return {Tensor(std::move(values)), std::move(indices)};
  return {autodiff::detail::record_indexed<B>(std::move(values), x, dim, indices),
          std::move(indices)};
}

KILN_AD_TEMPLATE
std::pair<AutodiffTensor<B>, typename B::IntTensor> KILN_AD::min_dim_with_indices(
    const Tensor& x, std::int64_t dim) {
  auto [values, indices] = Inner::min_dim_with_indices(x.primitive, dim);
  if (!x.node) return {Tensor(std::move(values)), std::move(indices)};
  return {autodiff::detail::record_indexed<B>(std::move(values), x, dim, indices),
          std::move(indices)};
}

KILN_AD_TEMPLATE
std::pair<AutodiffTensor<B>, typename B::IntTensor> KILN_AD::sort_with_indices(
    const Tensor& x, std::int64_t dim, bool descending) {
  auto [values, indices] = Inner::sort_with_indices(x.primitive, dim, descending);
  if (!x.node) return {Tensor(std::move(values)), std::move(indices)};
  return {autodiff::detail::record_indexed<B>(std::move(values), x, dim, indices),
          std::move(indices)};
}

KILN_AD_TEMPLATE
std::pair<AutodiffTensor<B>, AutodiffTensor<B>> KILN_AD::var_mean(const Tensor& x,
                                                                 std::int64_t dim,
                                                                 bool unbiased) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  auto [var, mean] = Inner::var_mean(x.primitive, dim, unbiased);
  if (!x.node) return {Tensor(std::move(var)), Tensor(std::move(mean))};
  const Shape xs = shape(x);
  const std::int64_t d = check::dim("var_mean", dim, xs.rank());
  const double n = static_cast<double>(xs[static_cast<std::size_t>(d)]);
  // d var / dx = 2·(x - mean) / (n - correction); d mean / dx = 1 / n.
  const double factor = 2.0 / (n - (unbiased ? 1.0 : 0.0));
  Tensor var_t = autodiff::detail::record<B>(std::move(var), {x.node},
                                             [xv = x.primitive, m = mean, factor](P g, Sink& s) {
    s.add(0, M::mul(M::mul_s(std::move(g), factor), M::sub(xv, m)));
  });
  Tensor mean_t = autodiff::detail::record<B>(std::move(mean), {x.node}, [xs, n](P g, Sink& s) {
    s.add(0, M::expand_to(M::scal(BinaryOp::Div, std::move(g), n), xs));
  });
  return {std::move(var_t), std::move(mean_t)};
}

// ------------------------------------------------------------------ shape and indexing

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::reshape(Tensor x, std::span<const std::int64_t> dims) {
  using Sink = autodiff::GradSink<B>;
  if (!x.node) return Tensor(Inner::reshape(std::move(x.primitive), dims));
  const Shape xs = shape(x);
  P out = Inner::reshape(std::move(x.primitive), dims);
  return autodiff::detail::record<B>(std::move(out), {x.node}, [xs](P g, Sink& s) {
    s.add(0, Inner::reshape(std::move(g), xs.dims()));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::permute(const Tensor& x, std::span<const std::int64_t> axes) {
  using Sink = autodiff::GradSink<B>;
  P out = Inner::permute(x.primitive, axes);
  if (!x.node) return Tensor(std::move(out));
  std::vector<std::int64_t> inverse(axes.size());
  for (std::size_t i = 0; i < axes.size(); ++i) {
    inverse[static_cast<std::size_t>(axes[i])] = static_cast<std::int64_t>(i);
  }
  return autodiff::detail::record<B>(std::move(out), {x.node}, [inverse](P g, Sink& s) {
    s.add(0, Inner::permute(g, inverse));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::expand(const Tensor& x, std::span<const std::int64_t> dims) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  P out = Inner::expand(x.primitive, dims);
  if (!x.node) return Tensor(std::move(out));
  const Shape xs = shape(x);
  return autodiff::detail::record<B>(std::move(out), {x.node}, [xs](P g, Sink& s) {
    s.add(0, M::sum_to(std::move(g), xs));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::repeat_dim(const Tensor& x, std::int64_t dim, std::int64_t times) {
  using Sink = autodiff::GradSink<B>;
  P out = Inner::repeat_dim(x.primitive, dim, times);
  if (!x.node) return Tensor(std::move(out));
  const Shape xs = shape(x);
  const auto d = static_cast<std::size_t>(check::dim("repeat_dim", dim, xs.rank()));
  std::int64_t pre = 1, post = 1;
  for (std::size_t i = 0; i < d; ++i) pre *= xs[i];
  for (std::size_t i = d + 1; i < xs.rank(); ++i) post *= xs[i];
  // The output holds `times` copies of x along dim: [pre, times, n·post], summed over times.
  const std::array<std::int64_t, 3> split{pre, times, xs[d] * post};
  return autodiff::detail::record<B>(std::move(out), {x.node}, [xs, split](P g, Sink& s) {
    P t = Inner::reduce_dim(ReduceOp::Sum, Inner::reshape(std::move(g), split), 1);
    s.add(0, Inner::reshape(std::move(t), xs.dims()));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::flip(const Tensor& x, std::span<const std::int64_t> dims) {
  using Sink = autodiff::GradSink<B>;
  P out = Inner::flip(x.primitive, dims);
  if (!x.node) return Tensor(std::move(out));
  std::vector<std::int64_t> flipped(dims.begin(), dims.end());
  return autodiff::detail::record<B>(std::move(out), {x.node}, [flipped](P g, Sink& s) {
    s.add(0, Inner::flip(g, flipped));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::slice(const Tensor& x, std::span<const Slice> ranges) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  P out = Inner::slice(x.primitive, ranges);
  if (!x.node) return Tensor(std::move(out));
  const Shape xs = shape(x);
  std::vector<Slice> r(ranges.begin(), ranges.end());
  return autodiff::detail::record<B>(std::move(out), {x.node}, [xs, r](P g, Sink& s) {
    s.add(0, Inner::slice_assign(M::zeros(xs, g), r, g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::slice_assign(Tensor x, std::span<const Slice> ranges,
                                        const Tensor& values) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x.node && !values.node) {
    return Tensor(Inner::slice_assign(std::move(x.primitive), ranges, values.primitive));
  }
  const Shape vs = shape(values);
  std::vector<Slice> r(ranges.begin(), ranges.end());
  std::vector<std::shared_ptr<NodeT>> parents{x.node, values.node};
  P out = Inner::slice_assign(std::move(x.primitive), ranges, values.primitive);
  return autodiff::detail::record<B>(std::move(out), std::move(parents), [vs, r](P g, Sink& s) {
    if (s.needs(1)) s.add(1, Inner::slice(g, r));
    if (s.needs(0)) s.add(0, Inner::slice_assign(std::move(g), r, M::zeros(vs, g)));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::cat(std::span<const Tensor> tensors, std::int64_t dim) {
  using Sink = autodiff::GradSink<B>;
  std::vector<P> prims;
  prims.reserve(tensors.size());
  bool tracked = false;
  for (const auto& t : tensors) {
    prims.push_back(t.primitive);
    tracked = tracked || t.node;
  }
  P out = Inner::cat(prims, dim);
  if (!tracked) return Tensor(std::move(out));
  const auto d = static_cast<std::size_t>(check::dim("cat", dim, Inner::shape(out).rank()));
  std::vector<std::shared_ptr<NodeT>> parents;
  std::vector<std::int64_t> sizes;
  for (const auto& t : tensors) {
    parents.push_back(t.node);
    sizes.push_back(shape(t)[d]);
  }
  prims.clear();
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [d, sizes](P g, Sink& s) {
    std::vector<Slice> r(d + 1);
    std::int64_t start = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (s.needs(i)) {
        r[d] = Slice(start, start + sizes[i]);
        s.add(i, Inner::slice(g, r));
      }
      start += sizes[i];
    }
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::select(const Tensor& x, std::int64_t dim, const IntPrim& indices) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  P out = Inner::select(x.primitive, dim, indices);
  if (!x.node) return Tensor(std::move(out));
  const Shape xs = shape(x);
  // index_add of the gradient rows: repeated indices accumulate.
  return autodiff::detail::record<B>(std::move(out), {x.node},
                                     [xs, dim, indices](P g, Sink& s) {
    s.add(0, Inner::select_assign(M::zeros(xs, g), dim, indices, g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::select_assign(Tensor x, std::int64_t dim, const IntPrim& indices,
                                         const Tensor& values) {
  using Sink = autodiff::GradSink<B>;
  if (!x.node && !values.node) {
    return Tensor(Inner::select_assign(std::move(x.primitive), dim, indices, values.primitive));
  }
  std::vector<std::shared_ptr<NodeT>> parents{x.node, values.node};
  P out = Inner::select_assign(std::move(x.primitive), dim, indices, values.primitive);
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [dim, indices](P g, Sink& s) {
    if (s.needs(1)) s.add(1, Inner::select(g, dim, indices));
    if (s.needs(0)) s.add(0, std::move(g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::gather(const Tensor& x, std::int64_t dim, const IntPrim& indices) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  P out = Inner::gather(x.primitive, dim, indices);
  if (!x.node) return Tensor(std::move(out));
  const Shape xs = shape(x);
  // scatter-add of the gradient: repeated indices accumulate.
  return autodiff::detail::record<B>(std::move(out), {x.node},
                                     [xs, dim, indices](P g, Sink& s) {
    s.add(0, Inner::scatter(M::zeros(xs, g), dim, indices, g));
  });
}

KILN_AD_TEMPLATE
AutodiffTensor<B> KILN_AD::scatter(Tensor x, std::int64_t dim, const IntPrim& indices,
                                   const Tensor& values) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  if (!x.node && !values.node) {
    return Tensor(Inner::scatter(std::move(x.primitive), dim, indices, values.primitive));
  }
  const Shape vs = shape(values);
  std::vector<std::shared_ptr<NodeT>> parents{x.node, values.node};
  P out = Inner::scatter(std::move(x.primitive), dim, indices, values.primitive);
  return autodiff::detail::record<B>(std::move(out), std::move(parents),
                                     [vs, dim, indices](P g, Sink& s) {
    if (s.needs(1)) {
      // Only the indices-shaped corner of values was read; the rest gets 0.
      P gv = Inner::gather(g, dim, indices);
      const Shape is = Inner::shape(gv);
      if (!(is == vs)) {
        std::vector<Slice> corner;
        for (std::size_t i = 0; i < is.rank(); ++i) corner.emplace_back(0, is[i]);
        gv = Inner::slice_assign(M::zeros(vs, g), corner, gv);
      }
      s.add(1, std::move(gv));
    }
    if (s.needs(0)) s.add(0, std::move(g));
  });
}

#undef KILN_AD_TEMPLATE
#undef KILN_AD

}  // namespace kiln
