// AutodiffOps convolution family: conv1d, conv2d, conv3d, conv_transpose1d,
// conv_transpose2d, conv_transpose3d. The inner backend's forward, and a backward step
// calling its adjoints (`conv2d_x_backward`, `conv2d_weight_backward`, `conv_bias_backward`,
// `conv_transpose2d_x_backward`, `conv_transpose2d_weight_backward` and the 3-D ones; the
// 1-D ops use the 2-D adjoints over a unit height), as PyTorch's convolution_backward and
// Burn's ModuleOps backward functions. First derivatives only. Instantiated here for
// Autodiff<Cpu>.
#include <array>
#include <optional>
#include <utility>

#include "autodiff/rule.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace autodiff::detail {

/// conv1d as conv2d over a unit height.
inline ConvOptions<2> conv1d_as_conv2d(const ConvOptions<1>& o) {
  return ConvOptions<2>({1, o.stride[0]}, {0, o.padding[0]}, {0, o.padding_end[0]},
                        {1, o.dilation[0]}, o.groups);
}

/// conv_transpose1d as conv_transpose2d over a unit height.
inline ConvTransposeOptions<2> conv_transpose1d_as_2d(const ConvTransposeOptions<1>& o) {
  return ConvTransposeOptions<2>({1, o.stride[0]}, {0, o.padding[0]}, {0, o.padding_out[0]},
                                 {1, o.dilation[0]}, o.groups);
}

/// [a, b, c] -> [a, b, 1, c].
inline Shape with_unit_height(const Shape& s) { return Shape{s[0], s[1], 1, s[2]}; }

}  // namespace autodiff::detail

/// The bias as an input of the prologue: the optional tensor, or an untracked stand-in.
template <Backend B>
const AutodiffTensor<B>* bias_input(const std::optional<AutodiffTensor<B>>& bias) {
  static const AutodiffTensor<B> none;
  return bias ? &*bias : &none;
}

