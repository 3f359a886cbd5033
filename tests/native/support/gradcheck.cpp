#include "support/gradcheck.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <sstream>
#include <string>

namespace kiln::test {
namespace {

constexpr double kUnitRoundoff = 0x1p-24;  // float32
constexpr int kMaxListed = 8;              // failing elements listed per message

/// Row-major multi-index of flat element j, as "[a, b, c]".
std::string multi_index(const Shape& shape, std::int64_t j) {
  std::vector<std::int64_t> idx(shape.rank());
  for (std::size_t d = shape.rank(); d-- > 0;) {
    idx[d] = j % shape[d];
    j /= shape[d];
  }
  std::ostringstream out;
  out << '[';
  for (std::size_t d = 0; d < idx.size(); ++d) out << (d ? ", " : "") << idx[d];
  out << ']';
  return out.str();
}

struct Central {
  double value;     // the difference quotient
  double width;     // x⁺ - x⁻ as fed to f
  double roundoff;  // bound on its float32 roundoff
};

double weighted_sum(const std::vector<float>& w, const std::vector<float>& y) {
  double l = 0.0;
  for (std::size_t k = 0; k < y.size(); ++k) l += static_cast<double>(w[k]) * y[k];
  return l;
}

}  // namespace

namespace detail {

::testing::AssertionResult run_gradcheck(std::string_view op, const GradcheckProblem& problem,
                                         const GradcheckOptions& options) {
  const std::string name = "gradcheck \"" + std::string(op) + "\"";
  const TensorData y0 = problem.forward(problem.inputs);
  if (y0.dtype != DType::F32) {
    return ::testing::AssertionFailure() << name << ": f must return a Float tensor";
  }
  const std::vector<float> y0v = y0.to_vec<float>();

  // Weights ±[0.5, 1.5): every output enters L with its own non-negligible factor.
  Sampler weights_rng(options.seed);
  std::vector<float> w(y0v.size());
  for (auto& wk : w) wk = static_cast<float>(weights_rng.signed_magnitude(0.5, 1.5));

  auto [y_tracked, grads] = problem.analytic(problem.inputs, w);
  if (!(y_tracked == y0)) {
    const auto yt = y_tracked.to_vec<float>();
    std::ostringstream msg;
    msg << std::setprecision(9) << name
        << ": the tracked forward differs from the untracked one: shapes " << y_tracked.shape
        << " vs " << y0.shape;
    for (std::size_t k = 0; k < std::min(yt.size(), y0v.size()); ++k) {
      if (!(yt[k] == y0v[k]) && !(std::isnan(yt[k]) && std::isnan(y0v[k]))) {
        msg << ", first at element " << k << ": " << yt[k] << " vs " << y0v[k];
        break;
      }
    }
    return ::testing::AssertionFailure() << msg.str();
  }

  std::ostringstream failures;
  failures << std::setprecision(7);
  std::int64_t failed = 0, checked = 0;
  for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
    const TensorData& input = problem.inputs[i];
    if (input.dtype != DType::F32) {
      return ::testing::AssertionFailure() << name << ": input " << i << " is not Float";
    }
    const Shape& shape = input.shape;
    std::vector<float> analytic(static_cast<std::size_t>(shape.num_elements()), 0.f);
    if (grads[i]) {  // no gradient: the graph does not reach input i, so it is 0
      if (!(grads[i]->shape == shape)) {
        return ::testing::AssertionFailure() << name << ": input " << i << " has shape " << shape
                                             << " but its gradient has " << grads[i]->shape;
      }
      analytic = grads[i]->to_vec<float>();
    }
    const std::vector<float> x = input.to_vec<float>();
    std::vector<TensorData> perturbed = problem.inputs;
    for (std::size_t j = 0; j < x.size(); ++j) {
      // One central difference of half-width `step` and its roundoff bound.
      const auto central = [&](double step) {
        const float x_plus = static_cast<float>(x[j] + step);
        const float x_minus = static_cast<float>(x[j] - step);
        std::vector<float> xv = x;
        xv[j] = x_plus;
        perturbed[i] = TensorData(shape, xv);
        const std::vector<float> y_plus = problem.forward(perturbed).to_vec<float>();
        xv[j] = x_minus;
        perturbed[i] = TensorData(shape, xv);
        const std::vector<float> y_minus = problem.forward(perturbed).to_vec<float>();
        perturbed[i] = input;
        // The float32 inputs actually fed to f: their difference is exact in double.
        const double width = static_cast<double>(x_plus) - static_cast<double>(x_minus);
        double moved = 0.0;  // S_j: outputs that x_j moves; the others cancel exactly
        for (std::size_t k = 0; k < y_plus.size(); ++k) {
          if (y_plus[k] != y_minus[k]) {
            const double size = std::max({1.0, std::abs(static_cast<double>(y_plus[k])),
                                          std::abs(static_cast<double>(y_minus[k]))});
            moved += std::abs(static_cast<double>(w[k])) * size;
          }
        }
        return Central{(weighted_sum(w, y_plus) - weighted_sum(w, y_minus)) / width, width,
                       2.0 * options.roundoff_ulps * kUnitRoundoff * moved / width};
      };
      const double h = options.step * std::max(1.0, std::abs(static_cast<double>(x[j])));
      const Central d1 = central(h), d2 = central(h / 2);
      // Richardson: D(h) = f' + c·h² + O(h⁴), so this combination cancels the h² term; its
      // roundoff is the same combination of the two bounds (about 3 times D(h)'s).
      const double s1 = d1.width * d1.width, s2 = d2.width * d2.width;
      const double numeric = (s1 * d2.value - s2 * d1.value) / (s1 - s2);
      const double roundoff = (s1 * d2.roundoff + s2 * d1.roundoff) / (s1 - s2);
      const double tolerance = options.atol + options.rtol * std::abs(numeric) + roundoff;
      const double a = analytic[j];
      const bool ok =
          std::isfinite(a) && std::isfinite(numeric) && std::abs(a - numeric) <= tolerance;
      ++checked;
      if (ok) continue;
      if (failed++ < kMaxListed) {
        failures << "\n  input " << i << " " << shape << ", element " << j << " "
                 << multi_index(shape, static_cast<std::int64_t>(j)) << ": analytic " << a
                 << " vs numeric " << numeric << " (|diff| " << std::abs(a - numeric)
                 << " > tolerance " << tolerance << "; x = " << x[j] << ", h = " << h
                 << ", central differences " << d1.value << " at h, " << d2.value << " at h/2)";
      }
    }
  }
  if (failed == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << ": " << failed << " of " << checked
                                       << " gradient elements differ from central differences"
                                       << failures.str() << (failed > kMaxListed ? "\n  ..." : "");
}

}  // namespace detail

// splitmix64 (Steele, Lea & Flood 2014): tiny, seedable, identical on every platform.
std::uint64_t Sampler::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double Sampler::uniform(double lo, double hi) {
  const double u = static_cast<double>(next() >> 11) * 0x1p-53;  // [0, 1)
  return lo + (hi - lo) * u;
}

double Sampler::signed_magnitude(double lo, double hi) {
  const double m = uniform(lo, hi);
  return (next() & 1) ? m : -m;
}

std::int64_t Sampler::integer(std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
}

Shape Sampler::shape(std::size_t rank, std::int64_t max_dim) {
  std::vector<std::int64_t> dims(rank);
  for (auto& d : dims) d = integer(1, max_dim);
  return Shape(dims);
}

TensorData Sampler::uniform_data(const Shape& shape, double lo, double hi) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (auto& x : v) x = static_cast<float>(uniform(lo, hi));
  return TensorData(shape, std::move(v));
}

