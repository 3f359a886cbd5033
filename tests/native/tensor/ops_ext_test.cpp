// The issue-15 ops of kiln/tensor/ops_ext.hpp on Autodiff<Cpu>: values by hand and from
// PyTorch 1.13 (the commands are in the comments), gradients against finite differences
// (support/gradcheck.hpp), errors naming the op; backward(retain_graph), reductions of a
// rank-0 tensor in backward, narrow_ranges_from_end. The JS tests (tests/js/ops_ext.test.mjs)
// compare many more cases with PyTorch's values and gradients.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"
#include "kiln/tensor/ops_ext.hpp"
#include "support/gradcheck.hpp"

namespace kiln {
namespace {

using AD = Autodiff<Cpu>;
template <std::size_t D>
using T = Tensor<AD, D>;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using test::gradcheck;

const std::vector<std::int64_t> kAll;

template <std::size_t D>
T<D> wrap(ops::AdTensor p) {
  return T<D>(std::move(p));
}

std::vector<float> values(const ops::AdTensor& t) { return Cpu::FloatOps::into_data(t.primitive).to_vec<float>(); }

// Away from kinks (0, ties) by more than gradcheck's step.
T<2> sample() {
  return T<2>::from_floats({{0.7f, -1.3f, 2.1f, -0.4f}, {1.7f, -2.6f, 0.9f, 1.2f}, {-0.8f, 2.9f, -1.9f, 0.3f}});
}

TEST(OpsExt, NormValuesByHand) {
  const auto x = T<2>::from_floats({{3.f, 4.f, 0.f}, {0.f, 0.f, 0.f}});
  const std::int64_t d1[] = {1};
  EXPECT_EQ(values(ops::norm(x.primitive(), 2, d1, true, "norm")), (std::vector<float>{5.f, 0.f}));
  EXPECT_EQ(values(ops::norm(x.primitive(), 1, d1, true, "norm")), (std::vector<float>{7.f, 0.f}));
  EXPECT_EQ(values(ops::norm(x.primitive(), 0, d1, true, "norm")), (std::vector<float>{2.f, 0.f}));
  EXPECT_EQ(values(ops::norm(x.primitive(), INFINITY, d1, true, "norm")), (std::vector<float>{4.f, 0.f}));
  EXPECT_EQ(values(ops::norm(x.primitive(), -INFINITY, d1, true, "norm")), (std::vector<float>{0.f, 0.f}));
  const auto all = ops::norm(x.primitive(), 2, kAll, false, "norm");
  EXPECT_EQ(Cpu::FloatOps::shape(all.primitive), Shape({1}));  // whole-tensor: [1]
}

TEST(OpsExt, NormGradientAtZeroIsZero) {
  // torch.linalg.vector_norm(torch.zeros(3, requires_grad=True)).backward() -> grad [0, 0, 0]
  const auto x = T<1>::zeros(Shape{3}).require_grad();
  const auto n = wrap<1>(ops::norm(x.primitive(), 2, kAll, false, "norm"));
  const auto g = n.sum().backward();
  x.grad(g)->to_data().assert_eq(TensorData::from<float>({0.f, 0.f, 0.f}));
}

TEST(OpsExt, NormGradcheck) {
  for (const double p : {2.0, 1.0, 3.0, 0.5, 1.5, double(INFINITY), -double(INFINITY)}) {
    EXPECT_TRUE(gradcheck(
        "norm",
        [p](T<2> x) {
          const std::int64_t d[] = {1};
          return wrap<2>(ops::norm(x.primitive(), p, d, true, "norm"));
        },
        sample()))
        << "p = " << p;
  }
}

TEST(OpsExt, VarStdCorrection) {
  // torch.var(torch.tensor([[1., 2, 3, 4]]), dim=1, correction=c): 1.25, 5/3, 2.5
  const auto x = T<2>::from_floats({{1.f, 2.f, 3.f, 4.f}});
  const std::int64_t d[] = {1};
  EXPECT_FLOAT_EQ(values(ops::var(x.primitive(), d, 0, true, false, "var"))[0], 1.25f);
  EXPECT_FLOAT_EQ(values(ops::var(x.primitive(), d, 1, true, false, "var"))[0], 5.f / 3.f);
  EXPECT_FLOAT_EQ(values(ops::var(x.primitive(), d, 2, true, false, "var"))[0], 2.5f);
  EXPECT_FLOAT_EQ(values(ops::var(x.primitive(), d, 1, true, true, "std"))[0], std::sqrt(5.f / 3.f));
  EXPECT_TRUE(std::isinf(values(ops::var(x.primitive(), d, 4, true, false, "var"))[0]));
  for (const double c : {0.0, 1.0, 2.0}) {
    EXPECT_TRUE(gradcheck(
        "std", [c](T<2> x) { return wrap<2>(ops::var(x.primitive(), std::vector<std::int64_t>{0}, c, true, true, "std")); },
        sample()));
  }
  // std of a constant row: 0 with gradient 0 (torch's std_backward masks it)
  const auto k = T<2>::full(Shape{1, 3}, 2.0).require_grad();
  const auto s = wrap<2>(ops::var(k.primitive(), d, 1, true, true, "std"));
  k.grad(s.sum().backward())->to_data().assert_eq(TensorData::from<float>({{0.f, 0.f, 0.f}}));
  EXPECT_THAT([&] { ops::var(x.primitive(), d, -1, true, false, "var"); },
              ThrowsMessage<ValueError>(HasSubstr("var: correction must be a finite number >= 0, got -1")));
}

TEST(OpsExt, AmaxSplitsTies) {
  // torch.amax(torch.tensor([[1., 3, 3], [5, 5, 5]], requires_grad=True), 1).sum().backward()
  //   -> grad [[0, .5, .5], [1/3, 1/3, 1/3]]
  const auto x = T<2>::from_floats({{1.f, 3.f, 3.f}, {5.f, 5.f, 5.f}}).require_grad();
  const std::int64_t d[] = {1};
  const auto y = wrap<2>(ops::amax(x.primitive(), d, true, false, "amax"));
  y.to_data().assert_eq(TensorData::from<float>({{3.f}, {5.f}}));
  const auto g = x.grad(y.sum().backward())->to_data().to_vec<float>();
  EXPECT_FLOAT_EQ(g[1], 0.5f);
  EXPECT_FLOAT_EQ(g[2], 0.5f);
  EXPECT_FLOAT_EQ(g[3], 1.f / 3.f);
  EXPECT_EQ(g[0], 0.f);
  EXPECT_TRUE(gradcheck("amin", [](T<2> x) { return wrap<2>(ops::amax(x.primitive(), std::vector<std::int64_t>{0}, true, true, "amin")); },
                        sample()));
  EXPECT_THAT([] { ops::amax(CpuTensor(Shape{2, 0}, DType::F32), std::vector<std::int64_t>{1}, true, false, "amax"); },
              ThrowsMessage<ValueError>(HasSubstr("amax: cannot reduce dim 1 of size 0")));
}

TEST(OpsExt, PadModes) {
  // torch.nn.functional.pad(torch.tensor([[1., 2, 3]]), (2, 1), mode=...)
  const auto x = T<2>::from_floats({{1.f, 2.f, 3.f}});
  const std::int64_t p[] = {2, 1};
  EXPECT_EQ(values(ops::pad(x.primitive(), p, "constant", 9, "pad")), (std::vector<float>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(values(ops::pad(x.primitive(), p, "reflect", 0, "pad")), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(values(ops::pad(x.primitive(), p, "replicate", 0, "pad")), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(values(ops::pad(x.primitive(), p, "circular", 0, "pad")), (std::vector<float>{2, 3, 1, 2, 3, 1}));
  const std::int64_t crop[] = {-1, 1};
  EXPECT_EQ(values(ops::pad(x.primitive(), crop, "constant", 0, "pad")), (std::vector<float>{2, 3, 0}));
  for (const char* mode : {"constant", "reflect", "replicate", "circular"}) {
    EXPECT_TRUE(gradcheck(
        "pad",
        [mode](T<2> x) {
          const std::int64_t q[] = {2, 1, -1, 1};
          return wrap<2>(ops::pad(x.primitive(), q, mode, 0.5, "pad"));
        },
        sample()))
        << mode;
  }
  const std::int64_t odd[] = {1};
  EXPECT_THAT([&] { ops::pad(x.primitive(), odd, "constant", 0, "pad"); },
              ThrowsMessage<ValueError>(HasSubstr("pad: the pad list must have an even length")));
  const std::int64_t far[] = {3, 0};
  EXPECT_THAT([&] { ops::pad(x.primitive(), far, "reflect", 0, "pad"); },
              ThrowsMessage<ValueError>(HasSubstr("pad: reflect pads (3, 0) must be smaller than dim 1's size 3")));
}

TEST(OpsExt, TrilTriuCumsum) {
  const auto x = T<2>::from_floats({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  EXPECT_EQ(values(ops::triangle(x.primitive(), 0, false, "tril")), (std::vector<float>{1, 0, 0, 4, 5, 0}));
  EXPECT_EQ(values(ops::triangle(x.primitive(), 1, true, "triu")), (std::vector<float>{0, 2, 3, 0, 0, 6}));
  EXPECT_EQ(values(ops::cumsum(x.primitive(), 1, "cumsum")), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  EXPECT_EQ(values(ops::cumsum(x.primitive(), -2, "cumsum")), (std::vector<float>{1, 2, 3, 5, 7, 9}));
  EXPECT_TRUE(gradcheck("tril", [](T<2> x) { return wrap<2>(ops::triangle(x.primitive(), -1, false, "tril")) * x; },
                        sample()));
  EXPECT_TRUE(gradcheck("cumsum", [](T<2> x) { return wrap<2>(ops::cumsum(x.primitive(), 1, "cumsum")) * x; },
                        sample()));
  EXPECT_THAT([] { ops::cumsum(CpuTensor(Shape{2}, DType::Bool), 0, "cumsum"); },
              ThrowsMessage<DTypeError>(HasSubstr("cumsum: expected a float32 or int32 tensor, got bool")));
  EXPECT_THAT([] { ops::triangle(CpuTensor(Shape{2}, DType::F32), 0, false, "tril"); },
              ThrowsMessage<RankError>(HasSubstr("tril: expected a tensor of rank >= 2")));
}

TEST(OpsExt, Linspace) {
  // torch.linspace(-1, 1, 5) -> [-1, -0.5, 0, 0.5, 1]
  const auto l = ops::linspace(-1, 1, 5, "linspace");
  EXPECT_EQ(Cpu::FloatOps::into_data(l).to_vec<float>(), (std::vector<float>{-1.f, -0.5f, 0.f, 0.5f, 1.f}));
  EXPECT_EQ(ops::linspace(0, 1, 0, "linspace").shape(), Shape({0}));
  EXPECT_THAT([] { ops::linspace(0, 1, -1, "linspace"); },
              ThrowsMessage<ValueError>(HasSubstr("linspace: steps must be >= 0, got -1")));
}

TEST(OpsExt, EinsumLowersToMatmul) {
  const auto a = sample();
  const auto b = T<2>::from_floats({{1.f, 0.5f}, {-1.f, 2.f}, {0.25f, 1.f}, {3.f, -2.f}});
  const ops::AdTensor ab[] = {a.primitive(), b.primitive()};
  const auto c = wrap<2>(ops::einsum("ij,jk->ik", ab, "einsum"));
  c.to_data().assert_approx_eq(a.matmul(b).to_data(), Tolerance::default_f32());
  EXPECT_TRUE(gradcheck(
      "einsum",
      [](T<2> x, T<2> y) {
        const ops::AdTensor xy[] = {x.primitive(), y.primitive()};
        return wrap<2>(ops::einsum("ij,kj->ik", xy, "einsum"));
      },
      sample(), sample()));
  const ops::AdTensor bad[] = {a.primitive(), a.primitive()};
  EXPECT_THAT([&] { ops::einsum("ij,jk->ik", bad, "einsum"); },
              ThrowsMessage<ShapeError>(HasSubstr("einsum: label 'j' has size 4 and 3")));
  EXPECT_THAT([&] { ops::einsum("ii->i", std::span<const ops::AdTensor>(bad, 1), "einsum"); },
              ThrowsMessage<ValueError>(HasSubstr("einsum: label 'i' repeats within the operand 'ii'")));
}

TEST(OpsExt, TypedForms) {
  const auto x = T<2>::from_floats({{3.f, -4.f}, {1.f, 1.f}});
  ops::norm_dim(x, 2, 1).to_data().assert_approx_eq(TensorData::from<float>({{5.f}, {std::sqrt(2.f)}}), Tolerance::default_f32());
  ops::norm_all(x, 1).to_data().assert_eq(TensorData::from<float>({9.f}));
  ops::amax_dim(x, 0).to_data().assert_eq(TensorData::from<float>({{3.f, 1.f}}));
  ops::amin_dim(x, 1).to_data().assert_eq(TensorData::from<float>({{-4.f}, {1.f}}));
  // torch.var(x, 1, correction=0): [12.25, 0]; std with correction 1: [sqrt(24.5), 0]
  ops::var_dim(x, 1, 0.0).to_data().assert_approx_eq(TensorData::from<float>({{12.25f}, {0.f}}), Tolerance::default_f32());
  ops::std_dim(x, 1).to_data().assert_approx_eq(TensorData::from<float>({{std::sqrt(24.5f)}, {0.f}}), Tolerance::default_f32());
  const std::int64_t p[] = {1, 0};
  ops::pad(x, p).to_data().assert_eq(TensorData::from<float>({{0.f, 3.f, -4.f}, {0.f, 1.f, 1.f}}));
  ops::tril(x).to_data().assert_eq(TensorData::from<float>({{3.f, 0.f}, {1.f, 1.f}}));
  ops::triu(x, 1).to_data().assert_eq(TensorData::from<float>({{0.f, -4.f}, {0.f, 0.f}}));
  ops::cumsum(x, 0).to_data().assert_eq(TensorData::from<float>({{3.f, -4.f}, {4.f, -3.f}}));
  ops::einsum<2>("ij,jk->ik", x, x).to_data().assert_eq(x.matmul(x).to_data());
  EXPECT_THAT([&] { ops::einsum<1>("ij,jk->ik", x, x); }, ThrowsMessage<RankError>(HasSubstr("einsum: expected a tensor of rank 1")));
}

TEST(OpsExt, BackwardRetainGraph) {
  const auto x = T<1>::from_floats({1.f, 2.f}).require_grad();
  const auto y = (x * x).sum();
  const auto g1 = y.backward(true);
  const auto g2 = y.backward(true);
  const auto g3 = y.backward();
  for (const auto* g : {&g1, &g2, &g3}) x.grad(*g)->to_data().assert_eq(TensorData::from<float>({2.f, 4.f}));
  EXPECT_THAT([&] { y.backward(); }, ThrowsMessage<StateError>(HasSubstr("already released")));
}

TEST(OpsExt, ReductionsOfRankZeroBackPropagate) {
  // d/dx of sum/mean/max/min/prod of a rank-0 x = 1, shape [].
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod}) {
    const auto x = AD::FloatOps::set_require_grad(
        AD::FloatOps::from_data(TensorData(Shape{}, std::vector<float>{3.f}), DType::F32, {}), true);
    const auto y = AD::FloatOps::reduce(op, x);
    EXPECT_EQ(AD::FloatOps::shape(y), Shape({1}));
    const auto g = AD::FloatOps::grad(x, AD::FloatOps::backward(y));
    ASSERT_TRUE(g.has_value());
    EXPECT_EQ(g->shape(), Shape{});
    EXPECT_EQ(Cpu::FloatOps::into_data(*g).to_vec<float>(), std::vector<float>{1.f});
  }
}

TEST(OpsExt, NarrowFromEnd) {
  // torch.narrow(x, -1, -2, 2) of a [2, 3] x: the last two columns
  const auto r = derived::narrow_ranges_from_end(Shape({2, 3}), -1, -2, 2);
  EXPECT_EQ(r.back().start, 1);
  EXPECT_EQ(r.back().end, 3);
  EXPECT_THAT([] { derived::narrow_ranges_from_end(Shape({3}), 0, -4, 1); },
              ThrowsMessage<IndexError>(HasSubstr("narrow: start -4 and length 1 are out of bounds for dim 0 of size 3")));
}

}  // namespace
}  // namespace kiln
