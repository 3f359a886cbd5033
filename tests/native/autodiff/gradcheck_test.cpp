// Gradients of every differentiable op of the tensor core on Autodiff<Cpu>, checked against
// central finite differences (support/gradcheck.hpp: step 1e-2·max(1, |x|), tolerances
// stated there) on seeded random shapes, with broadcasting, size-1 dims and inputs that
// reach the op through transpose / permute / flip / slice of a tracked leaf. Samples stay
// at least 0.1 away from every kink (relu at 0, clamp bounds, integers of a/b, ties), where
// PyTorch fixes a convention instead; kinks_test.cpp checks those by hand. Shape and
// indexing ops: gradcheck_shape_test.cpp.
#include "support/gradcheck.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
template <std::size_t D>
using T = Tensor<AD, D>;
using test::gradcheck;

constexpr double kMargin = 0.1;  // distance of every sample from a kink (> 3·h for |x| <= 3)

template <std::size_t D>
T<D> tensor(const TensorData& data) {
  return T<D>::from_data(data);
}

/// An op of one rank-3 input, with the range and the kinks its samples must avoid.
struct UnaryCase {
  std::string name;
  double lo, hi;
  std::vector<double> avoid;
  std::function<T<3>(T<3>)> f;
};

/// Runs each case on three random rank-3 shapes (dims 1..4, so size-1 dims occur), on a
/// [4, 2, 3] leaf that reaches f permuted and flipped, and on a one-element rank-1 leaf.
void check_unary_cases(const std::vector<UnaryCase>& cases, std::uint64_t seed) {
  test::Sampler rng(seed);
  for (const auto& c : cases) {
    for (int k = 0; k < 3; ++k) {
      const Shape s = rng.shape(3, 4);
      auto x = tensor<3>(rng.uniform_away(s, c.lo, c.hi, c.avoid, kMargin));
      EXPECT_TRUE(gradcheck(str_cat(c.name, " ", s), c.f, x));
    }
    auto leaf = tensor<3>(rng.uniform_away(Shape{4, 2, 3}, c.lo, c.hi, c.avoid, kMargin));
    EXPECT_TRUE(gradcheck(
        c.name + " of permute+flip",
        [&](T<3> x) {
          return c.f(x.permute({2, 0, 1}).flip({1}));
        },
        leaf));
    auto one = tensor<1>(rng.uniform_away(Shape{1}, c.lo, c.hi, c.avoid, kMargin));
    EXPECT_TRUE(gradcheck(
        c.name + " [1]",
        [&](T<1> x) {
          return c.f(x.reshape<3>({1, 1, 1}));
        },
        one));
  }
}

std::vector<double> multiples(double step, double lo, double hi) {
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi; v += step) out.push_back(v);
  return out;
}

// ------------------------------------------------------------------ element-wise

TEST(GradcheckElementwise, UnaryMath) {
  const std::vector<UnaryCase> cases = {
      {"neg", -2, 2, {}, [](T<3> x) { return -x; }},
      {"neg()", -2, 2, {}, [](T<3> x) { return x.neg(); }},
      {"abs", -2, 2, {0.0}, [](T<3> x) { return x.abs(); }},
      {"exp", -2, 2, {}, [](T<3> x) { return x.exp(); }},
      {"log", 0.3, 3, {}, [](T<3> x) { return x.log(); }},
      {"log1p", -0.6, 2, {}, [](T<3> x) { return x.log1p(); }},
      {"sqrt", 0.3, 3, {}, [](T<3> x) { return x.sqrt(); }},
      {"sin", -3, 3, {}, [](T<3> x) { return x.sin(); }},
      {"cos", -3, 3, {}, [](T<3> x) { return x.cos(); }},
      {"tanh", -2, 2, {}, [](T<3> x) { return x.tanh(); }},
      // |x| >= 0.5 on both signs (x + 0.4·sign(x), sign passing no gradient): near 0, 1/x
      // bends too sharply for a difference step of 1e-2.
      {"recip", -2, 2, {0.0}, [](T<3> x) { return (x + x.sign() * 0.4f).recip(); }},
      {"recip alone", 0.5, 2, {}, [](T<3> x) { return x.recip(); }},
      {"erf", -2, 2, {}, [](T<3> x) { return x.erf(); }},
      // Piecewise constant: gradient 0 between the jumps, which the samples avoid.
      {"floor", -3, 3, multiples(1, -3, 3), [](T<3> x) { return x.floor(); }},
      {"ceil", -3, 3, multiples(1, -3, 3), [](T<3> x) { return x.ceil(); }},
      {"round", -3, 3, multiples(1, -3.5, 3.5), [](T<3> x) { return (x + 0.5f).round(); }},
      {"sign", -2, 2, {0.0}, [](T<3> x) { return x.sign() + x; }},
  };
  check_unary_cases(cases, 101);
}

