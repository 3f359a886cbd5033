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

}  // namespace
}  // namespace kiln::optim
