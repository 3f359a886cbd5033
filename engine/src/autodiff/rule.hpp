#pragma once
// What every backward rule of `AutodiffOps<B>` (engine/src/autodiff/<family>.cpp) shares:
// - `apply`: the prologue every rule repeated (untracked inputs -> the inner op alone;
//   otherwise record the output with the inputs' nodes as parents and the rule's step), in
//   the spirit of the `unary`/`binary` op helpers of Burn's burn-autodiff;
// - `record`: the lower-level half of it, for ops with several outputs;
// - `Math`: shorthands over the inner backend's float ops for hand-written formulas;
// - `Value`, `Grad`, `Mask`: inner-backend tensors with arithmetic operators, so that a
//   gradient reads as a formula (`g * (1.0 - y * y)`): the one-line rules of the op table
//   (kiln/backend/ops.def) are written with them.
//
// Private to the engine: only the family .cpp files include this.
//
// Every backward formula is PyTorch's (tools/autograd/derivatives.yaml and
// torch/csrc/autograd/FunctionsManual.cpp, v1.13), evaluated op by op in float32, so that
// nan and inf propagate as there (known exceptions: the remainder gradient w.r.t. the
// divisor at a = ±inf is -inf here, nan in PyTorch; prod with exactly one zero gives the
// other elements 0 even when a third element is inf or nan, where PyTorch gives nan). Each
// step receives the gradient of the op's output (its shape) and adds, for each tracked
// input, a gradient of that input's shape.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/apart.hpp"
#include "kiln/autodiff/autodiff.hpp"
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"
#include "kiln/tensor/check.hpp"

