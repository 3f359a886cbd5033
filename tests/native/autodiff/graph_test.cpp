// The autodiff graph itself: the tutorial's Exercise 3, leaves and require_grad semantics,
// accumulation over shared nodes, release by backward(), and memory over long loops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using testing::HasSubstr;
using AD = Autodiff<Cpu>;

static_assert(AutodiffBackend<AD>);
static_assert(!AutodiffBackend<Cpu>);
static_assert(std::is_same_v<AD::Inner, Cpu>);

std::vector<float> values(const Tensor<Cpu, 1>& t) { return t.to_data().to_vec<float>(); }

// Burn tutorial, Step 3, Exercise 3: loss = ((w·x).sum() - y)², dloss/dw = 2·(y_hat - y)·x.
TEST(AutodiffGraphTest, TutorialExercise3) {
  auto w = Tensor<AD, 1>::from_floats({0.5f, -0.3f, 0.8f}).require_grad();
  auto x = Tensor<AD, 1>::from_floats({1.f, 2.f, 3.f});
  const float y = 2.5f;
  auto y_hat = (w * x).sum();
  auto loss = (y_hat - y).powf_scalar(2.0);
  auto grads = loss.backward();
  auto dw = w.grad(grads);
  ASSERT_TRUE(dw.has_value());
  // y_hat = 0.5 - 0.6 + 2.4 = 2.3, so dloss/dw = 2·(2.3 - 2.5)·x = -0.4·[1, 2, 3].
  EXPECT_THAT(values(*dw), testing::Pointwise(testing::FloatNear(1e-5f),
                                              std::vector<float>{-0.4f, -0.8f, -1.2f}));
  EXPECT_NEAR(loss.into_scalar(), 0.04f, 1e-6f);
  // x did not require gradients: no gradient, no node.
  EXPECT_FALSE(x.grad(grads).has_value());
  EXPECT_FALSE(x.is_require_grad());
  EXPECT_TRUE(w.is_require_grad());
}

}  // namespace
}  // namespace kiln
