// The webgpu engine's read of a tensor (dist/kiln-webgpu.*; CMakeLists.txt KILN_WASM_BACKEND):
// what the JS layer needs to copy the tensor's device buffer back (bindings/js/tensor/core.ts
// `data()`, through Module.kgRead of bindings/webgpu/kgpu.js). The copy is recorded when JS
// calls kgRead, after the kernels that write the buffer (GPU work runs in submission order).
#include <emscripten/bind.h>

#include "js_tensor.hpp"
#include "wgpu/runtime.hpp"

namespace kiln_js {
namespace {

using emscripten::val;

/// {buffer, bytes, dtype, numel} of t's device buffer: dtype 0 float32, 1 int32, 2 bool (one
/// u32 per element on the device). Throws (KilnError) Device or OutOfMemory when the device
/// reported an error since the last check, State for a tensor without a buffer.
val gpu_read_info(const JsTensor& t) {
  return guarded([&] {
    kiln::wgpu::check("data");
    const Prim& p = t.primitive();
    val out = val::object();
    out.set("buffer", p.buffer().id());
    out.set("bytes", static_cast<double>(p.num_bytes()));
    out.set("dtype", p.dtype() == kiln::DType::F32 ? 0 : p.dtype() == kiln::DType::I32 ? 1 : 2);
    out.set("numel", static_cast<double>(p.num_elements()));
    return out;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(kiln_webgpu_read) {
  emscripten::function("tGpuReadInfo", &gpu_read_info);
}

}  // namespace kiln_js
