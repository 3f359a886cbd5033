// Gradients of the shape, joining and indexing ops on Autodiff<Cpu> against central finite
// differences (support/gradcheck.hpp), element-wise math and reductions being in
// gradcheck_test.cpp. These ops are linear, so the random weights of gradcheck's loss check
// where every element is routed; a non-linear factor after some of them (exp, sin, x·x)
// makes the gradient depend on the values too. Indices repeat where the op accumulates.
#include <gtest/gtest.h>

#include <vector>

#include "kiln/kiln.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
template <std::size_t D>
using T = Tensor<AD, D>;
template <std::size_t D>
using I = Tensor<AD, D, Int>;
template <std::size_t D>
using M = Tensor<AD, D, Bool>;
using test::gradcheck;

constexpr double kMargin = 0.1;  // distance of every sample from a kink (> 3·h for |x| <= 3)

template <std::size_t D>
T<D> tensor(const TensorData& data) {
  return T<D>::from_data(data);
}

// ------------------------------------------------------------------ shape ops

TEST(GradcheckShape, ReshapeFlattenUnsqueezeSqueeze) {
  test::Sampler rng(1313);
  auto x = rng.uniform<3>(Shape{2, 3, 4}, -2, 2);
  // A non-linear factor after the reshape makes the gradient depend on where values land.
  EXPECT_TRUE(gradcheck(
      "reshape [6,4]",
      [](T<3> x) {
        return x.reshape<2>({6, 4});
      },
      x));
  EXPECT_TRUE(gradcheck(
      "reshape [4,-1,2] * sin",
      [](T<3> x) {
        auto r = x.reshape<3>({4, -1, 2});
        return r * r.sin();
      },
      x));
  EXPECT_TRUE(gradcheck(
      "reshape from Shape", [](T<3> x) { return x.reshape<1>(Shape{24}); }, x));
  EXPECT_TRUE(gradcheck(
      "reshape of transpose",
      [](T<3> x) {
        return x.transpose().reshape<2>({8, 3}).exp();
      },
      x));
  EXPECT_TRUE(gradcheck(
      "flatten 1..2", [](T<3> x) { return x.flatten<2>(1, 2); }, x));
  EXPECT_TRUE(gradcheck(
      "flatten 0..2 of permute",
      [](T<3> x) {
        return x.permute({1, 2, 0}).flatten<1>(0, 2);
      },
      x));
  EXPECT_TRUE(gradcheck(
      "unsqueeze_dim 1", [](T<3> x) { return x.unsqueeze_dim<4>(1); }, x));
  EXPECT_TRUE(gradcheck(
      "unsqueeze_dim -1", [](T<3> x) { return x.unsqueeze_dim<4>(-1); }, x));
  EXPECT_TRUE(gradcheck(
      "unsqueeze", [](T<3> x) { return x.unsqueeze<5>() * x.unsqueeze<5>(); }, x));
  auto y = rng.uniform<3>(Shape{3, 1, 2}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "squeeze_dim 1", [](T<3> x) { return x.squeeze_dim<2>(1).exp(); }, y));
  EXPECT_TRUE(gradcheck(
      "squeeze 1 of flip", [](T<3> x) { return x.flip({0}).squeeze<2>(1); }, y));
}

TEST(GradcheckShape, SwapDimsTransposePermuteFlip) {
  test::Sampler rng(1414);
  auto x = rng.uniform<3>(Shape{2, 3, 4}, -2, 2);
  auto w = rng.uniform<3>(Shape{4, 3, 2}, -2, 2);  // a second input makes the layout matter
  EXPECT_TRUE(gradcheck(
      "swap_dims 0 2", [](T<3> x, T<3> w) { return x.swap_dims(0, 2) * w; }, x, w));
  EXPECT_TRUE(gradcheck(
      "swap_dims -1 0", [](T<3> x, T<3> w) { return x.swap_dims(-1, 0) * w; }, x, w));
  EXPECT_TRUE(gradcheck(
      "transpose", [](T<3> x) { return x.transpose() * x.transpose(); }, x));
  EXPECT_TRUE(gradcheck(
      "permute 2 1 0",
      [](T<3> x, T<3> w) {
        return x.permute({2, 1, 0}) * w;
      },
      x, w));
  EXPECT_TRUE(gradcheck(
      "permute 1 2 0",
      [](T<3> x) {
        return x.permute({1, 2, 0}).exp();
      },
      x));
  EXPECT_TRUE(gradcheck(
      "permute -1 0 1",
      [](T<3> x) {
        return x.permute({-1, 0, 1}).sin();
      },
      x));
  EXPECT_TRUE(gradcheck(
      "flip 0 2",
      [](T<3> x) {
        return x.flip({0, 2}) * x;
      },
      x));
  EXPECT_TRUE(gradcheck(
      "flip -1", [](T<3> x) { return x.flip({-1}) * x; }, x));
  EXPECT_TRUE(gradcheck(
      "flip all of transpose",
      [](T<3> x) {
        return x.transpose().flip({0, 1, 2}).exp();
      },
      x));
}

