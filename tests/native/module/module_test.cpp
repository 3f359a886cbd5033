// KILN_MODULE: parameter visiting with field paths, counting, printing, valid() /
// from_inner() / no_grad() mapping with stable ids, and gradients through a module.
#include "kiln/module/module.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/kiln.hpp"

namespace kiln {
namespace {

using module::Param;
using AD = Autodiff<Cpu>;

template <Backend B>
struct Affine {
  Param<Tensor<B, 2>> weight;
  std::optional<Param<Tensor<B, 1>>> bias;
  KILN_MODULE(Affine, weight, bias)

  static Affine make(std::int64_t d_in, std::int64_t d_out, bool with_bias) {
    Affine m;
    m.weight = Param<Tensor<B, 2>>(Tensor<B, 2>::ones(Shape{d_out, d_in}));
    if (with_bias) m.bias = Param<Tensor<B, 1>>(Tensor<B, 1>::zeros(Shape{d_out}));
    return m;
  }
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    auto y = x.matmul(weight.val().transpose());
    return bias ? y + bias->val().template unsqueeze<2>() : y;
  }
};

template <Backend B>
struct Net {
  Affine<B> first;
  std::vector<Affine<B>> blocks;
  std::optional<Affine<B>> head;
  double scale = 2.0;
  KILN_MODULE(Net, first, blocks, head, scale)
};

template <class B>
Net<B> make_net() {
  Net<B> net;
  net.first = Affine<B>::make(3, 2, true);
  net.blocks = {Affine<B>::make(2, 2, false), Affine<B>::make(2, 2, true)};
  return net;
}

TEST(ModuleTest, VisitsParametersWithFieldPaths) {
  const auto net = make_net<Cpu>();
  EXPECT_EQ(net.param_paths(),
            (std::vector<std::string>{"first.weight", "first.bias", "blocks.0.weight",
                                      "blocks.1.weight", "blocks.1.bias"}));
  // 6 + 2 + 4 + 4 + 2
  EXPECT_EQ(net.num_params(), 18);
}

TEST(ModuleTest, PrintsTheTreeWithShapes) {
  std::ostringstream out;
  out << Affine<Cpu>::make(3, 2, false);
  EXPECT_EQ(out.str(), "Affine {weight: [2, 3], bias: None, params: 6}");
  std::ostringstream net;
  net << make_net<Cpu>();
  EXPECT_EQ(net.str(),
            "Net {first: Affine {weight: [2, 3], bias: [2], params: 8}, blocks: [Affine {weight: "
            "[2, 2], bias: None, params: 4}, Affine {weight: [2, 2], bias: [2], params: 6}], head: "
            "None, scale: 2, params: 18}");
}

TEST(ModuleTest, ValidFromInnerAndNoGradKeepIdsAndValues) {
  const auto net = make_net<AD>();
  EXPECT_TRUE(net.first.weight.val().is_require_grad());
  const Net<Cpu> inference = net.valid();
  EXPECT_EQ(inference.first.weight.id(), net.first.weight.id());
  EXPECT_EQ(inference.blocks[1].bias->id(), net.blocks[1].bias->id());
  EXPECT_EQ(inference.scale, 2.0);
  EXPECT_EQ(inference.num_params(), 18);
  EXPECT_EQ(inference.first.weight.val().to_data().to_vec<float>(), std::vector<float>(6, 1.f));

  const Net<AD> back = inference.from_inner<AD>();
  EXPECT_EQ(back.first.weight.id(), net.first.weight.id());
  EXPECT_TRUE(back.first.weight.val().is_require_grad());

  const Net<AD> frozen = net.no_grad();
  EXPECT_FALSE(frozen.first.weight.is_require_grad());
  EXPECT_FALSE(frozen.first.weight.val().is_require_grad());
  EXPECT_EQ(frozen.first.weight.id(), net.first.weight.id());
}

TEST(ModuleTest, ToDeviceKeepsIdsFlagsAndValuesOnTheOneCpuDevice) {
  const auto net = make_net<AD>();
  const Net<AD> moved = net.to_device(Device<AD>{});
  EXPECT_EQ(moved.first.weight.id(), net.first.weight.id());
  EXPECT_TRUE(moved.first.weight.val().is_require_grad());
  EXPECT_EQ(moved.blocks[1].bias->val().to_data().to_vec<float>(),
            net.blocks[1].bias->val().to_data().to_vec<float>());
  EXPECT_EQ(moved.first.weight.val().device(), Device<AD>{});
  // Gradients still reach the moved parameters.
  const auto x = Tensor<AD, 2>::from_floats({{1.f, 2.f, 3.f}});
  auto grads = moved.first.forward(x).sum().backward();
  EXPECT_TRUE(moved.first.weight.val().grad(grads).has_value());
}

TEST(ModuleTest, GradientsReachEveryParameterThatRequiresThem) {
  auto m = Affine<AD>::make(3, 2, true);
  const auto x = Tensor<AD, 2>::from_floats({{1.f, 2.f, 3.f}});
  auto grads = m.forward(x).sum().backward();
  // d sum(x·Wᵀ + b)/dW = each row x; /db = 1.
  EXPECT_EQ(m.weight.val().grad(grads)->to_data().to_vec<float>(),
            (std::vector<float>{1.f, 2.f, 3.f, 1.f, 2.f, 3.f}));
  EXPECT_EQ(m.bias->val().grad(grads)->to_data().to_vec<float>(), (std::vector<float>{1.f, 1.f}));

  auto frozen = m.no_grad();
  EXPECT_THROW((void)frozen.forward(x).sum().backward(), StateError);
}

TEST(ModuleTest, EmptyParametersThrowOnUse) {
  Affine<Cpu> empty;
  EXPECT_FALSE(empty.weight.is_initialized());
  EXPECT_EQ(empty.num_params(), 0);
  EXPECT_THAT([&] { (void)empty.weight.val(); },
              testing::ThrowsMessage<StateError>(testing::HasSubstr("Param::val: the parameter is empty")));
}

// Modules may have the short names the macro's member templates once used for their
// template parameters (M, V, R, BB, AD): inside `struct M`, `template <class M> auto map`
// hid the module's own name and nothing using map() compiled.
template <Backend B>
struct M {
  Param<Tensor<B, 1>> w;
  KILN_MODULE(M, w)
};
template <Backend B>
struct V {
  M<B> inner;
  KILN_MODULE(V, inner)
};
template <Backend B>
struct R {
  V<B> inner;
  KILN_MODULE(R, inner)
};
template <Backend B>
struct BB {
  R<B> inner;
  KILN_MODULE(BB, inner)
};

TEST(ModuleTest, ShortModuleNamesDoNotClashWithTheMacrosTemplateParameters) {
  BB<AD> m;
  m.inner.inner.inner.w = Param<Tensor<AD, 1>>(Tensor<AD, 1>::from_floats({1.f, 2.f}));
  EXPECT_EQ(m.param_paths(), (std::vector<std::string>{"inner.inner.inner.w"}));
  const BB<Cpu> inference = m.valid();
  EXPECT_EQ(inference.inner.inner.inner.w.id(), m.inner.inner.inner.w.id());
  const BB<AD> back = inference.from_inner<AD>();
  EXPECT_TRUE(back.inner.inner.inner.w.is_require_grad());
  EXPECT_FALSE(m.no_grad().inner.inner.inner.w.is_require_grad());
  const auto bytes = record::SafetensorsRecorder{}.to_bytes(inference);
  const BB<Cpu> loaded = record::SafetensorsRecorder{}.from_bytes(inference, bytes, Device<Cpu>{});
  EXPECT_EQ(loaded.inner.inner.inner.w.val().to_data().to_vec<float>(),
            (std::vector<float>{1.f, 2.f}));
}

}  // namespace
}  // namespace kiln