TensorData Sampler::signed_data(const Shape& shape, double lo, double hi) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (auto& x : v) x = static_cast<float>(signed_magnitude(lo, hi));
  return TensorData(shape, std::move(v));
}

TensorData Sampler::uniform_away(const Shape& shape, double lo, double hi,
                                 const std::vector<double>& avoid, double margin) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (auto& x : v) {
    bool near = true;
    while (near) {
      x = static_cast<float>(uniform(lo, hi));
      near = std::any_of(avoid.begin(), avoid.end(),
                         [&](double p) { return std::abs(x - p) < margin; });
    }
  }
  return TensorData(shape, std::move(v));
}

TensorData Sampler::distinct(const Shape& shape, double spacing) {
  const auto n = static_cast<std::size_t>(shape.num_elements());
  std::vector<float> v(n);
  for (std::size_t k = 0; k < n; ++k) {
    v[k] =
        static_cast<float>((static_cast<double>(k) - static_cast<double>(n) / 2) * spacing + 0.1);
  }
  for (std::size_t k = n; k > 1; --k) {  // Fisher-Yates
    std::swap(v[k - 1], v[static_cast<std::size_t>(integer(0, static_cast<std::int64_t>(k) - 1))]);
  }
  return TensorData(shape, std::move(v));
}

}  // namespace kiln::test
