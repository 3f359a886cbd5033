// AutodiffOps binary family: the element-wise binary ops of the op table (tensor-tensor and
// tensor-scalar, kiln/backend/ops.def) and the masks (mask_where, mask_fill). The rules are
// written per op here: they sum broadcast gradients back to each operand's shape and keep
// only what the tracked operands' gradients need. Instantiated here for Autodiff<Cpu>.
#include <cmath>
#include <optional>
#include <utility>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::binary(BinaryOp op, Tensor lhs, Tensor rhs) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  using autodiff::detail::apply;
  // The inner op consuming the operands: an operand's buffer may hold the result, unless the
  // step has kept a copy of it (make_step runs first), which makes it shared.
  auto forward = [&] {
    return Inner::binary(op, std::move(lhs.primitive), std::move(rhs.primitive));
  };
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return apply<B>({&lhs, &rhs}, forward, [&] {
        const Shape ls = shape(lhs), rs = shape(rhs);
        return [ls, rs, sub = op == BinaryOp::Sub](P g, Sink& s) {
          if (s.needs(1)) s.add(1, M::sum_to(sub ? M::neg(g) : g, rs));
          if (s.needs(0)) s.add(0, M::sum_to(std::move(g), ls));
        };
      });
    case BinaryOp::Mul:
      return apply<B>({&lhs, &rhs}, forward, [&] {
        const Shape ls = shape(lhs), rs = shape(rhs);
        // Save only what the tracked inputs' gradients need.
        std::optional<P> sa, sb;
        if (rhs.node) sa = lhs.primitive;
        if (lhs.node) sb = rhs.primitive;
        return [ls, rs, sa, sb](P g, Sink& s) {
          if (s.needs(0)) s.add(0, M::sum_to(M::mul(g, *sb), ls));
          if (s.needs(1)) s.add(1, M::sum_to(M::mul(std::move(g), *sa), rs));
        };
      });
    case BinaryOp::Div:
      return apply<B>({&lhs, &rhs}, forward, [&] {
        const Shape ls = shape(lhs), rs = shape(rhs);
        std::optional<P> sa;
        if (rhs.node) sa = lhs.primitive;
        return [ls, rs, sa, b = rhs.primitive](P g, Sink& s) {
          // d/da = g / b; d/db = -g·((a / b) / b) (PyTorch's order: no overflow from b·b)
          if (s.needs(1)) {
            s.add(1, M::sum_to(M::mul(M::neg(g), M::div(M::div(*sa, b), b)), rs));
          }
          if (s.needs(0)) s.add(0, M::sum_to(M::div(std::move(g), b), ls));
        };
      });
    case BinaryOp::Pow:
      return apply<B>({&lhs, &rhs}, forward, [&] {
        const Shape ls = shape(lhs), rs = shape(rhs);
        return [ls, rs, a = lhs.primitive, b = rhs.primitive](P g, Sink& s,
                                                                          const P& y) {
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
        };
      });
    case BinaryOp::Max:
    case BinaryOp::Min:
      return apply<B>({&lhs, &rhs}, forward, [&] {
        const Shape ls = shape(lhs), rs = shape(rhs);
        return [ls, rs, a = lhs.primitive, b = rhs.primitive,
                is_max = op == BinaryOp::Max](P g, Sink& s) {
          // The larger (smaller) input gets the gradient; ties split it in half
          // (torch.maximum).
          P half = M::where(g, M::cmp(CompareOp::Equal, a, b), M::mul_s(g, 0.5));
          const CompareOp lose_a = is_max ? CompareOp::Lower : CompareOp::Greater;
          const CompareOp lose_b = is_max ? CompareOp::Greater : CompareOp::Lower;
          if (s.needs(1)) s.add(1, M::sum_to(M::zero_where(half, M::cmp(lose_b, a, b)), rs));
          if (s.needs(0)) {
            s.add(0, M::sum_to(M::zero_where(std::move(half), M::cmp(lose_a, a, b)), ls));
          }
        };
      });
    case BinaryOp::Rem:
    case BinaryOp::Fmod:
      return apply<B>({&lhs, &rhs}, forward, [&] {
        const Shape ls = shape(lhs), rs = shape(rhs);
        return [ls, rs, a = lhs.primitive, b = rhs.primitive,
                floor = op == BinaryOp::Rem](P g, Sink& s) {
          // d/da = g; d/db = -g·floor(a/b) (remainder) or -g·trunc(a/b) (fmod)
          if (s.needs(1)) {
            P q = M::div(a, b);
            q = floor ? M::un(UnaryOp::Floor, std::move(q)) : M::trunc(q);
            s.add(1, M::sum_to(M::mul(M::neg(g), std::move(q)), rs));
          }
          if (s.needs(0)) s.add(0, M::sum_to(std::move(g), ls));
        };
      });
    case BinaryOp::DivTrunc:
      break;
  }
  // DivTrunc: piecewise constant, gradient 0 (torch.div with a rounding mode).
  return apply<B>({&lhs, &rhs}, forward, [&] {
    const Shape ls = shape(lhs), rs = shape(rhs);
    return [ls, rs](P g, Sink& s) {
      if (s.needs(0)) s.add(0, M::zeros(ls, g));
      if (s.needs(1)) s.add(1, M::zeros(rs, g));
    };
  });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::binary_scalar(BinaryOp op, Tensor lhs, double scalar,
                                                bool scalar_on_left) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  const bool left = scalar_on_left;
  // The inner op, and the tensor operand for the steps that read it.
  auto forward = [&] {
    return Inner::binary_scalar(op, std::move(lhs.primitive), scalar, scalar_on_left);
  };
  auto rec = [&](auto make_step) {
    return autodiff::detail::apply<B>({&lhs}, forward, make_step);
  };
  const P& x = lhs.primitive;
  switch (op) {
    case BinaryOp::Add:
      return rec([] { return [](P g, Sink& s) { s.add(0, std::move(g)); }; });
    case BinaryOp::Sub:
      return rec([left] {
        return [left](P g, Sink& s) { s.add(0, left ? M::neg(std::move(g)) : std::move(g)); };
      });
    case BinaryOp::Mul:
      return rec([scalar] {
        return [scalar](P g, Sink& s) { s.add(0, M::mul_s(std::move(g), scalar)); };
      });
    case BinaryOp::Div:
      if (!left) {
        return rec([scalar] {
          return [scalar](P g, Sink& s) { s.add(0, M::scal(BinaryOp::Div, std::move(g), scalar)); };
        });
      }
      // d(s/x)/dx = -s / x²
      return rec([&] {
        return [scalar, x = P(x)](P g, Sink& s) {
          s.add(0, M::div(M::mul_s(std::move(g), -scalar), M::mul(x, x)));
        };
      });
    case BinaryOp::Pow:
      if (!left) {
        // d(x^s)/dx = s·x^(s-1); 0 for s == 0
        return rec([&] {
          return [scalar, x = P(x)](P g, Sink& s) {
            if (scalar == 0.0) {
              s.add(0, M::zeros(Inner::shape(x), x));
              return;
            }
            s.add(0, M::mul(std::move(g),
                            M::mul_s(M::scal(BinaryOp::Pow, x, scalar - 1.0), scalar)));
          };
        });
      }
      // d(s^x)/dx = s^x·log(s); 0 where s == 0 and x >= 0
      return rec([&] {
        return [scalar, x = P(x)](P g, Sink& s, const P& y) {
          P t = M::mul_s(y, std::log(scalar));
          if (scalar == 0.0) {
            t = M::zero_where(std::move(t), M::cmp_s(CompareOp::GreaterEqual, x, 0.0));
          }
          s.add(0, M::mul(std::move(g), std::move(t)));
        };
      });
    case BinaryOp::Max:
    case BinaryOp::Min:
      // Against a constant: full gradient where x wins, half on a tie, 0 where it loses.
      return rec([&] {
        const CompareOp lose = op == BinaryOp::Max ? CompareOp::Lower : CompareOp::Greater;
        return [scalar, x = P(x), lose](P g, Sink& s) {
          P half = M::where(g, M::cmp_s(CompareOp::Equal, x, scalar), M::mul_s(g, 0.5));
          s.add(0, M::zero_where(std::move(half), M::cmp_s(lose, x, scalar)));
        };
      });
    case BinaryOp::Rem:
    case BinaryOp::Fmod:
      if (!left) return rec([] { return [](P g, Sink& s) { s.add(0, std::move(g)); }; });
      // d(s mod x)/dx = -floor(s/x) (remainder) or -trunc(s/x) (fmod)
      return rec([&] {
        return [scalar, x = P(x), floor = op == BinaryOp::Rem](P g, Sink& s) {
          P q = M::scal(BinaryOp::Div, x, scalar, true);
          q = floor ? M::un(UnaryOp::Floor, std::move(q)) : M::trunc(q);
          s.add(0, M::mul(M::neg(std::move(g)), std::move(q)));
        };
      });
    case BinaryOp::DivTrunc:
      break;
  }
  return rec([] { return [](P g, Sink& s) { s.add(0, M::zeros(Inner::shape(g), g)); }; });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::mask_where(Tensor x, const BoolPrim& mask,
                                             const Tensor& value) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x, &value}, [&] { return Inner::mask_where(std::move(x.primitive), mask, value.primitive); },
      [&] {
        return [xs = shape(x), vs = shape(value), mask](P g, Sink& s) {
          if (s.needs(1)) s.add(1, M::sum_to(M::zero_where(g, M::bnot(mask)), vs));
          if (s.needs(0)) s.add(0, M::sum_to(M::zero_where(std::move(g), mask), xs));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::mask_fill(Tensor x, const BoolPrim& mask, double value) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::mask_fill(std::move(x.primitive), mask, value); },
      [&] {
        return [xs = shape(x), mask](P g, Sink& s) {
          s.add(0, M::sum_to(M::zero_where(std::move(g), mask), xs));
        };
      });
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::binary(BinaryOp, AutodiffTensor<KILN_AUTODIFF_BACKEND>,
                                                      AutodiffTensor<KILN_AUTODIFF_BACKEND>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::binary_scalar(BinaryOp, AutodiffTensor<KILN_AUTODIFF_BACKEND>,
                                                             double, bool);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::mask_where(AutodiffTensor<KILN_AUTODIFF_BACKEND>, const KILN_AUTODIFF_BACKEND::FloatTensor&,
                                                          const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::mask_fill(AutodiffTensor<KILN_AUTODIFF_BACKEND>, const KILN_AUTODIFF_BACKEND::FloatTensor&,
                                                         double);

}  // namespace kiln