TEST(GradcheckElementwise, ScalarOpsOnEitherSide) {
  const std::vector<UnaryCase> cases = {
      {"x + 1.5", -2, 2, {}, [](T<3> x) { return x + 1.5f; }},
      {"1.5 + x", -2, 2, {}, [](T<3> x) { return 1.5f + x; }},
      {"x - 1.5", -2, 2, {}, [](T<3> x) { return x - 1.5f; }},
      {"2 - x", -2, 2, {}, [](T<3> x) { return 2 - x; }},
      {"x * -1.5", -2, 2, {}, [](T<3> x) { return x * -1.5f; }},
      {"2.5 * x", -2, 2, {}, [](T<3> x) { return 2.5 * x; }},
      {"x / -1.5", -2, 2, {}, [](T<3> x) { return x / -1.5f; }},
      {"1.5 / x", -2, 2, {0.0}, [](T<3> x) { return 1.5f / (x + x.sign() * 0.4f); }},
      {"-3 / x", 0.5, 2, {}, [](T<3> x) { return -3.f / x; }},
      {"add/sub/mul/div_scalar",
       -2,
       2,
       {},
       [](T<3> x) { return x.add_scalar(1).mul_scalar(-2).sub_scalar(0.5).div_scalar(3) * x; }},
      {"powf_scalar 2", 0.3, 3, {}, [](T<3> x) { return x.powf_scalar(2); }},
      {"powf_scalar 3 (negative base)", -2, 2, {}, [](T<3> x) { return x.powf_scalar(3); }},
      {"powf_scalar 0.5", 0.3, 3, {}, [](T<3> x) { return x.powf_scalar(0.5); }},
      {"powf_scalar -1.5", 0.6, 3, {}, [](T<3> x) { return x.powf_scalar(-1.5); }},
      {"powf_scalar 1", -2, 2, {}, [](T<3> x) { return x.powf_scalar(1); }},
      {"powf_scalar 0", -2, 2, {}, [](T<3> x) { return x.powf_scalar(0) * x; }},
      {"x % 1.5", -3, 3, multiples(1.5, -3, 3), [](T<3> x) { return x % 1.5f; }},
      {"remainder_scalar -0.7", -3, 3, multiples(0.7, -3, 3),
       [](T<3> x) { return x.remainder_scalar(-0.7); }},
      {"fmod_scalar 1.5", -3, 3, multiples(1.5, -3, 3), [](T<3> x) { return x.fmod_scalar(1.5); }},
      {"fmod_scalar -0.7", -3, 3, multiples(0.7, -3, 3),
       [](T<3> x) { return x.fmod_scalar(-0.7); }},
  };
  check_unary_cases(cases, 202);
}

TEST(GradcheckElementwise, ClampAwayFromTheBounds) {
  const std::vector<UnaryCase> cases = {
      {"clamp -0.5 0.7", -2, 2, {-0.5, 0.7}, [](T<3> x) { return x.clamp(-0.5f, 0.7f); }},
      {"clamp_min 0.3", -2, 2, {0.3}, [](T<3> x) { return x.clamp_min(0.3f); }},
      {"clamp_max -0.2", -2, 2, {-0.2}, [](T<3> x) { return x.clamp_max(-0.2f); }},
      {"clamp (rvalue)", -2, 2, {-1.0, 1.0}, [](T<3> x) { return (x * 1.f).clamp(-1.f, 1.f); }},
  };
  check_unary_cases(cases, 303);
}