namespace kiln::autodiff::detail {

/// Wraps an op's output with a node whose parents are the inputs' nodes (null for an
/// untracked input, so that `sink.needs(i)` is false for it).
template <Backend B, class Step>
AutodiffTensor<B> record(typename B::FloatTensor out,
                         std::vector<std::shared_ptr<Node<B>>> parents, Step&& step) {
  auto node = std::make_shared<Node<B>>(B::FloatOps::shape(out), std::move(parents),
                                        typename Node<B>::Step(std::forward<Step>(step)));
  return AutodiffTensor<B>(std::move(out), std::move(node));
}

/// A rule's step as the node's type-erased Step; a step that also reads the op's output
/// (`(P grad, GradSink<B>& sink, const P& out)`) gets a copy of `out` kept with it.
template <Backend B, class Step>
typename Node<B>::Step node_step(Step&& step, const typename B::FloatTensor& out) {
  using P = typename B::FloatTensor;
  if constexpr (std::is_invocable_v<std::decay_t<Step>&, P, GradSink<B>&, const P&>) {
    return [step = std::forward<Step>(step), y = out](P g, GradSink<B>& sink) {
      step(std::move(g), sink, y);
    };
  } else {
    return typename Node<B>::Step(std::forward<Step>(step));
  }
}

/// record() with the inputs' nodes as parents, the step already erased: one copy per backend
/// instead of one inlined into every rule (issue 17: the rules are in the WebAssembly a page
/// loads at init).
template <Backend B>
[[gnu::noinline]] AutodiffTensor<B> record_inputs(
    typename B::FloatTensor out, std::initializer_list<const AutodiffTensor<B>*> inputs,
    typename Node<B>::Step step) {
  std::vector<std::shared_ptr<Node<B>>> parents;
  parents.reserve(inputs.size());
  for (const auto* t : inputs) parents.push_back(t->node);
  auto node = std::make_shared<Node<B>>(B::FloatOps::shape(out), std::move(parents), std::move(step));
  return AutodiffTensor<B>(std::move(out), std::move(node));
}

/// The prologue of every rule (Burn's burn-autodiff `unary`/`binary` helpers):
/// `forward()` computes the inner op's output. When none of `inputs` is tracked, that output
/// is returned untracked and nothing else happens. Otherwise the output is recorded with the
/// inputs' nodes as parents (null for untracked inputs: `sink.needs(i)` is false for them)
/// and the backward step `make_step` returns: a callable `(P grad, GradSink<B>& sink)`, or
/// `(P grad, GradSink<B>& sink, const P& out)` when it also reads the op's output, which is
/// then kept in the node. `make_step()` (no argument) is called before `forward`, so that it
/// can keep copies of the inputs `forward` consumes, and only of those its step needs;
/// `make_step(out)` is called after it, for steps built from the validated output (forward
/// then must not consume inputs the step reads).
template <Backend B, class Forward, class MakeStep>
AutodiffTensor<B> apply_body(std::initializer_list<const AutodiffTensor<B>*> inputs,
                             Forward&& forward, MakeStep&& make_step) {
  using P = typename B::FloatTensor;
  bool tracked = false;
  for (const auto* t : inputs) tracked = tracked || t->node != nullptr;
  if (!tracked) return AutodiffTensor<B>(forward());
  if constexpr (std::is_invocable_v<MakeStep&, const P&>) {
    P out = forward();
    auto step = make_step(static_cast<const P&>(out));
    typename Node<B>::Step erased = node_step<B>(std::move(step), out);
    return record_inputs<B>(std::move(out), inputs, std::move(erased));
  } else {
    auto step = make_step();
    P out = forward();
    typename Node<B>::Step erased = node_step<B>(std::move(step), out);
    return record_inputs<B>(std::move(out), inputs, std::move(erased));
  }
}

/// apply_body (above), called out of line in WebAssembly (core/apart.hpp): each rule is a
/// function of its own, so that a switch over ops (`unary`, `binary`, `binary_scalar` of
/// unary.cpp and binary.cpp) is a list of calls and wasm-split can leave the rules a page
/// never runs out of the primary module; inlined, they all stayed with the one op that runs.
template <Backend B, class Forward, class MakeStep>
AutodiffTensor<B> apply(std::initializer_list<const AutodiffTensor<B>*> inputs,
                        Forward&& forward, MakeStep&& make_step) {
  return kiln::detail::call_apart<&apply_body<B, Forward, MakeStep>>(
      inputs, std::forward<Forward>(forward), std::forward<MakeStep>(make_step));
}

/// Shorthands over the inner backend's float ops for the hand-written backward formulas.
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

  /// A gradient routed to the positions `indices` selected along dim (max_dim, sort).
  static P scatter_to(const P& g, const Shape& xs, std::int64_t dim,
                      const typename B::IntTensor& indices) {
    return O::scatter(zeros(xs, g), dim, indices, g);
  }
};

/// A Bool tensor of the inner backend (the result of a comparison in a rule).
template <Backend B>
struct Mask {
  typename B::BoolTensor m;
};

/// A Float tensor of the inner backend with arithmetic operators, for one-line rules. Each
/// operator is one inner op, in the order written (`a * b * c` is (a·b)·c): a rule computes
/// exactly what its formula says, op by op in f32. Operands are taken by value: a temporary
/// lends its buffer to the result; a named Value is shared, never written.
template <Backend B>
struct Value {
  using P = typename B::FloatTensor;
  using O = typename B::FloatOps;
  P p;