TEST(GradcheckShape, ExpandAndRepeat) {
  test::Sampler rng(1515);
  auto c = rng.uniform<2>(Shape{3, 1}, -2, 2);
  auto r = rng.uniform<2>(Shape{1, 4}, -2, 2);
  auto v = rng.uniform<1>(Shape{2}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "expand [3,1] -> [3,4]",
      [](T<2> x) {
        return x.expand<2>({3, 4});
      },
      c));
  EXPECT_TRUE(gradcheck(
      "expand [1,4] -> [2,3,4]",
      [](T<2> x) {
        return x.expand<3>({2, 3, 4});
      },
      r));
  EXPECT_TRUE(gradcheck(
      "expand [1,4] -> [-1, 4] x2",
      [](T<2> x) {
        return x.expand<3>({2, -1, 4});
      },
      r));
  EXPECT_TRUE(gradcheck(
      "expand [2] -> [4,3,2]",
      [](T<1> x) {
        return x.expand<3>({4, 3, 2}).exp();
      },
      v));
  EXPECT_TRUE(gradcheck(
      "expand of transpose",
      [](T<2> x) {
        return x.transpose().expand<3>({2, 4, 3});
      },
      c));
  auto x = rng.uniform<2>(Shape{2, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "repeat_dim 0 x2", [](T<2> x) { return x.repeat_dim(0, 2); }, x));
  EXPECT_TRUE(gradcheck(
      "repeat_dim 1 x3", [](T<2> x) { return x.repeat_dim(1, 3); }, x));
  EXPECT_TRUE(gradcheck(
      "repeat_dim -1 x1", [](T<2> x) { return x.repeat_dim(-1, 1).exp(); }, x));
  EXPECT_TRUE(gradcheck(
      "repeat 2 3",
      [](T<2> x) {
        return x.repeat({2, 3});
      },
      x));
  EXPECT_TRUE(gradcheck(
      "repeat of transpose",
      [](T<2> x) {
        return x.transpose().repeat({2, 2}) * x.transpose().repeat({2, 2});
      },
      x));
  auto y = rng.uniform<3>(Shape{2, 1, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "repeat 1 4 2 rank 3",
      [](T<3> x) {
        return x.repeat({1, 4, 2});
      },
      y));
}

TEST(GradcheckShape, SliceNarrowChunkSplit) {
  test::Sampler rng(1616);
  auto x = rng.uniform<2>(Shape{5, 4}, -2, 2);
  const auto sl = [](std::vector<Slice> r) {
    return [r](T<2> x) { return x.slice(r) * x.slice(r); };
  };
  EXPECT_TRUE(gradcheck("slice rows 1..3", sl({Slice(1, 3)}), x));
  EXPECT_TRUE(gradcheck("slice step 2", sl({Slice(0, 5, 2), Slice::all()}), x));
  EXPECT_TRUE(gradcheck("slice step 3 from", sl({Slice::from(1, 3), Slice(1, 4)}), x));
  EXPECT_TRUE(gradcheck("slice step -1", sl({Slice::all(), Slice(0, 4, -1)}), x));
  EXPECT_TRUE(gradcheck("slice step -2", sl({Slice(1, 5, -2), Slice(-3, 4, -2)}), x));
  EXPECT_TRUE(gradcheck("slice index -1", sl({Slice::index(-1), Slice::to(3)}), x));
  EXPECT_TRUE(gradcheck(
      "slice of transpose",
      [](T<2> x) {
        return x.transpose().slice({Slice(0, 4, 3), Slice(1, 5, -1)}).exp();
      },
      x));
  EXPECT_TRUE(gradcheck(
      "narrow 0 1 3", [](T<2> x) { return x.narrow(0, 1, 3).exp(); }, x));
  EXPECT_TRUE(gradcheck(
      "narrow -1 2 2", [](T<2> x) { return x.narrow(-1, 2, 2).exp(); }, x));
  auto y = rng.uniform<2>(Shape{7, 3}, -2, 2);
  // chunk(3) of 7 rows: pieces of 3, 3, 1, put back in another order with other factors.
  EXPECT_TRUE(gradcheck(
      "chunk 3 dim 0",
      [](T<2> x) {
        auto p = x.chunk(3, 0);
        return T<2>::cat({p[2] * 3.f, p[0].exp(), p[1] * -2.f}, 0);
      },
      y));
  EXPECT_TRUE(gradcheck(
      "chunk 2 dim 1, one piece", [](T<2> x) { return x.chunk(2, 1)[1].sin(); }, y));
  EXPECT_TRUE(gradcheck(
      "split 2 dim 0",
      [](T<2> x) {
        auto p = x.split(2, 0);  // 2, 2, 2, 1
        return T<2>::cat({p[3], p[1] * p[0], p[2].exp()}, 0);
      },
      y));
  EXPECT_TRUE(gradcheck(
      "split_with_sizes 1 2 dim 1 of transpose",
      [](T<2> x) {
        auto p = x.transpose().split_with_sizes({1, 2}, 0);
        return T<2>::cat({p[1], p[0].exp()}, 0);
      },
      y));
}

