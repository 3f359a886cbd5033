#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "kiln/kiln.hpp"

using namespace kiln;

TEST(Creation, FromDataRoundTrips) {
  auto t = Tensor<Cpu, 2>::from_data({{1.f, 2.f}, {3.f, 4.f}});
  EXPECT_EQ(t.dims(), (std::array<std::int64_t, 2>{2, 2}));
  t.to_data().assert_eq(TensorData::from<float>({{1.f, 2.f}, {3.f, 4.f}}));
}