  friend Value operator+(Value a, Value b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
  friend Value operator-(Value a, Value b) { return bin(BinaryOp::Sub, std::move(a), std::move(b)); }
  friend Value operator*(Value a, Value b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
  friend Value operator/(Value a, Value b) { return bin(BinaryOp::Div, std::move(a), std::move(b)); }
  friend Value operator+(Value a, double s) { return scal(BinaryOp::Add, std::move(a), s, false); }
  friend Value operator-(Value a, double s) { return scal(BinaryOp::Sub, std::move(a), s, false); }
  friend Value operator*(Value a, double s) { return scal(BinaryOp::Mul, std::move(a), s, false); }
  friend Value operator/(Value a, double s) { return scal(BinaryOp::Div, std::move(a), s, false); }
  friend Value operator-(double s, Value a) { return scal(BinaryOp::Sub, std::move(a), s, true); }
  friend Value operator/(double s, Value a) { return scal(BinaryOp::Div, std::move(a), s, true); }
  friend Value operator-(Value a) { return un(UnaryOp::Neg, std::move(a)); }

  friend Mask<B> operator<(const Value& a, double s) { return cmp(CompareOp::Lower, a, s); }
  friend Mask<B> operator<=(const Value& a, double s) { return cmp(CompareOp::LowerEqual, a, s); }
  friend Mask<B> operator>(const Value& a, double s) { return cmp(CompareOp::Greater, a, s); }
  friend Mask<B> operator>=(const Value& a, double s) { return cmp(CompareOp::GreaterEqual, a, s); }
  friend Mask<B> is_nan(const Value& a) { return Mask<B>{O::is_nan(a.p)}; }

  friend Value exp(Value a) { return un(UnaryOp::Exp, std::move(a)); }
  friend Value log(Value a) { return un(UnaryOp::Log, std::move(a)); }
  friend Value sin(Value a) { return un(UnaryOp::Sin, std::move(a)); }
  friend Value cos(Value a) { return un(UnaryOp::Cos, std::move(a)); }
  friend Value tanh(Value a) { return un(UnaryOp::Tanh, std::move(a)); }
  friend Value erf(Value a) { return un(UnaryOp::Erf, std::move(a)); }
  friend Value sign(Value a) { return un(UnaryOp::Sign, std::move(a)); }
  friend Value sigmoid(Value a) { return un(UnaryOp::Sigmoid, std::move(a)); }
  /// 0 where mask is true (masked_fill: an inf or nan there does not leak as inf·0 = nan).
  friend Value zero_where(Value a, const Mask<B>& mask) {
    return Value{O::mask_fill(std::move(a.p), mask.m, 0.0)};
  }

 private:
  static Value bin(BinaryOp op, Value a, Value b) {
    return Value{O::binary(op, std::move(a.p), std::move(b.p))};
  }
  static Value scal(BinaryOp op, Value a, double s, bool left) {
    return Value{O::binary_scalar(op, std::move(a.p), s, left)};
  }
  static Value un(UnaryOp op, Value a) { return Value{O::unary(op, std::move(a.p))}; }
  static Mask<B> cmp(CompareOp op, const Value& a, double s) {
    return Mask<B>{O::compare_scalar(op, a.p, s)};
  }
};

/// The gradient of an op's output inside a one-line rule: used once, it lends its buffer to
/// the result (`g * y` multiplies in place). A second use is a bug in the rule (StateError).
template <Backend B>
class Grad {
 public:
  using P = typename B::FloatTensor;
  explicit Grad(P p) : p_(std::move(p)) {}
  Grad(const Grad&) = delete;
  Grad& operator=(const Grad&) = delete;

  /// The gradient as a Value (once).
  Value<B> take() {
    if (used_) throw_error<StateError>("autodiff: a backward rule of the op table used g twice");
    used_ = true;
    return Value<B>{std::move(p_)};
  }
  operator Value<B>() { return take(); }  // NOLINT: implicit, so that `g * y` reads as math

  friend Value<B> operator-(Grad& g) { return -g.take(); }
  friend Value<B> zero_where(Grad& g, const Mask<B>& mask) { return zero_where(g.take(), mask); }
  /// Zeros of g's shape (the gradient of a piecewise-constant op).
  friend Value<B> zeros(Grad& g) {
    const P v = g.take().p;
    return Value<B>{Math<B>::zeros(B::FloatOps::shape(v), v)};
  }

 private:
  P p_;
  bool used_ = false;
};

}  // namespace kiln::autodiff::detail
