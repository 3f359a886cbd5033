// AutodiffOps reduction family: reduce, reduce_dim (the reductions of the op table,
// kiln/backend/ops.def; Any/All pass no gradient), max/min_dim_with_indices,
// sort_with_indices, var_mean. The rules differ per op (even split across ties, products of
// the other elements, routing to the selected index) and are written here by hand.
// Instantiated here for Autodiff<Cpu>.
#include <utility>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace autodiff::detail {

/// d(prod)/dx_i = product of the other elements, also when some are 0 (then only a lone
/// zero gets a non-zero gradient), from `reduce` applied to x (whole or along a dim).
template <Backend B, class Reduce>
typename B::FloatTensor prod_factor(const typename B::FloatTensor& x, Reduce&& reduce) {
  using M = Math<B>;
  using P = typename B::FloatTensor;
  const Shape xs = B::FloatOps::shape(x);
  auto zero = M::cmp_s(CompareOp::Equal, x, 0.0);
  P x1 = B::FloatOps::mask_fill(x, zero, 1.0);
  P p1 = reduce(ReduceOp::Prod, x1);                // product of the non-zeros
  P count = reduce(ReduceOp::Sum, M::to_float(zero));  // number of zeros
  P no_zero = M::div(p1, x1);                       // p1 / x_i
  // With one zero, a non-zero element's product of the others includes that zero: 0.
  // (PyTorch's exclusive products give nan there when another element is inf or nan;
  // Kiln gives 0.)
  P one_zero = M::where(M::zeros(xs, x), zero, M::expand_to(p1, xs));
  one_zero = M::zero_where(std::move(one_zero), M::bnot(M::cmp_s(CompareOp::Equal, count, 1.0)));
  return M::where(std::move(one_zero), M::cmp_s(CompareOp::Equal, count, 0.0), no_zero);
}

/// (values, indices) of an op that picks elements of x along dim (max/min_dim_with_indices,
/// sort_with_indices): untracked when x is; otherwise the values' gradient goes back to the
/// positions `indices` along dim of x.
template <Backend B>
std::pair<AutodiffTensor<B>, typename B::IntTensor> indexed(
    std::pair<typename B::FloatTensor, typename B::IntTensor> picked, const AutodiffTensor<B>& x,
    std::int64_t dim) {
  using P = typename B::FloatTensor;
  // (not a structured binding: clang 14, em++'s, cannot capture one in a lambda)
  P& values = picked.first;
  typename B::IntTensor& indices = picked.second;
  if (!x.node) return {AutodiffTensor<B>(std::move(values)), std::move(indices)};
  const Shape xs = B::FloatOps::shape(x.primitive);
  const std::int64_t d = check::dim("max_dim", dim, xs.rank());
  auto out = record<B>(std::move(values), {x.node},
                       [xs, d, positions = indices](P g, GradSink<B>& s) {
                         s.add(0, Math<B>::scatter_to(g, xs, d, positions));
                       });
  return {std::move(out), std::move(indices)};
}

}  // namespace autodiff::detail

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::reduce(ReduceOp op, const Tensor& x) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  using autodiff::detail::apply;
  // A rank-0 tensor reduces as its [1] reshape, so that every rule below sees rank >= 1 and
  // the gradient goes back to [] through the reshape (expand cannot target rank 0).
  if (shape(x).rank() == 0 && x.node) {
    const std::int64_t one[] = {1};
    return reduce(op, reshape(x, one));
  }
  auto forward = [&] { return Inner::reduce(op, x.primitive); };
  switch (op) {
    case ReduceOp::Sum:
      return apply<B>({&x}, forward, [&] {
        return [xs = shape(x)](P g, Sink& s) { s.add(0, M::expand_to(g, xs)); };
      });
    case ReduceOp::Mean:
      return apply<B>({&x}, forward, [&] {
        const Shape xs = shape(x);
        return [xs, n = static_cast<double>(xs.num_elements())](P g, Sink& s) {
          s.add(0, M::expand_to(M::scal(BinaryOp::Div, std::move(g), n), xs));
        };
      });
    case ReduceOp::Prod:
      return apply<B>({&x}, forward, [&] {
        return [xv = x.primitive](P g, Sink& s) {
          P f = autodiff::detail::prod_factor<B>(
              xv, [](ReduceOp r, const P& t) { return Inner::reduce(r, t); });
          s.add(0, M::mul(std::move(f), std::move(g)));
        };
      });
    case ReduceOp::Max:
    case ReduceOp::Min:
      // Over everything: split evenly among the elements equal to the result (torch's
      // evenly_distribute_backward; a nan result selects the nan elements).
      return apply<B>({&x}, forward, [&] {
        return [xv = x.primitive](P g, Sink& s, const P& y) {
          auto mask = M::bor(M::cmp(CompareOp::Equal, xv, y),
                             M::band(Inner::is_nan(xv), Inner::is_nan(y)));
          P count = Inner::reduce(ReduceOp::Sum, M::to_float(mask));
          // masked_fill, not a product with the mask: an inf or nan upstream gradient must
          // not reach the unselected elements as inf·0 = nan.
          P spread = M::expand_to(M::div(std::move(g), std::move(count)), Inner::shape(xv));
          s.add(0, M::zero_where(std::move(spread), M::bnot(std::move(mask))));
        };
      });
    case ReduceOp::Any:
    case ReduceOp::All:
      break;
  }
  return Tensor(forward());  // Any / All: Bool results pass no gradient
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::reduce_dim(ReduceOp op, const Tensor& x, std::int64_t dim) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  using autodiff::detail::apply;
  auto forward = [&] { return Inner::reduce_dim(op, x.primitive, dim); };
  switch (op) {
    case ReduceOp::Sum:
      return apply<B>({&x}, forward, [&] {
        return [xs = shape(x)](P g, Sink& s) { s.add(0, M::expand_to(g, xs)); };
      });
    // The steps check dim when they run: the forward op has validated it by then (and an
    // invalid dim is reported by the forward op, under the op's own name).
    case ReduceOp::Mean:
      return apply<B>({&x}, forward, [&] {
        return [xs = shape(x), dim](P g, Sink& s) {
          const auto d = static_cast<std::size_t>(check::dim("reduce_dim", dim, xs.rank()));
          const double n = static_cast<double>(xs[d]);
          s.add(0, M::expand_to(M::scal(BinaryOp::Div, std::move(g), n), xs));
        };
      });
    case ReduceOp::Prod:
      return apply<B>({&x}, forward, [&] {
        return [xv = x.primitive, dim](P g, Sink& s) {
          const std::int64_t d = check::dim("reduce_dim", dim, Inner::shape(xv).rank());
          P f = autodiff::detail::prod_factor<B>(
              xv, [d](ReduceOp r, const P& t) { return Inner::reduce_dim(r, t, d); });
          s.add(0, M::mul(std::move(f), std::move(g)));
        };
      });
    case ReduceOp::Max:
    case ReduceOp::Min:
      // max_dim / min_dim route the gradient to the selected index (torch.max(dim)).
      if (x.node) {
        return op == ReduceOp::Max ? max_dim_with_indices(x, dim).first
                                   : min_dim_with_indices(x, dim).first;
      }
      break;
    case ReduceOp::Any:
    case ReduceOp::All:
      break;
  }
  return Tensor(forward());
}

