// optim::clip_grad_norm_on_device (kiln/optim/grad_clipping.hpp): the norm clipping that
// GradientClipping::norm runs on a backend whose reads are asynchronous (Wgpu), run here on
// the Cpu backend: the same scaling as clip_grad_norm (by hand, and against it), with nan and
// inf norms as PyTorch's clip_grad_norm_ treats them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::optim {
namespace {

using testing::ElementsAre;
using testing::FloatEq;

CpuTensor vec(std::vector<float> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return CpuOps::from_data(TensorData(Shape{n}, std::move(v)), DType::F32, {});
}
std::vector<float> values(const CpuTensor& t) { return CpuOps::into_data(t).to_vec<float>(); }

TEST(ClipGradNormOnDevice, ScalesByMaxNormOverTheGlobalNorm) {
  // [3] and [4, 0]: norm 5; max_norm 1 -> scale 1 / (5 + 1e-6).
  GradientList<Cpu> grads{{vec({3.f}), vec({4.f, 0.f})}};
  clip_grad_norm_on_device(grads, 1.0);
  const float scale = static_cast<float>(1.0 / (5.0 + 1e-6));
  EXPECT_THAT(values(grads.grads[0]), ElementsAre(FloatEq(3.f * scale)));
  EXPECT_THAT(values(grads.grads[1]), ElementsAre(FloatEq(4.f * scale), 0.f));
  // Below max_norm: unchanged (scale exactly 1).
  GradientList<Cpu> small{{vec({0.3f, -0.4f})}};
  clip_grad_norm_on_device(small, 1.0);
  EXPECT_THAT(values(small.grads[0]), ElementsAre(0.3f, -0.4f));
}

TEST(ClipGradNormOnDevice, AgreesWithClipGradNorm) {
  std::vector<std::vector<float>> g{{0.5f, -2.f, 7.f}, {}, {1e-3f, 3.f}, {-4.f}};
  GradientList<Cpu> a, b;
  for (const auto& v : g) {
    a.grads.push_back(vec(v));
    b.grads.push_back(vec(v));
  }
  (void)clip_grad_norm(a, 2.0, ClipGradNormOptions{});
  clip_grad_norm_on_device(b, 2.0);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto va = values(a.grads[i]), vb = values(b.grads[i]);
    ASSERT_EQ(va.size(), vb.size());
    for (std::size_t j = 0; j < va.size(); ++j) EXPECT_NEAR(vb[j], va[j], 1e-6f * std::fabs(va[j]));
  }
}

TEST(ClipGradNormOnDevice, NonFiniteNormsAsPyTorch) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // A nan element: the norm is nan, every gradient becomes nan.
  GradientList<Cpu> with_nan{{vec({1.f, std::nanf("")}), vec({2.f})}};
  clip_grad_norm_on_device(with_nan, 1.0);
  EXPECT_TRUE(std::isnan(values(with_nan.grads[1])[0]));
  // An inf element: scale 0, so finite elements become 0 and the inf one nan (inf · 0).
  GradientList<Cpu> with_inf{{vec({1.f, kInf})}};
  clip_grad_norm_on_device(with_inf, 1.0);
  const auto v = values(with_inf.grads[0]);
  EXPECT_EQ(v[0], 0.f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_THROW(clip_grad_norm_on_device(with_inf, 0.0), ValueError);
}

TEST(GradNormOnDevice, EveryNormTypeAgreesWithGradNorm) {
  // grad_norm (per-tensor float32 sums combined in double, read on the host) is the
  // reference; the device form combines in float32. By hand for p = 1: 0.5+2+7+1e-3+3+4.
  std::vector<std::vector<float>> g{{0.5f, -2.f, 7.f}, {}, {1e-3f, 3.f}, {-4.f}};
  GradientList<Cpu> list;
  for (const auto& v : g) list.grads.push_back(vec(v));
  EXPECT_FLOAT_EQ(values(grad_norm_on_device(list, 1.0))[0], 16.501f);
  EXPECT_FLOAT_EQ(values(grad_norm_on_device(list, std::numeric_limits<double>::infinity()))[0], 7.f);
  for (const double p : {0.5, 1.0, 2.0, 3.0, 7.5, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(p);
    const double want = grad_norm(list, p);
    EXPECT_NEAR(values(grad_norm_on_device(list, p))[0], want, 2e-6 * want);
  }
  EXPECT_THAT(values(grad_norm_on_device(GradientList<Cpu>{}, 2.0)), ElementsAre(0.f));
  EXPECT_THROW((void)grad_norm_on_device(list, 0.0), ValueError);
  EXPECT_THROW((void)grad_norm_on_device(list, -1.0), ValueError);
  EXPECT_THROW((void)grad_norm_on_device(list, std::nan("")), ValueError);
}

TEST(GradNormOnDevice, NanAndInfElements) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const double inf_norm = std::numeric_limits<double>::infinity();
  // nan in one tensor: every norm type is nan (the max reduction propagates it).
  GradientList<Cpu> with_nan{{vec({1.f, 5.f}), vec({std::nanf(""), 2.f})}};
  for (const double p : {1.0, 2.0, 3.0, inf_norm}) {
    SCOPED_TRACE(p);
    EXPECT_TRUE(std::isnan(values(grad_norm_on_device(with_nan, p))[0]));
  }
  // inf without nan: every norm type is inf.
  GradientList<Cpu> with_inf{{vec({1.f}), vec({-kInf, 2.f})}};
  for (const double p : {1.0, 2.0, 3.0, inf_norm}) {
    SCOPED_TRACE(p);
    EXPECT_EQ(values(grad_norm_on_device(with_inf, p))[0], kInf);
  }
}

TEST(ClipGradNormOnDevice, NormTypesAgreeWithClipGradNormAndReturnTheNorm) {
  std::vector<std::vector<float>> g{{0.5f, -2.f, 7.f}, {1e-3f, 3.f}, {-4.f}};
  for (const double p : {1.0, 2.0, 3.0, std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(p);
    GradientList<Cpu> a, b;
    for (const auto& v : g) {
      a.grads.push_back(vec(v));
      b.grads.push_back(vec(v));
    }
    const double total = clip_grad_norm(a, 1.5, ClipGradNormOptions{p, false});
    const auto norm = clip_grad_norm_on_device(b, 1.5, p);
    EXPECT_NEAR(values(norm)[0], total, 2e-6 * total);
    for (std::size_t i = 0; i < g.size(); ++i) {
      const auto va = values(a.grads[i]), vb = values(b.grads[i]);
      for (std::size_t j = 0; j < va.size(); ++j) EXPECT_NEAR(vb[j], va[j], 2e-6f * std::fabs(va[j]));
      // Clipped: the values changed (max_norm 1.5 is below every norm here).
      EXPECT_NE(vb[0], g[i][0]);
    }
  }
  GradientList<Cpu> list{{vec({1.f})}};
  EXPECT_THROW((void)clip_grad_norm_on_device(list, 1.0, 0.0), ValueError);
  EXPECT_THAT(values(list.grads[0]), ElementsAre(1.f));
}

}  // namespace
}  // namespace kiln::optim
