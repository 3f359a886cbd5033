// AutodiffOps indexing family: select, select_assign, gather, scatter. Gradients go back to
// the indexed positions, accumulating over repeated indices (index_add / scatter_add).
// Instantiated here for Autodiff<Cpu>.
#include <utility>
#include <vector>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::select(const Tensor& x, std::int64_t dim,
                                         const IntPrim& indices) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::select(x.primitive, dim, indices); },
      [&](const P&) {
        // index_add of the gradient rows: repeated indices accumulate.
        return [xs = shape(x), dim, indices](P g, Sink& s) {
          s.add(0, Inner::select_assign(M::zeros(xs, g), dim, indices, g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::select_assign(Tensor x, std::int64_t dim,
                                                const IntPrim& indices, const Tensor& values) {
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x, &values},
      [&] { return Inner::select_assign(std::move(x.primitive), dim, indices, values.primitive); },
      [&] {
        return [dim, indices](P g, Sink& s) {
          if (s.needs(1)) s.add(1, Inner::select(g, dim, indices));
          if (s.needs(0)) s.add(0, std::move(g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::gather(const Tensor& x, std::int64_t dim,
                                         const IntPrim& indices) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::gather(x.primitive, dim, indices); },
      [&](const P&) {
        // scatter-add of the gradient: repeated indices accumulate.
        return [xs = shape(x), dim, indices](P g, Sink& s) {
          s.add(0, Inner::scatter(M::zeros(xs, g), dim, indices, g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::scatter(Tensor x, std::int64_t dim, const IntPrim& indices,
                                          const Tensor& values) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x, &values},
      [&] { return Inner::scatter(std::move(x.primitive), dim, indices, values.primitive); },
      [&] {
        return [vs = shape(values), dim, indices](P g, Sink& s) {
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
        };
      });
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::select(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, std::int64_t,
                                                      const KILN_AUTODIFF_BACKEND::FloatTensor&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::select_assign(AutodiffTensor<KILN_AUTODIFF_BACKEND>, std::int64_t,
                                                             const KILN_AUTODIFF_BACKEND::FloatTensor&,
                                                             const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::gather(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&, std::int64_t,
                                                      const KILN_AUTODIFF_BACKEND::FloatTensor&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::scatter(AutodiffTensor<KILN_AUTODIFF_BACKEND>, std::int64_t,
                                                       const KILN_AUTODIFF_BACKEND::FloatTensor&,
                                                       const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);

}  // namespace kiln
