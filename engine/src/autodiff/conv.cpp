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

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv2d(const Tensor& x, const Tensor& weight,
                                         const std::optional<Tensor>& bias,
                                         const ConvOptions<2>& options) {
  using Sink = autodiff::GradSink<B>;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)},
      [&] { return Inner::conv2d(x.primitive, weight.primitive, b, options); },
      [&](const P&) {
        std::optional<P> x_saved, w_saved;  // only what the tracked inputs' gradients need
        if (weight.node) x_saved = x.primitive;
        if (x.node) w_saved = weight.primitive;
        return [xs = shape(x), ws = shape(weight), x_saved, w_saved, options](P g, Sink& s) {
          if (s.needs(0)) s.add(0, Inner::conv2d_x_backward(xs, *w_saved, g, options));
          if (s.needs(1)) s.add(1, Inner::conv2d_weight_backward(*x_saved, ws, g, options));
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv1d(const Tensor& x, const Tensor& weight,
                                         const std::optional<Tensor>& bias,
                                         const ConvOptions<1>& options) {
  using Sink = autodiff::GradSink<B>;
  using autodiff::detail::with_unit_height;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)},
      [&] { return Inner::conv1d(x.primitive, weight.primitive, b, options); },  // names conv1d
      [&](const P&) {
        const Shape xs = shape(x), ws = shape(weight);
        std::optional<P> x_saved, w_saved;
        if (weight.node) x_saved = Inner::reshape(x.primitive, with_unit_height(xs).dims());
        if (x.node) w_saved = Inner::reshape(weight.primitive, with_unit_height(ws).dims());
        const ConvOptions<2> o2 = autodiff::detail::conv1d_as_conv2d(options);
        return [xs, ws, x_saved, w_saved, o2](P g, Sink& s) {
          const Shape gs = Inner::shape(g);
          P g4 = Inner::reshape(g, with_unit_height(gs).dims());
          if (s.needs(0)) {
            P dx = Inner::conv2d_x_backward(with_unit_height(xs), *w_saved, g4, o2);
            s.add(0, Inner::reshape(std::move(dx), xs.dims()));
          }
          if (s.needs(1)) {
            P dw = Inner::conv2d_weight_backward(*x_saved, with_unit_height(ws), g4, o2);
            s.add(1, Inner::reshape(std::move(dw), ws.dims()));
          }
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv_transpose2d(const Tensor& x, const Tensor& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const ConvTransposeOptions<2>& options) {
  using Sink = autodiff::GradSink<B>;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)},
      [&] { return Inner::conv_transpose2d(x.primitive, weight.primitive, b, options); },
      [&](const P&) {
        std::optional<P> x_saved, w_saved;
        if (weight.node) x_saved = x.primitive;
        if (x.node) w_saved = weight.primitive;
        return [xs = shape(x), ws = shape(weight), x_saved, w_saved, options](P g, Sink& s) {
          if (s.needs(0)) s.add(0, Inner::conv_transpose2d_x_backward(xs, *w_saved, g, options));
          if (s.needs(1)) {
            s.add(1, Inner::conv_transpose2d_weight_backward(*x_saved, ws, g, options));
          }
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv3d(const Tensor& x, const Tensor& weight,
                                         const std::optional<Tensor>& bias,
                                         const ConvOptions<3>& options) {
  using Sink = autodiff::GradSink<B>;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)},
      [&] { return Inner::conv3d(x.primitive, weight.primitive, b, options); },
      [&](const P&) {
        std::optional<P> x_saved, w_saved;
        if (weight.node) x_saved = x.primitive;
        if (x.node) w_saved = weight.primitive;
        return [xs = shape(x), ws = shape(weight), x_saved, w_saved, options](P g, Sink& s) {
          if (s.needs(0)) s.add(0, Inner::conv3d_x_backward(xs, *w_saved, g, options));
          if (s.needs(1)) s.add(1, Inner::conv3d_weight_backward(*x_saved, ws, g, options));
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv_transpose1d(const Tensor& x, const Tensor& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const ConvTransposeOptions<1>& options) {
  using Sink = autodiff::GradSink<B>;
  using autodiff::detail::with_unit_height;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)},
      [&] { return Inner::conv_transpose1d(x.primitive, weight.primitive, b, options); },
      [&](const P&) {
        const Shape xs = shape(x), ws = shape(weight);
        std::optional<P> x_saved, w_saved;
        if (weight.node) x_saved = Inner::reshape(x.primitive, with_unit_height(xs).dims());
        if (x.node) w_saved = Inner::reshape(weight.primitive, with_unit_height(ws).dims());
        const ConvTransposeOptions<2> o2 = autodiff::detail::conv_transpose1d_as_2d(options);
        return [xs, ws, x_saved, w_saved, o2](P g, Sink& s) {
          const Shape gs = Inner::shape(g);
          P g4 = Inner::reshape(g, with_unit_height(gs).dims());
          if (s.needs(0)) {
            P dx = Inner::conv_transpose2d_x_backward(with_unit_height(xs), *w_saved, g4, o2);
            s.add(0, Inner::reshape(std::move(dx), xs.dims()));
          }
          if (s.needs(1)) {
            P dw = Inner::conv_transpose2d_weight_backward(*x_saved, with_unit_height(ws), g4, o2);
            s.add(1, Inner::reshape(std::move(dw), ws.dims()));
          }
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
        };
      });
}

template <Backend B>
AutodiffTensor<B> AutodiffOps<B>::conv_transpose3d(const Tensor& x, const Tensor& weight,
                                                   const std::optional<Tensor>& bias,
                                                   const ConvTransposeOptions<3>& options) {
  using Sink = autodiff::GradSink<B>;
  std::optional<P> b;
  if (bias) b = bias->primitive;
  return autodiff::detail::apply<B>(
      {&x, &weight, bias_input<B>(bias)},
      [&] { return Inner::conv_transpose3d(x.primitive, weight.primitive, b, options); },
      [&](const P&) {
        std::optional<P> x_saved, w_saved;
        if (weight.node) x_saved = x.primitive;
        if (x.node) w_saved = weight.primitive;
        return [xs = shape(x), ws = shape(weight), x_saved, w_saved, options](P g, Sink& s) {
          if (s.needs(0)) s.add(0, Inner::conv_transpose3d_x_backward(xs, *w_saved, g, options));
          if (s.needs(1)) {
            s.add(1, Inner::conv_transpose3d_weight_backward(*x_saved, ws, g, options));
          }
          if (s.needs(2)) s.add(2, Inner::conv_bias_backward(g));
        };
      });
}

template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv1d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<1>&);
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv2d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<2>&);
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv_transpose2d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<2>&);

template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv3d(const Tensor&, const Tensor&,
                                                      const std::optional<Tensor>&,
                                                      const ConvOptions<3>&);
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv_transpose1d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<1>&);
template AutodiffTensor<Cpu> AutodiffOps<Cpu>::conv_transpose3d(const Tensor&, const Tensor&,
                                                                const std::optional<Tensor>&,
                                                                const ConvTransposeOptions<3>&);

}  // namespace kiln
