#pragma once
// The backends every op-conformance suite runs over (Burn's test generation): one typed
// suite, instantiated per backend. Autodiff<Cpu> runs the same forward checks as Cpu on
// untracked tensors (same values, same buffer reuse, no graph); gradients are tested in
// tests/native/autodiff/.
#include <gtest/gtest.h>

#include "kiln/kiln.hpp"

namespace kiln::test {

using AllBackends = ::testing::Types<Cpu, Autodiff<Cpu>>;

template <class B>
Device<B> device() {
  return Device<B>{};
}

}  // namespace kiln::test
