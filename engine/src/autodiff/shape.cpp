// AutodiffOps shape family: reshape, permute, expand, repeat_dim, flip, slice, slice_assign,
// cat. Each gradient is the inverse movement of the output's gradient (summed where the
// forward op copied an element several times). Instantiated here for Autodiff<Cpu>.
#include <array>
#include <span>
#include <utility>
#include <vector>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::reshape(Tensor x, std::span<const std::int64_t> dims) {
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::reshape(std::move(x.primitive), dims); },
      [&] {
        return [xs = shape(x)](P g, Sink& s) { s.add(0, Inner::reshape(std::move(g), xs.dims())); };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::permute(const Tensor& x, std::span<const std::int64_t> axes) {
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::permute(x.primitive, axes); },
      [&](const P&) {  // after the forward op has validated axes
        std::vector<std::int64_t> inverse(axes.size());
        for (std::size_t i = 0; i < axes.size(); ++i) {
          inverse[static_cast<std::size_t>(axes[i])] = static_cast<std::int64_t>(i);
        }
        return [inverse](P g, Sink& s) { s.add(0, Inner::permute(g, inverse)); };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::expand(const Tensor& x, std::span<const std::int64_t> dims) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::expand(x.primitive, dims); },
      [&](const P&) {
        return [xs = shape(x)](P g, Sink& s) { s.add(0, M::sum_to(std::move(g), xs)); };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::repeat_dim(const Tensor& x, std::int64_t dim,
                                             std::int64_t times) {
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::repeat_dim(x.primitive, dim, times); },
      [&](const P&) {
        const Shape xs = shape(x);
        const auto d = static_cast<std::size_t>(check::dim("repeat_dim", dim, xs.rank()));
        std::int64_t pre = 1, post = 1;
        for (std::size_t i = 0; i < d; ++i) pre *= xs[i];
        for (std::size_t i = d + 1; i < xs.rank(); ++i) post *= xs[i];
        // The output holds `times` copies of x along dim: [pre, times, n·post], summed over
        // times.
        const std::array<std::int64_t, 3> split{pre, times, xs[d] * post};
        return [xs, split](P g, Sink& s) {
          P t = Inner::reduce_dim(ReduceOp::Sum, Inner::reshape(std::move(g), split), 1);
          s.add(0, Inner::reshape(std::move(t), xs.dims()));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::flip(const Tensor& x, std::span<const std::int64_t> dims) {
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::flip(x.primitive, dims); },
      [&](const P&) {
        return [flipped = std::vector<std::int64_t>(dims.begin(), dims.end())](P g, Sink& s) {
          s.add(0, Inner::flip(g, flipped));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::slice(const Tensor& x, std::span<const Slice> ranges) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x}, [&] { return Inner::slice(x.primitive, ranges); },
      [&](const P&) {
        return [xs = shape(x), r = std::vector<Slice>(ranges.begin(), ranges.end())](P g,
                                                                                     Sink& s) {
          s.add(0, Inner::slice_assign(M::zeros(xs, g), r, g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::slice_assign(Tensor x, std::span<const Slice> ranges,
                                               const Tensor& values) {
  using M = autodiff::detail::Math<B>;
  using Sink = autodiff::GradSink<B>;
  return autodiff::detail::apply<B>(
      {&x, &values},
      [&] { return Inner::slice_assign(std::move(x.primitive), ranges, values.primitive); },
      [&] {
        return [vs = shape(values), r = std::vector<Slice>(ranges.begin(), ranges.end())](
                   P g, Sink& s) {
          if (s.needs(1)) s.add(1, Inner::slice(g, r));
          if (s.needs(0)) s.add(0, Inner::slice_assign(std::move(g), r, M::zeros(vs, g)));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::cat(std::span<const Tensor> tensors, std::int64_t dim) {
  using Sink = autodiff::GradSink<B>;
  // Any number of inputs: the prologue written out (autodiff::detail::apply takes a fixed
  // list).
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

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::reshape(AutodiffTensor<KILN_AUTODIFF_BACKEND>,
                                                       std::span<const std::int64_t>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::permute(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                       std::span<const std::int64_t>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::expand(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                      std::span<const std::int64_t>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::repeat_dim(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                          std::int64_t, std::int64_t);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::flip(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                    std::span<const std::int64_t>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::slice(const AutodiffTensor<KILN_AUTODIFF_BACKEND>&,
                                                     std::span<const Slice>);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::slice_assign(AutodiffTensor<KILN_AUTODIFF_BACKEND>,
                                                            std::span<const Slice>,
                                                            const AutodiffTensor<KILN_AUTODIFF_BACKEND>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::cat(std::span<const AutodiffTensor<KILN_AUTODIFF_BACKEND>>,
                                                   std::int64_t);

}  // namespace kiln