/// Binary ops between leaves of shapes ls and rs (equal rank, broadcast).
template <std::size_t D>
void check_binary(test::Sampler& rng, const Shape& ls, const Shape& rs) {
  const std::string tag = str_cat(" ", ls, " op ", rs);
  auto a = tensor<D>(rng.uniform_data(ls, -2, 2));
  auto b = tensor<D>(rng.uniform_data(rs, -2, 2));
  EXPECT_TRUE(gradcheck(
      "add" + tag, [](T<D> a, T<D> b) { return a + b; }, a, b));
  EXPECT_TRUE(gradcheck(
      "sub" + tag, [](T<D> a, T<D> b) { return a - b; }, a, b));
  EXPECT_TRUE(gradcheck(
      "mul" + tag, [](T<D> a, T<D> b) { return a * b; }, a, b));
  EXPECT_TRUE(gradcheck(
      "add/sub/mul named" + tag, [](T<D> a, T<D> b) { return a.add(b).mul(b).sub(a); }, a, b));
  auto d = tensor<D>(rng.signed_data(rs, 0.5, 2));
  EXPECT_TRUE(gradcheck(
      "div" + tag, [](T<D> a, T<D> d) { return a / d; }, a, d));
  EXPECT_TRUE(gradcheck(
      "div named" + tag, [](T<D> a, T<D> d) { return a.div(d); }, a, d));

  // powf: positive base, both gradients (the exponent's is out·log(base)).
  auto base = tensor<D>(rng.uniform_data(ls, 0.3, 2.5));
  EXPECT_TRUE(gradcheck(
      "powf" + tag, [](T<D> x, T<D> e) { return x.powf(e); }, base, b));

  // max_pair / min_pair: redraw until every broadcast pair is at least kMargin apart.
  auto c = b;
  for (int tries = 0; (a - c).abs().min().into_scalar() < kMargin; ++tries) {
    ASSERT_LT(tries, 10000) << "no distinct pair found for" << tag;
    c = tensor<D>(rng.uniform_data(rs, -2, 2));
  }
  EXPECT_TRUE(gradcheck(
      "max_pair" + tag, [](T<D> a, T<D> c) { return a.max_pair(c); }, a, c));
  EXPECT_TRUE(gradcheck(
      "min_pair" + tag, [](T<D> a, T<D> c) { return a.min_pair(c); }, a, c));

  // remainder / fmod with |a/b| in [0.175, 0.83]: the quotient stays off the integers (the
  // jumps), and negative quotients give floor = -1, so d/db = -g·floor(a/b) is exercised.
  auto num = tensor<D>(rng.signed_data(ls, 0.35, 1.25));
  auto den = tensor<D>(rng.signed_data(rs, 1.5, 2));
  EXPECT_TRUE(gradcheck(
      "remainder %" + tag, [](T<D> a, T<D> b) { return a % b; }, num, den));
  EXPECT_TRUE(gradcheck(
      "remainder" + tag, [](T<D> a, T<D> b) { return a.remainder(b); }, num, den));
  EXPECT_TRUE(gradcheck(
      "fmod" + tag, [](T<D> a, T<D> b) { return a.fmod(b); }, num, den));
  if (!(ls == rs)) return;
  // Same shapes: a = b·(n + f), n in -3..3, f in [0.2, 0.8], so floor and trunc of a/b
  // take values from -4 to 3 and differ for negative quotients.
  std::vector<float> wide = den.to_data().template to_vec<float>();
  for (auto& v : wide) {
    v *= static_cast<float>(static_cast<double>(rng.integer(-3, 3)) + rng.uniform(0.2, 0.8));
  }
  auto far = tensor<D>(TensorData(ls, wide));
  EXPECT_TRUE(gradcheck(
      "remainder |a/b| up to 4" + tag, [](T<D> a, T<D> b) { return a % b; }, far, den));
  EXPECT_TRUE(gradcheck(
      "fmod |a/b| up to 4" + tag, [](T<D> a, T<D> b) { return a.fmod(b); }, far, den));
}

TEST(GradcheckElementwise, BinaryOpsSameShapeAndBroadcast) {
  test::Sampler rng(404);
  const Shape same2 = rng.shape(2, 4), same3 = rng.shape(3, 4);
  check_binary<2>(rng, same2, same2);
  check_binary<3>(rng, same3, same3);
  check_binary<2>(rng, {3, 1}, {1, 4});
  check_binary<2>(rng, {1, 4}, {3, 1});
  check_binary<3>(rng, {2, 1, 3}, {1, 4, 1});
  check_binary<3>(rng, {1, 1, 1}, {2, 3, 2});
  check_binary<3>(rng, {2, 3, 2}, {1, 1, 1});
  check_binary<1>(rng, {5}, {1});
}

