// AutodiffOps unary family: the element-wise unary ops of the op table, whose backward rules
// are the rows' `grad` expressions (kiln/backend/ops.def), and the parameterised activations
// written here by hand: clamp, leaky_relu, softplus, softmax, log_softmax.
// Instantiated here for Autodiff<Cpu>.
#include <cmath>
#include <numbers>
#include <optional>
#include <utility>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace autodiff::detail {

// Helpers named by rows of the op table: d/dx of the activation, as a formula of x.

/// gelu'(x) = Φ(x) + x·φ(x).
template <Backend B>
Value<B> gelu_derivative(const Value<B>& x) {
  const double alpha = std::numbers::sqrt2 / 2.0;                       // 1/sqrt(2)
  const double beta = 2.0 / std::sqrt(std::numbers::pi) * alpha * 0.5;  // 1/sqrt(2π)
  Value<B> cdf = (erf(x * alpha) + 1.0) * 0.5;
  Value<B> pdf = exp((x * x) * -0.5) * beta;
  return std::move(cdf) + x * std::move(pdf);
}

/// d/dx of 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + κx³): 0.5·(1 + t) + 0.5·x·(1 - t²)·u'.
template <Backend B>
Value<B> gelu_tanh_derivative(const Value<B>& x) {
  const double beta = std::numbers::sqrt2 * (2.0 / std::sqrt(std::numbers::pi)) * 0.5;
  const double kappa = 0.044715;
  const Value<B> x_sq = x * x;
  const Value<B> t = tanh((x + (x_sq * x) * kappa) * beta);
  Value<B> left_derivative = (t + 1.0) * 0.5;
  Value<B> inner_derivative = (x_sq * (3.0 * kappa) + 1.0) * beta;
  Value<B> right_derivative = (x * 0.5) * (1.0 - t * t) * std::move(inner_derivative);
  return std::move(left_derivative) + std::move(right_derivative);
}

/// silu'(x) = σ(x)·(1 + x·(1 - σ(x))).
template <Backend B>
Value<B> silu_derivative(const Value<B>& x) {
  const Value<B> sig = sigmoid(x);
  return sig * (x * (1.0 - sig) + 1.0);
}

/// selu'(x) = scale·alpha·e^x for x <= 0, scale otherwise (nan included), as PyTorch's
/// elu_backward with is_result = false.
template <Backend B>
Value<B> selu_derivative(const Value<B>& x) {
  using M = Math<B>;
  using O = typename B::FloatOps;
  constexpr float scale = 1.0507009873554804934f;
  constexpr float negcoef = 1.6732632423543772848f * scale;
  auto neg = M::mul_s(M::un(UnaryOp::Exp, x.p), negcoef);
  auto pos = O::full(O::shape(x.p), scale, DType::F32, O::device(x.p));
  return Value<B>{M::where(std::move(pos), M::cmp_s(CompareOp::LowerEqual, x.p, 0.0), neg)};
}

/// mish'(x) = t + x·σ(x)·(1 - t²), t = tanh(log1p(e^x)) (PyTorch's mish_backward).
template <Backend B>
Value<B> mish_derivative(const Value<B>& x) {
  using M = Math<B>;
  const Value<B> t{M::un(UnaryOp::Tanh, M::un(UnaryOp::Log1p, M::un(UnaryOp::Exp, x.p)))};
  return t + x * sigmoid(x) * (1.0 - t * t);
}

/// hardswish'(x) = 0 for x < -3, x/3 + 1/2 for x <= 3, 1 otherwise (nan included), as
/// PyTorch's hardswish_backward.
template <Backend B>
Value<B> hard_swish_derivative(const Value<B>& x) {
  using M = Math<B>;
  using O = typename B::FloatOps;
  auto mid = M::add_s(M::scal(BinaryOp::Div, x.p, 3.0), 0.5);
  auto one = O::full(O::shape(x.p), 1.0, DType::F32, O::device(x.p));
  auto d = M::where(std::move(one), M::cmp_s(CompareOp::LowerEqual, x.p, 3.0), mid);
  return Value<B>{M::zero_where(std::move(d), M::cmp_s(CompareOp::Lower, x.p, -3.0))};
}

/// What a one-line rule reads besides g (a row's `saves` column).
enum class Saves { None, X, Y };

/// The inner unary op, recorded with the step `rule(g, v)` where v is the input (Saves::X),
/// the output (Saves::Y) or empty (Saves::None); only v is kept in the graph.
template <Backend B, Saves S, class Rule>
AutodiffTensor<B> unary_rule(UnaryOp op, AutodiffTensor<B>& x, Rule rule) {
  using P = typename B::FloatTensor;
  using Sink = GradSink<B>;
  return apply<B>(
      {&x}, [&] { return B::FloatOps::unary(op, std::move(x.primitive)); },
      [&] {
        if constexpr (S == Saves::X) {
          return [rule, v = x.primitive](P g, Sink& s) {
            Grad<B> grad(std::move(g));
            s.add(0, rule(grad, Value<B>{v}).p);
          };
        } else if constexpr (S == Saves::Y) {
          return [rule](P g, Sink& s, const P& y) {
            Grad<B> grad(std::move(g));
            s.add(0, rule(grad, Value<B>{y}).p);
          };
        } else {
          return [rule](P g, Sink& s) {
            Grad<B> grad(std::move(g));
            s.add(0, rule(grad, Value<B>{}).p);
          };
        }
      });
}

