// expm1: exp(x) - 1 without the cancellation near 0 (torch.expm1), the op added as one row of
// the op table (kiln/backend/ops.def) with its gradient g·(y + 1). Values against PyTorch, the
// gradient against PyTorch's autograd and against finite differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"
#include "support/gradcheck.hpp"
#include "support/tensors.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using test::kInf;
using test::kNan;
using test::vec;

// Inputs and torch.expm1's float32 results, computed with PyTorch 1.13:
//   /usr/bin/python3 -c 'import torch; t = torch.tensor(XS, dtype=torch.float32);
//                        print(torch.expm1(t).tolist())'
// 25 values (not a multiple of any vector width, so both the SIMD body and the tail run).
// The tiny ones are where expm1 beats exp(x) - 1: exp(1e-10) rounds to 1 in f32, so
// exp(x) - 1 gives 0 where expm1 gives 1e-10.
const std::vector<float> kInputs = {0.f,    -0.f,   1e-30f, -1e-30f, 1e-10f, -1e-10f, 1e-7f,
                                    -1e-7f, 1e-4f,  -1e-4f, 0.5f,    -0.5f,  1.f,     -1.f,
                                    2.5f,   -2.5f,  10.f,   -10.f,   -20.f,  88.f,    89.f,
                                    -100.f, kInf,   -kInf,  kNan};
const std::vector<float> kTorchExpm1 = {
    0.f, -0.f, 1.0000000031710769e-30f, -1.0000000031710769e-30f, 1.000000013351432e-10f,
    -1.000000013351432e-10f, 1.000000082740371e-07f, -9.999999406318238e-08f,
    0.00010000499605666846f, -9.999499889090657e-05f, 0.6487212777137756f,
    -0.39346933364868164f, 1.718281865119934f, -0.6321205496788025f, 11.182494163513184f,
    -0.9179149866104126f, 22025.46484375f, -0.9999545812606812f, -1.f,
    1.6516362661361307e+38f, kInf, -1.f, kInf, -1.f, kNan};

TensorData data(const std::vector<float>& values) {
  return TensorData(Shape{static_cast<std::int64_t>(values.size())}, values);
}

// xsimd's expm1 is within ~1.5 ulp, torch's within 0.5: a relative 4e-7 (as the other
// transcendentals of elementwise_test.cpp).
constexpr Tolerance kUlps = Tolerance::rel_abs(4e-7, 1e-37);

template <class B>
class Expm1Test : public ::testing::Test {};
TYPED_TEST_SUITE(Expm1Test, test::AllBackends);

TYPED_TEST(Expm1Test, MatchesPyTorch) {
  vec<TypeParam>(kInputs).expm1().into_data().assert_approx_eq(
      data(kTorchExpm1), kUlps);
}

TYPED_TEST(Expm1Test, TinyInputsKeepTheirValueWhereExpMinusOneCancels) {
  // 9 values: the SIMD body and the tail. expm1(x) = x·(1 + x/2 + ...) = x to f32 precision
  // for |x| <= 1e-10 (PyTorch: the values themselves, above); exp(x) - 1 is 0 there.
  const std::vector<float> tiny = {1e-10f, -1e-10f, 3e-12f, -3e-12f, 1e-20f,
                                   -1e-20f, 1e-30f, -1e-30f, 1e-10f};
  auto x = vec<TypeParam>(tiny);
  x.expm1().into_data().assert_approx_eq(data(tiny), kUlps);
  (x.exp() - 1.f).into_data().assert_eq(data(std::vector<float>(9, 0.f)));
}

TYPED_TEST(Expm1Test, KeepsTheSignOfZero) {
  // expm1(-0) = -0 (IEEE, torch): 1/x tells the sign.
  vec<TypeParam>({0.f, -0.f, 0.f, -0.f, 0.f, -0.f, 0.f, -0.f, -0.f})
      .expm1()
      .recip()
      .into_data()
      .assert_eq(TensorData::from<float>(
          {kInf, -kInf, kInf, -kInf, kInf, -kInf, kInf, -kInf, -kInf}));
}

TEST(Expm1Primitive, IntTensorsAreRejected) {
  // A FLOAT row of the op table: no Int Tensor method, and the backend rejects i32 by name.
  auto a = CpuOps::full(Shape{2}, 1.0, DType::I32, {});
  EXPECT_THAT([&] { (void)CpuOps::unary(UnaryOp::Expm1, a); },
              ThrowsMessage<DTypeError>(HasSubstr("expm1: expected a f32 tensor, got i32")));
}

using AD = Autodiff<Cpu>;

TEST(Expm1Grad, MatchesPyTorchAutograd) {
  // d/dx sum(expm1(x)·g) = g·(expm1(x) + 1) = g·e^x, from PyTorch 1.13:
  //   x = torch.tensor(XS, requires_grad=True); (torch.expm1(x) * G).sum().backward()
  auto x = Tensor<AD, 1>::from_data(
               TensorData::from<float>({-3.f, -1.f, -1e-10f, 0.f, 1e-10f, 0.5f, 2.f, 20.f}))
               .require_grad();
  const auto g = Tensor<AD, 1>::from_data(
      TensorData::from<float>({1.f, 2.f, 1.f, -1.f, 1.f, 0.5f, 1.f, 1.f}));
  const auto grads = (x.expm1() * g).sum().backward();
  x.grad(grads)->into_data().assert_approx_eq(
      TensorData::from<float>({0.049787044525146484f, 0.735758900642395f, 1.f, -1.f, 1.f,
                               0.8243606090545654f, 7.389056205749512f, 485165184.f}),
      kUlps);
}

TEST(Expm1Grad, MatchesFiniteDifferences) {
  test::Sampler rng(1301);
  for (const std::int64_t n : {1, 7, 15}) {
    auto x = rng.uniform<1>(Shape{n}, -3, 3);
    EXPECT_TRUE(test::gradcheck(str_cat("expm1 [", n, "]"),
                                [](Tensor<AD, 1> v) { return v.expm1(); }, x));
    // Through another op on either side, so the rule composes.
    EXPECT_TRUE(test::gradcheck(str_cat("expm1 composed [", n, "]"),
                                [](Tensor<AD, 1> v) { return (v * 0.5f).expm1() * v; }, x));
  }
}

}  // namespace
}  // namespace kiln