TEST(GradcheckShape, SliceAssignBothInputs) {
  test::Sampler rng(1717);
  auto x = rng.uniform<2>(Shape{4, 5}, -2, 2);
  auto v = rng.uniform<2>(Shape{2, 3}, -2, 2);
  const auto sa = [](std::vector<Slice> r) {
    return [r](T<2> x, T<2> v) { return x.slice_assign(r, v) * x; };
  };
  EXPECT_TRUE(gradcheck("slice_assign 1..3, 0..5;2", sa({Slice(1, 3), Slice(0, 5, 2)}), x, v));
  EXPECT_TRUE(gradcheck("slice_assign -2.., 1..4", sa({Slice::from(-2), Slice(1, 4)}), x, v));
  EXPECT_TRUE(
      gradcheck("slice_assign steps -3 and -2", sa({Slice(0, 4, -3), Slice(0, 5, -2)}), x, v));
  EXPECT_TRUE(gradcheck(
      "slice_assign (rvalue)",
      [](T<2> x, T<2> v) {
        return (x * 1.f).slice_assign({Slice(2, 4), Slice(2, 5)}, v.exp());
      },
      x, v));
  // Values computed from x itself, into a transposed x.
  EXPECT_TRUE(gradcheck(
      "slice_assign of x into transpose",
      [](T<2> x) {
        return x.transpose().slice_assign({Slice(0, 2), Slice(1, 3)},
                                          x.slice({Slice(0, 2), Slice(3, 5)}).exp());
      },
      x));
}

TEST(GradcheckShape, CatAndStack) {
  test::Sampler rng(1818);
  auto a = rng.uniform<2>(Shape{2, 3}, -2, 2);
  auto b = rng.uniform<2>(Shape{1, 3}, -2, 2);
  auto c = rng.uniform<2>(Shape{2, 2}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "cat dim 0 a b a",
      [](T<2> a, T<2> b) {
        return T<2>::cat({a, b, a}, 0);
      },
      a, b));
  EXPECT_TRUE(gradcheck(
      "cat dim 1 a c a",
      [](T<2> a, T<2> c) {
        return T<2>::cat({a, c.exp(), a}, 1);
      },
      a, c));
  EXPECT_TRUE(gradcheck(
      "cat dim -1 of transposes",
      [](T<2> a, T<2> b) {
        return T<2>::cat({a.transpose(), b.transpose()}, -1).sin();
      },
      a, b));
  EXPECT_TRUE(gradcheck(
      "cat of one", [](T<2> a) { return T<2>::cat({a}, 0) * a; }, a));
  auto d = rng.uniform<2>(Shape{2, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "stack dim 0",
      [](T<2> a, T<2> d) {
        return T<2>::stack<3>({a, d, a}, 0);
      },
      a, d));
  EXPECT_TRUE(gradcheck(
      "stack dim 1",
      [](T<2> a, T<2> d) {
        return T<2>::stack<3>({d, a}, 1).exp();
      },
      a, d));
  EXPECT_TRUE(gradcheck(
      "stack dim -1 of flip",
      [](T<2> a, T<2> d) {
        return T<2>::stack<3>({a.flip({1}), d, a}, -1);
      },
      a, d));
}

// ------------------------------------------------------------------ indexing

TEST(GradcheckIndexing, SelectAndSelectAssign) {
  test::Sampler rng(1919);
  auto x = rng.uniform<2>(Shape{4, 3}, -2, 2);
  const auto rows = I<1>::from_ints({2, 0, 2, 3, -1});  // repeated, and -1 = 3 again
  const auto cols = I<1>::from_ints({1, 1, 0});
  EXPECT_TRUE(gradcheck(
      "select dim 0 repeated", [rows](T<2> x) { return x.select(0, rows); }, x));
  EXPECT_TRUE(gradcheck(
      "select dim 1 repeated", [cols](T<2> x) { return x.select(1, cols).exp(); }, x));
  EXPECT_TRUE(gradcheck(
      "select of transpose", [rows](T<2> x) { return x.transpose().select(1, rows); }, x));
  auto v = rng.uniform<2>(Shape{3, 3}, -2, 2);
  const auto idx = I<1>::from_ints({1, 3, 1});
  EXPECT_TRUE(gradcheck(
      "select_assign dim 0", [idx](T<2> x, T<2> v) { return x.select_assign(0, idx, v) * x; }, x,
      v));
  auto w = rng.uniform<2>(Shape{4, 2}, -2, 2);
  const auto idx1 = I<1>::from_ints({2, 2});
  EXPECT_TRUE(gradcheck(
      "select_assign dim 1 repeated",
      [idx1](T<2> x, T<2> w) { return x.select_assign(1, idx1, (w * 0.5f).exp()).sin(); }, x, w));
}

