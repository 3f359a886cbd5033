#pragma once
// gradcheck: analytic gradients of Autodiff<Cpu> against central finite differences of the
// float32 function (PyTorch's torch.autograd.gradcheck, tiny-dnn's gradient_check, ggml's
// grad mode), for use in GoogleTest:
//
//   test::Sampler rng(42);                                   // seeded, host-generated values
//   auto a = rng.uniform<2>(Shape{3, 1}, -1, 1);
//   auto b = rng.uniform<2>(Shape{1, 4}, -1, 1);
//   EXPECT_TRUE(test::gradcheck("mul", [](Tensor<AD, 2> a, Tensor<AD, 2> b) { return a * b; },
//                               a, b));
//
// What is checked. f takes N float tensors of Autodiff<Cpu> (any ranks) and returns one float
// tensor y (any rank). With fixed pseudo-random weights w (one per element of y, |w_k| in
// [0.5, 1.5), random sign, so every entry of the Jacobian counts, not just its column sums),
//   L(x) = Σ_k w_k · y_k(x).
// Analytic: each input becomes a fresh leaf (require_grad), L is built on the graph as
// (y * w).sum() and back-propagated. The tracked forward must reproduce the untracked output
// bit for bit. Numeric: for every element x_j of every input, central differences
//   D(h) = (L(x + h·e_j) - L(x - h·e_j)) / (x_j⁺ - x_j⁻)
// with f evaluated on untracked tensors in float32 and L accumulated in double on the host
// from to_data(); x_j⁺ = fl(x_j + h), x_j⁻ = fl(x_j - h) are the float32 values actually fed
// to f, so the divisor is exact. Two of them, at h and h/2, are combined by Richardson
// extrapolation, numeric = (4·D(h/2) - D(h)) / 3 (with the exact divisors), which cancels
// the h² term of the truncation error.
//
// Step, float32: h_j = 1e-2 · max(1, |x_j|).
//   Truncation: D(h) alone is off by h²·|f'''|/6, 1.7e-5·|f'''| at h = 1e-2, more than the
//   float32 roundoff for curved f (x^-2 near 0.3 has f''' ~ 1e3); after extrapolation
//   h⁴·|f⁽⁵⁾|/480 ~ 2e-11·|f⁽⁵⁾| remains, negligible.
//   Roundoff: each y_k is off by c ulps, c·u·|y_k| with u = 2^-24 ≈ 6e-8, so D(h) is off by
//   about c·u·S_j/h, S_j = Σ |w_k|·|y_k| over the outputs that x_j moves (f is deterministic:
//   the other outputs are bit-identical in both evaluations and cancel exactly); the
//   extrapolation triples it. Roundoff thus favours a large h, and the kinks a small one:
//   samples must lie at least h_j from any kink or jump of f (relu at 0, the bounds of
//   clamp, integers of a/b for remainder, ties of max); 1e-2 lets the tests keep a margin of
//   0.1 for |x| <= 3.
//
// Tolerance: element j passes when both values are finite and
//   |analytic - numeric| <= atol + rtol·|numeric| + roundoff_j,
// roundoff_j being the extrapolated bound above with c = roundoff_ulps and |y_k| replaced by
// max(1, |y_k|) (the error of a sum scales with its terms, not with the result). Defaults:
//   roundoff_ulps = 16: an op is within a few ulps; compositions and sums of up to ~50 terms
//     add more. Over 81 seeds of gradcheck_test.cpp the largest |analytic - numeric| was 0.3
//     of the tolerance (a sum of 48 elements). Raise it for longer reductions.
//   rtol = 1e-4: the float32 error of the analytic gradient itself and what is left of the
//     truncation; atol = 1e-5: a floor for gradients near 0.
// For an element-wise output of size ~1 the tolerance is about 1e-5 + 1e-4·|numeric| +
// 3e-4·|w_j|: an analytic gradient off by 0.1% is reported (gradcheck_test.cpp in this
// directory shows it); one off by less than 0.01% is not.
//
// On failure the message names the op, the input index and its shape, the element (flat
// and multi-index), analytic vs numeric, the tolerance, x_j, h_j and both central
// differences; the first 8 failing elements are listed with the total count.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::test {

/// Step and tolerances of gradcheck (see the file comment for where the defaults come from).
struct GradcheckOptions {
  double step = 1e-2;               ///< h_j = step · max(1, |x_j|)
  double rtol = 1e-4;               ///< relative to |numeric|
  double atol = 1e-5;               ///< absolute floor
  double roundoff_ulps = 16.0;      ///< ulps of float32 error assumed per moved output
  std::uint64_t seed = 0x6b696c6e;  ///< seed of the weights w ("kiln")
};