TEST(GradcheckElementwise, BinaryOpsAcrossRanksAndLayouts) {
  test::Sampler rng(505);
  // [2, 1, 3] op [4, 1]: the rank-2 leaf is unsqueezed to [1, 4, 1] inside f.
  auto a = rng.uniform<3>(Shape{2, 1, 3}, -2, 2);
  auto b = rng.uniform<2>(Shape{4, 1}, -2, 2);
  auto d = rng.signed_values<2>(Shape{4, 1}, 0.5, 2);
  EXPECT_TRUE(gradcheck(
      "mul [2,1,3] * [4,1]", [](T<3> a, T<2> b) { return a * b.unsqueeze<3>(); }, a, b));
  EXPECT_TRUE(gradcheck(
      "div [2,1,3] / [4,1]", [](T<3> a, T<2> d) { return a / d.unsqueeze<3>(); }, a, d));
  EXPECT_TRUE(gradcheck(
      "sub [4,1] - [2,1,3]", [](T<3> a, T<2> b) { return b.unsqueeze<3>() - a; }, a, b));
  // Non-contiguous origins: a permuted leaf times a flipped one, a transposed leaf over a
  // strided slice, a swapped leaf to a power.
  auto p = rng.uniform<3>(Shape{3, 4, 2}, -2, 2);
  auto q = rng.uniform<3>(Shape{2, 3, 4}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "mul permute * flip",
      [](T<3> p, T<3> q) {
        return p.permute({2, 0, 1}) * q.flip({0, 2});
      },
      p, q));
  auto m = rng.uniform<2>(Shape{5, 3}, -2, 2);
  auto n = rng.signed_values<2>(Shape{3, 9}, 0.5, 2);
  EXPECT_TRUE(gradcheck(
      "div transpose / strided slice",
      [](T<2> m, T<2> n) {
        return m.transpose() / n.slice({Slice::all(), Slice(0, 9, 2)});
      },
      m, n));
  auto pos = rng.uniform<2>(Shape{3, 4}, 0.3, 2.5);
  auto e = rng.uniform<2>(Shape{4, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "powf swap_dims", [](T<2> x, T<2> e) { return x.powf(e.swap_dims(0, 1)); }, pos, e));
  // One leaf on both sides (gradients accumulate): x·x + x/(x² + 1).
  auto x = rng.uniform<2>(Shape{2, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "x*x + x/(x*x + 1)", [](T<2> x) { return x * x + x / (x * x + 1.f); }, x));
  // Rvalue chains, whose ops may reuse a uniquely owned buffer: values saved for backward
  // (exp's output, mul's operands) must not be overwritten.
  EXPECT_TRUE(gradcheck(
      "rvalue chain",
      [](T<2> x) {
        auto y = x.exp();
        auto z = std::move(y).sin() * x;
        auto r = activation::sigmoid(std::move(z)) + x.exp();
        auto t = r.tanh();
        return std::move(t) * (std::move(r) + 1.f);
      },
      x));
  EXPECT_TRUE(gradcheck(
      "rvalue operands",
      [](T<2> a, T<2> b) {
        auto p = a * b;
        auto q = std::move(p) * b + a.exp() * a;
        return (std::move(q) - a).powf_scalar(2) + activation::sigmoid(a * 1.f);
      },
      x, rng.uniform<2>(Shape{2, 3}, -2, 2)));
}

// ------------------------------------------------------------------ activations

