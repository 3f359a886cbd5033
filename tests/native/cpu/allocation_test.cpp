// cpu::check_allocation: the size check of every CPU tensor allocation, under the caller's
// op name (the JS factories) and, from the CpuTensor constructor, under "tensor".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kiln/core/memory.hpp"
#include "kiln/cpu/allocation.hpp"
#include "kiln/cpu/cpu.hpp"

namespace kiln {
namespace {

using ::testing::HasSubstr;

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

TEST(CpuAllocationCheck, NamesTheCallersOp) {
  // 65536 · 65536 = 4294967296 elements (by hand), past 2^31 - 1
  EXPECT_EQ(message_of<LimitError>([] { cpu::check_allocation("zeros", Shape{65536, 65536}, DType::F32); }),
            "zeros: shape [65536, 65536] has 4294967296 elements, more than the limit of 2147483647");
  // a dim past the limit in an empty tensor
  EXPECT_EQ(message_of<LimitError>([] { cpu::check_allocation("eye", Shape{0, 2147483648}, DType::F32); }),
            "eye: dim 1 of shape [0, 2147483648] is 2147483648, more than the limit of 2147483647");
  // within the limits: nothing is thrown and nothing allocated
  const auto before = memory_stats().total_allocations;
  EXPECT_NO_THROW(cpu::check_allocation("zeros", Shape{2147483647}, DType::Bool));
  EXPECT_NO_THROW(cpu::check_allocation("zeros", Shape{0, 2147483647}, DType::F32));
  EXPECT_EQ(memory_stats().total_allocations, before);
}

TEST(CpuAllocationCheck, TheConstructorSaysTensorNotItsTypeName) {
  const std::string m = message_of<LimitError>([] { CpuTensor t(Shape{100000, 100000}, DType::F32); });
  EXPECT_EQ(m, "tensor: shape [100000, 100000] has 10000000000 elements, more than the limit of 2147483647");
  EXPECT_THAT(m, ::testing::Not(HasSubstr("CpuTensor")));
}

}  // namespace
}  // namespace kiln