namespace detail {

/// The function under test, type-erased over its ranks so that the checking logic
/// (gradcheck.cpp) compiles once.
struct GradcheckProblem {
  std::vector<TensorData> inputs;
  /// f at the given inputs, on untracked tensors.
  std::function<TensorData(const std::vector<TensorData>&)> forward;
  /// f at the given inputs made leaves, then backward of Σ w ⊙ f: the output and, per
  /// input, its gradient (nullopt when the graph does not reach it).
  std::function<std::pair<TensorData, std::vector<std::optional<TensorData>>>(
      const std::vector<TensorData>&, const std::vector<float>& weights)>
      analytic;
};

::testing::AssertionResult run_gradcheck(std::string_view op, const GradcheckProblem& problem,
                                         const GradcheckOptions& options);

template <std::size_t D>
std::optional<TensorData> grad_data(const std::optional<Tensor<Cpu, D>>& grad) {
  if (!grad) return std::nullopt;
  return grad->to_data();
}

template <class F, std::size_t... Ds, std::size_t... Is>
GradcheckProblem make_problem(F f, std::index_sequence<Is...>,
                              const Tensor<Autodiff<Cpu>, Ds>&... inputs) {
  using AD = Autodiff<Cpu>;
  GradcheckProblem problem;
  problem.inputs = {inputs.to_data()...};
  problem.forward = [f](const std::vector<TensorData>& xs) {
    return f(Tensor<AD, Ds>::from_data(xs[Is])...).to_data();
  };
  problem.analytic = [f](const std::vector<TensorData>& xs, const std::vector<float>& weights) {
    std::tuple<Tensor<AD, Ds>...> leaves{Tensor<AD, Ds>::from_data(xs[Is]).require_grad()...};
    auto out = f(std::get<Is>(leaves)...);
    using Out = decltype(out);
    std::pair<TensorData, std::vector<std::optional<TensorData>>> result;
    result.first = out.to_data();
    if (!out.is_require_grad()) {  // f does not depend on any input through the graph
      result.second.resize(sizeof...(Ds));
      return result;
    }
    auto w = Out::from_data(TensorData(out.shape(), weights));
    auto grads = (out * w).sum().backward();
    result.second = {grad_data(std::get<Is>(leaves).grad(grads))...};
    return result;
  };
  return problem;
}

}  // namespace detail

/// Checks f's analytic gradients with respect to every input against central finite
/// differences (method, step and tolerances: the file comment). `inputs` give the values
/// (whether they require gradients is ignored); `op` names the check in failure messages.
template <class F, std::size_t... Ds>
::testing::AssertionResult gradcheck(const GradcheckOptions& options, std::string_view op, F f,
                                     const Tensor<Autodiff<Cpu>, Ds>&... inputs) {
  return detail::run_gradcheck(
      op, detail::make_problem(std::move(f), std::make_index_sequence<sizeof...(Ds)>{}, inputs...),
      options);
}
template <class F, std::size_t... Ds>
::testing::AssertionResult gradcheck(std::string_view op, F f,
                                     const Tensor<Autodiff<Cpu>, Ds>&... inputs) {
  return gradcheck(GradcheckOptions{}, op, std::move(f), inputs...);
}

/// Seeded random inputs for gradchecks (host-generated, reproducible on every platform).
class Sampler {
 public:
  explicit Sampler(std::uint64_t seed) : state_(seed) {}
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi);
  /// Uniform magnitude in [lo, hi) with a random sign: away from 0 by lo.
  double signed_magnitude(double lo, double hi);
  /// An integer in [lo, hi].
  std::int64_t integer(std::int64_t lo, std::int64_t hi);
  /// A shape of rank D with dims in [1, max_dim].
  Shape shape(std::size_t rank, std::int64_t max_dim);
  /// Values uniform in [lo, hi) of the given shape.
  TensorData uniform_data(const Shape& shape, double lo, double hi);
  /// Values whose magnitudes are uniform in [lo, hi) with random signs.
  TensorData signed_data(const Shape& shape, double lo, double hi);
  /// Values uniform in [lo, hi), each at least `margin` away from every point of `avoid`
  /// (kinks of the op under test), redrawn until so.
  TensorData uniform_away(const Shape& shape, double lo, double hi,
                          const std::vector<double>& avoid, double margin);
  /// Distinct values spaced by `spacing` (a shuffled grid centred on 0.1), so no ties and
  /// no two values within a finite-difference step of each other.
  TensorData distinct(const Shape& shape, double spacing);

  template <std::size_t D>
  Tensor<Autodiff<Cpu>, D> uniform(const Shape& shape, double lo, double hi) {
    return Tensor<Autodiff<Cpu>, D>::from_data(uniform_data(shape, lo, hi));
  }
  template <std::size_t D>
  Tensor<Autodiff<Cpu>, D> signed_values(const Shape& shape, double lo, double hi) {
    return Tensor<Autodiff<Cpu>, D>::from_data(signed_data(shape, lo, hi));
  }

 private:
  std::uint64_t next();
  std::uint64_t state_;
};

}  // namespace kiln::test