TEST(GradcheckActivation, EveryActivation) {
  using namespace activation;
  const std::vector<UnaryCase> cases = {
      {"relu", -2, 2, {0.0}, [](T<3> x) { return relu(x); }},
      {"sigmoid", -4, 4, {}, [](T<3> x) { return sigmoid(x); }},
      {"tanh", -2, 2, {}, [](T<3> x) { return activation::tanh(x); }},
      {"gelu", -3, 3, {}, [](T<3> x) { return gelu(x); }},
      {"gelu tanh", -3, 3, {}, [](T<3> x) { return gelu(x, true); }},
      {"silu", -4, 4, {}, [](T<3> x) { return silu(x); }},
      {"leaky_relu", -2, 2, {0.0}, [](T<3> x) { return leaky_relu(x); }},
      {"leaky_relu 0.2", -2, 2, {0.0}, [](T<3> x) { return leaky_relu(x, 0.2); }},
      {"softplus", -4, 4, {}, [](T<3> x) { return softplus(x); }},
      // beta 2, threshold 1: linear above x = 0.5 (a jump there, avoided).
      {"softplus beta 2 threshold 1", -2, 2, {0.5}, [](T<3> x) { return softplus(x, 2.0, 1.0); }},
      {"softmax 0", -3, 3, {}, [](T<3> x) { return softmax(x, 0); }},
      {"softmax 1", -3, 3, {}, [](T<3> x) { return softmax(x, 1); }},
      {"softmax -1", -3, 3, {}, [](T<3> x) { return softmax(x, -1); }},
      {"log_softmax 0", -3, 3, {}, [](T<3> x) { return log_softmax(x, 0); }},
      {"log_softmax 1", -3, 3, {}, [](T<3> x) { return log_softmax(x, 1); }},
      {"log_softmax -1", -3, 3, {}, [](T<3> x) { return log_softmax(x, -1); }},
      {"softmax(x)·log_softmax(x)",
       -3,
       3,
       {},
       [](T<3> x) { return softmax(x, 2) * log_softmax(x, 2); }},
  };
  check_unary_cases(cases, 606);
}

// ------------------------------------------------------------------ matmul

