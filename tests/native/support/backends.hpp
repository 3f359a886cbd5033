#pragma once
// The backends every op-conformance suite runs over (Burn's test generation): one typed
// suite, instantiated per backend. Autodiff<Cpu> joins this list with its issue.
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"

namespace kiln::test {

using AllBackends = ::testing::Types<Cpu>;

template <class B>
Device<B> device() {
  return Device<B>{};
}

}  // namespace kiln::test
