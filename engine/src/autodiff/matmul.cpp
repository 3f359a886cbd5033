// AutodiffOps matmul family: matmul and matmul_transposed. dA = dC·Bᵀ, dB = Aᵀ·dC, each one
// matmul_transposed call (no transposed copies), summed over broadcast batch dims.
// Instantiated here for Autodiff<Cpu>.
#include <optional>
#include <utility>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::matmul(const Tensor& lhs, const Tensor& rhs) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&lhs, &rhs}, [&] { return Inner::matmul(lhs.primitive, rhs.primitive); },
      [&](const P&) {
        std::optional<P> a, b;  // only what the tracked inputs' gradients need
        if (rhs.node) a = lhs.primitive;
        if (lhs.node) b = rhs.primitive;
        return [ls = shape(lhs), rs = shape(rhs), a, b](P g, Sink& s) {
          if (s.needs(0)) s.add(0, M::sum_to(Inner::matmul_transposed(g, *b, false, true), ls));
          if (s.needs(1)) s.add(1, M::sum_to(Inner::matmul_transposed(*a, g, true, false), rs));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::matmul_transposed(const Tensor& lhs, const Tensor& rhs,
                                                    bool transpose_lhs, bool transpose_rhs) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  const bool ta = transpose_lhs, tb = transpose_rhs;
  return autodiff::detail::apply<B>(
      {&lhs, &rhs}, [&] { return Inner::matmul_transposed(lhs.primitive, rhs.primitive, ta, tb); },
      [&](const P&) {
        std::optional<P> a, b;
        if (rhs.node) a = lhs.primitive;
        if (lhs.node) b = rhs.primitive;
        // C = op(A)·op(B), G = dC. d op(A) = G·op(B)ᵀ and d op(B) = op(A)ᵀ·G; an operand
        // stored transposed receives the transpose of that: dA = op(B)·Gᵀ when ta,
        // dB = Gᵀ·op(A) when tb.
        return [ls = shape(lhs), rs = shape(rhs), a, b, ta, tb](P g, Sink& s) {
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
        };
      });
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::matmul(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                      const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::matmul_transposed(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                                 const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                                 bool, bool);

}  // namespace kiln