template <Backend B>
std::pair<AutodiffTensor<B>, typename B::IntTensor> AutodiffOps<B>::max_dim_with_indices(
    const Tensor& x, std::int64_t dim) {
  return autodiff::detail::indexed<B>(Inner::max_dim_with_indices(x.primitive, dim), x, dim);
}

template <Backend B>
std::pair<AutodiffTensor<B>, typename B::IntTensor> AutodiffOps<B>::min_dim_with_indices(
    const Tensor& x, std::int64_t dim) {
  return autodiff::detail::indexed<B>(Inner::min_dim_with_indices(x.primitive, dim), x, dim);
}

template <Backend B>
std::pair<AutodiffTensor<B>, typename B::IntTensor> AutodiffOps<B>::sort_with_indices(
    const Tensor& x, std::int64_t dim, bool descending) {
  return autodiff::detail::indexed<B>(Inner::sort_with_indices(x.primitive, dim, descending), x, dim);
}

template <Backend B>
std::pair<AutodiffTensor<B>, AutodiffTensor<B>> AutodiffOps<B>::var_mean(const Tensor& x,
                                                                        std::int64_t dim,
                                                                        bool unbiased) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  using autodiff::detail::record;
  auto [var, mean] = Inner::var_mean(x.primitive, dim, unbiased);
  if (!x.node) return {Tensor(std::move(var)), Tensor(std::move(mean))};
  const Shape xs = shape(x);
  const std::int64_t d = check::dim("var_mean", dim, xs.rank());
  const double n = static_cast<double>(xs[static_cast<std::size_t>(d)]);
  // d var / dx = 2·(x - mean) / (n - correction); d mean / dx = 1 / n.
  const double factor = 2.0 / (n - (unbiased ? 1.0 : 0.0));
  Tensor var_t = record<B>(std::move(var), {x.node},
                           [xv = x.primitive, m = mean, factor](P g, Sink& s) {
                             s.add(0, M::mul(M::mul_s(std::move(g), factor), M::sub(xv, m)));
                           });
  Tensor mean_t = record<B>(std::move(mean), {x.node}, [xs, n](P g, Sink& s) {
    s.add(0, M::expand_to(M::scal(BinaryOp::Div, std::move(g), n), xs));
  });
  return {std::move(var_t), std::move(mean_t)};
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::reduce(ReduceOp, const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::reduce_dim(ReduceOp, const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                          std::int64_t);
template std::pair<AutodiffTensor<KILN_AUTODIFF_BACKEND>, KILN_AUTODIFF_BACKEND::FloatTensor> AutodiffOps<KILN_AUTODIFF_BACKEND>::max_dim_with_indices(
    const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, std::int64_t);
template std::pair<AutodiffTensor<KILN_AUTODIFF_BACKEND>, KILN_AUTODIFF_BACKEND::FloatTensor> AutodiffOps<KILN_AUTODIFF_BACKEND>::min_dim_with_indices(
    const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, std::int64_t);
template std::pair<AutodiffTensor<KILN_AUTODIFF_BACKEND>, KILN_AUTODIFF_BACKEND::FloatTensor> AutodiffOps<KILN_AUTODIFF_BACKEND>::sort_with_indices(
    const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, std::int64_t, bool);
template std::pair<AutodiffTensor<KILN_AUTODIFF_BACKEND>, AutodiffTensor<KILN_AUTODIFF_BACKEND>> AutodiffOps<KILN_AUTODIFF_BACKEND>::var_mean(
    const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, std::int64_t, bool);

}  // namespace kiln
