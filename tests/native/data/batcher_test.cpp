// The Batcher concept: what satisfies it and what does not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/batchers.hpp"
#include "kiln/kiln.hpp"

using namespace kiln;
using namespace kiln::data;

namespace {

struct NonConstBatcher {  // batch is not const: a loader could not call it concurrently
  Tensor<Cpu, 2> batch(std::vector<float> items, const Device<Cpu>& device);
};
struct WrongOutput {
  std::string batch(std::vector<float> items, const Device<Cpu>& device) const;
};
struct NoDevice {
  Tensor<Cpu, 2> batch(std::vector<float> items) const;
};

}  // namespace

static_assert(Batcher<test::FloatBatcher<Cpu>, Cpu, float, Tensor<Cpu, 2>>);
static_assert(
    Batcher<test::FloatBatcher<Autodiff<Cpu>>, Autodiff<Cpu>, float, Tensor<Autodiff<Cpu>, 2>>);
static_assert(!Batcher<test::FloatBatcher<Cpu>, Cpu, std::string, Tensor<Cpu, 2>>);
static_assert(!Batcher<NonConstBatcher, Cpu, float, Tensor<Cpu, 2>>);
static_assert(!Batcher<WrongOutput, Cpu, float, Tensor<Cpu, 2>>);
static_assert(!Batcher<NoDevice, Cpu, float, Tensor<Cpu, 2>>);

TEST(Batcher, StacksItemsInOrder) {
  const auto batch = test::FloatBatcher<Cpu>{}.batch({3.f, 1.f, 2.f}, Device<Cpu>{});
  EXPECT_EQ(batch.shape(), Shape({3, 1}));
  EXPECT_EQ(test::values(batch), (std::vector<float>{3.f, 1.f, 2.f}));
}