/// The rule every op of the family shares: `forward(b)` on the inner backend (b the bias's
/// primitive, if any); the step adds `dx(x_shape, weight, g)`, `dw(x, weight_shape, g)` and
/// conv_bias_backward(g) for the tracked inputs, saving only what those need. With
/// `unit_height` (the 1-D ops) the adjoints are the 2-D ones over a unit height: x, the
/// weight and g are viewed as [a, b, 1, c] and the gradients viewed back.
template <Backend B, class Forward, class Dx, class Dw>
AutodiffTensor<B> conv_rule(const AutodiffTensor<B>& x, const AutodiffTensor<B>& weight,
                            const std::optional<AutodiffTensor<B>>& bias, bool unit_height,
                            Forward forward, Dx dx, Dw dw) {
  using Inner = typename AutodiffOps<B>::Inner;
  using P = typename AutodiffOps<B>::P;
  using autodiff::detail::with_unit_height;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)}, [&] { return forward(b); },
      [&](const P&) {
        const Shape xs = Inner::shape(x.primitive), ws = Inner::shape(weight.primitive);
        // The 1-D ops' views as 2-D ones (no copy); the others' tensors as they are.
        const auto lift = [unit_height](P t) {
          if (!unit_height) return t;
          const Shape lifted = with_unit_height(Inner::shape(t));
          return Inner::reshape(std::move(t), lifted.dims());
        };
        const auto lower = [unit_height](P t, const Shape& s) {
          return unit_height ? Inner::reshape(std::move(t), s.dims()) : t;
        };
        std::optional<P> x_saved, w_saved;  // only what the tracked inputs' gradients need
        if (weight.node) x_saved = lift(x.primitive);
        if (x.node) w_saved = lift(weight.primitive);
        const Shape xl = unit_height ? with_unit_height(xs) : xs;
        const Shape wl = unit_height ? with_unit_height(ws) : ws;
        return [xs, ws, xl, wl, x_saved, w_saved, lift, lower, dx, dw](P g,
                                                                        autodiff::GradSink<B>& s) {
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
          const P gl = lift(std::move(g));
          if (s.needs(0)) s.add(0, lower(dx(xl, *w_saved, gl), xs));
          if (s.needs(1)) s.add(1, lower(dw(*x_saved, wl, gl), ws));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv1d(const Tensor& x, const Tensor& weight,
                                         const std::optional<Tensor>& bias,
                                         const ConvOptions<1>& options) {
  const ConvOptions<2> o2 = autodiff::detail::conv1d_as_conv2d(options);
  return conv_rule<B>(
      x, weight, bias, true,
      [&](const std::optional<P>& b) {  // names conv1d in its messages
        return Inner::conv1d(x.primitive, weight.primitive, b, options);
      },
      [o2](const Shape& xs, const P& w, const P& g) { return Inner::conv2d_x_backward(xs, w, g, o2); },
      [o2](const P& xv, const Shape& ws, const P& g) {
        return Inner::conv2d_weight_backward(xv, ws, g, o2);
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv2d(const Tensor& x, const Tensor& weight,
                                         const std::optional<Tensor>& bias,
                                         const ConvOptions<2>& options) {
  return conv_rule<B>(
      x, weight, bias, false,
      [&](const std::optional<P>& b) {
        return Inner::conv2d(x.primitive, weight.primitive, b, options);
      },
      [options](const Shape& xs, const P& w, const P& g) {
        return Inner::conv2d_x_backward(xs, w, g, options);
      },
      [options](const P& xv, const Shape& ws, const P& g) {
        return Inner::conv2d_weight_backward(xv, ws, g, options);
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv_transpose2d(const Tensor& x, const Tensor& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const ConvTransposeOptions<2>& options) {
  return conv_rule<B>(
      x, weight, bias, false,
      [&](const std::optional<P>& b) {
        return Inner::conv_transpose2d(x.primitive, weight.primitive, b, options);
      },
      [options](const Shape& xs, const P& w, const P& g) {
        return Inner::conv_transpose2d_x_backward(xs, w, g, options);
      },
      [options](const P& xv, const Shape& ws, const P& g) {
        return Inner::conv_transpose2d_weight_backward(xv, ws, g, options);
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv3d(const Tensor& x, const Tensor& weight,
                                         const std::optional<Tensor>& bias,
                                         const ConvOptions<3>& options) {
  return conv_rule<B>(
      x, weight, bias, false,
      [&](const std::optional<P>& b) {
        return Inner::conv3d(x.primitive, weight.primitive, b, options);
      },
      [options](const Shape& xs, const P& w, const P& g) {
        return Inner::conv3d_x_backward(xs, w, g, options);
      },
      [options](const P& xv, const Shape& ws, const P& g) {
        return Inner::conv3d_weight_backward(xv, ws, g, options);
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv_transpose1d(const Tensor& x, const Tensor& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const ConvTransposeOptions<1>& options) {
  const ConvTransposeOptions<2> o2 = autodiff::detail::conv_transpose1d_as_2d(options);
  return conv_rule<B>(
      x, weight, bias, true,
      [&](const std::optional<P>& b) {
        return Inner::conv_transpose1d(x.primitive, weight.primitive, b, options);
      },
      [o2](const Shape& xs, const P& w, const P& g) {
        return Inner::conv_transpose2d_x_backward(xs, w, g, o2);
      },
      [o2](const P& xv, const Shape& ws, const P& g) {
        return Inner::conv_transpose2d_weight_backward(xv, ws, g, o2);
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv_transpose3d(const Tensor& x, const Tensor& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const ConvTransposeOptions<3>& options) {
  return conv_rule<B>(
      x, weight, bias, false,
      [&](const std::optional<P>& b) {
        return Inner::conv_transpose3d(x.primitive, weight.primitive, b, options);
      },
      [options](const Shape& xs, const P& w, const P& g) {
        return Inner::conv_transpose3d_x_backward(xs, w, g, options);
      },
      [options](const P& xv, const Shape& ws, const P& g) {
        return Inner::conv_transpose3d_weight_backward(xv, ws, g, options);
      });
}

// The backend instantiated here: Cpu, or the one a TU that includes this file defines
// (engine/src/wgpu/autodiff_instances.cpp: Wgpu).
#ifndef KILN_AUTODIFF_BACKEND
#define KILN_AUTODIFF_BACKEND Cpu
#endif
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::conv1d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<1>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::conv2d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<2>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::conv_transpose2d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<2>&);

template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::conv3d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<3>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::conv_transpose1d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<1>&);
template AutodiffTensor<KILN_AUTODIFF_BACKEND> AutodiffOps<KILN_AUTODIFF_BACKEND>::conv_transpose3d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<3>&);

}  // namespace kiln
