// Reduction: names, printing, JSON (also as a config field), and reduce().
#include "kiln/nn/loss/reduction.hpp"
#include "kiln/config/json_interop.hpp"  // to_json() / from_json(j) as nlohmann::json

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "kiln/kiln.hpp"
#include "support/backends.hpp"

namespace kiln {
namespace {

using nn::loss::Reduction;
using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(ReductionTest, NamesAndPrinting) {
  EXPECT_EQ(nn::loss::reduction_name(Reduction::Mean), "mean");
  EXPECT_EQ(nn::loss::reduction_name(Reduction::Sum), "sum");
  std::ostringstream out;
  out << Reduction::Sum << " " << Reduction::Mean;
  EXPECT_EQ(out.str(), "sum mean");
}

TEST(ReductionTest, JsonIsTheLowerCaseName) {
  EXPECT_EQ(config::Json(Reduction::Mean), config::Json("mean"));
  EXPECT_EQ(config::Json(Reduction::Sum), config::Json("sum"));
  EXPECT_EQ(config::Json("sum").get<Reduction>(), Reduction::Sum);
  EXPECT_EQ(config::Json("mean").get<Reduction>(), Reduction::Mean);
}

TEST(ReductionTest, JsonRejectsOtherValues) {
  EXPECT_THAT([] { (void)config::Json("avg").get<Reduction>(); },
              ThrowsMessage<ConfigError>("expected \"mean\" or \"sum\", got the string \"avg\""));
  // Not the enum's underlying integer (nlohmann's default for enums).
  EXPECT_THAT([] { (void)config::Json(0).get<Reduction>(); },
              ThrowsMessage<ConfigError>("expected \"mean\" or \"sum\", got the integer 0"));
  EXPECT_THAT([] { (void)config::Json("Mean").get<Reduction>(); },
              ThrowsMessage<ConfigError>(HasSubstr("got the string \"Mean\"")));
}

TEST(ReductionTest, AsAConfigFieldTheErrorNamesTheField) {
  EXPECT_THAT(
      [] { nn::loss::CrossEntropyLossConfig::from_json_string(R"({"reduction": "none"})"); },
      ThrowsMessage<ConfigError>("CrossEntropyLossConfig.reduction: expected \"mean\" or "
                                 "\"sum\", got the string \"none\""));
}

template <class B>
class ReduceTest : public ::testing::Test {};
TYPED_TEST_SUITE(ReduceTest, test::AllBackends);

TYPED_TEST(ReduceTest, MeanAndSumByHand) {
  const auto x = Tensor<TypeParam, 2>::from_data({{1.f, 2.f}, {3.f, 6.f}});
  nn::loss::reduce(x, Reduction::Mean).into_data().assert_eq(TensorData::from({3.f}));
  nn::loss::reduce(x, Reduction::Sum).into_data().assert_eq(TensorData::from({12.f}));
}

TYPED_TEST(ReduceTest, MeanOfNothingIsNanSumIsZero) {
  const auto x = Tensor<TypeParam, 1>::zeros(Shape{0});
  EXPECT_TRUE(std::isnan(nn::loss::reduce(x, Reduction::Mean).into_scalar()));
  EXPECT_EQ(nn::loss::reduce(x, Reduction::Sum).into_scalar(), 0.f);
}

}  // namespace
}  // namespace kiln