TEST(GradcheckIndexing, GatherAndScatter) {
  test::Sampler rng(2020);
  auto x = rng.uniform<2>(Shape{3, 4}, -2, 2);
  const auto g1 = I<2>::from_ints({{3, 0}, {1, 1}, {2, 3}});
  const auto g0 = I<2>::from_ints({{2, 0, 1, 2}, {2, 2, 0, 1}});
  EXPECT_TRUE(gradcheck(
      "gather dim 1", [g1](T<2> x) { return x.gather(1, g1); }, x));
  EXPECT_TRUE(gradcheck(
      "gather dim 0 repeated", [g0](T<2> x) { return x.gather(0, g0).exp(); }, x));
  const auto gt = I<2>::from_ints({{0, 2, 2}, {1, 0, 1}});
  EXPECT_TRUE(gradcheck(
      "gather of transpose", [gt](T<2> x) { return x.transpose().gather(1, gt); }, x));
  // scatter (add): values larger than indices; repeated indices accumulate.
  auto v = rng.uniform<2>(Shape{3, 5}, -2, 2);
  const auto s0 = I<2>::from_ints({{2, 0, 2, 1}, {2, 1, 0, 1}});  // [2, 4] into dim 0 of [3, 4]
  EXPECT_TRUE(gradcheck(
      "scatter dim 0 values [3,5] indices [2,4]",
      [s0](T<2> x, T<2> v) { return x.scatter(0, s0, v) * x; }, x, v));
  const auto s1 = I<2>::from_ints({{3, 3}, {0, 1}, {2, 0}});
  EXPECT_TRUE(gradcheck(
      "scatter dim 1 repeated", [s1](T<2> x, T<2> v) { return x.scatter(1, s1, v.exp()).sin(); }, x,
      v));
  auto u = rng.uniform<2>(Shape{4, 3}, -2, 2);
  EXPECT_TRUE(gradcheck(
      "scatter into transpose", [s1](T<2> x, T<2> u) { return u.transpose().scatter(1, s1, x); }, x,
      u));
}

TEST(GradcheckIndexing, MaskWhereAndMaskFill) {
  test::Sampler rng(2121);
  auto x = rng.uniform<2>(Shape{2, 3}, -2, 2);
  auto row = rng.uniform<2>(Shape{1, 3}, -2, 2);
  auto col = rng.uniform<2>(Shape{2, 1}, -2, 2);
  const auto m = M<2>::from_bool({{true, false, true}, {false, false, true}});
  const auto mr = M<2>::from_bool({{false, true, true}});
  EXPECT_TRUE(gradcheck(
      "mask_where same shape", [m](T<2> x, T<2> y) { return x.mask_where(m, y); }, x,
      x * 2.f + 1.f));
  EXPECT_TRUE(gradcheck(
      "mask_where value [1,3]", [m](T<2> x, T<2> v) { return x.mask_where(m, v) * x; }, x, row));
  EXPECT_TRUE(gradcheck(
      "mask_where self [2,1] value [1,3]", [m](T<2> c, T<2> v) { return c.mask_where(m, v); }, col,
      row));
  EXPECT_TRUE(gradcheck(
      "mask_where mask [1,3] value [2,1]",
      [mr](T<2> x, T<2> c) { return x.mask_where(mr, c.exp()); }, x, col));
  EXPECT_TRUE(gradcheck(
      "mask_where of transposes",
      [](T<2> x, T<2> y) {
        const auto mt = M<2>::from_bool({{true, false}, {false, true}, {true, true}});
        return x.transpose().mask_where(mt, y.transpose().sin());
      },
      x, x * 0.5f));
  EXPECT_TRUE(gradcheck(
      "mask_fill", [m](T<2> x) { return x.mask_fill(m, 3.f) * x; }, x));
  EXPECT_TRUE(gradcheck(
      "mask_fill self [1,3] broadcast", [m](T<2> r) { return r.mask_fill(m, -1.f); }, row));
  // A mask computed from the input (the comparison itself passes no gradient).
  EXPECT_TRUE(gradcheck(
      "mask_fill where x > 0.3", [](T<2> x) { return x.mask_fill(x.greater_elem(0.3), 0.f).exp(); },
      tensor<2>(rng.uniform_away(Shape{3, 4}, -2, 2, {0.3}, kMargin))));
}

}  // namespace
}  // namespace kiln