TEST(GradcheckMatmul, MatricesBatchesAndBroadcastBatches) {
  test::Sampler rng(707);
  const auto mm2 = [](T<2> a, T<2> b) { return a.matmul(b); };
  const auto mm3 = [](T<3> a, T<3> b) { return a.matmul(b); };
  const auto mm4 = [](T<4> a, T<4> b) { return a.matmul(b); };
  EXPECT_TRUE(gradcheck("matmul [3,4]x[4,2]", mm2, rng.uniform<2>(Shape{3, 4}, -1, 1),
                        rng.uniform<2>(Shape{4, 2}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [1,5]x[5,1]", mm2, rng.uniform<2>(Shape{1, 5}, -1, 1),
                        rng.uniform<2>(Shape{5, 1}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [4,1]x[1,3]", mm2, rng.uniform<2>(Shape{4, 1}, -1, 1),
                        rng.uniform<2>(Shape{1, 3}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [4,33]x[33,3]", mm2, rng.uniform<2>(Shape{4, 33}, -1, 1),
                        rng.uniform<2>(Shape{33, 3}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [2,3,4]x[2,4,5]", mm3, rng.uniform<3>(Shape{2, 3, 4}, -1, 1),
                        rng.uniform<3>(Shape{2, 4, 5}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [1,3,4]x[2,4,2]", mm3, rng.uniform<3>(Shape{1, 3, 4}, -1, 1),
                        rng.uniform<3>(Shape{2, 4, 2}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [3,2,4]x[1,4,1]", mm3, rng.uniform<3>(Shape{3, 2, 4}, -1, 1),
                        rng.uniform<3>(Shape{1, 4, 1}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [2,1,3,4]x[1,3,4,2]", mm4, rng.uniform<4>(Shape{2, 1, 3, 4}, -1, 1),
                        rng.uniform<4>(Shape{1, 3, 4, 2}, -1, 1)));
  EXPECT_TRUE(gradcheck("matmul [2,3,2,3]x[1,1,3,2]", mm4, rng.uniform<4>(Shape{2, 3, 2, 3}, -1, 1),
                        rng.uniform<4>(Shape{1, 1, 3, 2}, -1, 1)));
  // Non-contiguous origins: transposed, sliced and permuted leaves; one leaf on both sides.
  EXPECT_TRUE(gradcheck(
      "matmul transpose x strided slice",
      [](T<2> a, T<2> b) {
        return a.transpose().matmul(b.slice({Slice(0, 6, 2), Slice::all()}));
      },
      rng.uniform<2>(Shape{3, 4}, -1, 1), rng.uniform<2>(Shape{6, 2}, -1, 1)));
  EXPECT_TRUE(gradcheck(
      "matmul permute x flip",
      [](T<3> a, T<3> b) {
        return a.permute({1, 0, 2}).matmul(b.flip({2}));
      },
      rng.uniform<3>(Shape{3, 2, 4}, -1, 1), rng.uniform<3>(Shape{2, 4, 3}, -1, 1)));
  EXPECT_TRUE(gradcheck(
      "matmul x·xᵀ", [](T<2> x) { return x.matmul(x.transpose()); },
      rng.uniform<2>(Shape{3, 4}, -1, 1)));
}

// ------------------------------------------------------------------ reductions

TEST(GradcheckReduction, SumMeanProdWhole) {
  test::Sampler rng(808);
  for (int k = 0; k < 3; ++k) {
    const Shape s = rng.shape(3, 4);
    auto x = tensor<3>(rng.uniform_data(s, -2, 2));
    EXPECT_TRUE(gradcheck(
        str_cat("sum ", s), [](T<3> x) { return x.sum(); }, x));
    EXPECT_TRUE(gradcheck(
        str_cat("mean ", s), [](T<3> x) { return x.mean(); }, x));
    auto p = tensor<3>(rng.signed_data(s, 0.5, 1.5));
    EXPECT_TRUE(gradcheck(
        str_cat("prod ", s), [](T<3> x) { return x.prod(); }, p));
  }
  auto f = rng.uniform<2>(Shape{4, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "sum of flip*x", [](T<2> x) { return (x.flip({0}) * x).sum(); }, f));
  EXPECT_TRUE(gradcheck(
      "mean of transpose", [](T<2> x) { return x.transpose().mean(); }, f));
  // prod is linear in each element, so central differences are exact (up to roundoff) even
  // at zeros: one zero (only it gets a non-zero gradient), two zeros (every gradient 0).
  auto one_zero = T<2>::from_floats({{0.9f, -1.2f, 0.f}, {1.1f, 0.8f, -1.3f}});
  auto two_zeros = T<2>::from_floats({{0.9f, 0.f, 1.4f}, {1.1f, 0.f, -1.3f}});
  EXPECT_TRUE(gradcheck(
      "prod with one zero", [](T<2> x) { return x.prod(); }, one_zero));
  EXPECT_TRUE(gradcheck(
      "prod with two zeros", [](T<2> x) { return x.prod(); }, two_zeros));
  EXPECT_TRUE(gradcheck(
      "prod of transpose with one zero", [](T<2> x) { return x.transpose().prod(); }, one_zero));
}

TEST(GradcheckReduction, SumMeanProdAlongDims) {
  test::Sampler rng(909);
  for (int k = 0; k < 2; ++k) {
    const Shape s = rng.shape(3, 4);
    auto x = tensor<3>(rng.uniform_data(s, -2, 2));
    auto p = tensor<3>(rng.signed_data(s, 0.5, 1.5));
    for (std::int64_t d : {0, 1, 2, -1}) {
      EXPECT_TRUE(gradcheck(
          str_cat("sum_dim ", d, " ", s), [d](T<3> x) { return x.sum_dim(d); }, x));
      EXPECT_TRUE(gradcheck(
          str_cat("mean_dim ", d, " ", s), [d](T<3> x) { return x.mean_dim(d); }, x));
      EXPECT_TRUE(gradcheck(
          str_cat("prod_dim ", d, " ", s), [d](T<3> x) { return x.prod_dim(d); }, p));
    }
  }
  // Zeros in some rows (one and two per row) and a non-contiguous origin.
  auto z = T<2>::from_floats(
      {{0.9f, 0.f, 1.4f, -0.7f}, {1.1f, 0.f, -1.3f, 0.f}, {1.2f, -0.6f, 0.8f, 1.5f}});
  EXPECT_TRUE(gradcheck(
      "prod_dim 1 with zeros", [](T<2> x) { return x.prod_dim(1); }, z));
  EXPECT_TRUE(gradcheck(
      "prod_dim 0 with zeros", [](T<2> x) { return x.prod_dim(0); }, z));
  EXPECT_TRUE(gradcheck(
      "prod_dim of swap_dims with zeros", [](T<2> x) { return x.swap_dims(0, 1).prod_dim(0); }, z));
  auto y = rng.uniform<3>(Shape{2, 3, 4}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "sum_dim of permute",
      [](T<3> x) {
        return x.permute({2, 0, 1}).sum_dim(1) * x.mean_dim(0).sum_dim(2).sum_dim(1);
      },
      y));
}

TEST(GradcheckReduction, MaxMinWholeAndAlongDims) {
  test::Sampler rng(1010);
  // Distinct values 0.25 apart: no tie within a finite-difference step.
  for (int k = 0; k < 3; ++k) {
    const Shape s = rng.shape(3, 4);
    auto x = tensor<3>(rng.distinct(s, 0.25));
    EXPECT_TRUE(gradcheck(
        str_cat("max ", s), [](T<3> x) { return x.max(); }, x));
    EXPECT_TRUE(gradcheck(
        str_cat("min ", s), [](T<3> x) { return x.min(); }, x));
    for (std::int64_t d : {0, 1, 2, -1}) {
      EXPECT_TRUE(gradcheck(
          str_cat("max_dim ", d, " ", s), [d](T<3> x) { return x.max_dim(d); }, x));
      EXPECT_TRUE(gradcheck(
          str_cat("min_dim ", d, " ", s), [d](T<3> x) { return x.min_dim(d); }, x));
      EXPECT_TRUE(gradcheck(
          str_cat("max_dim_with_indices ", d, " ", s),
          [d](T<3> x) { return x.max_dim_with_indices(d).first; }, x));
      EXPECT_TRUE(gradcheck(
          str_cat("min_dim_with_indices ", d, " ", s),
          [d](T<3> x) { return x.min_dim_with_indices(d).first; }, x));
    }
  }
  auto y = tensor<2>(rng.distinct(Shape{4, 5}, 0.25));
  EXPECT_TRUE(gradcheck(
      "max_dim of transpose", [](T<2> x) { return x.transpose().max_dim(1); }, y));
  EXPECT_TRUE(gradcheck(
      "min of strided slice",
      [](T<2> x) {
        return x.slice({Slice(0, 4, -2), Slice::all()}).min();
      },
      y));
  EXPECT_TRUE(gradcheck(
      "max·min_dim of flip", [](T<2> x) { return x.max().unsqueeze<2>() * x.flip({1}).min_dim(0); },
      y));
}

TEST(GradcheckReduction, VarianceAndMean) {
  test::Sampler rng(1111);
  for (int k = 0; k < 2; ++k) {
    const Shape s = rng.shape(3, 4);
    auto x = tensor<3>(rng.uniform_data(s, -2, 2));
    for (std::int64_t d : {0, 1, 2, -1}) {
      const std::string tag = str_cat(" ", d, " ", s);
      EXPECT_TRUE(gradcheck(
          "var_bias" + tag, [d](T<3> x) { return x.var_bias(d); }, x));
      // Both outputs, with independent weights: cat them along the reduced dim.
      EXPECT_TRUE(gradcheck(
          "var_mean biased" + tag,
          [d](T<3> x) {
            auto [v, m] = x.var_mean(d, false);
            return T<3>::cat({m, v}, d);
          },
          x));
      // The unbiased variance of one element is 0/0 = nan (as torch.var): skip size-1 dims.
      if (s[static_cast<std::size_t>(d < 0 ? d + 3 : d)] == 1) continue;
      EXPECT_TRUE(gradcheck(
          "var" + tag, [d](T<3> x) { return x.var(d); }, x));
      EXPECT_TRUE(gradcheck(
          "var_mean" + tag,
          [d](T<3> x) {
            auto [v, m] = x.var_mean(d);
            return T<3>::cat({v, m}, d);
          },
          x));
    }
  }
  auto y = rng.uniform<2>(Shape{3, 5}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "var of transpose", [](T<2> x) { return x.transpose().var(0); }, y));
}

TEST(GradcheckReduction, SortAndTopk) {
  test::Sampler rng(1212);
  for (int k = 0; k < 2; ++k) {
    const Shape s = rng.shape(3, 4);
    auto x = tensor<3>(rng.distinct(s, 0.25));
    for (std::int64_t d : {0, 1, 2, -1}) {
      const std::string tag = str_cat(" ", d, " ", s);
      EXPECT_TRUE(gradcheck(
          "sort" + tag, [d](T<3> x) { return x.sort(d); }, x));
      EXPECT_TRUE(gradcheck(
          "sort descending" + tag, [d](T<3> x) { return x.sort(d, true); }, x));
      EXPECT_TRUE(gradcheck(
          "sort_descending" + tag, [d](T<3> x) { return x.sort_descending(d); }, x));
      EXPECT_TRUE(gradcheck(
          "sort_with_indices" + tag, [d](T<3> x) { return x.sort_with_indices(d).first; }, x));
    }
  }
  auto y = tensor<2>(rng.distinct(Shape{3, 6}, 0.25));
  for (std::int64_t kk : {1, 2, 3}) {
    EXPECT_TRUE(gradcheck(
        str_cat("topk ", kk, " dim 1"), [kk](T<2> x) { return x.topk(kk, 1); }, y));
  }
  EXPECT_TRUE(gradcheck(
      "topk 2 dim 0", [](T<2> x) { return x.topk(2, 0); }, y));
  EXPECT_TRUE(gradcheck(
      "topk_with_indices of transpose",
      [](T<2> x) { return x.transpose().topk_with_indices(2, 1).first; }, y));
}

// Primitive-level forms the typed front end does not reach (a scalar on the left of pow and
// remainder/fmod, max/min against a scalar): backends and bindings may call them.
TEST(GradcheckElementwise, PrimitiveScalarFormsWithoutAFrontEnd) {
  test::Sampler rng(4242);
  const auto scalar_op = [](BinaryOp op, double s, bool left) {
    return [op, s, left](T<2> x) {
      return T<2>(AD::FloatOps::binary_scalar(op, std::move(x).into_primitive(), s, left));
    };
  };
  auto x = tensor<2>(rng.uniform_away(Shape{3, 4}, -2, 2, {0.0}, kMargin));
  EXPECT_TRUE(gradcheck("2^x", scalar_op(BinaryOp::Pow, 2.0, true), x));
  EXPECT_TRUE(gradcheck("0.5^x", scalar_op(BinaryOp::Pow, 0.5, true), x));
  // 7 mod x and fmod(7, x): away from the jumps where 7/x is an integer.
  auto d = tensor<2>(rng.uniform_away(Shape{3, 4}, 1.1, 1.9, {7.0 / 6, 7.0 / 5, 7.0 / 4}, 0.02));
  EXPECT_TRUE(gradcheck("7 remainder x", scalar_op(BinaryOp::Rem, 7.0, true), d));
  EXPECT_TRUE(gradcheck("-7 fmod x", scalar_op(BinaryOp::Fmod, -7.0, true), d));
  auto m = tensor<2>(rng.uniform_away(Shape{3, 4}, -2, 2, {0.25}, kMargin));
  EXPECT_TRUE(gradcheck("max(x, 0.25)", scalar_op(BinaryOp::Max, 0.25, false), m));
  EXPECT_TRUE(gradcheck("min(0.25, x)", scalar_op(BinaryOp::Min, 0.25, true), m));
  // 0^x for x > 0: PyTorch masks the gradient (0^x·log 0 = 0·-inf) to 0 where x >= 0.
  auto z = T<1>::from_floats({0.5f, 2.f}).require_grad();
  auto g = T<1>(AD::FloatOps::binary_scalar(BinaryOp::Pow, z.primitive(), 0.0, true))
               .sum()
               .backward();
  EXPECT_EQ(z.grad(g)->to_data().to_vec<float>(), (std::vector<float>{0.f, 0.f}));
}

// The whole-model check of the reliability plan (#23): the loss of a small MLP (two linear
// layers, tanh, cross-entropy from log_softmax + gather) against finite differences in every
// parameter at once.
TEST(GradcheckModel, TinyMlpCrossEntropy) {
  test::Sampler rng(2323);
  auto x = tensor<2>(rng.uniform_data(Shape{5, 3}, -1, 1));
  auto targets = Tensor<AD, 2, Int>::from_ints({{0}, {2}, {1}, {1}, {0}});
  auto w1 = tensor<2>(rng.uniform_data(Shape{3, 4}, -0.8, 0.8));
  auto b1 = tensor<1>(rng.uniform_data(Shape{4}, -0.5, 0.5));
  auto w2 = tensor<2>(rng.uniform_data(Shape{4, 3}, -0.8, 0.8));
  auto b2 = tensor<1>(rng.uniform_data(Shape{3}, -0.5, 0.5));
  EXPECT_TRUE(gradcheck(
      "mlp loss",
      [x, targets](T<2> w1, T<1> b1, T<2> w2, T<1> b2) {
        auto h = activation::tanh(x.matmul(w1) + b1.unsqueeze<2>());
        auto logits = h.matmul(w2) + b2.unsqueeze<2>();
        return -activation::log_softmax(logits, 1).gather(1, targets).mean();
      },
      w1, b1, w2, b2));
}

}  // namespace
}  // namespace kiln