/// The rows of the op table: one case per unary op, its rule the row's `grad` expression.
template <Backend B>
AutodiffTensor<B> unary(UnaryOp op, AutodiffTensor<B> x) {
  switch (op) {
#define KILN_RULE_SAVES_x Saves::X
#define KILN_RULE_SAVES_y Saves::Y
#define KILN_RULE_SAVES__ Saves::None
#define KILN_UNARY_OP(Name, snake, jsMethod, KINDS, doc, message, f32, i32, saves, grad)         \
  case UnaryOp::Name:                                                                          \
    return unary_rule<B, KILN_RULE_SAVES_##saves>(                                             \
        op, x, [](Grad<B>& g, [[maybe_unused]] const Value<B>& saves) -> Value<B> { return grad; });
#include "kiln/backend/ops.def"
#undef KILN_RULE_SAVES_x
#undef KILN_RULE_SAVES_y
#undef KILN_RULE_SAVES__
  }
  throw_error<TypeError>("unary: unknown op code ", static_cast<int>(op));
}

}  // namespace autodiff::detail

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::unary(UnaryOp op, Tensor x) {
  return autodiff::detail::unary<B>(op, std::move(x));
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::clamp(Tensor x, std::optional<double> min,
                                        std::optional<double> max) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  // The gradient passes where min <= x <= max (inclusive, torch.clamp); nan gets 0.
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::clamp(std::move(x.primitive), min, max); },
      [&] {
        return [xv = x.primitive, min, max](P g, Sink& s) {
          std::optional<typename B::BoolTensor> inside;
          if (min) inside = M::cmp_s(CompareOp::GreaterEqual, xv, *min);
          if (max) {
            auto below = M::cmp_s(CompareOp::LowerEqual, xv, *max);
            inside = inside ? M::band(std::move(*inside), std::move(below)) : std::move(below);
          }
          if (!inside) {
            s.add(0, std::move(g));
            return;
          }
          s.add(0, M::zero_where(std::move(g), M::bnot(std::move(*inside))));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::leaky_relu(Tensor x, double negative_slope) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  // g where x > 0, else negative_slope·g (so negative_slope·g at 0, as PyTorch).
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::leaky_relu(std::move(x.primitive), negative_slope); },
      [&] {
        return [xv = x.primitive, negative_slope](P g, Sink& s) {
          P scaled = M::mul_s(g, negative_slope);
          s.add(0, M::where(std::move(scaled), M::cmp_s(CompareOp::Greater, xv, 0.0), g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::softplus(Tensor x, double beta, double threshold) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  // g·sigmoid(beta·x), and g where beta·x > threshold (the linear region).
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::softplus(std::move(x.primitive), beta, threshold); },
      [&] {
        return [xv = x.primitive, beta, threshold](P g, Sink& s) {
          P bx = M::mul_s(xv, beta);
          auto linear = M::cmp_s(CompareOp::Greater, bx, threshold);
          P scaled = M::mul(g, M::un(UnaryOp::Sigmoid, std::move(bx)));
          s.add(0, M::where(std::move(scaled), linear, g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::softmax(Tensor x, std::int64_t dim) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  // y·(g - sum(g·y, dim))
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::softmax(std::move(x.primitive), dim); },
      [&] {
        return [dim](P g, Sink& s, const P& y) {
          const std::int64_t d = check::dim("softmax", dim, Inner::shape(y).rank());
          P gy_sum = Inner::reduce_dim(ReduceOp::Sum, M::mul(g, y), d);
          s.add(0, M::mul(y, M::sub(std::move(g), std::move(gy_sum))));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::log_softmax(Tensor x, std::int64_t dim) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  // g - exp(y)·sum(g, dim)
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::log_softmax(std::move(x.primitive), dim); },
      [&] {
        return [dim](P g, Sink& s, const P& y) {
          const std::int64_t d = check::dim("log_softmax", dim, Inner::shape(y).rank());
          P g_sum = Inner::reduce_dim(ReduceOp::Sum, g, d);
          s.add(0, M::sub(std::move(g), M::mul(M::un(UnaryOp::Exp, y), std::move(g_sum))));
        };
      });
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::unary(UnaryOp, AutodiffTensor<KILN_AUTODIFF_BACKEND>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::clamp(AutodiffTensor<KILN_AUTODIFF_BACKEND>, std::optional<double>,
                                                     std::optional<double>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::leaky_relu(AutodiffTensor<KILN_AUTODIFF_BACKEND>, double);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::softplus(AutodiffTensor<KILN_AUTODIFF_BACKEND>, double, double);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::softmax(AutodiffTensor<KILN_AUTODIFF_BACKEND>, std::int64_t);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::log_softmax(AutodiffTensor<KILN_AUTODIFF_BACKEND>, std::int64_t);

}  // namespace kiln
