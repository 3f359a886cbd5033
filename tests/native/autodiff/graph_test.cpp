// The autodiff graph itself: the tutorial's Exercise 3, leaves and require_grad semantics,
// accumulation over shared nodes, release by backward(), and memory over long loops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>
#include <thread>

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

TEST(AutodiffGraphTest, RequireGradMarksALeafAndDetachCutsTheGraph) {
  auto x = Tensor<AD, 1>::from_floats({1.f, 2.f});
  EXPECT_FALSE(x.is_require_grad());
  auto w = x.require_grad();
  EXPECT_TRUE(w.is_require_grad());
  EXPECT_FALSE(x.is_require_grad()) << "require_grad returns a new handle";
  EXPECT_FALSE(w.set_require_grad(false).is_require_grad());
  EXPECT_FALSE(w.detach().is_require_grad());
  EXPECT_TRUE((w * 2.f).is_require_grad()) << "an op on a tracked input is tracked";
  EXPECT_FALSE((x * 2.f).is_require_grad());

  // y = w·detach(w): only the first factor carries a gradient, dy/dw = w (not 2w).
  auto grads = (w * w.detach()).sum().backward();
  EXPECT_EQ(values(*w.grad(grads)), (std::vector<float>{1.f, 2.f}));
}

TEST(AutodiffGraphTest, InnerAndFromInnerCrossBackends) {
  auto w = Tensor<AD, 2>::from_floats({{1.f, 2.f}, {3.f, 4.f}}).require_grad();
  Tensor<Cpu, 2> inner = w.inner();
  EXPECT_EQ(inner.to_data().to_vec<float>(), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  auto back = Tensor<AD, 2>::from_inner(inner * 2.f);
  EXPECT_FALSE(back.is_require_grad());
  EXPECT_EQ(back.to_data().to_vec<float>(), (std::vector<float>{2.f, 4.f, 6.f, 8.f}));
  // Int tensors pass through unchanged.
  auto i = Tensor<AD, 1, Int>::from_ints({3, 4});
  EXPECT_EQ(i.inner().to_data().to_vec<std::int32_t>(), (std::vector<std::int32_t>{3, 4}));
  EXPECT_EQ(AD::name(), "autodiff<cpu>");
}

TEST(AutodiffGraphTest, SharedNodesAccumulateBeforeTheirStepRuns) {
  // y = x·x + x: dy/dx = 2x + 1. x feeds three uses; the product node feeds one.
  auto x = Tensor<AD, 1>::from_floats({-1.f, 0.5f, 3.f}).require_grad();
  auto grads = (x * x + x).sum().backward();
  EXPECT_EQ(values(*x.grad(grads)), (std::vector<float>{-1.f, 2.f, 7.f}));
  // x + x on the same node: 2.
  auto x2 = Tensor<AD, 1>::from_floats({5.f}).require_grad();
  EXPECT_EQ(values(*x2.grad((x2 + x2).sum().backward())), (std::vector<float>{2.f}));
}

TEST(AutodiffGraphTest, ALeafThatIsTheLossGetsOnes) {
  auto x = Tensor<AD, 1>::from_floats({5.f}).require_grad();
  EXPECT_EQ(values(*x.grad(x.backward())), (std::vector<float>{1.f}));
}

TEST(AutodiffGraphTest, BackwardChecksItsInput) {
  auto x = Tensor<AD, 1>::from_floats({1.f, 2.f}).require_grad();
  EXPECT_THAT([&] { (void)(x * 2.f).backward(); },
              testing::ThrowsMessage<ShapeError>(
                  HasSubstr("backward: expected a tensor with one element (a loss), got shape [2]")));
  auto c = Tensor<AD, 1>::from_floats({1.f});
  EXPECT_THAT([&] { (void)c.exp().backward(); },
              testing::ThrowsMessage<StateError>(HasSubstr("does not require gradients")));
}

TEST(AutodiffGraphTest, ASecondBackwardThroughAReleasedGraphThrows) {
  auto x = Tensor<AD, 1>::from_floats({1.f, 2.f}).require_grad();
  auto y = x.exp();
  auto loss = y.sum();
  auto grads = loss.backward();
  ASSERT_TRUE(x.grad(grads).has_value());
  EXPECT_THAT([&] { (void)loss.backward(); },
              testing::ThrowsMessage<StateError>(
                  HasSubstr("backward: the graph of this tensor was already released (in whole or in part)")));
  // A new loss built on a released intermediate reaches the released node: also an error
  // (PyTorch: "Trying to backward through the graph a second time").
  EXPECT_THAT([&] { (void)(y * 2.f).sum().backward(); },
              testing::ThrowsMessage<StateError>(HasSubstr("already released")));
  // The leaf itself is never released: a fresh forward pass works.
  auto again = x.exp().sum().backward();
  EXPECT_TRUE(x.grad(again).has_value());
}

TEST(AutodiffGraphTest, GradRemoveReplaceAndRetainedIntermediates) {
  auto x = Tensor<AD, 1>::from_floats({1.f, 2.f}).require_grad();
  auto h = (x * 3.f);
  auto kept = (x * 2.f).set_require_grad(true);  // retain_grad on an op output
  auto grads = (h + kept * kept).sum().backward();
  EXPECT_FALSE(h.grad(grads).has_value()) << "intermediate gradients are not kept";
  // d/dkept of kept² = 2·kept = [4, 8]
  EXPECT_EQ(values(*kept.grad(grads)), (std::vector<float>{4.f, 8.f}));
  // d/dx = 3 + 2·kept·2 = 3 + 8x
  EXPECT_EQ(values(*x.grad(grads)), (std::vector<float>{11.f, 19.f}));

  auto removed = x.grad_remove(grads);
  ASSERT_TRUE(removed.has_value());
  EXPECT_FALSE(x.grad(grads).has_value());
  x.grad_replace(grads, Tensor<Cpu, 1>::from_floats({7.f, 8.f}));
  EXPECT_EQ(values(*x.grad(grads)), (std::vector<float>{7.f, 8.f}));
  EXPECT_THAT([&] { x.grad_replace(grads, Tensor<Cpu, 1>::from_floats({1.f})); },
              testing::ThrowsMessage<ShapeError>(HasSubstr("grad_replace: the gradient's shape [1] "
                                                           "differs from the tensor's [2]")));
  auto c = Tensor<AD, 1>::from_floats({1.f, 2.f});
  EXPECT_THROW(c.grad_replace(grads, Tensor<Cpu, 1>::from_floats({1.f, 2.f})), StateError);
}

TEST(AutodiffGraphTest, NonDifferentiableOpsPassNoGradient) {
  auto x = Tensor<AD, 2>::from_floats({{1.f, 5.f}, {4.f, 2.f}}).require_grad();
  auto idx = x.argmax(1);  // Int: no graph
  auto mask = x.greater_elem(2.f);
  auto as_float = x.int_().float_();  // through Int: cut
  EXPECT_FALSE(as_float.is_require_grad());
  auto picked = x.gather(1, idx).sum() * 2.f + x.mask_fill(mask, 0.f).sum() + as_float.sum();
  auto grads = picked.backward();
  // gather: 2 at each row's argmax (5 and 4); mask_fill: 1 where x <= 2 (1 and 2).
  EXPECT_EQ(grads.size(), 1u);
  EXPECT_EQ(x.grad(grads)->to_data().to_vec<float>(), (std::vector<float>{1.f, 2.f, 2.f, 1.f}));
}

TEST(AutodiffGraphTest, BackwardReleasesSavedIntermediatesAndNodes) {
  auto x = Tensor<AD, 1>::from_floats({0.5f, 1.5f}).require_grad();
  const std::int64_t nodes0 = autodiff::live_nodes();
  std::int64_t buffers_before = 0;
  {
    // exp saves its output and sin its input (the same buffer); both only in the graph.
    auto loss = x.exp().sin().sum();
    EXPECT_EQ(autodiff::live_nodes(), nodes0 + 3);
    buffers_before = memory_stats().live_buffers;
    auto grads = loss.backward();
    // The saved exp output is gone; the gradient of x (one buffer) was added.
    EXPECT_EQ(memory_stats().live_buffers, buffers_before - 1 + 1);
    // Only the loss's own (released) node is left of the graph.
    EXPECT_EQ(autodiff::live_nodes(), nodes0 + 1);
    EXPECT_NEAR(x.grad(grads)->to_data().to_vec<float>()[0],
                std::cos(std::exp(0.5f)) * std::exp(0.5f), 1e-5f);
  }
  EXPECT_EQ(autodiff::live_nodes(), nodes0);
}

TEST(AutodiffGraphTest, UntrackedTensorsBuildNoGraph) {
  const std::int64_t nodes0 = autodiff::live_nodes();
  auto a = Tensor<AD, 2>::random(Shape{4, 3});
  auto b = Tensor<AD, 2>::random(Shape{3, 5});
  auto c = activation::softmax(a.matmul(b).exp() + 1.f, 1).sum_dim(0);
  EXPECT_FALSE(c.is_require_grad());
  EXPECT_EQ(autodiff::live_nodes(), nodes0);
}

TEST(AutodiffGraphTest, DeepGraphsDoNotOverflowTheStack) {
  // 200,000 chained ops: building, back-propagating and dropping the graph are iterative.
  auto x = Tensor<AD, 1>::from_floats({1.f}).require_grad();
  auto y = x;
  for (int i = 0; i < 200000; ++i) y = y + 0.0f;
  auto grads = y.backward();
  EXPECT_EQ(values(*x.grad(grads)), (std::vector<float>{1.f}));
  // And a graph dropped without backward.
  auto z = x;
  for (int i = 0; i < 200000; ++i) z = z * 1.0f;
  const std::int64_t nodes = autodiff::live_nodes();
  z = x;
  EXPECT_EQ(autodiff::live_nodes(), nodes - 200000);
}

// 10,000 forward + backward steps of a small regression model (with a manual SGD update
// on the inner backend, as an optimizer does): live buffers, bytes and graph nodes stay
// flat, and the loss goes down.
TEST(AutodiffGraphTest, TrainingLoopKeepsMemoryFlat) {
  Cpu::seed(7);
  auto inputs = Tensor<AD, 2>::random(Shape{16, 4}, Distribution::uniform(-1, 1));
  auto true_w = Tensor<AD, 2>::from_floats({{0.5f}, {-1.f}, {2.f}, {0.25f}});
  auto targets = inputs.matmul(true_w);
  auto w = Tensor<AD, 2>::zeros(Shape{4, 1}).require_grad();
  auto b = Tensor<AD, 1>::zeros(Shape{1}).require_grad();
  MemoryStats at_100{};
  std::int64_t nodes_at_100 = 0;
  float first_loss = 0.f, last_loss = 0.f;
  for (int step = 1; step <= 10000; ++step) {
    auto pred = activation::tanh(inputs.matmul(w) + b.unsqueeze<2>()) * 3.f;
    auto loss = (pred - targets).powf_scalar(2.0).mean();
    auto grads = loss.backward();
    auto gw = *w.grad_remove(grads);
    auto gb = *b.grad_remove(grads);
    w = Tensor<AD, 2>::from_inner(w.inner() - gw * 0.05f).require_grad();
    b = Tensor<AD, 1>::from_inner(b.inner() - gb * 0.05f).require_grad();
    if (step == 1) first_loss = loss.into_scalar();
    if (step == 100) {
      at_100 = memory_stats();
      nodes_at_100 = autodiff::live_nodes();
    }
    if (step == 10000) {
      last_loss = loss.into_scalar();
      const MemoryStats now = memory_stats();
      EXPECT_EQ(now.live_buffers, at_100.live_buffers);
      EXPECT_EQ(now.live_bytes, at_100.live_bytes);
      EXPECT_EQ(autodiff::live_nodes(), nodes_at_100);
    }
  }
  EXPECT_LT(last_loss, first_loss * 0.05f);
}

// Two threads back-propagating through a shared intermediate: one gets the gradients, the
// other a StateError; no data race on the released nodes (the engine holds a lock).
TEST(AutodiffGraphTest, ConcurrentBackwardThroughASharedNodeIsSafe) {
  for (int round = 0; round < 200; ++round) {
    auto w = Tensor<AD, 1>::from_floats({0.5f, -1.f}).require_grad();
    auto h = activation::tanh(w * 2.f);
    auto la = (h * 3.f).sum();
    auto lb = (h * 5.f).sum();
    int ok = 0, released = 0;
    std::mutex m;
    auto run = [&](const Tensor<AD, 1>& loss) {
      try {
        (void)loss.backward();
        std::lock_guard<std::mutex> g(m);
        ++ok;
      } catch (const StateError&) {
        std::lock_guard<std::mutex> g(m);
        ++released;
      }
    };
    std::thread ta(run, la), tb(run, lb);
    ta.join();
    tb.join();
    ASSERT_EQ(ok, 1) << "round " << round;
    ASSERT_EQ(released, 1) << "round " << round;
  }
}

// Non-finite corners where the order of operations decides between a number, inf and nan;
// expected values are PyTorch 1.13's.
TEST(AutodiffGraphTest, NonFiniteCornersMatchPyTorch) {
  const float inf = std::numeric_limits<float>::infinity();
  // d(a/b)/db = -(a/b)/b: no overflow from b·b.
  auto a = Tensor<AD, 1>::from_floats({1e30f, 1e-25f});
  auto b = Tensor<AD, 1>::from_floats({1e20f, 1e-23f}).require_grad();
  const auto gb = b.grad((a / b).sum().backward())->to_data().to_vec<float>();
  EXPECT_FLOAT_EQ(gb[0], -1e-10f);
  EXPECT_FLOAT_EQ(gb[1], -1e21f);
  // An infinite upstream gradient of a whole-tensor max reaches only the selected element.
  auto y = Tensor<AD, 1>::from_floats({3.f, 1.f}).require_grad();
  const auto gy = y.grad((y.max() * inf).sum().backward())->to_data().to_vec<float>();
  EXPECT_EQ(gy, (std::vector<float>{inf, 0.f}));
  // prod with one zero: the zero gets the product of the others (inf); the rest get 0
  // (PyTorch: nan for 3, whose others include 0·inf; a documented difference).
  auto p = Tensor<AD, 1>::from_floats({3.f, 0.f, inf}).require_grad();
  EXPECT_EQ(p.grad(p.prod().backward())->to_data().to_vec<float>(),
            (std::vector<float>{0.f, inf, 0.f}));
  // abs'(nan) = 0 (PyTorch's sgn(nan) = 0).
  auto n = Tensor<AD, 1>::from_floats({std::nanf(""), -2.f}).require_grad();
  EXPECT_EQ(n.grad(n.abs().sum().backward())->to_data().to_vec<float>(),
            (std::vector<float>{0.f, -1.f}));
}

}  // namespace
}  // namespace kiln
