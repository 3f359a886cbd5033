// kiln::TypeKey (kiln/core/type_key.hpp): the type identity the Sequential registry uses
// instead of typeid / std::type_index, so the wasm engine can be built with -fno-rtti.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <typeinfo>
#include <unordered_set>

#include "kiln/core/type_key.hpp"
#include "kiln/kiln.hpp"

namespace kiln {
namespace {

TEST(TypeKey, EqualForTheSameTypeOnlyIgnoringCv) {
  EXPECT_EQ(TypeKey::of<int>(), TypeKey::of<int>());
  EXPECT_EQ(TypeKey::of<int>(), TypeKey::of<const int>());
  EXPECT_EQ(TypeKey::of<nn::LinearConfig>(), TypeKey::of<const volatile nn::LinearConfig>());
  EXPECT_FALSE(TypeKey::of<int>() == TypeKey::of<unsigned>());
  EXPECT_FALSE(TypeKey::of<nn::Linear<Cpu>>() == TypeKey::of<nn::Linear<Autodiff<Cpu>>>());
  EXPECT_EQ(TypeKey(), TypeKey::of<void>());
}

TEST(TypeKey, OrderedAndHashedForMapsAndSets) {
  std::map<TypeKey, int> ordered{{TypeKey::of<int>(), 1}, {TypeKey::of<float>(), 2}};
  ordered[TypeKey::of<const int>()] = 3;
  EXPECT_EQ(ordered.size(), 2u);
  EXPECT_EQ(ordered.at(TypeKey::of<int>()), 3);
  const TypeKey a = TypeKey::of<int>(), b = TypeKey::of<float>();
  EXPECT_NE(a < b, b < a);
  std::unordered_set<TypeKey> set{a, b, TypeKey::of<int>()};
  EXPECT_EQ(set.size(), 2u);
}

TEST(TypeKey, NameIsTypeidsNameWithRttiElseThePrettyName) {
#if defined(__cpp_rtti) || defined(__GXX_RTTI)
  EXPECT_STREQ(TypeKey::of<nn::LinearConfig>().name(), typeid(nn::LinearConfig).name());
#endif
  EXPECT_EQ(detail::type_name_from_signature(
                "const char *kiln::detail::type_key_name() [T = kiln::nn::LinearConfig]"),
            "kiln::nn::LinearConfig");
  EXPECT_EQ(detail::type_name_from_signature(
                "const char* kiln::detail::type_key_name() [with T = kiln::Shape]"),
            "kiln::Shape");
}

TEST(TypeKey, SequentialLayersAndConfigsReportTheirType) {
  const nn::SequentialLayerConfig config = nn::LinearConfig(2, 3);
  EXPECT_TRUE(config.holds<nn::LinearConfig>());
  EXPECT_FALSE(config.holds<nn::DropoutConfig>());
  EXPECT_EQ(config.type(), TypeKey::of<nn::LinearConfig>());
  const auto model =
      nn::SequentialConfig().add(nn::LinearConfig(2, 3)).add(nn::Relu{}).init<Cpu>();
  EXPECT_EQ(model.layers[0].type(), "linear");
  EXPECT_TRUE(model.layers[0].holds<nn::Linear<Cpu>>());
  EXPECT_EQ(model.layers[0].type_key(), TypeKey::of<nn::Linear<Cpu>>());
  EXPECT_THROW(model.layers[0].get<nn::Relu>(), StateError);
  // The autodiff copy converts back and forth through the registry's TypeKey tables.
  const auto trained = nn::SequentialConfig().add(nn::LinearConfig(2, 3)).init<Autodiff<Cpu>>();
  const auto inner = trained.valid();
  EXPECT_TRUE(inner.layers[0].holds<nn::Linear<Cpu>>());
  EXPECT_TRUE(inner.from_inner<Autodiff<Cpu>>().layers[0].holds<nn::Linear<Autodiff<Cpu>>>());
}

}  // namespace
}  // namespace kiln
