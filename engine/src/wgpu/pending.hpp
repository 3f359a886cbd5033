#pragma once
// The placeholder of an op the Wgpu backend has no kernel for yet.
#include "kiln/core/error.hpp"
#include "kiln/core/str_cat.hpp"

namespace kiln::wgpu {
/// Throws DeviceError "<op>: not available on the webgpu backend yet (use the cpu backend)".
[[noreturn]] inline void pending(const char* op) {
  throw DeviceError(str_cat(op, ": not available on the webgpu backend yet (use the cpu backend)"));
}
}  // namespace kiln::wgpu
